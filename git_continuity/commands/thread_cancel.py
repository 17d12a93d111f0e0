"""`git continuity thread cancel ID --why TEXT`: end a thread without finishing it. It is
recorded and shown as cancelled, never gates a stop and is never counted as done."""

from __future__ import annotations

from dataclasses import replace

from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import Thread, now, stamp
from git_continuity.repo import Repo
from git_continuity.store import planning


def cancel(repo: Repo, *, stream: str, thread_id: str, why: str) -> int:
    why = why.strip()
    if not why:
        raise UserError("thread cancel needs --why TEXT: the next session must know why the work was dropped")
    who = session.who(repo)
    moment = now()
    waiting: list[Thread] = []

    def make(snap: store.Snapshot) -> store.Change:
        threads = store.read_threads(snap)
        if thread_id not in threads:
            known = ", ".join(sorted(threads)) or "none"
            raise UserError(
                f"no thread {thread_id!r} in stream '{snap.stream}' (threads: {known}); nothing was written"
            )
        thread = threads[thread_id]
        if thread.status == "done":
            raise UserError(f"thread {thread_id} is done (closed {thread.closed_at}): there is nothing to cancel")
        if thread.status == "cancelled":
            raise UserError(f"thread {thread_id} was already cancelled: {planning.cancelled_why(thread)}")
        ended = {"why": why, "at": stamp(moment), "by": who.by, "host": who.host}
        if who.session:
            ended["session"] = who.session
        changed = replace(thread, status="cancelled", cancelled=ended, closed_at=None, closed_by=None, closed_on=None)
        files: dict[str, bytes | None] = {store.thread_path(thread_id): store.entry_bytes(changed)}
        if thread_id in store.read_thread_claims(snap):
            files[store.thread_claim_path(thread_id)] = None  # nobody is on a cancelled thread
        waiting[:] = [t for t in threads.values() if thread_id in (t.after or []) and not planning.ended(t)]
        return store.Change(f"thread cancel {thread_id}: {thread.title}\n\nwhy: {why}\nwas: {thread.status}", files)

    store.update(repo, stream, make)
    print(hang(f"Thread {thread_id} is cancelled: ", why))
    print("  it gates no stop and does not count as done (git continuity thread set ID open reopens it)")
    for t in sorted(waiting, key=lambda t: (t.added_at, t.id)):
        print(
            f"  {t.id} waits for it and will never be ready so: git continuity thread set {t.id} --no-after {thread_id}"
        )
    return 0
