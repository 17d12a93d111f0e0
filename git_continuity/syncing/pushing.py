"""Publish the local state to a remote: never forced, merged and retried when it moved."""

from __future__ import annotations

import random
import time

from git_continuity import constants, store, tracking, transport
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.syncing.pulling import NOTES, TIMEOUT, Fetched, pull_from, unreachable

MAX_TRIES = 5  # pushes refused because the remote moved meanwhile, before giving up


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


def publish(repo: Repo, remote: str, known: Fetched) -> list[str]:
    """Push every stream and the notes that the remote lacks; when it moved meanwhile,
    fetch, merge and try again. ``known`` is what the remote had, as far as we know."""
    lines: list[str] = []
    for attempt in range(MAX_TRIES):
        ours = local_streams(repo)
        notes = git.ref_target(repo, constants.NOTES_REF)
        updates = {
            f"{constants.STATE_PREFIX}{s}": (oid, known.streams.get(s), s)
            for s, oid in sorted(ours.items())
            if known.streams.get(s) != oid
        }
        if notes is not None and notes != known.notes:
            updates[constants.NOTES_REF] = (notes, known.notes, NOTES)
        if not updates:
            return lines or [f"  {s}: up to date" for s in sorted(ours)]
        try:
            result = transport.push(repo, remote, [f"{ref}:{ref}" for ref in updates], TIMEOUT)
        except transport.TransportError as error:
            raise unreachable(repo, remote, error, "push to") from None
        for ref in result.accepted:
            if ref not in updates:
                continue
            new, old, name = updates[ref]
            track = tracking.notes_tracking_ref(remote) if name == NOTES else tracking.tracking_ref(remote, name)
            git.create_reflog(repo, track)
            git.set_ref(repo, track, new, f"continuity: push {remote}")
            lines.append(
                f"  {name}: pushed {old[:7]}..{new[:7]}" if old else f"  {name}: created on {remote} ({new[:7]})"
            )
        if result.refused:
            said = "\n  ".join([*result.said, *result.refused])
            raise UserError(
                f"{remote} refused the push of the state:\n  {said}\n"
                "The local state is kept as it is; what the server said above names why."
            )
        if not result.behind:
            return lines
        # Another clone pushed first: take its state in and try again.
        time.sleep(random.uniform(0.01, 0.1 * (attempt + 1)))
        known, taken = pull_from(repo, remote)
        lines += [f"  (the remote moved meanwhile) {line.strip()}" for line in taken if "up to date" not in line]
    said = "".join(f"\n  {line}" for line in result.said)
    raise UserError(
        f"{remote} kept moving: {MAX_TRIES} pushes were refused because other clones pushed first.{said}\n"
        "What was fetched is merged here; run git continuity sync again."
    )


def last_fetched(repo: Repo, remote: str) -> Fetched:
    """What the remote had as of the last fetch (the tracking refs)."""
    return Fetched(
        remote, tracking.tracked_streams(repo, remote), git.ref_target(repo, tracking.notes_tracking_ref(remote))
    )
