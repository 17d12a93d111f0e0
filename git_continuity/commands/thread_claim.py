"""`git continuity thread claim ID [--steal]`: record that this session is on a thread, so
other sessions (their brief, `ready`) leave it be. A thread another session holds is
refused naming the holder, unless --steal, which records whose claim it replaced. A claim
ends when its session's handoff is recorded."""

from __future__ import annotations

from git_continuity import store
from git_continuity.clone import session
from git_continuity.errors import UserError
from git_continuity.model import now, stamp
from git_continuity.repo import Repo
from git_continuity.store import planning


class Held(UserError):
    """Another session holds the thread: the claim is refused (exit 2, as any refusal of
    what was asked), naming the person who holds it."""


def claim(repo: Repo, *, stream: str, thread_id: str, steal: bool) -> int:
    who = session.who(repo)
    moment = now()
    result: list[planning.ThreadClaim | None] = []

    def make(snap: store.Snapshot) -> store.Change:
        threads = store.read_threads(snap)
        if thread_id not in threads:
            known = ", ".join(sorted(threads)) or "none"
            raise UserError(
                f"no thread {thread_id!r} in stream '{snap.stream}' (threads: {known}); nothing was written"
            )
        thread = threads[thread_id]
        if planning.ended(thread):
            raise UserError(f"thread {thread_id} is {thread.status}: there is nothing to work on; nothing was written")
        found = planning.claims_from(store.read_thread_claims(snap)).get(thread_id)
        if found is not None and planning.same_holder(found, who.session, who.host, who.by):
            result[:] = [None]
            return store.Change("", {})  # already this session's: nothing to write
        if found is not None and not steal:
            raise Held(
                f"thread {thread_id} is claimed by {found.holder()} since {found.at[:16].replace('T', ' ')} UTC;"
                " nothing was written.\nLeave it to them, or take it over:"
                f" git continuity thread claim {thread_id} --steal"
            )
        stole = None
        if found is not None:
            stole = {k: v for k, v in found.to_json().items() if k in ("session", "host", "by", "at", "agent")}
        made = planning.ThreadClaim(thread_id, who.session, who.host, who.by, stamp(moment), who.agent, stole)
        result[:] = [made]
        took = f"\n\nstole from: {found.holder()}" if found is not None else ""
        return store.Change(
            f"thread claim {thread_id}: {thread.title}{took}",
            {store.thread_claim_path(thread_id): store.entry_bytes(made)},
        )

    store.update(repo, stream, make)
    if not result or result[0] is None:
        print(f"Thread {thread_id} is already claimed by this session.")
        return 0
    made = result[0]
    print(f"Thread {thread_id} is claimed by {made.holder()}.")
    if made.stole:
        print(f"  taken over from {planning.ThreadClaim.from_json({'id': thread_id, **made.stole}).holder()}")
    if made.session is None:
        print("  no session is open here, so no handoff ends it (git continuity orient starts one)")
    else:
        print("  it ends when this session's handoff is recorded")
    return 0
