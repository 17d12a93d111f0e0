"""``handoff``: end the session, leaving the next one what it needs: a handoff packet on the
state ref (one file per handoff, so two clones' handoffs merge) and a session entry in the
journal, in one commit."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from git_continuity import brief, budget, policy, render, session, store, verify
from git_continuity import repo as git
from git_continuity.budget import Item, Section
from git_continuity.errors import UserError
from git_continuity.model import JournalEntry, Thread, new_id, now, shown, stamp
from git_continuity.repo import Repo
from git_continuity.verify import Assessed


@dataclass(frozen=True)
class Handed:
    text: str  # Markdown, for a person or a prompt
    document: dict[str, Any]  # the --json output
    handoff: dict[str, Any]  # the packet as stored


def handoff(repo: Repo, *, stream: str, note: str | None, as_json: bool) -> int:
    result = make(repo, stream=stream, note=note)
    if as_json:
        render.emit_json("handoff-output", result.document)
    else:
        print(result.text, end="")
    return 0


def make(repo: Repo, *, stream: str, note: str | None = None, agent_session: str | None = None) -> Handed:
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    store.require_well_formed(snap)
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
    env_session, env_agent = session.from_env()
    stored = session.open_session(git_dir)
    if stored is not None and (stored.stream != stream or env_session not in (None, stored.id)):
        stored = None
    session_id = env_session or (stored.id if stored else new_id("session"))
    agent = env_agent or (stored.agent if stored else None)
    previous = store.latest_handoff(snap)
    baseline = _baseline(stored, previous)

    claims = store.read_claims(snap)
    threads = store.read_threads(snap)
    ordered = sorted(claims.values(), key=lambda c: (c.added_at, c.id))
    assessed = verify.assess(snap, ordered, at=moment, policy=policy.load(repo.work_dir))
    refs = brief.ref_snapshot(repo)
    moved = brief.moved_refs(repo, baseline["refs"], refs) if baseline["refs"] is not None else []
    then = brief.read_at(snap, baseline.get("state"))
    if then is not None:
        added = brief.claims_added(then[1], claims, session_id)
        threads_moved = brief.threads_moved(then[0], threads)
    else:  # nothing to diff with: only what carries this session's id is known to be its own
        added = [c for c in brief.claims_added((), claims, session_id) if claims[c["id"]].session == session_id]
        threads_moved = []
    known = then is not None or baseline["kind"] != "none"
    did = {
        "commits": [m for m in moved if m["ref"].startswith("refs/heads/")],
        "claims": added,
        "threads": threads_moved,
    }
    open_threads = sorted((t for t in threads.values() if t.status != "done"), key=lambda t: (t.added_at, t.id))
    changes = store.read_objective_log(snap)
    who = session.who(repo)._replace(session=session_id, agent=agent)
    handoff_id = new_id("handoff")
    journal_id = new_id("journal")
    data: dict[str, Any] = {
        "id": handoff_id,
        "stream": stream,
        "at": stamp(moment),
        "by": who.by,
        "host": who.host,
        "session": session_id,
        "state": snap.commit,
        "baseline": {k: v for k, v in baseline.items() if k != "refs" and v is not None},
        "objective": render.objective_json(packet.objective),
        "next_action": packet.next_action,
        "blockers": [
            {"id": b.id, "text": b.text, "added_at": b.added_at, "added_by": b.added_by} for b in packet.open_blockers()
        ],
        "threads": [_thread(t, [a for a in assessed if a.claim.thread == t.id]) for t in open_threads],
        "work_tree": brief.work_tree(repo),
        "did": did,
        "claims": brief.claim_states(assessed),
        "refs": refs,
        "journal": journal_id,
    }
    optional = {
        "agent": agent,
        "agent_session": agent_session or (stored.agent_session if stored else None),
        "started_at": stored.started_at if stored else None,
        "objective_change": render.change_json(changes[-1]) if changes else None,
        "note": note,
    }
    data.update({k: v for k, v in optional.items() if v is not None})
    summary = _summary(data, known=known)
    entry = JournalEntry(
        journal_id,
        summary + (f"\nNote: {note}" if note else ""),
        stamp(moment),
        who.by,
        who.host,
        session=session_id,
        agent=agent,
        handoff=handoff_id,
    )
    path = store.handoff_path(handoff_id, moment)

    def change(s: store.Snapshot) -> store.Change:
        return store.Change(
            f"handoff {handoff_id}: session {session_id}\n\n{entry.text}",
            {path: store.handoff_bytes(data), store.journal_path(entry, moment): store.entry_bytes(entry)},
        )

    after = store.update(repo, stream, change, who=who)
    if stored is not None:
        # The handoff is recorded either way; a session file that cannot be written only
        # means the next orient warns that this session ended without one.
        with contextlib.suppress(OSError):
            session.save(git_dir, stored._replace(ended_at=stamp(moment), handoff=handoff_id))
    text = budget.fit(_sections(data, known=known), None).text
    document = {
        "stream": stream,
        "state": {"ref": after.ref, "commit": after.commit},
        "path": path,
        "handoff": data,
    }
    return Handed(text, document, data)


def _baseline(stored: session.Session | None, previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """What 'this session did' is measured from: its own start when this work tree recorded
    one, else the stream's previous handoff, else nothing."""
    if stored is not None:
        return {"kind": "session", "at": stored.started_at, "state": stored.state, "refs": stored.refs or {}}
    if previous is not None:
        return {
            "kind": "handoff",
            "at": previous["at"],
            "handoff": previous["id"],
            "state": previous["state"],
            "refs": previous.get("refs") or {},
        }
    return {"kind": "none", "refs": None}


