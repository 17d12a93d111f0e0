from __future__ import annotations

from dataclasses import replace
from typing import Any

from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import STATUS_WIDTH, Claim, Thread, ago, new_id, now, parse_stamp, shown, stamp
from git_continuity.plugins import verify
from git_continuity.repo import Repo
from git_continuity.store import notes as commit_notes
from git_continuity.store import planning, policy

# The judging modules (closure, stoploss, attempts) and render are imported by the commands
# that use them: `thread add` is a write, and imports are most of its time (issue 13).


def add(
    repo: Repo,
    *,
    stream: str,
    title: str,
    checks: list[str],
    budget: str | None = None,
    after: list[str] | None = None,
    priority: str | None = None,
) -> int:
    """Open a thread; each --check becomes one of its acceptance checks (a claim). --after
    names threads that must be done first; --priority orders the ready queue (0 first)."""
    title = title.strip()
    if not title:
        raise UserError("thread add needs a non-empty title")
    spend = _spend(budget)
    rank = None if priority is None else planning.parse_priority(priority)
    store.require_state(store.snapshot(repo, stream))
    handles = [(text, verify.resolve(repo, text, stream=stream).text) for text in checks]
    moment, who = now(), session.who(repo)
    by, host = who.by, who.host
    made: list[Thread] = []
    made_claims: list[Claim] = []

    def make(snap: store.Snapshot) -> store.Change:
        thread = Thread(
            new_id("thread", store.Taken(snap, store.thread_path)),
            title,
            "open",
            stamp(moment),
            by,
            host,
            **who.stamp(),
            budget=spend,
            after=planning.check_after(store.read_threads(snap), None, after or []) or None,
            priority=rank,
        )
        taken = store.Taken(snap, store.claim_path)
        files: dict[str, bytes | None] = {store.thread_path(thread.id): store.entry_bytes(thread)}
        made_checks: list[Claim] = []
        for written, handle in handles:
            claim = Claim(
                id=new_id("claim", taken),
                text=written,
                added_at=stamp(moment),
                added_by=by,
                host=host,
                handle=handle,
                written=written if written != handle else None,
                thread=thread.id,
                **who.stamp(),
            )
            taken.add(claim.id)
            files[store.claim_path(claim.id)] = store.entry_bytes(claim)
            made_checks.append(claim)
        made[:] = [thread]
        made_claims[:] = made_checks
        listed = "".join(f"\n{h}" for _, h in handles)
        return store.Change(f"thread add {thread.id}: {title}\n\nchecks:{listed or ' none'}", files)

    commit_notes.require_writable(repo, "nothing was written")  # the checks' notes must follow them
    rules = policy.load(repo.work_dir)  # a malformed policy is refused before anything is written
    snap = store.update(repo, stream, make)
    thread = made[0]
    for claim in made_claims:
        commit_notes.claim_named(repo, stream, claim)
    _tell_opened(repo, snap, thread, handles, made_claims, rules)
    return 0


def _tell_opened(
    repo: Repo, snap: store.Snapshot, thread: Thread, handles: list[tuple[str, str]], made: list[Claim], rules: Any
) -> None:
    """What thread add says of the thread it opened: its plan, budget and checks, and the
    checks that cannot guard anything yet."""
    print(hang(f"Thread {thread.id} opened: ", thread.title))
    if thread.after or thread.priority is not None:
        print(f"  {_plan_text(thread)}")
    if thread.budget:
        print(f"  budget {_budget_text(thread.budget)}: the stop-loss blocks it once that is spent")
    for written, handle in handles:
        print(f"  check {handle}" + (f"  (as written: {written})" if written != handle else ""))
    if not handles:
        hint = f"git continuity claim add TEXT --check HANDLE --thread {thread.id}"
        print(f"  no checks yet: it cannot close until one verifies ({hint})")
    for _, handle in handles:
        if handle.startswith("cmd:"):
            from git_continuity.trust import approvals as trust

            if not trust.is_approved(repo, handle[4:]):
                print(f"  {handle} runs only once approved on this machine: {trust.approve_hint(handle[4:])}")
    # Revisions resolved just now: a check that already holds guards nothing (pushed:HEAD
    # when HEAD is already pushed). Say so, so the thread is not closed on work not done.
    live = [c for c in made if verify.is_live(c)]
    holding = [a for a in verify.assess(snap, live, at=now(), policy=rules) if a.derived.state == "verified"]
    for a in holding:
        print(
            f"  warning: {a.claim.handle} already verifies now ({a.derived.observed}), so it guards nothing"
            " yet;\n  name what the work will produce (a tag to come, or add the check once the fix is committed)"
        )


