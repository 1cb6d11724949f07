"""Compact text content of MCP tool results: terse lines, transcript text fenced as evidence."""

from __future__ import annotations

from collections.abc import Iterable

from looma_git.mcp.text import conf_tag, fence, one_line
from looma_git.wire.mcp import (
    EVIDENCE_LABEL,
    AskResult,
    CorrectResult,
    ListWorkResult,
    MemoryFact,
    RecallResult,
    ResumeMatchRow,
    ResumeResult,
    TimelineResult,
    ToolErrorOut,
    WorkItemRow,
)

INJECTION_LABEL = "WARNING suspected prompt injection in the quote below"


def _src(agent: str | None, session: str | None, event: str | None) -> str:
    parts = [p for p in (agent, session) if p]
    where = ":".join(parts) if parts else "unknown source"
    return f"{where} event {event}" if event else where


def _evidence(blocks: Iterable[tuple[str, str, list[str]]]) -> list[str]:
    """The evidence section: one label line per quote, the quote itself fenced; quotes that
    look like prompt injection carry a warning line naming what was seen."""
    lines: list[str] = []
    for label, text, flags in blocks:
        if not lines:
            lines.append(EVIDENCE_LABEL)
        lines.append(f"- {label}")
        if flags:
            lines.append(f"  {INJECTION_LABEL} ({', '.join(flags)})")
        lines.append(fence(text))
    return lines


def _more(items: list[str], total: int, shown: int = 2) -> str:
    if not items:
        return "-"
    rest = total - min(shown, len(items))
    return ", ".join(items[:shown]) + (f" +{rest}" if rest > 0 else "")


def _flag_tag(flags: list[str]) -> str:
    return f"  [flagged: {', '.join(flags)}]" if flags else ""


def _work_line(w: WorkItemRow) -> str:
    sessions = [f"{s.agent}:{s.id[:12]}" for s in w.sessions]
    return (f"{w.id}  {one_line(w.title, 80)}  [{w.kind}] [{w.status}] "
            f"{conf_tag(w.confidence, w.band)}  files: {_more(w.files, w.files_total)}  "
            f"commits: {_more([c[:10] for c in w.commits], w.commits_total)}  "
            f"sessions: {_more(sessions, w.sessions_total, 1)}{_flag_tag(w.flags)}")


def _cand_line(c: ResumeMatchRow) -> str:
    return (f"{c.id}  {one_line(c.title, 80)}  [{c.kind}] [{c.status}] "
            f"{conf_tag(c.confidence, c.band)} match {c.match:.2f}  "
            f"files: {_more(c.files, c.files_total)}{_flag_tag(c.flags)}")


def _next(cursor: str | None) -> list[str]:
    return [f"more: call again with cursor={cursor!r}"] if cursor else []


def list_work(r: ListWorkResult) -> str:
    head = f"workitems: {r.count}" + (f" (status {r.status_filter})" if r.status_filter else "")
    return "\n".join([head, *(_work_line(w) for w in r.workitems), *_next(r.next_cursor)])


def _mem_label(kind: str, m: MemoryFact) -> str:
    return (f"{kind} {m.id} {conf_tag(m.confidence, m.band)}"
            f"{'' if m.promoted else ' unconfirmed'} from {_src(m.source.agent, m.source.session, m.source.event)}")


