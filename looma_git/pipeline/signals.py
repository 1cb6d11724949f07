"""Work signals: sessions cut into windows, with the git facts each window carries."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from looma_git.gitshell import TRUNK_NAMES, shell_git
from looma_git.isotime import parse_ts
from looma_git.pipeline.inputs import Session
from looma_git.pipeline.text import TextMemo, cosine, path_terms, tokens

WINDOW_GAP_S = 3 * 3600  # a pause this long starts a new window of the same session
MIN_SHIFT_TERMS = 4
USER_WEIGHT = 2  # a word the user typed counts this many times one an agent wrote
PATH_WEIGHT = 3  # each name part of an edited file counts this many times  # a user turn needs this many content words to shift topic by vocabulary

_SHA = re.compile(r"\b[0-9a-f]{7,40}\b")
_PR_URL = re.compile(r"https?://[^\s/]+/[\w.\-]+/[\w.\-]+/pulls?/(\d+)")
_PR_REF = re.compile(r"\b(?:PR|pull request|pull/)\s*#?(\d{1,6})\b", re.I)


@dataclass(frozen=True)
class WorkSignal:
    """What one window of one session worked on."""

    key: str  # "agent:session#n"
    agent: str
    session_id: str
    index: int
    start_ts: str
    end_ts: str
    edited: frozenset[str]
    read: frozenset[str]
    commands: tuple[tuple[str, int | None, str | None], ...]
    commits: frozenset[str]  # full shas mentioned and validated by object existence
    branch: str | None
    prs: frozenset[str]
    terms: tuple[tuple[str, int], ...]  # top topic terms with counts
    first_prompt: str
    event_ids: tuple[str, ...]
    mentioned: frozenset[str] = frozenset()  # repository paths named in the text
    cut: str = ""  # why the window before it ended: "pause", "topic" (said or shown) or ""
    # From the repository, not the transcript (set by the refinery pass, pipeline/content.py):
    # the commits whose added lines this window wrote, and where they landed ("trunk": on the
    # trunk's first-parent line; "branch": only through a merge; "" when it wrote none).
    wrote: frozenset[str] = frozenset()
    landed: str = ""

    @property
    def session_key(self) -> str:
        return f"{self.agent}:{self.session_id}"

    @property
    def is_readonly(self) -> bool:
        """Only read: no edits, no commits. Never creates a high-confidence WorkItem."""
        return not self.edited and not self.commits

    def term_counts(self) -> Counter[str]:
        return Counter(dict(self.terms))

    def to_json(self) -> dict[str, object]:
        """A plain mapping (sets sorted) for the local store; `from_json` reads it back."""
        return {k: (sorted(v) if isinstance(v, frozenset) else v)
                for k, v in self.__dict__.items()}

    @staticmethod
    def from_json(d: dict[str, Any]) -> WorkSignal:
        return WorkSignal(
            key=d["key"], agent=d["agent"], session_id=d["session_id"], index=d["index"],
            start_ts=d["start_ts"], end_ts=d["end_ts"], edited=frozenset(d["edited"]),
            read=frozenset(d["read"]),
            commands=tuple((c[0], c[1], c[2]) for c in d["commands"]),
            commits=frozenset(d["commits"]), branch=d["branch"], prs=frozenset(d["prs"]),
            terms=tuple((t, n) for t, n in d["terms"]), first_prompt=d["first_prompt"],
            event_ids=tuple(d["event_ids"]), mentioned=frozenset(d.get("mentioned", ())),
            cut=d.get("cut", ""), wrote=frozenset(d.get("wrote", ())),
            landed=d.get("landed", ""))


_SHIFT = re.compile(
    r"^\W*(?:(?:thanks|thank you|ok(?:ay)?|alright|all right|right|great|cool|perfect|good|"
    r"nice|done|so|now|next|anyway)[.!,:;\s-]*)*(?:(?:a\s+|one\s+)?(?:different|unrelated|"
    r"separate|another|new|other)\s+(?:thing|topic|task|issue|question|subject|matter)|"
    r"(?:let'?s\s+)?switch(?:ing)?\s+(?:gears|topics?|tasks?|to\s+something)|changing\s+"
    r"(?:gears|topics?)|on\s+(?:another|a\s+different)\s+note|something\s+(?:else|"
    r"different)|next\s+(?:task|topic|up)|moving\s+on|unrelated|separately|"
    r"back\s+to\s+(?:the|our|my)\b|while\s+(?:you'?re|we'?re|i'?m)\s+(?:here|at\s+it)|"
    r"(?:one\s+)?more\s+thing|by\s+the\s+way|btw|before\s+i\s+forget|also,\s+unrelated|"
    r"(?:a\s+)?(?:quick|side)\s+question)\b", re.I)
# A match starts only where a run of name characters does (or at a "." or "-"): one cannot start
# after a word character or "-" that no match started at (whatever matches from there matches
# from one character earlier) nor right after a match (each ends before a non-word character).
# So the matches are those without that guard, found ~2x faster (no attempt inside a word).
# Possessive runs (`++`): a run never gives back what it took, as "/" or "." (outside its
# class) must follow it; the same matches without retrying each shorter run (~35% of it).
_PATHISH = re.compile(r"(?:(?<![\w\-])|(?=[.\-]))"
                      r"(?:[\w.\-]++(?:/[\w.\-]++)+|[\w\-]++\.[a-z]{1,5}\b)")


# Files that record the work rather than do it (who wrote it, what changed): every effort
# ends in them, so a turn editing only these ("add me to AUTHORS.rst, then commit") is no
# evidence of a new topic, however apart its files are from the window's.
_RECORDS = re.compile(r"(?:^|/)(?:authors|contributors|changelog|changes|history|news|"
                      r"readme)(?:\.\w+)?$", re.I)


def _records(files: set[str]) -> bool:
    return all(_RECORDS.search(f) for f in files)


def _switches(text: str) -> bool:
    """The user says a new topic starts ("different thing now", "switching gears"); "back to
    the ..." returns to earlier work, so it is no switch here."""
    m = _SHIFT.search(text)
    return m is not None and not re.search(r"\bback\s+to\b", m.group(0), re.I)


