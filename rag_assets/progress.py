"""Progress of long `rag` steps on stderr: a bar redrawn in place on a terminal, plain lines
elsewhere (logs, CI), nothing at all when there is no stream (``--json``)."""

from __future__ import annotations

from typing import TextIO

WIDTH = 24


class Progress:
    """``total`` steps of one task; ``start(i, note)`` before step ``i`` (1-based), ``finish()`` after
    the last. Off a terminal only every ``every``-th start (and the first) is printed."""

    def __init__(self, stream: TextIO | None, label: str, total: int, every: int = 1):
        self.stream, self.label, self.total, self.every = stream, label, max(total, 0), max(every, 1)
        self.tty = bool(stream) and stream.isatty()
        self._drawn = 0

    def _draw(self, done: int, note: str) -> None:
        filled = WIDTH * done // self.total if self.total else WIDTH
        line = f"\r{self.label} [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{self.total} {note[:60]}"
        self.stream.write(line.ljust(self._drawn))
        self._drawn = len(line)
        self.stream.flush()

    def start(self, step: int, note: str = "") -> None:
        if not self.stream:
            return
        if self.tty:
            self._draw(step - 1, note)
        elif step == 1 or step % self.every == 0:
            print(f"{self.label} {step}/{self.total}{': ' + note if note else ''}", file=self.stream, flush=True)

    def finish(self, note: str = "done") -> None:
        if self.stream and self.tty:
            self._draw(self.total, note)
            self.stream.write("\n")
            self.stream.flush()
