"""MCP's JSON-RPC framing over stdio: version negotiation, dispatch, roots; no SDK, no pydantic.

Why not the SDK: importing it costs 2.6-6.8 s on a 2-core machine, and clients send their first
model request before a slow server has connected (Claude Code) or start a turn without its
tools (`codex exec`). The protocol a stdio server needs is small: newline-delimited JSON-RPC 2.0
messages, `initialize`, `ping`, `tools/list`, `tools/call`, and (when the client offers them)
`roots/list`. This module answers `initialize` before anything heavy is imported.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import IO, Any

log = logging.getLogger("looma.mcp")

# Newest first. A client asking for a version we speak gets it back; otherwise we answer with
# our newest and the client decides (the spec's negotiation rule).
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    """A JSON-RPC error response (protocol-level, not a tool error)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def negotiate(requested: Any) -> str:
    """The protocol version to answer `initialize` with."""
    return requested if requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]


class ClientSession:
    """One client connection: state from `initialize`, the roots the client offered."""

    def __init__(self) -> None:
        self.protocol: str | None = None
        self.client_name: str | None = None
        self.client_caps: dict[str, Any] = {}
        self.roots: list[str] | None = None  # file:// URIs the client named, once known
        self.initialized = False


Handler = Callable[[ClientSession, dict[str, Any]], dict[str, Any]]


class Dispatcher:
    """Routes one decoded JSON-RPC message to a handler; knows nothing about stdio."""

    def __init__(self, server_info: dict[str, Any], instructions: str,
                 handlers: dict[str, Handler]) -> None:
        self.server_info = server_info
        self.instructions = instructions
        self.handlers = handlers
        self.session = ClientSession()
        self.outgoing: list[dict[str, Any]] = []  # server -> client requests to send
        self._pending: dict[Any, str] = {}  # our request id -> method
        self._next_id = 0

    # -------------------------------------------------------------- messages in

    def handle(self, msg: Any) -> dict[str, Any] | list[dict[str, Any]] | None:
        """The response to `msg` (None for notifications and responses to our requests)."""
        if isinstance(msg, list):  # a batch (2025-03-26 and older)
            if not msg:
                return _error(None, INVALID_REQUEST, "empty batch")
            out = [r for r in (self._one(m) for m in msg) if r is not None]
            return out or None
        return self._one(msg)

    def _one(self, msg: Any) -> dict[str, Any] | None:
        if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
            return _error(msg.get("id") if isinstance(msg, dict) else None, INVALID_REQUEST,
                          "not a JSON-RPC 2.0 message")
        if "method" not in msg:
            self._response(msg)
            return None
        method, mid = msg["method"], msg.get("id")
        params = msg.get("params") or {}
        is_request = "id" in msg
        if not isinstance(method, str) or not isinstance(params, dict):
            return _error(mid, INVALID_REQUEST, "method must be a string, params an object")
        if not is_request:
            self._notification(method, params)
            return None
        try:
            result = self._request(method, params)
        except RpcError as exc:
            return _error(mid, exc.code, exc.message, exc.data)
        except Exception:  # a bug must not take the connection down
            log.exception("request %s failed", method)
            return _error(mid, INTERNAL_ERROR, f"{method} failed unexpectedly")
        return {"jsonrpc": "2.0", "id": mid, "result": result}

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}
        handler = self.handlers.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        return handler(self.session, params)

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        s = self.session
        s.protocol = negotiate(params.get("protocolVersion"))
        info = params.get("clientInfo") or {}
        s.client_name = info.get("name") if isinstance(info, dict) else None
        caps = params.get("capabilities") or {}
        s.client_caps = caps if isinstance(caps, dict) else {}
        result: dict[str, Any] = {
            "protocolVersion": s.protocol,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": self.server_info,
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "notifications/initialized":
            self.session.initialized = True
            self._ask_roots()
        elif method == "notifications/roots/list_changed":
            self._ask_roots()
        # notifications/cancelled, progress, unknown ones: nothing to do (requests run in order)

    # -------------------------------------------------------------- roots

    def _ask_roots(self) -> None:
        if "roots" not in self.session.client_caps:
            return
        self._next_id += 1
        rid = f"looma-{self._next_id}"
        self._pending[rid] = "roots/list"
        self.outgoing.append({"jsonrpc": "2.0", "id": rid, "method": "roots/list"})

    def _response(self, msg: dict[str, Any]) -> None:
        method = self._pending.pop(msg.get("id"), None)
        if method != "roots/list":
            return
        roots = (msg.get("result") or {}).get("roots")
        if isinstance(roots, list):
            self.session.roots = [r["uri"] for r in roots
                                  if isinstance(r, dict) and isinstance(r.get("uri"), str)]

    def take_outgoing(self) -> list[dict[str, Any]]:
        """Server-to-client requests queued since the last call."""
        out, self.outgoing = self.outgoing, []
        return out


def _error(mid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": mid, "error": err}


def serve(dispatcher: Dispatcher, stdin: IO[str], stdout: IO[str],
          warm: Callable[[], None] | None = None) -> None:
    """Read newline-delimited messages until EOF, answering each in order.

    `warm` runs in a background thread once `initialize` has been answered, so the imports the
    tools need overlap the client's own start-up instead of delaying the handshake.
    """
    lock = threading.Lock()
    warmed = False

    def send(obj: Any) -> None:
        line = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
        with lock:
            stdout.write(line + "\n")
            stdout.flush()

    for raw in stdin:
        raw = raw.strip()
        if not raw:
            continue
        try:
            msg = json.loads(raw)
        except json.JSONDecodeError as exc:
            send(_error(None, PARSE_ERROR, f"parse error: {exc.msg}"))
            continue
        reply = dispatcher.handle(msg)
        if reply is not None:
            send(reply)
        for req in dispatcher.take_outgoing():
            send(req)
        if warm is not None and not warmed and dispatcher.session.protocol is not None:
            warmed = True
            threading.Thread(target=_quiet(warm), name="looma-mcp-warm", daemon=True).start()


def _quiet(fn: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except Exception:  # warming is an optimisation; the real call reports real errors
            log.debug("warm-up failed", exc_info=True)
    return run
