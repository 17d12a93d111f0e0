"""Refs: reading them, moving them by compare-and-swap (retried when another writer won)
with a reflog reason, and the reflogs themselves."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TypeVar

import pygit2

from git_continuity.errors import UserError
from git_continuity.repo import locks
from git_continuity.repo.base import Oid, RefMoved, Repo

T = TypeVar("T")


def ref_target(repo: Repo, refname: str) -> Oid | None:
    """The object a ref points at (symbolic refs followed), or None when it does not exist.
    A ref file that holds no object id is refused, naming it: it is not a missing ref."""
    try:
        ref = repo.git.references.get(refname)
    except (pygit2.InvalidSpecError, ValueError):
        return None
    except pygit2.GitError as error:
        raise UserError(
            f"{refname} cannot be read ({error}); nothing was read or written.\n"
            "git continuity doctor names the state it last pointed at, and doctor --fix puts it back there"
        ) from None
    if ref is None:
        return None
    try:
        return Oid(str(ref.resolve().target))
    except (KeyError, pygit2.GitError):
        return None


def list_refs(repo: Repo, prefix: str) -> list[str]:
    """The refs whose names start with prefix. Under git-continuity's own prefixes a loose ref
    file that holds garbage (libgit2 leaves it out of its list) is listed too, so that
    reading it names it (ref_target) instead of taking the stream for missing."""
    names = {name for name in repo.git.references if name.startswith(prefix)}
    if prefix.startswith(OWN):
        names |= _unlisted(repo, prefix, names)
    return sorted(names)


OWN = ("refs/continuity", "refs/notes/continuity")


def _unlisted(repo: Repo, prefix: str, listed: set[str]) -> set[str]:
    base = repo.common_dir / prefix
    files = [p for p in base.rglob("*") if p.is_file()] if base.is_dir() else []
    files += [base] if base.is_file() else []
    found = set()
    for path in files:
        name = path.relative_to(repo.common_dir).as_posix()
        if name.startswith(prefix) and not name.endswith(".lock") and name not in listed:
            found.add(name)
    return found


def expand_ref(repo: Repo, name: str) -> str | None:
    """The full name git would pick for a short ref name (``main`` -> ``refs/heads/main``)."""
    if name.startswith("-"):
        return None
    try:
        return str(repo.git.lookup_reference_dwim(name).name)
    except (KeyError, pygit2.InvalidSpecError, pygit2.GitError, ValueError):
        return None


def ref_updated_at(repo: Repo, refname: str) -> datetime | None:
    """When the ref last moved here, from its reflog (remote-tracking refs keep one)."""
    try:
        ref = repo.git.references.get(refname)
        if ref is None:
            return None
        for entry in ref.log():
            when = entry.committer.time
            return datetime.fromtimestamp(when, timezone.utc)
    except (KeyError, pygit2.GitError):
        return None
    return None


def ref_last_move(repo: Repo, refname: str) -> tuple[datetime, str] | None:
    """When the ref last moved here and the reflog's reason ("update by push", "fetch: …")."""
    try:
        ref = repo.git.references.get(refname)
        entry = next(iter(ref.log()), None) if ref is not None else None
    except (KeyError, pygit2.GitError, pygit2.InvalidSpecError, ValueError):
        return None
    if entry is None:
        return None
    return datetime.fromtimestamp(entry.committer.time, timezone.utc), entry.message or ""


def cloned_at(repo: Repo) -> datetime | None:
    """When this repository was cloned, from the first entry of HEAD's reflog ("clone: from
    …"). git clone leaves remote-tracking refs without a reflog of their own, so this is how
    old they are until the first fetch."""
    try:
        entries = list(repo.git.references["HEAD"].log())
    except (KeyError, pygit2.GitError):
        return None
    if entries and (entries[-1].message or "").startswith("clone:"):
        return datetime.fromtimestamp(entries[-1].committer.time, timezone.utc)
    return None


