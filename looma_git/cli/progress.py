"""Named phases with elapsed time (and an ETA when counts are known) on a terminal; silent in a pipe."""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO


def fmt_elapsed(seconds: float) -> str:
    """`0.4s`, `12.3s`, `1m43s`, `1h02m`: one format for every elapsed time looma prints."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(seconds + 0.5), 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def wanted(as_json: bool = False, stream: TextIO | None = None) -> bool:
    """Progress only on a terminal, never with --json, and never when LOOMA_NO_PROGRESS is set."""
    stream = stream or sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not as_json and not os.environ.get("LOOMA_NO_PROGRESS")


class Phases:
    """`with Phases(enabled) as p: p.phase("reading transcripts"); p(done, total, label)`.

    One status line on stderr, redrawn twice a second by a ticker thread so a long phase
    without callbacks still shows that time passes; each finished phase leaves one line
    (`reading transcripts: done in 12.3s`). Disabled, every method is a no-op.
    """

    TICK_S = 0.5

    def __init__(self, enabled: bool, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.name = ""
        self.phase_started = self.started
        self.done = self.total = 0
        self.label = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._drawn = False

    @property
    def elapsed(self) -> float:
        """Seconds since this object was made: the true wall time of the whole command."""
        return time.monotonic() - self.started

    def __enter__(self) -> Phases:
        if self.enabled:
            self._thread = threading.Thread(target=self._tick, name="looma-progress",
                                            daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(finished=exc_type is None)

    def phase(self, name: str) -> None:
        """End the current phase (one line with its time) and start `name`."""
        if not self.enabled:
            return
        with self._lock:
            self._finish_line()
            self.name, self.phase_started = name, time.monotonic()
            self.done = self.total = 0
            self.label = ""
            self._draw()

    def __call__(self, done: int, total: int, label: str = "") -> None:
        """Counts for the current phase (the ingest engine's progress callback)."""
        if not self.enabled:
            return
        with self._lock:
            self.done, self.total, self.label = done, total, label
            self._draw()

    def close(self, finished: bool = True) -> None:
        """Stop the ticker; a finished phase leaves its line, an interrupted one is erased."""
        if not self.enabled:
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        with self._lock:
            if finished:
                self._finish_line()
            else:
                self._erase()
            self.name = ""

    # -- drawing (callers hold the lock) ------------------------------------------------------

    def _tick(self) -> None:
        while not self._stop.wait(self.TICK_S):
            with self._lock:
                if self.name:
                    self._draw()

    def _width(self) -> int:
        try:
            cols = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            cols = 0
        return max(20, cols - 1) if cols else 79

    def _draw(self) -> None:
        if not self.name:
            return
        spent = time.monotonic() - self.phase_started
        line = f"{self.name}: {fmt_elapsed(spent)}"
        if self.total:
            pct = self.done * 100 // self.total
            line += f"  {self.done}/{self.total} ({pct}%)"
            if self.done and spent > 1 and self.done < self.total:
                eta = spent / self.done * (self.total - self.done)
                line += f"  ETA {fmt_elapsed(eta)}"
            if self.label:
                line += f"  {self.label}"
        self._write("\r\x1b[K" + line[:self._width()])
        self._drawn = True

    def _finish_line(self) -> None:
        if self.name:
            spent = time.monotonic() - self.phase_started
            self._write(f"\r\x1b[K{self.name}: done in {fmt_elapsed(spent)}\n")
        self._drawn = False

    def _erase(self) -> None:
        if self._drawn:
            self._write("\r\x1b[K")
        self._drawn = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False
