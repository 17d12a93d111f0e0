"""The one wording of what a view found (view.py): where a claim's state comes from, a
thread's standing, its withdrawn checks, a done thread that no longer holds, a clone without
its gate. Every reader (status, orient, handoff, progress, thread show, check, the gates, MCP)
says these through here, so they cannot word them apart.

Standard library only at run time: render and the readers import it; the types are named for
the checker alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_continuity.verify import Assessed
    from git_continuity.view import Origin, ThreadView, View


def origin_of(a: Assessed) -> Origin:
    """Where a claim's state comes from: re-derived here now, evidence recorded on this
    clone, evidence another clone or a CI run reported, or nothing (prose, never checked)."""
    if a.claim.handle is None or a.derived.checked_at is None:
        return "none"
    if a.observation is not None:
        return "now"
    return "reported" if a.derived.elsewhere else "recorded"


def origin_label(a: Assessed) -> str:
    """The one wording of where a claim's state comes from, for every reader."""
    origin = origin_of(a)
    if origin == "now":
        return "re-derived here now"
    if origin == "reported":
        return str(a.derived.elsewhere)
    if origin == "recorded":
        return "recorded on this clone"
    return "never dereferenced" if a.claim.handle else "prose"


def trusted_verified(a: Assessed) -> bool:
    """Verified by this clone (now, or by evidence it recorded that still applies): what may
    be listed as verified and what closes a thread. Another clone's report never is."""
    return a.derived.state == "verified" and a.derived.elsewhere is None


def thread_standing(tv: ThreadView) -> str:
    """The one wording of a thread's standing, for every reader."""
    if tv.standing == "undone":
        return f"done, no longer holds: {tv.undone}"
    accepted = tv.thread.accepted_withdrawn
    if tv.thread.status == "done" and accepted:
        n = len(accepted.get("checks") or [])
        return f"done with {n} withdrawn check{'s' if n != 1 else ''}"
    return tv.thread.status


def withdrawn_lines(tv: ThreadView) -> list[str]:
    """The one wording of a thread's withdrawn checks: "1 check withdrawn: <why>"."""
    if not tv.withdrawn:
        return []
    n = len(tv.withdrawn)
    lines = [f"{n} check{'s' if n != 1 else ''} withdrawn:"]
    lines += [f"  {c.id} {c.handle or 'prose'}: {(c.withdrawn or {}).get('why', '')}" for c in tv.withdrawn]
    if n == 1:
        c = tv.withdrawn[0]
        lines = [f"1 check withdrawn: {c.id} {c.handle or 'prose'}: {(c.withdrawn or {}).get('why', '')}"]
    accepted = tv.thread.accepted_withdrawn
    if accepted:
        lines.append(f"closed with them withdrawn: {accepted.get('why', '')}")
    return lines


def gate_warning(seen: View) -> str | None:
    """The one warning of a clone without its closure gate."""
    return f"no closure gate here: {seen.gate_missing}" if seen.gate_missing else None


def undone_warning(tv: ThreadView) -> str:
    """The one warning of a done thread that no longer holds (status, orient, doctor)."""
    return (
        f"{tv.thread.id} is done, but no longer holds: {tv.undone}; it holds a stop like an open thread "
        f"(git continuity thread set {tv.thread.id} open, or restore the work)"
    )
