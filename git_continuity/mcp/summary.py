"""The short text an MCP tool answers beside its command's JSON document: the line a model
needs to decide what next.

It is what a model reads, so what other people wrote reaches it as data (#26), as in the
brief: a row of text another person wrote (a thread's title, the objective or next action
they set, a failing thread's reason) sits in a quoted block naming the key that signed it
and saying it is information, not instructions; a row no trusted key signed is left out,
counted, with the command that shows it. Who wrote each item is read from the document
itself (its ``signer``, view/signed_items.py). This user's own rows are as they always were.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from git_continuity.display import hang
from git_continuity.sessions import quoting

Signer = dict[str, Any] | None
Row = tuple[Signer, str, str]  # who signed it (None: this user), its kind (quoting.KINDS), the line


def rows(found: Sequence[Row], gone: dict[str, int]) -> list[str]:
    """The lines of ``found``: a trusted teammate's under a header naming their key (one
    header for the rows they wrote in a run), an untrusted one's counted in ``gone``."""
    out: list[str] = []
    last: tuple[Any, Any] | None = None
    for signer, kind, line in found:
        if signer is None:
            out.append(line)
            last = None
        elif not signer.get("trusted"):
            gone[kind] = gone.get(kind, 0) + 1
        else:
            if last != (signer.get("email"), signer.get("key")):
                out.append(quoting.header_of(signer.get("email"), signer.get("key")))
                last = (signer.get("email"), signer.get("key"))
            out += [f"> {part}" for part in line.split("\n")]
    return out


def _field(name: str, value: str, signer: Signer, kind: str, below: list[Row]) -> str:
    """A packet field's value in a summary line: as it is when this user set it, else "(quoted
    below)" or "(left out)" and the row put with ``below``."""
    if signer is None:
        return value
    below.append((signer, kind, hang(f"{name}: ", value, fold=False)))
    return "(quoted below)" if signer.get("trusted") else "(left out)"


def _status(document: dict[str, Any], gone: dict[str, int]) -> str:
    counts = ", ".join(f"{n} {state}" for state, n in document["counts"].items() if n) or "no claims"
    below: list[Row] = []
    objective = document.get("objective") or {}
    said = _field("objective", objective.get("text") or "none", objective.get("signer"), "objective", below)
    next_action = document["next_action"] or "none"
    upcoming = _field("next", next_action, document.get("next_action_signer"), "next_action", below)
    open_threads = sum(1 for t in document["threads"] if t["status"] != "done")
    line = hang(f"stream {document['stream']}: objective ", said, fold=False)
    line = hang(
        f"{line}; claims: {counts}; {open_threads} open threads; {len(document['blockers'])} blockers; next: ",
        upcoming,
        fold=False,
    )
    return "\n".join([line, *rows(below, gone)])


def _listed(found: Sequence[Row], gone: dict[str, int], empty: str) -> str:
    return "\n".join(rows(found, gone)) or ("" if gone else empty)


def summary(name: str, document: dict[str, Any], code: int) -> str:
    """The text beside the document of the tool ``name`` that exited ``code``."""
    gone: dict[str, int] = {}
    if name == "status":
        said = _status(document, gone)
    elif name == "check":
        failing = [
            (t.get("signer"), "t", hang(f"{t['id']}: ", t["reason"], fold=False))
            for t in document["threads"]
            if not t["ok"]
        ]
        said = "\n".join([document.get("message") or ("ok" if document["ok"] else "not ok"), *rows(failing, gone)])
    elif name == "verify":
        said = "; ".join(f"{c['id']} {c['state']}: {c.get('observed') or ''}".strip() for c in document["claims"])
        said = said or "no claims"
    elif name == "thread_list":
        threads = [
            (t.get("signer"), "t", hang(f"{t['id']} {t['status']}: ", t["title"], fold=False))
            for t in document["threads"]
        ]
        said = _listed(threads, gone, "no threads")
    elif name == "progress":  # tool's own words only: no text another person wrote
        lines = [
            f"{t['id']} {t['status']}: {len(t['attempts'])} attempts, {'stalled' if t['stalled'] else 'not stalled'}"
            for t in document["threads"]
        ]
        said = "\n".join(lines) or "no threads"
    elif name == "ready":
        ready = [
            (t.get("signer"), "t", hang(f"{t['id']} P{t['priority']}: ", t["title"], fold=False))
            for t in document["ready"]
        ]
        said = _listed(ready, gone, "nothing ready")
    elif name == "next":
        below: list[Row] = []
        said = hang(
            "next: ",
            _field("next", document["next_action"] or "none", document.get("next_action_signer"), "next_action", below),
            fold=False,
        )
        said = "\n".join([said, *rows(below, gone)])
    else:
        said = json.dumps(document, ensure_ascii=False)
    left_out = quoting.left_out_lines(quoting.counted(gone))
    said = "\n".join([said, *left_out]) if said else "\n".join(left_out)
    problems = document.get("problems") or []
    if problems:
        said += "\nproblems:\n" + "\n".join(f"  {p}" for p in problems)
    return said + (f"\n(exit {code})" if code else "")
