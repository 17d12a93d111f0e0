"""The one door to the repository: every pygit2 call lives here and returns plain values."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import NewType, TypeVar

import pygit2

from git_continuity import atomic, session
from git_continuity.errors import UserError

Oid = NewType("Oid", str)  # a full hexadecimal object id
T = TypeVar("T")


class RefMoved(Exception):
    """A compare-and-swap lost: the ref was not at the expected commit."""


@dataclass
class Repo:
    """An open repository (it owns the libgit2 handle) and where its parts live."""

    git: pygit2.Repository
    common_dir: Path  # the .git folder shared by every worktree
    work_dir: Path | None  # None in a bare repository
    _ancestors: dict[Oid, frozenset[bytes]] = field(default_factory=dict)
    _remotes: list[str] | None = None

    @property
    def local_dir(self) -> Path:
        """``.git/continuity/``: caches and the trust store, never synced."""
        return self.common_dir / "continuity"


def worktree_git_dir(repo: Repo) -> Path:
    """This work tree's own git folder: the common one for the main checkout,
    ``.git/worktrees/<name>/`` for a linked worktree (where its HEAD and index live)."""
    return Path(repo.git.path)


def open_repo(start: str | Path | None = None) -> Repo:
    """Open the repository git would use here (honours GIT_DIR as hooks set it)."""
    where = Path(start) if start is not None else Path.cwd()
    git_dir = os.environ.get("GIT_DIR") if start is None else None
    path = git_dir or pygit2.discover_repository(str(where))
    if not path:
        raise UserError(
            f"not a git repository: {where}\nRun git continuity inside a repository (or create one with git init)."
        )
    try:
        git = pygit2.Repository(path)
    except pygit2.GitError as error:
        if "sha256" in str(error):
            raise UserError(f"{path} uses SHA-256 object ids, which git-continuity does not support yet.") from None
        raise UserError(f"cannot open the repository at {path}: {error}") from None
    here = Path(git.path)
    common = here / "commondir"
    common_dir = (here / common.read_text().strip()).resolve() if common.exists() else here
    work_dir = Path(git.workdir) if git.workdir else None
    return Repo(git, common_dir.resolve(), work_dir)


# -- identity -------------------------------------------------------------------------------


def _config(repo: Repo, key: str) -> str | None:
    """A config value as git would read it. git reads $GIT_CONFIG_GLOBAL instead of
    ~/.gitconfig when it is set; libgit2 does not know that variable, so the repository's
    own levels are asked first and then that file."""
    global_file = os.environ.get("GIT_CONFIG_GLOBAL")
    try:
        if not global_file:
            value = repo.git.config[key]
            return str(value) if value else None
        for entry in repo.git.config:
            if entry.name == key and entry.level >= pygit2.enums.ConfigLevel.LOCAL and entry.value:
                return str(entry.value)
        if Path(global_file).is_file():
            value = pygit2.Config(global_file)[key]
            return str(value) if value else None
    except (KeyError, pygit2.GitError):
        return None
    return None


def _ident(repo: Repo) -> tuple[str, str]:
    """Who is writing, as git would say for an author: GIT_AUTHOR_* first, then config,
    then the login and host (state must never fail to write because user.email is unset:
    hooks run in fresh CI clones)."""
    user = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
    name = os.environ.get("GIT_AUTHOR_NAME") or _config(repo, "user.name") or user
    email = os.environ.get("GIT_AUTHOR_EMAIL") or _config(repo, "user.email") or f"{user}@{hostname()}"
    return name, email


def config_value(repo: Repo, key: str) -> str | None:
    return _config(repo, key)


def identity(repo: Repo) -> str:
    """``Name <email>``, recorded as who made each entry."""
    name, email = _ident(repo)
    return f"{name} <{email}>"


def hostname() -> str:
    return session.hostname()


def _signature(repo: Repo) -> pygit2.Signature:
    name, email = _ident(repo)
    return pygit2.Signature(name, email)


# -- refs -----------------------------------------------------------------------------------


def ref_target(repo: Repo, refname: str) -> Oid | None:
    """The object a ref points at (symbolic refs followed), or None when it does not exist."""
    try:
        ref = repo.git.references.get(refname)
    except (pygit2.InvalidSpecError, ValueError):
        return None
    if ref is None:
        return None
    try:
        return Oid(str(ref.resolve().target))
    except (KeyError, pygit2.GitError):
        return None


def list_refs(repo: Repo, prefix: str) -> list[str]:
    return sorted(name for name in repo.git.references if name.startswith(prefix))


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
            if ref_target(repo, refname) != old:
                raise RefMoved(refname)
            txn.set_target(refname, pygit2.Oid(hex=new), message=reason)
    except pygit2.GitError as error:
        # Another process holds the lock file: the same situation as a moved ref.
        if "lock" in str(error).lower():
            raise RefMoved(refname) from error
        raise


MAX_TRIES = 50  # lost compare-and-swaps of one ref before giving up


def update_ref(repo: Repo, refname: str, step: Callable[[Oid | None], T], *, gave_up: str, tries: int = MAX_TRIES) -> T:
    """Move a ref from where it is now, retrying when another writer moved it first.

    ``step`` gets the ref's current target (None: it does not exist yet), builds on it and
    moves the ref from exactly there (compare_and_swap with its reflog reason, or
    write_note), or leaves it alone; its result is returned. When it raises RefMoved, the
    ref is read again and ``step`` called again on the new target, after a short random
    pause that grows with each try, at most ``tries`` times; then a UserError names the ref
    and ends with ``gave_up`` (what was not done).
    """
    for attempt in range(tries):
        try:
            return step(ref_target(repo, refname))
        except RefMoved:
            time.sleep(random.uniform(0.001, 0.01 * (attempt + 1)))
    raise UserError(f"{refname} kept moving under {tries} tries; {gave_up}")


def create_reflog(repo: Repo, refname: str) -> None:
    """Make git and libgit2 keep a reflog for a ref outside refs/heads (like --create-reflog)."""
    log = repo.common_dir / "logs" / refname
    log.parent.mkdir(parents=True, exist_ok=True)
    log.touch(exist_ok=True)


# -- revisions and history ------------------------------------------------------------------


def resolve_commit(repo: Repo, rev: str) -> Oid:
    """A revision as a full commit id, or a UserError naming the revision."""
    if rev.startswith("-"):
        raise UserError(f"revision {rev!r} starts with '-'; name a commit, branch or tag")
    if not rev:
        raise UserError("empty revision; name a commit, branch or tag")
    try:
        obj = repo.git.revparse_single(rev)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        if rev == "HEAD" and repo.git.head_is_unborn:
            raise UserError("HEAD does not resolve: the repository has no commits yet") from None
        raise UserError(f"revision {rev!r} does not resolve to a commit here") from None
    return Oid(str(commit.id))


def has_commit(repo: Repo, oid: Oid) -> bool:
    try:
        obj = repo.git.get(oid)
    except (ValueError, pygit2.GitError):
        return False
    return obj is not None and obj.type == pygit2.GIT_OBJECT_COMMIT


def peel_to_commit(repo: Repo, oid: Oid) -> Oid | None:
    try:
        return Oid(str(repo.git[oid].peel(pygit2.Commit).id))
    except (KeyError, ValueError, pygit2.GitError):
        return None


ANCESTOR_CACHE_MIN = 2000  # walks shorter than this are cheaper than a cache file
ANCESTOR_CACHE_KEEP = 16


def ancestors(repo: Repo, tip: Oid) -> frozenset[bytes]:
    """Every commit reachable from tip, tip included, as raw 20-byte ids.

    Many claims against one ref cost one walk (a descendant_of per claim is ~80 ms on 10k
    commits). A long walk (~50 ms per 10k commits) is also kept on disk under
    ``.git/continuity/cache/`` keyed by the tip: history below a commit never changes.
    """
    found = repo._ancestors.get(tip)
    if found is not None:
        return found
    cache = repo.local_dir / "cache" / "ancestors" / tip
    try:
        raw = cache.read_bytes()
        found = frozenset(raw[i : i + 20] for i in range(0, len(raw), 20))
    except OSError:
        walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.NONE)
        found = frozenset(c.id.raw for c in walker)
        if len(found) >= ANCESTOR_CACHE_MIN:
            _keep_ancestors(cache, found)
    repo._ancestors[tip] = found
    return found


def _keep_ancestors(cache: Path, found: frozenset[bytes]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        old = sorted(cache.parent.iterdir(), key=lambda p: p.stat().st_mtime)
        for stale in old[: max(0, len(old) - ANCESTOR_CACHE_KEEP + 1)]:
            stale.unlink(missing_ok=True)
        atomic.write(cache, b"".join(found))
    except OSError:
        pass  # a cache that cannot be written only costs speed


def contains(repo: Repo, tip: Oid, rev: Oid) -> bool:
    """Whether rev is tip or one of its ancestors."""
    return bytes.fromhex(rev) in ancestors(repo, tip)


def is_shallow(repo: Repo) -> bool:
    return bool(repo.git.is_shallow)


def head_commit(repo: Repo) -> Oid | None:
    if repo.git.head_is_unborn:
        return None
    try:
        return Oid(str(repo.git.head.peel(pygit2.Commit).id))
    except (pygit2.GitError, KeyError):
        return None


def path_in_commit(repo: Repo, commit: Oid, path: str) -> bool:
    try:
        repo.git[commit].peel(pygit2.Commit).tree[path]
    except KeyError:
        return False
    return True


def tag_commit(repo: Repo, name: str) -> Oid | None:
    target = ref_target(repo, f"refs/tags/{name}")
    return peel_to_commit(repo, target) if target else None


def remote_names(repo: Repo) -> list[str]:
    if repo._remotes is None:
        repo._remotes = sorted(name for name in repo.git.remotes.names() if name)
    return repo._remotes


def changed_tracked_paths(repo: Repo) -> list[str]:
    """Tracked paths with staged or unstaged changes (untracked files left out)."""
    flags = repo.git.status(untracked_files="no", ignored=False)
    return sorted(path for path, flag in flags.items() if flag != pygit2.GIT_STATUS_CURRENT)


@dataclass(frozen=True)
class CommitInfo:
    oid: Oid
    parents: tuple[Oid, ...]
    message: str
    author: str
    time: datetime
    tree: Oid
    authored: datetime


def commit_info(repo: Repo, oid: Oid) -> CommitInfo:
    c = repo.git[oid].peel(pygit2.Commit)
    return CommitInfo(
        Oid(str(c.id)),
        tuple(Oid(str(p)) for p in c.parent_ids),
        c.message,
        f"{c.author.name} <{c.author.email}>",
        datetime.fromtimestamp(c.commit_time, timezone.utc),
        Oid(str(c.tree_id)),
        datetime.fromtimestamp(c.author.time, timezone.utc),
    )


def first_parent_log(repo: Repo, tip: Oid) -> Iterator[CommitInfo]:
    oid: Oid | None = tip
    while oid is not None:
        info = commit_info(repo, oid)
        yield info
        oid = info.parents[0] if info.parents else None


# -- trees and blobs ------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeEntry:
    name: str
    oid: Oid
    is_tree: bool


def tree_entries(repo: Repo, tree: Oid, path: str = "") -> list[TreeEntry] | None:
    """The entries of the folder at path inside tree, or None when there is no such folder."""
    try:
        obj = repo.git[tree]
        if path:
            obj = repo.git[obj.peel(pygit2.Tree)[path].id]
    except KeyError:
        return None
    if not isinstance(obj, pygit2.Tree):
        return None
    return [TreeEntry(e.name or "", Oid(str(e.id)), e.filemode == pygit2.GIT_FILEMODE_TREE) for e in obj]


def tree_size(repo: Repo, tree: Oid) -> int:
    return len(repo.git[tree].peel(pygit2.Tree))


def entry_oid(repo: Repo, tree: Oid, path: str) -> Oid | None:
    try:
        return Oid(str(repo.git[tree].peel(pygit2.Tree)[path].id))
    except KeyError:
        return None


def blob(repo: Repo, oid: Oid) -> bytes:
    # Straight from the object database: half the cost of building a Blob object.
    data: bytes = repo.git.odb.read(pygit2.Oid(hex=oid))[1]
    return data


def write_blob(repo: Repo, data: bytes) -> Oid:
    return Oid(str(repo.git.create_blob(data)))


def write_tree(repo: Repo, base: Oid | None, changes: Mapping[str, bytes | None]) -> Oid:
    """A new tree: ``base`` with each path set to its bytes (None removes it).

    Built with TreeBuilder folder by folder, never through an index or the work tree.
    """
    split = {tuple(path.split("/")): data for path, data in changes.items()}
    base_tree = repo.git[base].peel(pygit2.Tree) if base else None
    oid = _write_folder(repo.git, base_tree, split)
    return Oid(str(oid if oid is not None else repo.git.TreeBuilder().write()))


def _write_folder(
    git: pygit2.Repository,
    base: pygit2.Tree | None,
    changes: Mapping[tuple[str, ...], bytes | None],
) -> pygit2.Oid | None:
    builder = git.TreeBuilder(base) if base is not None else git.TreeBuilder()
    nested: dict[str, dict[tuple[str, ...], bytes | None]] = {}
    for parts, data in changes.items():
        if len(parts) > 1:
            nested.setdefault(parts[0], {})[parts[1:]] = data
        elif data is None:
            if builder.get(parts[0]) is not None:
                builder.remove(parts[0])
        else:
            builder.insert(parts[0], git.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    for name, sub in nested.items():
        sub_base = None
        if base is not None and name in base:
            entry = base[name]
            if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                sub_base = git[entry.id].peel(pygit2.Tree)
        oid = _write_folder(git, sub_base, sub)
        if oid is None:
            if builder.get(name) is not None:
                builder.remove(name)
        else:
            builder.insert(name, oid, pygit2.GIT_FILEMODE_TREE)
    if len(builder) == 0:
        return None
    written: pygit2.Oid = builder.write()
    return written


def write_commit(repo: Repo, tree: Oid, parents: list[Oid], message: str) -> Oid:
    """A commit object not yet on any ref (compare_and_swap puts it there)."""
    sig = _signature(repo)
    oid = repo.git.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree), [pygit2.Oid(hex=p) for p in parents])
    return Oid(str(oid))


# -- notes ----------------------------------------------------------------------------------


def read_note(repo: Repo, notes_ref: str, commit: Oid) -> str | None:
    """The note on commit under notes_ref (either fan-out layout), or None."""
    try:
        return str(repo.git.lookup_note(commit, notes_ref).message)
    except (KeyError, pygit2.GitError):
        return None


def write_note(repo: Repo, notes_ref: str, commit: Oid, text: str, expected: Oid | None) -> None:
    """Set the note on commit, only if notes_ref is still at ``expected`` (RefMoved if not)."""
    if ref_target(repo, notes_ref) != expected:
        raise RefMoved(notes_ref)
    sig = _signature(repo)
    try:
        # libgit2 commits the notes tree with the ref's tip as parent and refuses when the
        # tip moved meanwhile: the same compare-and-swap as the state ref.
        repo.git.create_note(text, sig, sig, commit, notes_ref, True)
    except pygit2.GitError as error:
        if "tip" in str(error) or "lock" in str(error).lower():
            raise RefMoved(notes_ref) from error
        raise


# -- sync: tracking refs, config, history shape, tree building ------------------------------


def set_ref(repo: Repo, refname: str, target: Oid, reason: str) -> None:
    """Point a ref at target whatever it was (tracking refs mirror a remote; nothing of the
    user's is ever moved this way)."""
    repo.git.create_reference_direct(refname, pygit2.Oid(hex=target), True, message=reason)


def delete_ref(repo: Repo, refname: str) -> None:
    if repo.git.references.get(refname) is not None:
        repo.git.references.delete(refname)


def is_ancestor(repo: Repo, ancestor: Oid, tip: Oid) -> bool:
    """Whether ancestor is tip or one of its ancestors (descendant_of is false for a == b)."""
    return ancestor == tip or bool(repo.git.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=ancestor)))


