"""Validate a fetched state (syncing.fetching) and take it in: create, fast-forward or merge."""

from __future__ import annotations

from git_continuity import conflict_text, constants, merge, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.records import ConflictRecord
from git_continuity.remote_layout import Layout
from git_continuity.repo import Oid, Repo
from git_continuity.store import integrity
from git_continuity.syncing.fetching import NOTES, TIMEOUT, Fetched, Line, fetch


def validate(repo: Repo, fetched: Fetched) -> None:
    """Refuse, naming every bad entry, when the remote's state or ours is malformed: nothing
    is merged then, and the local state stays as it was."""
    found = []
    validity = store.ValidityCache(repo)
    theirs = [*fetched.streams.items(), *((s, oid) for s, (_, oid) in fetched.other.streams.items())]
    theirs += [(lane.stream, oid) for lane, oid in fetched.lanes.values() if lane.stream]
    for stream, commit in sorted(set(theirs)):
        if not git.has_commit(repo, commit):
            found.append(
                f"{fetched.remote}'s {stream} ({commit[:7]}): {fetched.layout.state_ref(stream)} is not a commit"
            )
            continue
        if _here_already(repo, stream, commit):
            continue  # nothing to take in (a lane folded before, the shared ref we pushed): checked then
        # One cache of what was found good for every head (the lanes share most of their
        # entries), kept for the next sync: a fleet's lanes are not checked entry by entry again.
        snap = store.Snapshot(repo, stream, commit, git.commit_tree(repo, commit), validity)
        problems = store.all_problems(snap)
        found += [f"{fetched.remote}'s {stream} ({commit[:7]}): {p}" for p in problems]
    validity.save()
    if found:
        raise UserError(
            f"the state fetched from {fetched.remote} is malformed; nothing was merged, "
            "the local state is untouched:\n  "
            + "\n  ".join(found)
            + f"\nIt is kept in {constants.TRACKING_PREFIX}{fetched.remote}/ for a look (git log -p REF)."
            f"\nRepair it: git continuity doctor --fix (moves the malformed files aside in a new commit on top),"
            f" then git continuity push {fetched.remote} (a fast-forward)."
        )
    for stream in {s for s, _ in theirs}:
        local = store.snapshot(repo, stream)
        problems = store.all_problems(local) if local.commit else []
        if problems:
            raise UserError(
                f"the local state of stream '{stream}' is malformed; nothing was merged:\n  "
                + "\n  ".join(problems)
                + "\nFix it with git continuity edit (the packet), then sync again."
            )


def _here_already(repo: Repo, stream: str, commit: Oid) -> bool:
    ours = git.ref_target(repo, store.ref_name(stream))
    try:
        return ours is not None and git.has_commit(repo, ours) and git.is_ancestor(repo, commit, ours)
    except git.HistoryCut:
        return False


def take_in(repo: Repo, stream: str, theirs: Oid, remote: str) -> str:
    """Bring a fetched state into the local stream (create, fast-forward or merge); what
    happened, for the report. Retried when a local writer moved the ref meanwhile. What the
    remote adds is checked first: an unsigned or untrusted state is not merged (integrity)."""
    integrity.admit(repo, stream, theirs, remote)
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
            f"  {c['id']}  {conflict_text.describe_conflict(ConflictRecord.from_json(c))}" for c in merged.conflicts
        )
    commit = git.write_commit(repo, merged.tree, [ours, theirs], message + "\n")
    git.compare_and_swap(repo, ref, commit, ours, f"continuity: {message.splitlines()[0]}")
    line = f"merged {ours[:7]} and {theirs[:7]} into {commit[:7]}{unrelated}"
    if merged.conflicts:
        n = len(merged.conflicts)
        line += f"; {n} conflict{'s' if n != 1 else ''} to look at: git continuity conflict list"
    return line


def take_in_all(repo: Repo, stream: str, heads: list[Oid], remote: str) -> str:
    """Bring several fetched states of one stream in (the shared ref's and the clones' lanes)
    with one merge commit whose parents are ours and each head not here yet: a fleet folding
    twelve lanes makes one commit, not twelve for every other clone to check and merge."""
    heads = list(dict.fromkeys(heads))
    for head in heads:
        integrity.admit(repo, stream, head, remote)
    ref = store.ref_name(stream)
    return git.update_ref(
        repo,
        ref,
        lambda ours: _take_in_all_once(repo, ref, ours, heads, remote),
        gave_up="nothing was merged. Try again.",
    )


