"""An agent's Stop gate (agent_hooks ``stop``): it holds a session that changed something to
every open thread and every done thread that no longer holds, but for those another live
session claimed (``thread claim``: planning.protected_elsewhere); lets a session that changed
nothing stop; names once a close that accepted withdrawn checks; and after STOP_BLOCK_LIMIT
blocks in a row lets the agent go, through one last block that asks the model to tell the user
in its answer (all a headless run prints), and in the journal. A state it cannot read, or one
with problems, holds the stop once, asking the model to tell the user; it never offers the
agent a repair, nor a write that the state would refuse."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity.constants import LET_GO

STOP_BLOCK_LIMIT = 3


def _stop_file(repo: Any) -> Path:
    from git_continuity import repo as git

    return git.worktree_git_dir(repo) / "continuity" / "stop.json"


def _stopped_before(path: Path, agent_session: str | None) -> dict[str, Any]:
    """What the stop file remembers of this conversation: blocks in a row, closes told of."""
    try:
        data = json.loads(path.read_text())
        if isinstance(data, dict) and data.get("agent_session") == agent_session:
            return data
    except (OSError, ValueError):
        pass
    return {}


def _blocks(path: Path, agent_session: str | None, active: bool) -> int:
    """Blocks in a row so far: a stop that is not a continuation after a block starts over."""
    if not active:
        return 0
    try:
        return int(_stopped_before(path, agent_session).get("blocks", 0))
    except (ValueError, TypeError):
        return 0


def _keep(path: Path, agent_session: str | None, blocks: int, told: list[str] | None = None) -> None:
    if told is None:
        kept = _stopped_before(path, agent_session).get("told")
        told = [str(t) for t in kept] if isinstance(kept, list) else []
    text = json.dumps({"agent_session": agent_session, "blocks": blocks, "told": told}) + "\n"
    # A turn like the last leaves the file as it is (6 ms of every such Stop); without the count
    # the agent's own limit still ends the loop.
    with contextlib.suppress(OSError):
        atomic.keep(path, text)


def _changed(repo: Any, snap: Any) -> bool:
    """Whether this clone changed since the open session's start (its commits and branches,
    the work tree, the state ref). A session whose start the hooks never saw counts as
    changed: the gate fails closed."""
    from git_continuity import repo as git
    from git_continuity.clone import session
    from git_continuity.sessions import brief

    stored = session.open_session(git.worktree_git_dir(repo))
    if stored is None or stored.stream != snap.stream or stored.state is None or stored.worktree is None:
        return True
    if snap.commit != stored.state or brief.ref_snapshot(repo) != (stored.refs or {}):
        return True
    return git.worktree_tree(repo) != stored.worktree


def _accepted_here(repo: Any, snap: Any, told: list[str]) -> list[Any]:
    """Threads this session closed with --accept-withdrawn that the gate has not named yet."""
    from git_continuity import repo as git
    from git_continuity import store
    from git_continuity.clone import session

    stored = session.open_session(git.worktree_git_dir(repo))
    if stored is None:
        return []
    threads = store.read_threads(snap).values()
    return sorted(
        (
            t
            for t in threads
            if t.status == "done"
            and t.accepted_withdrawn
            and t.accepted_withdrawn.get("session") == stored.id
            and t.id not in told
        ),
        key=lambda t: t.id,
    )


def answer(repo: Any, stream: str, agent_session: str | None, active: bool) -> dict[str, Any]:
    """The Stop gate's answer to an agent's Stop event (agent_hooks prints it)."""
    from git_continuity import store
    from git_continuity.gate import closure

    path = _stop_file(repo)
    before = _stopped_before(path, agent_session)
    told = [str(t) for t in before.get("told") or []]
    snap = store.snapshot(repo, stream)
    accepted = _accepted_here(repo, snap, told)
    if accepted:  # a close that gave up on a check: said once, where the user reads it
        _keep(path, agent_session, 0, told + [t.id for t in accepted])
        named = "; ".join(
            f'{t.id} "{t.title}" closed with {len(t.accepted_withdrawn["checks"])} withdrawn check'
            f"{'s' if len(t.accepted_withdrawn['checks']) != 1 else ''}: {t.accepted_withdrawn['why']}"
            for t in accepted
        )
        return {
            "decision": "block",
            "reason": f"git-continuity: {named}. Tell the user in your answer that this was closed without "
            "those checks and why, then stop.",
        }
    if not _changed(repo, snap):
        # Nothing changed in this session (a question answered): nothing to hold it to. The
        # next brief still lists the open threads.
        _keep(path, agent_session, 0, told)
        return {}
    problems = store.all_problems(snap)
    if problems:  # nothing can be written on it, parking a thread included: the user must know
        return unreadable(repo, agent_session, active, malformed(snap.ref, problems))
    result = closure.gate(snap, closing=True, online=False, via="stop", skip=_claimed_elsewhere(repo, snap))
    if result.stopped and result.exit_code == 0:
        # The stop-loss blocked a thread now: no more retrying it; one last turn to say why.
        _keep(path, agent_session, 0, told)
        return {"decision": "block", "reason": _stop_loss_reason(result.stopped)}
    if result.exit_code == 0:
        _keep(path, agent_session, 0, told)
        notes = [result.waiting_line()] if result.waiting else []
        if result.closable:  # every check verifies now; closing is a deliberate act, not the gate's
            notes.append(
                f"{', '.join(result.closable)} verif{'ies' if len(result.closable) == 1 else 'y'} now; "
                + result.close_hint()
            )
        return {"systemMessage": "git-continuity: " + "; ".join(notes)} if notes else {}
    blocks = _blocks(path, agent_session, active)
    ids = ", ".join(v.thread.id for v in result.failing) or "the state"
    if blocks > STOP_BLOCK_LIMIT:  # it was asked to tell the person: let it stop, saying it here too
        _keep(path, agent_session, 0, told)
        said = (
            f"git-continuity: the agent stopped although {ids} did not verify "
            f"(it was told {STOP_BLOCK_LIMIT} times in a row); git continuity check --closing shows why."
        )
        print(said, file=sys.stderr)  # Gemini CLI shows the message; stderr, for a log
        return {"systemMessage": said}
    if blocks == STOP_BLOCK_LIMIT:
        # Let go, but through the one thing every agent shows the person who ran it headless
        # (claude -p and codex exec print only the model's last answer): one last block whose
        # reason asks the model to say it in that answer.
        _keep(path, agent_session, blocks + 1, told)
        _let_go(repo, stream, [v.thread.id for v in result.failing], blocks)
        return {"decision": "block", "reason": _tell_reason(ids, blocks)}
    _keep(path, agent_session, blocks + 1, told)
    lines = result.report()
    reason = (
        "git-continuity: you may not stop yet: an open thread is finished only when its checks verify now.\n"
        + "\n".join(lines)
        + "\nIf it is honestly not finished, record why (git continuity journal add TEXT) and park it."
    )
    if result.stopped:  # the report said which; the handoff is asked for too
        reason += "\n" + _stop_loss_reason(result.stopped, said=True)
    return {"decision": "block", "reason": reason}


def _claimed_elsewhere(repo: Any, snap: Any) -> frozenset[str]:
    """The threads another live session claimed: not this session's to finish."""
    from git_continuity import store
    from git_continuity.clone import session
    from git_continuity.model import now
    from git_continuity.store import planning

    who = session.who(repo)
    claims = planning.claims_from(store.read_thread_claims(snap))
    return frozenset(planning.protected_elsewhere(claims, who.session, who.host, who.by, now()))