def ahead_behind(repo: Repo, local: Oid, upstream: Oid) -> tuple[int, int]:
    ahead, behind = repo.git.ahead_behind(pygit2.Oid(hex=local), pygit2.Oid(hex=upstream))
    return int(ahead), int(behind)


def merge_bases(repo: Repo, a: Oid, b: Oid) -> list[Oid]:
    """Every best common ancestor of a and b, sorted (empty for unrelated histories).

    libgit2 gives one; after criss-cross merges (two clones merging each other's state at
    once) there are several, and a three-way merge against only one of them resurrects
    what the other side deleted. The others are common ancestors not below the first one
    that no other such ancestor descends from; all of them lie in the commits since it.
    """
    found = repo.git.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
    if found is None:
        return []
    first = Oid(str(found))

    def since(tip: Oid) -> dict[Oid, tuple[Oid, ...]]:
        walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.NONE)
        walker.hide(pygit2.Oid(hex=first))
        return {Oid(str(c.id)): tuple(Oid(str(p)) for p in c.parent_ids) for c in walker}

    on_a, on_b = since(a), since(b)
    common = {oid: parents for oid, parents in on_a.items() if oid in on_b}
    below = {p for parents in common.values() for p in parents if p in common}
    return sorted({first, *(oid for oid in common if oid not in below)})


