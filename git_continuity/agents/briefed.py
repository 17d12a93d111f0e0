"""Which agent conversations got a brief here, and when: a resumed or compacted conversation
carries every earlier brief, so the one SessionStart gives it now says in its first line that
it supersedes them (``.git/continuity/agents/briefed.json``, this clone's, never synced)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

KEPT = 200  # conversations remembered; the oldest go first


def _path(git_dir: Path) -> Path:
    return git_dir / "continuity" / "agents" / "briefed.json"


def supersedes(git_dir: Path, agent: str, conversation: str | None, at: str) -> str | None:
    """When this conversation got its last brief here (None: never), and remember ``at`` as
    its newest. Nothing is remembered without a conversation id."""
    if not conversation:
        return None
    from git_continuity import atomic

    path = _path(git_dir)
    try:
        seen: dict[str, str] = json.loads(path.read_text())
        seen = seen if isinstance(seen, dict) else {}
    except (OSError, ValueError):
        seen = {}
    key = f"{agent}:{conversation}"
    earlier = seen.pop(key, None)
    seen[key] = at
    kept = dict(list(seen.items())[-KEPT:])
    with contextlib.suppress(OSError):  # a brief is worth more than the note that it came again
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic.write(path, json.dumps(kept, indent=1) + "\n")
    return earlier if isinstance(earlier, str) else None


def first_line(line: str, earlier: str) -> str:
    """The brief's first line, saying it supersedes the brief given at ``earlier``."""
    when = earlier.replace("T", " ").rstrip("Z").split(".")[0]
    return f"{line} (supersedes the brief of {when} UTC earlier in this conversation: where they differ, this is right)"
