from __future__ import annotations

from typing import Any

from git_continuity import closure, policy, render, store, verify
from git_continuity.model import now
from git_continuity.repo import Repo


def _verdict_json(v: closure.Verdict) -> dict[str, Any]:
    return {
        "id": v.thread.id,
        "title": v.thread.title,
        "status": v.thread.status,
        "ok": v.ok,
        "reason": None if v.ok else v.why_not(),
        "checks": [render.claim_json(a) for a in v.checks],
        "policy_checks": [
            {"handle": a.claim.handle, "state": a.derived.state, "observed": a.derived.observed}
            for a in v.policy_checks
        ],
    }


def check(repo: Repo, *, stream: str, closing: bool, online: bool, as_json: bool) -> int:
    """The state is well-formed; with --closing, every open thread's checks verify now.

    The gate an agent's stop hook calls: exit 1 says why it may not stop yet. Threads parked
    as waiting, watching or blocked do not hold it; open ones whose checks verify are closed.
    """
    snap = store.snapshot(repo, stream)
    if snap.commit is None:
        if as_json:
            render.emit_json(
                "check",
                {
                    "stream": stream,
                    "closing": closing,
                    "ok": True,
                    "closed": [],
                    "threads": [],
                    "problems": [],
                    "message": f"no continuity state for stream '{stream}'",
                },
            )
        else:
            print(f"No continuity state for stream '{stream}' here: nothing to check.")
        return 0
    verdicts, closed, failing, problems = gate(snap, closing=closing, online=online)
    ok = not problems and not failing
    if as_json:
        render.emit_json(
            "check",
            {
                "stream": stream,
                "closing": closing,
                "ok": ok,
                "closed": closed,
                "threads": [_verdict_json(v) for v in verdicts],
                "problems": problems,
                "message": _summary(closing, verdicts, failing, problems),
            },
        )
    else:
        print("\n".join(report(closing, verdicts, failing, problems)))
    if problems:
        return 2
    return 1 if failing else 0


def gate(
    snap: store.Snapshot, *, closing: bool, online: bool
) -> tuple[list[closure.Verdict], list[str], list[closure.Verdict], list[str]]:
    """(verdicts, threads closed now, verdicts that fail, problems) of the gate on a stream
    that has state: shared by this command and an agent's stop hook."""
    problems = store.all_problems(snap)
    threads = store.read_threads(snap)
    claims = store.read_claims(snap)
    moment = now()
    rules = policy.load(snap.repo.work_dir)
    verdicts: list[closure.Verdict] = []
    closed: list[str] = []
    if not problems and closing:
        chosen = sorted((t for t in threads.values() if t.status == "open"), key=lambda t: (t.added_at, t.id))
        verdicts = closure.judge(snap, chosen, claims.values(), at=moment, policy=rules, online=online)
        closure.record(snap, verdicts, at=moment, close=True)
        closed = [v.thread.id for v in verdicts if v.ok]
    elif not problems:
        # A thread marked done must still hold: its live checks are re-derived now.
        done = [t for t in threads.values() if t.status == "done"]
        for t in sorted(done, key=lambda t: (t.added_at, t.id)):
            own = [c for c in claims.values() if c.thread == t.id]
            assessed = verify.assess(snap, own, at=moment, policy=rules)
            verdicts.append(closure.Verdict(t, assessed, []))
    failing = [
        v for v in verdicts if not v.ok and (closing or any(a.derived.state == "contradicted" for a in v.checks))
    ]
    return verdicts, closed, failing, problems


def report(
    closing: bool, verdicts: list[closure.Verdict], failing: list[closure.Verdict], problems: list[str]
) -> list[str]:
    """The gate's verdict for people (and for an agent's stop hook): what fails and why."""
    lines = [_summary(closing, verdicts, failing, problems)]
    for v in failing:
        lines.append(f'\n{v.thread.id} "{v.thread.title}": {v.why_not()}')
        lines += v.lines()
    lines += [f"problem: {p}" for p in problems]
    if closing and failing:
        lines.append(
            "\nMake these checks pass, or park a thread that is not finished with: "
            "git continuity thread set ID waiting|watching|blocked"
        )
    return lines


def _summary(
    closing: bool, verdicts: list[closure.Verdict], failing: list[closure.Verdict], problems: list[str]
) -> str:
    if problems:
        return f"The state is malformed ({len(problems)} problem{'s' if len(problems) != 1 else ''})."
    if not closing:
        if failing:
            return f"{len(failing)} done thread{'s no longer hold' if len(failing) != 1 else ' no longer holds'}."
        return "The state is well-formed; every done thread still holds."
    if not verdicts:
        return "No open threads: none waits to be closed."
    if failing:
        ids = ", ".join(v.thread.id for v in failing)
        return f"Not done: {len(failing)} open thread{'s' if len(failing) != 1 else ''} ({ids}) not verified now."
    return f"Done: every open thread verified now and closed ({', '.join(v.thread.id for v in verdicts)})."
