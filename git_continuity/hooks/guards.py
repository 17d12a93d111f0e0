"""What the hooks do: git's hooks (``hooks/``) run ``git continuity hook-impl <hook> [args]``,
the pre-commit framework (``.pre-commit-hooks.yaml``) and the coding agents run
``git-continuity-hook <hook> [args]``, its alias. Both enter ``cli.main``, which calls
``hook_impl`` inside its one error handler: a ``UserError`` here is printed as any command's
is and exits 2 (which blocks a commit-msg or pre-push hook).

They decide from the cheapest evidence first. The shell hooks (``hooks/``) do the most
common case with no Python at all (a commit that closes nothing may add 25 ms, and Python
alone starts in ~18 ms): commit-msg greps the message for a thread id and the state's small
file for a place that refuses commits (the pre-commit framework's pre-commit hook greps the
same), and post-commit writes the provenance note of a commit that
names no thread with git itself, by the same compare-and-swap as commit_notes.add. Here, a commit
message that names no thread, and every hook in a repository without continuity state,
return before anything heavy is imported (pygit2 alone costs 65-120 ms). Those tests read
git through a few ``git`` plumbing calls; everything past them goes through the repository
door (repo.py), the provenance note included: commit_notes.add is the one compare-and-swap write
of a note in Python, so a command noting the same commit at the same moment keeps its line.

A repository that never ran ``git continuity init`` passes every hook quietly: people must
always be able to commit.

The stream is ``GIT_CONTINUITY_STREAM`` read as every command reads it (constants.env_stream):
empty counts as unset, and a name the commands refuse is refused here too, in the same words.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_continuity import gitcli
from git_continuity.constants import CLOSING_FILE, STATE_PREFIX, THREAD_ID, env_stream, usable_stream
from git_continuity.errors import UserError

if TYPE_CHECKING:  # the repository door imports pygit2: only past the cheap tests
    from git_continuity.gate.closure import Verdict
    from git_continuity.model import Thread
    from git_continuity.repo import Repo
    from git_continuity.store import Snapshot

ZERO = "0" * 40


_git = gitcli.run


def _stream() -> str | None:
    """The stream the hooks act on (constants.env_stream), or None to pass quietly: the name
    is not usable and this repository keeps no continuity state at all. Where it keeps some,
    an unusable name is refused with the commands' own message (store.ref_name)."""
    stream = env_stream()
    if usable_stream(stream):
        return stream
    if not _git("for-each-ref", "--count=1", "--format=%(refname)", STATE_PREFIX).stdout.strip():
        return None
    from git_continuity import store

    store.ref_name(stream)  # the same rule (usable_stream), so it raises the commands' message
    return stream


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def _stdin() -> str:
    """What git passed on stdin; nothing under the pre-commit framework (PRE_COMMIT=1), which
    consumes it, or on a terminal, which would wait for a person."""
    if os.environ.get("PRE_COMMIT") or sys.stdin is None or sys.stdin.isatty():
        return ""
    return sys.stdin.read()


def _message_threads(message: str) -> list[str]:
    text = "\n".join(line for line in message.splitlines() if not line.startswith("#"))
    return list(dict.fromkeys(map(str.lower, THREAD_ID.findall(text))))


# -- commit-msg: the closure guard ----------------------------------------------------------


def commit_msg(message_file: str) -> int:
    """Refuse a commit in a donor, archive or preservation place (the place guard, which the
    installed hooks run here: a pre-commit hook costs a commit a second read of its index),
    saying where the message written for it is kept (as git left it: an editor's comments in it),
    or how to undo a merge it leaves uncommitted; then block a commit whose message closes a
    thread whose checks do not verify on the commit being made, and hand what it judged to
    post-commit, which records the close (gate/pending_close.py)."""
    if guard_place() != 0:
        kept = Path(message_file).resolve()
        if kept.name == "MERGE_MSG":
            _say(f"The merge is left uncommitted (its message in {kept}): git merge --abort undoes it.")
        else:
            _say(f"Its message is kept in {kept}.")
        return 1
    message = Path(message_file).read_text(errors="replace")
    if not _message_threads(message):
        return 0  # closes nothing: no repository access at all
    return _judge_closing([("this commit", message)], where="commit")


