"""The state ref: ``refs/continuity/<stream>``, a chain of commits whose tree is ``.continuity/``.

Layout (machine-written entries are one file each, so two clones' additions never touch
the same file and merge without conflicts; busy folders are sharded):

    .continuity/format                          "1"
    .continuity/packet.yaml                     objective, next action, blockers (people edit it)
    .continuity/claims/<id>.json                one claim (a thread's checks name it in ``thread``)
    .continuity/threads/<id>.json               one thread
    .continuity/objective/<time>-<id>.json      one change of the objective
    .continuity/journal/<day>/<time>-<id>.json  one journal entry
    .continuity/evidence/<claim>/<time>-<id>.json  one dereference of a claim's handle
    .continuity/handoffs/<day>/<time>-<id>.json one handoff: the state a session left for the next
    .continuity/conflicts/<id>.json             one value a merge did not keep (store/merge.py)
    .continuity/attempts/<thread>/<time>-<id>.json  one dereference of a thread's checks that
                                                ended not verified (store/attempts.py)
    .continuity/places/<id>.json                one branch or worktree with a role (store/places.py)
    .continuity/siblings/<id>.json              one other repository the stream spans (store/siblings.py)
    .continuity/thread-claims/<thread>.json     which session is on a thread (store/planning.py)

Writing never touches HEAD, the index, the work tree or a branch: trees are built with
TreeBuilder and the ref moves by compare-and-swap, retried when another writer won. Each
commit's message ends with trailers saying where it was written and in which session
(``Host:``, ``Session:``, ``Agent:``), so ``log`` can say who did what where.

The package's parts: ``state`` (the immutable snapshot, where it comes from, the missing
state), ``read`` (every kind of entry), ``problems`` (every problem of a whole state: its
tree walked once, its commit's parents), ``write`` (paths, and one change as one commit) and
``lifespans`` (which journal entries are live, which faded). Callers use it as one module:
``store.read_claims(snap)``.
"""

from __future__ import annotations

from git_continuity.store.problems import QUARANTINE, all_problems, history_problems
from git_continuity.store.read import (
    claim_ids,
    count_objective_changes,
    evidence_history,
    journal_since,
    latest_evidence,
    latest_handoff,
    read_attempts,
    read_claims,
    read_conflicts,
    read_journal,
    read_objective_log,
    read_packet,
    read_packet_doc,
    read_places,
    read_siblings,
    read_thread_claims,
    read_threads,
)
from git_continuity.store.state import (
    FORMAT,
    KINDS,
    ROOT,
    STORED,
    Snapshot,
    ValidityCache,
    at_commit,
    ref_name,
    require_state,
    snapshot,
    snapshot_at,
)
from git_continuity.store.write import (
    Change,
    Taken,
    Written,
    attempt_bytes,
    attempt_path,
    claim_path,
    edited_packet,
    entry_bytes,
    evidence_path,
    handoff_bytes,
    handoff_path,
    journal_path,
    objective_path,
    recording,
    remember_active,
    require_packet,
    require_packet_doc,
    require_well_formed,
    stamp_day,
    thread_claim_path,
    thread_path,
    update,
)

__all__ = [
    "FORMAT",
    "KINDS",
    "QUARANTINE",
    "ROOT",
    "STORED",
    "Change",
    "Snapshot",
    "Taken",
    "ValidityCache",
    "Written",
    "all_problems",
    "at_commit",
    "attempt_bytes",
    "attempt_path",
    "claim_ids",
    "claim_path",
    "count_objective_changes",
    "edited_packet",
    "entry_bytes",
    "evidence_history",
    "evidence_path",
    "handoff_bytes",
    "handoff_path",
    "history_problems",
    "journal_path",
    "journal_since",
    "latest_evidence",
    "latest_handoff",
    "objective_path",
    "read_attempts",
    "read_claims",
    "read_conflicts",
    "read_journal",
    "read_objective_log",
    "read_packet",
    "read_packet_doc",
    "read_places",
    "read_siblings",
    "read_thread_claims",
    "read_threads",
    "recording",
    "ref_name",
    "remember_active",
    "require_packet",
    "require_packet_doc",
    "require_state",
    "require_well_formed",
    "snapshot",
    "snapshot_at",
    "stamp_day",
    "thread_claim_path",
    "thread_path",
    "update",
]