def _turns(session: Session) -> list[list[int]]:
    """Event indices grouped by user turn (a user prompt and everything until the next)."""
    turns: list[list[int]] = []
    for i, ev in enumerate(session.events):
        if not turns or (ev.role == "user" and ev.text.strip()):
            turns.append([])
        turns[-1].append(i)
    return turns


def _edits(session: Session, idxs: list[int]) -> set[str]:
    return {f for i in idxs for t in session.events[i].tools if t.kind in ("edit", "write")
            for f in t.files}


def windows_of(session: Session, known: frozenset[str],
               sha_lookup: dict[str, str]) -> list[WorkSignal]:
    """Cut a session at long pauses and at topic shifts (a user turn that says so, or whose
    edits are disjoint from the window's and share no topic); extract each window's signals."""
    groups: list[list[int]] = []
    cuts: list[str] = []
    last = 0.0
    window_edits: set[str] = set()
    window_terms: Counter[str] = Counter()
    for turn in _turns(session):
        first = session.events[turn[0]]
        t = parse_ts(first.ts)
        edits = _edits(session, turn)
        turn_terms = Counter(dict(_said(first.text, known)[2]) if len(first.text) <= 2000
                             else tokens(first.text[:2000])) if first.role == "user" else Counter()
        shift = False
        cut = "topic"
        if groups:
            if last and t and t - last >= WINDOW_GAP_S:
                # A session resumed after a pause carries on its work, unless the user opens
                # the new stretch by saying it is another topic: then it is a topic cut (no
                # continuity with the window before), resolved on its own evidence.
                shift, cut = True, "topic" if first.role == "user" and _switches(first.text) \
                    else "pause"
            elif first.role == "user" and _SHIFT.search(first.text) and (
                    window_edits or sum(window_terms.values()) >= MIN_SHIFT_TERMS):
                shift = True  # the user says so: a new topic, whatever it turns out to touch
            elif (first.role == "user" and window_edits and edits and not _records(edits)
                  and not (edits & window_edits) and sum(turn_terms.values()) >= MIN_SHIFT_TERMS):
                # A short follow-up ("tests too") is never a new topic; nor are files that
                # share a directory or a name part with the window's (tests/test_x.py, app/x.py).
                apart = not ({_top(f) for f in edits} & {_top(f) for f in window_edits}) and not (
                    {t for f in edits for t in path_terms(f)}
                    & {t for f in window_edits for t in path_terms(f)})
                shift = apart and cosine(turn_terms, window_terms) < 0.05
        if not groups or shift:
            cuts.append(cut if groups else "")
            groups.append([])
            window_edits, window_terms = set(), Counter()
        groups[-1].extend(turn)
        window_edits |= edits
        window_terms.update(turn_terms)
        for i in reversed(turn):  # the turn's last time (parsed from its end: one parse)
            ti = parse_ts(session.events[i].ts)
            if ti:
                last = ti
                break
    out = []
    track = _BranchTrack()  # the branch the session is on, carried from window to window
    for n, idxs in enumerate(groups):
        evs = [session.events[i] for i in idxs]
        edited: set[str] = set()
        read: set[str] = set()
        commands: list[tuple[str, int | None, str | None]] = []
        commits: set[str] = set()
        prs: set[str] = set()
        terms: Counter[str] = Counter()
        first_prompt = ""
        mentioned: set[str] = set()
        track.start(_works(evs))
        for ev in evs:
            track.event(ev)
            for sha in ev.shown_commits:  # what `git commit` / `git push` printed
                if sha in sha_lookup:
                    commits.add(sha_lookup[sha])
            for tool in ev.tools:
                valid = [f for f in tool.files if f in known]
                if tool.kind in ("edit", "write"):
                    edited.update(valid)
                elif tool.kind == "read":
                    read.update(valid)
                if tool.kind == "shell" and tool.command:
                    commands.append((tool.command[:300], tool.exit_code, tool.test_outcome))
                    if sha_lookup:
                        for sha in _shas(tool.command):
                            if sha in sha_lookup:
                                commits.add(sha_lookup[sha])
            if ev.role in ("user", "assistant"):
                # (a scan a text can skip: no sha of it can be valid when none is)
                if sha_lookup:
                    for sha in _shas(ev.text):
                        if sha in sha_lookup:
                            commits.add(sha_lookup[sha])
                said_prs, said_paths, said_terms = _said(ev.text, known)
                prs.update(said_prs)
                mentioned |= said_paths
                weight = USER_WEIGHT if ev.role == "user" else 1
                for tok, count in said_terms:
                    terms[tok] += count * weight
                if ev.role == "user" and not first_prompt and ev.text.strip():
                    first_prompt = ev.text.strip()[:500]
        for path in edited:
            for term in path_terms(path):
                terms[term] += PATH_WEIGHT
        branch = track.branch() or session.branch
        ts = [e.ts for e in evs if e.ts]
        top = tuple(sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:40])
        out.append(WorkSignal(
            key=f"{session.agent}:{session.session_id}#{n}", agent=session.agent,
            session_id=session.session_id, index=n, start_ts=min(ts, default=""),
            end_ts=max(ts, default=""), edited=frozenset(edited), read=frozenset(read),
            commands=tuple(commands), commits=frozenset(commits), branch=branch,
            prs=frozenset(prs), terms=top, first_prompt=first_prompt,
            event_ids=tuple(e.event_id for e in evs), mentioned=frozenset(mentioned),
            cut=cuts[n]))
    return out


