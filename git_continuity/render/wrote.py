"""A write's ``--json``: what it wrote and what it said, in one document for programs.

``claim add``, ``thread add``, ``journal add`` and the other writes print a sentence for a
person ("Journal entry j-k7m2qx recorded."). With ``--json`` the same run prints instead the
state commits it made (each with its subject and the id it names), the id it made, and the
sentence's lines (schema/write.schema.json). A write that changed nothing (a status it
already had) lists no commit, and a close the checks refused lists only the evidence it kept;
either names the id it was given. A refusal is an error on stderr and exit 2, as without it.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable
from typing import Any

from git_continuity import store
from git_continuity.constants import ID_CHARS
from git_continuity.render import text as render

# The id a state commit's subject names after its command words: "claim add c-k7m2qx: …".
_SUBJECT_ID = re.compile(rf"^[a-z][a-z ]*? ([a-z]-{ID_CHARS}{{6}})\b")


def reported(stream: str, named: str | None, run: Callable[[], int]) -> int:
    """Run the write with its sentence kept, then print the document; its exit code.
    ``named`` is the id the write was given (thread close ID), if any."""
    said = io.StringIO()
    shown, sys.stdout = sys.stdout, said
    try:
        with store.recording() as made:
            code = run()
    finally:
        sys.stdout = shown
    commits = [_commit(w) for w in made]
    document: dict[str, Any] = {
        "stream": stream,
        "id": next((c["id"] for c in commits if c["id"]), named),
        "commits": commits,
        "said": [line for line in said.getvalue().splitlines() if line.strip()],
    }
    render.emit_json("write", document)
    return code


def _commit(written: store.Written) -> dict[str, Any]:
    found = _SUBJECT_ID.match(written.subject)
    return {
        "stream": written.stream,
        "commit": written.commit,
        "subject": written.subject,
        "id": found.group(1) if found else None,
    }