def _tell_reason(ids: str, blocks: int) -> str:
    """The let-go's last block: the model is to tell the person, in its answer, what is not done."""
    return (
        f"git-continuity: you may stop now, but {ids} did not verify (you were told {blocks} times in a row), so what"
        ' you said was done is not. Begin your answer to the user with: "Not done: '
        f'{ids} did not verify (git continuity check --closing shows why)." Then stop.'
    )


# The fixes a refusal offers (accept, put back, trust a key) are the user's to choose, not the agent's.
# So is the setting that turns the checks off (continuity.sign), which anything holding .git can set.
_USERS_TO_CHOOSE = (
    "doctor --accept",
    "trust signer add",
    "trust team accept",
    "Put it back:",
    "gives it back:",
    "continuity.sign",
)


def for_agent(error: str) -> str:
    """A refusal to read the state as an agent is told it: what happened, without the fixes
    that would let the agent move past it on its own, and who decides."""
    kept = [line for line in error.splitlines() if not any(fix in line for fix in _USERS_TO_CHOOSE)]
    return (
        "\n".join(kept).rstrip(":")
        + "\nWhat to accept or put back is the user's decision (git continuity doctor shows them the state and"
        " the fixes): do not accept, restore or rewrite the state yourself."
    )


def malformed(ref: str, problems: list[str]) -> str:
    """What the gate says of a malformed state: nothing can be written on it until it is repaired
    (a journal entry, a thread parked), so there is nothing the agent can do about the stop."""
    return (
        f"the state on {ref} is malformed, so nothing can be written on it (a journal entry, a thread parked) until"
        " it is repaired:\n  " + "\n  ".join(problems)
    )


