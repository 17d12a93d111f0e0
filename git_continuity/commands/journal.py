from __future__ import annotations

from git_continuity import render, session, store
from git_continuity.display import cut
from git_continuity.errors import UserError
from git_continuity.model import JournalEntry, new_id, now, shown, stamp
from git_continuity.repo import Repo


def add(repo: Repo, *, stream: str, text: str) -> int:
    text = text.strip()
    if not text:
        raise UserError("journal add needs a non-empty text")
    moment = now()
    who = session.who(repo)
    entry = JournalEntry(new_id("journal"), text, stamp(moment), who.by, who.host, **who.stamp())
    store.update(
        repo,
        stream,
        lambda snap: store.Change(
            f"journal add {entry.id}: {text}", {store.journal_path(entry, moment): store.entry_bytes(entry)}
        ),
    )
    print(f"Journal entry {entry.id} recorded.")
    return 0


def show(repo: Repo, *, stream: str, count: int | None, as_json: bool) -> int:
    if count is not None and count < 1:
        raise UserError("-n takes a whole number of entries, 1 or more")
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    entries, total = store.read_journal(snap, latest=count)
    if as_json:
        render.emit_json(
            "journal",
            {
                "stream": stream,
                "entries": [render.journal_json(e) for e in entries],
                "total": total,
                "problems": snap.problems,
            },
        )
    else:
        if not entries:
            print('The journal is empty: git continuity journal add "what was done, learned, tried"')
        if total > len(entries):
            print(f"(latest {len(entries)} of {total}; --all shows every entry)\n")
        for e in entries:
            who = render.where(e.by, e.host, e.agent, e.session)
            print(f"{shown(e.at)} UTC  {e.id}  {who}\n  {cut(e.text, render.JOURNAL_WHOLE)}\n")
        for p in snap.problems:
            print(f"problem: {p}")
    return 2 if snap.problems else 0
