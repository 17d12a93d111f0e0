"""The whole document ``status`` shows, assessed in one place: the view of the claims and
threads (``assessed.assess``) and everything around them that a reader renders (the packet,
the journal's newest entries, sync and the outbox, where this checkout stands, the warnings,
the problems, and who signed what another person wrote). ``status`` renders it and asks
nothing else; the words of each warning are chosen here, once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import JournalEntry, Packet, now
from git_continuity.repo import Oid, Repo
from git_continuity.store import integrity, places, policy, quarantine, team
from git_continuity.store.records import ConflictRecord
from git_continuity.syncing import tracking
from git_continuity.view import assessed, labels, signed_items

JOURNAL_SHOWN = 5


@dataclass(frozen=True)
class Document:
    """What status shows of a stream at a moment."""

    view: assessed.View
    packet: Packet | None
    objective_changes: int
    journal: list[JournalEntry]
    journal_total: int
    updated: datetime
    warnings: list[str]
    problems: list[str]
    conflicts: list[ConflictRecord]
    standings: list[tracking.Standing]
    outbox: list[tracking.Outbox]
    lead: list[str]  # where this checkout stands, said first (places.situation)
    place: dict[str, Any] | None

    @property
    def snap(self) -> store.Snapshot:
        return self.view.snap

    @property
    def at(self) -> datetime:
        return self.view.at


def status_document(repo: Repo, stream: str) -> Document:
    """The document of ``git continuity status``: refused (NoState) where the stream has no state."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    assert snap.commit is not None
    rules, unreadable = policy.load_or_defaults(repo.work_dir)
    seen = assessed.assess(snap, at=now(), policy=rules)
    packet = store.read_packet(snap)
    journal, journal_total = store.read_journal(snap, latest=JOURNAL_SHOWN)
    # Every malformed file, not only those read above: one that blocks every write (an old
    # journal entry, an objective change) must show too. Cheap once the tree is known good.
    problems = store.all_problems(snap)
    lead, place = places.situation(repo, snap)
    found = Document(
        view=seen,
        packet=packet,
        objective_changes=store.count_objective_changes(snap),
        journal=journal,
        journal_total=journal_total,
        updated=git.commit_info(repo, snap.commit).time,
        warnings=_warnings(repo, snap, seen, packet, unreadable),
        problems=problems,
        conflicts=store.read_conflicts(snap),
        standings=tracking.standings(repo, stream, snap.commit),
        outbox=tracking.outbox(repo, stream, snap.commit),  # what has not reached each remote (#25)
        lead=lead,
        place=place,
    )
    snap.cache.save()
    return found


def _warnings(
    repo: Repo, snap: store.Snapshot, seen: assessed.View, packet: Packet | None, unreadable: str | None
) -> list[str]:
    found = [w for w in [unreadable, integrity.off_warning(repo), team.warning(repo)] if w]
    if packet is not None and packet.objective is None:
        found.append(labels.NO_OBJECTIVE)
    found += [labels.undone_warning(tv) for tv in seen.undone]
    if gate := labels.gate_warning(seen):
        found.append(gate)
    if kept := quarantine.quarantined(snap):
        found.append(
            f"{len(kept)} file{'s' if len(kept) != 1 else ''} in quarantine, moved aside by doctor --fix and never"
            " read as state: git continuity quarantine list (show, restore or drop them)"
        )
    return found


def signed_labels(repo: Repo, stream: str, tip: Oid, ids: list[str]) -> dict[str, str]:
    """What a reader prints before each item shown that another person wrote (by its id, and
    ``objective`` and ``next_action`` for the packet's fields): ``[signed by EMAIL]``, or
    ``[not signed by a key trusted here]``; this user's own items have none, so a single-user
    status does not change. From authorship's cached entry→commit map."""
    from git_continuity.trust import authorship

    fields = {key: name for name, key in authorship.packet_now(repo, tip).items()}
    found = signed_items.others(repo, stream, tip, [*ids, *fields])
    return {fields.get(i, i): signed_items.label(a) for i, a in found.items()}
