"""The values that cross the plugin hooks: schemes, the verify context, a read-only view of
the repository, and observations.

Plugins import these from ``git_continuity.api``, the stable interface; this module is where
they are defined, low enough for ``forge`` and ``verify`` to use them without importing the
public face.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

import pluggy

from git_continuity import repo as git
from git_continuity.model import Handle, Observation, Result
from git_continuity.store.policy import Policy

PROJECT = "git_continuity"
T = TypeVar("T")
hookimpl = pluggy.HookimplMarker(PROJECT)


TREE_FETCH_TIMEOUT = 20.0  # seconds to fetch a treeless clone's missing tree for a file: check


class Undecided(Exception):
    """The system asked could not tell: the message is the reason shown to the user."""


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


@dataclass(frozen=True)
class Verifier:
    """Who observes: a verifier's name and version, stamped on each observation it makes
    (and so on the evidence recorded from it)."""

    name: str
    version: str

    def _seen(
        self, result: Result, observed: str, depends_on: Mapping[str, str] | None, waiting: str | None = None
    ) -> Observation:
        return Observation(result, observed, self.name, self.version, dict(depends_on or {}), waiting)

    def verified(self, observed: str, depends_on: Mapping[str, str] | None = None) -> Observation:
        """The system answered and the claim holds; ``observed`` says what it answered.
        ``depends_on`` maps what the answer rested on (a ref, ``worktree``) to its value
        then: when one moves, the evidence turns stale."""
        return self._seen("verified", observed, depends_on)

    def contradicted(
        self, observed: str, depends_on: Mapping[str, str] | None = None, *, waiting: str | None = None
    ) -> Observation:
        """The system answered and the claim does not hold. ``waiting`` names who it waits
        on when that is someone else's move ("review": the PR is open, awaiting review):
        retrying cannot change it, so no attempt is counted."""
        return self._seen("contradicted", observed, depends_on, waiting)

    def unknown(
        self, reason: str, depends_on: Mapping[str, str] | None = None, *, waiting: str | None = None
    ) -> Observation:
        """No answer either way (offline, timeout, no token, not approved): ``reason`` says why.
        ``waiting`` names who it waits on when it is not decided yet ("CI": a pipeline still
        queued or running)."""
        return self._seen("unknown", reason, depends_on, waiting)


@dataclass(frozen=True, eq=False)
class Repository:
    """Read-only questions about the repository being verified. Object ids are full
    hexadecimal strings; nothing returned is a pygit2 object.

    One is made for each pass of dereferencing, and the questions many handles ask again
    (where a ref points, when it moved, where a tag leads) are answered once per pass: the
    refs as of that pass, and a status of 100,000 claims does not read one reflog 5,000
    times."""

    _repo: git.Repo = field(repr=False)
    _answers: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)
    # Remotes a fresh look still under way is hearing from, taken as fetched at these times: a
    # view made while the look waits, kept only where the look reached them all (sessions/orient.py).
    _heard: Mapping[str, datetime] = field(default_factory=dict, repr=False)

    def _once(self, question: str, key: str, ask: Callable[[], T]) -> T:
        try:
            known: T = self._answers[question, key]
            return known
        except KeyError:
            answer = self._answers[question, key] = ask()
            return answer

    @property
    def work_dir(self) -> Path | None:
        """The work tree's folder; None in a bare repository."""
        return self._repo.work_dir

    def resolve_commit(self, rev: str) -> str:
        """rev (a branch, tag, ``HEAD~2``, an abbreviated id) as a full commit id; raises
        UserError naming rev when it names no commit here."""
        return git.resolve_commit(self._repo, rev)

    def expand_ref(self, name: str) -> str | None:
        """A short ref name as git would expand it (``main`` -> ``refs/heads/main``)."""
        return git.expand_ref(self._repo, name)

    def ref_target(self, refname: str) -> str | None:
        """The object a full ref name points at, or None when there is no such ref."""
        return self._once("ref", refname, lambda: git.ref_target(self._repo, refname))

    def peel_to_commit(self, oid: str) -> str | None:
        """The commit an object (a commit, an annotated tag) leads to, or None."""
        return self._once("peel", oid, lambda: git.peel_to_commit(self._repo, git.Oid(oid)))

    def has_commit(self, oid: str) -> bool:
        return git.has_commit(self._repo, git.Oid(oid))

    def contains(self, tip: str, rev: str) -> bool:
        """Whether rev is tip or one of its ancestors."""
        return git.contains(self._repo, git.Oid(tip), git.Oid(rev))

    def is_shallow(self) -> bool:
        return self._once("shallow", "", lambda: git.is_shallow(self._repo))

    def cut_clone(self) -> str | None:
        """``shallow`` or ``single-branch`` when this clone holds only part of its remote's
        history, so a commit or tag absent here may be there; else None."""
        return self._once("cut", "", lambda: git.cut_clone(self._repo))

    def single_branch_remote(self) -> str | None:
        """The remote a single-branch clone fetches one branch of, or None."""
        return self._once("single", "", lambda: git.single_branch(self._repo))

    def head_commit(self) -> str | None:
        """HEAD's commit; None before the first commit."""
        return self._once("head", "", lambda: git.head_commit(self._repo))

    def tag_commit(self, name: str) -> str | None:
        """The commit tag ``name`` points at, or None when there is no such tag."""
        return self._once("tag", name, lambda: git.tag_commit(self._repo, name))

    def path_in_commit(self, commit: str, path: str) -> bool:
        """Whether commit's tree holds path. A treeless clone's missing trees are fetched
        through git first; raises Undecided, saying why, when they cannot be."""
        held = git.tree_here(self._repo, git.Oid(commit), path)
        if held is not None:
            return held
        failed = self._once("tree fetched", commit, lambda: self._fetch_tree(commit))
        if failed:
            raise Undecided(failed)
        return bool(git.tree_here(self._repo, git.Oid(commit), path))

    def _fetch_tree(self, commit: str) -> str | None:
        """Fetch commit's trees (not their files) from the promisor remote; why not, or None."""
        from git_continuity.syncing import transport

        holder = git.promisor(self._repo)
        assert holder is not None  # tree_here answers None only in a partial clone
        tree = git.commit_info(self._repo, git.Oid(commit)).tree
        why = f"the tree of {commit[:7]} is not in this partial clone (its filter {holder.filter} left it out)"
        try:
            transport.fetch_objects(self._repo, holder.remote, [tree], TREE_FETCH_TIMEOUT, filter="blob:none")
        except transport.TransportError as error:
            return f"{why} and git could not fetch it from {holder.remote}: {error}"
        return None if git.tree_entries(self._repo, tree) is not None else f"{why}, and {holder.remote} did not send it"

    def path_in_tree(self, tree: str, path: str) -> bool:
        """Whether a tree (e.g. the one a commit is being made of) holds path."""
        return git.entry_oid(self._repo, git.Oid(tree), path) is not None

    def commit_tree(self, commit: str) -> str:
        """The id of a commit's tree."""
        return git.commit_info(self._repo, git.Oid(commit)).tree

    def worktree_tree(self) -> str | None:
        """The id of the tree the work tree holds now (uncommitted changes included); None
        in a bare repository."""
        return git.worktree_tree(self._repo)

    def changes(self) -> git.Changes | None:
        """Uncommitted changes as path lists (staged, unstaged, untracked, conflicted); None
        in a bare repository."""
        return git.changes(self._repo)

    def remote_names(self) -> list[str]:
        return git.remote_names(self._repo)

    def ref_updated_at(self, refname: str) -> datetime | None:
        """When the ref last moved, from its reflog."""
        return self._once("moved", refname, lambda: git.ref_updated_at(self._repo, refname))

    def ref_last_move(self, refname: str) -> tuple[datetime, str] | None:
        """When the ref last moved here and why, from its reflog: ``(when, "update by push")``
        after a push, ``(when, "fetch: …")`` after a fetch."""
        return self._once("last move", refname, lambda: self._last_move(refname))

    def _last_move(self, refname: str) -> tuple[datetime, str] | None:
        """The reflog's last move, or the fresh look's fetch of the ref's remote when that is
        later: a fetch that brought nothing new leaves no reflog entry."""
        from git_continuity.syncing import tracking

        moved = git.ref_last_move(self._repo, refname)
        if not refname.startswith("refs/remotes/"):
            return moved
        rest = refname.removeprefix("refs/remotes/")
        looked = {**tracking.looked(self._repo), **self._heard}
        remote = max((r for r in looked if rest.startswith(r + "/")), key=len, default=None)
        if remote is not None and (moved is None or looked[remote] > moved[0]):
            return looked[remote], "fetch (the fresh look at a session's start)"
        return moved

    def refs(self, prefix: str) -> list[str]:
        """The full names of this repository's refs under ``prefix`` (``refs/remotes/origin/``)."""
        return git.list_refs(self._repo, prefix)

    def cloned_at(self) -> datetime | None:
        return self._once("cloned", "", lambda: git.cloned_at(self._repo))

    def config_value(self, key: str) -> str | None:
        """A git config value as git reads it (repository, then user, then system)."""
        return git.config_value(self._repo, key)

    def note_records(self, commit: str) -> list[dict[str, Any]]:
        """The JSON records on the commit's continuity note (``refs/notes/continuity``),
        e.g. ``kind: ci`` results; a hand-written line is skipped."""
        from git_continuity.store import notes as commit_notes

        return commit_notes.records(self._repo, git.Oid(commit))

    def remote_ref(self, remote: str, refname: str, timeout: float) -> str | None:
        """Where refname points on the remote right now, asked through the user's git (its
        SSH agent, credentials and proxies); None when the remote lacks it. Raises
        Undecided with git's own words when the remote cannot be asked."""
        from git_continuity.syncing import transport

        try:
            return transport.remote_ref(self._repo, remote, refname, timeout)
        except transport.TransportError as error:
            raise Undecided(str(error)) from None

    def remote_refs(self, remote: str, patterns: list[str], timeout: float) -> dict[str, str]:
        """The remote's refs matching the patterns (``refs/heads/*``), name -> object id,
        asked right now through the user's git. Raises Undecided as ``remote_ref`` does."""
        from git_continuity.syncing import transport

        try:
            return transport.list_refs(self._repo, remote, patterns, timeout)
        except transport.TransportError as error:
            raise Undecided(str(error)) from None

    def command_approved(self, command: str) -> bool:
        """Whether this machine's user approved running exactly this command here
        (``git continuity trust allow``): a command from shared state is data until then."""
        from git_continuity.trust import approvals as trust

        return trust.is_approved(self._repo, command)


