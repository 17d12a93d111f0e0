from __future__ import annotations

from dataclasses import replace

from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import Claim, JournalEntry, ago, new_id, now, parse_stamp, shown, stamp, to_json
from git_continuity.plugins import verify
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import notes as commit_notes
from git_continuity.store import policy
from git_continuity.view import assessed as view
from git_continuity.view import labels
from git_continuity.view.retractions import retractions


def add(repo: Repo, *, stream: str, text: str, check: str | None, thread: str | None = None) -> int:
    """Record a claim; its handle is validated and resolved to full ids first. A claim with
    --thread is one of that thread's acceptance checks; commits its handle names get a note."""
    text = text.strip()
    if not text:
        raise UserError("claim add needs a non-empty statement")
    first = store.snapshot(repo, stream)
    store.require_state(first)
    if thread is not None and thread not in store.read_threads(first):
        known = ", ".join(sorted(store.read_threads(first))) or "none"
        raise UserError(f"no thread {thread!r} in stream '{stream}' (threads: {known})")
    handle = verify.resolve(repo, check, stream=stream).text if check is not None else None
    moment = now()
    who = session.who(repo)
    made: list[Claim] = []
    reopened: list[str] = []

    def make(snap: store.Snapshot) -> store.Change:
        claim = Claim(
            id=new_id("claim", store.Taken(snap, store.claim_path)),
            text=text,
            handle=handle,
            added_at=stamp(moment),
            added_by=who.by,
            host=who.host,
            written=check if check is not None and check != handle else None,
            thread=thread,
            **who.stamp(),
        )
        made[:] = [claim]
        body = f"\n\nhandle: {handle}" if handle else "\n\nprose: no handle"
        files: dict[str, bytes | None] = {store.claim_path(claim.id): store.entry_bytes(claim)}
        owner = store.read_threads(snap).get(thread) if thread else None
        if owner is not None and owner.status == "done":
            # A new acceptance check was not part of what closed it: the thread is open again.
            reopen = replace(owner, status="open", closed_at=None, closed_by=None, closed_on=None)
            files[store.thread_path(owner.id)] = store.entry_bytes(reopen)
            body += f"\n\nreopens {owner.id}: a done thread got a new check"
            reopened[:] = [owner.id]
        return store.Change(f"claim add {claim.id}: {text}{body}", files)

    commit_notes.require_writable(repo, "nothing was written")  # the claim's note must follow it
    snap = store.update(repo, stream, make)
    claim = made[0]
    commit_notes.claim_named(repo, stream, claim)
    print(hang(f"Recorded claim {claim.id}: ", text))
    if reopened:
        print(f"  thread {reopened[0]} was done; with a new check it is open again until every check verifies")
    if claim.handle is None:
        print("  prose: no handle, so it is shown but never trusted (add one with --check HANDLE)")
        return 0
    written = f"  (as written: {claim.written})" if claim.written else ""
    print(f"  handle  {render.abbreviate(claim.handle)}{written}")
    (assessed,) = verify.assess(snap, [claim], at=now(), policy=policy.load(repo.work_dir))
    if claim.handle.startswith("cmd:") and assessed.derived.state == "unchecked":
        from git_continuity.trust import approvals as trust

        if not trust.is_approved(repo, claim.handle[4:]):  # verify would only say it is not approved
            hint = trust.approve_hint(claim.handle[4:])
            print(f"  now     unchecked: it runs only once approved on this machine: {hint}, then verify")
            return 0
    print(f"  now     {assessed.derived.state}: {assessed.derived.observed}")
    return 0


