"""Trees, blobs and commits: reading the state's files and writing new trees and commits that
no ref points at yet (refs.py moves the ref)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pygit2

from git_continuity.repo.base import Oid, Repo, _signature
from git_continuity.repo.signed import write_commit_signed


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
    # The entry's type, not its filemode: pygit2 makes an enum of each filemode (12 µs each,
    # 50 ms for a day folder of a busy journal).
    return [TreeEntry(e.name or "", Oid(str(e.id)), e.type == pygit2.GIT_OBJECT_TREE) for e in obj]


def last_entries(repo: Repo, tree: Oid, count: int) -> list[TreeEntry]:
    """The last ``count`` entries of a folder in git's order of names, the last first,
    without listing the rest (a day folder of a journal: its newest entries)."""
    folder = repo.git[tree].peel(pygit2.Tree)
    size = len(folder)
    picked = [folder[i] for i in range(size - 1, max(size - count, 0) - 1, -1)]
    return [TreeEntry(e.name or "", Oid(str(e.id)), e.type == pygit2.GIT_OBJECT_TREE) for e in picked]


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
    """A commit object not yet on any ref (compare_and_swap puts it there), signed as
    ``repo.signer`` says (signed.write_commit_signed)."""
    return write_commit_signed(repo, _signature(repo), tree, parents, message)


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
