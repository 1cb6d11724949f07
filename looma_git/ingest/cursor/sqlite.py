"""Cursor's IDE stores: global `state.vscdb` composers/bubbles and workspaceStorage mappings/chats."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from looma_git.ingest.base import Cursor, ReadResult, Skip
from looma_git.ingest.cursor.bubbles import (
    Conversation,
    bubble_event,
    bubble_in_progress,
)
from looma_git.ingest.ide_common import (
    dump_state,
    file_uri_to_path,
    is_file,
    iso_from_any,
    list_dir,
    load_state,
    parse_json_maybe,
    read_json_file,
)
from looma_git.ingest.sqlite_ro import ReadOnlyDb, bytes_to_text, file_signature, load_json_object

AICHAT_KEY = "workbench.panel.aichat.view.aichat.chatdata"


@dataclass(frozen=True)
class Workspace:
    """One `workspaceStorage/<hash>/` dir: its folder (None for multi-root/remote) and composers."""

    hash: str
    folder: str | None
    composer_ids: frozenset[str]


def _noise(result: ReadResult, reason: str) -> None:
    result.noise[reason] = result.noise.get(reason, 0) + 1


def _item(db: ReadOnlyDb, key: str) -> Any:
    if not db.has("ItemTable", "key", "value"):
        return None
    rows = db.rows("SELECT value FROM ItemTable WHERE key = ?", (key,))
    return rows[0][0] if rows else None


def workspace_folder(ws_dir: Path, skips: list[Skip]) -> str | None:
    """The single local folder a workspace dir stands for (`workspace.json` `folder`)."""
    wj = ws_dir / "workspace.json"
    if not is_file(wj):
        return None
    obj = read_json_file(wj, skips)
    return file_uri_to_path(obj.get("folder")) if obj else None


def load_workspaces(user_dir: Path, busy_timeout: float, skips: list[Skip]) -> list[Workspace]:
    """Every workspaceStorage entry under `<Cursor>/User` with the composers it lists."""
    found: list[Workspace] = []
    for ws_dir in list_dir(user_dir / "workspaceStorage"):
        folder = workspace_folder(ws_dir, skips)
        ids: set[str] = set()
        db_path = ws_dir / "state.vscdb"
        if is_file(db_path):
            with ReadOnlyDb(db_path, busy_timeout=busy_timeout) as db:
                obj, _err = load_json_object(_item(db, "composer.composerData"))
                for entry in (obj or {}).get("allComposers") or []:
                    if isinstance(entry, dict) and isinstance(entry.get("composerId"), str):
                        ids.add(entry["composerId"])
        found.append(Workspace(ws_dir.name, folder, frozenset(ids)))
    return found


def _range(prefix: str) -> tuple[str, str]:
    # key >= 'p:' AND key < 'p;' selects exactly the keys starting with 'p:' using the index.
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def _request_root(db: ReadOnlyDb, cid: str) -> str | None:
    """The project root recorded in the composer's messageRequestContext rows, if unambiguous."""
    roots: set[str] = set()
    lo, hi = _range(f"messageRequestContext:{cid}:")
    for _key, value in db.iter_rows(
            "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ? LIMIT 50", (lo, hi)):
        obj, _err = load_json_object(value)
        for layout in (obj or {}).get("projectLayouts") or []:
            layout = parse_json_maybe(layout)
            if isinstance(layout, dict) and isinstance(layout.get("rootPath"), str):
                roots.add(layout["rootPath"])
    return roots.pop() if len(roots) == 1 else None


def _headers(data: dict[str, Any]) -> tuple[list[tuple[str, dict[str, Any] | None]], bool]:
    """(bubble id, inline bubble or None) in order, and whether bubbles are inline (legacy)."""
    heads = data.get("fullConversationHeadersOnly")
    if isinstance(heads, list):
        return [(h["bubbleId"], None) for h in heads
                if isinstance(h, dict) and isinstance(h.get("bubbleId"), str)], False
    conv = data.get("conversation")
    if isinstance(conv, list):
        return [(b["bubbleId"], b) for b in conv
                if isinstance(b, dict) and isinstance(b.get("bubbleId"), str)], True
    return [], True


