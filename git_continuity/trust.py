"""Which ``cmd:`` commands this machine's user approved to run, kept in ``.git/continuity/``.

State comes from other clones and machines, so a command in it is data until approved here,
exactly as written. The store is local and never synced.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity.errors import UserError
from git_continuity.repo import Repo


def path(repo: Repo) -> Path:
    return repo.local_dir / "trust.json"


def approved(repo: Repo) -> dict[str, dict[str, Any]]:
    """Approved commands, each with when and by whom."""
    try:
        data = json.loads(path(repo).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise UserError(f"{path(repo)}: unreadable trust store ({error}); fix or remove it") from None
    return {str(e["command"]): e for e in data.get("commands", []) if isinstance(e, dict) and "command" in e}


def is_approved(repo: Repo, command: str) -> bool:
    return command in approved(repo)


def save(repo: Repo, entries: dict[str, dict[str, Any]]) -> None:
    target = path(repo)
    target.parent.mkdir(parents=True, exist_ok=True)
    commands = sorted(entries.values(), key=lambda e: e["command"])
    atomic.write(target, json.dumps({"commands": commands}, indent=2) + "\n")


def approve_hint(command: str) -> str:
    return f"git continuity trust allow {_quote(command)}"


def _quote(command: str) -> str:
    import shlex

    return shlex.quote(command)
