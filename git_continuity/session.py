"""Sessions: one stretch of work by one agent (or person), from ``orient`` to ``handoff``.

A work tree's current session lives in ``<git dir>/continuity/session.json``, where the git
dir is the work tree's own (``.git/`` for the main checkout, ``.git/worktrees/<name>/`` for
a linked worktree), so two agents in two linked worktrees of one clone have two sessions.
It is local and never synced: what travels is the session id on every entry written during
the session, the trailers on each state commit, and the handoff.

``GIT_CONTINUITY_SESSION`` and ``GIT_CONTINUITY_AGENT`` override the file, for a process that
manages its own sessions (a scheduler, a CI job).

Which session is current is decided in one place, ``resolve()``, for every writer (through
``who()``), for orient, for handoff and for the post-commit hook:

- a session named in the environment is current; the work tree's open session only when it
  is that one;
- else the work tree's open session, unless an agent's hook names another conversation of
  the agent (``agent_session``) than the one the session was started for: then that session
  ended without a handoff and is not current;
- the stream written to does not enter into it. A session started for stream a that writes
  to stream b stamps its own id on b's entries, and orient on b continues it: one agent
  session keeps one session id across streams and commands. What is tied to the stream it
  started on is its baseline (the state commit at its start) and its end: a handoff on that
  stream measures what the session did from its start and ends it; a handoff on another
  stream records the session's id, measures from that stream's previous handoff, and leaves
  the session open.

Every command that writes reads the session through ``resolve()``, and so does the
post-commit hook on every commit: this module imports nothing heavy (no pygit2), only the
standard library (NamedTuple, not dataclasses: importing dataclasses alone costs ~7 ms of a
commit's 80 ms budget).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from git_continuity import atomic, provenance
from git_continuity.errors import UserError

if TYPE_CHECKING:  # the repository door imports pygit2; only who() needs it, lazily
    from git_continuity.repo import Repo

from git_continuity.constants import AGENT_RE, ENV_AGENT, ENV_SESSION
from git_continuity.constants import hostname as hostname  # where entries come from; used beside who()

SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$")


class Session(NamedTuple):
    """The current session of one work tree, as kept in its session file."""

    id: str
    started_at: str
    host: str
    stream: str
    agent: str | None = None
    # The agent's own id for its conversation (Claude Code's and Codex's ``session_id``):
    # a SessionStart for another conversation means this session ended without a handoff.
    agent_session: str | None = None
    state: str | None = None  # the state commit when it started: what it did is diffed from here
    refs: dict[str, str] | None = None  # branch, remote and tag tips when it started
    ended_at: str | None = None
    handoff: str | None = None  # the handoff that ended it
    stop_blocks: int = 0  # consecutive Stop-hook blocks (agents.py caps them)
    worktree: str | None = None  # the work tree's tree when it started: the Stop gate holds a session that changed it


def path(git_dir: Path) -> Path:
    return git_dir / "continuity" / "session.json"


def load(git_dir: Path) -> Session | None:
    """The session file's session, ended or not; None when there is none or it is unreadable
    (a broken local file must never stop a commit or a command: it is only re-created)."""
    try:
        data = json.loads(path(git_dir).read_text())
        return Session(**{k: v for k, v in data.items() if k in Session._fields})
    except (OSError, ValueError, TypeError):
        return None


def save(git_dir: Path, session: Session) -> None:
    target = path(git_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.write(target, json.dumps(session._asdict(), indent=2, sort_keys=True) + "\n")
    found = resolve(git_dir, environment=False)
    provenance.resession(git_dir, found.id, found.agent)  # the next commit's note, for the hook


def open_session(git_dir: Path) -> Session | None:
    """The session file's session if it has not ended."""
    found = load(git_dir)
    return found if found is not None and found.ended_at is None else None


def from_env() -> tuple[str | None, str | None]:
    """GIT_CONTINUITY_SESSION and GIT_CONTINUITY_AGENT, checked (they end up in commit
    messages and entries)."""
    session = os.environ.get(ENV_SESSION) or None
    agent = os.environ.get(ENV_AGENT) or None
    if session is not None and not SESSION_RE.match(session):
        raise UserError(
            f"{ENV_SESSION}={session!r} is not a usable session id: "
            "letters, digits, '.', '_', ':' and '-', at most 64 characters, starting with a letter or digit"
        )
    if agent is not None and not AGENT_RE.match(agent):
        raise UserError(f"{ENV_AGENT}={agent!r} is not a usable agent name: 1 to 64 characters, no control characters")
    return session, agent


class Current(NamedTuple):
    """The session what is written now belongs to."""

    id: str | None  # None: no session is open here and none is named
    agent: str | None
    stored: Session | None  # the work tree's open session, when it is the current one
    ended: Session | None  # the work tree's open session, when another one is current


def resolve(git_dir: Path, *, agent_session: str | None = None, environment: bool = True) -> Current:
    """The one rule for which session is current (the module's docstring): the environment
    first, then the work tree's open session unless ``agent_session`` (the agent's own id for
    its conversation, known only to its hooks) says it belongs to another conversation.
    ``environment=False``: as for a process whose environment names no session or agent."""
    env_session, env_agent = from_env() if environment else (None, None)
    stored = open_session(git_dir)
    if stored is None:
        return Current(env_session, env_agent, None, None)
    other_named = env_session is not None and env_session != stored.id
    # a command the agent runs itself names no conversation: it belongs to the open session
    other_conversation = agent_session is not None and stored.agent_session != agent_session
    if other_named or other_conversation:
        return Current(env_session, env_agent, None, stored)
    return Current(stored.id, env_agent or stored.agent, stored, None)


def current(git_dir: Path) -> tuple[str | None, str | None]:
    """(session id, agent name) for what is written now (``resolve()``)."""
    found = resolve(git_dir)
    return found.id, found.agent


class Who(NamedTuple):
    """Who writes, where, in which session: stamped on every entry and state commit."""

    by: str
    host: str
    session: str | None
    agent: str | None

    def stamp(self) -> dict[str, Any]:
        """The session fields of an entry (None values are left out when stored)."""
        return {"session": self.session, "agent": self.agent}

    def trailers(self) -> str:
        """Git trailers for a state commit message, so ``log`` says who did what where."""
        lines = [f"Host: {self.host}"]
        if self.session:
            lines.append(f"Session: {self.session}")
        if self.agent:
            lines.append(f"Agent: {self.agent}")
        return "\n".join(lines)


TRAILER_RE = re.compile(r"^(Host|Session|Agent): (.+)$")


def parse_trailers(message: str) -> dict[str, str]:
    """The Host/Session/Agent trailers of a state commit message (its last paragraph)."""
    last = message.rstrip("\n").rsplit("\n\n", 1)[-1]
    found = {}
    for line in last.splitlines():
        match = TRAILER_RE.match(line)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def who(repo: Repo, *, agent_session: str | None = None) -> Who:
    """Who writes now: the repository's identity, this machine, and the current session
    (``resolve()``)."""
    from git_continuity import repo as git

    found = resolve(git.worktree_git_dir(repo), agent_session=agent_session)
    return Who(git.identity(repo), hostname(), found.id, found.agent)