def _tree_being_committed() -> str:
    """The tree git is about to commit: its index, or the temporary one it names in
    GIT_INDEX_FILE (commit -a, commit PATHS). git write-tree honours that variable."""
    made = _git("write-tree")
    if made.returncode != 0:
        raise UserError(f"cannot read the tree being committed (git write-tree: {made.stderr.strip()})")
    return made.stdout.strip()


def _judge_closing(commits: Sequence[tuple[str, str]], *, where: str) -> int:
    """The heavy path: threads named with a closing keyword must verify now (or be done);
    for a commit being made (``where`` is "commit"), on the tree it is made of."""
    from git_continuity import repo as git
    from git_continuity import store
    from git_continuity.clone import session
    from git_continuity.gate import closure, pending_close
    from git_continuity.model import now
    from git_continuity.store import policy

    stream = _stream()
    if stream is None:
        return 0
    repo = git.open_repo()
    committing = where == "commit"
    if committing:
        pending_close.drop(git.worktree_git_dir(repo))  # whatever an earlier commit left is stale now
    snap = store.snapshot(repo, stream)
    if snap.commit is None:
        return 0
    rules = policy.load(repo.work_dir)
    wanted = _closing_claims(commits, rules.closing_keywords)
    if not wanted:
        return 0
    store.require_well_formed(snap)
    threads = store.read_threads(snap)
    refused = _not_here(snap, wanted, threads)
    if refused:
        return refused
    pending = [threads[t] for t in wanted if threads[t].status != "done"]
    if not pending:
        return 0
    moment = now()
    tree = _tree_being_committed() if committing else None
    verdicts = closure.judge(snap, pending, store.read_claims(snap).values(), at=moment, policy=rules, tree=tree)
    failing = [v for v in verdicts if not v.ok]
    # All or nothing: a refused commit closes none of the threads it names. A commit being
    # made writes nothing: post-commit records the close once the commit exists.
    if committing and not failing and tree is not None:
        evidence = closure.evidence_of(verdicts, moment, session.who(repo))
        pending_close.leave(
            git.worktree_git_dir(repo),
            stream=stream,
            tree=tree,
            keywords=rules.closing_keywords,
            verdicts=verdicts,
            evidence=evidence,
        )
        return 0
    if not committing:
        closure.record(snap, verdicts, at=moment, close=not failing)
    return _tell_verdicts(verdicts, failing, wanted, where=where)


def _closing_claims(commits: Sequence[tuple[str, str]], keywords: Sequence[str]) -> dict[str, list[str]]:
    """Each thread the messages claim to close, with the labels of the commits that claim it."""
    from git_continuity import model

    wanted: dict[str, list[str]] = {}
    for label, message in commits:
        for thread_id in model.closing_ids(message, keywords):
            wanted.setdefault(thread_id, []).append(label)
    return wanted


def _not_here(snap: Snapshot, wanted: dict[str, list[str]], threads: Mapping[str, Thread]) -> int:
    """Said and refused: a thread named that is another stream's (2) or no stream's (1); else 0."""
    from git_continuity.clone import gate_presence

    missing = [t for t in wanted if t not in threads]
    elsewhere = gate_presence.other_streams(snap.repo, snap.stream, missing)
    if elsewhere:
        thread_id, other = next(iter(elsewhere.items()))
        _say(
            f"git-continuity: {', '.join(wanted[thread_id])} claims to close {thread_id}, a thread of stream "
            f"'{other}', but this commit is judged for stream '{snap.stream}': close it with "
            f"git continuity --stream {other} thread close {thread_id}, or commit with GIT_CONTINUITY_STREAM={other}."
        )
        return 2
    if missing:
        known = ", ".join(sorted(threads)) or "none"
        _say(
            f"git-continuity: {', '.join(wanted[missing[0]])} claims to close {', '.join(missing)}, "
            f"but stream '{snap.stream}' has no such thread (threads: {known}).\n"
            "Fix the id in the message (git continuity status lists threads), or drop the closing claim."
        )
        return 1
    return 0


