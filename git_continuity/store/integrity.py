"""Tamper evidence on every read: what was written is what is read, or the reader is told.

A stream's ref must still descend from the newest state commit this user saw here (the
witness, outside ``.git``), and every commit since then must be signed by a key this user
trusts (trust/signatures.py, against the allowed-signers file in the user's config). A ref moved
back or sideways, an unsigned commit and one signed by a key not trusted here are refused,
naming the commits; ``doctor`` lists the same, and ``doctor --accept COMMIT`` re-anchors the
witness after a look. The commonest read (the ref where the witness saw it) costs one small
file read.

A stream never read here before (an upgrade from unsigned state, a fresh clone) is judged
by its newest commit: signed by a trusted key, it is taken as it is; unsigned, its history
is accepted once as the trust baseline, recorded in the witness and said once, unless a
signed commit stands under it: an unsigned commit on top of signed history is refused, never
a baseline (a copied clone would otherwise take a forged commit as its start).

A remote's state is taken in by ``admission``: only what trusted keys signed. Commits that
are not signed by a key trusted here, and those built on them, are left out and counted,
kept in the tracking ref for a person to look at; the rest moves on (syncing/pulling.py).
What a refusal offers as a fix (trusting a key, accepting a state) is a person's act: an
agent, without a terminal, is told only that (trust.persons_act).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import approvals as trust
from git_continuity.trust import signing, witness

if TYPE_CHECKING:  # signatures (and the threads and processes it checks with) only when something is new
    from git_continuity.trust.signatures import Verdict

SHOWN = 5  # refused commits named in one message


class Refused(UserError):
    """The state on a stream's ref is not what this user last saw, or not signed as it must be."""


def check(repo: Repo, stream: str, tip: Oid | None) -> None:
    """Refuse to read the stream at tip unless it is what was written here or by a trusted
    signer since this user last read it; then remember tip as seen. RefMoved where the ref
    is no longer at tip: the caller reads it again."""
    if tip is None or not signing.enabled(repo):
        return
    seen = witness.read(repo, stream)
    if seen is not None and seen.commit == tip:
        return
    problem = judge(repo, stream, tip, seen)
    if problem:
        if git.ref_target(repo, f"refs/continuity/{stream}") != tip:
            # Read before another process moved the ref on (and the witness with it): not
            # a ref moved back, a read to make again from where the ref is now.
            raise git.RefMoved
        raise Refused(problem)


def judge(repo: Repo, stream: str, tip: Oid, seen: witness.Seen | None) -> str | None:
    """What is wrong with the stream at tip given what the witness saw (None: nothing, and
    then the witness moves to tip)."""
    from git_continuity.trust import signatures

    ref = f"refs/continuity/{stream}"
    if seen is None:
        return _first_sight(repo, stream, tip)
    moved = _moved(repo, ref, tip, seen)
    if moved:
        return moved
    new = git.commit_ids_since(repo, tip, seen.commit)
    refused = [v for v in signatures.judge(repo, new) if v.kind != signatures.GOOD]
    if refused:
        return refusal(repo, ref, refused)
    witness.record(repo, stream, witness.Seen(tip, seen.depth + len(new), _now()))
    return None


def _first_sight(repo: Repo, stream: str, tip: Oid) -> str | None:
    from git_continuity.trust import signatures

    ref = f"refs/continuity/{stream}"
    verdict = signatures.judge(repo, [tip])[0]
    depth = git.history_depth(repo, tip)
    if verdict.kind == signatures.GOOD:
        witness.record(repo, stream, witness.Seen(tip, depth, _now()))
        return None
    if verdict.kind != signatures.UNSIGNED:
        return refusal(repo, ref, [verdict])
    below = signed_below(repo, tip)
    if below is not None:
        return refusal(repo, ref, [verdict], f"on top of signed history ({below[:7]} is signed)")
    why = f"unsigned history up to {tip[:7]}, accepted as the trust baseline on first read"
    witness.record(repo, stream, witness.Seen(tip, depth, _now(), baseline=why))
    print(
        f"git-continuity: {ref} was never read here and its newest commit {tip[:7]} is not signed: its {depth}"
        f" commit{'s' if depth != 1 else ''} are accepted as the trust baseline"
        f" (recorded in {witness.path(repo, stream)})."
        "\n  From now on every state commit is signed, and a read refuses one that is not, or a ref that moved back."
        "\n  " + trust.persons_act("Teammates' keys are trusted", "git continuity trust team accept"),
        file=sys.stderr,
    )
    return None


def signed_below(repo: Repo, tip: Oid) -> Oid | None:
    """The first signed commit found under tip's unsigned commits (walked down to it), or
    None when tip's history is unsigned all the way (a state from before signing)."""
    queue, seen = [tip], {tip}
    while queue:
        commit = queue.pop()
        if commit != tip and git.commit_signature(repo, commit) is not None:
            return commit
        for parent in git.commit_parents(repo, commit):
            if parent not in seen and git.has_commit(repo, parent):
                seen.add(parent)
                queue.append(parent)
    return None


