"""The cyclic garbage collector paused while a process builds what it keeps (a fold, a pass's
work model): its full collections otherwise walk the whole heap each time it grew by a
quarter, a cost that grows with the history and not with the new work."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def paused(active: bool = True) -> Iterator[None]:
    """The collector off inside (nested uses: the outermost turns it back on); `active`
    False: a no-op. Reference counting still frees everything without a cycle; cycles made
    inside wait for the first collection after it (nothing of looma's makes many).

    Measured on the first new session after a cold ingest at 5,000 sessions (py-spy and
    cProfile, tests/bench/bench_scale.py's history): unpickling the work model's memo and
    resolver state and restoring the resolver (~10^5 containers) triggered collections that
    walked the loaded ledger fold and each other, ~0.4 CPU-s of the pass's ~1.3."""
    enabled = gc.isenabled()
    if active:
        gc.disable()
    try:
        yield
    finally:
        if active and enabled:
            gc.enable()
