"""Commit notes on ``refs/notes/continuity``: why a commit exists and what was verified on it.

A note is one JSON record per line, lines sorted and unique, so that
``git notes merge -s cat_sort_uniq`` merges two clones' notes without losing any, and
``git log --notes=continuity`` shows them readably. Every record has a ``kind``:

- ``provenance``: the stream, session, objective digest, thread and claims naming the commit,
  written when a commit is made while a stream is active;
- ``ci``: a recorded test or CI result for the commit, in git-appraise's shape
  (``timestamp``, ``url``, ``status`` success|failure, ``agent``) plus the command and tree.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from git_continuity import repo as git
from git_continuity.clone import provenance
from git_continuity.constants import NOTES_REF
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import signing

if TYPE_CHECKING:  # the model costs the post-commit hook ~20 ms it has no use for
    from git_continuity.model import Claim

FULL_OID = re.compile(r"\b[0-9a-f]{40}\b")


line = provenance.line  # one writer of a note's lines


def require_notes(repo: Repo, failed: str) -> Oid | None:
    """The notes commit (None: no notes yet); a notes ref at something else is refused, naming it."""
    tip = git.ref_target(repo, NOTES_REF)
    if tip is not None and not git.has_commit(repo, tip):
        raise UserError(
            f"{NOTES_REF} points at {tip[:7]}, which is not a commit; {failed}.\n"
            "Put it back on its last notes commit: git continuity doctor --fix"
        )
    return tip


def require_writable(repo: Repo, failed: str) -> None:
    """Refuse before anything is written when a note could not be: the notes ref is not a
    commit, or its lock was left by a writer that is gone."""
    require_notes(repo, failed)
    git.require_unlocked(repo, NOTES_REF, failed)


def records(repo: Repo, commit: Oid) -> list[dict[str, Any]]:
    """Every record on commit; lines that are not JSON records (a hand-written note) are skipped."""
    require_notes(repo, "the notes cannot be read")
    text = git.read_note(repo, NOTES_REF, commit) or ""
    found = []
    for raw in text.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and "kind" in record:
            found.append(record)
    return found


def add(repo: Repo, commit: Oid, *new: dict[str, Any]) -> None:
    """Append records to commit's note, keeping what is there: the one way notes are written
    (commands and hooks alike). A compare-and-swap of the notes ref, retried when another
    writer won, so that concurrent writers on one commit all keep their lines.

    The new notes commit is built here on the tip that was read, not by libgit2's
    ``create_note``, which re-reads the tip itself and so could write lines merged from an
    older note over a concurrent writer's. The notes commit is signed like a state commit."""
    signing.arm(repo)

    def step(expected: Oid | None) -> None:
        require_notes(repo, f"the note on {commit[:7]} was not written")
        tree = git.commit_tree(repo, expected) if expected else None
        path = _note_path(repo, tree, commit)
        found = git.entry_oid(repo, tree, path) if tree else None
        old = git.blob(repo, found).decode(errors="replace") if found else ""
        text = "\n".join(sorted(set(old.splitlines()) | {line(r) for r in new})) + "\n"
        if text == old:
            return
        notes_tree = git.write_tree(repo, tree, {path: text.encode()})
        made = git.write_commit(repo, notes_tree, [expected] if expected else [], f"notes: add to {commit[:7]}\n")
        git.compare_and_swap(repo, NOTES_REF, made, expected, f"continuity: note on {commit[:7]}")

    git.update_ref(repo, NOTES_REF, step, gave_up=f"the note on {commit[:7]} was not written")


def _note_path(repo: Repo, tree: Oid | None, commit: Oid) -> str:
    """Where commit's note is, or goes, in a notes tree: down the two-digit folders that git
    fans a large notes tree out into (``ab/cdef…``) as far as they exist; libgit2 and git
    (for few notes) keep it flat."""
    folders: list[str] = []
    while True:
        depth = 2 * len(folders)
        here = "/".join([*folders, commit[depth:]])
        if tree is None or len(commit) - depth <= 2 or git.entry_oid(repo, tree, here) is not None:
            return here
        below = commit[depth : depth + 2]
        if git.tree_entries(repo, tree, "/".join([*folders, below])) is None:
            return here
        folders.append(below)


def claim_named(repo: Repo, stream: str, claim: Claim) -> None:
    """Note on each commit that the claim's handle names (and that exists here) that this claim
    names it: a plain claim and a thread's acceptance check alike."""
    named = [Oid(oid) for oid in FULL_OID.findall(claim.handle or "") if git.has_commit(repo, Oid(oid))]
    for oid in dict.fromkeys(named):
        record: dict[str, Any] = {
            "kind": "claim",
            "stream": stream,
            "claim": claim.id,
            "text": claim.text,
            "handle": claim.handle,
            "at": claim.added_at,
            "by": claim.added_by,
        }
        if claim.thread:
            record["thread"] = claim.thread
        add(repo, oid, record)
