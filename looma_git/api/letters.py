"""Resume letters: A, B, ... name the WorkItems of the last listing shown in this terminal, nothing else."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

from looma_git.errors import NotFoundError, StaleLetterError
from looma_git.gitrepo import RepoPaths

FILE = "last-resume.json"


def viewer() -> str:
    """Who saw a listing: the terminal session (shared by a shell and everything it runs,
    `git looma` included); an agent's MCP server or another terminal is another viewer."""
    try:
        return f"sid:{os.getsid(0)}"
    except OSError:
        return f"pid:{os.getppid()}"


def is_letter(ref: str) -> bool:
    return len(ref) == 1 and ref.isascii() and ref.isalpha()


def _ledger_head(paths: RepoPaths) -> str | None:
    from looma_git.store.heads import ledger_head

    head = ledger_head(paths)
    return str(head) if head else None


def _read(paths: RepoPaths) -> dict[str, Any] | None:
    try:
        data = json.loads((paths.state_dir / FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def remember(paths: RepoPaths, goal: str | None, state: str,
             listing: list[tuple[str, str, str]]) -> None:
    """Record the listing a resume just showed: [(letter, id, title)] (empty when it showed
    no letters). Every resume replaces the previous listing; a letter never outlives it."""
    old = _read(paths) or {}
    data = {"viewer": viewer(), "goal": goal, "state": state,
            "ts": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "ledger": _ledger_head(paths),
            "letters": {letter: {"id": wid, "title": title} for letter, wid, title in listing},
            # kept only to name the ids in the refusal of a stale letter
            "previous": old.get("letters") or old.get("previous") or {}}
    try:
        paths.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = paths.state_dir / (FILE + ".tmp")
        tmp.write_text(json.dumps(data, sort_keys=True))
        os.replace(tmp, paths.state_dir / FILE)
    except OSError:
        pass  # letters are a convenience; ids and titles still work


def _ids(letters: dict[str, Any]) -> str:
    return "; ".join(f"{k} = {v.get('id')} ({v.get('title', '')})"
                     for k, v in sorted(letters.items()))


def resolve(paths: RepoPaths, ref: str, known: set[str]) -> str:
    """The WorkItem id a letter names, or a refusal that shows the ids instead."""
    letter = ref.upper()
    data = _read(paths)
    if not data:
        raise NotFoundError(
            f"no listing to take letter {letter!r} from",
            hint="letters name the WorkItems of the last ambiguous `looma resume`; "
                 "use an id prefix from `looma work`")
    goal = data.get("goal")
    shown = f"`looma resume{' ' + json.dumps(goal) if goal else ''}`"
    letters: dict[str, Any] = data.get("letters") or {}
    if data.get("viewer") != viewer():
        raise StaleLetterError(
            f"letter {letter!r} refers to a listing shown elsewhere ({shown} in another "
            "terminal or by an agent), not to one you saw",
            hint=("that listing: " + _ids(letters) + "; use the id") if letters else
            "use an id prefix from `looma work`")
    if not letters:
        prev = data.get("previous") or {}
        raise StaleLetterError(
            f"letter {letter!r} is stale: your last resume ({shown}, {data.get('state')}) "
            "showed no letters",
            hint=(f"earlier letters meant: {_ids(prev)}; use the id" if prev else
                  "use an id prefix from `looma work`"))
    if letter not in letters:
        raise NotFoundError(f"the last listing ({shown}) has no letter {letter!r}",
                            hint="it showed: " + _ids(letters))
    if data.get("ledger") != _ledger_head(paths):
        raise StaleLetterError(
            f"letter {letter!r} is stale: the work model changed since {shown} listed it",
            hint=f"that listing: {_ids(letters)}; use the id, or run {shown} again")
    wid = str(letters[letter].get("id"))
    if wid not in known:
        raise StaleLetterError(f"letter {letter!r} named {wid}, which no longer exists",
                               hint="run `looma work` for the current ids")
    return wid
