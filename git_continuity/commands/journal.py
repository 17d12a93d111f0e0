from __future__ import annotations

from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import cut, hang
from git_continuity.errors import UserError
from git_continuity.model import JOURNAL_KINDS, JournalEntry, new_id, now, shown, stamp
from git_continuity.repo import Repo
from git_continuity.store import policy

# render, attempts and the journal's reader are imported where used: `journal add` is a
# write, and imports are most of its time (issue 13).

FADED_HINT = "git continuity journal --all"


def add(repo: Repo, *, stream: str, text: str, kind: str = "note") -> int:
    """Append an entry. Its kind says how long it stays live (policy lifespans); a note, the
    default, is stored without one, as every entry written before kinds existed."""
    text = text.strip()
    if not text:
        raise UserError("journal add needs a non-empty text")
    if kind not in JOURNAL_KINDS:
        raise UserError(f"--kind {kind!r} is not a kind of entry; the kinds are {', '.join(JOURNAL_KINDS)}")
    span = policy.load(repo.work_dir).lifespans.get(kind)
    moment = now()
    who = session.who(repo)
    entry = JournalEntry(
        new_id("journal"), text, stamp(moment), who.by, who.host, **who.stamp(), kind=None if kind == "note" else kind
    )
    store.update(
        repo,
        stream,
        lambda snap: store.Change(
            f"journal add {entry.id}: {text}", {store.journal_path(entry, moment): store.entry_bytes(entry)}
        ),
    )
    if kind == "note":
        print(f"Journal entry {entry.id} recorded.")
    else:
        from git_continuity.store.attempts import duration_text

        lasts = "it never fades" if span is None else f"it fades after {duration_text(span)}"
        print(f"Journal entry {entry.id} recorded as a {kind} ({lasts}).")
    return 0


def show(repo: Repo, *, stream: str, count: int | None, as_json: bool) -> int:
    """The latest live entries (``-n``), or with ``--all`` (count None) every entry, the
    faded ones marked. Nothing fades by being deleted."""
    from git_continuity.render import text as render
    from git_continuity.store.lifespans import read_live_journal

    if count is not None and count < 1:
        raise UserError("-n takes a whole number of entries, 1 or more")
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    rules = policy.load(repo.work_dir)
    everything = count is None
    found = read_live_journal(snap, rules.lifespans, now(), latest=count, everything=everything)
    entries = found.entries
    if as_json:
        render.emit_json(
            "journal",
            {
                "stream": stream,
                "entries": [
                    {**render.journal_json(e), **({"faded": True} if e.id in found.faded else {})} for e in entries
                ],
                "total": found.total,
                "faded": found.faded_count,
                "problems": snap.problems,
            },
        )
    else:
        if not entries and not found.total:
            print('The journal is empty: git continuity journal add "what was done, learned, tried"')
        if not everything and found.live > len(entries):
            print(f"(latest {len(entries)} of {found.live}; --all shows every entry)\n")
        if not everything and found.faded_count:
            n = found.faded_count
            print(f"({n} faded entr{'ies' if n != 1 else 'y'} left out: {FADED_HINT})\n")
        for e in entries:
            who = render.where(e.by, e.host, e.agent, e.session)
            marks = [k for k in (e.kind if e.kind != "note" else None, "faded" if e.id in found.faded else None) if k]
            mark = f"  [{', '.join(marks)}]" if marks else ""
            print(f"{shown(e.at)} UTC  {e.id}  {who}{mark}\n{hang('  ', cut(e.text, render.JOURNAL_WHOLE))}\n")
        for p in snap.problems:
            print(f"problem: {p}")
    return 2 if snap.problems else 0
