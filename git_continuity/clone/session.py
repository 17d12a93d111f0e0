"""Sessions: one stretch of work by one agent (or person), from ``orient`` to ``handoff``.

A session lives in ``<git dir>/continuity/session.json`` of the work tree it started in (the
git dir is the work tree's own: ``.git/`` for the main checkout, ``.git/worktrees/<name>/`` for
a linked worktree), so two agents in two linked worktrees of one clone have two sessions.
It is local and never synced: what travels is the session id on every entry written during
the session, the trailers on each state commit, and the handoff.

A session is the agent's session, not the work tree's: an agent's session started by its hook
is also found by the agent's own id for its conversation, from anywhere in the clone
(``<common dir>/continuity/sessions/<digest>.json`` says which work tree holds it). The
commands an agent runs carry that id in their environment (Claude Code's
``CLAUDE_CODE_SESSION_ID``, Codex's ``CODEX_SESSION_ID``), so ``git -C <other worktree>
continuity …`` is credited to the session that ran it, never to a session the work tree there
holds. The session also keeps which process is its agent (``agent_pid``, with its start time):
a session whose agent is gone and that ended without a handoff is reported to the next session
that starts anywhere in the clone (``abandoned``).

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

import contextlib
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from git_continuity import atomic
from git_continuity.clone import provenance
from git_continuity.errors import UserError

if TYPE_CHECKING:  # the repository door imports pygit2; only who() needs it, lazily
    from git_continuity.repo import Repo

from git_continuity.constants import AGENT_RE, ENV_AGENT, ENV_CALLER, ENV_SESSION
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
    worktree: str | None = None  # the work tree's tree when it started: the Stop gate holds a session that changed it
    agent_pid: int | None = None  # the agent's process, when a hook started it (agent_process)
    agent_start: int | None = None  # that process's start time (clock ticks after boot): a pid reused is not it


def path(git_dir: Path) -> Path:
    return git_dir / "continuity" / "session.json"


def load(git_dir: Path) -> Session | None:
    """The session file's session, ended or not; None when there is none or it is unreadable
    (a broken local file must never stop a commit or a command: it is only re-created). Keys it
    does not know, such as the ``stop_blocks`` older files carry, are left out."""
    try:
        data = json.loads(path(git_dir).read_text())
        return Session(**{k: v for k, v in data.items() if k in Session._fields})
    except (OSError, ValueError, TypeError):
        return None


def save(git_dir: Path, session: Session) -> None:
    target = path(git_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    # One line (json's own encoder: an indented one is Python's, 3 ms for a session's thousand refs).
    atomic.keep(target, json.dumps(session._asdict(), sort_keys=True) + "\n")
    if session.agent_session and session.ended_at is None:  # found from anywhere in the clone
        pointer = _pointer(common_dir(git_dir), session.agent_session)
        pointer.parent.mkdir(parents=True, exist_ok=True)
        atomic.keep(pointer, json.dumps({"git_dir": str(git_dir), "id": session.id}) + "\n")
    found = resolve(git_dir, environment=False)
    provenance.resession(git_dir, found.id, found.agent)  # the next commit's note, for the hook


def common_dir(git_dir: Path) -> Path:
    """The git folder every work tree of the clone shares (a linked worktree's names it)."""
    try:
        return (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
    except OSError:
        return git_dir


def _pointer(common: Path, conversation: str) -> Path:
    import hashlib

    return common / "continuity" / "sessions" / (hashlib.sha256(conversation.encode()).hexdigest()[:24] + ".json")


def held_by(git_dir: Path, conversation: str) -> Path | None:
    """The git dir of the work tree whose open session is this agent conversation's, anywhere
    in the clone (None: no session of it is open here)."""
    try:
        where = Path(json.loads(_pointer(common_dir(git_dir), conversation).read_text())["git_dir"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    found = open_session(where)
    return where if found is not None and found.agent_session == conversation else None


# The environment an agent gives the commands it runs, naming its conversation (measured:
# Claude Code 2.1.197, Codex 0.171.0; Gemini CLI 0.61.0 names none).
CONVERSATION_ENV = provenance.CONVERSATION_ENV


def conversation_from_env() -> str | None:
    """The agent conversation the environment names (a command the agent runs), or None."""
    for name in CONVERSATION_ENV:
        value = os.environ.get(name, "").strip()
        if value and SESSION_RE.match(value):
            return value
    return None


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


# What stands between an agent and the hook or command it runs: shells, git, wrappers, the
# tool's own launcher. The first ancestor of a hook that is none of these is its agent.
_BETWEEN = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "env", "timeout", "nice", "nohup", "git"})


def _proc(pid: int) -> tuple[str, int, int] | None:
    """(command name, parent pid, start time in clock ticks) of a process, from /proc (Linux);
    None where it is gone or cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            raw = file.read().decode(errors="replace")
    except OSError:
        return None
    name, _, rest = raw.partition(" (")[2].rpartition(") ")
    fields = rest.split()
    try:
        return name, int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def caller_pid() -> int:
    """The process that asked for this command: the helper's client when a helper runs it
    (the pid the kernel gave the helper for its peer), else this process."""
    try:
        return int(os.environ.get(ENV_CALLER, "")) or os.getpid()
    except ValueError:
        return os.getpid()


def agent_process() -> tuple[int, int] | None:
    """(pid, start time) of the agent that runs this hook: the first ancestor of its caller that
    is not a shell, git, a wrapper or a Python (the hook's own launcher); None where /proc
    cannot tell (another system) or only init is above."""
    found = _proc(caller_pid())
    for _ in range(16):
        if found is None or found[1] <= 1:
            return None
        pid = found[1]
        found = _proc(pid)
        if found is not None and found[0] not in _BETWEEN and not found[0].startswith(("python", "git-continuity")):
            return pid, found[2]
    return None


def alive(session: Session) -> bool | None:
    """Whether the session's agent still runs (None: not known: no hook recorded it)."""
    if session.agent_pid is None:
        return None
    found = _proc(session.agent_pid)
    return found is not None and (session.agent_start is None or found[2] == session.agent_start)


def every_open(git_dir: Path) -> list[tuple[Path, Session]]:
    """Every open session in the clone: each work tree's (the main checkout's first)."""
    common = common_dir(git_dir)
    folders = [common]
    with contextlib.suppress(OSError):
        folders += sorted(p for p in (common / "worktrees").iterdir() if p.is_dir())
    return [(folder, found) for folder in folders if (found := open_session(folder)) is not None]


def abandoned(git_dir: Path, current: str) -> list[tuple[Path, Session]]:
    """Open sessions of the clone, other than ``current``, whose agent is gone: they ended
    without a handoff, wherever they were started."""
    return [(where, s) for where, s in every_open(git_dir) if s.id != current and alive(s) is False]


class Current(NamedTuple):
    """The session what is written now belongs to."""

    id: str | None  # None: no session is open here and none is named
    agent: str | None
    stored: Session | None  # the current session as stored, when one is open
    ended: Session | None  # the work tree's open session, when another one is current
    where: Path | None = None  # the git dir whose session file holds ``stored``


def resolve(git_dir: Path, *, agent_session: str | None = None, environment: bool = True) -> Current:
    """The one rule for which session is current (the module's docstring): the environment
    first; then the session of the agent conversation named (``agent_session`` from a hook,
    else the conversation the environment names), wherever in the clone it was started; then
    the work tree's open session, unless a conversation is named that it does not belong to.
    ``environment=False``: as for a process whose environment names no session or agent."""
    env_session, env_agent = from_env() if environment else (None, None)
    conversation = agent_session or (conversation_from_env() if environment else None)
    if env_session is None and conversation is not None:
        held = held_by(git_dir, conversation)
        if held is not None and held != git_dir and (theirs := open_session(held)) is not None:
            return Current(theirs.id, env_agent or theirs.agent, theirs, None, held)
    stored = open_session(git_dir)
    if stored is None:
        return Current(env_session, env_agent, None, None)
    other_named = env_session is not None and env_session != stored.id
    # A command that names no conversation (a person's, or an agent that names none) belongs
    # to the open session; one that names another conversation does not.
    other_conversation = conversation is not None and stored.agent_session not in (None, conversation)
    other_conversation |= agent_session is not None and stored.agent_session != agent_session
    if other_named or other_conversation:
        return Current(env_session, env_agent, None, stored)
    return Current(stored.id, env_agent or stored.agent, stored, None, git_dir)


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
