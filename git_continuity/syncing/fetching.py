"""Ask a remote what state it has, in either layout, and bring it here.

The chosen layout's refs land in the tracking refs (syncing/tracking.py); the other layout's (a
remote that moved between transports) are fetched as objects only and taken in once, so
nothing is lost in a move. Every clone's lane (remote_layout), in either layout, is fetched
too and kept in its own tracking ref. A branch under the prefix counts only when its tip is
state (or notes): a person's branch there is named, never merged; one that was rewritten
since it was last fetched (a force push) is refused, naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from git_continuity import constants
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.syncing import tracking, transport
from git_continuity.syncing.layout import NOTES_BRANCH, Lane, Layout, is_notes_commit, is_state_commit

if TYPE_CHECKING:
    from git_continuity.store.integrity import Admission

TIMEOUT = 120.0  # seconds for one git fetch or push
NOTES = "notes"  # how the notes are named in reports (NOTES_BRANCH on a branch remote)
LOCK_RACE = "cannot lock ref"  # git's word for a ref another process moved at that moment
GONE_RACE = "couldn't find remote ref"  # a lane its clone deleted between the listing and the fetch
START = re.compile(r"^init: start stream (\S+)\n")  # the first commit of a stream (commands/init.py)


class Line(NamedTuple):
    """What one stream (or the notes) did in a pull or a push."""

    name: str  # a stream, NOTES, or "ignored <ref>"
    what: str
    meanwhile: bool = False  # taken in while pushing: the remote had moved meanwhile


@dataclass(frozen=True)
class LeftOut:
    """What a pull left out of one stream (or the notes): commits no trusted key signed, and
    those built on them, kept in the tracking ref for a person to look at (never merged, never
    lost). ``signers``: the refused commits grouped by what is wrong and whose key: {kind,
    key, fingerprint, listed, author, detail, commits}."""

    name: str  # a stream, or NOTES
    kept_in: str
    commits: int
    signers: list[dict[str, object]]


@dataclass
class Side:
    """One layout's refs on the remote: stream -> (remote ref, commit), and the notes."""

    streams: dict[str, tuple[str, Oid]] = field(default_factory=dict)
    notes: tuple[str, Oid] | None = None
    lanes: dict[str, tuple[Lane, Oid]] = field(default_factory=dict)  # remote ref -> its lane, commit


@dataclass
class Fetched:
    """What one remote has: the chosen layout's refs (as now in the tracking refs), the
    other layout's, and what was left alone."""

    remote: str
    layout: Layout
    streams: dict[str, Oid]
    notes: Oid | None
    other: Side = field(default_factory=Side)
    ignored: list[str] = field(default_factory=list)  # remote refs that name no stream
    foreign: list[str] = field(default_factory=list)  # branches under the prefix that are not state
    # Branches under the prefix holding another stream's state (its branch under another
    # prefix: claude/continuity-main read with the prefix claude/): ref -> the stream it holds.
    misplaced: dict[str, str] = field(default_factory=dict)
    lanes: dict[str, tuple[Lane, Oid]] = field(default_factory=dict)  # every clone's lane, both layouts
    left_out: list[LeftOut] = field(default_factory=list)  # what the pull did not take in (pulling.py)
    # What of each remote head (stream, commit) may be taken in, judged once (pulling.admitted).
    admitted: dict[tuple[str, Oid], Admission] = field(default_factory=dict)

    def lane(self, lane: Lane) -> Oid | None:
        """Where a lane is on the remote, in the chosen layout, as far as we know."""
        return next(
            (oid for name, (ln, oid) in self.lanes.items() if ln == lane and name == self.layout.lane_ref(ln)), None
        )


def unreachable(repo: Repo, remote: str, error: transport.TransportError, what: str) -> UserError:
    url = git.remote_url(repo, remote)
    where = f" ({url})" if url else ""
    return UserError(
        f"cannot {what} {remote}{where}:\n  {error}\nNothing was changed here; the local state is untouched."
    )


def _sides(layout: Layout, refs: dict[str, str]) -> tuple[Side, Side, list[str]]:
    """The remote's refs as the refs layout and the branch layout see them."""
    as_refs, as_branches, ignored = Side(), Side(), []
    for name, oid in sorted(refs.items()):
        if (lane := layout.parse_lane(name)) is not None:
            side = as_refs if name.startswith(("refs/continuity-", "refs/notes/")) else as_branches
            side.lanes[name] = (lane, Oid(oid))
        elif name == constants.NOTES_REF:
            as_refs.notes = (name, Oid(oid))
        elif name.startswith(constants.STATE_PREFIX):
            stream = name[len(constants.STATE_PREFIX) :]
            if constants.usable_stream(stream):
                as_refs.streams[stream] = (name, Oid(oid))
            else:
                ignored.append(name)
        elif (what := layout.parse_branch(name)) == NOTES_BRANCH:
            as_branches.notes = (name, Oid(oid))
        elif what is not None:
            as_branches.streams[what] = (name, Oid(oid))
    return as_refs, as_branches, ignored


