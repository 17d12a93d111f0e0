"""Which ``cmd:`` commands this user approved to run in a repository, kept beside the trusted
keys in the user's config folder (``$XDG_CONFIG_HOME/git-continuity/approved/<digest>.json``,
one file per repository folder), and whether a person is at this process's terminal.

State comes from other clones and machines, so a command in it is data until approved here,
exactly as written. Approving it is a person's act: the store is outside ``.git`` (nothing
holding the repository can add to it) and the commands that change it run only at a
terminal. A store in ``.git/continuity/trust.json`` (where approvals were kept before) is no
longer read.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity.errors import UserError
from git_continuity.repo import Repo
from git_continuity.trust import signers

# A person's acts, asked and said in one place (trust/signers.py, below everything that signs).
A_PERSONS_ACT = signers.A_PERSONS_ACT
at_a_terminal = signers.at_a_terminal
persons_act = signers.persons_act
require_a_person = signers.require_a_person


def path(repo: Repo) -> Path:
    digest = hashlib.sha256(str(repo.common_dir).encode()).hexdigest()[:20]
    return signers.config_folder() / "approved" / f"{digest}.json"


def old_path(repo: Repo) -> Path:
    """Where approvals were kept before, inside ``.git``: never read (doctor names it)."""
    return repo.local_dir / "trust.json"


def approved(repo: Repo) -> dict[str, dict[str, Any]]:
    """Approved commands, each with when and by whom."""
    where = path(repo)
    try:
        info = where.stat()
        data = json.loads(where.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise UserError(f"{where}: unreadable store of approved commands ({error}); fix or remove it") from None
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or info.st_uid != os.getuid():
        raise UserError(
            f"{where}: other users can change it (mode {stat.S_IMODE(info.st_mode):04o}), and it says which commands"
            f" may run; nothing was read.\nFix: chmod 600 {where}"
        )
    if not isinstance(data, dict) or data.get("repository", str(repo.common_dir)) != str(repo.common_dir):
        return {}  # another folder's (a digest that collides): nothing approved here
    commands = data.get("commands", [])
    return {str(e["command"]): e for e in commands if isinstance(e, dict) and "command" in e}


def is_approved(repo: Repo, command: str) -> bool:
    return command in approved(repo)


def save(repo: Repo, entries: dict[str, dict[str, Any]]) -> None:
    target = path(repo)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    commands = sorted(entries.values(), key=lambda e: e["command"])
    atomic.write(target, json.dumps({"repository": str(repo.common_dir), "commands": commands}, indent=2) + "\n")
    target.chmod(0o600)


def approve_hint(command: str) -> str:
    """How a command is approved, as the reader may be told it: the command at a terminal,
    else only that it is a person's act (no text an agent reads hands it the command)."""
    return f"git continuity trust allow {_quote(command)}" if at_a_terminal() else A_PERSONS_ACT


def _quote(command: str) -> str:
    import shlex

    return shlex.quote(command)