def commit_time(repo: Repo, oid: Oid) -> int:
    """The committer time of a commit, in seconds since the epoch."""
    return int(repo.git[oid].peel(pygit2.Commit).commit_time)


def commit_parents(repo: Repo, oid: Oid) -> tuple[Oid, ...]:
    return tuple(Oid(str(p)) for p in repo.git[oid].peel(pygit2.Commit).parent_ids)


def commit_tree(repo: Repo, oid: Oid) -> Oid:
    return Oid(str(repo.git[oid].peel(pygit2.Commit).tree_id))


def write_commit_at(repo: Repo, tree: Oid, parents: list[Oid], message: str, when: int) -> Oid:
    """A commit with a fixed time and a fixed author: the virtual base of a merge, which
    must come out the same on every machine that computes it."""
    sig = pygit2.Signature("git-continuity", "merge@git-continuity.invalid", when, 0)
    oid = repo.git.create_commit(None, sig, sig, message, pygit2.Oid(hex=tree), [pygit2.Oid(hex=p) for p in parents])
    return Oid(str(oid))


def write_folder(repo: Repo, entries: list[TreeEntry]) -> Oid:
    """A tree holding exactly these entries (files and folders already written)."""
    builder = repo.git.TreeBuilder()
    for e in entries:
        mode = pygit2.GIT_FILEMODE_TREE if e.is_tree else pygit2.GIT_FILEMODE_BLOB
        builder.insert(e.name, pygit2.Oid(hex=e.oid), mode)
    return Oid(str(builder.write()))


