"""``handoff``: end the session, leaving the next one what it needs (handoffs.make)."""

from __future__ import annotations

from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.sessions import handoff as handoffs


def handoff(repo: Repo, *, stream: str, note: str | None, as_json: bool) -> int:
    result = handoffs.make(repo, stream=stream, note=note)
    if as_json:
        render.emit_json("handoff-output", result.document)
    else:
        print(result.text, end="")
    return 0