def compare_and_swap(repo: Repo, refname: str, new: Oid, old: Oid | None, reason: str) -> None:
    """Point ``refname`` at ``new`` only if it is still at ``old`` (None: must not exist).

    Raises RefMoved when another writer got there first; the caller re-reads and retries.
    The reason lands in the reflog, which init creates for state refs.
    """
    try:
        with repo.git.transaction() as txn:
            txn.lock_ref(refname)
            with locks.holding(repo, refname):
                if ref_target(repo, refname) != old:
                    raise RefMoved(refname)
                txn.set_target(refname, pygit2.Oid(hex=new), message=reason)
    except pygit2.GitError as error:
        if str(error).startswith("failed to create locked file") and "File exists" not in str(error):
            # The system refused to make the lock file (a read-only file system, a folder's
            # permissions): libgit2's message names it and the reason; retrying never helps.
            # "File exists" is another writer's lock, taken at that moment: below.
            raise UserError(str(error)) from None
        # Another process holds the lock file: the same situation as a moved ref, unless
        # its writer is gone (then retrying never helps).
        if "lock" in str(error).lower():
            lock = locks.judge(repo, refname)
            if lock is not None and lock.gone:
                raise LockLeft(lock) from error
            raise RefMoved(refname) from error
        raise


class LockLeft(Exception):
    """A ref's lock file was left by a writer that is gone (locks.judge)."""

    def __init__(self, lock: locks.Lock) -> None:
        super().__init__(lock.describe())
        self.lock = lock


def require_unlocked(repo: Repo, refname: str, gave_up: str) -> None:
    """Refuse at once when refname's lock was left by a writer that is gone (before a command
    writes anything else that this ref's write should follow)."""
    lock = locks.judge(repo, refname)
    if lock is not None and lock.gone:
        raise _locked(lock, gave_up)


def _locked(lock: locks.Lock, gave_up: str) -> UserError:
    if lock.gone:
        gave_up = gave_up.removesuffix(" Try again.")
        fix = "Clear it with: git continuity doctor --fix"
        return UserError(f"{lock.ref} is locked: {lock.describe()}; {gave_up}\n{fix}")
    return UserError(f"{lock.ref} is locked: {lock.describe()}; {gave_up}")


MAX_TRIES = 50  # lost compare-and-swaps of one ref before giving up


def update_ref(repo: Repo, refname: str, step: Callable[[Oid | None], T], *, gave_up: str, tries: int = MAX_TRIES) -> T:
    """Move a ref from where it is now, retrying when another writer moved it first.

    ``step`` gets the ref's current target (None: it does not exist yet), builds on it and
    moves the ref from exactly there (compare_and_swap with its reflog reason, for
    state and notes alike), or leaves it alone; its result is returned. When it raises RefMoved, the
    ref is read again and ``step`` called again on the new target, after a short random
    pause that grows with each try, at most ``tries`` times; then a UserError names the ref
    and ends with ``gave_up`` (what was not done). A lock whose writer is gone ends the
    retries at once, with the command that clears it.
    """
    for attempt in range(tries):
        try:
            return step(ref_target(repo, refname))
        except RefMoved:
            time.sleep(random.uniform(0.001, 0.01 * (attempt + 1)))
        except LockLeft as left:
            raise _locked(left.lock, gave_up) from None
    lock = locks.judge(repo, refname)
    if lock is not None:
        raise _locked(lock, gave_up)
    raise UserError(f"{refname} kept moving under {tries} tries; {gave_up}")


def create_reflog(repo: Repo, refname: str) -> None:
    """Make git and libgit2 keep a reflog for a ref outside refs/heads (like --create-reflog)."""
    log = repo.common_dir / "logs" / refname
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch(exist_ok=True)


def set_ref(repo: Repo, refname: str, target: Oid, reason: str) -> None:
    """Point a ref at target whatever it was (tracking refs mirror a remote; nothing of the
    user's is ever moved this way)."""
    repo.git.create_reference_direct(refname, pygit2.Oid(hex=target), True, message=reason)


