"""What a verifier plugin needs: the hookimpl marker and the values that cross the hooks.

A plugin is a module (or object) with functions marked ``@hookimpl`` whose names and
arguments match ``git_continuity.hookspecs``, registered under the entry-point group
``git_continuity``::

    [project.entry-points.git_continuity]
    myci = "myci_continuity"
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pluggy

from git_continuity.model import Handle, Observation
from git_continuity.policy import Policy
from git_continuity.repo import Repo

PROJECT = "git_continuity"
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = ["Handle", "Observation", "Policy", "Repo", "Scheme", "VerifyContext", "hookimpl"]


@dataclass(frozen=True)
class Scheme:
    """A handle scheme a plugin verifies."""

    name: str  # the part before the colon, e.g. "tag"
    summary: str  # "verified when …", one line
    example: str  # a handle a person could type
    # Live schemes are local and cheap: status dereferences them on every read. Others
    # (network, commands) show their last evidence until `verify` runs again.
    live: bool


@dataclass
class VerifyContext:
    """Everything a dereference may consult."""

    repo: Repo
    now: datetime
    online: bool = False  # ask remotes and services themselves, not local copies
    timeout: float = 10.0  # seconds, per network request
    policy: Policy = field(default_factory=Policy)  # the repository's .continuity.yaml
    notes: list[str] = field(default_factory=list)  # warnings for the user, e.g. a stale fetch
