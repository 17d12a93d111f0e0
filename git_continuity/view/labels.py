"""The one wording of what a view found (view/assessed.py): where a claim's state comes from, a
thread's standing, its withdrawn checks, a done thread that no longer holds, a clone without
its gate. Every reader (status, orient, handoff, progress, thread show, check, the gates, MCP)
says these through here, so they cannot word them apart.

The data floor at run time (model's times and the freshness a view sets): render and the
readers import it; the view's types are named for the checker alone."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from git_continuity.model import Freshness, ago, parse_stamp

# A stream with no objective, said the same way by status (its line and its warning), status -s,
# the brief (its warning and its section) and objective log; a sentence starts it capitalised.
NO_OBJECTIVE = (
    'no objective: nothing says what this work is for; set one with git continuity objective set "…" --why "…"'
)

if TYPE_CHECKING:
    from git_continuity.plugins.verify import Assessed
    from git_continuity.view.assessed import Origin, ThreadView, View


def origin_of(a: Assessed) -> Origin:
    """Where a claim's state comes from: re-derived here now, evidence recorded on this
    clone, evidence another clone or a CI run reported, or nothing (prose, never checked)."""
    if a.claim.handle is None or a.derived.checked_at is None:
        return "none"
    if a.observation is not None:
        return "now"
    return "reported" if a.derived.elsewhere else "recorded"


def freshness(a: Assessed) -> Freshness:
    """How fresh a claim's state is: the view's word where it set one (view.assess), else told
    from where the evidence came from."""
    if a.freshness is not None:
        return a.freshness
    origin = origin_of(a)
    if origin == "reported":
        found = Freshness("reported", a.derived.checked_at, elsewhere=a.derived.elsewhere)
    else:
        found = Freshness(origin, a.derived.checked_at if origin == "recorded" else None)
    a.freshness = found  # kept: a brief asks it of every claim several times
    return found


def freshness_text(a: Assessed, at: datetime) -> str:
    """The one wording of how fresh a claim's state is, for every reader."""
    found = freshness(a)
    age = f" {_ago(found.since, at)}" if found.since else ""
    if found.kind == "now":
        return "re-derived now"
    if found.kind == "recorded":
        return f"recorded here{age}, not asked now" + (f": {found.why}" if found.why else "")
    if found.kind == "reported":
        return f"{found.elsewhere}{age}, not re-derived here"
    if found.kind == "unapproved":
        last = f"; its last result {found.elsewhere or 'recorded here'}{age}" if found.since else ""
        return f"{UNAPPROVED}{last}"
    return "never dereferenced" if a.claim.handle else "prose"


# A cmd: check is run only once a person approved it on this machine, at a terminal: no text an
# agent reads names a command that would approve it.
UNAPPROVED = "not approved here: it runs here only once a person approves it at a terminal"


def freshness_note(a: Assessed, at: datetime) -> str | None:
    """The freshness a reader adds beside a claim's state: every kind but re-derived now,
    prose and never checked; a report from another clone says so in what it observed."""
    kind = freshness(a).kind
    if kind in ("now", "none") or (kind == "reported" and a.derived.observed.startswith(str(a.derived.elsewhere))):
        return None
    return freshness_text(a, at)


def verified_now(a: Assessed) -> bool:
    """Verified by a dereference made now, in this look: what a brief lists as "Verified now"."""
    return a.derived.state == "verified" and freshness(a).kind == "now"


def _ago(since: str, at: datetime) -> str:
    return ago(parse_stamp(since), at)


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
