"""The provenance line: the note each commit made while a stream is active gets (why it
exists), and the same line left ready for the post-commit hook's shell.

``record`` makes the line's record and ``line`` writes it, for guards.post_commit and for
every other note (commit_notes.line). Python also leaves the line of this work tree's next commit in
``<git dir>/continuity/provenance.line``, computed once with the one session rule (clone/session.py)
whenever what it says may change: a state write (store.remember_active), a session opened or
ended (session.save), a commit noted by Python (guards.post_commit). The hook's shell takes it
when the line's key is its own (stream, session, agent and host as the environment names them)
and the state is the one the line names, fills in the commit's time and writes the note with
git alone. Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity.constants import DEFAULT_STREAM, ENV_AGENT, ENV_HOST, ENV_SESSION, ENV_STREAM

FILE = "continuity/provenance.line"  # under the work tree's own git folder, as session.json
MARK = "\0"  # the commit's time in the line left ready; JSON writes it \u0000
AT = json.dumps(MARK)[1:-1]


def line(record: dict[str, Any]) -> str:
    """A note's record as one line: keys sorted, no spaces (a note is sorted, unique lines)."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record(
    stream: str,
    state: str,
    objective: str | None,
    threads: list[str],
    at: str,
    host: str,
    session: str | None,
    agent: str | None,
) -> dict[str, Any]:
    """The provenance record of a commit: its stream's state commit and objective digest, the
    threads its message names, when and where it was made, and the session it belongs to."""
    made: dict[str, Any] = {
        "kind": "provenance",
        "stream": stream,
        "state": state,
        "objective": objective,
        "threads": threads,
        "at": at,
        "host": host,
    }
    made.update((key, value) for key, value in (("session", session), ("agent", agent)) if value)
    return made


def _hostname() -> str:
    """The host name as the shell reads it (the hook compares it, it does not write it)."""
    try:
        with open("/proc/sys/kernel/hostname") as f:
            return f.read().strip()
    except OSError:
        return ""


# The agent conversation a command's environment names, as the hook's shell reads it (the first
# set of these; session.CONVERSATION_ENV): a commit an agent makes is its session's.
CONVERSATION_ENV = ("CLAUDE_CODE_SESSION_ID", "CODEX_SESSION_ID", "CODEX_THREAD_ID")


def key(stream: str, *, environment: bool) -> str:
    """What the shell compares before it takes the line: the stream, and the session, agent,
    host and agent conversation the environment names (``environment=False``: as a process
    that names none)."""
    names = (ENV_SESSION, ENV_AGENT, ENV_HOST)
    session, agent, host = (os.environ.get(name, "") if environment else "" for name in names)
    talk = next((os.environ[n] for n in CONVERSATION_ENV if os.environ.get(n)), "") if environment else ""
    return f"{stream}|{session}|{agent}|{host or _hostname()}|{talk}"


def keep(git_dir: Path, base: dict[str, Any], *, environment: bool, signer: str) -> None:
    """Leave the line of a commit naming no thread, made now on ``base``'s state, for the
    hook's shell. ``base`` is a record; its time, threads, session and agent are the line's
    own; ``signer`` says how the shell signs the notes commit (signing.shell_signer). Nothing
    is left where the stream is not the one the environment selects, or a value would not fit
    the shell's one line (then the old one goes); a file that cannot be written is left to
    Python."""
    path = git_dir / FILE
    stream = base["stream"]
    if (os.environ.get(ENV_STREAM) or DEFAULT_STREAM) != stream:
        return  # the line there may be the selected stream's, which this did not change
    made = line({**base, "threads": [], "at": MARK})
    before, _, after = made.partition(AT)
    try:
        if before.endswith('"at":"') and AT not in after and "\n" not in made and signer and "\n" not in signer:
            kept = f"{key(stream, environment=environment)}\n{base['state']}\n{before}\n{after}\n{signer}\n"
            atomic.keep(path, kept)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def resession(git_dir: Path, session: str | None, agent: str | None) -> None:
    """The session of this work tree changed (session.save): the line left ready for a process
    that names no session in its environment takes the new one; a line made for one that
    names its own is dropped (Python makes it again)."""
    path = git_dir / FILE
    try:
        kept, _state, before, after, signer = path.read_text().split("\n")[:5]
        base = json.loads(before + AT + after)
        made_for_none = kept == key(base["stream"], environment=False)
    except (OSError, ValueError, KeyError, TypeError):  # none there yet, or not one Python left
        made_for_none = False
    if not made_for_none:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
        return
    base.pop("session", None)
    base.pop("agent", None)
    named = {k: v for k, v in (("session", session), ("agent", agent)) if v}
    keep(git_dir, {**base, **named}, environment=False, signer=signer)
