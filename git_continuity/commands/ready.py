"""`git continuity ready`: the open threads to take up now, by priority then age, and the open
threads that wait (for other threads, or held by a blocker)."""

from __future__ import annotations

from typing import Any

from git_continuity import display, store
from git_continuity.errors import UserError
from git_continuity.repo import Repo
from git_continuity.store import planning


def ready(repo: Repo, *, stream: str, as_json: bool) -> int:
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    packet = store.read_packet(snap)
    if packet is None:
        raise UserError("the packet is malformed:\n  " + "\n  ".join(snap.problems))
    threads = store.read_threads(snap)
    standings = planning.plan(threads, packet.blockers)
    claims = planning.claims_from(store.read_thread_claims(snap))
    if as_json:
        from git_continuity.render import text as render
        from git_continuity.view import signed_items

        render.emit_json(
            "ready",
            {
                "stream": stream,
                "ready": [_item(s, claims) for s in standings if s.ready],
                "waiting": [_item(s, claims) for s in standings if not s.ready],
                "problems": snap.problems,
            },
            signed_items.marker(repo, stream, snap.commit),
        )
        return 2 if snap.problems else 0
    for line in lines(standings, claims):
        print(line)
    for p in snap.problems:
        print(f"problem: {p}")
    return 2 if snap.problems else 0


def lines(standings: list[planning.Standing], claims: dict[str, planning.ThreadClaim]) -> list[str]:
    """The ready queue, then what waits, as `ready` prints them."""
    first = [s for s in standings if s.ready]
    rest = [s for s in standings if not s.ready]
    out = [f"Ready ({len(first)}), by priority then age:" if first else "Ready: none"]
    out += [_line(s, claims, None) for s in first]
    if not first and not rest:
        out[0] = 'Ready: none; no open threads (git continuity thread add "…" --check HANDLE)'
    if rest:
        out += ["", f"Waiting ({len(rest)}):"]
        out += [_line(s, claims, s.why_not()) for s in rest]
    return out


def _line(s: planning.Standing, claims: dict[str, planning.ThreadClaim], why: str | None) -> str:
    t = s.thread
    notes = [why] if why else []
    if t.id in claims:
        notes.append(f"claimed by {claims[t.id].holder()}")
    tail = f"  ({'; '.join(notes)})" if notes else ""
    return display.hang(f"  P{planning.priority_of(t)}  {t.id}  ", t.title + tail)


def _item(s: planning.Standing, claims: dict[str, planning.ThreadClaim]) -> dict[str, Any]:
    t = s.thread
    found: dict[str, Any] = {
        "id": t.id,
        "title": t.title,
        "priority": planning.priority_of(t),
        "added_at": t.added_at,
        "after": list(t.after or []),
        "waits_for": s.waits_for,
        "held_by": s.held_by,
    }
    if t.id in claims:
        found["claim"] = claims[t.id].to_json()
    return found
