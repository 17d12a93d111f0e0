"""Text for people and JSON for programs, from the same values."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from git_continuity import display
from git_continuity.constants import ENV_CHECK_JSON
from git_continuity.display import BREAK, cut, hang, paint
from git_continuity.model import (
    STATES,
    STATUS_WIDTH,
    JournalEntry,
    Objective,
    ObjectiveChange,
    Packet,
    Thread,
    ago,
    now,
    parse_stamp,
    shown,
)
from git_continuity.store import planning
from git_continuity.store.conflict_text import conflict_lines
from git_continuity.view.labels import (
    NO_OBJECTIVE,
    freshness,
    freshness_note,
    freshness_text,
    origin_of,
    withdrawn_lines,
)

if TYPE_CHECKING:  # only named in signatures: a write command that prints one line of text
    # does not pay for the plugin manager (verify) or the remote-tracking refs (tracking)
    from git_continuity.plugins.verify import Assessed
    from git_continuity.syncing.tracking import Standing
    from git_continuity.view.assessed import ThreadView
    from git_continuity.view.document import Document


_taking = threading.local()  # per thread: the MCP server runs each tool call in a thread of its own


@contextmanager
def taken() -> Iterator[list[dict[str, Any]]]:
    """The --json documents a command emits in this thread, handed over as they are built
    instead of printed: how an MCP tool answers with the very document of its command."""
    found: list[dict[str, Any]] = []
    _taking.documents = found
    try:
        yield found
    finally:
        _taking.documents = None


def emit_json(
    schema_name: str, document: dict[str, Any], mark: Callable[[dict[str, Any]], object] | None = None
) -> None:
    """Print a --json document, ``mark`` (signed_items.marker) first putting on it who signed
    what. GIT_CONTINUITY_CHECK_JSON=1 (the tests set it) validates it against its schema."""
    import os

    if mark is not None:
        mark(document)
    if os.environ.get(ENV_CHECK_JSON):
        from git_continuity.store import schema

        schema.check_output(schema_name, document)
    documents: list[dict[str, Any]] | None = getattr(_taking, "documents", None)
    if documents is not None:
        documents.append(document)
        return
    sys.stdout.write(display.json_text(document, indent=2) + "\n")


def claim_json(a: Assessed) -> dict[str, Any]:
    c = a.claim
    return {
        "id": c.id,
        "text": c.text,
        "handle": c.handle,
        "written": c.written,
        "thread": c.thread,
        "state": a.derived.state,
        "observed": a.derived.observed,
        "checked_at": a.derived.checked_at,
        "origin": origin_of(a),
        "freshness": {"kind": freshness(a).kind, "text": freshness_text(a, now())},
        "added_at": c.added_at,
        "added_by": c.added_by,
    }


def thread_json(tv: ThreadView) -> dict[str, Any]:
    thread, waiting = tv.thread, tv.waiting
    found: dict[str, Any] = {
        "id": thread.id,
        "title": thread.title,
        "status": thread.status,
        "standing": tv.standing,
        "undone": tv.undone,
        "added_at": thread.added_at,
        "closed_at": thread.closed_at,
        "checks": [claim_json(a) for a in tv.checks],
    }
    if tv.withdrawn:
        found["withdrawn"] = [
            {"id": c.id, "text": c.text, "handle": c.handle, **(c.withdrawn or {})} for c in tv.withdrawn
        ]
    # Only when set: the commit that closed it, a budget, and why the tool blocked it (the stop-loss).
    kept = (
        ("closed_by", thread.closed_by),
        ("closed_on", thread.closed_on),
        ("budget", thread.budget),
        ("blocked", thread.blocked),
        ("accepted_withdrawn", thread.accepted_withdrawn),
    )
    found.update({k: v for k, v in kept if v})
    found.update(planning.thread_fields(thread))
    if waiting is not None:  # derived now: every check that does not verify waits on someone else
        found["waiting"] = waiting.to_json(now())
    return found


def stop_loss_line(thread: Thread) -> str:
    """Why the stop-loss blocked a thread, and the explicit way to reopen it ("" if it did not)."""
    if not thread.blocked:
        return ""
    b = thread.blocked
    said = f': "{cut(b["observed"], STATUS_WHOLE, 100)}"' if b.get("observed") else ""
    if b.get("note"):
        return f"stop-loss {shown(b['at'])} UTC: {b['note']}{said}; reopen: git continuity thread set {thread.id} open"
    return (
        f"stop-loss {shown(b['at'])} UTC: budget spent ({', '.join(b['spent'])}) after "
        f"{len(b['attempts'])} attempt{'s' if len(b['attempts']) != 1 else ''}{said}; "
        f"reopen with a new approach: git continuity thread set {thread.id} open --budget …"
    )


def objective_json(objective: Objective | None) -> dict[str, str] | None:
    if objective is None:
        return None
    return {"text": objective.text, "why": objective.why, "set_at": objective.set_at, "set_by": objective.set_by}


def journal_json(e: JournalEntry) -> dict[str, str]:
    found = {"id": e.id, "text": e.text, "at": e.at, "by": e.by, "host": e.host}
    for key in ("session", "agent", "handoff", "kind"):
        value = getattr(e, key)
        if value is not None:
            found[key] = value
    return found


def where(by: str, host: str | None, agent: str | None, session: str | None) -> str:
    """Who did it, where, in which session: ``Ada <ada@…> on host-a (claude-code, session s-k7m2qx)``."""
    text = by + (f" on {host}" if host else "")
    extra = ", ".join(p for p in (agent, f"session {session}" if session else None) if p)
    return text + (f" ({extra})" if extra else "")


def change_json(c: ObjectiveChange) -> dict[str, Any]:
    return {"id": c.id, "old": c.old, "new": c.new, "why": c.why, "at": c.at, "by": c.by}


def counts(assessed: Sequence[Assessed]) -> dict[str, int]:
    found: dict[str, int] = dict.fromkeys(STATES, 0)
    for a in assessed:
        found[a.derived.state] += 1
    return found


# What shows a field whole when a view cuts it (display.cut).
STATUS_WHOLE = "git continuity status --full"
CLAIMS_WHOLE = "git continuity claim list --full"
JOURNAL_WHOLE = "git continuity journal --full"


def _when(stamp_text: str, at: datetime) -> str:
    return f"{shown(stamp_text)} UTC ({ago(parse_stamp(stamp_text), at)})"


def _indent(text: str, prefix: str) -> str:
    if "\n" not in text:  # most text is one line: textwrap's split and join cost a claim 2 µs
        return prefix + text if text else ""
    import textwrap  # here: a write that prints one line does not pay for it

    return textwrap.indent(text, prefix, lambda _: True)


# The last 28 hex digits of a full object id (the first 12 kept). The lookbehind makes the
# replacement a plain string, which re substitutes without calling back into Python.
FULL_OID = re.compile(r"(?<=\b[0-9a-f]{12})[0-9a-f]{28}\b")


def abbreviate(handle: str) -> str:
    """Full object ids cut to 12 characters for people (``-v`` and ``--json`` keep them whole)."""
    return handle if display.Showing.verbose else FULL_OID.sub("…", handle)


HERE = "here"  # the repository the state lives in, in a table of checks across repositories


def repository(a: Assessed) -> str | None:
    """The sibling a check is scoped to (None: this repository)."""
    return a.claim.handle[1:].split(":", 1)[0] if a.claim.handle and a.claim.handle.startswith("@") else None


def claim_lines(assessed: Sequence[Assessed], indent: str = "  ", signed: Mapping[str, str] | None = None) -> list[str]:
    """Each claim: its state, id, text, handle and what was observed. Checks that span
    repositories are one table with the repository first (``here``: this one). ``indent``
    starts each line (a thread's checks sit deeper), so long text folds under its column;
    ``signed`` goes before the text of a claim another person wrote (status_text)."""
    lines = []
    width = max((len(a.derived.state) for a in assessed), default=0)
    spans: list[str] = []
    if any(a.claim.handle and a.claim.handle[0] == "@" for a in assessed):  # here first, then each sibling
        assessed = sorted(assessed, key=lambda a: repository(a) or "")
        spans = [repository(a) or HERE for a in assessed]
    across = max(len(r) for r in [*spans, "repository"]) + 2 if spans else 0
    if spans:
        lines.append(f"{indent}{'repository'.ljust(across)}{'state'.ljust(width)}  check")
    pad = " " * (len(indent) + across + width + 2)
    painted: dict[str, str] = {}  # each state's column, padded and painted once
    fold, limit = display.Showing.width, sys.maxsize if display.Showing.full else display.LONG

    def put(first: str, text: str) -> None:  # hang(first, cut(text)), without the calls for a line that fits
        fits = len(text) <= limit and not BREAK.search(text) and (fold is None or len(first) + len(text) <= fold)
        lines.append(first + text if fits else hang(first, cut(text, CLAIMS_WHOLE)))

    for n, a in enumerate(assessed):
        c, derived = a.claim, a.derived
        where = spans[n].ljust(across) if spans else ""
        state = painted.get(derived.state)
        if state is None:
            state = painted[derived.state] = paint(derived.state.ljust(width), derived.state)
        put(f"{indent}{where}{state}  {c.id}  {signed.get(c.id, '') if signed else ''}", c.text)
        if c.handle and c.handle != c.text:
            put(pad, abbreviate(c.handle))
        put(pad, derived.observed)
        note = freshness_note(a, now()) if a.observation is None or a.freshness is not None else None
        if note and derived.state != "stale":  # stale says how old it is itself
            put(pad, f"[{note}]")
    return lines


def repository_table(checks: Sequence[Assessed]) -> list[str]:
    """A thread's checks across repositories as one Markdown table (for a brief); [] when
    they are all in this repository."""
    if not any(repository(a) for a in checks):
        return []
    rows = ["  | repository | state | check | observed |", "  | --- | --- | --- | --- |"]
    for a in sorted(checks, key=lambda a: repository(a) or ""):
        cells = [repository(a) or HERE, a.derived.state, f"{a.claim.id} {abbreviate(a.claim.handle or '')}"]
        cells.append(cut(a.derived.observed.splitlines()[0] if a.derived.observed else "", STATUS_WHOLE, 160))
        rows.append("  | " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return rows


def status_text(doc: Document, ref_line: str, signed: Mapping[str, str]) -> str:
    """status as text, from its whole document (view/document.py); ``signed`` is what goes
    before each shown item (claim, thread, blocker, journal entry) another person wrote
    (signed_items.label), so their lines cannot pass for this user's."""
    packet, threads, at, journal = doc.packet, doc.view.threads, doc.at, doc.journal
    out = [f"stream {doc.snap.stream}  ({ref_line})"]
    for index, s in enumerate(doc.standings):
        out.append(("Sync       " if index == 0 else " " * 11) + standing_text(s))
    out.append("")
    out += _objective_lines(packet, doc.objective_changes, signed, at)
    if packet is not None:
        out += _next_and_blocker_lines(packet, threads, signed)
    if doc.conflicts:
        out += ["", f"Conflicts ({len(doc.conflicts)} to look at; git continuity conflict dismiss ID once looked at)"]
        out += conflict_lines(doc.conflicts)
    if threads:
        out += _thread_lines(threads, signed, at)
    out += _loose_claim_lines(doc.view.claims, signed)
    total = doc.journal_total
    how_many = f"latest {len(journal)} of {total}" if total > len(journal) else str(total)
    out += ["", f"Journal ({how_many}: git continuity journal)"]
    out += [hang(f"  {shown(e.at)}  {signed.get(e.id, '')}", cut(e.text, JOURNAL_WHOLE)) for e in journal] or [
        "  empty"
    ]
    if doc.warnings:
        out += ["", paint("Warnings", "warning")] + [hang("  ", w) for w in doc.warnings]
    if doc.problems:
        out += ["", paint("Problems (this state is malformed; nothing will be written on top of it)", "problem")]
        out += [_indent(p, "  ") for p in doc.problems]
    return "\n".join(out) + "\n"


def _objective_lines(packet: Packet | None, changes: int, signed: Mapping[str, str], at: datetime) -> list[str]:
    """status's objective: its text, why, and who set it when."""
    objective = packet.objective if packet else None
    if packet is None:
        return ["Objective  (unreadable: see problems below)"]
    if objective is None:
        return [f"Objective  ({NO_OBJECTIVE})"]
    earlier = changes - 1
    log = f"; {earlier} earlier: git continuity objective log" if earlier > 0 else ""
    by = f"{objective.set_by} {signed.get('objective', '').strip()}".rstrip()  # the name is the writer's to give
    return [
        hang("Objective  ", cut(objective.text, STATUS_WHOLE)),
        hang("  why      ", cut(objective.why, STATUS_WHOLE)),
        f"  set      {_when(objective.set_at, at)} by {by}{log}",
    ]


def _next_and_blocker_lines(packet: Packet, threads: Sequence[ThreadView], signed: Mapping[str, str]) -> list[str]:
    """status's next action (or the thread ready next) and its open blockers."""
    by_id = {tv.thread.id: tv.thread for tv in threads}
    first = planning.next_or_ready(packet.next_action, by_id, packet.blockers)
    mark = signed.get("next_action", "") if packet.next_action else ""
    out = [hang(f"Next       {mark}", cut(first, STATUS_WHOLE))]
    blockers = packet.open_blockers()
    out += ["", f"Blockers ({len(blockers)} open)"]
    out += [hang(f"  {b.id}  {signed.get(b.id, '')}", cut(b.text, STATUS_WHOLE)) for b in blockers]
    return out + ([] if blockers else ["  none"])


def _thread_lines(threads: Sequence[ThreadView], signed: Mapping[str, str], at: datetime) -> list[str]:
    """status's threads, each with what holds it or its checks."""
    active = [tv for tv in threads if not planning.ended(tv.thread)]
    dropped = sum(1 for tv in threads if tv.thread.status == "cancelled")
    ended = f", {dropped} cancelled" if dropped else ""
    out = ["", f"Threads ({len(active)} not done, {len(threads) - len(active) - dropped} done{ended})"]
    for tv in threads:
        thread, checks = tv.thread, tv.checks
        closed = f"; closed by {thread.closed_by[:7]}" if thread.closed_by else ""
        title = f"{cut(thread.title, STATUS_WHOLE)}  ({tv.tally()}{closed})"
        out.append(hang(f"  {thread.status.ljust(STATUS_WIDTH)}  {thread.id}  {signed.get(thread.id, '')}", title))
        if tv.undone:
            out.append(hang("    ", f"no longer holds: {tv.undone}"))
        out += [hang("    ", line) for line in withdrawn_lines(tv)]
        if thread.blocked:
            out.append(f"    {stop_loss_line(thread)}")
        if tv.waiting is not None:
            out.append(f"    {tv.waiting.text(at)}")
        if (why := planning.cancelled_why(thread)) is not None:
            out.append(hang("    why: ", cut(why, STATUS_WHOLE)))
        elif thread.status != "done" or tv.verified < len(checks):
            out += claim_lines(checks, indent="      ", signed=signed)
    return out


def _loose_claim_lines(assessed: Sequence[Assessed], signed: Mapping[str, str]) -> list[str]:
    """status's claims of no thread (a thread's checks are under it)."""
    loose = [a for a in assessed if a.claim.thread is None]
    tally = counts(loose)
    summary = ", ".join(f"{n} {s}" for s, n in tally.items() if n)
    checks_note = "; thread checks are under their thread" if len(loose) < len(assessed) else ""
    out = ["", f"Claims ({summary or 'none'}{checks_note}; states derived now, not stored)"]
    return out + (
        claim_lines(loose, signed=signed)
        or (
            ["  (all are thread checks, shown above)"]
            if assessed
            else ['  none: git continuity claim add "…" --check HANDLE']
        )
    )


def standing_text(s: Standing, *, fetched_now: bool = False) -> str:
    """How the local state stands against a remote's, as of the last fetch (no network), or
    as fetched just now (``fetched_now``: the fresh look at a session's start)."""
    text = _standing_text(s)
    return text.replace("(as of the last fetch)", "(fetched just now)") if fetched_now else text


def _standing_text(s: Standing) -> str:
    def n(count: int) -> str:
        return f"{count} change{'s' if count != 1 else ''}"

    if s.relation == "same":
        return f"{s.remote}: in step (as of the last fetch)"
    if s.relation == "ahead":
        return f"{s.remote}: {n(s.ahead)} here not on {s.remote} yet (as of the last fetch): git continuity push"
    if s.refused:
        said = {"untrusted": "signed by a key not trusted here", "unsigned": "not signed"}.get(
            s.refused, "signed with a signature that does not verify"
        )
        return (
            f"{s.remote}: {n(s.behind)} on {s.remote} not here yet (as of the last fetch), {said}, so a pull"
            " leaves it out: git continuity pull says whose"
        )
    if s.relation == "behind":
        return f"{s.remote}: {n(s.behind)} on {s.remote} not here yet (as of the last fetch): git continuity pull"
    return (
        f"{s.remote}: diverged, {n(s.ahead)} here and {n(s.behind)} there (as of the last fetch): git continuity sync"
    )


def standing_json(s: Standing) -> dict[str, Any]:
    return {
        "remote": s.remote,
        "tracking_ref": s.tracking_ref,
        "commit": s.commit,
        "relation": s.relation,
        "ahead": s.ahead,
        "behind": s.behind,
        "refused": s.refused or None,
    }
