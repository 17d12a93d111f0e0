"""Thread claims as this clone's sessions see them: which threads the current session holds,
and which of them another session holds after a sync (two clones claimed one thread before
either synced; the merge kept the first claim and recorded the other as a conflict)."""

from __future__ import annotations

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.clone import session
from git_continuity.repo import Repo
from git_continuity.store import planning


def held_here(repo: Repo) -> dict[tuple[str, str], planning.ThreadClaim]:
    """The thread claims the current session holds, by (stream, thread id), on every stream."""
    who = session.who(repo)
    found = {}
    for name in git.list_refs(repo, constants.STATE_PREFIX):
        stream = name[len(constants.STATE_PREFIX) :]
        if not constants.usable_stream(stream):
            continue
        snap = store.snapshot(repo, stream)
        for thread_id, claim in planning.claims_from(store.read_thread_claims(snap)).items():
            if planning.same_holder(claim, who.session, who.host, who.by):
                found[(stream, thread_id)] = claim
    return found


def lost_since(repo: Repo, before: dict[tuple[str, str], planning.ThreadClaim]) -> list[str]:
    """What to tell this session of the claims it held before a sync and another holds now."""
    lines = []
    for (stream, thread_id), mine in sorted(before.items()):
        snap = store.snapshot(repo, stream)
        now_held = planning.claims_from(store.read_thread_claims(snap)).get(thread_id)
        if now_held is None or now_held == mine:
            continue
        stolen = now_held.stole is not None and now_held.stole.get("session") == mine.session
        how = (
            "took it over (--steal)"
            if stolen
            else "claimed it first (both claims were made before either clone synced), and the merge keeps the first"
        )
        lines.append(
            f"Thread claim lost: {thread_id} (stream {stream}) is held by {now_held.holder()} since"
            f" {now_held.at[:16].replace('T', ' ')} UTC; they {how}."
            f"\n  Leave it to them, or take it back: git continuity thread claim {thread_id} --steal"
        )
    return lines
