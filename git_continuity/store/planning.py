"""Planning, as plain rules on threads and blockers: what a thread waits for (``after``), its
priority, which threads are ready, the cycles ``after`` must never make, a thread ended
without being finished (``cancelled``), and which session is on a thread (a thread claim).

Pure data, like model.py: every function takes threads, blockers or thread claims and returns
a value, so each reader (status, orient, the brief, ``ready``, MCP) asks the same question
the same way and tests need no repository.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import Blocker, Thread

DEFAULT_PRIORITY = 2  # 0 is the highest, 4 the lowest
PRIORITIES = range(5)
ENDED = ("done", "cancelled")  # a thread that will not be worked on again (never gates a stop)


def priority_of(thread: Thread) -> int:
    """The thread's priority; threads written before priorities have the default."""
    return DEFAULT_PRIORITY if thread.priority is None else thread.priority


def parse_priority(text: str | int) -> int:
    """A priority as typed: an integer 0 (highest) to 4 (lowest)."""
    try:
        value = int(text)
    except (TypeError, ValueError):
        value = -1
    if value not in PRIORITIES or str(text).strip() != str(value):
        raise UserError(
            f"--priority {text}: a priority is a whole number from 0 (highest) to 4 (lowest); 2 is the default"
        )
    return value


def ended(thread: Thread) -> bool:
    return thread.status in ENDED


def cancelled_why(thread: Thread) -> str | None:
    """Why the thread was cancelled, or None when it was not."""
    return str(thread.cancelled["why"]) if thread.status == "cancelled" and thread.cancelled else None


def thread_fields(thread: Thread) -> dict[str, Any]:
    """The planning fields of a thread as its JSON shows them: its priority always, what it
    waits for and why it was cancelled when set."""
    found: dict[str, Any] = {"priority": priority_of(thread)}
    if thread.after:
        found["after"] = list(thread.after)
    if thread.cancelled:
        found["cancelled"] = dict(thread.cancelled)
    return found


# -- after: what a thread waits for ---------------------------------------------------------


def check_after(
    threads: Mapping[str, Thread], thread_id: str | None, after: Sequence[str], keep: Sequence[str] = ()
) -> list[str]:
    """The ``after`` list a thread may have: ``keep`` (what it already waits for) then each
    of ``after`` (deduplicated, in the order given), or a UserError naming what is wrong with
    one of ``after``: an unknown thread, a cancelled one, the thread itself, or a cycle.
    ``thread_id`` is None for a thread not yet written (it cannot close a cycle)."""
    added = [a for a in dict.fromkeys(a.strip() for a in after) if a not in keep]
    wanted = [*keep, *added]
    for other in added:
        if other not in threads:
            known = ", ".join(sorted(threads)) or "none"
            raise UserError(f"--after {other}: no such thread (threads: {known}); nothing was written")
        if other == thread_id:
            raise UserError(f"--after {other}: a thread cannot wait for itself; nothing was written")
        if threads[other].status == "cancelled":
            raise UserError(
                f"--after {other}: that thread was cancelled ({cancelled_why(threads[other])}), so it will never be"
                " done; nothing was written"
            )
    if thread_id is not None:
        cycle = find_cycle({**{t.id: list(t.after or []) for t in threads.values()}, thread_id: wanted}, thread_id)
        if cycle:
            raise UserError(
                f"--after would make a cycle: {' → '.join(cycle)} (each waits for the next); nothing was written"
            )
    return wanted


def find_cycle(edges: Mapping[str, Sequence[str]], first: str | None = None) -> list[str] | None:
    """A cycle in the ``after`` graph as a path that ends where it starts (``[a, b, a]``), or
    None; the search starts from ``first`` (the thread being changed), so the path is named
    from it. Iterative depth-first search, so a long chain cannot exhaust the stack."""
    colour: dict[str, int] = {}  # 1: on the current path, 2: finished
    for start in ([first] if first is not None else []) + sorted(edges):
        if colour.get(start):
            continue
        path = [start]
        stack = [iter(edges.get(start, ()))]
        colour[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                stack.pop()
                continue
            if colour.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if not colour.get(nxt) and nxt in edges:
                colour[nxt] = 1
                path.append(nxt)
                stack.append(iter(edges.get(nxt, ())))
    return None


def waits_for(thread: Thread, threads: Mapping[str, Thread]) -> list[str]:
    """The threads named in ``after`` that are not done yet (one missing here, e.g. not synced
    yet, is waited for too: it is not known to be done)."""
    return [a for a in thread.after or [] if a not in threads or threads[a].status != "done"]


def held_by(thread: Thread, blockers: Iterable[Blocker]) -> list[Blocker]:
    """The open blockers added for this thread (``blocker add --thread``)."""
    return [b for b in blockers if b.done_at is None and b.thread == thread.id]


@dataclass(frozen=True)
class Standing:
    """Where an open thread stands in the plan: ready, or what it waits for."""

    thread: Thread
    waits_for: list[str]  # thread ids not done yet
    held_by: list[str]  # open blocker ids

    @property
    def ready(self) -> bool:
        return not self.waits_for and not self.held_by

    def why_not(self) -> str:
        parts = []
        if self.waits_for:
            parts.append("after " + ", ".join(self.waits_for))
        if self.held_by:
            parts.append("held by blocker " + ", ".join(self.held_by))
        return "; ".join(parts)


def plan(threads: Mapping[str, Thread], blockers: Iterable[Blocker]) -> list[Standing]:
    """Every open thread's standing, in the order work should be taken up: by priority (0
    first), then age (the oldest first), then id."""
    found = list(blockers)
    chosen = sorted(
        (t for t in threads.values() if t.status == "open"), key=lambda t: (priority_of(t), t.added_at, t.id)
    )
    return [Standing(t, waits_for(t, threads), [b.id for b in held_by(t, found)]) for t in chosen]


def ready(threads: Mapping[str, Thread], blockers: Iterable[Blocker]) -> list[Thread]:
    """The ready queue: open threads whose ``after`` threads are all done and that no open
    blocker holds, by priority then age."""
    return [s.thread for s in plan(threads, blockers) if s.ready]


# -- thread claims: which session is on a thread ---------------------------------------------


@dataclass(frozen=True)
class ThreadClaim:
    """Who is on a thread: ``.continuity/thread-claims/<thread id>.json``. One file per thread,
    so two clones claiming one thread before either synced edit the same file and the merge
    keeps the first claim (claim_order) and records the other as a conflict: the one who
    claimed later is told at their next sync."""

    id: str  # the thread's id
    session: str | None
    host: str
    by: str
    at: str
    agent: str | None = None
    stole: dict[str, Any] | None = None  # the claim it replaced with --steal: session, host, by, at

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.id,
            "session": self.session,
            "host": self.host,
            "by": self.by,
            "at": self.at,
            "agent": self.agent,
            "stole": self.stole,
        }
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ThreadClaim:
        return cls(
            data["id"], data.get("session"), data["host"], data["by"], data["at"], data.get("agent"), data.get("stole")
        )

    def holder(self) -> str:
        """``Ann <ann@example.com> on host-a (session s-abc, claude)``: the person to ask
        before taking the thread over, where, and which of their sessions holds it."""
        about = ", ".join(x for x in (f"session {self.session}" if self.session else None, self.agent) if x)
        return f"{self.by} on {self.host}" + (f" ({about})" if about else "")


