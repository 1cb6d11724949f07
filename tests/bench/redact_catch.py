"""Per-rule catch rates of looma's redaction on tests/redact_public_corpus.json; prints, and
`measure()` returns the numbers the tests gate on.

Run: .venv/bin/python tests/bench/redact_catch.py [--all] [--engine looma|detect-secrets|betterleaks]

A true positive counts as caught when no 12-character chunk of its secret is left in the
redacted text (shorter secrets: when the secret is gone). A must-survive string counts as
mangled when redaction changes a single byte of it. False positives are the catalog's
published false-positive classes; a redacted one counts against precision, not the gate.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "redact_public_corpus.json"
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
    per_rule: dict[str, tuple[int, int]] = field(default_factory=dict)
    missed: list[tuple[str, str, str]] = field(default_factory=list)  # rule, context, text
    mangled: list[tuple[str, str, str]] = field(default_factory=list)  # class, text, output
    fp_hit: int = 0
    fp_total: int = 0
    seconds: float = 0.0
    mb: float = 0.0

    @property
    def rate(self) -> float:
        return self.caught / self.total if self.total else 1.0


def looma_engine() -> Callable[[str], str]:
    from looma_git.redact import redact_text
    return redact_text


def measure(redact: Callable[[str], str] | None = None, corpus: Path = CORPUS) -> Result:
    redact = redact or looma_engine()
    data = json.loads(corpus.read_text())
    res = Result()
    t0 = time.process_time()
    for rule in data["rules"]:
        ok = 0
        for s in rule["samples"]:
            out = redact(s["text"])
            res.mb += len(s["text"].encode()) / 1e6
            if leaked(s["secret"], out):
                res.missed.append((rule["id"], s["context"], s["text"]))
            else:
                ok += 1
        res.per_rule[rule["id"]] = (ok, len(rule["samples"]))
        res.caught += ok
        res.total += len(rule["samples"])
        for fp in rule["false_positives"]:
            res.fp_total += 1
            res.fp_hit += redact(fp["text"]) != fp["text"]
    for ms in data["must_survive"]:
        out = redact(ms["text"])
        if out != ms["text"]:
            res.mangled.append((ms["class"], ms["text"], out))
    res.seconds = time.process_time() - t0
    return res


def _engine(name: str) -> Callable[[str], str]:
    if name == "looma":
        return looma_engine()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from redact_engines import ENGINES
    return ENGINES[name]


def main(argv: list[str]) -> None:
    name = argv[argv.index("--engine") + 1] if "--engine" in argv else "looma"
    res = measure(_engine(name))
    show_all = "--all" in argv
    print(f"engine: {name}")
    for rid, (ok, n) in sorted(res.per_rule.items()):
        if show_all or ok < n:
            print(f"  {rid:48} {ok:3}/{n:<3}")
    print(f"true positives caught: {res.caught}/{res.total} ({100 * res.rate:.1f}%)")
    print(f"must-survive mangled: {len(res.mangled)}")
    for cls, text, out in res.mangled[:40]:
        print(f"  [{cls}] {text[:90]!r}\n      -> {out[:90]!r}")
    print(f"published false-positive classes redacted: {res.fp_hit}/{res.fp_total}")
    print(f"CPU {res.seconds:.2f}s for the corpus")
    if "--missed" in argv:
        for rid, ctx, text in res.missed:
            print(f"  MISS {rid} [{ctx}] {text[:140]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