def _thread(thread: Thread, checks: Sequence[Assessed]) -> dict[str, Any]:
    return {
        "id": thread.id,
        "title": thread.title,
        "status": thread.status,
        "checks": len(checks),
        "verified": sum(1 for a in checks if a.derived.state == "verified"),
        "failing": [
            {"claim": a.claim.id, "state": a.derived.state, "observed": brief.first_line(a.derived.observed)}
            for a in checks
            if a.derived.state != "verified"
        ],
    }


def _summary(data: Mapping[str, Any], *, known: bool) -> str:
    did = data["did"]
    parts = []
    for m in did["commits"]:
        label = brief.ref_label(m["ref"])
        parts.append(
            f"{label} +{m['gained']}" + (f" -{m['lost']}" if m["lost"] else "") if m["now"] else f"{label} deleted"
        )
    if did["claims"]:
        parts.append(f"{len(did['claims'])} claim{'s' if len(did['claims']) != 1 else ''} added")
    parts += [f"{t['id']} {t['was'] or 'new'} → {t['now']}" for t in did["threads"]]
    done = "; ".join(parts) or (
        "no commits, claims or thread changes" if known else "what it did is unknown (no start recorded)"
    )
    return f"Session {data['session']} handed off ({data['id']}): {done}. Next: {data['next_action'] or '(none set)'}"


def _sections(data: Mapping[str, Any], *, known: bool) -> list[Section]:
    who = render.where(str(data["by"]).split(" <")[0], data["host"], data.get("agent"), None)
    started = f"; started {shown(data['started_at'])} UTC" if data.get("started_at") else ""
    header = [
        f"# Handoff {data['id']}: stream {data['stream']}",
        f"Session {data['session']} handed off {shown(data['at'])} UTC by {who}{started}.",
        "The next session starts with: git continuity orient",
    ]
    objective = data["objective"]
    lines = [
        objective["text"],
        f"- why: {objective['why']}",
        f"- set {shown(objective['set_at'])} UTC by {objective['set_by']}",
    ]
    change = data.get("objective_change")
    if change and change.get("old"):
        lines.append(f'- it was "{change["old"]}" until then; why it changed: {change["why"]}')
    did = data["did"]
    done: list[Item] = []
    for m in did["commits"]:
        done.append(Item([f"- branch {brief.ref_line(m)}"], m))
    for c in did["claims"]:
        handle = f" ({render.abbreviate(c['handle'])})" if c["handle"] else " (prose)"
        done.append(Item([f'- claim added: {c["id"]} "{c["text"]}"{handle}'], c))
    for t in did["threads"]:
        done.append(Item([f"- thread {t['id']} {t['title']}: {t['was'] or 'new'} → {t['now']}"], t))
    if not done:
        said = (
            "- no commits, claims or thread changes"
            if known
            else "- unknown: this session's start was not recorded (run git continuity orient first)"
        )
        done.append(Item([said], None))
    threads = [
        Item(
            [f"- {t['id']} [{t['status']}] {t['title']}: {t['verified']} of {t['checks']} checks verified now"]
            + [f"  - {f['state']} {f['claim']}: {f['observed']}" for f in t["failing"]],
            t,
        )
        for t in data["threads"]
    ] or [Item(["- none"], None, placeholder=True)]
    blockers = [Item([f"- {b['id']} {b['text']}"], b) for b in data["blockers"]] or [
        Item(["- none"], None, placeholder=True)
    ]
    sections = [
        Section("header", "", budget.TRUTH, [Item(header, None)]),
        Section("objective", "Objective", 1, [Item(lines, objective)]),
        Section("next_action", "Next action", 1, [Item([data["next_action"] or "(none set)"], None)]),
        Section("did", "What this session did", 2, done),
        Section("work_tree", "Work tree", 3, brief.work_tree_items(data["work_tree"])),
        Section("threads", "Open threads", 2, threads),
        Section("blockers", "Blockers", 2, blockers),
    ]
    if data.get("note"):
        sections.append(Section("note", "Note", 2, [Item([str(data["note"])], None)]))
    return sections