def remove_broken_ref(repo: Repo, refname: str) -> bool:
    """Remove a loose ref file that holds no object id (neither git nor libgit2 moves such a
    ref), by compare-and-swap: under the ref's lock, and only if the file still holds the
    bytes judged broken (RefMoved otherwise). Its reflog stays. False when the ref reads."""
    path = repo.common_dir / refname
    if not path.is_file():
        return False
    held = path.read_bytes()
    try:
        ref_target(repo, refname)
        return False
    except UserError:
        pass
    try:
        with repo.git.transaction() as txn:
            txn.lock_ref(refname)
            if not path.is_file() or path.read_bytes() != held:
                raise RefMoved(refname)
            txn.remove(refname)
    except pygit2.GitError as error:  # another writer holds its lock
        raise RefMoved(refname) from error
    return True


def delete_ref(repo: Repo, refname: str) -> None:
    if repo.git.references.get(refname) is not None:
        repo.git.references.delete(refname)


def current_branch(repo: Repo) -> str | None:
    """The short name of the checked-out branch, or None (detached, bare)."""
    try:
        head = repo.git.references.get("HEAD")
        target = head.target if head is not None else None
    except (KeyError, pygit2.GitError):
        return None
    if isinstance(target, str) and target.startswith("refs/heads/"):
        return target.removeprefix("refs/heads/")
    return None


def head_reflog(repo: Repo, count: int) -> list[tuple[Oid, Oid, str]]:
    """The latest HEAD reflog entries as (old, new, message), newest first."""
    try:
        entries = list(repo.git.references["HEAD"].log())[:count]
    except (KeyError, pygit2.GitError):
        return []
    return [(Oid(str(e.oid_old)), Oid(str(e.oid_new)), e.message or "") for e in entries]


def head_reflog_since(repo: Repo, since: datetime) -> list[tuple[Oid, Oid, str]]:
    """HEAD's reflog entries written here since ``since`` as (old, new, message), newest first:
    what this work tree did (a commit, a pull, a reset), as git recorded it."""
    try:
        entries = list(repo.git.references["HEAD"].log())
    except (KeyError, pygit2.GitError):
        return []
    cut = since.timestamp()
    return [
        (Oid(str(e.oid_old)), Oid(str(e.oid_new)), e.message or "") for e in entries if e.committer.time >= int(cut)
    ]


def every_head_reflog_since(repo: Repo, since: datetime) -> list[tuple[Oid, Oid, str]]:
    """The HEAD reflog entries of every work tree of the clone since ``since`` (old, new,
    message): what a session that works across worktrees did, as git recorded it there. Read
    as git writes them (``<old> <new> <who> <time> <zone>\t<message>``)."""
    folders = [repo.common_dir]
    with contextlib.suppress(OSError):
        folders += sorted(p for p in (repo.common_dir / "worktrees").iterdir() if p.is_dir())
    cut = since.timestamp()
    found = []
    for folder in folders:
        try:
            lines = (folder / "logs" / "HEAD").read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            head, _, message = line.partition("\t")
            words = head.split()
            if len(words) >= 4 and words[-2].isdigit() and int(words[-2]) >= int(cut):
                found.append((Oid(words[0]), Oid(words[1]), message))
    return found


def ref_tips(repo: Repo, prefixes: Sequence[str], limit: int) -> dict[str, Oid]:
    """Where the refs under each prefix point, the prefixes in order of importance, at most
    ``limit`` refs in all (a repository with thousands of tags keeps its branches)."""
    names = [n for n in repo.git.references if isinstance(n, str)]
    found: dict[str, Oid] = {}
    for prefix in prefixes:
        for name in sorted(n for n in names if n.startswith(prefix)):
            if len(found) >= limit:
                return found
            target = ref_target(repo, name)
            if target is not None:
                found[name] = target
    return found
