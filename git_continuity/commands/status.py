from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from git_continuity import repo as git
from git_continuity import store
from git_continuity.doctor import quarantine
from git_continuity.model import ago, now, stamp
from git_continuity.render import short as render_short
from git_continuity.render import signed_items
from git_continuity.render import text as render
from git_continuity.repo import Oid, Repo
from git_continuity.store import integrity, places, policy, team
from git_continuity.syncing import tracking
from git_continuity.view import assessed as view
from git_continuity.view import labels

JOURNAL_SHOWN = 5


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
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    assert snap.commit is not None
    moment = now()
    packet = store.read_packet(snap)
    rules, unreadable = policy.load_or_defaults(repo.work_dir)
    seen = view.assess(snap, at=moment, policy=rules)
    assessed, threads = seen.claims, seen.threads
    journal, journal_total = store.read_journal(snap, latest=JOURNAL_SHOWN)
    changes = store.count_objective_changes(snap)
    updated = git.commit_info(repo, snap.commit).time
    warnings = [w for w in [unreadable, integrity.off_warning(repo), team.warning(repo)] if w]
    if packet is not None and packet.objective is None:
        warnings.append("no objective: a new session cannot tell what this work is for (git continuity objective set)")
    warnings += [labels.undone_warning(tv) for tv in seen.undone]
    if gate := labels.gate_warning(seen):
        warnings.append(gate)
    kept = quarantine.quarantined(snap)
    if kept:
        warnings.append(
            f"{len(kept)} file{'s' if len(kept) != 1 else ''} in quarantine, moved aside by doctor --fix and never"
            " read as state: git continuity quarantine list (show, restore or drop them)"
        )
    # Every malformed file, not only those read above: one that blocks every write (an
    # old journal entry, an objective change) must show here too. Cheap once the tree is
    # known good (store.ValidityCache).
    conflicts = store.read_conflicts(snap)
    standings = tracking.standings(repo, stream, snap.commit)
    outbox = tracking.outbox(repo, stream, snap.commit)  # what has not reached each remote (#25)
    problems = store.all_problems(snap)
    lead, place = places.situation(repo, snap)
    snap.cache.save()
    if as_json:
        render.emit_json(
            "status",
            {
                "stream": stream,
                "ref": {"name": snap.ref, "commit": snap.commit, "updated_at": stamp(updated)},
                "objective": render.objective_json(packet.objective if packet else None),
                "objective_changes": changes,
                "next_action": packet.next_action if packet else None,
                "blockers": [
                    {"id": b.id, "text": b.text, "added_at": b.added_at, "added_by": b.added_by}
                    for b in (packet.open_blockers() if packet else [])
                ],
                "claims": [render.claim_json(a) for a in assessed],
                "threads": [render.thread_json(tv) for tv in threads],
                "journal": [render.journal_json(e) for e in journal],
                "journal_total": journal_total,
                "counts": render.counts(assessed),
                "conflicts": [c.to_json() for c in conflicts],
                "remotes": [render.standing_json(s) for s in standings],
                "outbox": [tracking.outbox_json(box) for box in outbox],
                "place": place,
                "warnings": warnings,
                "problems": problems,
            },
            signed_items.marker(repo, stream, snap.commit),
        )
    elif short:
        signed = _labels(repo, stream, snap.commit, [tv.thread.id for tv in threads])
        head = f"stream {stream}  ({snap.ref} at {snap.commit[:7]}, changed {ago(updated, moment)})"
        print(
            render_short.short_status(
                head=head,
                packet=packet,
                assessed=assessed,
                threads=threads,
                outbox=outbox,
                attention=len(warnings) + len(problems) + len(lead),
                at=moment,
                signed=signed,
            ),
            end="",
        )
    else:
        blockers = packet.open_blockers() if packet else []
        ids = [*(a.claim.id for a in assessed), *(tv.thread.id for tv in threads), *(b.id for b in blockers)]
        signed = _labels(repo, stream, snap.commit, [*ids, *(e.id for e in journal)])
        for line in lead:  # where this checkout stands comes first (places.situation)
            print(line, end="\n\n")
        print(
            render.status_text(
                stream=stream,
                ref_line=f"{snap.ref} at {snap.commit[:7]}, changed {ago(updated, moment)}",
                packet=packet,
                objective_changes=changes,
                assessed=assessed,
                threads=threads,
                journal=journal,
                journal_total=journal_total,
                warnings=warnings,
                problems=problems,
                at=moment,
                standings=standings,
                conflicts=conflicts,
                signed=signed,
            ),
            end="",
        )
        # The outbox (#25) of remotes never sent the state (the Sync line above speaks of the others).
        waiting_to_go = [said for box in outbox if box.never and (said := tracking.outbox_text(box, moment))]
        if waiting_to_go:
            print("\nOutbox\n" + "\n".join(f"  {said}" for said in waiting_to_go))
    return 2 if problems else 0


def _labels(repo: Repo, stream: str, tip: Oid, ids: list[str]) -> dict[str, str]:
    """What status prints before each item shown that another person wrote (by its id, and
    ``objective`` and ``next_action`` for the packet's fields): ``[signed by EMAIL]``, or
    ``[not signed by a key trusted here]``; this user's own items have none, so a single-user
    status does not change. From authorship's cached entry→commit map."""
    from git_continuity.trust import authorship

    fields = {key: name for name, key in authorship.packet_now(repo, tip).items()}
    found = signed_items.others(repo, stream, tip, [*ids, *fields])
    return {fields.get(i, i): signed_items.label(a) for i, a in found.items()}