def config_values(repo: Repo, key: str) -> list[str]:
    """Every value of a (multi-valued) config key, as git reads it."""
    try:
        return [str(v) for v in repo.git.config.get_multivar(key) if v is not None]
    except (KeyError, pygit2.GitError):
        return []


def add_local_config(repo: Repo, key: str, value: str) -> None:
    """Append a value to a multi-valued key in the repository's own config file
    (``git config --add``), never in the user's global one."""
    config = pygit2.Config(str(repo.common_dir / "config"))
    config.set_multivar(key, "^$", value)


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


def remote_url(repo: Repo, remote: str) -> str | None:
    try:
        url = repo.git.remotes[remote].url
    except (KeyError, pygit2.GitError):
        return None
    return str(url) if url else None


# -- notes trees ----------------------------------------------------------------------------


def notes_map(repo: Repo, notes_commit: Oid) -> dict[Oid, Oid]:
    """Annotated object -> note blob, for a notes commit in either layout (git fans notes out
    into ``ab/cdef…`` folders, libgit2 writes them flat)."""
    found: dict[Oid, Oid] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for e in tree:
            name = prefix + (e.name or "")
            if e.filemode == pygit2.GIT_FILEMODE_TREE:
                walk(repo.git[e.id].peel(pygit2.Tree), name)
            elif len(name) == 40:
                found[Oid(name)] = Oid(str(e.id))

    walk(repo.git[notes_commit].peel(pygit2.Tree), "")
    return found