def _take_in_all_once(repo: Repo, ref: str, ours: Oid | None, heads: list[Oid], remote: str) -> str:
    new = [h for h in heads if ours is None or not git.is_ancestor(repo, h, ours)]
    new = [h for h in new if not any(o != h and git.is_ancestor(repo, h, o) for o in new)]  # each once
    if len(new) <= 1:
        return _take_in_once(repo, ref, ours, new[0] if new else heads[0], remote)
    parents = [*([ours] if ours else []), *new]
    acc, conflicts, unrelated = parents[0], [], False
    for head in parents[1:]:
        # Each step a commit of its own, unsigned and on no ref, so that the next step finds
        # its merge base; only the last tree is kept, in one signed commit.
        merged = merge.merge_commits(repo, acc, head)
        conflicts += merged.conflicts
        unrelated |= merged.unrelated
        acc = git.write_commit_at(repo, merged.tree, [acc, head], "step of a merge of several states", 0)
    tree = git.commit_tree(repo, acc)
    _check_merged(repo, ref, tree)
    also = " (unrelated histories: all kept)" if unrelated else ""
    message = f"sync: merge {remote}'s state and {len(new) - (0 if ours else 1)} more from clones' lanes{also}"
    if conflicts:
        message += "\n\nConflicts kept for a look (git continuity conflict list):\n" + "\n".join(
            f"  {c['id']}  {conflict_text.describe_conflict(ConflictRecord.from_json(c))}" for c in conflicts
        )
    commit = git.write_commit(repo, tree, parents, message + "\n")
    if ours is None:
        git.create_reflog(repo, ref)
    git.compare_and_swap(repo, ref, commit, ours, f"continuity: {message.splitlines()[0]}")
    line = f"merged {', '.join(p[:7] for p in parents[:-1])} and {parents[-1][:7]} into {commit[:7]}{also}"
    if conflicts:
        n = len(conflicts)
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


def pull_from(repo: Repo, remote: str, layout: Layout, timeout: float = TIMEOUT) -> tuple[Fetched, list[Line]]:
    """Fetch, validate and take in every stream and the notes, in both layouts; what each did."""
    fetched = fetch(repo, remote, layout, timeout)
    return fetched, take_in_fetched(repo, fetched)


def take_in_fetched(repo: Repo, fetched: Fetched) -> list[Line]:
    """Validate and take in every stream and the notes of a fetched state; what each did."""
    remote = fetched.remote
    validate(repo, fetched)
    # Every clone's lane (what it sent while others moved the shared ref) is folded in with
    # the shared ref, in one merge, so the push that follows carries it into the shared ref.
    lanes: dict[str, list[tuple[str, Oid]]] = {}
    for name, (lane, commit) in sorted(fetched.lanes.items()):
        if lane.stream:
            lanes.setdefault(lane.stream, []).append((name, commit))
    lines = []
    for stream in sorted({*fetched.streams, *lanes}):
        shared = fetched.streams.get(stream)
        if stream not in lanes:
            lines.append(Line(stream, take_in(repo, stream, shared, remote) if shared else "up to date"))
            continue
        said = take_in_all(repo, stream, [*([shared] if shared else []), *(c for _, c in lanes[stream])], remote)
        if shared or not said.startswith("up to date"):
            lines.append(Line(stream, said))
    if fetched.notes is not None:
        lines.append(Line(NOTES, take_in_notes(repo, fetched.notes, remote)))
    # The other layout's (a remote that moved between transports): said only when it brought something.
    for stream, (name, commit) in sorted(fetched.other.streams.items()):
        said = take_in(repo, stream, commit, remote)
        if not said.startswith("up to date"):
            lines.append(Line(stream, f"{said} (from {name})"))
    if fetched.other.notes is not None:
        said = take_in_notes(repo, fetched.other.notes[1], remote)
        if not said.startswith("up to date"):
            lines.append(Line(NOTES, f"{said} (from {fetched.other.notes[0]})"))
    for name, (lane, commit) in sorted(fetched.lanes.items()):
        said = "" if lane.stream else take_in_notes(repo, commit, remote)
        if said and not said.startswith("up to date"):
            lines.append(Line(NOTES, f"{said} (from {name})"))
    lines += [Line(f"ignored {name}", "not a stream name") for name in fetched.ignored]
    lines += [
        Line(f"ignored {name}", "not continuity state (a branch of someone's: left alone)") for name in fetched.foreign
    ]
    prefix = f"{fetched.layout.prefix_key} is {fetched.layout.prefix!r}"
    lines += [
        Line(f"ignored {name}", f"the state of stream {held!r} under another prefix ({prefix}): left alone")
        for name, held in sorted(fetched.misplaced.items())
    ]
    return lines
