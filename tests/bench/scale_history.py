"""A heavy user's history, generated fast: Claude Code + Codex sessions and a real git repo.

`build_history(root, sessions=1500)` writes, in seconds even at 5,000 sessions:
- `root/repo`: a git repository (written with `git fast-import`) with one commit per effort
  after its sessions, plus chores (README, dependency bumps) that implement nothing;
- `root/home`: a HOME with Claude Code transcripts (`~/.claude/projects/<slug>/<uuid>.jsonl`,
  about 2/3 of the sessions) and Codex rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`),
  in their native formats (TRANSCRIPTS.md §1, §2): streaming-split replies sharing a
  `message.id`, thinking blocks with signatures, tool results with their `toolUseResult`
  (file contents twice, as Claude Code writes them), file-history snapshots, system reminders,
  queue operations, hook progress, turn durations, interrupted requests, compaction summaries,
  repeated acknowledgements; Codex turn contexts, reasoning with encrypted content, each text
  twice (response_item and event_msg), exec_command and apply_patch calls with outputs,
  patch_apply_end, token counts.

Each session works on one effort (a WorkItem-to-be: area + topic, 3-4 files, a feature branch);
an effort has ~6 sessions from both agents, spread over days. Sizes are tuned so a session
stores ~100 events (the issue's history: 1,000 Claude Code + 500 Codex sessions, ~150k events).

Records are built from pre-escaped string templates, not `json.dumps` of dicts, and sessions
are written by forked workers: generation is I/O-bound.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

AREAS = ("auth", "billing", "search", "api", "cache", "storage", "notify", "reports", "ui",
         "cli", "sync", "ingest", "export", "admin", "metrics", "queue", "payments", "profile",
         "audit", "scheduler")
TOPICS = ("rate limiting", "retries", "pagination", "token refresh", "caching", "validation",
          "structured logging", "timeouts", "schema migration", "serialization", "permissions",
          "batching", "indexing", "webhooks", "localization", "backpressure", "deduplication",
          "feature flags", "error reporting", "connection pooling", "streaming", "compression",
          "idempotency keys", "soft deletes", "rollups")
VERBS = (("Add", "feature"), ("Fix", "bugfix"), ("Refactor", "refactor"),
         ("Migrate", "migration"), ("Investigate", "investigation"))
BASE_TS = 1_780_000_000  # 2026-05-28, all timestamps UTC
SESSIONS_PER_EFFORT = 6

# One escaped-JSON string cache: the same paths and phrases recur across records.
_ESC: dict[str, str] = {}


def js(s: str) -> str:
    """`s` as a JSON string literal (memoised for short strings)."""
    if len(s) > 200:
        return json.dumps(s)
    v = _ESC.get(s)
    if v is None:
        v = _ESC[s] = json.dumps(s)
    return v


def iso(t: float) -> str:
    import time as _t

    ms = int((t - int(t)) * 1000)
    return _t.strftime("%Y-%m-%dT%H:%M:%S", _t.gmtime(int(t))) + f".{ms:03d}Z"


@dataclass(frozen=True)
class Effort:
    """One unit of work the sessions are about (what the work model should find)."""

    idx: int
    verb: str
    kind: str
    area: str
    topic: str
    mod: str
    files: tuple[str, ...]
    branch: str
    start: float  # unix time of its first session

    @property
    def title(self) -> str:
        return f"{self.verb} {self.topic} in {self.area}"


@dataclass
class History:
    """What was generated (the bench's handles on it)."""

    root: Path
    repo: Path
    home: Path
    efforts: list[Effort]
    sessions: int
    claude: int
    codex: int
    records: int
    bytes: int
    commits: int
    session_files: list[Path] = field(default_factory=list)


def make_efforts(n_sessions: int) -> list[Effort]:
    """Enough efforts for ~SESSIONS_PER_EFFORT sessions each; distinct (area, topic) pairs."""
    n = max(3, n_sessions // SESSIONS_PER_EFFORT)
    out = []
    for i in range(n):
        area, topic = AREAS[i % len(AREAS)], TOPICS[(i // len(AREAS)) % len(TOPICS)]
        gen = i // (len(AREAS) * len(TOPICS))
        verb, kind = VERBS[(i * 7 + i // len(AREAS)) % len(VERBS)]
        mod = topic.replace(" ", "_") + (f"_{gen + 1}" if gen else "")
        files = (f"src/{area}/{mod}.py", f"tests/{area}/test_{mod}.py", f"src/{area}/__init__.py")
        if i % 3 == 0:
            files += (f"docs/{area}.md",)
        out.append(Effort(i, verb, kind, area, topic, mod, files,
                          f"feat/{area}-{mod.replace('_', '-')}", BASE_TS + i * 3 * 3600.0))
    return out


# -- text --------------------------------------------------------------------------------------

_PROMPTS = (
    "{verb_l} the {topic} handling in {area}: start with {f0} and keep the public API stable.",
    "The {topic} code in {f0} is flaky under load. Can you look at why and fix it?",
    "Continue with {topic} in {area}. Last time we stopped at the tests in {f1}.",
    "Please {verb_l} {topic} for the {area} service. Use the existing helpers, no new deps.",
    "Why does {f1} fail on CI for {topic}? Fix the root cause, not the test.",
    "Make {topic} in {area} configurable and document it in the module docstring.",
    "ok",
    "continue",
    "Looks good. Now handle the edge case where the {area} payload is empty.",
    "Run the {area} tests and tell me what is still failing.",
)
_SAYS = (
    "Let me look at {f0} first to see how {topic} is wired in {area}.",
    "I'll check the tests in {f1} before changing anything.",
    "The {topic} path in {area} builds its state lazily; that is where the race is.",
    "Now I'll update {f0} so {topic} goes through one helper.",
    "Running the {area} test suite to confirm.",
)
_FINALS = (
    "Done: {topic} in {area} now goes through a single code path in {f0}, and {f1} covers the "
    "empty and oversized cases. We decided to keep the old behaviour behind a flag for one "
    "release so existing callers do not break.",
    "I changed {f0}: {topic} is applied before the {area} handler runs, with a bounded queue. "
    "TODO: the metrics for {topic} are not exported yet; that needs a follow-up in the "
    "dashboard.",
    "Fixed. The bug was that {topic} state leaked between {area} requests because the cache "
    "key ignored the tenant. Tests in {f1} pass locally (12 passed).",
    "Summary of the change for {topic}: one new function in {f0}, two call sites moved, the "
    "docstring explains the retry budget. Let's use exponential backoff with jitter instead of "
    "a fixed sleep, it behaves better when the {area} backend is slow.",
    "All green. I did not touch the migration scripts; {topic} for {area} only needed the "
    "service layer. Next step would be the CLI flag.",
)
_CODE = ("import logging\nfrom dataclasses import dataclass\n\nlog = logging.getLogger(__name__)\n\n"
         "@dataclass(frozen=True)\nclass Config:\n    limit: int = 100\n    window_s: float = 1.0\n\n")


# `build_history(..., varied=True)`: each prompt, reply and thought also says something of
# its own, as real ones do (a real project's transcripts in shared/fixtures-real repeat 2 of
# 110 texts; the templates alone give ~2,300 distinct texts for 100k assistant messages), so
# a cost that a per-text memo hides shows in the bench. Forked writers inherit the flag.
VARIED = False
_WORDS = ("amber", "basin", "cobalt", "drift", "ember", "fjord", "granite", "harbor", "indigo",
          "juniper", "kestrel", "lagoon", "meadow", "nimbus", "orchid", "pebble", "quartz",
          "raven", "saffron", "tundra", "umber", "valley", "willow", "yarrow", "zephyr",
          "anchor", "beacon", "canyon", "delta", "estuary", "falcon", "glacier", "heron",
          "island", "jasper", "kelp", "lantern", "mesa", "nectar", "oasis", "prairie", "quill",
          "ridge", "summit", "thistle", "upland", "vapor", "wren", "yonder", "zinnia")
# (fragments, not sentences of their own: a clause the extractors took for a decision or a
# todo would add memories a real session does not have)
_CLAUSES = ("({0} {1}, run {2})", "(cf. {0} {1} {2})", "(seen with {0} and {1}, {2} times)")


def _vary(text: str, rng: random.Random | None) -> str:
    """`text` with a clause of its own when the history is VARIED (short acknowledgements
    repeat in real transcripts too: they stay as they are)."""
    if not VARIED or rng is None or len(text) < 16:
        return text
    w = _WORDS
    return text + " " + rng.choice(_CLAUSES).format(rng.choice(w), rng.choice(w),
                                                    rng.randint(2, 400))


def _fmt(t: str, e: Effort, rng: random.Random | None = None) -> str:
    return _vary(t.format(verb_l=e.verb.lower(), topic=e.topic, area=e.area, f0=e.files[0],
                          f1=e.files[1]), rng)


def written_line(e: Effort, k: int) -> str:
    """The line an edit of effort `e`'s sessions writes into its first file (k: which one),
    and that the effort's commit adds, as an agent's work ends up committed: specific to the
    effort (its area and module), so the linker can tell whose work a commit is."""
    return f"    value_{k} = _bounded(payload.get('{e.area}_{k}', limit), '{e.mod}') * {k}"


def _file_body(e: Effort, rng: random.Random) -> str:
    lines = _CODE.split("\n")
    for k in range(rng.randint(10, 30)):
        lines.append(f"def {e.mod}_{k}(payload, *, limit=100):" if k % 6 == 0 else
                     f"    # {e.topic} step {k}: keep {e.area} requests bounded" if k % 6 == 1
                     else f"    value_{k} = payload.get('{e.area}_{k}', limit) * {k}")
    return "\n".join(lines)


def _numbered(body: str) -> str:
    return "\n".join(f"{i + 1:>6}\u2192{ln}" for i, ln in enumerate(body.split("\n")))


# -- Claude Code -------------------------------------------------------------------------------

def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


class _Claude:
    def __init__(self, e: Effort, cwd: str, sid: str, rng: random.Random, t: float) -> None:
        self.e, self.rng, self.t = e, rng, t
        self.parent = "null"
        self.out: list[str] = []
        self.head = (f'"isSidechain":false,"userType":"external","cwd":{js(cwd)},'
                     f'"sessionId":"{sid}","version":"2.1.7","gitBranch":{js(e.branch)},'
                     f'"slug":"typed-meandering-{e.mod[:6]}"')
        self.sid = sid
        self.cwd = cwd
        self.n_msg = 0

    def _env(self, kind: str, body: str, extra: str = "") -> None:
        u = _uuid(self.rng)
        self.t += self.rng.uniform(0.5, 20)
        self.out.append(f'{{"parentUuid":{self.parent},{self.head},"type":"{kind}",{body}'
                        f'{extra},"uuid":"{u}","timestamp":"{iso(self.t)}"}}')
        self.parent = f'"{u}"'

    def user(self, text: str, extra: str = "") -> None:
        self._env("user", f'"message":{{"role":"user","content":{js(text)}}}', extra)

    def assistant(self, blocks: list[str]) -> None:
        self.n_msg += 1
        mid = f"msg_01{self.rng.getrandbits(80):020x}"
        req = f"req_011C{self.rng.getrandbits(72):018x}"
        for b in blocks:  # one line per content block, same message id (streaming split)
            self._env("assistant",
                      f'"message":{{"model":"claude-sonnet-4-5-20250929","id":"{mid}",'
                      f'"type":"message","role":"assistant","content":[{b}],"stop_reason":null,'
                      f'"stop_sequence":null,"usage":{{"input_tokens":{self.rng.randint(3, 9)},'
                      f'"cache_creation_input_tokens":{self.rng.randint(0, 4000)},'
                      f'"cache_read_input_tokens":{self.rng.randint(10000, 90000)},'
                      f'"output_tokens":{self.rng.randint(20, 900)},"service_tier":"standard"}}}}',
                      f',"requestId":"{req}"')

    def tool_id(self) -> str:
        return f"toolu_01{self.rng.getrandbits(88):022x}"

    def result(self, tid: str, content: str, tur: str, error: bool = False) -> None:
        err = ',"is_error":true' if error else ""
        self._env("user", f'"message":{{"role":"user","content":[{{"tool_use_id":"{tid}",'
                          f'"type":"tool_result","content":{js(content)}{err}}}]}}',
                  f',"toolUseResult":{tur}')

    def raw(self, line: str) -> None:
        self.out.append(line)


def claude_session(e: Effort, cwd: str, seed: int, t: float) -> tuple[str, list[str]]:
    """One Claude Code session about effort `e` (~150 records, ~100 stored events)."""
    rng = random.Random(seed)
    sid = _uuid(rng)
    c = _Claude(e, cwd, sid, rng, t)
    f0, f1 = e.files[0], e.files[1]
    if rng.random() < 0.3:
        c.raw(f'{{"type":"summary","summary":{js(e.title + " work")},"leafUuid":"{_uuid(rng)}"}}')
    turns = rng.randint(11, 15)
    for turn in range(turns):
        prompt = _fmt(rng.choice(_PROMPTS), e, rng)
        if turn == 0 and rng.random() < 0.2:
            c.user("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
        c.user(prompt)
        c.raw(f'{{"type":"file-history-snapshot","messageId":"{_uuid(rng)}","snapshot":'
              f'{{"messageId":"{_uuid(rng)}","trackedFileBackups":{{}},"timestamp":"{iso(c.t)}"}},'
              f'"isSnapshotUpdate":false}}')
        if turn % 4 == 1:
            c.user(f"<system-reminder>The user opened {f0} in the IDE. This may or may not be "
                   "related to the current task.</system-reminder>", ',"isMeta":true')
        body = _file_body(e, rng)
        think = js(_vary(f"The user wants {e.topic} handled in {e.area}. I should read {f0} "
                         f"and the tests, then change the smallest thing. " * rng.randint(1, 3),
                         rng))
        sig = "E" + base64.b64encode(rng.randbytes(72)).decode()
        # Read
        tid = c.tool_id()
        c.assistant([f'{{"type":"thinking","thinking":{think},"signature":"{sig}"}}',
                     f'{{"type":"text","text":{js(_fmt(_SAYS[0], e, rng))}}}',
                     f'{{"type":"tool_use","id":"{tid}","name":"Read","input":'
                     f'{{"file_path":{js(cwd + "/" + f0)}}}}}'])
        nb = len(body.split("\n"))
        c.result(tid, _numbered(body),
                 f'{{"type":"text","file":{{"filePath":{js(cwd + "/" + f0)},"content":'
                 f'{js(body)},"numLines":{nb},"startLine":1,"totalLines":{nb}}}}}')
        if rng.random() < 0.4:
            tid = c.tool_id()
            c.assistant([f'{{"type":"tool_use","id":"{tid}","name":"Grep","input":{{"pattern":'
                         f'{js(e.mod)},"path":{js(cwd)},"output_mode":"files_with_matches"}}}}'])
            c.result(tid, f"Found 2 files\n{cwd}/{f0}\n{cwd}/{f1}",
                     f'{{"mode":"files_with_matches","filenames":[{js(f0)},{js(f1)}],"numFiles":2}}')
        # Edit (+ sometimes a rejected one)
        edits = 1 + (rng.random() < 0.5)
        for k in range(edits):
            tid = c.tool_id()
            old, new = f"    value_{k} = payload.get('{e.area}_{k}', limit) * {k}", written_line(e, k)
            c.assistant([f'{{"type":"text","text":{js(_fmt(_SAYS[3], e, rng))}}}',
                         f'{{"type":"tool_use","id":"{tid}","name":"Edit","input":{{"file_path":'
                         f'{js(cwd + "/" + f0)},"old_string":{js(old)},"new_string":{js(new)}}}}}'])
            if rng.random() < 0.05:
                c.result(tid, "The user doesn't want to proceed with this tool use.",
                         '"Error: The user doesn\'t want to proceed with this tool use."', True)
                c.user("[Request interrupted by user for tool use]")
                continue
            c.result(tid, f"The file {cwd}/{f0} has been updated. Here's the result of running "
                          f"`cat -n` on a snippet of the edited file:\n" + _numbered(body[:600]),
                     f'{{"filePath":{js(cwd + "/" + f0)},"oldString":{js(old)},"newString":'
                     f'{js(new)},"originalFile":{js(body)},"structuredPatch":[{{"oldStart":12,'
                     f'"oldLines":1,"newStart":12,"newLines":1,"lines":[{js("-" + old)},'
                     f'{js("+" + new)}]}}],"userModified":false,"replaceAll":false}}')
        # Bash pytest
        tid = c.tool_id()
        failed = rng.random() < 0.25
        out = (f"FAILED {f1}::test_{e.mod}_empty - AssertionError\n1 failed, 11 passed in 0.84s"
               if failed else "............\n12 passed in 0.81s")
        c.assistant([f'{{"type":"tool_use","id":"{tid}","name":"Bash","input":{{"command":'
                     f'{js("python -m pytest -q " + f1)},"description":"Run the tests"}}}}'])
        c.result(tid, ("Exit code 1\n" if failed else "") + out,
                 f'{{"stdout":{js(out)},"stderr":"","interrupted":false,"isImage":false}}', failed)
        c.raw(f'{{"parentUuid":{c.parent},{c.head},"type":"progress","data":{{"type":'
              f'"hook_progress","hookEvent":"PostToolUse","hookName":"PostToolUse:Bash"}},'
              f'"toolUseID":"{tid}","uuid":"{_uuid(rng)}","timestamp":"{iso(c.t)}"}}')
        c.assistant([f'{{"type":"text","text":{js(_fmt(rng.choice(_FINALS), e, rng))}}}'])
        c.raw(f'{{"parentUuid":{c.parent},{c.head},"type":"system","subtype":"turn_duration",'
              f'"durationMs":{rng.randint(4000, 90000)},"isMeta":false,"uuid":"{_uuid(rng)}",'
              f'"timestamp":"{iso(c.t)}"}}')
        if rng.random() < 0.1:
            c.raw(f'{{"type":"queue-operation","operation":"enqueue","timestamp":"{iso(c.t)}",'
                  f'"sessionId":"{sid}","content":"also check the docs"}}')
        if turn == turns // 2 and rng.random() < 0.15:
            c.user("This session is being continued from a previous conversation that ran out "
                   f"of context. The conversation is summarized below: we worked on {e.topic}.",
                   ',"isCompactSummary":true,"isVisibleInTranscriptOnly":true')
    return sid, c.out


_EXEC_HEAD = "Chunk ID: 1\nWall time: 0.01 seconds\nProcess exited with code 0\nOutput:\n"
_PATCH_OK = "Success. Updated the following files:\nM "


# -- Codex -------------------------------------------------------------------------------------

def codex_session(e: Effort, cwd: str, seed: int, t: float) -> tuple[str, list[str]]:
    """One enveloped-era Codex rollout about effort `e` (~150 records, ~100 stored events)."""
    rng = random.Random(seed)
    h = f"{rng.getrandbits(128):032x}"
    sid = f"019e{h[:4]}-{h[4:8]}-7{h[9:12]}-8{h[13:16]}-{h[16:28]}"
    out: list[str] = []
    clock = [t]

    def rec(kind: str, payload: str) -> None:
        clock[0] += rng.uniform(0.3, 15)
        out.append(f'{{"timestamp":"{iso(clock[0])}","type":"{kind}","payload":{payload}}}')

    rec("session_meta", f'{{"id":"{sid}","timestamp":"{iso(t)}","cwd":{js(cwd)},'
                        f'"originator":"codex-tui","cli_version":"0.129.0","source":"cli",'
                        f'"model_provider":"openai","base_instructions":{{"text":'
                        f'{js("You are Codex, a coding agent. " * 20)}}},"git":{{"commit_hash":'
                        f'"{rng.getrandbits(160):040x}","branch":{js(e.branch)},'
                        f'"repository_url":"git@github.com:acme/heavy.git"}}}}')
    rec("response_item", f'{{"type":"message","role":"user","content":[{{"type":"input_text",'
                         f'"text":{js("<environment_context><cwd>" + cwd + "</cwd></environment_context>")}}}]}}')
    f0, f1 = e.files[0], e.files[1]
    for turn in range(rng.randint(11, 14)):
        rec("turn_context", f'{{"turn_id":"t{turn}","cwd":{js(cwd)},"model":"gpt-5-codex",'
                            f'"effort":"medium","approval_policy":"on-request","sandbox_policy":'
                            f'{{"type":"workspace-write"}},"summary":"auto"}}')
        prompt = js(_fmt(rng.choice(_PROMPTS), e, rng))
        rec("response_item", f'{{"type":"message","role":"user","content":[{{"type":"input_text",'
                             f'"text":{prompt}}}]}}')
        rec("event_msg", f'{{"type":"user_message","message":{prompt},"images":[]}}')
        rec("response_item", f'{{"type":"reasoning","summary":[{{"type":"summary_text","text":'
                             f'{js("**Planning the " + e.topic + " change**")}}}],"content":null,'
                             f'"encrypted_content":"gAAAA{rng.getrandbits(2048):0512x}"}}')
        say = js(_fmt(rng.choice(_SAYS), e, rng))
        rec("response_item", f'{{"type":"message","role":"assistant","content":[{{"type":'
                             f'"output_text","text":{say}}}]}}')
        rec("event_msg", f'{{"type":"agent_message","message":{say}}}')
        for cmd in (f"sed -n 1,120p {f0}", f"rg -n {e.mod} src tests"):
            cid = f"call_{rng.getrandbits(96):024x}"
            rec("response_item", f'{{"type":"function_call","name":"exec_command","arguments":'
                                 f'{js(json.dumps({"cmd": cmd, "workdir": cwd, "yield_time_ms": 10000}))},'
                                 f'"call_id":"{cid}"}}')
            body = _file_body(e, rng) if cmd.startswith("sed") else f"{f0}:12:def {e.mod}_0"
            body = _EXEC_HEAD + body
            rec("response_item", f'{{"type":"function_call_output","call_id":"{cid}","output":'
                                 f'{js(body)}}}')
        pid = f"call_{rng.getrandbits(96):024x}"
        patch = (f"*** Begin Patch\n*** Update File: {f0}\n@@\n-    value_1 = payload.get(1)\n"
                 f"+{written_line(e, 1)}\n*** End Patch\n")
        rec("response_item", f'{{"type":"custom_tool_call","status":"completed","call_id":"{pid}",'
                             f'"name":"apply_patch","input":{js(patch)}}}')
        rec("event_msg", f'{{"type":"patch_apply_end","call_id":"{pid}","success":true,'
                         f'"changes":{{{js(cwd + "/" + f0)}:{{"update":{{"unified_diff":"@@"}}}}}},'
                         f'"stdout":"Success.","stderr":""}}')
        rec("response_item", f'{{"type":"custom_tool_call_output","call_id":"{pid}","output":'
                             f'{js(json.dumps({"output": _PATCH_OK + f0, "metadata": {"exit_code": 0}}))}}}')
        cid = f"call_{rng.getrandbits(96):024x}"
        failed = rng.random() < 0.25
        rec("response_item", f'{{"type":"function_call","name":"exec_command","arguments":'
                             f'{js(json.dumps({"cmd": "pytest -q " + f1, "workdir": cwd}))},'
                             f'"call_id":"{cid}"}}')
        res = ("Process exited with code 1\nOutput:\nF...........\n1 failed, 11 passed"
               if failed else "Process exited with code 0\nOutput:\n............\n12 passed")
        rec("response_item", f'{{"type":"function_call_output","call_id":"{cid}","output":{js(res)}}}')
        final = js(_fmt(rng.choice(_FINALS), e, rng))
        rec("response_item", f'{{"type":"message","role":"assistant","content":[{{"type":'
                             f'"output_text","text":{final}}}]}}')
        rec("event_msg", f'{{"type":"agent_message","message":{final}}}')
        rec("event_msg", f'{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":'
                         f'{rng.randint(10000, 90000)},"output_tokens":{rng.randint(100, 3000)}}},'
                         f'"last_token_usage":{{"input_tokens":{rng.randint(1000, 9000)},'
                         f'"output_tokens":{rng.randint(10, 900)}}},"model_context_window":272000}},'
                         f'"rate_limits":null}}')
        rec("event_msg", f'{{"type":"task_complete","last_agent_message":{final}}}')
    return sid, out


# -- writing -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """Session i: which effort, which agent, when."""

    effort: int
    agent: str
    t: float
    seed: int


def plan_sessions(n: int, efforts: list[Effort], seed: int = 0) -> list[Plan]:
    """2/3 Claude Code, 1/3 Codex; sessions of one effort start hours apart."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        e = efforts[i % len(efforts)]
        k = i // len(efforts)
        agent = "codex" if i % 3 == 2 else "claude-code"
        out.append(Plan(e.idx, agent, e.start + k * 1800 + rng.uniform(0, 600), seed * 1_000_003 + i))
    return out


def session_path(home: Path, cwd: str, p: Plan, sid: str) -> Path:
    import time as _t

    if p.agent == "claude-code":
        slug = "".join(c if c.isalnum() else "-" for c in cwd)
        return home / ".claude" / "projects" / slug / f"{sid}.jsonl"
    day = _t.strftime("%Y/%m/%d", _t.gmtime(int(p.t)))
    stamp = _t.strftime("%Y-%m-%dT%H-%M-%S", _t.gmtime(int(p.t)))
    return home / ".codex" / "sessions" / day / f"rollout-{stamp}-{sid}.jsonl"


def write_session(home: Path, cwd: str, e: Effort, p: Plan) -> tuple[Path, int, int]:
    """Write one session file; returns (path, records, bytes)."""
    gen = claude_session if p.agent == "claude-code" else codex_session
    sid, lines = gen(e, cwd, p.seed, p.t)
    path = session_path(home, cwd, p, sid)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(data)
    os.utime(path, (p.t + 3600, p.t + 3600))
    return path, len(lines), len(data)


_JOB: tuple[Path, str, list[Effort], list[Plan]] | None = None


def _write_range(bounds: tuple[int, int]) -> tuple[list[str], int, int]:
    assert _JOB is not None
    home, cwd, efforts, plans = _JOB
    paths, recs, size = [], 0, 0
    for i in range(*bounds):
        p = plans[i]
        path, r, b = write_session(home, cwd, efforts[p.effort], p)
        paths.append(str(path))
        recs += r
        size += b
    return paths, recs, size


def write_sessions(home: Path, cwd: str, efforts: list[Effort], plans: list[Plan],
                   workers: int | None = None) -> tuple[list[Path], int, int]:
    """All sessions, written by forked workers; returns (paths, records, bytes)."""
    global _JOB
    import multiprocessing

    workers = workers or max(1, min(4, os.cpu_count() or 1))
    _JOB = (home, cwd, efforts, plans)
    step = max(1, len(plans) // (workers * 8))
    chunks = [(i, min(len(plans), i + step)) for i in range(0, len(plans), step)]
    try:
        if workers > 1 and len(plans) >= 64:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                parts = pool.map(_write_range, chunks)
        else:
            parts = [_write_range(c) for c in chunks]
    finally:
        _JOB = None
    paths = [Path(p) for part in parts for p in part[0]]
    return paths, sum(p[1] for p in parts), sum(p[2] for p in parts)


# -- git ---------------------------------------------------------------------------------------

def git_env(home: Path) -> dict[str, str]:
    # PYTHONDONTWRITEBYTECODE (set on some shared machines) would make every measured
    # process compile looma's modules from source (~0.3-1 CPU-s each): users have .pyc files.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "XDG_", "CLAUDE_", "CODEX_", "LOOMA_"))
           and k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", LOOMA_NO_PROGRESS="1",
               GIT_AUTHOR_NAME="Heavy User", GIT_AUTHOR_EMAIL="heavy@example.com",
               GIT_COMMITTER_NAME="Heavy User", GIT_COMMITTER_EMAIL="heavy@example.com")
    return env


def make_repo(repo: Path, efforts: list[Effort], plans: list[Plan], env: dict[str, str]) -> int:
    """One commit per effort after its last session, plus chores; via `git fast-import`."""
    last: dict[int, float] = {}
    for p in plans:
        last[p.effort] = max(last.get(p.effort, 0.0), p.t)
    events: list[tuple[float, str, Effort | None]] = [
        (last.get(e.idx, e.start) + 2400, "effort", e) for e in efforts]
    for k in range(max(1, len(efforts) // 20)):
        events.append((BASE_TS + k * 20 * 3 * 3600 + 900, "chore", None))
    events.sort(key=lambda x: x[0])
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=env, check=True)
    out: list[str] = []
    mark = 0
    for t, _kind, e in events:
        mark += 1
        if e is not None:
            msg = f"{e.verb.lower()} {e.topic} in {e.area}\n\n{e.title}: {e.files[0]} and tests.\n"
            files = [(f, f"# {e.title}\n# revision {mark}\n") for f in e.files]
            # Its first file holds what the sessions' edits wrote (the linker's content).
            files[0] = (e.files[0], files[0][1] + "".join(f"{written_line(e, k)}\n"
                                                          for k in (0, 1)))
        else:
            msg = ("bump dependencies\n", "fix typo in README\n", "ci: pin pytest\n")[mark % 3]
            files = [("README.md" if mark % 3 == 1 else "requirements.txt", f"rev {mark}\n")]
        out += ["commit refs/heads/main", f"mark :{mark}",
                f"author Heavy User <heavy@example.com> {int(t)} +0000",
                f"committer Heavy User <heavy@example.com> {int(t)} +0000",
                f"data {len(msg.encode())}", msg]
        if mark > 1:
            out.append(f"from :{mark - 1}")
        for f, body in files:
            out += [f"M 644 inline {f}", f"data {len(body.encode())}", body]
        out.append("")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, env=env, check=True,
                   input=("\n".join(out) + "\n").encode(), capture_output=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, env=env, check=True)
    return mark


def build_history(root: Path, sessions: int, *, seed: int = 0,
                  workers: int | None = None, varied: bool = False) -> History:
    """Repository + HOME with `sessions` sessions (see the module docstring); `varied`: every
    prompt, reply and thought also says something of its own (VARIED)."""
    global VARIED
    VARIED = varied
    repo, home = root / "repo", root / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Heavy User\n\temail = heavy@example.com\n")
    efforts = make_efforts(sessions)
    plans = plan_sessions(sessions, efforts, seed)
    env = git_env(home)
    commits = make_repo(repo, efforts, plans, env)
    paths, records, size = write_sessions(home, str(repo), efforts, plans, workers)
    n_codex = sum(1 for p in plans if p.agent == "codex")
    return History(root, repo, home, efforts, sessions, sessions - n_codex, n_codex, records,
                   size, commits, paths)


def next_session_time(h: History) -> float:
    """When `add_session`'s sessions start: after everything else."""
    return max(x.start for x in h.efforts) + 10 * 86400.0


def next_commit(h: History, effort: int) -> tuple[Path, str, dict[str, str]]:
    """The user's commit after `add_session`'s session on `effort`: the file, the text to
    append (the lines that session's edits wrote, as its work is committed) and the git
    environment that dates it an hour after the session started."""
    e = h.efforts[effort % len(h.efforts)]
    stamp = f"@{int(next_session_time(h) + 3 * 3600)} +0000"
    return (h.repo / e.files[0], "".join(f"{written_line(e, k)}\n" for k in (0, 1)),
            {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})


def add_session(h: History, *, agent: str = "claude-code", effort: int = 0,
                seed: int = 99_999_999) -> Path:
    """One more session (a user's next one), dated after everything else."""
    e = h.efforts[effort % len(h.efforts)]
    t = next_session_time(h)
    path, _, _ = write_session(h.home, str(h.repo), e, Plan(e.idx, agent, t, seed))
    os.utime(path, None)
    return path
