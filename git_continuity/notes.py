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
from typing import Any

from git_continuity import repo as git
from git_continuity.constants import NOTES_REF
from git_continuity.model import Claim
from git_continuity.repo import Oid, Repo

FULL_OID = re.compile(r"\b[0-9a-f]{40}\b")


def line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def records(repo: Repo, commit: Oid) -> list[dict[str, Any]]:
    """Every record on commit; lines that are not JSON records (a hand-written note) are skipped."""
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
    """Append records to commit's note, keeping what is there; retried when another writer won."""

    def step(expected: Oid | None) -> None:
        old = git.read_note(repo, NOTES_REF, commit) or ""
        lines = sorted(set(old.splitlines()) | {line(r) for r in new})
        text = "\n".join(lines) + "\n"
        if text != old:
            git.write_note(repo, NOTES_REF, commit, text, expected)

    git.update_ref(repo, NOTES_REF, step, gave_up=f"the note on {commit[:7]} was not written")


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
