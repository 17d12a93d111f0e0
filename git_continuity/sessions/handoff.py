"""The handoff a session ends with (``handoff``, and an agent's PreCompact and SessionEnd
hooks): a handoff packet on the state ref (one file per handoff, so two clones' handoffs
merge) and a session entry in the journal, in one commit, and the Markdown that shows it.

Which session hands off is session.resolve's rule; a handoff on the session's own stream
measures what it did from its start and ends it (clone/session.py says why).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import machine, session
from git_continuity.errors import UserError
from git_continuity.model import JournalEntry, Thread, new_id, now, parse_stamp, shown, stamp
from git_continuity.plugins.verify import Assessed
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.sessions import brief, budget
from git_continuity.sessions import work as session_work
from git_continuity.sessions.budget import Item, Section
from git_continuity.store import places, planning, policy, siblings
from git_continuity.store.records import (
    Arrived,
    Baseline,
    Did,
    Failing,
    Handoff,
    ThreadSummary,
    Unshared,
    WorkTree,
    ref_label,
)
from git_continuity.view import assessed as view


@dataclass(frozen=True)
class Handed:
    text: str  # Markdown, for a person or a prompt
    document: dict[str, Any]  # the --json output (schema/handoff-output.schema.json)
    handoff: Handoff  # the packet as stored


def make(repo: Repo, *, stream: str, note: str | None = None, agent_session: str | None = None) -> Handed:
    """Record the handoff of the current session on ``stream``. ``agent_session`` is the
    agent's own id for its conversation, when its hook runs this."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    store.require_well_formed(snap)
    assert snap.commit is not None  # require_state refused a stream without state
    packet = store.read_packet(snap)
    assert packet is not None  # require_well_formed refused a malformed packet
    if packet.objective is None:
        raise UserError(
            "handoff needs an objective: the next session must know what this work is for, and there is none.\n"
            'Set it first: git continuity objective set "what this work is for" --why "why now"'
        )
    note = note.strip() if note else None
    moment = now()
    git_dir = git.worktree_git_dir(repo)
    found = session.resolve(git_dir, agent_session=agent_session)
    stored = found.stored
    own = stored if stored is not None and stored.stream == stream else None  # started on this stream
    session_id = found.id or new_id("session")
    baseline, since_refs = _baseline(own, store.latest_handoff(snap))

    seen = view.assess(snap, at=moment, policy=policy.load(repo.work_dir), with_waiting=False)
    assessed = seen.claims
    refs = brief.ref_snapshot(repo)
    did, known = _did(repo, snap, own, baseline, since_refs, refs, session_id)
    # What the next session takes up: every thread not done, and done ones that no longer hold.
    open_threads = [tv for tv in seen.threads if not planning.ended(tv.thread) or tv.undone]
    changes = store.read_objective_log(snap)
    who = session.who(repo, agent_session=agent_session)._replace(session=session_id, agent=found.agent)
    journal_id = new_id("journal")
    data = Handoff(
        id=new_id("handoff"),
        stream=stream,
        at=stamp(moment),
        by=who.by,
        host=who.host,
        session=session_id,
        state=snap.commit,
        baseline=baseline,
        objective=packet.objective,
        next_action=packet.next_action,
        blockers=packet.open_blockers(),
        threads=[_thread(tv.thread, tv.checks) for tv in open_threads],
        work_tree=(tree := brief.work_tree(repo)),
        did=did,
        claims=brief.claim_states(assessed),
        refs=refs,
        journal=journal_id,
        agent=found.agent,
        agent_session=agent_session or (stored.agent_session if stored else None),
        started_at=stored.started_at if stored else None,
        objective_change=changes[-1] if changes else None,
        note=note,
        machine=machine.here(repo.work_dir or git_dir),  # so a brief elsewhere can say whether that one is larger
        clone=siblings.clone_id(repo),
        unshared=_unshared(repo, snap, tree),
    )
    entry = _entry(data, journal_id, note, known)
    path = store.handoff_path(data.id, moment)
    stored_json = data.to_json()
    after = store.update(repo, stream, _recording(data, stored_json, entry, path, moment), who=who)
    if own is not None:
        # The handoff is recorded either way; a session file that cannot be written only
        # means the next orient warns that this session ended without one.
        with contextlib.suppress(OSError):
            session.save(found.where or git_dir, own._replace(ended_at=data.at, handoff=data.id))
    document = {"stream": stream, "state": {"ref": after.ref, "commit": after.commit}, "path": path}
    return Handed(budget.fit(_sections(data, known=known), None).text, {**document, "handoff": stored_json}, data)