def resume(r: ResumeResult) -> str:
    lines = [f"state: {r.state}" + (f"  goal: {one_line(r.goal, 80)}" if r.goal else "")]
    if r.message:
        lines.append(f"note: {r.message}")
    b = r.bundle
    if b is None:
        label = "candidates (side by side, not blended):" if r.state == "ambiguous" else \
            "candidates:"
        if r.candidates:
            lines += [label, *(_cand_line(c) for c in r.candidates)]
        if r.recent:
            lines += ["recently active:", *(_cand_line(c) for c in r.recent)]
        if r.cut:
            lines.append("left out to fit the budget: " + ", ".join(
                f"{k} +{n}" for k, n in sorted(r.cut.items())))
        return "\n".join(lines)
    w = b.workitem
    lines.append(f"work: {w.id}  {one_line(w.title, 80)}  [{w.kind}] [{w.status}] "
                 f"{conf_tag(w.confidence, w.band)}" + (f"  branch {w.branch}" if w.branch else ""))
    g = b.git
    lines.append(f"git: branch {g.branch or '(detached)'}  HEAD {g.head or '-'}  "
                 f"dirty: {_more(g.dirty, g.dirty_total, 3)}")
    if b.commits:
        lines.append("commits:")
        lines += [f"  {c.sha}  {c.date[:10]}  {one_line(c.subject, 70)}" for c in b.commits]
    if b.sessions:
        lines.append("sessions: " + ", ".join(
            f"{s.agent}:{s.id[:12]}" + (f" ({s.events} events)" if s.events else "")
            for s in b.sessions))
    if b.files:
        lines.append("files: " + ", ".join(b.files))
    counts = [f"{len(getattr(b, k))} {k}" for k in ("decisions", "todos", "bugs", "architecture")]
    lines.append("memory: " + ", ".join(counts))
    if r.cut:
        lines.append("left out to fit the budget: " + ", ".join(
            f"{k} +{n}" for k, n in sorted(r.cut.items())))
    if b.overflow or b.protected_over_budget:
        cut = ", ".join(f"{k} +{n}" for k, n in sorted(b.overflow.items()))
        lines.append(f"budget: {b.used}/{b.budget} tokens; left out: {cut or 'nothing'}"
                     + ("; open todos/bugs/decisions exceed the budget and were kept"
                        if b.protected_over_budget else ""))
    blocks = [(_mem_label(kind[:-1] if kind != "architecture" else kind, m), m.evidence,
               m.flags)
              for kind in ("todos", "bugs", "decisions", "architecture")
              for m in getattr(b, kind)]
    if w.evidence_summary:
        blocks.insert(0, ("summary of the WorkItem", w.evidence_summary, w.flags))
    lines += _evidence(blocks)
    return "\n".join(lines)


def ask(r: AskResult) -> str:
    lines = [f"query: {one_line(r.query, 120)}  facts: {len(r.facts)}"]
    blocks = []
    for f in r.facts:
        wi = f" of {f.workitem} {one_line(f.workitem_title or '', 60)}" if f.workitem else ""
        life = f" [{f.lifecycle}]" if f.lifecycle and f.lifecycle != "active" else ""
        label = (f"{f.type} {f.id} {conf_tag(f.confidence, f.band)} {f.status}{life}{wi} "
                 f"from {_src(f.source.agent, f.source.session, f.source.event)}")
        if f.type == "workitem":
            label = (f"workitem {f.id} {one_line(f.workitem_title or '', 80)} "
                     f"{conf_tag(f.confidence, f.band)} {f.status}: summary")
        blocks.append((label, f.evidence, f.flags))
    lines += _evidence(blocks)
    return "\n".join(lines)


def timeline(r: TimelineResult) -> str:
    lines = [f"timeline: {r.workitem}  {one_line(r.title, 80)}  "
             f"{conf_tag(r.confidence, r.band)}  entries: {r.total}"]
    blocks = []
    for e in r.entries:
        who = f"  by {e.actor}" if e.actor else ""
        if e.evidence:
            lines.append(f"{e.ts or '-':<20}  {e.kind:<7} {e.ref}  (quoted below)")
            blocks.append((f"{e.kind} {e.ref}", e.evidence, e.flags))
        else:
            lines.append(f"{e.ts or '-':<20}  {e.kind:<7} {e.ref}  {one_line(e.text, 90)}{who}")
    lines += _next(r.next_cursor)
    lines += _evidence(blocks)
    return "\n".join(lines)


def recall(r: RecallResult) -> str:
    lines = [f"recall: {one_line(r.entity, 120)}  workitems: {r.total}"]
    blocks = []
    for h in r.results:
        lines.append(_work_line(h.workitem) + f"  why: {', '.join(h.why)}")
        blocks += [(f"{m.kind} {m.id} {conf_tag(m.confidence, m.band)} [{m.lifecycle}] "
                    f"of {h.workitem.id}", m.evidence, m.flags) for m in h.memories]
    lines += _next(r.next_cursor)
    lines += _evidence(blocks)
    return "\n".join(lines)


def correct(r: CorrectResult) -> str:
    return (f"done: {r.summary}\nop: {r.op} {r.op_id[:12]}  target: {r.target}  "
            f"actor: {r.actor}\nundo: {r.undo}")


def error(e: ToolErrorOut) -> str:
    lines = [f"error: {e.code}: {e.message}"]
    lines += [f"  {m}" for m in e.matches]
    if e.suggestion:
        lines.append(f"suggestion: {e.suggestion}")
    lines.append(f"recoverable: {'yes' if e.recoverable else 'no'}")
    return "\n".join(lines)
