"""``orient``: the first call of a session. The brief itself is orientation.build's."""

from __future__ import annotations

from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.sessions import orient as orientation


def orient(repo: Repo, *, stream: str, as_json: bool, max_tokens: int | None, online: bool) -> int:
    result = orientation.build(repo, stream=stream, max_tokens=max_tokens, online=online)
    if as_json:
        render.emit_json("orient", result.document)
    else:
        print(result.text, end="")
    return result.code