def _entry(data: Handoff, journal_id: str, note: str | None, known: bool) -> JournalEntry:
    """The journal entry a handoff leaves: its summary, and the session's note."""
    text = _summary(data, known=known) + (f"\nNote: {note}" if note else "")
    return JournalEntry(
        journal_id, text, data.at, data.by, data.host, session=data.session, agent=data.agent, handoff=data.id
    )


def _did(
    repo: Repo,
    snap: store.Snapshot,
    own: session.Session | None,
    baseline: Baseline,
    since_refs: Mapping[str, str] | None,
    refs: Mapping[str, str],
    session_id: str,
) -> tuple[Did, bool]:
    """What this session did (its commits, claims and thread changes, told from what arrived
    meanwhile), and whether there was a baseline to tell it from."""
    assert snap.commit is not None
    claims = store.read_claims(snap)
    moved = brief.moved_refs(repo, since_refs, refs) if since_refs is not None else []
    then = brief.read_at(snap, baseline.state)
    if then is not None:
        added = brief.claims_added(then[1], claims, session_id)
        threads_moved = brief.threads_moved(then[0], store.read_threads(snap))
    else:  # nothing to diff with: only what carries this session's id is known to be its own
        added = [c for c in brief.claims_added((), claims, session_id) if claims[c.id].session == session_id]
        threads_moved = []
    branches = [m for m in moved if m.ref.startswith("refs/heads/")]
    arrived: list[Arrived] = []
    if own is not None:  # this work tree's own session: what it made, told from what arrived
        branches, arrived = session_work.split_commits(repo, branches, parse_stamp(own.started_at), session_id)
        added, threads_moved, came = session_work.split_state(
            repo, snap.commit, baseline.state, session_id, added, threads_moved
        )
        arrived += came
    return Did(branches, added, threads_moved, arrived), then is not None or baseline.kind != "none"


def _recording(
    data: Handoff, stored_json: dict[str, Any], entry: JournalEntry, path: str, moment: datetime
) -> Callable[[store.Snapshot], store.Change]:
    """The handoff's one state change: the packet, its journal entry, and the end of the
    session's thread claims (the threads are free for the next session)."""

    def change(s: store.Snapshot) -> store.Change:
        files: dict[str, bytes | None] = {
            path: store.handoff_bytes(stored_json),
            store.journal_path(entry, moment): store.entry_bytes(entry),
        }
        claims = planning.claims_from(store.read_thread_claims(s))
        ended = planning.expired_by_handoff(claims, data.session, data.host)
        files.update({store.thread_claim_path(t): None for t in ended})
        released = f"\n\nreleased: {', '.join(ended)}" if ended else ""
        return store.Change(f"handoff {data.id}: session {data.session}\n\n{entry.text}{released}", files)

    return change


def _unshared(repo: Repo, snap: store.Snapshot, tree: WorkTree | None) -> Unshared:
    """What only this clone has, judged where the work is (the home's checkout)."""
    judged = places.judged_at(repo, snap)
    there = judged.snap.repo
    return brief.unshared(there, snap, brief.work_tree(there) if judged.away else tree)


def _baseline(own: session.Session | None, previous: Handoff | None) -> tuple[Baseline, Mapping[str, str] | None]:
    """What 'this session did' is measured from, and the refs then: its own start when this
    work tree recorded one on this stream, else the stream's previous handoff, else nothing."""
    if own is not None:
        return Baseline("session", at=own.started_at, state=own.state), own.refs or {}
    if previous is not None:
        return Baseline("handoff", at=previous.at, handoff=previous.id, state=previous.state), previous.refs
    return Baseline("none"), None