def _spend(budget: str | None) -> dict[str, Any] | None:
    if budget is None:
        return None
    from git_continuity.store import attempts

    return attempts.parse_budget(budget).to_json()


def _plan_text(thread: Thread) -> str:
    after = f", after {', '.join(thread.after)}" if thread.after else ""
    return f"priority {planning.priority_of(thread)}{after}"


def _budget_text(spend: dict[str, Any]) -> str:
    from git_continuity.store import attempts

    return attempts.budget_from_json(spend).text()


def _thread(snap: store.Snapshot, thread_id: str) -> Thread:
    threads = store.read_threads(snap)
    if thread_id not in threads:
        known = ", ".join(sorted(threads)) or "none"
        raise UserError(f"no thread {thread_id!r} in stream '{snap.stream}' (threads: {known})")
    return threads[thread_id]


def set_status(
    repo: Repo,
    *,
    stream: str,
    thread_id: str,
    status: str | None = None,
    budget: str | None = None,
    after: list[str] | None = None,
    no_after: list[str] | None = None,
    priority: str | None = None,
) -> int:
    """Park or reopen a thread, or change what it waits for and its priority. Reopening (open)
    starts its budget's count again from now, and is how a thread the stop-loss blocked comes
    back: only by this explicit command."""
    if status == "done":
        raise UserError(f"a thread becomes done only through its checks: git continuity thread close {thread_id}")
    if status is None and budget is None and not after and not no_after and priority is None:
        raise UserError(
            f"thread set {thread_id}: nothing to set; give a status (open, watching, blocked, waiting),"
            " --after ID, --no-after ID, --priority 0..4 or --budget"
        )
    spend = _spend(budget)
    rank = None if priority is None else planning.parse_priority(priority)
    moment = now()
    was: list[Thread] = []
    became: list[Thread] = []

    def make(snap: store.Snapshot) -> store.Change:
        threads = store.read_threads(snap)
        thread = _thread(snap, thread_id)
        was[:] = [thread]
        if status is None:
            changed = replace(thread)
        else:
            changed = replace(thread, status=status, closed_at=None, closed_by=None, closed_on=None, cancelled=None)  # type: ignore[arg-type]
        changed = _replan(threads, changed, after or [], no_after or [], rank)
        became[:] = [changed]
        if spend is not None:
            changed.budget = spend
        if status == "open":
            changed.blocked = None
            changed.budget_from = stamp(moment)
        body = f"was: {thread.status}" + (" (stop-loss)" if thread.blocked else "")
        if spend is not None:
            body += f"\nbudget: {_budget_text(spend)}"
        if after or no_after or rank is not None:
            body += f"\nplan: {_plan_text(changed)}"
        return store.Change(
            f"thread set {thread_id} {status or 'plan'}: {thread.title}\n\n{body}",
            {store.thread_path(thread_id): store.entry_bytes(changed)},
        )

    store.update(repo, stream, make)
    if status is not None:
        print(f"Thread {thread_id} is {status}.")
    if after or no_after or rank is not None:
        print(f"Thread {thread_id}: {_plan_text(became[0])}.")
    kept = spend or (was[0].budget if was else None)
    if status == "open" and kept:
        print(f"  its budget ({_budget_text(kept)}) counts attempts from now on")
    return 0


