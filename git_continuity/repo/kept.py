"""Answers about objects that never change (whether an id is a commit, what a commit's tree
holds), kept across commands in a cache file of the clone's: read once by a process, written
whole at its end where it found something new (racing writers each keep a whole file, and
losing one's answers only costs speed), and past a cap only what was asked last time."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from git_continuity import atomic

K = TypeVar("K")
V = TypeVar("V")


@dataclass
class Kept(Generic[K, V]):
    path: Path
    cap: int  # answers kept on disk; past that, only those asked last time
    decode: Callable[[bytes], dict[K, V]]  # a record that does not read as one is skipped
    encode: Callable[[Mapping[K, V]], bytes]
    _known: dict[K, V] | None = None
    _asked: set[K] = field(default_factory=set)
    _new: bool = False

    def get(self, key: K) -> V | None:
        if self._known is None:
            try:
                self._known = self.decode(self.path.read_bytes())
            except OSError:
                self._known = {}
        found = self._known.get(key)
        if found is not None:
            self._asked.add(key)
        return found

    def put(self, key: K, answer: V) -> None:
        if self.get(key) is None:
            self._new = True
        assert self._known is not None
        self._known[key] = answer
        self._asked.add(key)

    def keep(self) -> None:
        """Write down what was found that was not kept yet."""
        if not self._new or self._known is None:
            return
        known = self._known
        if len(known) > self.cap:
            known = {key: answer for key, answer in known.items() if key in self._asked}
        try:
            atomic.write(self.path, self.encode(known))
        except OSError:
            return  # a cache that cannot be written only costs speed
        self._new = False
