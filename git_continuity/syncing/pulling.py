"""Judge a fetched state (syncing.fetching) and take in what trusted keys signed: create,
fast-forward or merge. What no trusted key signed (and what is built on it) is left out and
counted, kept in the tracking ref for a person to look at: one writer nobody here trusts
freezes no one (integrity.admission)."""

from __future__ import annotations

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.store import conflict_text, integrity, merge
from git_continuity.store.records import ConflictRecord
from git_continuity.syncing import tracking
from git_continuity.syncing.fetching import NOTES, TIMEOUT, Fetched, LeftOut, Line, fetch
from git_continuity.syncing.layout import Layout, is_notes_commit

Heads = dict[tuple[str, Oid], integrity.Admission]  # (stream, a remote head) -> what of it is taken in


def admitted(repo: Repo, fetched: Fetched) -> Heads:
    """What of each remote head (the shared refs', the other layout's, every lane's) may be
    taken in, judged against the local stream."""
    theirs = [*fetched.streams.items(), *((s, oid) for s, (_, oid) in fetched.other.streams.items())]
    theirs += [(lane.stream, oid) for lane, oid in fetched.lanes.values() if lane.stream]
    found: Heads = {}
    for stream, commit in sorted(set(theirs)):
        if not git.has_commit(repo, commit):
            continue
        try:
            found[(stream, commit)] = integrity.admission(repo, git.ref_target(repo, store.ref_name(stream)), commit)
        except git.HistoryCut:
            continue  # validate names the cut history, on the ref it is on, and nothing is merged
    return found


def validate(repo: Repo, fetched: Fetched, heads: Heads | None = None) -> None:
    """Refuse, naming every bad entry, when what would be taken in of the remote's state, or
    ours, is malformed: nothing is merged then, and the local state stays as it was. What is
    left out (``heads``) is not judged: it is not taken in."""
    found = []
    validity = store.ValidityCache(repo)
    theirs = [*fetched.streams.items(), *((s, oid) for s, (_, oid) in fetched.other.streams.items())]
    theirs += [(lane.stream, oid) for lane, oid in fetched.lanes.values() if lane.stream]
    if heads is not None:
        theirs = [(s, h) for s, c in theirs for h in (heads[(s, c)].heads if (s, c) in heads else [c])]
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


def take_in(repo: Repo, stream: str, theirs: Oid, remote: str, fetched: Fetched | None = None) -> str:
    """Bring a fetched state into the local stream (create, fast-forward or merge); what
    happened, for the report. Retried when a local writer moved the ref meanwhile. Only what
    trusted keys signed is taken in (integrity.admission); the rest is left out, counted in
    ``fetched``."""
    return take_in_all(repo, stream, [theirs], remote, fetched)


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


def take_in_all(
    repo: Repo,
    stream: str,
    heads: list[Oid],
    remote: str,
    fetched: Fetched | None = None,
    kept: dict[Oid, str] | None = None,
) -> str:
    """Bring several fetched states of one stream in (the shared ref's and the clones' lanes)
    with one merge commit whose parents are ours and each head not here yet: a fleet folding
    twelve lanes makes one commit, not twelve for every other clone to check and merge. Of
    each head only what trusted keys signed is taken in; the rest is counted in ``fetched``,
    kept in the head's tracking ref (``kept`` names a lane's; the shared one's otherwise)."""
    heads = list(dict.fromkeys(heads))
    ours = git.ref_target(repo, store.ref_name(stream))
    taken: list[Oid] = []
    left = []
    for head in heads:
        known = fetched.admitted.get((stream, head)) if fetched is not None else None
        admission = known or integrity.admission(repo, ours, head)
        taken += admission.heads
        if admission.left_out:
            where = (kept or {}).get(head) or tracking.tracking_ref(remote, stream)
            left.append(left_out(repo, stream, admission, where))
    if fetched is not None:
        fetched.left_out.extend(left)
    if not taken:
        return "nothing taken in: " + "; ".join(left_out_text(x) for x in left)
    taken = list(dict.fromkeys(taken))
    ref = store.ref_name(stream)
    said = git.update_ref(
        repo,
        ref,
        lambda ours: _take_in_all_once(repo, ref, ours, taken, remote),
        gave_up="nothing was merged. Try again.",
    )
    removed = removals(repo, ours, git.ref_target(repo, ref))
    return "; ".join([said, *removed, *(left_out_text(x) for x in left)])