def _replan(
    threads: dict[str, Thread], thread: Thread, after: list[str], no_after: list[str], rank: int | None
) -> Thread:
    """The thread with --after added, --no-after removed and --priority set; a UserError names
    an unknown or cancelled thread, an --after it does not have, or a cycle."""
    current = list(thread.after or [])
    for other in no_after:
        if other not in current:
            has = ", ".join(current) or "none"
            raise UserError(
                f"--no-after {other}: thread {thread.id} does not wait for it (after: {has}); nothing was written"
            )
    kept = [a for a in current if a not in no_after]
    new = planning.check_after(threads, thread.id, after, keep=kept) if after else kept
    return replace(thread, after=new or None, priority=thread.priority if rank is None else rank)


def reopen(repo: Repo, *, stream: str, thread_id: str) -> int:
    """A done thread is open again: its checks must verify anew before it closes."""
    moment = now()
    was: list[Thread] = []

    def make(snap: store.Snapshot) -> store.Change:
        thread = _thread(snap, thread_id)
        if thread.status != "done":
            raise UserError(
                f"thread {thread_id} is {thread.status}, not done: only a done thread is reopened "
                f"(git continuity thread set {thread_id} open parks or unparks one); nothing was written"
            )
        was[:] = [thread]
        changed = replace(
            thread, status="open", closed_at=None, closed_by=None, closed_on=None, accepted_withdrawn=None
        )
        changed.blocked, changed.budget_from = None, stamp(moment)
        closed = f" by {thread.closed_by[:7]}" if thread.closed_by else ""
        return store.Change(
            f"thread reopen {thread_id}: {thread.title}\n\nwas: done (closed {thread.closed_at}{closed})",
            {store.thread_path(thread_id): store.entry_bytes(changed)},
        )

    store.update(repo, stream, make)
    print(hang(f'Thread {thread_id} "', f'{was[0].title}" is open again: it closes once every check verifies now.'))
    return 0


def close(repo: Repo, *, stream: str, thread_id: str, online: bool, accept_withdrawn: str | None = None) -> int:
    """Close a thread only when every check verifies now; exit 1 listing them otherwise. A
    thread whose checks were withdrawn while it was open closes only with ``accept_withdrawn``."""
    from git_continuity.gate import closure

    if accept_withdrawn is not None and not accept_withdrawn.strip():
        raise UserError("--accept-withdrawn needs a reason: it is recorded on the thread; nothing was written")
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    store.require_well_formed(snap)
    thread = _thread(snap, thread_id)
    if thread.status == "done":
        from git_continuity.view import assessed as view

        undone = view.assess(snap, thread_ids=[thread.id], with_waiting=False).thread(thread.id).undone
        if undone:
            print(
                f"Thread {thread_id} is done, but no longer holds: {undone}.\n"
                f"Reopen it, then close it once its checks verify again: git continuity thread reopen {thread_id}"
            )
            return 1
        print(f"Thread {thread_id} is already done (closed {thread.closed_at}).")
        return 0
    claims = store.read_claims(snap).values()
    if accept_withdrawn is not None and not any(c.thread == thread.id and c.withdrawn for c in claims):
        raise UserError(f"--accept-withdrawn: thread {thread_id} has no withdrawn check; nothing was written")
    moment = now()
    (verdict,) = closure.judge(
        snap,
        [thread],
        claims,
        at=moment,
        policy=policy.load(repo.work_dir),
        online=online,
        accept=accept_withdrawn.strip() if accept_withdrawn else None,
    )
    closure.record(snap, [verdict], at=moment, close=True, via="close")
    if verdict.ok and verdict.withdrawn:
        n = len(verdict.withdrawn)
        said = f'{thread.title}" is done with {n} withdrawn check{"s" if n != 1 else ""}: every other check'
        print(hang(f'Thread {thread_id} "', f"{said} verified now; the evidence and your reason are recorded."))
    elif verdict.ok:
        print(
            hang(
                f'Thread {thread_id} "', f'{thread.title}" is done: every check verified now; the evidence is recorded.'
            )
        )
    else:
        print(hang(f'Thread {thread_id} "', f'{thread.title}" cannot close: {verdict.why_not()}.'))
    lines = verdict.lines()
    if lines:  # a thread with no checks has none to list (no stray blank line)
        print("\n".join(lines))
    return 0 if verdict.ok else 1