def inside(repository: Repository) -> git.Repo:
    """The repository door's own handle, for this package's code only."""
    return repository._repo


class Progress(Protocol):
    """Where network verification reports how far it got (a line on a terminal)."""

    def start(self, total: int) -> None: ...

    def advance(self, label: str) -> None: ...

    def finish(self) -> None: ...


@dataclass
class VerifyContext:
    """Everything a dereference may consult."""

    repo: Repository
    now: datetime
    online: bool = False  # ask remotes and services themselves, not local copies
    timeout: float = 10.0  # seconds, per network request
    policy: Policy = field(default_factory=Policy)  # the repository's .continuity.yaml
    # A commit is being made from the index (the commit-msg hook): staged changes are part of it,
    # and ``tree`` is the tree git is about to commit (GIT_INDEX_FILE's: commit -a, commit
    # PATHS and --amend alike). Checks of "the tree" judge it instead of HEAD's or the work tree's.
    committing: bool = False
    tree: str | None = None
    # The branch and commit that stand for HEAD (name, full id): a done thread's own branch,
    # where its work is, when it was closed on another branch than the one checked out here.
    head: tuple[str, str] | None = None
    progress: Progress | None = None  # set by `verify` on a terminal
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def advance(self, handle: Handle) -> None:
        """Say one handle is done (network verifiers call it from their worker threads)."""
        if self.progress is not None:
            with self._lock:
                self.progress.advance(handle.text)
