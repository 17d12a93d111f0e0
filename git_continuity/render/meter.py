"""The one progress line of network verification, rewritten in place on a terminal.

Only a terminal gets it, and only once the asking has taken more than a second (a quick
answer draws nothing): with ``--json``, or when stderr is a pipe or a file, nothing is
written (programs and logs read stdout, and a half-drawn line would only be noise).
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from git_continuity.display import clean, raw

DELAY = 1.0  # seconds of asking before the line is drawn


class Progress:
    """Owns one line of the terminal while network claims are being asked."""

    def __init__(self, stream: TextIO, delay: float = DELAY) -> None:
        self.stream = stream
        self.delay = delay
        self.total = 0
        self.done = 0
        self.width = 0
        self.label = ""
        self.shown = False
        self.finished = False
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def start(self, total: int) -> None:
        self.total, self.done = total, 0
        self._timer = threading.Timer(self.delay, self._show)
        self._timer.daemon = True
        self._timer.start()

    def advance(self, label: str) -> None:
        with self._lock:
            self.done += 1
            self.label = label
            if self.shown:
                self._draw()

    def finish(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self.shown, self.finished = False, True  # a timer that fires late draws nothing now
            if self.width:
                self.stream.write("\r" + " " * self.width + "\r")
                self.stream.flush()
                self.width = 0

    def _show(self) -> None:
        with self._lock:
            if not self.finished and self.done < self.total:
                self.shown = True
                self._draw()

    def _draw(self) -> None:
        line = f"asking {self.done}/{self.total} network claims"
        if self.label:
            label = clean(self.label)  # a handle from state; this line is written raw (see on_terminal)
            line += f"  {label if len(label) <= 50 else label[:49] + '…'}"
        padded = line.ljust(self.width)
        self.width = len(line)
        self.stream.write("\r" + padded)
        self.stream.flush()


def on_terminal(as_json: bool, stream: TextIO | None = None) -> Progress | None:
    """A Progress on stderr when it is a terminal and the output is for people."""
    target = stream if stream is not None else sys.stderr
    if as_json or not target.isatty():
        return None
    return Progress(raw(target))  # its carriage returns are ours, so not escaped