def write_notes_tree(repo: Repo, notes: Mapping[Oid, Oid]) -> Oid:
    """A flat notes tree (the layout libgit2 writes; git reads it and fans out as it adds)."""
    builder = repo.git.TreeBuilder()
    for annotated, note in sorted(notes.items()):
        builder.insert(annotated, pygit2.Oid(hex=note), pygit2.GIT_FILEMODE_BLOB)
    return Oid(str(builder.write()))


# -- the work tree --------------------------------------------------------------------------


def worktree_tree(repo: Repo) -> Oid | None:
    """The tree the work tree holds right now, uncommitted and untracked (not ignored) files
    included; None in a bare repository. Evidence from a command records it, so the
    evidence turns stale when the files change.

    Built in the in-memory copy of the index and then discarded: the index file on disk is
    never written.
    """
    if repo.work_dir is None:
        return None
    index = repo.git.index
    try:
        index.add_all()
        for path, flag in repo.git.status(untracked_files="no").items():
            if flag & pygit2.GIT_STATUS_WT_DELETED:
                index.remove(path)
        return Oid(str(index.write_tree()))
    finally:
        index.read(True)


def head_reflog(repo: Repo, count: int) -> list[tuple[Oid, Oid, str]]:
    """The latest HEAD reflog entries as (old, new, message), newest first."""
    try:
        entries = list(repo.git.references["HEAD"].log())[:count]
    except (KeyError, pygit2.GitError):
        return []
    return [(Oid(str(e.oid_old)), Oid(str(e.oid_new)), e.message or "") for e in entries]


