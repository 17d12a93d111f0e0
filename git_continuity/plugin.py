"""What a verifier plugin needs: the hookimpl marker and the values that cross the hooks.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names and
arguments match ``git_continuity.hookspecs``, registered under the entry-point group
``git_continuity``::

    [project.entry-points.git_continuity]
    myci = "myci_continuity"
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import pluggy

from git_continuity.model import Handle, Observation
from git_continuity.policy import Policy
from git_continuity.repo import Repo

PROJECT = "git_continuity"
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = ["Handle", "Observation", "Policy", "Progress", "Repo", "Scheme", "VerifyContext", "hookimpl"]


@dataclass(frozen=True)
class Scheme:
    """A handle scheme a plugin verifies."""

    name: str  # the part before the colon, e.g. "tag"
    summary: str  # "verified when …", one line
    example: str  # a handle a person could type
    # Live schemes are local and cheap: status dereferences them on every read. Others
    # (network, commands) show their last evidence until `verify` runs again.
    live: bool
    # Network schemes ask a service (a forge, a CI server): `verify` dereferences them only
    # with --online and never touches the network otherwise.
    network: bool = False


class Progress(Protocol):
    """Where network verification reports how far it got (a line on a terminal)."""

    def start(self, total: int) -> None: ...

    def advance(self, label: str) -> None: ...

    def finish(self) -> None: ...


@dataclass
class VerifyContext:
    """Everything a dereference may consult."""

    repo: Repo
    now: datetime
    online: bool = False  # ask remotes and services themselves, not local copies
    timeout: float = 10.0  # seconds, per network request
    policy: Policy = field(default_factory=Policy)  # the repository's .continuity.yaml
    # A commit is being made from the index (the commit-msg hook): staged changes are part of it.
    committing: bool = False
    notes: list[str] = field(default_factory=list)  # warnings for the user, e.g. a stale fetch
    progress: Progress | None = None  # set by `verify` on a terminal
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def advance(self, handle: Handle) -> None:
        """Say one handle is done (network verifiers call it from their worker threads)."""
        if self.progress is not None:
            with self._lock:
                self.progress.advance(handle.text)

    def note(self, text: str) -> None:
        """A warning for the user, once (safe from worker threads)."""
        with self._lock:
            if text not in self.notes:
                self.notes.append(text)
