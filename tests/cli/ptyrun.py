"""Run looma on a real pseudo-terminal (its controlling terminal, so ^C is a real Ctrl-C)."""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import time
from pathlib import Path


class PtyRun:
    """`looma ARGS` as the foreground job of a fresh pty; read its screen, type into it."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str], cols: int = 80,
                 python: str = sys.executable) -> None:
        env = {k: v for k, v in env.items() if k != "LOOMA_NO_PROGRESS"}
        env.setdefault("TERM", "xterm")
        env["COLUMNS"] = str(cols)
        pid, fd = pty.fork()
        if pid == 0:  # the child: exec at once
            try:
                os.chdir(cwd)
                os.execve(python, [python, "-m", "looma_git", *args], env)
            finally:
                os._exit(127)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
        self.pid, self.fd = pid, fd
        self.out = b""
        self.status: int | None = None

    @property
    def text(self) -> str:
        return self.out.decode(errors="replace")

    def read_until(self, needle: str, timeout: float = 60) -> bool:
        """Read output until `needle` appears (True) or the child ends / time runs out."""
        deadline = time.monotonic() + timeout
        while needle.encode() not in self.out and time.monotonic() < deadline:
            if not self._read(0.2):
                break
        return needle.encode() in self.out

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return self._alive()
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:
            return False
        if not chunk:
            return False
        self.out += chunk
        return True

    def _alive(self) -> bool:
        if self.status is not None:
            return False
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid:
            self.status = status
            return False
        return True

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def wait(self, timeout: float = 60) -> int | None:
        """Exit code after reading the rest of the output; None if it hung (then killed)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.2)
            if self.status is not None or not self._alive():
                while self._read(0.05):
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(self.status) if self.status is not None \
                    else None
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        return None