_ACTIONS = frozenset({"commit", "push", "checkout", "switch", "merge", "rebase", "cherry-pick",
                      "revert", "reset", "am"})
_GIT_SUB = re.compile(r"(?:^|[\s;&|(])git(?:\s+-[Cc]\s+\S+)*\s+([a-z][a-z-]*)")


def _works(evs: list[Any]) -> bool:
    """Whether a window did work: edited a file or ran git that changes the repository (not
    only `status`, `log` or `diff`)."""
    for ev in evs:
        for t in ev.tools:
            if t.kind in ("edit", "write"):
                return True
            if t.kind == "shell" and t.command and "git" in t.command and any(
                    m in _ACTIONS for m in _GIT_SUB.findall(t.command)):
                return True
    return False


class _BranchTrack:
    """The branch a session is on as its events go by, and the one each window worked on.

    Sources, strongest first: the branch the agent records on each event (Claude Code per
    record, Codex per session: a change counts, a value restated on every record does not undo
    a `git checkout -b` run since); the window's git commands (`checkout -b x`, `switch x`,
    `push origin x`, `checkout main`); for agents that record none, what git printed in their
    shell (`[x 1a2b3c4] subject`, `On branch x`, `* [new branch] x -> x`: the adapters keep it,
    gitshell.py). A window worked on the last branch off the trunk it was on while
    doing work, even when it went back to the trunk at its end (that return ends the branch for
    the windows after it). What git printed counts only in a window that did work: a session
    only looking around on someone's branch ("before I touch the jobs branch: how slow is
    /orders") is not working on it."""

    def __init__(self) -> None:
        self.at: str | None = None  # the branch now, from any source
        self.said: str | None = None  # the branch now, from records and commands only
        self.recorded: str | None = None  # the last value the agent recorded
        self.worked: str | None = None
        self.works = False

    def start(self, works: bool) -> None:
        self.worked, self.works = None, works
        if self.at and self.at not in TRUNK_NAMES and self.at != "HEAD" and works:
            self.worked = self.at

    def _move(self, branch: str, shown: bool = False) -> None:
        if shown and not self.works:
            return
        self.at = branch
        if not shown:
            self.said = branch
        if branch not in TRUNK_NAMES and branch != "HEAD":
            self.worked = branch

    def event(self, ev: Any) -> None:
        if ev.branch and ev.branch != self.recorded:
            self.recorded = ev.branch
            self._move(ev.branch)
        for tool in ev.tools:
            if tool.kind == "shell" and tool.command and "git" in tool.command:
                for b in shell_git(tool.command).path:
                    self._move(b)
        if not ev.branch:  # the agent records none: what its shell showed
            for b in ev.shown_branches:
                self._move(b, shown=True)

    def branch(self) -> str | None:
        return self.worked or (self.at if self.works else self.said)


