"""Commit notes: one note read through libgit2, and a notes commit's whole tree (either
fan-out layout) for merging two clones' notes. Notes are written by commit_notes.add, on a commit
built here (objects) and moved by compare_and_swap (refs)."""

from __future__ import annotations

from collections.abc import Mapping

import pygit2

from git_continuity.repo.base import Oid, Repo


def read_note(repo: Repo, notes_ref: str, commit: Oid) -> str | None:
    """The note on commit under notes_ref (either fan-out layout), or None."""
    try:
        return str(repo.git.lookup_note(commit, notes_ref).message)
    except (KeyError, pygit2.GitError):
        return None


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
