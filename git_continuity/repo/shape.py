"""What this clone chose not to hold: a partial clone's filtered objects, a shallow clone's cut
history, a single-branch clone's other branches. Absence there is not contradiction, and an
object a filter left out is not a malformed state (#35).

libgit2 cannot fetch a partial clone's missing objects; git can, so what is missing is asked
of git (``rev-list --missing=print``), and syncing/transport.py fetches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pygit2

from git_continuity import atomic
from git_continuity.repo.base import Oid, Repo, config_value, config_values, remote_names
from git_continuity.repo.history import is_shallow, path_in_commit


@dataclass(frozen=True)
class Promisor:
    """The remote a partial clone fetches left-out objects from, and its filter."""

    remote: str
    filter: str  # blob:none, tree:0, ... as the clone was made


def promisor(repo: Repo) -> Promisor | None:
    """The partial clone's promisor remote (git sets ``remote.<name>.promisor`` and
    ``extensions.partialClone``), or None in a clone that holds every object."""
    for name in remote_names(repo):
        if (config_value(repo, f"remote.{name}.promisor") or "").lower() == "true":
            return Promisor(name, config_value(repo, f"remote.{name}.partialclonefilter") or "a filter")
    named = config_value(repo, "extensions.partialClone")
    return Promisor(named, config_value(repo, f"remote.{named}.partialclonefilter") or "a filter") if named else None


def _complete_file(repo: Repo) -> Path:
    return repo.local_dir / "cache" / "complete"


def _known_complete(repo: Repo) -> list[str]:
    try:
        listed = _complete_file(repo).read_text().split()
    except OSError:
        return []
    return [oid for oid in listed if len(oid) == 40 and repo.git.get(oid) is not None]


def missing_objects(repo: Repo, tips: list[Oid]) -> list[Oid]:
    """The objects below these commits that this clone lacks (git's own walk, which never
    fetches), not counting what was found whole before (``mark_complete``)."""
    if not tips:
        return []
    from git_continuity import gitcli  # a process runner: a write that fetches nothing loads none

    done = _known_complete(repo)
    listed = gitcli.run(
        "rev-list",
        "--objects",
        "--missing=print",
        *sorted(set(tips)),
        *(["--not", *done] if done else []),
        git_dir=repo.common_dir,
    )
    found = [Oid(line[1:].strip()) for line in listed.stdout.splitlines() if line.startswith("?")]
    if listed.returncode != 0 and not found:
        return [Oid(tip) for tip in tips if repo.git.get(tip) is None]
    return found


def mark_complete(repo: Repo, tips: list[Oid]) -> None:
    """Remember commits whose every object is here, so the next walk stops at them."""
    kept = list(dict.fromkeys([*tips, *_known_complete(repo)]))[:64]
    try:
        _complete_file(repo).parent.mkdir(parents=True, exist_ok=True)
        atomic.write(_complete_file(repo), "".join(f"{oid}\n" for oid in kept).encode())
    except OSError:
        pass  # only speed is lost: the next walk goes further down


def tree_here(repo: Repo, commit: Oid, path: str) -> bool | None:
    """Whether commit's tree holds path; None when the trees to answer are not in this clone
    (a treeless clone fetched only those it checked out)."""
    try:
        return path_in_commit(repo, commit, path)
    except pygit2.GitError:
        if promisor(repo) is None:
            raise  # a full clone that cannot read a tree is damaged: not this module's case
        return None


def single_branch(repo: Repo) -> str | None:
    """The remote whose fetch refspecs name single branches and no glob (``git clone
    --single-branch``, and every ``--depth`` clone), or None."""
    for name in remote_names(repo):
        specs = config_values(repo, f"remote.{name}.fetch")
        if specs and not any("*" in spec for spec in specs):
            return name
    return None


def cut_clone(repo: Repo) -> str | None:
    """``shallow`` or ``single-branch`` when this clone cannot see all of its remote's history
    (an absent commit or tag may be there), else None."""
    if is_shallow(repo):
        return "shallow"
    return "single-branch" if single_branch(repo) else None