def list_threads(repo: Repo, *, stream: str, statuses: list[str] | None, as_json: bool) -> int:
    """Every thread (or those with the given statuses), oldest first, with its checks' tally."""
    from git_continuity.render import text as render
    from git_continuity.view import assessed as view
    from git_continuity.view import signed_items

    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    threads = [tv for tv in view.assess(snap).threads if not statuses or tv.thread.status in statuses]
    if as_json:
        render.emit_json(
            "thread-list",
            {"stream": stream, "threads": [render.thread_json(tv) for tv in threads], "problems": snap.problems},
            signed_items.marker(repo, stream, snap.commit),
        )
    else:
        for tv in threads:
            t = tv.thread
            undone = "; no longer holds" if tv.undone else ""
            print(hang(f"  {t.status.ljust(STATUS_WIDTH)}  {t.id}  ", f"{t.title}  ({tv.tally()}{undone})"))
        if not threads:
            which = " or ".join(dict.fromkeys(statuses or []))
            print(f"No {which} threads." if which else 'No threads: git continuity thread add "…" --check HANDLE')
        for p in snap.problems:
            print(f"problem: {p}")
    return 2 if snap.problems else 0


def show(repo: Repo, *, stream: str, thread_id: str, as_json: bool) -> int:
    """One thread: who opened it and when, its status, and each check's state now."""
    from git_continuity.render import text as render
    from git_continuity.view import assessed as view
    from git_continuity.view import labels

    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    thread = _thread(snap, thread_id)
    tv = view.assess(snap, thread_ids=[thread.id]).thread(thread.id)
    checks = tv.checks
    if as_json:
        found = {**render.thread_json(tv), "added_by": thread.added_by, "host": thread.host}
        found.update({k: v for k, v in (("session", thread.session), ("agent", thread.agent)) if v is not None})
        render.emit_json("thread-show", {"stream": stream, "thread": found, "problems": snap.problems})
        return 2 if snap.problems else 0
    at = now()
    opened = render.where(thread.added_by, thread.host, thread.agent, thread.session)
    print(hang(f"Thread {thread.id}  ", thread.title))
    print(f"  status  {labels.thread_standing(tv)}")
    print(f"  opened  {shown(thread.added_at)} UTC ({ago(parse_stamp(thread.added_at), at)}) by {opened}")
    if thread.closed_at:
        by = f" by commit {thread.closed_by[:7]}" if thread.closed_by else ""
        print(f"  closed  {shown(thread.closed_at)} UTC ({ago(parse_stamp(thread.closed_at), at)}){by}")
    if thread.after or thread.priority is not None:
        print(f"  plan    {_plan_text(thread)}")
    if (why := planning.cancelled_why(thread)) is not None:
        print(hang("  why     ", why))
    if tv.waiting is not None:
        print(f"  {tv.waiting.text(at)}")
    for line in labels.withdrawn_lines(tv):
        print(f"  {line}")
    if checks:
        print(f"Checks ({tv.tally()} now)")
        print("\n".join(render.claim_lines(checks)))
    else:
        hint = f"git continuity claim add TEXT --check HANDLE --thread {thread.id}"
        print(f"Checks: none yet, so it cannot close until one verifies ({hint})")
    for p in snap.problems:
        print(f"problem: {p}")
    return 2 if snap.problems else 0
