"""Publish the local state to a remote: never forced, merged and retried when it moved."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from git_continuity import constants, store, tracking, transport
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.remote_layout import Layout, advice
from git_continuity.repo import Oid, Repo
from git_continuity.syncing.fetching import NOTES, TIMEOUT, Fetched, Line, unreachable
from git_continuity.syncing.pulling import pull_from

MAX_RETRIES = 5  # pushes again after the remote moved meanwhile, before giving up
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
    """Push every stream and the notes that the remote lacks, never forced. A ref refused
    because the remote moved meanwhile (another clone pushed first) is fetched, merged and
    pushed again after a random pause that grows with each retry, at most ``retries``
    times (each git call at most ``timeout`` seconds). ``known`` is what the remote had, as far as we know."""
    layout = known.layout
    done = Published()
    given_up: set[str] = set()  # refused for good: never offered again in this push
    cycle = time.monotonic()  # a retry's cycle: fetch, merge, push
    while True:
        ours = local_streams(repo)
        notes = git.ref_target(repo, constants.NOTES_REF)
        updates = {
            layout.state_ref(s): (f"{constants.STATE_PREFIX}{s}", oid, known.streams.get(s), s)
            for s, oid in sorted(ours.items())
            if known.streams.get(s) != oid
        }
        if notes is not None and notes != known.notes:
            updates[layout.notes_ref] = (constants.NOTES_REF, notes, known.notes, NOTES)
        for dst in given_up:
            updates.pop(dst, None)
        for dst, (_, _, _, name) in updates.items():
            _refuse_foreign(known, dst, name)
        if not updates:
            if not done.lines and not done.refused and not done.kept_local:
                done.lines = [Line(s, "up to date") for s in sorted(ours)]
            return done
        try:
            result = transport.push(repo, remote, [f"{src}:{dst}" for dst, (src, *_) in updates.items()], timeout)
        except transport.TransportError as error:
            raise _forbidden(unreachable(repo, remote, error, "push to"), layout, str(error)) from None
        took, cycle = time.monotonic() - cycle, time.monotonic()
        for dst in result.accepted:
            if dst not in updates:
                continue
            _, new, old, name = updates[dst]
            track = tracking.notes_tracking_ref(remote) if name == NOTES else tracking.tracking_ref(remote, name)
            git.create_reflog(repo, track)
            git.set_ref(repo, track, new, f"continuity: push {remote}")
            where = "" if dst in (constants.NOTES_REF, f"{constants.STATE_PREFIX}{name}") else f" as {dst}"
            done.lines.append(
                Line(name, f"pushed {old[:7]}..{new[:7]}{where}" if old else f"created on {remote} ({new[:7]}){where}")
            )
        refused = dict(result.refused)
        notes_too = layout.notes_ref in refused and len(refused) > 1
        for dst, verdict in result.refused:
            if dst != layout.notes_ref and notes_too:
                continue  # refused with the notes: tried again without them (below)
            given_up.add(dst)
            (done.kept_local if dst == layout.notes_ref else done.refused).append(f"{dst}: {verdict}")
        done.said += [line for line in result.said if line not in done.said]
        if notes_too:
            # A server that refuses a whole push for one ref (a pre-receive hook that takes no
            # refs/notes/*, as Bitbucket Server's): the state alone may go through.
            continue
        if not result.behind:
            return done
        if done.retries >= retries:
            said = "".join(f"\n  {line}" for line in result.said)
            raise UserError(
                f"{remote} kept moving: {retries} retries were refused because other clones pushed first.{said}\n"
                "What was fetched is merged here; run git continuity sync again."
            )
        # Another clone pushed first: take its state in and try again, after a pause drawn
        # at random from a window that doubles with each retry, so a fleet does not retry in
        # step. The window is counted in cycles like the last one (fetch, merge, push): a
        # push lands only when no other lands during its cycle, so a slow remote or a busy
        # machine spreads the clones wider. At least one clone lands in each round.
        done.retries += 1
        time.sleep(random.uniform(0, min(cap, max(took, 0.1) * 2**done.retries)))
        cycle = time.monotonic()
        known, taken = pull_from(repo, remote, layout, timeout)
        done.lines += [Line(n, what, meanwhile=True) for n, what, _ in taken if not what.startswith("up to date")]


def last_fetched(repo: Repo, remote: str, layout: Layout) -> Fetched:
    """What the remote had as of the last fetch (the tracking refs)."""
    return Fetched(
        remote,
        layout,
        tracking.tracked_streams(repo, remote),
        git.ref_target(repo, tracking.notes_tracking_ref(remote)),
    )
