from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import Claim, Thread, now
from git_continuity.plugins import verify
from git_continuity.render import meter
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import policy
from git_continuity.view import assessed as view
from git_continuity.view import stoploss


def verify_claims(
    repo: Repo, *, stream: str, ids: list[str], online: bool, as_json: bool, timeout: float | None = None
) -> int:
    """Dereference claims now, record one evidence entry per handle, exit 1 unless all verify.

    Network handles (forges, CI servers) are asked only with ``online``; without it they
    keep showing their last evidence and nothing touches the network.
    """
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    # Checked before dereferencing: a claim file that does not parse would otherwise be
    # skipped, and "all verified" would be said of the claims that are left.
    store.require_well_formed(snap)
    claims = store.read_claims(snap)
    _require_known(snap, claims, ids, stream)
    if timeout is not None and not 0 < timeout <= 600:
        raise UserError(f"--timeout {timeout:g} is out of range: give more than 0 seconds and at most 600")
    chosen = [claims[i] for i in ids] if ids else sorted(claims.values(), key=lambda c: (c.added_at, c.id))
    moment = now()
    rules = policy.load(repo.work_dir)
    seen = view.assess(
        snap,
        at=moment,
        policy=rules,
        dereference="all",
        online=online,
        claim_ids=[c.id for c in chosen],
        with_waiting=False,
        timeout=timeout,
        progress=meter.on_terminal(as_json) if online else None,
    )
    by_id = {a.claim.id: a for a in seen.claims}
    assessed = [by_id[c.id] for c in chosen]  # in the order asked
    taken: set[str] = set()
    who = session.who(repo)
    records = [(a, e) for a in assessed if (e := verify.evidence_for(a, moment, taken, who)) is not None]
    tried = _tried(snap, claims, assessed)
    recorded = stoploss.record(
        snap, tried, at=moment, via="verify", rules=rules, evidence={e.claim: e.id for _, e in records}, who=who
    )
    if records:
        tally = render.counts([a for a, _ in records])
        summary = ", ".join(f"{n} {s}" for s, n in tally.items() if n)

        def make(s: store.Snapshot) -> store.Change:
            lines = [f"{e.claim} {e.result}: {e.observed}" for _, e in records]
            return store.Change(
                f"verify: {len(records)} claim{'s' if len(records) != 1 else ''} ({summary})\n\n"
                + "\n".join(lines)
                + (f"\n\n{stoploss.message(recorded)}" if recorded.attempts else ""),
                {**{store.evidence_path(e, moment): store.entry_bytes(e) for _, e in records}, **recorded.files},
            )

        store.update(repo, stream, make)
    not_asked = [a.claim.id for a in assessed if a.not_asked]
    if as_json:
        render.emit_json(
            "verify",
            {
                "stream": stream,
                "online": online,
                "claims": [render.claim_json(a) for a in assessed],
                "evidence": [e.id for _, e in records],
                "not_asked": not_asked,
                "problems": snap.problems,
            },
        )
    else:
        _tell(snap, moment, assessed, len(records), recorded, tried, not_asked)
    failed = [a for a in assessed if a.derived.state != "verified" and (ids or a.claim.handle)]
    return 1 if failed else 0


def _require_known(snap: store.Snapshot, claims: Mapping[str, Claim], ids: list[str], stream: str) -> None:
    """Refuse ids that name no claim, saying why an id names a retracted one."""
    unknown = [i for i in ids if i not in claims]
    if unknown:
        from git_continuity.view.retractions import retractions

        said = retractions(snap, unknown)
        rest = [i for i in unknown if i not in said]
        lines = list(said.values())
        if rest:
            lines.insert(
                0, f"no claim {', '.join(rest)} in stream '{stream}' (git continuity claim list shows the ids)"
            )
        raise UserError("\n".join(lines))


def _tell(
    snap: store.Snapshot,
    moment: datetime,
    assessed: Sequence[verify.Assessed],
    recorded_count: int,
    recorded: stoploss.Recorded,
    tried: list[tuple[Thread, list[verify.Assessed]]],
    not_asked: list[str],
) -> None:
    """verify's text: each claim's state, what was recorded, and what was not asked."""
    print("\n".join(render.claim_lines(assessed)) or "No claims to verify.")
    if recorded_count:
        print(f"\nRecorded {recorded_count} evidence entr{'ies' if recorded_count != 1 else 'y'}.")
    for line in stoploss.stopped_lines(recorded.stopped):
        print(f"\n{line}")
    for t, checks in tried:  # no attempt counted: say so, and not to retry
        if t.status != "done" and (w := stoploss.waiting_of(snap, checks)) is not None:
            print("\n" + hang(f'{t.id} "', f'{t.title}": {w.text(moment)}'))
    if not_asked:
        one = len(not_asked) == 1
        count = f"{len(not_asked)} network claim{'' if one else 's'} ({', '.join(not_asked)})"
        print(
            f"Not asked: {count} show{'s its' if one else ' their'} last evidence; nothing was sent over the "
            "network.\ngit continuity verify --online asks the services."
        )


def _tried(
    snap: store.Snapshot, claims: Mapping[str, Claim], assessed: Sequence[verify.Assessed]
) -> list[tuple[Thread, list[verify.Assessed]]]:
    """The threads whose every check with a handle was dereferenced here, with those checks:
    an attempt is about a thread's whole set of checks, so verifying one claim of a thread
    with two is no attempt (its failing set would look like a change)."""
    done = {a.claim.id: a for a in assessed}
    found = []
    for t in sorted(store.read_threads(snap).values(), key=lambda t: (t.added_at, t.id)):
        own = [c for c in claims.values() if c.thread == t.id and c.handle]
        if own and all(c.id in done for c in own):
            found.append((t, [done[c.id] for c in sorted(own, key=lambda c: (c.added_at, c.id))]))
    return found
