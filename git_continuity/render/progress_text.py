"""``progress`` as text and as JSON: per thread, its attempts over time, when what it fails
changed, its budget and what is spent, and whether it is stalled (from view/progress.py)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from git_continuity.display import cut, hang
from git_continuity.model import ago, parse_stamp, shown
from git_continuity.render.text import stop_loss_line
from git_continuity.store import attempts
from git_continuity.store.attempts import Attempt, Course, Waiting

if TYPE_CHECKING:
    from git_continuity.store.policy import Policy
    from git_continuity.view.assessed import ThreadView

WHOLE = "git continuity progress --json"


def _note(checks: int, course: Course, waiting: Waiting | None = None) -> str | None:
    if not checks:
        return "no checks: nothing is tried, so it makes no attempts and never stalls"
    if not course.attempts:
        if waiting is not None:
            return "no attempts yet: waiting on someone else counts none"
        return "no attempts yet: its checks never failed when dereferenced"
    return None


def _attempt_json(a: Attempt, changed: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": a.id,
        "at": a.at,
        "via": a.via,
        "session": a.session,
        "host": a.host,
        "commit": a.commit,
        "tree": a.tree,
        "changed": changed,
        "failing": [
            {
                "claim": c.claim,
                "handle": c.handle,
                "result": c.result,
                "fingerprint": c.fingerprint,
                "observed": c.observed,
            }
            for c in a.checks
            if c.failing
        ],
    }
    return data


def _checks(tv: ThreadView) -> int:
    """How many of the thread's checks have a handle (prose tries nothing)."""
    return sum(1 for a in tv.checks if a.claim.handle)


def thread_json(tv: ThreadView, course: Course, at: datetime) -> dict[str, Any]:
    t, waiting, checks = tv.thread, tv.waiting, _checks(tv)
    changes = {a.id for a in course.changes}
    return {
        "id": t.id,
        "title": t.title,
        "status": t.status,
        "standing": tv.standing,
        "undone": tv.undone,
        "checks": checks,
        "note": _note(checks, course, waiting),
        "attempts": [_attempt_json(a, a.id in changes) for a in course.attempts],
        "changes": [a.at for a in course.changes],
        "stalled": course.stalled and waiting is None,
        "waiting": waiting.to_json(at) if waiting else None,
        "run": {
            "attempts": len(course.run),
            "sessions": course.run_sessions,
            "since": course.run[0].at if course.run else None,
        },
        "budget": course.budget.to_json() or None,
        "budget_from": t.budget_from,
        "used": course.used(),
        "spent": list(course.spent),
        "blocked": t.blocked,
    }


def thread_lines(tv: ThreadView, course: Course, rules: Policy, at: datetime) -> list[str]:
    t, waiting, checks = tv.thread, tv.waiting, _checks(tv)
    lines = [hang(f"{t.id}  ", f"{cut(t.title, WHOLE)}  ({t.status})")]
    if tv.undone:
        lines.append(f"  no longer holds: {tv.undone}")
    if waiting is not None:
        lines.append(f"  {waiting.text(at)}")
    note = _note(checks, course, waiting)
    if note:
        return [*lines, f"  {note}"]
    used = course.used()
    if course.budget:
        spent = f"; spent: {', '.join(course.spent)}" if course.spent else ""
        lines.append(
            f"  budget   {course.budget.text()}; used {used['attempts']} attempts in {used['sessions']} sessions "
            f"over {used['time']}{spent}"
        )
    else:
        lines.append(f"  budget   none (used {used['attempts']} attempts in {used['sessions']} sessions)")
    if t.blocked:
        lines.append(f"  {stop_loss_line(t)}")
    run = course.run
    since = f"{shown(run[0].at)} UTC ({ago(parse_stamp(run[0].at), at)})"
    if course.stalled and waiting is None:
        lines.append(
            f"  stalled  the same failing set for {len(run)} attempts over {course.run_sessions} sessions since {since}"
        )
    else:
        lines.append(
            f"  moving   {len(course.changes)} change{'s' if len(course.changes) != 1 else ''} of what fails; "
            f"the latest set for {len(run)} attempt{'s' if len(run) != 1 else ''} since {since} (stalled after "
            f"{rules.stall_attempts} attempts over {rules.stall_sessions} sessions)"
        )
    changes = {a.id for a in course.changes}
    lines.append(f"  attempts ({len(course.attempts)}, oldest first)")
    for a in course.attempts:
        failing = [c for c in a.checks if c.failing]
        mark = "changed" if a.id in changes else "same"
        where = a.session or f"host {a.host}"
        lines.append(
            f"    {shown(a.at)}  {a.via.ljust(6)}  {where}  {len(failing)} failing  {mark}"
            + (f': "{attempts.quote(failing[0].observed)}"' if failing and a.id in changes else "")
        )
    return lines