def retract(repo: Repo, *, stream: str, claim_id: str, why: str) -> int:
    """Remove a claim from the state (a deletion, which syncs as one), with a journal entry
    saying what it claimed, its state when withdrawn, and why. A check of an open thread is
    its contract: it is withdrawn, not removed, and stays on the thread with its reason (the
    thread then closes only with --accept-withdrawn); a done thread's checks are refused."""
    why = why.strip()
    if not why:
        raise UserError("claim retract needs a non-empty --why: the journal keeps it")
    moment = now()
    who = session.who(repo)
    kept: list[str] = []

    def make(snap: store.Snapshot) -> store.Change:
        claim = _claim(snap, claim_id)
        owner = store.read_threads(snap).get(claim.thread or "")
        if claim.withdrawn is not None:
            raise UserError(
                f"claim {claim.id} was withdrawn already ({claim.withdrawn['at']}): {claim.withdrawn['why']}"
            )
        if owner is not None and owner.status == "done":
            raise UserError(
                f"claim {claim.id} is an acceptance check of {owner.id}, which is done: the checks it closed on "
                f"cannot be withdrawn; reopen it first (git continuity thread reopen {owner.id}); nothing was written"
            )
        (assessed,) = verify.assess(snap, [claim], at=moment, policy=policy.load(repo.work_dir))
        said = f" ({claim.handle})" if claim.handle else " (prose)"
        text = f'retracted claim {claim.id} "{claim.text}"{said}, {assessed.derived.state} when withdrawn: {why}'
        entry = JournalEntry(new_id("journal"), text, stamp(moment), who.by, who.host, **who.stamp())
        files: dict[str, bytes | None] = {store.journal_path(entry, moment): store.entry_bytes(entry)}
        if owner is not None:  # the thread's contract: kept on it, marked withdrawn
            marked = {
                "why": why,
                "at": stamp(moment),
                "by": who.by,
                **({"session": who.session} if who.session else {}),
            }
            files[store.claim_path(claim.id)] = store.entry_bytes(replace(claim, withdrawn=marked))
            kept[:] = [owner.id]
        else:
            files[store.claim_path(claim.id)] = None
        return store.Change(f"claim retract {claim.id}: {claim.text}\n\nwhy: {why}", files)

    store.update(repo, stream, make)
    if kept:
        print(
            f"Check {claim_id} withdrawn from thread {kept[0]}; it stays on the thread with its reason, and the "
            f'thread now closes only with: git continuity thread close {kept[0]} --accept-withdrawn "why"'
        )
    else:
        print(f"Claim {claim_id} retracted; the journal keeps what it said and why.")
    return 0


def _claim(snap: store.Snapshot, claim_id: str) -> Claim:
    claims = store.read_claims(snap)
    if claim_id in claims:
        return claims[claim_id]
    said = retractions(snap, [claim_id]).get(claim_id)
    if said:
        raise UserError(said)
    raise UserError(f"no claim {claim_id!r} in stream '{snap.stream}' (git continuity claim list shows the ids)")


def show(repo: Repo, *, stream: str, claim_id: str, as_json: bool) -> int:
    """One claim: what it says, where it came from, its state now, and its evidence history."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    claim = _claim(snap, claim_id)
    at = now()
    (assessed,) = view.assess(snap, at=at, claim_ids=[claim.id], with_waiting=False).claims
    history = store.evidence_history(snap, claim.id)
    if as_json:
        found = {**render.claim_json(assessed), "host": claim.host}
        found.update({k: v for k, v in (("session", claim.session), ("agent", claim.agent)) if v is not None})
        evidence = [to_json(e) for e in history]
        render.emit_json(
            "claim-show", {"stream": stream, "claim": found, "evidence": evidence, "problems": snap.problems}
        )
        return 2 if snap.problems else 0
    added = render.where(claim.added_by, claim.host, claim.agent, claim.session)
    print(hang(f"Claim {claim.id}  ", claim.text))
    if claim.handle is None:
        print("  handle  none: prose, shown but never trusted")
    else:
        written = f"  (as written: {claim.written})" if claim.written else ""
        print(hang("  handle  ", f"{render.abbreviate(claim.handle)}{written}"))
    if claim.thread:
        print(f"  thread  {claim.thread} (one of its acceptance checks)")
    print(hang("  added   ", f"{shown(claim.added_at)} UTC ({ago(parse_stamp(claim.added_at), at)}) by {added}"))
    note = labels.freshness_note(assessed, at)
    fresh = f" [{note}]" if note else ""
    print(hang("  now     ", f"{assessed.derived.state}{fresh}: {assessed.derived.observed}"))
    if not history:
        hint = " (git continuity verify " + claim.id + " records some)" if claim.handle else ""
        print(f"Evidence: none recorded{hint}")
    else:
        print(f"Evidence ({len(history)} recorded, oldest first)")
    for e in history:
        where = render.where(e.verifier + " " + e.verifier_version, e.host, e.agent, e.session)
        first, *rest = e.observed.split("\n")
        print(hang(f"  {shown(e.checked_at)} UTC  ", f"{e.result}: {first}"))
        print("\n".join(hang("    ", line) for line in [*rest, f"by {where}"]))
    for p in snap.problems:
        print(f"problem: {p}")
    return 2 if snap.problems else 0


def list_claims(repo: Repo, *, stream: str, as_json: bool, states: list[str] | None) -> int:
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    assessed = list(view.assess(snap, with_waiting=False).claims)
    if states:
        assessed = [a for a in assessed if a.derived.state in states]
    if as_json:
        render.emit_json(
            "claim-list",
            {"stream": stream, "claims": [render.claim_json(a) for a in assessed], "problems": snap.problems},
        )
    else:
        print("\n".join(render.claim_lines(assessed)) or "No claims.")
        for p in snap.problems:
            print(f"problem: {p}")
    return 2 if snap.problems else 0
