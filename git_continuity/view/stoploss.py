"""Recording attempts, and the stop-loss that blocks a thread whose budget is spent.

Every writer that dereferences a thread's checks (``verify``, the gate of ``check
--closing`` and of an agent's Stop hook, ``thread close``) hands its threads and their
assessed checks to ``record``, which returns the files to add to the same commit: one
attempt per thread that did not verify, and, when that attempt spends the thread's budget,
the thread marked ``blocked`` with the reason ``stop-loss`` and the evidence of what was
observed. Reopening is explicit: ``git continuity thread set ID open [--budget …]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import session
from git_continuity.clone.machine import exhaustion
from git_continuity.display import hang
from git_continuity.model import Thread, ago, new_id, parse_stamp, shown, stamp
from git_continuity.plugins import verify
from git_continuity.plugins.verify import Assessed
from git_continuity.store import attempts
from git_continuity.store.attempts import Attempt, AttemptCheck, Course
from git_continuity.store.policy import Policy

# Threads whose checks failing is no attempt: done ones (their checks are re-derived, not
# tried) and those waiting on someone else.
NOT_TRIED = ("done", "waiting")


@dataclass(frozen=True)
class Stopped:
    thread: Thread  # as blocked by the stop-loss
    course: Course


@dataclass
class Recorded:
    files: dict[str, bytes | None]
    attempts: list[Attempt]
    stopped: list[Stopped]


def budget_of(thread: Thread, rules: Policy) -> attempts.Budget:
    """The thread's own budget, else the policy's (none by default)."""
    return attempts.budget_from_json(thread.budget) or attempts.budget_from_json(rules.budget)


def course_of(snap: store.Snapshot, thread: Thread, rules: Policy, extra: Sequence[Attempt] = ()) -> Course:
    return attempts.course(
        [*store.read_attempts(snap, thread.id), *extra],
        budget=budget_of(thread, rules),
        budget_from=thread.budget_from,
        stall_attempts=rules.stall_attempts,
        stall_sessions=rules.stall_sessions,
    )


def _attempt(
    thread: Thread, checks: Sequence[Assessed], *, at: datetime, via: str, who: session.Who, taken: set[str]
) -> Attempt | None:
    """The attempt of one dereference, or None: nothing was dereferenced now, there is
    nothing with a handle to try, or every check verified."""
    handled = [a for a in checks if a.claim.handle and a.derived.state != "prose"]
    if not handled or all(a.derived.state == "verified" for a in handled):
        return None
    if attempts.waiting_on([a.derived for a in handled]):
        return None  # waiting on someone else: retrying would change nothing, so it is no attempt
    if not any(a.observation is not None for a in handled):
        return None  # judged from old evidence only: nothing was tried now
    entry = new_id("attempt", taken)
    taken.add(entry)
    found = []
    for a in handled:
        handle = a.claim.handle or ""
        seen = a.derived.observed
        found.append(
            AttemptCheck(
                a.claim.id,
                handle,
                a.derived.state,
                attempts.fingerprint(handle, a.derived.state, seen),
                attempts.kept(seen),
                exhausted=exhaustion(seen) if a.derived.state != "verified" else None,
            )
        )
    return Attempt(entry, thread.id, stamp(at), via, who.host, tuple(found), session=who.session, agent=who.agent)


def record(
    snap: store.Snapshot,
    tried: Sequence[tuple[Thread, Sequence[Assessed]]],
    *,
    at: datetime,
    via: str,
    rules: Policy,
    evidence: Mapping[str, str] | None = None,
    who: session.Who | None = None,
) -> Recorded:
    """The attempts of these threads' dereference now, and the stop-loss of those whose
    budget they spend. ``evidence`` maps a claim to the evidence entry the caller records
    for this dereference; the stop-loss records the rest of what it rests on."""
    who = who or session.who(snap.repo)
    evidence = dict(evidence or {})
    out = Recorded({}, [], [])
    taken: set[str] = set()
    where: tuple[str | None, str | None] | None = None
    for thread, checks in tried:
        if thread.status in NOT_TRIED:
            continue
        attempt = _attempt(thread, checks, at=at, via=via, who=who, taken=taken)
        if attempt is None:
            continue
        if where is None:  # the work tree's tree is hashed once, and only when an attempt is kept
            head = git.head_commit(snap.repo)
            where = (str(head) if head else None, git.worktree_tree(snap.repo))
        proven = dict(evidence)
        stopping = False
        if thread.status == "open":
            course = course_of(snap, thread, rules, [attempt])
            stopping = bool(course.spent)
        if stopping:
            for a in checks:  # the stop-loss is recorded with the evidence of what it saw
                if a.claim.id not in proven and (made := verify.evidence_for(a, at, taken, who)) is not None:
                    out.files[store.evidence_path(made, at)] = store.entry_bytes(made)
                    proven[a.claim.id] = made.id
        checks_kept = tuple(replace(c, evidence=proven.get(c.claim)) for c in attempt.checks)
        attempt = replace(attempt, checks=checks_kept, commit=where[0], tree=where[1])
        out.attempts.append(attempt)
        out.files[store.attempt_path(attempt, at)] = store.attempt_bytes(attempt)
        if stopping:
            course = course_of(snap, thread, rules, [attempt])
            failing = [c for c in attempt.checks if c.failing]
            blocked = replace(
                thread,
                status="blocked",
                closed_at=None,
                closed_by=None,
                closed_on=None,
                blocked={
                    "reason": attempts.STOP_LOSS,
                    "at": stamp(at),
                    "spent": list(course.spent),
                    "attempts": [a.id for a in course.counted],
                    "evidence": [c.evidence for c in attempt.checks if c.evidence],
                    "observed": attempts.quote(failing[0].observed) if failing else "",
                },
            )
            if any(part.startswith("resource exhaustion") for part in course.spent):
                what = " and ".join(dict.fromkeys(a.exhausted for a in course.counted if a.exhausted))
                assert blocked.blocked is not None
                blocked.blocked["note"] = attempts.MACHINE_NOTE.format(what=what)
            out.files[store.thread_path(thread.id)] = store.entry_bytes(blocked)
            out.stopped.append(Stopped(blocked, course))
    return out


def waiting_of(snap: store.Snapshot, checks: Sequence[Assessed]) -> attempts.Waiting | None:
    """Whether a thread's checks wait on someone else now, and since when: for each waiting
    check, the first observation of its latest unbroken run of waiting evidence; the earliest
    of them. Derived, never stored."""
    on = attempts.waiting_on([a.derived for a in checks])
    if not on:
        return None
    since: list[str] = []
    claims: list[str] = []
    for a in checks:
        if a.derived.waiting is None or a.derived.checked_at is None:
            continue
        first = a.derived.checked_at
        for e in reversed(store.evidence_history(snap, a.claim.id)):
            if parse_stamp(e.checked_at) > parse_stamp(first):
                continue  # written after what is shown now (a clock ahead): it says nothing of before
            if e.handle != a.claim.handle or e.waiting != a.derived.waiting:
                break
            first = e.checked_at
        since.append(first)
        claims.append(a.claim.id)
    return attempts.Waiting(on, min(since, key=parse_stamp), tuple(claims)) if since else None


def message(recorded: Recorded) -> str:
    """Lines for the commit message that adds them."""
    lines = [f"attempt {a.id} on {a.thread} ({a.via}): {len(a.failing)} failing" for a in recorded.attempts]
    lines += [f"stop-loss: {s.thread.id} blocked, budget spent ({', '.join(s.course.spent)})" for s in recorded.stopped]
    return "\n".join(lines)


def stopped_lines(stopped: Sequence[Stopped]) -> list[str]:
    """What people and agents are told when the stop-loss fires."""
    lines = []
    for s in stopped:
        t = s.thread
        note = (t.blocked or {}).get("note")
        if note:
            lines.append(
                f'Stop-loss: {t.id} "{t.title}" is now blocked: {note}.'
                f"\n  Stop retrying it as it is; reopen it with the new shape: git continuity thread set {t.id} open"
            )
            continue
        lines.append(
            f'Stop-loss: {t.id} "{t.title}" is now blocked: its budget is spent ({", ".join(s.course.spent)}).'
            f"\n  Stop retrying it. Reopen it only with a new approach: git continuity thread set {t.id} open"
            " --budget attempts=N (or add a new check)."
        )
    return lines


def lead_line(thread: Thread, course: Course, at: datetime) -> str | None:
    """What a brief leads with for a thread that stalled or that the stop-loss stopped (None
    for the others): how long it made no progress, what it saw each time, its budget, and
    the ways on."""
    if not (course.stalled or thread.blocked) or not course.run:
        return None
    run = course.run
    first = run[0]
    failing = [c for c in run[-1].checks if c.failing]
    seen = f'"{attempts.quote(failing[0].observed)}"' if failing else "(nothing failing)"
    more = f" (and {len(failing) - 1} more failing check{'s' if len(failing) > 2 else ''})" if len(failing) > 1 else ""
    when = f"{shown(first.at)} UTC ({ago(parse_stamp(first.at), at)})"
    sessions = course.run_sessions
    head = (
        f"{thread.id} made no progress in {len(run)} attempt{'s' if len(run) != 1 else ''} over {sessions} "
        f"session{'s' if sessions != 1 else ''} since {when}; "
        + ("same observation each time: " if len(run) > 1 else "observed: ")
        + seen
        + more
    )
    if thread.blocked:
        spent = f"budget spent ({', '.join(thread.blocked.get('spent') or course.spent)}), blocked by the stop-loss"
    elif course.spent:
        spent = f"budget spent ({', '.join(course.spent)})"
    elif course.budget:
        used = course.used()
        spent = f"budget {course.budget.text()}, spent so far: {used['attempts']} attempts, {used['sessions']} sessions"
    else:
        spent = "no budget set"
    leave = (
        'leave it blocked and say why (git continuity journal add "…")'
        if thread.status == "blocked"
        else f'leave it blocked with why (git continuity thread set {thread.id} blocked; journal add "…")'
    )
    ways = (
        f"ways on: change the approach (git continuity thread set {thread.id} open --budget …, or a new check) "
        f"or {leave}"
    )
    return f"{head}; {spent}; {ways}"


def stalled_leads(
    snap: store.Snapshot, threads: Sequence[Thread], rules: Policy, at: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """Each thread that made no progress over the policy's attempts and sessions, or that
    the stop-loss blocked: the line a brief leads with, and its JSON (orient's ``stalled``)."""
    found = []
    for t in threads:
        if t.status in NOT_TRIED:
            continue  # waiting on someone else: nothing is being retried
        course = course_of(snap, t, rules)
        line = lead_line(t, course, at)
        if line is not None:
            data = {
                "thread": t.id,
                "title": t.title,
                "status": t.status,
                "stalled": course.stalled,
                "stopped": bool(t.blocked),
                "attempts": len(course.run),
                "sessions": course.run_sessions,
                "since": course.run[0].at,
                "spent": list(course.spent),
                "text": line,
            }
            found.append((line, data))
    return found


def waiting_leads(
    threads: Mapping[str, Thread], waiting: Mapping[str, attempts.Waiting], at: datetime
) -> list[tuple[str, dict[str, Any]]]:
    """Each thread waiting on someone else: the line a brief shows (since when, and not to
    retry it), and its JSON (orient's ``waiting``)."""
    found = []
    for tid, w in waiting.items():
        t = threads[tid]
        data = {"thread": t.id, "title": t.title, "status": t.status, **w.to_json(at)}
        found.append((hang(f'{t.id} "', f'{t.title}": {w.text(at)}', fold=False), data))
    return found
