"""Which commit of a history added each path: the state's entries are one file each, so the
commit that first added an entry's file is the commit that wrote the entry, and its
signature says who did (trust/authorship.py)."""

from __future__ import annotations

from collections.abc import Sequence

import pygit2

from git_continuity.repo.base import Oid, Repo
from git_continuity.repo.history import HistoryCut


def _subtree(commit: pygit2.Commit, path: str) -> pygit2.Tree | None:
    try:
        return commit.tree[path].peel(pygit2.Tree)
    except KeyError:
        return None


Edit = tuple[str, Oid, Oid]  # a path a commit changed: (path, its blob before, its blob after)


def _added(commit: pygit2.Commit, folders: Sequence[str]) -> tuple[list[str], list[Edit]]:
    """Paths under ``folders`` in commit's tree that none of its parents has: those it added
    (a merge's own additions; what a merge brings from a side was added on that side); and
    those it changed, as every parent had them otherwise (with the first parent's blob). A
    folder whose tree is a parent's is not compared: a commit that wrote evidence only costs
    a few tree lookups, not a diff of a folder of thousands of entries."""
    found: list[str] = []
    edited: list[Edit] = []
    for folder in folders:
        tree = _subtree(commit, folder)
        if tree is None:
            continue
        olds = [_subtree(p, folder) for p in commit.parents] or [None]
        if any(old is not None and old.id == tree.id for old in olds):
            continue
        paths: set[str] | None = None
        changed: dict[str, Edit] | None = None
        for old in olds:
            diff = tree.diff_to_tree(swap=True) if old is None else old.diff_to_tree(tree)
            added = {d.new_file.path for d in diff.deltas if d.status == pygit2.enums.DeltaStatus.ADDED}
            modified = {
                d.new_file.path: (f"{folder}/{d.new_file.path}", Oid(str(d.old_file.id)), Oid(str(d.new_file.id)))
                for d in diff.deltas
                if d.status == pygit2.enums.DeltaStatus.MODIFIED
            }
            paths = added if paths is None else paths & added
            changed = modified if changed is None else {k: v for k, v in changed.items() if k in modified}
        found += sorted(f"{folder}/{p}" for p in paths or ())
        edited += [v for _, v in sorted((changed or {}).items())]
    return found, edited


def _removed(commit: pygit2.Commit, folders: Sequence[str]) -> list[str]:
    """Paths under ``folders`` that a commit of one parent deleted."""
    if len(commit.parents) != 1:
        return []
    return _deleted(commit.parents[0], commit, folders)


def _deleted(before: pygit2.Commit, after: pygit2.Commit, folders: Sequence[str]) -> list[str]:
    """Paths under ``folders`` that ``before`` has and ``after`` does not."""
    found: list[str] = []
    for folder in folders:
        old, tree = _subtree(before, folder), _subtree(after, folder)
        if old is None or (tree is not None and old.id == tree.id):
            continue
        diff = old.diff_to_tree() if tree is None else old.diff_to_tree(tree)  # to the empty tree: all deleted
        found += sorted(
            f"{folder}/{d.old_file.path}" for d in diff.deltas if d.status == pygit2.enums.DeltaStatus.DELETED
        )
    return found


def _blob_at(commit: pygit2.Commit, path: str) -> str | None:
    try:
        return str(commit.tree[path].id)
    except KeyError:
        return None


def _changed(commit: pygit2.Commit, path: str) -> Oid | None:
    """The blob at path when commit's differs from every parent's (a merge that took one
    side's file as it is did not write it)."""
    found = _blob_at(commit, path)
    if found is None or any(_blob_at(p, path) == found for p in commit.parents):
        return None
    return Oid(found)


def paths_added(
    repo: Repo, tip: Oid, hidden: Oid | None, folders: Sequence[str], watched: str
) -> list[tuple[Oid, list[str], list[Edit], Oid | None]]:
    """Each commit reachable from tip and not from hidden, oldest first (parents before
    children), with the paths under ``folders`` (paths from the top) it added, those it
    changed, and the blob of the file ``watched`` when the commit wrote it."""
    try:
        line = _line(repo, tip, hidden) if hidden is not None else None
        commits = line if line is not None else _walk(repo, tip, hidden)
        return [(Oid(str(c.id)), *_added(c, folders), _changed(c, watched)) for c in commits]
    except (KeyError, pygit2.GitError) as error:
        raise _cut(tip, error) from None


def _walk(repo: Repo, tip: Oid, hidden: Oid | None) -> pygit2.Walker:
    walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if hidden is not None:
        walker.hide(pygit2.Oid(hex=hidden))
    return walker


LINE = 100  # commits read parent by parent down to the hidden one (_line)


def _line(repo: Repo, tip: Oid, hidden: Oid) -> list[pygit2.Commit] | None:
    """The commits above hidden, oldest first, where tip comes down to it parent by parent
    within LINE commits (the writes since a map was last brought up to date); None otherwise.
    libgit2's walk that hides a commit reads further below it, and a verify's state commit
    holds its whole report."""
    found: list[pygit2.Commit] = []
    at = repo.git[pygit2.Oid(hex=tip)].peel(pygit2.Commit)
    while str(at.id) != hidden:
        if len(at.parents) != 1 or len(found) >= LINE:
            return None
        found.append(at)
        at = at.parents[0]
    return found[::-1]


def paths_removed(repo: Repo, tip: Oid, hidden: Oid, folders: Sequence[str]) -> list[tuple[Oid, list[str]]]:
    """Each commit of one parent reachable from tip and not from hidden, oldest first, with the
    paths under ``folders`` it deleted (a merge's deletions were made on a side) that tip no
    longer has. Hidden's and tip's trees are compared first, once: the commits are walked
    only when some path is gone (a diff of a folder of thousands of entries per commit would
    cost a sync of a thousand commits seconds)."""
    try:
        before, after = repo.git[pygit2.Oid(hex=hidden)].peel(pygit2.Commit), repo.git[pygit2.Oid(hex=tip)]
        gone = set(_deleted(before, after.peel(pygit2.Commit), folders))
        if not gone:
            return []
        found = [(Oid(str(c.id)), [p for p in _removed(c, folders) if p in gone]) for c in _walk(repo, tip, hidden)]
        return [(commit, paths) for commit, paths in found if paths]
    except (KeyError, pygit2.GitError) as error:
        raise _cut(tip, error) from None


def _cut(tip: Oid, error: Exception) -> HistoryCut:
    return HistoryCut(
        f"the history of {tip[:7]} is cut: an object is missing here ({error}); "
        "git continuity doctor says how to repair it"
    )
