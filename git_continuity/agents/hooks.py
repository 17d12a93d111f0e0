"""What a coding agent's hooks run: ``git-continuity-hook agent <claude|codex> <action>``.

Each reads the agent's JSON on stdin (``session_id``, ``cwd``, and per event ``source``,
``trigger`` or ``stop_hook_active``) and answers on stdout with the JSON both Claude Code and
Codex read, always exiting 0 (exit 2 would make some events block with stderr as the
reason, and any other code is an error the agent shows):

- ``session-start``: ``{"hookSpecificOutput": {"hookEventName": "SessionStart",
  "additionalContext": <the orient brief>}}``, cut by priority to ``GIT_CONTINUITY_BRIEF_TOKENS``,
  else to what the agent passes on whole (agents.Target.brief_tokens: Claude Code 3,200, Codex
  3,000, about 9,600 and 9,000 bytes; both pass on about 10,000 characters and cut the rest);
- ``pre-compact`` and ``session-end``: a handoff, reported as ``{"systemMessage": …}`` (none, at a
  compaction too, for a session that changed neither the state nor a branch or tag); except
  Claude Code's PreCompact, whose stdout is not read as JSON but passed on as plain-text
  instructions for the summary: there it names the ids the summary must keep;
- ``stop``: the closure gate. While an open thread does not verify now it answers
  ``{"decision": "block", "reason": <why, and how to park it>}``, so the agent keeps working
  instead of declaring false closure. It cannot loop: after ``stop_gate.STOP_BLOCK_LIMIT`` blocks in a
  row (each continuation arrives with ``stop_hook_active``) it blocks once more, asking the model to
  tell the person in its answer that the work is not done (``claude -p`` and ``codex exec`` print
  only that answer), then lets it stop (Claude Code itself ends a turn after 8 consecutive Stop
  blocks).

A directory that is not a repository, or a stream without state, gets ``{}``: the hooks must
never get in the way of work that does not use git-continuity.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_continuity import display
from git_continuity.agents import hook_log
from git_continuity.agents.table import AGENT_NAMES
from git_continuity.constants import ENV_BRIEF_TOKENS, env_stream

if TYPE_CHECKING:  # the repository door imports pygit2: only once a hook runs in a repository
    from git_continuity.repo import Repo
    from git_continuity.store.records import Handoff

ACTIONS = ("session-start", "pre-compact", "stop", "session-end", "post-tool-use")


_SAID: list[str] = []  # what this run answered, for the hook log


def _outcome(document: dict[str, Any]) -> str:
    if document.get("decision") == "block":
        return "block"
    if (document.get("hookSpecificOutput") or {}).get("additionalContext"):
        return "context"
    return "message" if document.get("systemMessage") else "nothing"


def _answer(document: dict[str, Any]) -> int:
    _SAID.append(_outcome(document))
    # The agent reads the decoded strings: text from state is cleaned inside them too.
    sys.stdout.write(display.json_text(display.clean_strings(document)) + "\n")
    return 0


def _input() -> dict[str, Any]:
    """The agent's JSON on stdin; anything else counts as no input (the hook still runs)."""
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.read()
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        print("git-continuity: the hook input is not JSON; going on without it", file=sys.stderr)
        return {}
    return data if isinstance(data, dict) else {}


def _budget(agent: str) -> int:
    """The brief's size: GIT_CONTINUITY_BRIEF_TOKENS, else what the agent passes on whole."""
    from git_continuity.agents.table import TARGETS

    default = TARGETS[agent].brief_tokens
    try:
        return max(1, int(os.environ.get(ENV_BRIEF_TOKENS, default)))
    except ValueError:
        return default


