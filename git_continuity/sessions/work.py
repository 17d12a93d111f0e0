"""What a session did here, told apart from what arrived meanwhile by pull or sync.

A handoff credits a session only with its own work: the commits this work tree made since the
session began (HEAD's reflog says which: "commit", "rebase (pick)", "cherry-pick", …; a pull
or a fast-forward brings others'), and the state changes written under its session id (each
state commit carries a ``Session:`` trailer). Everything else is "arrived from <who>".
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from git_continuity import repo as git
from git_continuity.clone import session
from git_continuity.constants import ID_CHARS, THREAD_ID
from git_continuity.repo import Oid, Repo
from git_continuity.store.records import SHOWN_COMMITS, Arrived, ClaimAdded, MovedRef, RefCommit, ThreadMoved, ref_label

# HEAD reflog messages of a commit this work tree made (git's own words for them).
MADE_HERE = (
    "commit",
    "rebase (pick)",
    "rebase (reword)",
    "rebase (edit)",
    "rebase (squash)",
    "rebase (fixup)",
    "cherry-pick",
    "revert",
    "merge ",
)
LIMIT = 1000
CLAIM_ID = re.compile(rf"\bc-{ID_CHARS}{{6}}\b")


def made_here(repo: Repo, since: datetime, session_id: str | None = None) -> set[str]:
    """The commits made in this clone since ``since``, in any of its work trees (a session is
    the agent's, across them: ``git -C <other> commit`` too); with ``session_id``, not those
    whose provenance note names another session (one working beside it)."""
    from git_continuity.store import notes as commit_notes

    made: set[str] = {
        new
        for _, new, message in git.every_head_reflog_since(repo, since)
        if message.startswith(MADE_HERE) and "Fast-forward" not in message
    }
    if session_id is None:
        return made
    theirs = set()
    for commit in made:
        with contextlib.suppress(KeyError, ValueError):
            named = {r.get("session") for r in commit_notes.records(repo, Oid(commit)) if r.get("kind") == "provenance"}
            if named and session_id not in named and None not in named:
                theirs.add(commit)
    return made - theirs


def split_commits(
    repo: Repo, moved: Sequence[MovedRef], since: datetime, session_id: str | None = None
) -> tuple[list[MovedRef], list[Arrived]]:
    """Each moved branch's commits, this session's kept and the rest "arrived from <author>"."""
    made = made_here(repo, since, session_id)
    mine: list[MovedRef] = []
    arrived: list[Arrived] = []
    for m in moved:
        if not m.ref.startswith("refs/heads/") or m.now is None or m.missing or not m.gained:
            mine.append(m)
            continue
        if m.was is not None:
            every, _ = git.commits_since(repo, Oid(m.now), [Oid(m.was)], show=LIMIT, count_up_to=LIMIT)
            commits = [RefCommit(c.oid, c.message.splitlines()[0] if c.message else "") for c in every]
            authors: dict[str, str] = {str(c.oid): c.author for c in every}
        else:  # a new branch: what moved_refs named of it
            commits = list(m.commits)
            authors = {c.commit: git.commit_info(repo, Oid(c.commit)).author for c in commits}
        own = [c for c in commits if c.commit in made]
        others = [c for c in commits if c.commit not in made]
        if others:
            label = ref_label(m.ref)
            named = "; ".join(f"{c.commit[:7]} {c.summary}" for c in others[:SHOWN_COMMITS])
            more = len(others) - SHOWN_COMMITS
            what = f"{label} +{len(others)} ({named}{f'; {more} more' if more > 0 else ''})"
            arrived.append(Arrived(what, ", ".join(sorted({authors[c.commit] for c in others}))))
        if own or m.lost:
            mine.append(replace(m, gained=len(own), commits=own[:SHOWN_COMMITS]))
    return mine, arrived


def _state_authors(repo: Repo, tip: str, base: str | None, session_id: str) -> tuple[set[str], dict[str, str]]:
    """Thread and claim ids named by this session's state commits since ``base``, and those
    named by other sessions' (with who wrote them)."""
    ours: set[str] = set()
    theirs: dict[str, str] = {}
    hidden = [Oid(base)] if base else []
    commits, _ = git.commits_since(repo, Oid(tip), hidden, show=LIMIT, count_up_to=LIMIT)
    for c in commits:
        trailers: dict[str, str] = {
            m.group(1): m.group(2) for line in c.message.splitlines() if (m := session.TRAILER_RE.match(line))
        }
        named = {i.lower() for i in THREAD_ID.findall(c.message)} | set(CLAIM_ID.findall(c.message))
        if trailers.get("Session") == session_id:
            ours |= named
        elif len(c.parents) < 2:  # another session's, or one without a session (a merge takes both in)
            where = ", ".join(f"{k.lower()} {trailers[k]}" for k in ("Session", "Host") if k in trailers)
            for i in named:
                theirs.setdefault(i, f"{c.author} ({where})" if where else c.author)
    return ours, theirs


def split_state(
    repo: Repo,
    tip: str,
    base: str | None,
    session_id: str,
    claims: Sequence[ClaimAdded],
    threads: Sequence[ThreadMoved],
) -> tuple[list[ClaimAdded], list[ThreadMoved], list[Arrived]]:
    """Claims added and threads moved by this session, and what other sessions' state
    commits (taken in by pull or sync) did, as arrived."""
    ours, theirs = _state_authors(repo, tip, base, session_id)
    arrived = [
        Arrived(f'claim added: {c.id} "{c.text}"', theirs[c.id]) for c in claims if c.id in theirs and c.id not in ours
    ]
    arrived += [
        Arrived(f"thread {t.id} {t.title}: {t.was or 'new'} → {t.now}", theirs[t.id])
        for t in threads
        if t.id in theirs and t.id not in ours
    ]
    gone = {a.what for a in arrived}
    kept_claims = [c for c in claims if f'claim added: {c.id} "{c.text}"' not in gone]
    kept_threads = [t for t in threads if f"thread {t.id} {t.title}: {t.was or 'new'} → {t.now}" not in gone]
    return kept_claims, kept_threads, arrived
