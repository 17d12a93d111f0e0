"""Publish the local state to a remote: never forced. When other clones moved a shared ref
first, the state goes to this clone's lane instead (remote_layout), which only this clone
writes, so the push lands without a retry storm; the next sync of any clone folds the lane
into the shared ref, and this clone deletes its lane once the shared ref holds it."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.store import siblings
from git_continuity.syncing import tracking, transport
from git_continuity.syncing.fetching import NOTES, TIMEOUT, Fetched, LeftOut, Line, unreachable
from git_continuity.syncing.layout import Lane, Layout, advice
from git_continuity.syncing.pulling import pull_from

MAX_RETRIES = 5  # pushes again after the remote moved meanwhile, before giving up
# Pushes of a shared ref made again (after a fetch and a merge) before the state goes to this
# clone's lane instead. None: in a fleet each retry of the shared ref mostly loses again, and
# the lane push that follows one refusal lands at once.
SHARED_RETRIES = 0
BACKOFF_CAP = 60.0  # seconds: the widest window a retry's pause is drawn from (a fleet on a busy machine)


def local_streams(repo: Repo) -> dict[str, Oid]:
    found = {}
    for name in git.list_refs(repo, constants.STATE_PREFIX):
        target = git.ref_target(repo, name)
        stream = name[len(constants.STATE_PREFIX) :]
        if target is not None and constants.usable_stream(stream):
            found[stream] = target
    return found


def require_sendable(repo: Repo, remote: str) -> None:
    """Refuse, naming every bad file of every stream, when the local state is malformed:
    nothing malformed leaves the machine (a teammate's pull would refuse it, and only a
    force push could take it back)."""
    found = []
    for stream, commit in sorted(local_streams(repo).items()):
        if not git.has_commit(repo, commit):
            found.append(f"{stream} ({commit[:7]}): {constants.STATE_PREFIX}{stream} is not a commit")
            continue
        found += [f"{stream} ({commit[:7]}): {p}" for p in store.all_problems(store.snapshot(repo, stream))]
    notes = git.ref_target(repo, constants.NOTES_REF)
    if notes is not None and not git.has_commit(repo, notes):
        found.append(f"{NOTES} ({notes[:7]}): {constants.NOTES_REF} is not a commit (git continuity doctor --fix)")
    if found:
        raise UserError(
            f"the local state is malformed; nothing was sent to {remote}:\n  "
            + "\n  ".join(found)
            + "\nPut the stream back on its last good change (git continuity log lists them):"
            " git update-ref refs/continuity/<stream> <commit>; a bad packet is repaired with git continuity edit."
            " Then push again."
        )


@dataclass
class Published:
    """What a push did: each ref's line, the retries it took, and what the server refused."""

    lines: list[Line] = field(default_factory=list)
    retries: int = 0
    refused: list[str] = field(default_factory=list)  # state refs: "<ref>: <the server's verdict>"
    kept_local: list[str] = field(default_factory=list)  # the notes, refused while the state went through
    said: list[str] = field(default_factory=list)  # the server's own words (remote: lines)
    lanes: list[str] = field(default_factory=list)  # the lanes the state went to (other clones pushed first)
    held: list[str] = field(default_factory=list)  # what was not sent, and why (notes no trusted key signed)
    left_out: list[LeftOut] = field(default_factory=list)  # what a retry's pull did not take in


def _refuse_foreign(known: Fetched, dst: str, name: str) -> None:
    if dst in known.foreign:
        raise UserError(
            f"{dst} on {known.remote} is not continuity state (a branch of someone's), and the "
            f"{'commit notes' if name == NOTES else f'state of stream {name!r}'} would go there; nothing was pushed.\n"
            f"Choose a prefix no branch uses: git config {known.layout.prefix_key} <prefix> "
            f"(now {known.layout.prefix!r}). This tool never moves a branch that is not its own."
        )


def _forbidden(error: UserError, layout: Layout, said: str) -> UserError:
    """A push the server refused as a whole before any ref was judged (a proxy's HTTP 403):
    the setting that would get the state through, after git's words."""
    if not any(f"error: {code}" in said or f"HTTP {code}" in said for code in ("403", "401", "404")):
        return error
    return UserError(f"{error}\n{advice(layout)}")