def main(agent: str, action: str) -> int:
    if agent not in AGENT_NAMES or action not in ACTIONS:
        print(f"usage: git-continuity-hook agent {{{','.join(AGENT_NAMES)}}} {{{','.join(ACTIONS)}}}", file=sys.stderr)
        return 2
    if action == "post-tool-use":  # cli/hook_entry.py sends it there first; this is the same
        from git_continuity.agents import loop_notice as tool_calls

        return tool_calls.main(agent)
    data = _input()
    where = str(data.get("cwd") or os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    try:
        return _run(agent, action, data, where)
    finally:
        git_dir = hook_log.common_dir(where)
        if git_dir is not None:
            hook_log.record(git_dir, agent, action, _SAID[-1] if _SAID else "error")


def _run(agent: str, action: str, data: dict[str, Any], where: str) -> int:
    # Everything this process writes carries the agent's name (clone/session.py reads it).
    os.environ.setdefault("GIT_CONTINUITY_AGENT", AGENT_NAMES[agent])
    agent_session = str(data["session_id"]) if data.get("session_id") else None
    from git_continuity import repo as git
    from git_continuity import store
    from git_continuity.errors import UserError

    stream = env_stream()
    plain = agent == "claude" and action == "pre-compact"  # instructions for the summary, not JSON
    try:
        repo = git.open_repo(Path(where))
    except UserError:
        return _plain("") if plain else _answer({})  # not a repository: nothing to orient on
    try:
        if store.snapshot(repo, stream).commit is None and action != "session-start":
            return _plain("") if plain else _answer({})
        if action == "session-start":
            return _session_start(repo, stream, agent_session, _budget(agent), agent)
        if action == "stop":
            from git_continuity.gate import stop as stop_gate

            return _answer(stop_gate.answer(repo, stream, agent_session, bool(data.get("stop_hook_active"))))
        return _handoff(repo, stream, agent_session, action, plain)
    except UserError as error:
        said = str(error).splitlines()[0]
        if action == "stop":
            from git_continuity.gate import stop as stop_gate

            active = bool(data.get("stop_hook_active"))
            return _answer(stop_gate.unreadable(repo, agent_session, active, str(error)))
        if action == "session-start":
            from git_continuity.gate.stop import for_agent

            told = for_agent(str(error))
            return _answer(_context(f"git-continuity could not orient this session: {told}\nTell the user first."))
        if plain:
            return _plain(f"git-continuity could not record a handoff before this compaction: {said}")
        return _answer({"systemMessage": f"git-continuity: {said}"})


def _context(text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def _session_start(repo: Repo, stream: str, agent_session: str | None, max_tokens: int, agent: str) -> int:
    from git_continuity.agents import shell as agent_shell
    from git_continuity.sessions import orient as orientation

    note = agent_shell.note(repo.common_dir, agent)  # the model's shell does not find the tool
    room = max_tokens - (len(note.encode()) + 1 + 2) // 3 if note else max_tokens  # sessions/budget.py: 3 bytes a token
    result = orientation.build(repo, stream=stream, max_tokens=room, agent_session=agent_session)
    first, _, rest = result.text.partition("\n")
    from git_continuity import repo as git
    from git_continuity.agents import briefed as agent_briefed
    from git_continuity.model import now, stamp

    earlier = agent_briefed.supersedes(git.worktree_git_dir(repo), agent, agent_session, stamp(now()))
    if earlier:  # a resumed or compacted conversation still holds the earlier brief
        first = agent_briefed.first_line(first, earlier)
    text = "\n".join([first, *([note] if note else []), rest])
    return _answer(_context(text))


def _plain(text: str) -> int:
    _SAID.append("plain" if text else "nothing")
    if text:
        sys.stdout.write(text + "\n")
    return 0


def _instructions(handoff: Handoff, recorded: bool = True) -> str:
    """What the summary of a compaction must keep: the ids the next turns act on (``recorded``:
    this handoff was just written; else it is the latest, nothing having changed since)."""
    kept = [f"the handoff id {handoff.id}", f'the objective "{handoff.objective.text}"']
    kept += [f'the open thread {t.id} "{t.title}" ({t.status})' for t in handoff.threads]
    kept += [f'the blocker {b.id} "{b.text}"' for b in handoff.blockers]
    said = (
        f"git-continuity recorded handoff {handoff.id} before this compaction (session {handoff.session}). "
        if recorded
        else f"Nothing changed since git-continuity's handoff {handoff.id} (session {handoff.session}), so none "
        "was recorded before this compaction. "
    )
    return (
        said
        + f"Keep in the summary, word for word: {'; '.join(kept)}. After the compaction git-continuity puts a fresh "
        "brief into the context: where it and this summary differ, the brief is right."
    )


def _handoff(repo: Repo, stream: str, agent_session: str | None, action: str, plain: bool = False) -> int:
    from git_continuity.sessions import handoff as handoffs

    if _changed_nothing(repo, stream):  # at a compaction too: a handoff saying nothing buries the last real one
        if not plain:
            return _answer({})
        from git_continuity import store

        latest = store.latest_handoff(store.snapshot(repo, stream))  # the summary still keeps its ids
        return _plain(_instructions(latest, recorded=False) if latest is not None else "")
    done = handoffs.make(repo, stream=stream, agent_session=agent_session).handoff
    if plain:
        return _plain(_instructions(done))
    when = "before the compaction" if action == "pre-compact" else "at the end of the session"
    said = f"git-continuity: handoff {done.id} recorded {when} (session {done.session})"
    if action == "session-end":  # a bounded sync, so the next machine starts from it (#25)
        from git_continuity.syncing import exchange

        synced = exchange.at_session_end(repo)
        said += f"; {synced}" if synced else ""
    return _answer({"systemMessage": said})


def _changed_nothing(repo: Any, stream: str) -> bool:
    """The open session left the state of every stream and every branch and tag as it found
    them: its handoff would say nothing new and crowd the next brief (an agent run headless is
    a session each time). It ends without one."""
    from git_continuity import repo as git
    from git_continuity import store
    from git_continuity.clone import session
    from git_continuity.constants import STATE_PREFIX
    from git_continuity.model import now, parse_stamp, stamp
    from git_continuity.sessions import brief

    git_dir = git.worktree_git_dir(repo)
    stored = session.open_session(git_dir)
    if stored is None or stored.stream != stream or stored.state is None:
        return False
    if store.snapshot(repo, stream).commit != stored.state or brief.ref_snapshot(repo) != (stored.refs or {}):
        return False
    # A session works on other streams too; one of theirs written since it started is a change.
    started = int(parse_stamp(stored.started_at).timestamp())
    others = git.ref_tips(repo, [STATE_PREFIX], 10_000)
    if any(git.commit_time(repo, tip) >= started for name, tip in others.items() if name != STATE_PREFIX + stream):
        return False
    # Left open when it cannot be written: the next session says it ended without a handoff, which is true.
    with contextlib.suppress(OSError):
        session.save(git_dir, stored._replace(ended_at=stamp(now())))
    return True
