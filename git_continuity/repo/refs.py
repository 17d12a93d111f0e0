"""Refs: reading them, moving them by compare-and-swap (retried when another writer won)
with a reflog reason, and the reflogs themselves."""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, TypeVar

import pygit2

from git_continuity import atomic
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
    return _names(repo, prefix, checked=True)


OWN = ("refs/continuity", "refs/notes/continuity")
# Where every worktree's refs are the same files of the common git folder: listed from those
# files, not by libgit2, which reads every ref there to list the few under one prefix (150 ms
# with 10,000 loose tags). Reftable repositories are not opened at all (libgit2 cannot).
SHARED = ("refs/heads/", "refs/remotes/", "refs/tags/", "refs/continuity", "refs/notes/", "refs/replace/")


def _names(repo: Repo, prefix: str, *, checked: bool) -> list[str]:
    """The names under prefix, sorted; ``checked``: a loose file outside our own prefixes
    that holds no ref is left out, as libgit2 leaves it out."""
    if not prefix.startswith(SHARED):
        return sorted(name for name in repo.git.references if name.startswith(prefix))
    loose = _loose(repo, prefix)
    if checked and not prefix.startswith(OWN):
        loose = [n for n in loose if _holds_a_ref(repo, n)]
    return sorted({*loose, *_packed_under(repo, prefix)})


def _loose(repo: Repo, prefix: str) -> list[str]:
    """The loose ref files whose names start with prefix (their folders only are read)."""
    top = prefix.rsplit("/", 1)[0]
    found: list[str] = []
    folders = [(str(repo.common_dir / top), top, f"{top}/".startswith(prefix))]
    while folders:
        folder, name, inside = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            full = f"{name}/{entry.name}"
            under = inside or full.startswith(prefix)
            if entry.is_dir(follow_symlinks=False):
                if under or prefix.startswith(f"{full}/"):
                    folders.append((entry.path, full, under))
            elif under and not entry.name.endswith(".lock"):
                found.append(full)
    return found


def _holds_a_ref(repo: Repo, name: str) -> bool:
    """What libgit2 lists: a loose file holding an object id or a symbolic ref."""
    try:
        text = (repo.common_dir / name).read_bytes()[:100].strip()
    except OSError:
        return False
    return text.startswith(b"ref: ") or (len(text) in (40, 64) and all(c in b"0123456789abcdef" for c in text))


def _packed_under(repo: Repo, prefix: str) -> list[str]:
    """The packed names under prefix. git writes packed-refs sorted (its header says so), so
    they are found as one run of lines: 10,000 packed tags are not gone through for a few
    branches."""
    data = _packed_refs(repo)
    head = data[: data.find(b"\n") + 1]
    at = data.find(b" " + prefix.encode()) if b" sorted" in head else len(head)
    found: list[str] = []
    pos = data.rfind(b"\n", 0, at) + 1 if at >= 0 else len(data)
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end].decode(errors="replace")
        pos = end + 1
        if line.startswith(("#", "^")):
            continue
        name = line.partition(" ")[2]
        if name.startswith(prefix):
            found.append(name)
        elif at != len(head):
            break  # sorted: the run of names under prefix is over
    return found


def _packed_refs(repo: Repo) -> bytes:
    """packed-refs as read last in this process, read again only when it changed."""
    path = repo.common_dir / "packed-refs"
    try:
        seen = path.stat()
        key = (str(path), seen.st_ino, seen.st_size, seen.st_mtime_ns)
        if _PACKED.get("key") != key:
            _PACKED.update(key=key, data=path.read_bytes())
    except OSError:
        return b""
    data: bytes = _PACKED["data"]
    return data


# The last packed-refs read, by its path and stat: every Repo of a process shares it, and a
# file that changed (packed again, or rewritten by a ref deleted) is read again.
_PACKED: dict[str, Any] = {}


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
    ``limit`` refs in all (a repository with thousands of tags keeps its branches): the
    names listed once, and only the first ``limit`` read."""
    found: dict[str, Oid] = {}
    for prefix in prefixes:
        if prefix == TAGS:
            found.update(list(tag_targets(repo, limit).items())[: limit - len(found)])
            continue
        found.update(_tips(repo, prefix, limit - len(found)))
    return found


def _tips(repo: Repo, prefix: str, limit: int) -> dict[str, Oid]:
    """Where the first ``limit`` refs under prefix point (by name). A name that is not UTF-8
    (git allows any bytes) is passed by: what holds these names is written as UTF-8 (a
    session's record, a handoff), and no reader could show it as git has it."""
    found: dict[str, Oid] = {}
    for name in _names(repo, prefix, checked=False):  # what holds no ref is skipped below
        if len(found) >= limit:
            break
        if not name.isascii() and not _utf8(name):
            continue
        try:
            target = ref_target(repo, name)
        except UserError:
            continue  # a loose file that holds no ref: libgit2 lists none there either
        if target is not None:
            found[name] = target
    return found


def _utf8(name: str) -> bool:
    try:
        name.encode()
    except UnicodeEncodeError:  # the bytes that were not UTF-8, kept as surrogates
        return False
    return True


TAGS = "refs/tags/"
RACY = 2_000_000_000  # ns: a folder changed this close to a listing may have changed unseen


def tag_targets(repo: Repo, limit: int | None = None) -> dict[str, Oid]:
    """The tags (the first ``limit`` by name; None: every one) and what they point at, kept
    under the cache folder, a file for each limit (a brief reads a few hundred, the fresh look
    every one), until their folders or packed-refs change: git writes a ref by renaming a file
    into its folder, which changes the folder's time, so with 10,000 loose tags a read stats a
    folder instead of listing 10,000 files. A listing made within RACY of a folder's change is not kept (a
    file system's clock is coarse: git's index has the same rule)."""
    path = repo.local_dir / "cache" / f"tags-{'all' if limit is None else limit}"
    try:
        kept = json.loads(path.read_text())
        if kept["seen"] == _seen(repo, kept["seen"]):
            return {name: Oid(oid) for name, oid in kept["tips"]}
    except (OSError, ValueError, KeyError, TypeError):
        pass
    made = time.time_ns()
    tips = _tips(repo, TAGS, sys.maxsize if limit is None else limit)
    seen = _seen(repo, None)
    if all(when < made - RACY for when in seen.values() if when is not None):
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
            atomic.write(path, json.dumps({"seen": seen, "tips": list(tips.items())}))
    return tips


def _seen(repo: Repo, folders: dict[str, int | None] | None) -> dict[str, int | None]:
    """The change time of packed-refs and of each folder under refs/tags (``folders``: those
    listed before, stat'ed again; None: every folder found now)."""
    names = list(folders) if folders is not None else ["packed-refs", *_tag_folders(repo)]
    found: dict[str, int | None] = {}
    for name in names:
        try:
            found[name] = os.stat(repo.common_dir / name).st_mtime_ns
        except OSError:
            found[name] = None
    return found


def _tag_folders(repo: Repo) -> list[str]:
    folders, todo = [], [TAGS.rstrip("/")]
    while todo:
        folder = todo.pop()
        folders.append(folder)
        with contextlib.suppress(OSError), os.scandir(repo.common_dir / folder) as entries:
            todo += [f"{folder}/{e.name}" for e in entries if e.is_dir(follow_symlinks=False)]
    return folders