def publish(
    repo: Repo,
    remote: str,
    known: Fetched,
    *,
    timeout: float = TIMEOUT,
    retries: int = MAX_RETRIES,
    cap: float = BACKOFF_CAP,
) -> Published:
    """Push every stream and the notes that the remote lacks, never forced. A shared ref
    refused because other clones pushed first sends the state to this clone's lane instead
    (``_to_lanes``), after at most SHARED_RETRIES retries of the shared ref; this clone's lanes
    that the shared refs hold go away in the same push. A clone that has no id (a read-only
    .git) fetches, merges and pushes again after a random pause that grows with each retry,
    at most ``retries`` times (each git call at most ``timeout`` seconds). ``known`` is what
    the remote had, as far as we know."""
    layout = known.layout
    clone = siblings.clone_id(repo)
    done = Published()
    given_up: set[str] = set()  # refused for good: never offered again in this push
    cycle = time.monotonic()  # a retry's cycle: fetch, merge, push
    while True:
        ours, updates = _lacking(repo, known, done, given_up)
        drops = _drops(repo, known, clone, set(updates), given_up) if clone else {}
        if not updates and not drops:
            return _up_to_date(done, ours)
        specs = [f"{src}:{dst}" for dst, (src, *_) in updates.items()] + [f":{dst}" for dst in drops]
        try:
            result = transport.push(repo, remote, specs, timeout)
        except transport.TransportError as error:
            raise _forbidden(unreachable(repo, remote, error, "push to"), layout, str(error)) from None
        took, cycle = time.monotonic() - cycle, time.monotonic()
        _landed(repo, known, result, updates, drops, done)
        # A remote that keeps deletions (receive.denyDeletes) keeps the lane: nothing is lost,
        # and the next fetch finds it up to date.
        given_up |= {dst for dst, _ in result.refused if dst in drops} | {dst for dst in result.behind if dst in drops}
        refused = [(dst, verdict) for dst, verdict in result.refused if dst not in drops]
        if refused and len(refused) < len(result.refused):
            continue  # refused with a deletion (a hook that takes none, all or nothing): again without it
        behind = [dst for dst in result.behind if dst in updates]
        notes_too = _refused(layout, refused, given_up, done)
        done.said += [line for line in result.said if line not in done.said]
        if notes_too:
            # A server that refuses a whole push for one ref (a pre-receive hook that takes no
            # refs/notes/*, as Bitbucket Server's): the state alone may go through.
            continue
        if not behind:
            return done
        if clone is not None and done.retries >= min(SHARED_RETRIES, retries):
            return _to_lanes(repo, known, clone, {dst: updates[dst] for dst in behind}, done, timeout, retries)
        if done.retries >= retries:
            raise _kept_moving(remote, retries, result.said)
        _pause(done, took, cap)
        cycle = time.monotonic()
        known = _take_in(repo, remote, layout, timeout, done)


# A state ref's push: (the local ref, its commit, the remote's as far as we know, the stream
# or NOTES), by the remote ref it goes to.
Update = tuple[str, Oid, Oid | None, str]


def _lacking(
    repo: Repo, known: Fetched, done: Published, given_up: set[str]
) -> tuple[dict[str, Oid], dict[str, Update]]:
    """This clone's streams, and what of them and of the notes the remote lacks, but what was
    given up on; notes no trusted key signed are held back, said once in ``done``. A remote
    ref that is someone's branch is refused before anything is sent."""
    layout = known.layout
    ours = local_streams(repo)
    notes = git.ref_target(repo, constants.NOTES_REF)
    updates = {
        layout.state_ref(s): (f"{constants.STATE_PREFIX}{s}", oid, known.streams.get(s), s)
        for s, oid in sorted(ours.items())
        if known.streams.get(s) != oid
    }
    if notes is not None and notes != known.notes:
        held = _notes_held(repo, notes, known.notes)
        if held is None:
            updates[layout.notes_ref] = (constants.NOTES_REF, notes, known.notes, NOTES)
        elif held not in done.held:
            done.held.append(held)
            done.lines.append(Line(NOTES, held))
    for dst in given_up:
        updates.pop(dst, None)
    for dst, (_, _, _, name) in updates.items():
        _refuse_foreign(known, dst, name)
    return ours, updates


def _up_to_date(done: Published, ours: dict[str, Oid]) -> Published:
    """A push with nothing (more) to send: when all it did was remove lanes, every stream it
    did not name is said to be up to date."""
    if all(line.what == LANE_REMOVED for line in done.lines) and not done.refused and not done.kept_local:
        told = {line.name for line in done.lines}
        done.lines = [Line(s, "up to date") for s in sorted(ours) if s not in told] + done.lines
    return done