def _moved(repo: Repo, ref: str, tip: Oid, seen: witness.Seen) -> str | None:
    when = _when(seen.seen)
    accept = "\n" + trust.persons_act(
        f"If that is on purpose, it is accepted after a look (git log {ref})",
        f"git continuity doctor --accept {tip[:7]}",
    )
    if not git.has_commit(repo, seen.commit):
        return (
            f"{ref} moved back or sideways from {seen.commit[:7]} (seen {when}) to {tip[:7]}: {seen.commit[:7]} is"
            " not in this repository any more (a copy of .git put back, or objects deleted); nothing was read.\n"
            f"A remote that has it gives it back: git fetch origin {ref}:{ref} (or another remote)" + accept
        )
    if git.is_ancestor(repo, tip, seen.commit):
        gone = len(git.commit_ids_since(repo, seen.commit, tip))
        lost = "the newest change is" if gone == 1 else f"the newest {gone} changes are"
        return (
            f"{ref} moved back from {seen.commit[:7]} (seen {when}) to {tip[:7]}: {lost} not on it any more;"
            " nothing was read.\n"
            f"Put it back: git update-ref {ref} {seen.commit} {tip}" + accept
        )
    if not git.is_ancestor(repo, seen.commit, tip):
        return (
            f"{ref} moved sideways from {seen.commit[:7]} (seen {when}) to {tip[:7]}, which does not descend from"
            " it (a rewritten history); nothing was read.\n"
            f"Put it back: git update-ref {ref} {seen.commit} {tip}" + accept
        )
    return None


def refusal(repo: Repo, ref: str, refused: Sequence[Verdict], why: str = "") -> str:
    """The message that refuses these commits of ref, each named with what is wrong (and
    ``why``, after the first)."""
    from git_continuity.trust import signatures

    lines = [describe(repo, v) for v in refused[:SHOWN]]
    if why:
        lines[0] = lines[0].replace(" is not signed;", f" is not signed, {why};", 1)
    more = f"\n  and {len(refused) - SHOWN} more" if len(refused) > SHOWN else ""
    broken = _broken(repo, ref, refused[-1].commit)
    newest = refused[-1].commit[:7]
    fixes = []
    if any(v.kind == signatures.UNTRUSTED for v in refused):
        fixes.append(trust.persons_act("A teammate's key is trusted", "git continuity trust team accept"))
    if any(v.kind == signatures.UNSIGNED for v in refused):
        fixes.append(f"(Writes made while git config {signing.CONFIG} was false are unsigned too.)")
    fixes.append(
        trust.persons_act(
            f"After a look (git show {newest}), the state is accepted as it is",
            f"git continuity doctor --accept {newest}",
        )
    )
    return (
        f"the state on {ref} is not what was written here; nothing was read:\n  "
        + "\n  ".join(lines)
        + more
        + broken
        + "\n"
        + "\n".join(fixes)
    )


def describe(repo: Repo, verdict: Verdict) -> str:
    """One refused commit: what is wrong with its signature, and whose it says it is."""
    from git_continuity.display import quoted
    from git_continuity.trust import signatures

    # Subject, author and time are what the writer's environment said: shown as theirs, in
    # quotes, so that a subject cannot read as the tool's own words (#26).
    info = git.commit_info(repo, verdict.commit)
    said = (
        f"; subject as its writer gave it: {quoted((info.message.splitlines() or [''])[0])},"
        f" author field, not verified: {quoted(info.author)}, {info.time:%Y-%m-%d %H:%M}"
    )
    c = verdict.commit[:7]
    if verdict.kind == signatures.UNSIGNED:
        return f"commit {c} is not signed{said}"
    if verdict.kind == signatures.UNTRUSTED:
        return f"commit {c} is signed by a key not trusted here ({_short(verdict.key)}){said}"
    return f"commit {c} has a signature that does not verify ({verdict.detail}){said}"


def _short(key: str | None) -> str:
    if key is None:
        return "unknown key"
    return key if len(key) <= 40 else f"{key[:40]}…"


def _broken(repo: Repo, ref: str, commit: Oid) -> str:
    """The files the refused state also broke, if any."""
    from git_continuity.store.problems import all_problems
    from git_continuity.store.state import Snapshot

    stream = ref.removeprefix("refs/continuity/")
    problems = all_problems(Snapshot(repo, stream, commit, git.commit_tree(repo, commit)))
    if not problems:
        return ""
    return "\n  and its files are malformed too:\n    " + "\n    ".join(problems[:SHOWN])


def wrote(repo: Repo, stream: str, parent: Oid | None, commit: Oid) -> None:
    """A write of ours landed: the witness moves to it (its signature is ours)."""
    if not signing.enabled(repo):
        return
    seen = witness.read(repo, stream)
    depth = seen.depth + 1 if seen is not None and seen.commit == parent else git.history_depth(repo, commit)
    witness.record(repo, stream, witness.Seen(commit, depth, _now()))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _when(iso: str) -> str:
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    today = datetime.now(timezone.utc).date()
    return f"{moment:%H:%M}" if moment.date() == today else f"{moment:%Y-%m-%d %H:%M}"


