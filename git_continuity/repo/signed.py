"""Signed commits, as git defines them: the commit's text is signed, and the signature goes
into its ``gpgsig`` header (what ``git log --show-signature`` and ``git verify-commit``
check). Making the signature is the caller's business (``Repo.signer``, set by
``signing.arm``); this part only builds, stores and takes apart signed commits."""

from __future__ import annotations

import pygit2

from git_continuity.repo.base import Oid, Repo
from git_continuity.repo.history import HistoryCut


class Unarmed(RuntimeError):
    """A commit was about to be written before signing was decided for the repository."""


def write_commit_signed(repo: Repo, author: pygit2.Signature, tree: Oid, parents: list[Oid], message: str) -> Oid:
    """A commit not yet on any ref, signed by ``repo.signer`` (which says None when signing
    is off for this repository). The signature covers exactly the bytes git stores."""
    if repo.signer is None:
        raise Unarmed("a state or notes commit was written before signing.arm(repo) decided how to sign it")
    tree_id = pygit2.Oid(hex=tree)
    parent_ids: list[str | pygit2.Oid] = [pygit2.Oid(hex=p) for p in parents]
    content = str(repo.git.create_commit_string(author, author, message, tree_id, parent_ids))
    signature = repo.signer(content.encode())
    if signature is None:
        return Oid(str(repo.git.create_commit(None, author, author, message, tree_id, parent_ids)))
    return Oid(str(repo.git.create_commit_with_signature(content, signature, "gpgsig")))


def commit_signature(repo: Repo, oid: Oid) -> tuple[bytes, bytes] | None:
    """A commit's signature and the bytes it signs (the commit without its gpgsig header),
    or None for an unsigned commit."""
    commit = repo.git[oid].peel(pygit2.Commit)
    signature, payload = commit.gpg_signature
    if signature is None:
        return None
    return bytes(signature), bytes(payload or b"")


def commit_ids_since(repo: Repo, tip: Oid, hidden: Oid | None) -> list[Oid]:
    """Commits reachable from tip and not from hidden (every one when hidden is None),
    oldest first. Ids only: this walk runs on every read that finds the ref moved."""
    try:
        walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        if hidden is not None:
            walker.hide(pygit2.Oid(hex=hidden))
        return [Oid(str(c.id)) for c in walker]
    except (KeyError, pygit2.GitError) as error:
        raise HistoryCut(
            f"the history of {tip[:7]} is cut: an object is missing here ({error}); "
            "git continuity doctor says how to repair it"
        ) from None


def history_depth(repo: Repo, tip: Oid) -> int:
    """How many commits tip's history holds, as far as this clone has them (a history cut
    by a deleted object or a shallow fetch is counted up to the cut)."""
    count = 0
    try:
        for _ in repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.NONE):
            count += 1
    except (KeyError, pygit2.GitError):
        pass
    return count
