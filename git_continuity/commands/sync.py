"""push, pull and sync: every stream's state and the commit notes, through ordinary git remotes.

The network goes through the user's own git (transport.py); merging is local (merge.py).
A remote's state lands in tracking refs first (tracking.py), is validated there, and only
then taken in; local refs move by compare-and-swap, so a writer racing with a pull loses
nothing. Pushes never force: a remote that moved meanwhile refuses, and the push fetches,
merges and tries again, a bounded number of times.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from git_continuity import claiming, constants, merge, render, store, tracking, transport
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.records import ConflictRecord
from git_continuity.repo import Oid, Repo

TIMEOUT = 120.0  # seconds for one git fetch or push
MAX_TRIES = 5  # pushes refused because the remote moved meanwhile, before giving up
NOTES = "notes"  # how the notes ref is named in reports (no stream can be named with a '/')


@dataclass
class Fetched:
    """What one remote has, as just fetched into the tracking refs."""

    remote: str
    streams: dict[str, Oid]
    notes: Oid | None
    ignored: list[str] = field(default_factory=list)  # refs under refs/continuity/ that name no stream


def _unreachable(repo: Repo, remote: str, error: transport.TransportError, what: str) -> UserError:
    url = git.remote_url(repo, remote)
    where = f" ({url})" if url else ""
    return UserError(
        f"cannot {what} {remote}{where}:\n  {error}\nNothing was changed here; the local state is untouched."
    )


def fetch(repo: Repo, remote: str) -> Fetched:
    """Ask the remote what state it has, fetch what is new into the tracking refs, and drop
    tracking refs of streams the remote no longer has."""
    try:
        refs = transport.list_refs(repo, remote, [f"{constants.STATE_PREFIX}*", constants.NOTES_REF], TIMEOUT)
    except transport.TransportError as error:
        raise _unreachable(repo, remote, error, "reach") from None
    streams: dict[str, Oid] = {}
    ignored = []
    for name, oid in refs.items():
        if name.startswith(constants.STATE_PREFIX):
            stream = name[len(constants.STATE_PREFIX) :]
            if constants.usable_stream(stream):
                streams[stream] = Oid(oid)
            else:
                ignored.append(name)
    notes = Oid(refs[constants.NOTES_REF]) if constants.NOTES_REF in refs else None
    wanted = {tracking.tracking_ref(remote, s): (f"{constants.STATE_PREFIX}{s}", oid) for s, oid in streams.items()}
    if notes is not None:
        wanted[tracking.notes_tracking_ref(remote)] = (constants.NOTES_REF, notes)
    refspecs = []
    for local, (theirs, oid) in sorted(wanted.items()):
        if git.ref_target(repo, local) != oid or not git.has_commit(repo, oid):
            git.create_reflog(repo, local)  # so git logs when it moves, as for refs/remotes
            refspecs.append(f"+{theirs}:{local}")
    try:
        transport.fetch(repo, remote, refspecs, TIMEOUT)
    except transport.TransportError as error:
        raise _unreachable(repo, remote, error, "fetch the state from") from None
    for stream in tracking.tracked_streams(repo, remote):
        if stream not in streams:
            git.delete_ref(repo, tracking.tracking_ref(remote, stream))
    if notes is None:
        git.delete_ref(repo, tracking.notes_tracking_ref(remote))
    return Fetched(remote, streams, notes, ignored)


def validate(repo: Repo, fetched: Fetched) -> None:
    """Refuse, naming every bad entry, when the remote's state or ours is malformed: nothing
    is merged then, and the local state stays as it was."""
    found = []
    for stream, commit in sorted(fetched.streams.items()):
        if not git.has_commit(repo, commit):
            found.append(f"{fetched.remote}'s {stream} ({commit[:7]}): refs/continuity/{stream} is not a commit")
            continue
        snap = store.Snapshot(repo, stream, commit, git.commit_tree(repo, commit))
        problems = store.all_problems(snap)
        found += [f"{fetched.remote}'s {stream} ({commit[:7]}): {p}" for p in problems]
    if found:
        raise UserError(
            f"the state fetched from {fetched.remote} is malformed; nothing was merged, "
            "the local state is untouched:\n  "
            + "\n  ".join(found)
            + f"\nIt is kept in {constants.TRACKING_PREFIX}{fetched.remote}/ for a look (git log -p REF)."
            f"\nRepair it: git continuity doctor --fix (moves the malformed files aside in a new commit on top),"
            f" then git continuity push {fetched.remote} (a fast-forward)."
        )
    for stream in fetched.streams:
        local = store.snapshot(repo, stream)
        problems = store.all_problems(local) if local.commit else []
        if problems:
            raise UserError(
                f"the local state of stream '{stream}' is malformed; nothing was merged:\n  "
                + "\n  ".join(problems)
                + "\nFix it with git continuity edit (the packet), then sync again."
            )


def take_in(repo: Repo, stream: str, theirs: Oid, remote: str) -> str:
    """Bring a fetched state into the local stream (create, fast-forward or merge); what
    happened, for the report. Retried when a local writer moved the ref meanwhile."""
    ref = store.ref_name(stream)
    return git.update_ref(
        repo, ref, lambda ours: _take_in_once(repo, ref, ours, theirs, remote), gave_up="nothing was merged. Try again."
    )


def _take_in_once(repo: Repo, ref: str, ours: Oid | None, theirs: Oid, remote: str) -> str:
    if ours is None:
        git.create_reflog(repo, ref)
        git.compare_and_swap(repo, ref, theirs, None, f"continuity: pull {remote}: new stream")
        return f"new here ({theirs[:7]})"
    if ours == theirs:
        return "up to date"
    if git.is_ancestor(repo, theirs, ours):
        return f"up to date ({_changes(git.ahead_behind(repo, ours, theirs)[0])} here to push)"
    if git.is_ancestor(repo, ours, theirs):
        git.compare_and_swap(repo, ref, theirs, ours, f"continuity: pull {remote}: fast-forward")
        return f"fast-forward {ours[:7]}..{theirs[:7]}"
    merged = merge.merge_commits(repo, ours, theirs)
    _check_merged(repo, ref, merged.tree)
    unrelated = " (unrelated histories: both kept)" if merged.unrelated else ""
    message = f"sync: merge {remote}'s state{unrelated}"
    if merged.conflicts:
        message += "\n\nConflicts kept for a look (git continuity conflict list):\n" + "\n".join(
            f"  {c['id']}  {render.describe_conflict(ConflictRecord.from_json(c))}" for c in merged.conflicts
        )
    commit = git.write_commit(repo, merged.tree, [ours, theirs], message + "\n")
    git.compare_and_swap(repo, ref, commit, ours, f"continuity: {message.splitlines()[0]}")
    line = f"merged {ours[:7]} and {theirs[:7]} into {commit[:7]}{unrelated}"
    if merged.conflicts:
        n = len(merged.conflicts)
        line += f"; {n} conflict{'s' if n != 1 else ''} to look at: git continuity conflict list"
    return line


def _changes(n: int) -> str:
    return f"{n} change{'s' if n != 1 else ''}"


def _check_merged(repo: Repo, ref: str, tree: Oid) -> None:
    snap = store.Snapshot(repo, ref.removeprefix(constants.STATE_PREFIX), None, tree)
    problems = store.all_problems(snap)
    if problems:  # both sides were valid: this is a bug in the merge, never written
        raise AssertionError(f"the merged state for {ref} is malformed: {problems}")


def take_in_notes(repo: Repo, theirs: Oid, remote: str) -> str:
    """Bring fetched notes into the local notes ref (create, fast-forward or a union of
    lines); retried when a local writer moved the ref meanwhile."""

    def step(ours: Oid | None) -> str:
        if ours is None:
            git.compare_and_swap(repo, constants.NOTES_REF, theirs, None, f"continuity: pull {remote}: notes")
            return f"new here ({theirs[:7]})"
        if ours == theirs or git.is_ancestor(repo, theirs, ours):
            return "up to date"
        if git.is_ancestor(repo, ours, theirs):
            git.compare_and_swap(repo, constants.NOTES_REF, theirs, ours, f"continuity: pull {remote}: notes")
            return f"fast-forward {ours[:7]}..{theirs[:7]}"
        tree = merge.merge_notes(repo, ours, theirs)
        commit = git.write_commit(repo, tree, [ours, theirs], f"notes: merge {remote}'s notes (union of lines)\n")
        git.compare_and_swap(repo, constants.NOTES_REF, commit, ours, f"continuity: merge {remote}'s notes")
        return f"merged {ours[:7]} and {theirs[:7]} into {commit[:7]} (every line of both kept)"

    return git.update_ref(repo, constants.NOTES_REF, step, gave_up="nothing was merged. Try again.")


def pull_from(repo: Repo, remote: str) -> tuple[Fetched, list[str]]:
    """Fetch, validate and take in every stream and the notes; the report lines."""
    fetched = fetch(repo, remote)
    validate(repo, fetched)
    lines = [f"  {stream}: {take_in(repo, stream, c, remote)}" for stream, c in sorted(fetched.streams.items())]
    if fetched.notes is not None:
        lines.append(f"  {NOTES}: {take_in_notes(repo, fetched.notes, remote)}")
    lines += [f"  ignored {name}: not a stream name" for name in fetched.ignored]
    return fetched, lines


def _local_streams(repo: Repo) -> dict[str, Oid]:
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
    for stream, commit in sorted(_local_streams(repo).items()):
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
        ours = _local_streams(repo)
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
            raise _unreachable(repo, remote, error, "push to") from None
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


def _known(repo: Repo, remote: str) -> Fetched:
    """What the remote had as of the last fetch (the tracking refs)."""
    return Fetched(
        remote, tracking.tracked_streams(repo, remote), git.ref_target(repo, tracking.notes_tracking_ref(remote))
    )


def pull(repo: Repo, *, remote: str | None) -> int:
    name = tracking.pick_remote(repo, remote)
    held = claiming.held_here(repo)
    fetched, lines = pull_from(repo, name)
    lines += claiming.lost_since(repo, held)
    if not fetched.streams and fetched.notes is None:
        print(f"{name} has no continuity state yet: nothing to pull.")
        if _local_streams(repo):
            print(f"Publish this clone's with: git continuity push {name}")
        return 0
    print(f"From {name}:\n" + "\n".join(lines))
    return 0


def push(repo: Repo, *, remote: str | None) -> int:
    name = tracking.pick_remote(repo, remote)
    if not _local_streams(repo):
        raise UserError(
            f"no continuity state here to push.\nStart with git continuity init (or git continuity pull {name})."
        )
    require_sendable(repo, name)
    lines = publish(repo, name, _known(repo, name))
    print(f"To {name}:\n" + "\n".join(lines))
    return 0


def sync(repo: Repo, *, remote: str | None) -> int:
    name = tracking.pick_remote(repo, remote)
    require_sendable(repo, name)
    held = claiming.held_here(repo)
    fetched, lines = pull_from(repo, name)
    lines += claiming.lost_since(repo, held)
    if not fetched.streams and fetched.notes is None:
        print(f"{name} has no continuity state yet.")
    else:
        print(f"From {name}:\n" + "\n".join(lines))
    if not _local_streams(repo):
        print("No continuity state here to push (git continuity init starts one).")
        return 0
    print(f"To {name}:\n" + "\n".join(publish(repo, name, fetched)))
    return 0
