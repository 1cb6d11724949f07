"""A local OpenAI-compatible endpoint for tests: stdlib http.server on 127.0.0.1, one thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# (message text) -> list of {"kind", "quote"} items
Responder = Callable[[str], list[dict[str, Any]]]


def quotes_from(table: dict[str, str]) -> Responder:
    """Answer every quote of `table` (quote -> kind) that the message contains."""
    def respond(message: str) -> list[dict[str, Any]]:
        return [{"kind": k, "quote": q} for q, k in table.items() if q in message]
    return respond


class FakeLLM:
    """Records every request; `mode` picks the answer: ok | malformed | garbage | 500 | hang."""

    def __init__(self, responder: Responder) -> None:
        self.responder = responder
        self.mode = "ok"
        self.fence = False  # wrap the JSON reply in a ```json fence, as chatty models do
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        self.url = ""

    @property
    def count(self) -> int:
        return len(self.raw)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                fake.raw.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                req = json.loads(body)
                fake.requests.append(req)
                if self.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                if fake.mode == "500":
                    return self._send(500, b'{"error": "boom"}')
                if fake.mode == "hang":
                    fake.release.wait(10)
                    return self._send(200, b"{}")
                if fake.mode == "garbage":
                    return self._send(200, b"<html>not json</html>")
                user = req["messages"][-1]["content"]
                message = user.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
                content = json.dumps({"items": fake.responder(message)})
                if fake.mode == "malformed":
                    content = "Sure! Here are the items: kind=decision, quote=..."
                elif fake.fence:
                    content = "```json\n" + content + "\n```"
                reply = {"id": "x", "object": "chat.completion", "model": req.get("model"),
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}]}
                self._send(200, json.dumps(reply).encode())

            def _send(self, code: int, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:  # the client gave up (timeout test)
                    pass

        return Handler


@contextmanager
def serve(responder: Responder) -> Iterator[FakeLLM]:
    """Run a FakeLLM on a random port; `fake.url` is the base URL (`.../v1`)."""
    fake = FakeLLM(responder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    server.daemon_threads = True
    # serve_forever polls for shutdown() every poll_interval (0.5 s by default): each test
    # would wait that long at its end for nothing.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        fake.release.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