def problem(repo: Repo, stream: str) -> str | None:
    """What a read of the stream would refuse (check's message), or None: for doctor, which
    lists instead of refusing."""
    if not signing.enabled(repo):
        return None
    try:
        tip = git.ref_target(repo, f"refs/continuity/{stream}")
    except UserError:
        return None  # health.state names a ref that cannot be read
    if tip is None or git.peel_to_commit(repo, tip) != tip:
        return None  # nor a commit, nor a stream (health.state again)
    try:
        seen = witness.read(repo, stream)
        if seen is not None and seen.commit == tip:
            return None
        return judge(repo, stream, tip, seen)
    except UserError as error:
        return str(error)


def accept(repo: Repo, stream: str, commit: Oid) -> witness.Seen | None:
    """Re-anchor the witness at commit, a state this user looked at and takes as it is
    (doctor --accept); what the witness held before."""
    before = witness.read_unchecked(repo, stream)
    depth = git.history_depth(repo, commit)
    why = f"accepted by doctor --accept at {_now()}" + (f" (the witness had {before.commit[:7]})" if before else "")
    witness.record(repo, stream, witness.Seen(commit, depth, _now(), baseline=why), force=True)
    return before


def off_warning(repo: Repo) -> str | None:
    """status's warning when signing and its checks are off for this repository."""
    if signing.enabled(repo):
        return None
    return (
        f"the state is not tamper-evident: git config {signing.CONFIG} is false here, so state commits are neither"
        f" signed nor checked (git config --unset {signing.CONFIG} turns both on again)"
    )


@dataclass(frozen=True)
class Admission:
    """What of a remote's head may be taken in here: the newest commits under which nothing
    is refused, and what is left out (each refused commit's verdict, and how many good
    commits stand on one of them)."""

    heads: list[Oid]
    refused: list[Verdict] = field(default_factory=list)
    built_on: int = 0

    @property
    def left_out(self) -> int:
        return len(self.refused) + self.built_on


NEWEST_WALK = 200  # commits judged at most, down from the tip of a state new here, for a trusted one


def admission(repo: Repo, ours: Oid | None, theirs: Oid, shape: Callable[[Oid], bool] | None = None) -> Admission:
    """What of ``theirs`` may be taken in on top of ``ours`` (None: new here): every commit it
    adds must be signed by a key trusted here (and be of the ``shape`` the ref holds, a notes
    commit for the notes); a new state is judged by its newest good commits, each covering its
    history, as a first read is. Left out: the rest, never merged, never lost (the tracking ref
    keeps it)."""
    from git_continuity.trust import signatures

    if not signing.enabled(repo) and shape is None:
        return Admission([theirs])
    if ours is not None and git.has_commit(repo, ours) and git.is_ancestor(repo, theirs, ours):
        return Admission([theirs])
    if ours is None:
        return _newest_good(repo, theirs, shape)
    new = git.commit_ids_since(repo, theirs, ours)
    refused = [v for v in _judged(repo, new, shape) if v.kind != signatures.GOOD]
    if not refused:
        return Admission([theirs])
    bad = {v.commit for v in refused}
    tainted: set[Oid] = set()
    for commit in new:  # parents first
        if commit in bad or any(p in tainted for p in git.commit_parents(repo, commit)):
            tainted.add(commit)
    clean = [c for c in new if c not in tainted]
    under = {p for c in clean for p in git.commit_parents(repo, c)}
    return Admission([c for c in clean if c not in under], refused, len(tainted) - len(bad))


def _judged(repo: Repo, commits: Sequence[Oid], shape: Callable[[Oid], bool] | None) -> list[Verdict]:
    """The signatures' verdicts, and a commit of the wrong shape refused as bad."""
    from git_continuity.trust import signatures

    if not signing.enabled(repo):
        verdicts = [signatures.Verdict(c, signatures.GOOD) for c in commits]
    else:
        verdicts = signatures.judge(repo, commits)
    if shape is None:
        return verdicts
    return [v if shape(v.commit) else signatures.Verdict(v.commit, signatures.BAD, v.key, NOT_NOTES) for v in verdicts]


NOT_NOTES = "not a notes commit"


def _newest_good(repo: Repo, tip: Oid, shape: Callable[[Oid], bool] | None) -> Admission:
    """For a state new here: walked down from tip, the first good commits on each path (each
    covers its history), and the refused ones above them."""
    from git_continuity.trust import signatures

    frontier, seen, heads, refused = [tip], {tip}, [], []
    while frontier and len(seen) <= NEWEST_WALK:
        below: list[Oid] = []
        for verdict in _judged(repo, frontier, shape):
            if verdict.kind == signatures.GOOD:
                heads.append(verdict.commit)
                continue
            refused.append(verdict)
            for parent in git.commit_parents(repo, verdict.commit):
                if parent not in seen and git.has_commit(repo, parent):
                    seen.add(parent)
                    below.append(parent)
        frontier = below
    heads = [h for h in heads if not any(o != h and git.is_ancestor(repo, h, o) for o in heads)]
    return Admission(heads, refused)
