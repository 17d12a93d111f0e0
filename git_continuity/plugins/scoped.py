"""Handles scoped to a sibling repository (``@api:pushed:HEAD@origin/main``), dereferenced there.

``verify`` hands over what it meets with a scope: each sibling is located once
(siblings.locate), opened as a plain repository, and its handles go to their owners with that
repository in the context, so a verifier never knows it runs elsewhere, and what an
observation depended on (a ref, the work tree) is looked up there later. A ``cmd:`` there runs
only once approved there (its own trust store, ``git -C PATH continuity trust allow``). A
sibling not found here, or one the stream does not list, leaves its handles ``unknown`` with
the reason and the command that fixes it: never verified.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from git_continuity import store
from git_continuity.errors import UserError
from git_continuity.model import Handle, Observation
from git_continuity.plugins.values import Repository, VerifyContext
from git_continuity.repo import Repo
from git_continuity.store import siblings
from git_continuity.trust import approvals as trust


@dataclass(frozen=True)
class Where:
    """Where a scope's handles are dereferenced: the sibling's repository, or why not."""

    name: str
    repo: Repo | None
    reason: str | None  # set when repo is None
    label: str  # how the sibling is named in what is shown: "consumer (/src/consumer)"


def locate(snap: store.Snapshot, names: Iterable[str]) -> dict[str, Where]:
    """Each scope named, as this machine finds it (the stream's siblings read once)."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    listed = {s.name: s for s in siblings.read(snap)}
    paths = siblings.local_paths(snap.repo)
    found = {}
    for name in wanted:
        if name not in listed:
            known = ", ".join(sorted(listed)) or "none"
            why = (
                f"stream '{snap.stream}' has no sibling '{name}' (siblings: {known}); "
                f"add it: git continuity repo add {name} PATH"
            )
            found[name] = Where(name, None, why, name)
            continue
        at = siblings.locate(snap.repo, listed[name], paths)
        label = f"{name} ({at.path})" if at.path else name
        found[name] = Where(name, at.repo, None if at.repo else siblings.not_found(at), label)
    return found


def require(snap: store.Snapshot, name: str) -> Repo:
    """The sibling's repository, to resolve a handle scoped to it; exit 2 when the stream does
    not list it or it is not found here."""
    where = locate(snap, [name])[name]
    if where.repo is None:
        raise UserError(str(where.reason))
    return where.repo


def unknown(where: Where) -> Observation:
    return Observation("unknown", str(where.reason), "siblings", "-")


def dereference(
    handles: Iterable[Handle],
    where: Mapping[str, Where],
    context: VerifyContext,
    run: Callable[[Iterable[Handle], VerifyContext], dict[Handle, Observation]],
) -> dict[Handle, Observation]:
    """Each scoped handle dereferenced in its sibling by ``run`` (verify.dereference), with a
    context of that repository; unknown when the sibling is not found here or, for ``cmd:``,
    the command is not approved there."""
    results: dict[Handle, Observation] = {}
    by_scope: dict[str, list[Handle]] = {}
    for h in handles:
        by_scope.setdefault(str(h.scope), []).append(h)
    for name, wanted in by_scope.items():
        at = where[name]
        if at.repo is None:
            results.update({h: unknown(at) for h in wanted})
            continue
        ready = []
        for h in wanted:
            if h.scheme == "cmd" and not trust.is_approved(at.repo, h.body):
                # Never the command that approves it: evidence is read by agents.
                said = f"not approved in {at.label} (approving a command there is {trust.A_PERSONS_ACT})"
                results[h] = Observation("unknown", said, "cmd", "-")
            else:
                ready.append(h)
        if ready:
            # The commit being made (if any) is this repository's: the sibling is judged as it is.
            there = replace(context, repo=Repository(at.repo), committing=False, tree=None)
            observed = run([h.unscoped for h in ready], there)
            results.update({h: observed[h.unscoped] for h in ready})
    return results
