"""The whole document ``progress`` shows, assessed in one place: the threads being tried (a
done one that no longer holds among them; each thread's view holds its checks and whether it
waits on someone else), each with its course of attempts (store/attempts.py,
view/stoploss.py), under the policy read once; ``progress`` renders it and asks nothing else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from git_continuity import store
from git_continuity.errors import UserError
from git_continuity.model import now
from git_continuity.repo import Repo
from git_continuity.store import policy
from git_continuity.store.attempts import Course
from git_continuity.view import assessed, signed_items, stoploss


@dataclass(frozen=True)
class Progress:
    """What progress shows of a stream at a moment."""

    snap: store.Snapshot
    rules: policy.Policy
    at: datetime
    views: list[assessed.ThreadView]  # the threads shown, in the view's order
    courses: dict[str, Course]  # by thread id
    marker: Callable[[dict[str, Any]], dict[str, Any]]  # puts who signed what on --json (signed_items.marker)


def progress_document(repo: Repo, stream: str, thread_id: str | None) -> Progress:
    """The document of ``git continuity progress [THREAD]``: refused (NoState) where the stream
    has no state, and naming the threads there are where ``thread_id`` is none of them."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    threads = store.read_threads(snap)
    if thread_id is not None and thread_id not in threads:
        known = ", ".join(sorted(threads)) or "none"
        raise UserError(f"no thread {thread_id!r} in stream '{stream}' (threads: {known})")
    rules = policy.load(repo.work_dir)
    at = now()
    # Waiting on someone else is derived from the checks now (their last evidence for network
    # ones), not from the attempts: waiting makes none. A done thread that no longer holds is
    # being worked on again: it is shown with the others.
    seen = assessed.assess(snap, at=at, policy=rules, thread_ids=[thread_id] if thread_id else None)
    views = [tv for tv in seen.threads if thread_id or tv.thread.status != "done" or tv.undone]
    assert snap.commit is not None
    return Progress(
        snap,
        rules,
        at,
        views,
        courses={tv.thread.id: stoploss.course_of(snap, tv.thread, rules) for tv in views},
        marker=signed_items.marker(repo, stream, snap.commit),
    )
