"""Tamper evidence on every read: what was written is what is read, or the reader is told.

A stream's ref must still descend from the newest state commit this user saw here (the
witness, outside ``.git``), and every commit since then must be signed by a key this user
trusts (signatures.py, against the allowed-signers file in the user's config). A ref moved
back or sideways, an unsigned commit and one signed by a key not trusted here are refused,
naming the commits; ``doctor`` lists the same, and ``doctor --accept COMMIT`` re-anchors the
witness after a look. The commonest read (the ref where the witness saw it) costs one small
file read.

A stream never read here before (an upgrade from unsigned state, a fresh clone) is judged
by its newest commit: signed by a trusted key, it is taken as it is; unsigned, its history
is accepted once as the trust baseline, recorded in the witness and said once.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from git_continuity import repo as git
from git_continuity import signing, witness
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo

if TYPE_CHECKING:  # signatures (and the threads and processes it checks with) only when something is new
    from git_continuity.signatures import Verdict

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
    from git_continuity import signatures

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
    from git_continuity import signatures

    ref = f"refs/continuity/{stream}"
    verdict = signatures.judge(repo, [tip])[0]
    depth = git.history_depth(repo, tip)
    if verdict.kind == signatures.GOOD:
        witness.record(repo, stream, witness.Seen(tip, depth, _now()))
        return None
    if verdict.kind != signatures.UNSIGNED:
        return refusal(repo, ref, [verdict])
    why = f"unsigned history up to {tip[:7]}, accepted as the trust baseline on first read"
    witness.record(repo, stream, witness.Seen(tip, depth, _now(), baseline=why))
    print(
        f"git-continuity: {ref} was never read here and its newest commit {tip[:7]} is not signed: its {depth}"
        f" commit{'s' if depth != 1 else ''} are accepted as the trust baseline"
        f" (recorded in {witness.path(repo, stream)})."
        "\n  From now on every state commit is signed, and a read refuses one that is not, or a ref that moved back."
        f"\n  Teammates' keys are trusted with: git continuity trust signer add EMAIL 'KEY'"
        f" (yours: git continuity trust signer list)",
        file=sys.stderr,
    )
    return None


def _moved(repo: Repo, ref: str, tip: Oid, seen: witness.Seen) -> str | None:
    when = _when(seen.seen)
    accept = (
        f"\nIf that is on purpose (after a look: git log {ref}), accept it: git continuity doctor --accept {tip[:7]}"
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


def refusal(repo: Repo, ref: str, refused: Sequence[Verdict]) -> str:
    """The message that refuses these commits of ref, each named with what is wrong."""
    from git_continuity import signatures

    lines = [describe(repo, v) for v in refused[:SHOWN]]
    more = f"\n  and {len(refused) - SHOWN} more" if len(refused) > SHOWN else ""
    broken = _broken(repo, ref, refused[-1].commit)
    newest = refused[-1].commit[:7]
    fixes = []
    if any(v.kind == signatures.UNTRUSTED for v in refused):
        fixes.append("A teammate's key is trusted with: git continuity trust signer add EMAIL 'KEY'")
    if any(v.kind == signatures.UNSIGNED for v in refused):
        fixes.append(f"(Writes made while git config {signing.CONFIG} was false are unsigned too.)")
    fixes.append(
        f"After a look (git show {newest}), the state is accepted as it is with:"
        f" git continuity doctor --accept {newest}"
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
    from git_continuity import signatures
    from git_continuity.display import quoted

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


def admit(repo: Repo, stream: str, theirs: Oid, remote: str) -> None:
    """Refuse to take a remote's state in unless every commit it adds here is signed by a key
    trusted here (a new stream: its newest commit, which covers its history); the refused
    commits are named with their authors, and nothing is merged."""
    from git_continuity import signatures

    if not signing.enabled(repo):
        return
    ours = git.ref_target(repo, f"refs/continuity/{stream}")
    if ours is not None and git.is_ancestor(repo, theirs, ours):
        return
    new = [theirs] if ours is None else git.commit_ids_since(repo, theirs, ours)
    refused = [v for v in signatures.judge(repo, new) if v.kind != signatures.GOOD]
    if not refused:
        return
    lines = [describe(repo, v) for v in refused[:SHOWN]]
    more = f"\n  and {len(refused) - SHOWN} more" if len(refused) > SHOWN else ""
    untrusted = next((v for v in refused if v.kind == signatures.UNTRUSTED), None)
    trust = ""
    if untrusted is not None:
        author = git.commit_info(repo, untrusted.commit).author
        email = author[author.rfind("<") + 1 : -1] if author.endswith(">") else ""
        email = shlex.quote(email) if re.fullmatch(r"[^\s<>'\"\\]+@[^\s<>'\"\\]+", email) else "EMAIL"
        trust = (
            "\nIf that key is your teammate's (check it with them: git continuity trust signer list; the e-mail"
            " is the author field's, not verified), trust it and pull again:"
            f"\n  git continuity trust signer add {email} '{untrusted.key}'"
        )
    raise Refused(
        f"the state {remote} has for stream '{stream}' is not signed by keys trusted here; nothing was merged:\n  "
        + "\n  ".join(lines)
        + more
        + f"\nIt is kept in refs/continuity-remotes/{remote}/{stream} for a look (git log --show-signature REF)."
        + trust
    )