def _landed(
    repo: Repo,
    known: Fetched,
    result: transport.Pushed,
    updates: dict[str, Update],
    drops: dict[str, tuple[str, str]],
    done: Published,
) -> None:
    """What the remote took: each ref sent is now its tracking ref and a line, each lane
    deleted is forgotten."""
    remote = known.remote
    for dst in result.accepted:
        if dst in drops:  # the shared ref holds it (or is refused, and the lane is sent again below)
            git.delete_ref(repo, tracking.lane_tracking_ref(remote, *drops[dst]))
            known.lanes.pop(dst, None)
        elif dst in updates:
            _, new, old, name = updates[dst]
            track = tracking.notes_tracking_ref(remote) if name == NOTES else tracking.tracking_ref(remote, name)
            git.create_reflog(repo, track)
            git.set_ref(repo, track, new, f"continuity: push {remote}")
            where = "" if dst in (constants.NOTES_REF, f"{constants.STATE_PREFIX}{name}") else f" as {dst}"
            done.lines.append(
                Line(
                    name,
                    f"pushed {old[:7]}..{new[:7]}{where}" if old else f"created on {remote} ({new[:7]}){where}",
                )
            )
    removed = sorted(drops[dst][1] or NOTES for dst in result.accepted if dst in drops)
    done.lines += [Line(name, LANE_REMOVED) for name in removed]


def _refused(layout: Layout, refused: list[tuple[str, str]], given_up: set[str], done: Published) -> bool:
    """Refs the server refused for good are given up and said (the notes as kept here); when
    the notes were refused with state refs, those are left to be sent again without them
    (True)."""
    notes_too = layout.notes_ref in dict(refused) and len(refused) > 1
    for dst, verdict in refused:
        if dst != layout.notes_ref and notes_too:
            continue  # refused with the notes: tried again without them
        given_up.add(dst)
        (done.kept_local if dst == layout.notes_ref else done.refused).append(f"{dst}: {verdict}")
    return notes_too


def _pause(done: Published, took: float, cap: float) -> None:
    """Another clone pushed first: a pause before the next try, drawn at random from a window
    that doubles with each retry, so a fleet does not retry in step. The window is counted in
    cycles like the last one (fetch, merge, push): a push lands only when no other lands
    during its cycle, so a slow remote or a busy machine spreads the clones wider. At least
    one clone lands in each round."""
    done.retries += 1
    time.sleep(random.uniform(0, min(cap, max(took, 0.1) * 2**done.retries)))


def _take_in(repo: Repo, remote: str, layout: Layout, timeout: float, done: Published) -> Fetched:
    """The remote's state taken in before a retry; what moved meanwhile is said in ``done``."""
    known, taken = pull_from(repo, remote, layout, timeout)
    done.left_out += known.left_out
    done.lines += [Line(n, what, meanwhile=True) for n, what, _ in taken if not what.startswith("up to date")]
    return known


def _notes_held(repo: Repo, notes: Oid, theirs: Oid | None) -> str | None:
    """Why the local notes are not sent (a notes commit the remote lacks that no key trusted
    here signed, or that is not a notes commit at all: a teammate's pull would leave it out,
    as this one's does), or None."""
    from git_continuity.store import integrity
    from git_continuity.syncing.layout import is_notes_commit

    base = theirs if theirs is not None and git.has_commit(repo, theirs) else None
    admission = integrity.admission(repo, base, notes, lambda c: is_notes_commit(repo, c))
    if admission.heads == [notes]:
        return None
    first = admission.refused[0]
    what = integrity.NOT_NOTES if first.detail == integrity.NOT_NOTES else integrity.describe(repo, first)
    more = f" (and {admission.left_out - 1} more)" if admission.left_out > 1 else ""
    return (
        f"not sent, kept here: {what.removeprefix('commit ')}{more}; a teammate's pull would leave the notes"
        f" out (git continuity doctor says more)"
    )


def _kept_moving(remote: str, retries: int, said: list[str]) -> UserError:
    return UserError(
        f"{remote} kept moving: {retries} retries were refused because other clones pushed first."
        + "".join(f"\n  {line}" for line in said)
        + "\nWhat was fetched is merged here; run git continuity sync again."
    )