def read_global(path: Path, cursor: Cursor | None, busy_timeout: float) -> ReadResult:
    """New bubbles of every composer in `globalStorage/state.vscdb` since `cursor`."""
    old = cursor or Cursor()
    sig = file_signature(path)
    result = ReadResult(events=[], cursor=old)
    if cursor is not None and old.content_hash == sig and old.state:
        return result
    state = load_state(old.state).get("c", {})
    if not isinstance(state, dict):
        state = {}
    owner: dict[str, str] = {}
    for ws in load_workspaces(path.parent.parent, busy_timeout, result.skips):
        if ws.folder:
            for cid in ws.composer_ids:
                owner.setdefault(cid, ws.folder)
    with ReadOnlyDb(path, busy_timeout=busy_timeout) as db:
        if db.ok and not db.has("cursorDiskKV", "key", "value"):
            result.skips.append(Skip("unknown_schema", str(path)))
        elif db.ok:
            lo, hi = _range("composerData:")
            for key, value in db.rows(
                    "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (lo, hi)):
                _read_composer(db, path, bytes_to_text(key), value, state, owner, result)
        if db.skip is not None:
            return ReadResult(events=[], cursor=old, skips=[*result.skips, db.skip])
    result.cursor = Cursor(content_hash=sig, state=dump_state({"c": state}))
    return result


def _read_composer(db: ReadOnlyDb, path: Path, key: str, value: Any, state: dict[str, Any],
                   owner: dict[str, str], result: ReadResult) -> None:
    cid = key.split(":", 1)[1]
    data, err = load_json_object(value)
    if data is None:
        if err != "empty":
            result.skips.append(Skip(err or "bad_json", f"{path}#{key}"))
        return
    heads, inline = _headers(data)
    updated = data.get("lastUpdatedAt") or data.get("createdAt") or 0
    prev = state.get(cid)
    n, last = 0, ""
    if isinstance(prev, list) and len(prev) == 3 and isinstance(prev[1], int):
        if prev[0] == updated and prev[1] == len(heads):
            return  # unchanged composer: no bubble reads at all
        n, last = prev[1], str(prev[2])
        if n > len(heads) or (n and heads[n - 1][0] != last):
            n = 0  # conversation rewound/edited: reread; identical bubbles keep their ids
    if n >= len(heads):
        state[cid] = [updated, n, last]
        return
    bubbles: dict[str, Any] = {}
    if not inline:
        lo, hi = _range(f"bubbleId:{cid}:")
        for bkey, bvalue in db.iter_rows(
                "SELECT key, value FROM cursorDiskKV WHERE key >= ? AND key < ?", (lo, hi)):
            bubbles[bytes_to_text(bkey).rsplit(":", 1)[-1]] = bvalue
    model_cfg = data.get("modelConfig")
    conv = Conversation(
        session_id=cid,
        project_root=owner.get(cid) or _request_root(db, cid),
        model=model_cfg.get("modelName") if isinstance(model_cfg, dict) else None,
        fallback_ts=iso_from_any(data.get("createdAt")))
    generating = data.get("status") == "generating"
    for i in range(n, len(heads)):
        bid, inline_bubble = heads[i]
        is_last = i == len(heads) - 1
        if inline_bubble is not None:
            bubble: dict[str, Any] | None = inline_bubble
        else:
            bubble, berr = load_json_object(bubbles.get(bid))
            if bubble is None:
                if is_last and berr == "empty":
                    break  # header written before its bubble row: read it next time
                result.skips.append(Skip(berr or "bad_json", f"{path}#bubbleId:{cid}:{bid}"))
                n, last = i + 1, bid
                continue
        assert bubble is not None
        if is_last and (generating or bubble_in_progress(bubble)):
            break
        event, noise = bubble_event(conv, bid, bubble, i)
        if event is not None:
            result.events.append(event)
        elif noise:
            _noise(result, noise)
        n, last = i + 1, bid
    state[cid] = [updated if n == len(heads) else -1, n, last]


def read_workspace(path: Path, cursor: Cursor | None, busy_timeout: float) -> ReadResult:
    """A workspace `state.vscdb` ItemTable after `cursor`: the legacy (pre-composer) chat tabs,
    and composers whose whole conversation is inline in `composer.composerData` (Cursor of
    late 2024, before composers moved to the global `cursorDiskKV`)."""
    old = cursor or Cursor()
    sig = file_signature(path)
    result = ReadResult(events=[], cursor=old)
    if cursor is not None and old.content_hash == sig and old.state:
        return result
    full = load_state(old.state)
    state = full.get("t", {})
    if not isinstance(state, dict):
        state = {}
    comp_state = full.get("w", {})
    if not isinstance(comp_state, dict):
        comp_state = {}
    folder = workspace_folder(path.parent, result.skips)
    with ReadOnlyDb(path, busy_timeout=busy_timeout) as db:
        raw = _item(db, AICHAT_KEY) if db.ok else None
        composers = _item(db, "composer.composerData") if db.ok else None
        if db.skip is not None:
            return ReadResult(events=[], cursor=old, skips=[*result.skips, db.skip])
    if raw is not None:
        data, err = load_json_object(raw)
        if data is None:
            result.skips.append(Skip(err or "bad_json", f"{path}#{AICHAT_KEY}"))
        tabs = (data or {}).get("tabs")
        for tab in tabs if isinstance(tabs, list) else []:
            if not isinstance(tab, dict) or not isinstance(tab.get("tabId"), str):
                continue
            _read_tab(tab, folder, state, result)
    if composers is not None:
        data, err = load_json_object(composers)
        if data is None and err != "empty":
            result.skips.append(Skip(err or "bad_json", f"{path}#composer.composerData"))
        for entry in (data or {}).get("allComposers") or []:
            if (isinstance(entry, dict) and isinstance(entry.get("composerId"), str)
                    and isinstance(entry.get("conversation"), list)):
                _read_inline_composer(entry, folder, comp_state, result)
    result.cursor = Cursor(content_hash=sig, state=dump_state({"t": state, "w": comp_state}))
    return result


def _read_inline_composer(data: dict[str, Any], folder: str | None, state: dict[str, Any],
                          result: ReadResult) -> None:
    """One composer of a workspace `composer.composerData` with its bubbles inline."""
    cid = data["composerId"]
    heads, _inline = _headers(data)
    updated = data.get("lastUpdatedAt") or data.get("createdAt") or 0
    prev = state.get(cid)
    n, last = 0, ""
    if isinstance(prev, list) and len(prev) == 3 and isinstance(prev[1], int):
        if prev[0] == updated and prev[1] == len(heads):
            return
        n, last = prev[1], str(prev[2])
        if n > len(heads) or (n and heads[n - 1][0] != last):
            n = 0  # rewound/edited: reread; identical bubbles keep their ids
    model_cfg = data.get("modelConfig")
    conv = Conversation(
        session_id=cid, project_root=folder,
        model=model_cfg.get("modelName") if isinstance(model_cfg, dict) else None,
        fallback_ts=iso_from_any(data.get("createdAt")), kind="workspace-composer")
    generating = data.get("status") == "generating"
    for i in range(n, len(heads)):
        bid, bubble = heads[i]
        assert bubble is not None
        if i == len(heads) - 1 and (generating or bubble_in_progress(bubble)):
            break
        event, noise = bubble_event(conv, bid, bubble, i)
        if event is not None:
            result.events.append(event)
        elif noise:
            _noise(result, noise)
        n, last = i + 1, bid
    state[cid] = [updated if n == len(heads) else -1, n, last]


def _read_tab(tab: dict[str, Any], folder: str | None, state: dict[str, Any],
              result: ReadResult) -> None:
    tid = tab["tabId"]
    bubbles = [b for b in tab.get("bubbles") or [] if isinstance(b, dict)]
    start = state.get(tid, 0)
    start = start if isinstance(start, int) and start <= len(bubbles) else 0
    conv = Conversation(session_id=tid, project_root=folder,
                        fallback_ts=iso_from_any(tab.get("lastSendTime")), kind="aichat")
    for i in range(start, len(bubbles)):
        bubble = bubbles[i]
        bid = bubble.get("id") if isinstance(bubble.get("id"), str) else f"{tid}:{i}"
        event, noise = bubble_event(conv, str(bid), bubble, i)
        if event is not None:
            result.events.append(event)
        elif noise:
            _noise(result, noise)
    state[tid] = len(bubbles)
