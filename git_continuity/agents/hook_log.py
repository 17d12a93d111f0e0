"""``.git/continuity/agent-hooks.log``: one line each time an agent's hook ran, so that
``agent status`` can say when each last ran and what it answered. Local, never synced.

A line is ``<UTC time> <agent> <action> <outcome>`` (outcome: ``context``, ``block``,
``message``, ``notice``, ``plain``, ``nothing``, ``error``), appended in one write. The log keeps
its latest lines only: past ``KEEP`` bytes it is cut to its second half.

Standard library only, and no repository door: the loop notice writes a line after every
tool call an agent makes, and finds the repository's git directory itself. Paths are strings
here (``os.path``): pathlib alone costs that path a few milliseconds.
"""

from __future__ import annotations

import os
import time

from git_continuity import atomic

NAME = "agent-hooks.log"
KEEP = 64 * 1024


def common_dir(start: str) -> str | None:
    """The common git directory of the repository ``start`` lies in, found upward as git finds
    it: a ``.git`` folder, or a ``.git`` file naming a linked worktree's folder, whose
    ``commondir`` names the common one. None outside a repository."""
    folder = os.path.abspath(start)
    while True:
        dot = os.path.join(folder, ".git")
        if os.path.isdir(dot):
            return dot
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as named:
                    text = named.read()
            except (OSError, UnicodeDecodeError):
                return None
            if not text.startswith("gitdir:"):
                return None
            own = os.path.join(folder, text[len("gitdir:") :].strip())
            try:
                with open(os.path.join(own, "commondir"), encoding="utf-8") as common:
                    return os.path.normpath(os.path.join(own, common.read().strip()))
            except (OSError, UnicodeDecodeError):
                return own
        up = os.path.dirname(folder)
        if up == folder:
            return None
        folder = up


def path(git_dir: str) -> str:
    return os.path.join(git_dir, "continuity", NAME)


def record(git_dir: str, agent: str, action: str, outcome: str) -> None:
    """Append one line; a log that cannot be written is left as it is (the hook goes on)."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {agent} {action} {outcome}\n"
    log = path(git_dir)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        try:
            fd = os.open(log, flags, 0o666)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(log), exist_ok=True)
            fd = os.open(log, flags, 0o666)
        try:
            os.write(fd, line.encode())
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > KEEP:
            with open(log, "rb") as whole:
                data = whole.read()
            rest = data[len(data) // 2 :]
            atomic.write(log, rest[rest.find(b"\n") + 1 :])
    except OSError:
        pass


def last_runs(git_dir: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(agent, action) → (time, outcome) of the latest line for each."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    try:
        with open(path(git_dir), encoding="utf-8", errors="replace") as log:
            for line in log.read().splitlines():
                parts = line.split(" ")
                if len(parts) == 4:
                    found[(parts[1], parts[2])] = (parts[0], parts[3])
    except OSError:
        pass
    return found