def _missing(repo: Repo, *sides: Side) -> list[str]:
    """The remote refs whose objects are not here yet (one that is not a commit is here once
    fetched, and named by what checks it)."""
    wanted = [ref for side in sides for ref in [*side.streams.values(), *([side.notes] if side.notes else [])]]
    wanted += [(name, oid) for side in sides for name, (_, oid) in side.lanes.items()]
    return sorted({name for name, oid in wanted if not git.has_object(repo, oid)})


def _list(repo: Repo, remote: str, layout: Layout, timeout: float) -> tuple[Side, Side, list[str]]:
    """The remote's state refs in both layouts, with every commit they name fetched here.

    Objects only, no ref written (tracking refs are moved after the checks). A ref that
    moved between the listing and the fetch, or a lock another fetch held at that moment,
    means one more look, a bounded number of times.
    """
    patterns = [f"{constants.STATE_PREFIX}*", constants.NOTES_REF, layout.branch_glob, *layout.lane_globs]
    for attempt in range(5):
        try:
            refs = transport.list_refs(repo, remote, patterns, timeout)
        except transport.TransportError as error:
            raise unreachable(repo, remote, error, "reach") from None
        as_refs, as_branches, ignored = _sides(layout, refs)
        try:
            transport.fetch(repo, remote, _missing(repo, as_refs, as_branches), timeout)
        except transport.TransportError as error:
            if not (LOCK_RACE in str(error) or GONE_RACE in str(error)) or attempt == 4:
                raise unreachable(repo, remote, error, "fetch the state from") from None
            continue
        if not _missing(repo, as_refs, as_branches):
            _complete(repo, remote, _tips(as_refs, as_branches), timeout)
            return as_refs, as_branches, ignored
    raise UserError(f"{remote}'s state kept moving while it was fetched; nothing was merged. Try again.")


def _tips(*sides: Side) -> list[Oid]:
    found = [oid for side in sides for _, oid in [*side.streams.values(), *([side.notes] if side.notes else [])]]
    return found + [oid for side in sides for _, oid in side.lanes.values()]


COMPLETE_ROUNDS = 3  # a tree fetched without the filter comes with all below it: one round, as a rule


def _complete(repo: Repo, remote: str, tips: list[Oid], timeout: float) -> None:
    """In a partial clone, fetch through git every object of the state that the clone's filter
    left out (libgit2 cannot fetch them lazily), so the state is read whole: never judged
    malformed, nor repaired, for an object the clone chose not to have."""
    holder = git.promisor(repo)
    if holder is None or not tips:
        return
    for _ in range(COMPLETE_ROUNDS):
        gone = git.missing_objects(repo, tips)
        if not gone:
            git.mark_complete(repo, tips)
            return
        try:
            transport.fetch_objects(repo, remote, gone, timeout)
        except transport.TransportError as error:
            raise unreachable(
                repo, remote, error, "fetch the state's objects that this partial clone left out from"
            ) from None
    raise UserError(
        f"{remote} did not send {len(gone)} objects of the state that this partial clone's filter ({holder.filter})"
        f" left out (first: {gone[0]}); nothing was merged, the local state is untouched.\n"
        f"Nothing is malformed: fetch them whole with git fetch --refetch --no-filter {remote}"
        f" '+refs/continuity/*:{constants.TRACKING_PREFIX}{remote}/*', then sync again."
    )


def _drop_foreign(repo: Repo, side: Side, found: list[str]) -> None:
    """Keep only the branches whose tips are state (or notes); name the others."""
    for stream, (name, oid) in list(side.streams.items()):
        if not is_state_commit(repo, oid):
            found.append(name)
            del side.streams[stream]
    if side.notes is not None and not is_notes_commit(repo, side.notes[1]):
        found.append(side.notes[0])
        side.notes = None
    _drop_foreign_lanes(repo, side, found)


def _drop_misplaced(repo: Repo, side: Side, found: dict[str, str]) -> None:
    """Keep only the branches of streams new here whose first commit started that stream;
    name the others with the stream they hold (a prefix changed, or another one's layout)."""
    for stream, (name, oid) in list(side.streams.items()):
        if git.ref_target(repo, f"{constants.STATE_PREFIX}{stream}") is not None:
            continue  # a stream this clone has: merged and checked as always
        first = next(reversed(list(git.first_parent_log(repo, oid))), None)
        started = START.match(first.message) if first is not None else None
        if started is not None and started.group(1) != stream:
            found[name] = started.group(1)
            del side.streams[stream]