def _drops(repo: Repo, known: Fetched, clone: str, updating: set[str], skip: set[str]) -> dict[str, tuple[str, str]]:
    """This clone's lanes (remote ref -> (clone, stream)) that the shared refs hold, or will
    hold once this push lands: deleted in the same push. Should the shared ref be refused
    meanwhile, the lane is sent again at once, from a state that contains it (_to_lanes)."""
    layout, found = known.layout, {}
    for name, (lane, tip) in known.lanes.items():
        if lane.clone != clone or name != layout.lane_ref(lane) or name in skip:
            continue
        dst = layout.state_ref(lane.stream) if lane.stream else layout.notes_ref
        src = f"{constants.STATE_PREFIX}{lane.stream}" if lane.stream else constants.NOTES_REF
        holder = (
            git.ref_target(repo, src)
            if dst in updating
            else (known.streams.get(lane.stream) if lane.stream else known.notes)
        )
        held = holder is not None and git.has_commit(repo, tip) and git.has_commit(repo, holder)
        if held and holder is not None and git.is_ancestor(repo, tip, holder):
            found[name] = (lane.clone, lane.stream)
    return found


LANE_REMOVED = "lane removed: the shared ref holds it"
FOLDED = "(any clone's next sync folds it in)"


LEFT_OUT_THERE = "the shared ref holds changes left out here"


def lane_sent(ref: str, span: str, why: str = "others pushed first") -> str:
    """What a push to this clone's lane says: short enough for 80 columns, the lane's ref on
    a line of its own under it (a lane's ref alone is 40 to 60 characters)."""
    return f"sent to this clone's lane ({span}): {why}\n    {ref}\n    {FOLDED}"


def _to_lanes(
    repo: Repo,
    known: Fetched,
    clone: str,
    behind: dict[str, tuple[str, Oid, Oid | None, str]],
    done: Published,
    timeout: float,
    retries: int,
) -> Published:
    """Send what other clones kept from the shared refs to this clone's lanes. Only this clone
    writes them, and its state descends from what it sent there before, so each is a
    fast-forward that lands at once; it is fetched, merged and sent again only when another
    work tree of this repository sent a newer one meanwhile."""
    layout, remote = known.layout, known.remote
    while True:
        sends = {}
        for dst, (src, _, _, name) in behind.items():
            lane = Lane(clone, "" if name == NOTES else name)
            new = git.ref_target(repo, src)
            if new is not None and new != known.lane(lane):
                sends[layout.lane_ref(lane)] = (new, known.lane(lane), lane, dst, name)
        if not sends:
            return done
        try:
            result = transport.push(repo, remote, [f"{new}:{ref}" for ref, (new, *_) in sends.items()], timeout)
        except transport.TransportError as error:
            raise _forbidden(unreachable(repo, remote, error, "push to"), layout, str(error)) from None
        for ref in result.accepted:
            if ref not in sends:
                continue
            new, old, lane, dst, name = sends[ref]
            track = tracking.lane_tracking_ref(remote, *lane)
            git.create_reflog(repo, track)
            git.set_ref(repo, track, new, f"continuity: push {remote} (this clone's lane)")
            known.lanes[ref] = (lane, new)
            span = f"{old[:7]}..{new[:7]}" if old else new[:7]
            done.lanes.append(ref)
            why = LEFT_OUT_THERE if any(x.name == name for x in known.left_out) else "others pushed first"
            done.lines.append(Line(name, lane_sent(ref, span, why)))
        for ref, verdict in result.refused:
            (done.kept_local if sends.get(ref, ("",) * 5)[4] == NOTES else done.refused).append(f"{ref}: {verdict}")
        done.said += [line for line in result.said if line not in done.said]
        if not result.behind:
            return done
        if done.retries >= retries:
            raise _kept_moving(remote, retries, result.said)
        done.retries += 1
        known, taken = pull_from(repo, remote, layout, timeout)
        done.left_out += known.left_out
        done.lines += [Line(n, what, meanwhile=True) for n, what, _ in taken if not what.startswith("up to date")]
        behind = {dst: behind[dst] for ref, (*_, dst, _) in sends.items() if ref in result.behind}


def last_fetched(repo: Repo, remote: str, layout: Layout) -> Fetched:
    """What the remote had as of the last fetch (the tracking refs)."""
    lanes = {
        layout.lane_ref(Lane(*lane)): (Lane(*lane), oid) for lane, oid in tracking.tracked_lanes(repo, remote).items()
    }
    return Fetched(
        remote,
        layout,
        tracking.tracked_streams(repo, remote),
        git.ref_target(repo, tracking.notes_tracking_ref(remote)),
        lanes=lanes,
    )
