"""Whether the commands the model is told to run (``git continuity …`` in the brief, the
AGENTS.md block and the gate's reason) run in the shell the agent gives the model.

Codex runs the model's commands in a login shell (``bash -lc``), where Debian's
``/etc/profile`` resets PATH: a git-continuity installed in a virtual environment is not found
there although the hooks (which the launcher finds by path) run. ``agent install`` asks that
shell, and where it does not find the tool, records the absolute command in
``.git/continuity/agents/shell-<agent>.json`` (this machine's, never committed); the brief then
names it. ``agent status`` says which."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

# How each agent runs the model's shell commands: Codex in a login shell; Claude Code and
# Gemini CLI in the user's shell, with the agent's own environment.
LOGIN = {"codex": True, "claude": False, "gemini": False}
TIMEOUT = 10  # seconds: a login shell that reads a slow profile


def shell(agent: str) -> list[str]:
    program = os.environ.get("SHELL") or "/bin/bash"
    return [program, "-lc" if LOGIN[agent] else "-c"]


def ask(agent: str, top: Path) -> dict[str, Any]:
    """What the agent's shell answers to ``command -v git-continuity``: ``found`` (the path),
    ``missing``, or ``no-shell`` (it could not be started: the error)."""
    argv = shell(agent)
    said = " ".join(argv) + " 'command -v git-continuity'"
    try:
        done = subprocess.run(
            [*argv, "command -v git-continuity"],
            cwd=top,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return {"shell": said, "state": "no-shell", "error": str(error)}
    found = done.stdout.strip().splitlines()
    if done.returncode == 0 and found:
        return {"shell": said, "state": "found", "path": found[-1]}
    return {"shell": said, "state": "missing"}


def _path(common_dir: Path, agent: str) -> Path:
    return common_dir / "continuity" / "agents" / f"shell-{agent}.json"


def record(common_dir: Path, agent: str, answer: dict[str, Any], command: str | None) -> None:
    """Keep what the shell answered and, when it does not find the tool, the command to run."""
    from git_continuity import atomic

    kept = answer | ({"command": command} if command and answer["state"] != "found" else {})
    _path(common_dir, agent).parent.mkdir(parents=True, exist_ok=True)
    atomic.write(_path(common_dir, agent), json.dumps(kept, indent=2) + "\n")


def forget(common_dir: Path, agent: str) -> None:
    _path(common_dir, agent).unlink(missing_ok=True)


def recorded(common_dir: Path, agent: str) -> dict[str, Any] | None:
    try:
        value = json.loads(_path(common_dir, agent).read_text())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def note(common_dir: Path, agent: str) -> str | None:
    """The brief's line for a shell that does not find the tool (None: it does, or unknown)."""
    kept = recorded(common_dir, agent)
    if kept is None or kept.get("state") == "found" or not kept.get("command"):
        return None
    return (
        f"In the shell you run commands in, `git continuity` is not found: wherever this brief, AGENTS.md or "
        f"git-continuity's messages say `git continuity …`, run `{kept['command']} …` instead."
    )


def said(answer: dict[str, Any]) -> str:
    """One line for install and status."""
    if answer["state"] == "found":
        return f"the model's shell ({answer['shell']}) finds {answer['path']}"
    if answer["state"] == "no-shell":
        return f"the model's shell ({answer['shell']}) cannot be started: {answer['error']}"
    command = answer.get("command")
    told = f"the brief tells the model to run {command}" if command else "nothing tells the model another command"
    return f"the model's shell ({answer['shell']}) does not find git-continuity: {told}"
