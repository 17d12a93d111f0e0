"""A progress line for network verification, rewritten in place on a terminal.

Only a terminal gets it: with ``--json``, or when stderr is a pipe or a file, nothing is
written (programs and logs read stdout, and a half-drawn line would only be noise).
"""

from __future__ import annotations

import sys
from typing import TextIO

from git_continuity.display import clean, raw


class Progress:
    """Owns one line of the terminal while network claims are being asked."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.total = 0
        self.done = 0
        self.width = 0

    def start(self, total: int) -> None:
        self.total, self.done = total, 0
        self._draw("")

    def advance(self, label: str) -> None:
        self.done += 1
        self._draw(label)

    def finish(self) -> None:
        if self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0

    def _draw(self, label: str) -> None:
        line = f"asking {self.done}/{self.total} network claims"
        if label:
            label = clean(label)  # a handle from state; this line is written raw (see on_terminal)
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
