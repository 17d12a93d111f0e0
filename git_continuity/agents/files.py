"""What ``agent install`` writes into the work tree for a coding agent (its settings file,
its instructions file, the launcher), the record of what it made under
``.git/continuity/agents/<agent>.json``, and taking exactly that out again: what ``agent
uninstall`` and ``git continuity uninstall`` do."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity.agents import settings as agent_settings
from git_continuity.agents import table as agents
from git_continuity.agents.jsonedit import JSONEditError
from git_continuity.errors import UserError
from git_continuity.repo import Repo


def top(repo: Repo) -> Path:
    if repo.work_dir is None:
        raise UserError("a bare repository has no work tree for an agent to run in; run this in a clone")
    return repo.work_dir


def record_path(repo: Repo, agent: str) -> Path:
    return repo.local_dir / "agents" / f"{agent}.json"


def read_record(repo: Repo, agent: str) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(record_path(repo, agent).read_text())
        return data
    except (OSError, ValueError):
        return None


def write(path: Path, text: str) -> None:
    atomic.write(path, text)  # as UTF-8 bytes: line endings stay as they were (\r\n too)


def read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; nothing was written") from None


def remove(repo: Repo, agent: str) -> list[str]:
    """Take out what ``agent install`` wrote for this agent (exactly what its record says it
    made); a line for each thing done."""
    from git_continuity.agents import mcp_install
    from git_continuity.agents import shell as agent_shell

    work = top(repo)
    record = read_record(repo, agent)
    # The MCP server first, when install --mcp registered it: then a folder the hooks' install
    # created is empty again when they go, and is removed with them.
    said = mcp_install.uninstall(repo, work, agent)
    said += _settings(work, agents.TARGETS[agent], record)
    for folder in record.get("dirs", []) if record else []:
        with contextlib.suppress(OSError):  # removed only when empty: nothing of the user's goes
            (work / folder).rmdir()
    said += _instructions(work, agents.TARGETS[agent], record)
    if record is not None:
        record_path(repo, agent).unlink(missing_ok=True)
    agent_shell.forget(repo.common_dir, agent)
    if not any(read_record(repo, name) for name in agents.TARGETS):
        (repo.local_dir / agents.HOOK_PROGRAM).unlink(missing_ok=True)  # no hooks of this clone read it now
    return said


def _settings(work: Path, target: agents.Target, record: dict[str, Any] | None) -> list[str]:
    """The agent's settings file without the hooks install added, and the launcher."""
    settings = work / target.settings
    old = read(settings)
    new: str | None = old
    removed = 0
    if old is not None:
        try:
            new, removed = agent_settings.uninstall(
                target, old, target.settings, record.get("created") if record else None
            )
        except JSONEditError as error:
            raise UserError(f"{error}; nothing was written") from None
    said = []
    if old is None or new == old:
        said.append(f"{target.settings}: no git-continuity hooks to remove")
    elif new is None:
        settings.unlink()
        said.append(f"{target.settings}: removed (install had created it)")
    else:
        write(settings, new)
        said.append(f"{target.settings}: removed {removed} git-continuity hook{'s' if removed != 1 else ''}")
    launcher = work / agents.launcher(target)
    if (read(launcher) or "").startswith(agents.launcher_text().split("\n", 1)[0]):
        launcher.unlink()
        said.append(f"{agents.launcher(target)}: removed")
    return said


def _instructions(work: Path, target: agents.Target, record: dict[str, Any] | None) -> list[str]:
    """The agent's instructions file without the continuity routine (gone, if it held only that)."""
    instructions = work / target.instructions if target.instructions else None
    old_md = read(instructions) if instructions else None
    if instructions is None or old_md is None:
        return []
    was = (record or {}).get("instructions") or {}
    md = agents.instructions_uninstall(old_md, final_newline=was.get("final_newline", True))
    if md is None and was.get("existed"):
        md = ""  # it was there, empty
    if md is None:
        instructions.unlink()
        return [f"{target.instructions}: removed (it held only the continuity routine)"]
    if md != old_md:
        write(instructions, md)
        return [f"{target.instructions}: removed the continuity routine"]
    return []
