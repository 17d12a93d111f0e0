"""After an amend or a rebase: commit notes and the claims naming rewritten commits follow."""

from __future__ import annotations

from git_continuity import repo as git
from git_continuity import store
from git_continuity.repo import Oid, Repo
from git_continuity.store import notes as commit_notes


def pairs_from_history(repo: Repo, kind: str) -> list[tuple[Oid, Oid]]:
    """The (old, new) pairs git would have passed to post-rewrite, read off history.

    The pre-commit framework does not forward git's list. For an amend, HEAD's reflog holds
    the pair. For a rebase, the commits only on ORIG_HEAD (before) are matched to those only
    on HEAD (after) by author, author time and subject, which a rebase keeps; squashed or
    dropped commits have no match and are left alone.
    """
    head = git.head_commit(repo)
    if head is None:
        return []
    if kind == "amend":
        for old, new, message in git.head_reflog(repo, 1):
            if message.startswith("commit (amend)") and new == head:
                return [(old, new)]
        return []
    before = git.ref_target(repo, "ORIG_HEAD")
    if before is None or before == head:
        return []

    def key(c: git.CommitInfo) -> tuple[str, str, str]:
        return (c.author, c.authored.isoformat(), c.message.splitlines()[0] if c.message else "")

    after = {key(c): c.oid for c in git.only_in(repo, head, before)}
    return [(c.oid, after[key(c)]) for c in git.only_in(repo, before, head) if key(c) in after]


def follow(repo: Repo, stream: str, pairs: list[tuple[Oid, Oid]], *, kind: str) -> None:
    """Copy each old commit's note records to the new commit (with a record of the rewrite),
    and point claims that named an old commit at the new one."""
    for old, new in pairs:
        carried = commit_notes.records(repo, old)
        if carried:
            commit_notes.add(repo, new, *carried, {"kind": "rewritten", "from": old, "by": kind})
    snap = store.snapshot(repo, stream)
    if snap.commit is None:
        return
    mapping = dict(pairs)

    def make(s: store.Snapshot) -> store.Change:
        files: dict[str, bytes | None] = {}
        lines = []
        for claim in store.read_claims(s).values():
            handle = claim.handle or ""
            moved = [old for old in mapping if old in handle]
            if not moved:
                continue
            for old in moved:
                handle = handle.replace(old, mapping[old])
            lines.append(f"{claim.id}: {claim.handle} -> {handle}")
            claim.handle = handle
            files[store.claim_path(claim.id)] = store.entry_bytes(claim)
        summary = ", ".join(f"{o[:7]} -> {n[:7]}" for o, n in pairs[:3]) + (" …" if len(pairs) > 3 else "")
        return store.Change(f"rewrite ({kind}): claims follow {summary}\n\n" + "\n".join(lines), files)

    store.update(repo, stream, make)
