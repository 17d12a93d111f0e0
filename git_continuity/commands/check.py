from __future__ import annotations

from typing import Any

from git_continuity import store
from git_continuity.gate import closure
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.view import signed_items


def _verdict_json(v: closure.Verdict, gate: closure.Gate) -> dict[str, Any]:
    waiting = [w for verdict, w in gate.waiting if verdict is v]
    found = {
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
    if waiting:  # not done, nothing to retry: it waits on someone else
        found["waiting"] = waiting[0].to_json(gate.at)
    return found


def check(repo: Repo, *, stream: str, closing: bool, online: bool, as_json: bool) -> int:
    """The state is well-formed, every done thread still holds; with --closing, every open
    thread's checks verify now. It writes nothing: not even a thread whose checks verify is
    closed (that is `thread close`).

    The gate an agent's stop hook asks: exit 1 says why it may not stop yet. Threads parked
    as waiting, watching or blocked do not hold it.
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
                    "threads": [],
                    "problems": [],
                    "message": f"no continuity state for stream '{stream}'",
                },
            )
        else:
            print(f"No continuity state for stream '{stream}' here: nothing to check.")
        return 0
    result = closure.gate(snap, closing=closing, online=online)
    # Commits that claim to close a thread no gate judged (made where the hooks are missing).
    unjudged = [] if result.problems else _unjudged(repo, snap)
    if as_json:
        render.emit_json(
            "check",
            {
                "stream": stream,
                "closing": closing,
                "ok": result.exit_code == 0,
                "threads": [_verdict_json(v, result) for v in result.verdicts],
                "problems": result.problems,
                "unjudged": unjudged,
                "message": result.summary(),
            },
            signed_items.marker(repo, stream, snap.commit),
        )
    else:
        print("\n".join(result.report()))
        if unjudged:
            print("\nNot judged by any gate:\n" + "\n".join(f"  {line}" for line in unjudged))
    return result.exit_code


def _unjudged(repo: Repo, snap: store.Snapshot) -> list[str]:
    from git_continuity.clone import gate_presence
    from git_continuity.store import policy

    threads = store.read_threads(snap)
    return gate_presence.unjudged(repo, threads, policy.load(repo.work_dir).closing_keywords) if threads else []
