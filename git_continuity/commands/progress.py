"""``git continuity progress [THREAD]``: per thread, its attempts over time, when what it
fails changed, its budget and what is spent, and whether it is stalled. Derived from the
attempts (store/attempts.py), never typed in."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from git_continuity import store
from git_continuity.display import cut, hang
from git_continuity.errors import UserError
from git_continuity.model import Thread, ago, now, parse_stamp, shown
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import attempts, policy
from git_continuity.store.attempts import Attempt, Course, Waiting
from git_continuity.view import assessed as view
from git_continuity.view import signed_items, stoploss

WHOLE = "git continuity progress --json"


def progress(repo: Repo, *, stream: str, thread_id: str | None, as_json: bool, html: str | None = None) -> int:
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
    seen = view.assess(snap, at=at, policy=rules, thread_ids=[thread_id] if thread_id else None)
    views = {tv.thread.id: tv for tv in seen.threads if thread_id or tv.thread.status != "done" or tv.undone}
    chosen = [tv.thread for tv in views.values()]
    checked = {t.id: sum(1 for a in views[t.id].checks if a.claim.handle) for t in chosen}
    courses = {t.id: stoploss.course_of(snap, t, rules) for t in chosen}
    waiting = {i: tv.waiting for i, tv in views.items() if tv.waiting is not None}
    if html is not None:
        from pathlib import Path

        from git_continuity import atomic
        from git_continuity.render import progress_html

        target = Path(html)
        folder = target.parent
        if not folder.is_dir():
            # A typo in the path gets an error, not new folders.
            why = f"{folder} is not a folder" if folder.exists() else f"the folder {folder} does not exist"
            raise UserError(f"--html {html}: {why}; nothing was written")
        try:
            atomic.write(target, progress_html.page(stream, [(t, courses[t.id]) for t in chosen], waiting))
        except OSError as error:
            raise UserError(f"--html {html}: cannot write it: {error.strerror or error}") from None
        count = sum(len(c.attempts) for c in courses.values())
        print(f"Wrote {html}: {len(chosen)} thread{'s' if len(chosen) != 1 else ''}, {count} attempts.")
    elif as_json:
        render.emit_json(
            "progress",
            {
                "stream": stream,
                "stalled_after": {"attempts": rules.stall_attempts, "sessions": rules.stall_sessions},
                "threads": [_thread_json(views[t.id], courses[t.id], checked[t.id], at) for t in chosen],
                "problems": snap.problems,
            },
            signed_items.marker(repo, stream, snap.commit),
        )
    else:
        lines: list[str] = []
        for t in chosen:
            lines += [
                *_thread_lines(t, courses[t.id], checked[t.id], rules, at, waiting.get(t.id), views[t.id].undone),
                "",
            ]
        if not chosen:
            lines = ["No threads that are not done: nothing is being tried.", ""]
        lines += [f"problem: {p}" for p in snap.problems]
        print("\n".join(lines).rstrip("\n"))
    return 2 if snap.problems else 0


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


def _thread_json(tv: view.ThreadView, course: Course, checks: int, at: datetime) -> dict[str, Any]:
    t, waiting = tv.thread, tv.waiting
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


def _thread_lines(
    t: Thread,
    course: Course,
    checks: int,
    rules: policy.Policy,
    at: datetime,
    waiting: Waiting | None,
    undone: str | None = None,
) -> list[str]:
    lines = [hang(f"{t.id}  ", f"{cut(t.title, WHOLE)}  ({t.status})")]
    if undone:
        lines.append(f"  no longer holds: {undone}")
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
        lines.append(f"  {render.stop_loss_line(t)}")
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