def only_in(repo: Repo, tip: Oid, hidden: Oid, limit: int = 1000) -> list[CommitInfo]:
    """Commits reachable from tip but not from hidden, newest first (at most limit)."""
    walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(pygit2.Oid(hex=hidden))
    found = []
    for c in walker:
        found.append(commit_info(repo, Oid(str(c.id))))
        if len(found) >= limit:
            break
    return found


# -- the work tree and refs, for handoffs and briefs ----------------------------------------


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


@dataclass(frozen=True)
class Changes:
    """Uncommitted changes, as git status counts them."""

    staged: list[str]
    unstaged: list[str]
    untracked: list[str]
    conflicted: list[str]


STAGED = (
    pygit2.GIT_STATUS_INDEX_NEW
    | pygit2.GIT_STATUS_INDEX_MODIFIED
    | pygit2.GIT_STATUS_INDEX_DELETED
    | pygit2.GIT_STATUS_INDEX_RENAMED
    | pygit2.GIT_STATUS_INDEX_TYPECHANGE
)
UNSTAGED = (
    pygit2.GIT_STATUS_WT_MODIFIED
    | pygit2.GIT_STATUS_WT_DELETED
    | pygit2.GIT_STATUS_WT_RENAMED
    | pygit2.GIT_STATUS_WT_TYPECHANGE
)


def changes(repo: Repo) -> Changes | None:
    """The work tree's uncommitted changes; None in a bare repository.

    While git makes a commit from a temporary index (``commit -a``, ``commit <paths>``) it
    names that index in GIT_INDEX_FILE for its hooks; libgit2 reads only the repository's
    own index, so then git itself is asked."""
    if repo.work_dir is None:
        return None
    temporary = os.environ.get("GIT_INDEX_FILE")
    if temporary and Path(repo.git.path, "index").resolve() != (repo.work_dir / temporary).resolve():
        return _changes_by_git(repo.work_dir)
    staged, unstaged, untracked, conflicted = [], [], [], []
    for name, flag in sorted(repo.git.status(untracked_files="normal", ignored=False).items()):
        if flag & pygit2.GIT_STATUS_CONFLICTED:
            conflicted.append(name)
            continue
        if flag & STAGED:
            staged.append(name)
        if flag & UNSTAGED:
            unstaged.append(name)
        if flag & pygit2.GIT_STATUS_WT_NEW:
            untracked.append(name)
    return Changes(staged, unstaged, untracked, conflicted)


def _changes_by_git(work_dir: Path) -> Changes:
    import subprocess

    out = subprocess.run(
        ["git", "status", "--porcelain=v1", "-z", "--untracked-files=normal"],
        cwd=work_dir,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    staged, unstaged, untracked, conflicted = [], [], [], []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        x, y, name = entry[0], entry[1], entry[3:]
        if x in "RC":
            next(entries, None)  # a rename's source path follows
        if "U" in (x, y) or (x, y) in (("A", "A"), ("D", "D")):
            conflicted.append(name)
        elif (x, y) == ("?", "?"):
            untracked.append(name)
        else:
            if x != " ":
                staged.append(name)
            if y != " ":
                unstaged.append(name)
    return Changes(sorted(staged), sorted(unstaged), sorted(untracked), sorted(conflicted))


def stashes(repo: Repo) -> list[tuple[Oid, str]]:
    """The stash list, newest first: (commit, message)."""
    try:
        return [(Oid(str(s.commit_id)), s.message or "") for s in repo.git.listall_stashes()]
    except pygit2.GitError:
        return []


def commits_since(
    repo: Repo, tip: Oid, hidden: Sequence[Oid], *, show: int, count_up_to: int
) -> tuple[list[CommitInfo], int]:
    """Commits reachable from tip but from none of ``hidden`` (ids this repository lacks are
    ignored), newest first: the first ``show`` of them, and how many there are (counted up
    to ``count_up_to``)."""
    walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
    for oid in hidden:
        if has_commit(repo, oid):
            walker.hide(pygit2.Oid(hex=oid))
    shown: list[CommitInfo] = []
    total = 0
    for c in walker:
        total += 1
        if len(shown) < show:
            shown.append(commit_info(repo, Oid(str(c.id))))
        if total >= count_up_to:
            break
    return shown, total
