"""Whether the hooks of ours in the agents' settings files would run: each hook's command is
run as the agent runs it, on a no-op event (``GIT_CONTINUITY_HOOK_PROBE``), and what it
answered is the report: the launcher's "ready" line, or the message the agent would get
instead. What ``agent status`` shows and ``doctor`` reports; nothing here writes."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_continuity.agents import codex_trust as agent_trust
from git_continuity.agents import table as agents
from git_continuity.agents.table import TARGETS, Target

PROBE_TIMEOUT = 30  # seconds: a hook that starts answers the probe in well under one


@dataclass(frozen=True)
class HookCheck:
    """One hook of ours found in an agent's settings file, and whether it would run."""

    agent: str
    event: str
    action: str
    settings: str  # the file, relative to the top of the work tree
    position: tuple[int, int]  # the matcher group and the handler in the event's list
    program: str | None  # the git-continuity-hook it runs; None: none starts
    runs: bool
    why: str  # one line saying so: what the launcher answered
    recorded: str | None = None  # the git-continuity-hook recorded at install (None: PATH alone)
    trust: str | None = None  # Codex: trusted, untrusted (never), modified (since), unknown (no tomllib); else None
    form: str = "current"  # agents.form: current, older (install updates it), changed (by hand)


def recorded_program(common_dir: Path) -> str | None:
    """The git-continuity-hook ``agent install`` recorded for this clone (the launcher's first choice)."""
    try:
        return (common_dir / "continuity" / agents.HOOK_PROGRAM).read_text().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


_READY = re.compile(r"^ready: git-continuity-hook \S+ at (.+?) \(Python")


def _started(target: Target, command: str, top: Path) -> subprocess.Popen[str]:
    """The hook's command, run as the agent runs it (a shell in the project, the agent's names
    for the project set; Gemini CLI also puts the quoted folder in the command's text)."""
    if target.agent == "gemini":
        command = command.replace("$GEMINI_PROJECT_DIR", shlex.quote(str(top)))
    env = {
        **os.environ,
        "CLAUDE_PROJECT_DIR": str(top),
        "GEMINI_PROJECT_DIR": str(top),
        "GIT_CONTINUITY_HOOK_PROBE": "1",
    }
    return subprocess.Popen(
        ["sh", "-c", command],
        cwd=top,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _answer(child: subprocess.Popen[str]) -> tuple[bool, str | None, str]:
    """Whether the probed hook started, the git-continuity-hook it ran, and what it answered."""
    try:
        out, err = child.communicate(timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return False, None, f"did not answer within {PROBE_TIMEOUT} s"
    said = (out.strip() or err.strip()).splitlines()
    line = said[-1] if said else f"answered nothing (exit {child.returncode})"
    ready = _READY.match(line)
    if child.returncode == 0 and ready:
        return True, ready.group(1), f"answered {line}"
    if child.returncode == 127 and not out.strip():  # the launcher itself is not there
        return False, None, f"cannot start: {line}"
    return False, None, line.removeprefix("git-continuity: ")


def _older(command: str) -> tuple[str | None, str | None, str]:
    """An earlier version's command: the program it would run, found as it finds it."""
    found = re.match(r"^h=('(?:[^']|'\\'')*'|\S+);", command)
    recorded = shlex.split(found.group(1))[0] if found and not found.group(1).startswith("$(") else None
    if recorded and os.access(recorded, os.X_OK):
        return recorded, recorded, f"runs {recorded}"
    on_path = shutil.which("git-continuity-hook")
    if on_path:
        return on_path, recorded, f"runs {on_path} from PATH"
    return None, recorded, "git-continuity-hook is not on PATH: the hook cannot run"


def installed_hooks(
    top: Path, targets: Sequence[Target] | None = None, common_dir: Path | None = None
) -> list[HookCheck]:
    """Every hook of ours in the agents' settings files under ``top``, and whether it runs
    (asked of each, all at once), for Codex also whether it is trusted. A settings file that
    is missing or not JSON holds none."""
    recorded = recorded_program(common_dir) if common_dir is not None else None
    found: list[tuple[dict[str, Any], subprocess.Popen[str] | None]] = []
    for target in targets or TARGETS.values():
        try:
            value = json.loads((top / target.settings).read_bytes().decode())
        except (OSError, ValueError):
            continue
        hooks = value.get("hooks") if isinstance(value, dict) else None
        trust = agent_trust.codex_trust(top) if target.agent == "codex" else None
        unknown = target.agent == "codex" and trust is None
        for event, groups in hooks.items() if isinstance(hooks, dict) else ():
            for g, grp in enumerate(groups if isinstance(groups, list) else ()):
                handlers = grp.get("hooks") if isinstance(grp, dict) else None
                for e, handler in enumerate(handlers if isinstance(handlers, list) else ()):
                    if not agents.is_ours(target, handler):
                        continue
                    text = str(handler["command"])
                    action = text.rsplit(" ", 1)[-1]
                    hook = next((h for h in target.hooks if h.action == action), None)
                    shape = agents.form(target, hook, text) if hook is not None else "changed"
                    state = "unknown" if unknown else None
                    if trust is not None:
                        key = f"{top / target.settings}:{agent_trust.snake(event)}:{g}:{e}"
                        current = agent_trust.codex_hash(event, grp.get("matcher"), handler)
                        state = agent_trust.state(trust.get(key), current)
                    fields = {
                        "agent": target.agent,
                        "event": event,
                        "action": action,
                        "settings": target.settings,
                        "position": (g, e),
                        "recorded": recorded,
                        "trust": state,
                        "form": shape,
                    }
                    child = None if shape == "older" else _started(target, text, top)
                    found.append((fields, child))
    checks = []
    for fields, child in found:
        if child is None:
            program, _, why = _older(_command(top, fields))
            why += f"; an earlier version's command: git continuity agent install {fields['agent']} updates it"
            checks.append(HookCheck(program=program, runs=program is not None, why=why, **fields))
            continue
        runs, program, why = _answer(child)
        if fields["form"] == "changed":
            why += "; this entry's command was changed by hand (agent install writes: "
            why += f"{_expected(fields)})"
        checks.append(HookCheck(program=program, runs=runs, why=why, **fields))
    return checks


def _command(top: Path, fields: dict[str, Any]) -> str:
    value = json.loads((top / fields["settings"]).read_bytes().decode())
    event, (g, e) = fields["event"], fields["position"]
    return str(value["hooks"][event][g]["hooks"][e]["command"])


def _expected(fields: dict[str, Any]) -> str:
    target = TARGETS[fields["agent"]]
    hook = next((h for h in target.hooks if h.action == fields["action"]), None)
    return agents.installed_command(target, hook) if hook is not None else "no such action"