def _top(path: str) -> str:
    """The directory a file lives in ('' for the repository root)."""
    return path.rsplit("/", 1)[0] if "/" in path else ""


# Every path match has a "/" or a "." before a lower-case letter (its extension): a text with
# neither (half a history's messages) names none, found by two scans cheaper than the pattern's.
_EXTENSION = re.compile(r"\.[a-z]")


def mentioned_paths(text: str, known: frozenset[str]) -> set[str]:
    """Repository paths named in message text (validated against the repository)."""
    head = text[:8000]
    if "/" not in head and _EXTENSION.search(head) is None:
        return set()
    # findall (no groups: whole matches) and a set test in C; same paths as a finditer loop.
    return {c for c in (m.strip("./") for m in _PATHISH.findall(head)) if c in known}


def _said_in(text: str, known: frozenset[str]
             ) -> tuple[tuple[str, ...], frozenset[str], tuple[tuple[str, int], ...]]:
    """What a message's text gives its window: the PR numbers it names, the repository
    paths it names and its topic words with their counts (of its first 4,000 characters)."""
    prs = _PR_URL.findall(text) if "/pull" in text else []  # (a PR URL has "/pull" in it)
    return (tuple(prs + _PR_REF.findall(text)), frozenset(mentioned_paths(text, known)),
            tuple(Counter(tokens(text[:4000])).items()))


# Both depend on the text alone (and the pass's paths): transcripts repeat many texts.
_said = TextMemo(_said_in)
_shas = TextMemo(lambda text: tuple(_SHA.findall(text)))


def sha_candidates(sessions: list[Session]) -> list[str]:
    """Every sha-looking token in any session (to validate in one git call)."""
    found: set[str] = set()
    for s in sessions:
        for ev in s.events:
            if ev.role in ("user", "assistant"):
                found.update(_shas(ev.text))
            for tool in ev.tools:
                if tool.command:
                    found.update(_shas(tool.command))
            found.update(ev.shown_commits)  # what `git commit` / `git push` printed
    # Pure-digit tokens are numbers, not shas.
    return sorted(s for s in found if not s.isdigit())