def _thread(thread: Thread, checks: Sequence[Assessed]) -> ThreadSummary:
    return ThreadSummary(
        thread.id,
        thread.title,
        thread.status,
        len(checks),
        sum(1 for a in checks if a.derived.state == "verified"),
        [
            Failing(a.claim.id, a.derived.state, brief.first_line(a.derived.observed))
            for a in checks
            if a.derived.state != "verified"
        ],
    )


def _summary(data: Handoff, *, known: bool) -> str:
    did = data.did
    parts = []
    for m in did.commits:
        label = ref_label(m.ref)
        parts.append(f"{label} +{m.gained}" + (f" -{m.lost}" if m.lost else "") if m.now else f"{label} deleted")
    if did.claims:
        parts.append(f"{len(did.claims)} claim{'s' if len(did.claims) != 1 else ''} added")
    parts += [f"{t.id} {t.was or 'new'} → {t.now}" for t in did.threads]
    done = "; ".join(parts) or (
        "no commits, claims or thread changes" if known else "what it did is unknown (no start recorded)"
    )
    kept = data.unshared
    alone = ""
    if kept is not None and kept.ahead:
        alone = (
            f" Not pushed: {kept.branch} +{kept.ahead}" + (f" (not on {kept.upstream})" if kept.upstream else "") + "."
        )
    return f"Session {data.session} handed off ({data.id}): {done}.{alone} Next: {data.next_action or '(none set)'}"


def _sections(data: Handoff, *, known: bool) -> list[Section]:
    who = render.where(data.by.split(" <")[0], data.host, data.agent, None)
    started = f"; started {shown(data.started_at)} UTC" if data.started_at else ""
    header = [
        f"# Handoff {data.id}: stream {data.stream}",
        f"Session {data.session} handed off {shown(data.at)} UTC by {who}{started}.",
        "The next session starts with: git continuity orient",
    ]
    objective = data.objective
    lines = [
        objective.text,
        f"- why: {objective.why}",
        f"- set {shown(objective.set_at)} UTC by {objective.set_by}",
    ]
    change = data.objective_change
    if change and change.old:
        lines.append(f'- it was "{change.old}" until then; why it changed: {change.why}')
    # Only the text of these sections is used: the handoff's JSON is the record itself.
    done = [Item([f"- branch {brief.ref_line(m)}"], None) for m in data.did.commits]
    for c in data.did.claims:
        handle = f" ({render.abbreviate(c.handle)})" if c.handle else " (prose)"
        done.append(Item([f'- claim added: {c.id} "{c.text}"{handle}'], None))
    for t in data.did.threads:
        done.append(Item([f"- thread {t.id} {t.title}: {t.was or 'new'} → {t.now}"], None))
    came = [Item([f"- {a.what}: arrived from {a.who}"], None) for a in data.did.arrived]
    if not done:
        said = (
            "- no commits, claims or thread changes"
            if known
            else "- unknown: this session's start was not recorded (run git continuity orient first)"
        )
        done.append(Item([said], None))
    threads = [
        Item(
            [f"- {t.id} [{t.status}] {t.title}: {t.verified} of {t.checks} checks verified now"]
            + [f"  - {f.state} {f.claim}: {f.observed}" for f in t.failing],
            None,
        )
        for t in data.threads
    ] or [Item(["- none"], None, placeholder=True)]
    blockers = [Item([f"- {b.id} {b.text}"], None) for b in data.blockers] or [Item(["- none"], None, placeholder=True)]
    sections = [
        Section("header", "", budget.TRUTH, [Item(header, None)]),
        Section("objective", "Objective", 1, [Item(lines, None)]),
        Section("next_action", "Next action", 1, [Item([data.next_action or "(none set)"], None)]),
        Section("did", "What this session did", 2, done),
        *([Section("arrived", "What arrived meanwhile (pull or sync), not this session's", 2, came)] if came else []),
        Section("work_tree", "Work tree", 3, brief.work_tree_items(data.work_tree)),
        Section(
            "unshared",
            "Not yet shared: only in this clone",
            2,
            [Item([line], None) for line in (brief.unshared_lines(data.unshared) if data.unshared else [])],
        ),
        Section("threads", "Open threads", 2, threads),
        Section("blockers", "Blockers", 2, blockers),
    ]
    if data.note:
        sections.append(Section("note", "Note", 2, [Item([data.note], None)]))
    return sections