def left_out(repo: Repo, name: str, admission: integrity.Admission, kept_in: str) -> LeftOut:
    """What was left out of one head: the refused commits by what is wrong and whose key (a
    thousand unsigned commits are one such group), each group with the author its newest
    commit's writer gave (not verified) and the owner the team's list names for the key."""
    from git_continuity.store import team
    from git_continuity.trust import signers
    from git_continuity.trust.signatures import Verdict

    try:
        found_team = team.at_head(repo)
    except UserError:
        found_team = None
    listed = {m.key: m.principals for m in found_team.members} if found_team else {}
    groups: dict[tuple[str, str | None], list[Verdict]] = {}
    for verdict in admission.refused:
        kind = verdict.kind if verdict.detail != integrity.NOT_NOTES else "not notes"
        groups.setdefault((kind, verdict.key), []).append(verdict)
    found: list[dict[str, object]] = [
        {
            "kind": kind,
            "key": key,
            "fingerprint": signers.fingerprint(key) if key else None,
            "listed": listed.get(key or ""),
            "author": git.commit_info(repo, verdicts[-1].commit).author,
            "detail": verdicts[-1].detail or None,
            "commits": len(verdicts),
        }
        for (kind, key), verdicts in groups.items()
    ]
    return LeftOut(name, kept_in, admission.left_out, found)


def left_out_text(x: LeftOut) -> str:
    """``left out 2 changes (kept in REF): 1 signed by a key not trusted here (SHA256:…,
    on the team's list as bea@…; author field, not verified: "Bea <bea@…>"), 1 built on it``."""
    from git_continuity.display import quoted

    kinds = {
        "untrusted": "signed by a key not trusted here",
        "unsigned": "not signed",
        "bad": "with a signature that does not verify",
        "not notes": "not a notes commit",
    }
    parts = []
    for group in x.signers:
        who = [str(group["detail"])] if group["detail"] and group["kind"] == "bad" else []
        who += [str(group["fingerprint"])] if group["fingerprint"] else []
        if group["listed"]:
            who.append(f"on the team's list as {group['listed']}")
        who.append(f"author field, not verified: {quoted(str(group['author']))}")
        parts.append(f"{group['commits']} {kinds.get(str(group['kind']), group['kind'])} ({'; '.join(who)})")
    refused = sum(int(str(group["commits"])) for group in x.signers)
    if built := x.commits - refused:
        parts.append(f"{built} built on {'it' if refused == 1 else 'them'}")
    return f"left out {_changes(x.commits)} (kept in {x.kept_in}): " + ", ".join(parts)


def removals(repo: Repo, before: Oid | None, after: Oid | None) -> list[str]:
    """``2 journal entries removed by ada@example.com (abc1234)``: the entries the commits
    taken in removed, each named with the key that signed the commit that removed it (a
    trusted signer's deletion arrives as a plain fast-forward otherwise)."""
    from git_continuity.trust import authorship

    if before is None or after is None or before == after:
        return []
    try:
        return authorship.removed_between(repo, before, after)
    except git.HistoryCut:
        return []


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


def take_in_notes(repo: Repo, theirs: Oid, remote: str, fetched: Fetched | None = None) -> str:
    """Bring fetched notes into the local notes ref (create, fast-forward or a union of
    lines); retried when a local writer moved the ref meanwhile. Only notes commits trusted
    keys signed are taken in, as for the state; the rest is left out, counted in ``fetched``."""
    ours = git.ref_target(repo, constants.NOTES_REF)
    admission = integrity.admission(repo, ours, theirs, lambda c: is_notes_commit(repo, c))
    left = []
    if admission.left_out:
        left = [left_out(repo, NOTES, admission, tracking.notes_tracking_ref(remote))]
        if fetched is not None:
            fetched.left_out.extend(left)
    if not admission.heads:
        return "nothing taken in: " + "; ".join(map(left_out_text, left))
    said = [_take_in_notes(repo, head, remote) for head in admission.heads]
    return "; ".join([*(s for s in said if s != "up to date" or len(said) == 1), *map(left_out_text, left)])


def _take_in_notes(repo: Repo, theirs: Oid, remote: str) -> str:
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
    fetched.admitted = admitted(repo, fetched)
    validate(repo, fetched, fetched.admitted)
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
            lines.append(Line(stream, take_in(repo, stream, shared, remote, fetched) if shared else "up to date"))
            continue
        kept = {c: tracking.lane_tracking_ref(remote, *fetched.lanes[name][0]) for name, c in lanes[stream]}
        said = take_in_all(
            repo, stream, [*([shared] if shared else []), *(c for _, c in lanes[stream])], remote, fetched, kept
        )
        if shared or not said.startswith("up to date"):
            lines.append(Line(stream, said))
    if fetched.notes is not None:
        lines.append(Line(NOTES, take_in_notes(repo, fetched.notes, remote, fetched)))
    # The other layout's (a remote that moved between transports): said only when it brought something.
    for stream, (name, commit) in sorted(fetched.other.streams.items()):
        said = take_in(repo, stream, commit, remote, fetched)
        if not said.startswith("up to date"):
            lines.append(Line(stream, f"{said} (from {name})"))
    if fetched.other.notes is not None:
        said = take_in_notes(repo, fetched.other.notes[1], remote, fetched)
        if not said.startswith("up to date"):
            lines.append(Line(NOTES, f"{said} (from {fetched.other.notes[0]})"))
    for name, (lane, commit) in sorted(fetched.lanes.items()):
        said = "" if lane.stream else take_in_notes(repo, commit, remote, fetched)
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