def unreadable(repo: Any, agent_session: str | None, active: bool, error: str) -> dict[str, Any]:
    """The Stop gate's answer when the state cannot be read (a refused signature or witness, a
    malformed state): it cannot judge the stop, so it fails closed once, holding the agent to
    tell the user, and lets go at the next stop, saying so where the user reads it."""
    path = _stop_file(repo)
    if _blocks(path, agent_session, active):
        _keep(path, agent_session, 0)
        first = error.splitlines()[0].rstrip(":")
        said = f"git-continuity: the agent stopped while the closure gate could not read the state: {first}"
        print(said, file=sys.stderr)  # a headless run shows no systemMessage
        return {"systemMessage": said}
    _keep(path, agent_session, 1)
    return {
        "decision": "block",
        "reason": "git-continuity: the closure gate cannot judge this stop: "
        + for_agent(error)
        + "\nTell the user in your answer what happened to the state, then stop.",
    }


def _let_go(repo: Any, stream: str, ids: list[str], blocks: int) -> None:
    """Record that a session ended on unverified threads, for the next brief to lead with."""
    from git_continuity import store
    from git_continuity.clone import session
    from git_continuity.model import JournalEntry, new_id, now, stamp

    moment = now()
    who = session.who(repo)
    text = (
        f"{LET_GO}{who.session or '(none)'} ended with {', '.join(ids)} unverified, after {blocks} blocks in a "
        "row; what it said was done is not (git continuity check --closing shows why)"
    )
    entry = JournalEntry(new_id("journal"), text, stamp(moment), who.by, who.host, **who.stamp())
    from git_continuity.errors import UserError

    with contextlib.suppress(UserError, OSError):  # the agent stops either way; the message says it
        store.update(
            repo,
            stream,
            lambda s: store.Change(f"journal: {text}", {store.journal_path(entry, moment): store.entry_bytes(entry)}),
        )


def _stop_loss_reason(stopped: Any, said: bool = False) -> str:
    """What the agent is told when the stop-loss blocks a thread: stop retrying, hand off
    (``said``: the gate's report already named the threads)."""
    from git_continuity.view import stoploss

    notes = "; ".join(f"{s.thread.id} stopped by the stop-loss ({', '.join(s.course.spent)})" for s in stopped)
    return (
        ("" if said else "git-continuity: " + "\n".join(stoploss.stopped_lines(stopped)) + "\n")
        + "Do not retry it in this session. Record a handoff that names the reason, then stop:\n"
        + f'  git continuity handoff --note "{notes}: what was tried, and what a new approach needs"'
    )
