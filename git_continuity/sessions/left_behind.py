"""What another machine's session left uncommitted, as its handoff recorded it (the work tree's
first few changed paths), and that this clone does not have: the brief says "left on <host>,
not here", so the next session does not look for work that never left that machine."""

from __future__ import annotations

from pathlib import Path

from git_continuity.sessions.budget import Item, Section
from git_continuity.store.records import Handoff


def paths(top: Path | None, last: Handoff, here: str) -> list[str]:
    """The handoff's uncommitted paths missing from this work tree (none when it was written here)."""
    tree = last.work_tree
    if last.host == here or tree is None or top is None:
        return []
    return [p for p in tree.paths if not (top / p).exists()]


def section(top: Path | None, last: Handoff, here: str, group: str) -> Section:
    """The brief's line for them, under "Since the last session"."""
    from git_continuity import display

    missing = paths(top, last, here)
    more = last.work_tree.more_paths if last.work_tree is not None and missing else 0
    named = ", ".join(display.clean(p) for p in missing) + (f" and {more} more" if more > 0 else "")
    host = display.clean(last.host)
    line = f"- left on {host}, not here: {named} (uncommitted there at handoff {last.id}; commit and push it on {host})"
    return Section(
        "since_left", "", 2, [Item([line], None)] if missing else [], what="paths left on another machine", group=group
    )