def claim_order(data: bytes) -> tuple[str, bytes]:
    """How a merge orders two claims of one thread made on two clones before either synced:
    by ``at``, the first one first (it wins: whoever claimed first may be at work already),
    then by content. A claim that does not read sorts by its content alone."""
    try:
        at = json.loads(data)["at"]
    except (ValueError, TypeError, KeyError):
        at = ""
    return (at if isinstance(at, str) else "", data)


def same_holder(found: ThreadClaim, session: str | None, host: str, by: str) -> bool:
    """Whether ``found`` is held by this session on this host (without a session: this person
    on this host)."""
    if found.host != host:
        return False
    return found.session == session if (found.session or session) else found.by == by


def held_elsewhere(claims: Mapping[str, ThreadClaim], session: str | None, host: str, by: str) -> list[ThreadClaim]:
    """The thread claims of other sessions, oldest first: what a brief says others hold."""
    return sorted((c for c in claims.values() if not same_holder(c, session, host, by)), key=lambda c: (c.at, c.id))


# How long a thread claim keeps the Stop gate of other sessions off its thread without its
# session handing off: a session that ended long ago without a handoff no longer protects it.
CLAIM_PROTECTS = timedelta(hours=24)


def protected_elsewhere(
    claims: Mapping[str, ThreadClaim], session: str | None, host: str, by: str, at: datetime
) -> set[str]:
    """The threads another live session claimed (within CLAIM_PROTECTS of its claim): the
    Stop gate does not hold this session to them. Its own claims, and unclaimed threads, it
    still does."""
    found = set()
    for claim in held_elsewhere(claims, session, host, by):
        try:
            made = datetime.fromisoformat(claim.at.replace("Z", "+00:00"))
        except ValueError:
            continue  # a claim whose time does not read protects nothing
        if made.tzinfo is None:
            made = made.replace(tzinfo=timezone.utc)
        if at - made <= CLAIM_PROTECTS:
            found.add(claim.id)
    return found


def expired_by_handoff(claims: Mapping[str, ThreadClaim], session: str | None, host: str) -> list[str]:
    """The thread claims a handoff of ``session`` on ``host`` ends (a claim expires when its
    session hands off)."""
    if session is None:
        return []
    return sorted(c.id for c in claims.values() if c.session == session and c.host == host)


def claims_from(stored: Mapping[str, Mapping[str, Any]]) -> dict[str, ThreadClaim]:
    """The thread claims as store.read_thread_claims returns them (validated), by thread id."""
    return {i: ThreadClaim.from_json(d) for i, d in stored.items()}


def claimed_lines(
    claims: Mapping[str, ThreadClaim], threads: Mapping[str, Thread], session: str | None, host: str, by: str
) -> list[str]:
    """What a brief says of the threads other sessions hold: one line each, to leave them be
    (or take one over with ``thread claim ID --steal``)."""
    return [
        f"Claimed elsewhere: {c.id} {threads[c.id].title!r} by {c.holder()} since {c.at[:16].replace('T', ' ')} UTC"
        " (leave it, or: git continuity thread claim " + c.id + " --steal)"
        for c in held_elsewhere(claims, session, host, by)
        if c.id in threads and not ended(threads[c.id])
    ]


def next_or_ready(next_action: str | None, threads: Mapping[str, Thread], blockers: Iterable[Blocker]) -> str:
    """The next action, or when none is set the first thread of the ready queue."""
    if next_action:
        return next_action
    first = next(iter(ready(threads, blockers)), None)
    if first is None:
        return "(none: git continuity next TEXT)"
    queue = f"{first.title} (git continuity ready lists the queue)"
    return hang(f"(none set) ready first: {first.id} ", queue, fold=False)
