"""``status -s``: the state of a day in about ten lines, rendered from the same view as the
whole status: what is open, what is not true now, what has not been shared yet, and whether
something needs a look. Each line says which command shows it whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from git_continuity.display import one_line
from git_continuity.model import Packet
from git_continuity.syncing.tracking import Outbox, outbox_json, outbox_text
from git_continuity.view.labels import NO_OBJECTIVE

if TYPE_CHECKING:
    from git_continuity.plugins.verify import Assessed
    from git_continuity.view.assessed import ThreadView

__all__ = ["outbox_json", "outbox_text", "short_status"]  # status renders the outbox through here

SHOWN = 3  # items named on a line; the rest counted
WIDTH = 48  # characters of a title on a line


def short_status(
    *,
    head: str,
    packet: Packet | None,
    assessed: Sequence[Assessed],
    threads: Sequence[ThreadView],
    outbox: Sequence[Outbox],
    attention: int,
    at: datetime,
    signed: Mapping[str, str],
) -> str:
    """The short status: one line each, and a last line naming the whole one."""
    lines = [head, _objective(packet, signed), _open(threads, signed), _not_true(assessed, threads)]
    lines.append(_not_shared(outbox, at))
    if attention:
        things = f"{attention} thing{'s' if attention != 1 else ''}"
        lines.append(f"Look       {things} to look at (warnings, problems): git continuity status")
    lines.append("Whole      git continuity status (this is status -s)")
    return "\n".join(lines) + "\n"


def _named(items: Sequence[str]) -> str:
    more = len(items) - SHOWN
    return ", ".join(items[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _objective(packet: Packet | None, signed: Mapping[str, str]) -> str:
    objective = packet.objective if packet else None
    if objective is None:
        return f"Objective  ({NO_OBJECTIVE})"
    mark = f"{signed['objective']} " if "objective" in signed else ""
    return f"Objective  {mark}{one_line(objective.text, 80)}"


def _open(threads: Sequence[ThreadView], signed: Mapping[str, str]) -> str:
    found = [tv for tv in threads if tv.standing == "open"]
    if not found:
        return "Open       no open threads"
    named = [
        f"{tv.thread.id} {signed.get(tv.thread.id, '') + ' ' if tv.thread.id in signed else ''}"
        f"{one_line(tv.thread.title, WIDTH)} ({tv.verified}/{len(tv.checks)})"
        for tv in found
    ]
    return f"Open       {len(found)} thread{'s' if len(found) != 1 else ''}: {_named(named)}"


def _not_true(assessed: Sequence[Assessed], threads: Sequence[ThreadView]) -> str:
    false = [a.claim.id for a in assessed if a.derived.state == "contradicted"]
    undone = [tv.thread.id for tv in threads if tv.standing == "undone"]
    parts = []
    if false:
        parts.append(f"{len(false)} claim{'s' if len(false) != 1 else ''} contradicted ({_named(false)})")
    if undone:
        parts.append(f"{len(undone)} done thread{'s' if len(undone) != 1 else ''} no longer hold ({_named(undone)})")
    return "Not true   " + ("; ".join(parts) if parts else "nothing known false now")


def _not_shared(outbox: Sequence[Outbox], at: datetime) -> str:
    waiting = [said for box in outbox if (said := outbox_text(box, at))]
    if not outbox:
        return "Not shared no remote: the state is only in this clone"
    return "Not shared " + ("; ".join(waiting) if waiting else "nothing: every remote has this state")
