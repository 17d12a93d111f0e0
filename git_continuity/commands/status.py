from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from git_continuity.model import ago, stamp
from git_continuity.render import short as render_short
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.view import document, signed_items


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector paused while a status builds its values. They all live to
    the end and free nothing by cycles, yet every pass of the collector walks each of them:
    half the time of a status of 100,000 claims went there."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def status(repo: Repo, *, stream: str, as_json: bool, short: bool = False) -> int:
    """The state as it is now: every claim dereferenced or judged from its evidence."""
    with collector_paused():
        return _status(repo, stream=stream, as_json=as_json, short=short)


def _status(repo: Repo, *, stream: str, as_json: bool, short: bool) -> int:
    doc = document.status_document(repo, stream)
    if as_json:
        _emit(repo, stream, doc)
    elif short:
        _short(repo, stream, doc)
    else:
        _text(repo, stream, doc)
    return 2 if doc.problems else 0


def _emit(repo: Repo, stream: str, doc: document.Document) -> None:
    snap, packet, seen = doc.snap, doc.packet, doc.view
    assert snap.commit is not None
    render.emit_json(
        "status",
        {
            "stream": stream,
            "ref": {"name": snap.ref, "commit": snap.commit, "updated_at": stamp(doc.updated)},
            "objective": render.objective_json(packet.objective if packet else None),
            "objective_changes": doc.objective_changes,
            "next_action": packet.next_action if packet else None,
            "blockers": [
                {"id": b.id, "text": b.text, "added_at": b.added_at, "added_by": b.added_by}
                for b in (packet.open_blockers() if packet else [])
            ],
            "claims": [render.claim_json(a) for a in seen.claims],
            "threads": [render.thread_json(tv) for tv in seen.threads],
            "journal": [render.journal_json(e) for e in doc.journal],
            "journal_total": doc.journal_total,
            "counts": render.counts(seen.claims),
            "conflicts": [c.to_json() for c in doc.conflicts],
            "remotes": [render.standing_json(s) for s in doc.standings],
            "outbox": [render_short.outbox_json(box) for box in doc.outbox],
            "place": doc.place,
            "warnings": doc.warnings,
            "problems": doc.problems,
        },
        signed_items.marker(repo, stream, snap.commit),
    )


def _head(doc: document.Document) -> str:
    assert doc.snap.commit is not None
    return f"{doc.snap.ref} at {doc.snap.commit[:7]}, changed {ago(doc.updated, doc.at)}"


def _short(repo: Repo, stream: str, doc: document.Document) -> None:
    assert doc.snap.commit is not None
    threads = doc.view.threads
    signed = document.signed_labels(repo, stream, doc.snap.commit, [tv.thread.id for tv in threads])
    print(
        render_short.short_status(
            head=f"stream {stream}  ({_head(doc)})",
            packet=doc.packet,
            assessed=doc.view.claims,
            threads=threads,
            outbox=doc.outbox,
            attention=len(doc.warnings) + len(doc.problems) + len(doc.lead),
            at=doc.at,
            signed=signed,
        ),
        end="",
    )


def _text(repo: Repo, stream: str, doc: document.Document) -> None:
    snap, packet, seen = doc.snap, doc.packet, doc.view
    assert snap.commit is not None
    blockers = packet.open_blockers() if packet else []
    ids = [*(a.claim.id for a in seen.claims), *(tv.thread.id for tv in seen.threads), *(b.id for b in blockers)]
    signed = document.signed_labels(repo, stream, snap.commit, [*ids, *(e.id for e in doc.journal)])
    for line in doc.lead:  # where this checkout stands comes first (places.situation)
        print(line, end="\n\n")
    print(
        render.status_text(doc, _head(doc), signed),
        end="",
    )
    # The outbox (#25) of remotes never sent the state (the Sync line above speaks of the others).
    waiting_to_go = [said for box in doc.outbox if box.never and (said := render_short.outbox_text(box, doc.at))]
    if waiting_to_go:
        print("\nOutbox\n" + "\n".join(f"  {said}" for said in waiting_to_go))
