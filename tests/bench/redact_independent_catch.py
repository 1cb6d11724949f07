"""Catch rates of looma's redaction on the independent corpus (tests/redact_independent_corpus.json).

Run: .venv/bin/python tests/bench/redact_independent_catch.py [--all] [--missed] [--fp]
     [--mangled] [--by source|family|rule] [--engine looma|detect-secrets|betterleaks]

A true positive counts as caught when no 12-character chunk of its secret is left in the
redacted text (secrets of 12 characters or fewer: when the secret is gone). A must-survive
string counts as mangled when redaction changes a single byte of it. False positives are the
rule sets' published negative examples; one that is changed counts against precision (printed,
not gated: several are real-looking keys in a context the upstream rule skips).
`measure()` returns the numbers tests/test_redact.py gates on.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "redact_independent_corpus.json"
CHUNK = 12


def leaked(secret: str, out: str) -> bool:
    """Whether any CHUNK-character piece of `secret` survives in `out`."""
    if len(secret) <= CHUNK:
        return secret in out
    return any(secret[i:i + CHUNK] in out for i in range(len(secret) - CHUNK + 1))


@dataclass
class Result:
    caught: int = 0
    total: int = 0
    by: dict[str, dict[str, list[int]]] = field(default_factory=dict)  # axis -> key -> [ok, n]
    missed: list[dict[str, str]] = field(default_factory=list)
    mangled: list[tuple[str, str, str]] = field(default_factory=list)  # class, text, output
    must_total: int = 0
    fp_hit: list[dict[str, str]] = field(default_factory=list)
    fp_total: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.caught / self.total if self.total else 1.0


def measure(redact: Callable[[str], str] | None = None, corpus: Path = CORPUS) -> Result:
    if redact is None:
        from looma_git.redact import redact_text as redact
    data = json.loads(corpus.read_text())
    res = Result()
    by: dict[str, dict[str, list[int]]] = {a: defaultdict(lambda: [0, 0])
                                           for a in ("source", "family", "rule")}
    t0 = time.process_time()
    for s in data["true_positives"]:
        out = redact(s["text"])
        ok = not leaked(s["secret"], out)
        res.total += 1
        res.caught += ok
        for axis in by:
            key = s[axis] if axis != "rule" else f"{s['source']}:{s['rule']}"
            by[axis][key][0] += ok
            by[axis][key][1] += 1
        if not ok:
            res.missed.append({**s, "out": out})
    for fp in data["false_positives"]:
        res.fp_total += 1
        out = redact(fp["text"])
        if out != fp["text"]:
            res.fp_hit.append({**fp, "out": out})
    for ms in data["must_survive"]:
        res.must_total += 1
        out = redact(ms["text"])
        if out != ms["text"]:
            res.mangled.append((ms["class"], ms["text"], out))
    res.seconds = time.process_time() - t0
    res.by = {a: dict(v) for a, v in by.items()}
    return res


def _engine(name: str) -> Callable[[str], str] | None:
    if name == "looma":
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from redact_engines import ENGINES
    return ENGINES[name]


def main(argv: list[str]) -> None:
    name = argv[argv.index("--engine") + 1] if "--engine" in argv else "looma"
    axis = argv[argv.index("--by") + 1] if "--by" in argv else "family"
    res = measure(_engine(name))
    print(f"engine: {name}   corpus: {CORPUS.name}")
    for key, (ok, n) in sorted(res.by[axis].items()):
        if "--all" in argv or ok < n:
            print(f"  {key:56} {ok:3}/{n:<3}")
    for src, (ok, n) in sorted(res.by["source"].items()):
        print(f"  source {src:15} {ok:4}/{n:<4} ({100 * ok / n:.1f}%)")
    print(f"true positives caught: {res.caught}/{res.total} ({100 * res.rate:.1f}%) over "
          f"{len(res.by['rule'])} rules, {len(res.by['family'])} families")
    print(f"must-survive mangled: {len(res.mangled)}/{res.must_total}")
    if "--mangled" in argv or len(res.mangled) <= 20:
        for cls, text, out in res.mangled:
            print(f"  [{cls}] {text[:100]!r}\n      -> {out[:100]!r}")
    print(f"published false positives changed: {len(res.fp_hit)}/{res.fp_total}")
    if "--fp" in argv:
        for fp in res.fp_hit:
            print(f"  FP {fp['source']}:{fp['rule']} {fp['text'][:110]!r}\n      -> {fp['out'][:110]!r}")
    print(f"CPU {res.seconds:.2f}s for the corpus")
    if "--missed" in argv:
        for m in res.missed:
            print(f"  MISS {m['source']}:{m['rule']} secret={m['secret'][:60]!r}\n"
                  f"       {m['text'][:160]!r}\n    -> {m['out'][:160]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