def _tell_verdicts(
    verdicts: Sequence[Verdict], failing: Sequence[Verdict], wanted: dict[str, list[str]], *, where: str
) -> int:
    """What the closing commits are told, thread by thread, and how to go on; 1 when one fails."""
    from git_continuity.gate import closure

    for v in verdicts:
        if v.ok and not failing:
            _say(f'git-continuity: {v.thread.id} "{v.thread.title}": every check verified now; the thread is done.')
        elif v.ok:
            _say(
                f'git-continuity: {v.thread.id} "{v.thread.title}": every check verified now, but it stays open:'
                " a commit closes its threads only when all of them verify."
            )
    for v in failing:
        labels = ", ".join(wanted[v.thread.id])
        lines = v.lines()  # none for a thread without checks: then the reason ends the sentence
        _say(
            f'git-continuity: {labels} closes {v.thread.id} ("{v.thread.title}"), but {v.why_not()}'
            + (":\n" + "\n".join(lines) if lines else ".")
        )
    if not failing:
        return 0
    ids = ", ".join(v.thread.id for v in failing)
    if where == "push":
        _say(
            f"Make the checks pass first, or reword the commit so it does not claim to close {ids} "
            "(git rebase -i, or git commit --amend for the last one)."
        )
    else:
        for line in closure.refusal_advice(failing):
            _say(line)
    return 1


# -- the place guard: nothing is committed in a donor, archive or preservation place --------


def guard_place() -> int:
    """Refuse a commit in a donor, archive or preservation place (place_guard): the
    commit-msg hook's first step, and the pre-commit framework's continuity-place-guard."""
    from git_continuity.clone import places as place_guard

    try:
        stream = _stream()
    except UserError:
        return 0  # an unusable stream name: post-commit says so, and the commit is made
    refused = place_guard.commit_refusal(stream) if stream is not None else None
    if refused:
        _say(refused)
        return 1
    return 0


# -- post-commit: the provenance note -------------------------------------------------------


def post_commit() -> int:
    """Note on the new commit why it exists: stream, session, objective, threads, state."""
    stream = _stream()
    if stream is None:
        return 0
    # One call for all three: this work tree's git folder (its session file), the shared
    # one, and the stream's state commit.
    found = _git("rev-parse", "--git-dir", "--git-common-dir", "-q", "--verify", f"{STATE_PREFIX}{stream}^{{commit}}")
    lines = found.stdout.split("\n")
    if found.returncode != 0 or len(lines) < 3:
        return 0  # no active stream
    git_dir, common, state = Path(lines[0]), Path(lines[1]), lines[2]
    head = _git("log", "-1", "--format=%H %T%n%B")
    if head.returncode != 0:
        return 0
    ids, _, message = head.stdout.partition("\n")
    commit, _, tree = ids.partition(" ")
    from git_continuity import repo as git
    from git_continuity.clone import provenance, session
    from git_continuity.store import notes as commit_notes

    repo = git.open_repo()
    if (git_dir / CLOSING_FILE).exists():  # commit-msg judged a close of this commit, or a stale one
        from git_continuity.gate import pending_close

        if pending_close.after_commit(repo, git_dir, stream, commit, tree, message):
            state = _git("rev-parse", "-q", "--verify", f"{STATE_PREFIX}{stream}^{{commit}}").stdout.strip() or state
    # The same source as every other write (clone/session.py: the environment, then this work
    # tree's open session); a broken one costs the note its session, never the note.
    try:
        session_id, agent = session.current(git_dir)
        judged = True
    except UserError as error:
        _say(f"git-continuity: {error}; the provenance note has no session")
        session_id, agent, judged = None, None, False
    objective = _active(repo, common, stream, state).get("objective")
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    threads = _message_threads(message)
    record = provenance.record(stream, state, objective, threads, at, session.hostname(), session_id, agent)
    # The one compare-and-swap write: a command noting this commit at the same moment (a
    # claim naming it, a CI result) keeps its line, and so does this one.
    commit_notes.add(repo, git.Oid(commit), record)
    if judged:  # the next commit in this environment is noted by the shell alone
        from git_continuity.trust import signing

        provenance.keep(git_dir, record, environment=True, signer=signing.shell_signer(repo))
    return 0


def _active(repo: Repo, common_dir: Path, stream: str, state: str) -> dict[str, Any]:
    """The objective digest of the current state, from the small file every state write
    leaves (store.remember_active); recomputed through the repository when it is stale."""
    path = common_dir / "continuity" / "active" / f"{stream}.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        if data.get("state") == state:
            return data
    except (OSError, ValueError):
        pass
    from git_continuity import store

    return store.remember_active(store.snapshot(repo, stream))