def _drop_foreign_lanes(repo: Repo, side: Side, found: list[str]) -> None:
    """Keep only the lanes whose tips are state (or notes); name the others."""
    for name, (lane, oid) in list(side.lanes.items()):
        if not (is_state_commit(repo, oid) if lane.stream else is_notes_commit(repo, oid)):
            found.append(name)
            del side.lanes[name]


def fetch(repo: Repo, remote: str, layout: Layout, timeout: float = TIMEOUT) -> Fetched:
    """Ask the remote what state it has, fetch what is new, move the tracking refs to the
    chosen layout's refs, and drop tracking refs of streams the remote no longer has."""
    as_refs, as_branches, ignored = _list(repo, remote, layout, timeout)
    return _settle(repo, remote, layout, as_refs, as_branches, ignored)


def settle(repo: Repo, remote: str, layout: Layout, refs: dict[str, str]) -> Fetched:
    """What ``fetch`` does once the remote's state refs are here: ``refs`` is the remote's
    listing (its ref names) of what a fetch already brought (the fresh look's, syncing.look)."""
    as_refs, as_branches, ignored = _sides(layout, refs)
    if _missing(repo, as_refs, as_branches):
        raise UserError(f"{remote}'s state was not all fetched; nothing was merged. Try again.")
    return _settle(repo, remote, layout, as_refs, as_branches, ignored)


def _settle(repo: Repo, remote: str, layout: Layout, as_refs: Side, as_branches: Side, ignored: list[str]) -> Fetched:
    chosen, other = (as_refs, as_branches) if layout.transport == "refs" else (as_branches, as_refs)
    foreign: list[str] = []
    misplaced: dict[str, str] = {}
    _drop_foreign(repo, as_branches, foreign)
    _drop_misplaced(repo, as_branches, misplaced)
    _drop_foreign_lanes(repo, as_refs, foreign)
    if layout.transport == "branches":
        _refuse_rewritten(repo, remote, chosen)
    _move_tracking(repo, remote, chosen)
    lanes = {**other.lanes, **chosen.lanes}
    _move_lane_tracking(repo, remote, {lane: oid for lane, oid in [*other.lanes.values(), *chosen.lanes.values()]})
    streams = {s: oid for s, (_, oid) in chosen.streams.items()}
    notes = chosen.notes[1] if chosen.notes else None
    return Fetched(remote, layout, streams, notes, other, ignored, foreign, misplaced, lanes)


def _refuse_rewritten(repo: Repo, remote: str, side: Side) -> None:
    """A state branch whose new tip does not contain what was fetched from it before was
    rewritten (a force push): refused, naming it, before anything is merged."""
    found = []
    entries = [(tracking.tracking_ref(remote, s), ref) for s, ref in side.streams.items()]
    if side.notes:
        entries.append((tracking.notes_tracking_ref(remote), side.notes))
    for track, (name, oid) in entries:
        seen = git.ref_target(repo, track)
        if seen is not None and seen != oid and git.has_commit(repo, seen) and not git.is_ancestor(repo, seen, oid):
            found.append(f"{name} was at {seen[:7]}, now {oid[:7]}, which does not contain it ({track})")
    if found:
        raise UserError(
            f"a state branch on {remote} was rewritten (force-pushed) since it was last fetched; "
            "nothing was merged:\n  "
            + "\n  ".join(found)
            + "\nThe local state is untouched. To take the rewritten branch in (both sides are merged, losing"
            " nothing here): git update-ref -d TRACKING-REF, then git continuity sync. This tool never force-pushes."
        )


def _move_tracking(repo: Repo, remote: str, side: Side) -> None:
    for stream, (_, oid) in side.streams.items():
        _track(repo, tracking.tracking_ref(remote, stream), oid, remote)
    if side.notes:
        _track(repo, tracking.notes_tracking_ref(remote), side.notes[1], remote)
    for stream in tracking.tracked_streams(repo, remote):
        if stream not in side.streams:
            git.delete_ref(repo, tracking.tracking_ref(remote, stream))
    if side.notes is None:
        git.delete_ref(repo, tracking.notes_tracking_ref(remote))


def _move_lane_tracking(repo: Repo, remote: str, lanes: dict[Lane, Oid]) -> None:
    for lane, oid in lanes.items():
        _track(repo, tracking.lane_tracking_ref(remote, *lane), oid, remote)
    for clone, stream in tracking.tracked_lanes(repo, remote):
        if Lane(clone, stream) not in lanes:
            git.delete_ref(repo, tracking.lane_tracking_ref(remote, clone, stream))


def _track(repo: Repo, ref: str, oid: Oid, remote: str) -> None:
    if git.ref_target(repo, ref) != oid:
        git.create_reflog(repo, ref)  # so git logs when it moves, as for refs/remotes
        git.set_ref(repo, ref, oid, f"continuity: fetch {remote}")
