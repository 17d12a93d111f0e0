"""Which commit of a history added each path: the state's entries are one file each, so the
commit that first added an entry's file is the commit that wrote the entry, and its
signature says who did (authorship.py)."""

from __future__ import annotations

import pygit2

from git_continuity.repo.base import Oid, Repo
from git_continuity.repo.history import HistoryCut


def _added(repo: Repo, commit: pygit2.Commit, under: str) -> list[str]:
    """Paths under ``under`` in commit's tree that none of its parents has: those it added
    (a merge's own additions; what a merge brings from a side was added on that side)."""
    tree = commit.tree
    try:
        tree = tree[under].peel(pygit2.Tree) if under else tree
    except KeyError:
        return []
    found: set[str] | None = None
    parents: list[pygit2.Commit | None] = list(commit.parents) or [None]
    for parent in parents:
        old: pygit2.Tree | None = None
        if parent is not None:
            try:
                old = parent.tree[under].peel(pygit2.Tree) if under else parent.tree
            except KeyError:
                old = None
        diff = tree.diff_to_tree(swap=True) if old is None else old.diff_to_tree(tree)
        paths = {d.new_file.path for d in diff.deltas if d.status == pygit2.enums.DeltaStatus.ADDED}
        found = paths if found is None else found & paths
        if not found:
            return []
    return sorted(found or ())


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
    repo: Repo, tip: Oid, hidden: Oid | None, under: str, watched: str
) -> list[tuple[Oid, list[str], Oid | None]]:
    """Each commit reachable from tip and not from hidden, oldest first (parents before
    children), with the paths (relative to ``under``) it added, and the blob of the file
    ``watched`` (a path from the top) when the commit wrote it."""
    try:
        sort = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE
        walker = repo.git.walk(pygit2.Oid(hex=tip), sort)
        if hidden is not None:
            walker.hide(pygit2.Oid(hex=hidden))
        return [(Oid(str(c.id)), _added(repo, c, under), _changed(c, watched)) for c in walker]
    except (KeyError, pygit2.GitError) as error:
        raise HistoryCut(
            f"the history of {tip[:7]} is cut: an object is missing here ({error}); "
            "git continuity doctor says how to repair it"
        ) from None