# -- pre-push: nothing unverified claims closure on a remote --------------------------------


def pre_push(remote: str) -> int:
    """Block a push that moves a preservation branch (place_guard), or that carries a commit
    whose message closes a thread that is not verified, including commits made with
    --no-verify (the commit-msg hook never saw them)."""
    from git_continuity.clone import places as place_guard

    ranges = []
    lines = [line.split() for line in _stdin().splitlines()]
    stream = _stream()
    refused = place_guard.push_refusal(stream, remote, lines) if stream is not None else None
    if refused:
        _say(refused)
        return 1
    for parts in lines:
        if len(parts) == 4 and parts[1] != ZERO:
            local, remote_oid = parts[1], parts[3]
            ranges.append([local, "--not", f"--remotes={remote}"] if remote_oid == ZERO else [f"{remote_oid}..{local}"])
    if not ranges and os.environ.get("PRE_COMMIT_TO_REF"):
        # Through the pre-commit framework: only the first pushed ref is known.
        to_ref, from_ref = os.environ["PRE_COMMIT_TO_REF"], os.environ.get("PRE_COMMIT_FROM_REF", "")
        ranges.append(
            [f"{from_ref}..{to_ref}"] if from_ref and from_ref != ZERO else [to_ref, "--not", f"--remotes={remote}"]
        )
    commits: list[tuple[str, str]] = []
    for spec in ranges:
        out = _git("log", "--format=%H%x00%B%x01", *spec)
        for entry in out.stdout.split("\x01"):
            oid, _, message = entry.strip("\n").partition("\x00")
            if oid and _message_threads(message):
                commits.append((f"commit {oid[:7]}", message))
    if not commits:
        return 0
    return _judge_closing(commits, where="push")


# -- post-rewrite: notes and claims follow amend and rebase ---------------------------------


def post_rewrite(kind: str) -> int:
    pairs = [line.split()[:2] for line in _stdin().splitlines() if len(line.split()) >= 2]
    stream = _stream()
    if stream is None:
        return 0
    from git_continuity import repo as git
    from git_continuity.hooks import rewrite

    repo = git.open_repo()
    found = [(git.Oid(a), git.Oid(b)) for a, b in pairs] or rewrite.pairs_from_history(repo, kind)
    if found:
        rewrite.follow(repo, stream, found, kind=kind)
    return 0


# -- the state check ------------------------------------------------------------------------


def state_check() -> int:
    """`git continuity check` for the pre-commit framework: the state is well-formed and every
    done thread still holds (exit 2, or 1, when not)."""
    stream = _stream()
    if stream is None:
        return 0
    from git_continuity import repo as git
    from git_continuity import store
    from git_continuity.gate import closure

    snap = store.snapshot(git.open_repo(), stream)
    if snap.commit is None:
        return 0
    result = closure.gate(snap, closing=False, online=False)
    print("\n".join(result.report()))
    return result.exit_code


# -- the entry ------------------------------------------------------------------------------

HOOKS = (
    "pre-commit, commit-msg FILE, post-commit, pre-push REMOTE [URL], post-rewrite amend|rebase, state, "
    "agent claude|codex session-start|pre-compact|stop|session-end"
)


def hook_impl(hook: str, args: list[str]) -> int:
    """Run one hook with git's arguments (or the pre-commit framework's, or an agent's); what
    ``git continuity hook-impl HOOK ARGS`` and ``git-continuity-hook HOOK ARGS`` call."""
    if hook == "commit-msg" and args:
        return commit_msg(args[0])
    if hook == "pre-commit":
        return guard_place()
    if hook == "post-commit":
        return post_commit()
    if hook == "pre-push":
        return pre_push(args[0] if args else os.environ.get("PRE_COMMIT_REMOTE_NAME", "origin"))
    if hook == "post-rewrite":
        return post_rewrite(args[0] if args else os.environ.get("PRE_COMMIT_REWRITE_COMMAND", "amend"))
    if hook == "state":
        return state_check()
    if hook == "agent" and len(args) == 2:
        # A coding agent's hook (agents/table.py installs them): not a git hook, but the same door.
        from git_continuity.agents import hooks as agent_hooks

        return agent_hooks.main(args[0], args[1])
    raise UserError(f"no hook {' '.join([hook, *args])!r}; the hooks are: {HOOKS}")
