"""How a merge conflict is told (status, conflict list, a pull's report): what it is about,
the value kept and the other one, and where each came from."""

from __future__ import annotations

import json
from collections.abc import Sequence

from git_continuity.model import shown
from git_continuity.store.records import ConflictRecord


def describe_conflict(record: ConflictRecord) -> str:
    """One line naming what a conflict is about and what happened."""
    path = record.path.removeprefix(".continuity/")
    key = record.key
    if key:
        named = {"objective": "the objective", "next_action": "the next action", "layout": "packet.yaml"}
        what = named.get(key, f"blocker {key.removeprefix('blockers/')}")
    else:
        folder, _, name = path.rpartition("/")
        kinds = {"claims": "claim", "threads": "thread", "conflicts": "conflict record"}
        what = f"{kinds[folder]} {name.removesuffix('.json')}" if folder in kinds else path
    return f"{what}: {record.what}"


def _value(value: object, width: int = 70) -> str:
    text = "(deleted)" if value is None else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _field(value: dict[str, object], key: str) -> str:
    """One field of an entry: ``session "s-abc"``; a field the entry has not: ``no session``
    (an entry's fields are not deleted, they are absent)."""
    return f"{key} {_value(value[key], 50)}" if value.get(key) is not None else f"no {key}"


def conflict_lines(conflicts: Sequence[ConflictRecord]) -> list[str]:
    """Each conflict: what it is about, the value kept and the other one, and where each
    came from (the commit that introduced it and when)."""
    lines = []
    for c in conflicts:
        kept, lost = c.kept, c.lost
        lines.append(f"  {c.id}  {describe_conflict(c)}")
        if c.key == "layout":
            kept_text, lost_text = "this side's text", "the other side's text (conflict list --json has it)"
        elif isinstance(kept, dict) and isinstance(lost, dict):
            keys = [k for k in sorted(set(kept) | set(lost)) if kept.get(k) != lost.get(k)]
            kept_text, lost_text = (", ".join(_field(side, k) for k in keys) for side in (kept, lost))
        else:
            kept_text, lost_text = _value(kept), _value(lost)
        for label, text, origin in (("kept ", kept_text, c.kept_from), ("other", lost_text, c.lost_from)):
            lines.append(f"            {label}  {text}  ({shown(origin.at)}, {origin.commit[:7]})")
    return lines
