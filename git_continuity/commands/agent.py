"""``agent install|uninstall claude|codex``: the agent's project configuration, merged in and
taken out again. What install created (the file, the ``hooks`` object, an event list) is
remembered in ``.git/continuity/agents/<agent>.json`` so uninstall removes exactly that."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from git_continuity.agents import codex_trust as agent_trust
from git_continuity.agents import files as agent_files
from git_continuity.agents import settings as agent_settings
from git_continuity.agents import table as agents
from git_continuity.agents.jsonedit import JSONEditError
from git_continuity.errors import UserError
from git_continuity.repo import Repo

_top, _record_path, _read_record, _write, _read = (
    agent_files.top,
    agent_files.record_path,
    agent_files.read_record,
    agent_files.write,
    agent_files.read,
)


def install(repo: Repo, *, agent: str, mcp: bool = False) -> int:
    target = agents.TARGETS[agent]
    top = _top(repo)
    settings = top / target.settings
    old = _read(settings)
    try:
        merged = agent_settings.install(target, old, target.settings)
    except JSONEditError as error:
        raise UserError(f"{error}; nothing was written") from None
    if mcp:
        from git_continuity.agents import mcp_install

        mcp_install.check_sdk()  # before anything is written
        mcp_install.check(top, agent)
    record = _read_record(repo, agent) or {}
    created = [list(c) for c in record.get("created", [])] if old is not None else [["file"]]
    created += [c for c in merged.created if c not in created]
    # Every check passed before anything is written: a bad settings file leaves everything as it was.
    new_instructions = _instructions(top, target, record)
    made_dir = not settings.parent.exists()
    if merged.text != old:
        settings.parent.mkdir(parents=True, exist_ok=True)
        _write(settings, merged.text)
    launcher = top / agents.launcher(target)
    made_hooks_dir = not launcher.parent.exists()
    was = _put_launcher(launcher)
    _say_merged(target, merged, was)
    if target.instructions and new_instructions is not None:
        _put_instructions(top, target.instructions, *new_instructions)
    made = {str(settings.parent.relative_to(top))} if made_dir else set()
    made |= {str(launcher.parent.relative_to(top))} if made_hooks_dir else set()
    _remember(repo, target, record, created, made, launcher_ours=was is None)
    program = _program()
    hook_program = repo.local_dir / agents.HOOK_PROGRAM
    if program is not None:
        _write(hook_program, program + "\n")
    if mcp:
        from git_continuity.agents import mcp_install

        mcp_install.install(repo, top, agent)
    print(_after(agent))
    _report(repo, target, program)
    _shell(repo, agent, program)
    return 0


def _instructions(top: Path, target: agents.Target, record: dict[str, Any]) -> tuple[str, bool] | None:
    """The instructions file with the routine in it and whether that changes it (None: the
    agent reads none); how the file was is kept in ``record``, so that uninstall gives back
    the same bytes."""
    if not target.instructions:
        return None
    old_md = _read(top / target.instructions)
    if "instructions" not in record or old_md is None or agents.BEGIN not in old_md:
        record["instructions"] = {
            "existed": old_md is not None,
            "final_newline": old_md is None or old_md == "" or old_md.endswith("\n"),
        }
    return agents.instructions_install(old_md)


def _put_launcher(launcher: Path) -> str | None:
    """The launcher the hooks run, written where it is not the shipped one; what was there."""
    was = _read(launcher)
    if was != agents.launcher_text():
        launcher.parent.mkdir(parents=True, exist_ok=True)
        _write(launcher, agents.launcher_text())
        launcher.chmod(0o755)
    return was


def _say_merged(target: agents.Target, merged: agent_settings.Merged, was: str | None) -> None:
    """What install did to each event of the settings file, and to the launcher."""
    for event in merged.added:
        print(f"{target.settings}: {event} runs {_command(target, event)}")
    for event in merged.updated:
        print(f"{target.settings}: {event} updated to run the launcher {agents.launcher(target)}")
    for event in merged.present:
        print(f"{target.settings}: {event} already runs git-continuity (left as it is)")
    for event in merged.changed:
        hook = next(h for h in target.hooks if h.event == event)
        print(
            f"{target.settings}: {event}: the git-continuity entry was changed by hand (left as it is); "
            f"install writes: {agents.installed_command(target, hook)}"
        )
    said = "the launcher the hooks run; commit it with the settings"
    updated = " (updated)" if was is not None and was != agents.launcher_text() else ""
    print(f"{agents.launcher(target)}: {said}{updated}")


def _put_instructions(top: Path, name: str, text: str, changed: bool) -> None:
    if changed:
        _write(top / name, text)
        print(f"{name}: the continuity routine, between git-continuity markers")
    else:
        print(f"{name}: the continuity routine is there already")


def _remember(
    repo: Repo,
    target: agents.Target,
    record: dict[str, Any],
    created: list[list[str]],
    made: set[str],
    *,
    launcher_ours: bool,
) -> None:
    """What install created, for uninstall to take out exactly that: the settings' parts, the
    folders it made (deepest first), whether the launcher is its own, how the instructions were."""
    path = _record_path(repo, target.agent)
    path.parent.mkdir(parents=True, exist_ok=True)
    dirs = sorted(set(record.get("dirs", [])) | made, key=lambda d: (-d.count("/"), d))
    kept = {"created": created, "dirs": dirs, "launcher": record.get("launcher", launcher_ours)} | (
        {"instructions": record["instructions"]} if target.instructions else {}
    )
    _write(path, json.dumps(kept, indent=2) + "\n")


def _shell(repo: Repo, agent: str, program: str | None) -> None:
    """Ask the shell the agent gives the model whether it finds git-continuity; where it does
    not, the brief names the absolute command (agents/shell.py)."""
    from git_continuity.agents import shell as agent_shell

    answer = agent_shell.ask(agent, _top(repo))
    beside = Path(program).parent / "git-continuity" if program else None
    command = str(beside) if beside is not None and beside.is_file() else None
    agent_shell.record(repo.common_dir, agent, answer, command)
    kept = agent_shell.recorded(repo.common_dir, agent) or answer
    print(("" if answer["state"] == "found" else "warning: ") + agent_shell.said(kept))


def _report(repo: Repo, target: agents.Target, program: str | None) -> None:
    """What the hooks run on this machine, asked of one of them as the agent would."""
    from git_continuity.agents import probe as agent_probe

    where = f".git/continuity/{agents.HOOK_PROGRAM}"
    runs = f"{program} (recorded in {where}), else " if program else ""
    runs += "git-continuity-hook from PATH"
    print(f"On this machine the hooks run {runs}; remove them with: git continuity agent uninstall {target.agent}")
    checks = agent_probe.installed_hooks(_top(repo), [target], repo.common_dir)
    broken = next((c for c in checks if not c.runs), None)
    if broken is not None:
        print(f"warning: the {broken.event} hook {broken.why}")


def _program() -> str | None:
    """The git-continuity-hook the hooks run: the one beside this Python (the copy running
    install), else the one on PATH."""
    beside = Path(sys.executable).parent / "git-continuity-hook"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which("git-continuity-hook")
    return str(Path(found).absolute()) if found else None


def _command(target: agents.Target, event: str) -> str:
    hook = next(h for h in target.hooks if h.event == event)
    return agents.command(target, hook) + (f" (matcher {hook.matcher})" if hook.matcher else "")


def _after(agent: str) -> str:
    if agent == "gemini":
        return (
            "Gemini CLI now runs orient at session start, the closure gate after each turn (AfterAgent), handoff at "
            "session end, and a notice when a failing command is run a third time with the same result.\n"
            "Gemini CLI runs a project's hooks only in a trusted folder (it asks when it first opens one)."
        )
    if agent == "claude":
        return (
            "Claude Code now runs orient at session start (also after /clear, a resume or a compaction), handoff "
            "before a compaction and at session end, the closure gate when it would stop, and a notice when a "
            "failing command is run a third time with the same result."
        )
    target = agents.CODEX
    width = max(len(h.event) for h in target.hooks) + 2
    listed = "".join(f"  {h.event:<{width}}{agents.command(target, h)}\n" for h in target.hooks)
    return (
        "Codex runs a project's hooks only once the project is trusted (Codex asks when it first opens the folder)\n"
        f"and each hook is trusted: open /hooks in Codex and trust these {len(target.hooks)}, "
        f"listed under {target.settings}:\n"
        f"{listed}"
        "Codex keeps each trust as a hash of the hook's definition in ~/.codex/config.toml ([hooks.state]): "
        "a changed hook needs trusting again."
    )


def uninstall(repo: Repo, *, agent: str) -> int:
    for line in agent_files.remove(repo, agent):
        print(line)
    return 0


# -- status -------------------------------------------------------------------------------------

# Each agent's program and how to install it (what status names when this PATH lacks it).
BINARIES = {
    "claude": ("claude", "npm install -g @anthropic-ai/claude-code"),
    "codex": ("codex", "npm install -g @openai/codex"),
    "gemini": ("gemini", "npm install -g @google/gemini-cli"),
}

TRUST_SAID = {
    "trusted": "trusted",
    "untrusted": "not trusted yet (open /hooks in Codex and trust it)",
    "modified": "changed since it was trusted (open /hooks in Codex and trust it again)",
    "unknown": "trust unknown (reading Codex's config.toml needs Python 3.11)",
}


def status_document(repo: Repo) -> dict[str, Any]:
    """Which agents have our hooks here, whether each would run, and when each last ran."""
    from git_continuity.agents import hook_log
    from git_continuity.agents import probe as agent_probe
    from git_continuity.agents import shell as agent_shell

    top = _top(repo)
    checks = agent_probe.installed_hooks(top, common_dir=repo.common_dir)
    last = hook_log.last_runs(str(repo.common_dir))
    listed = []
    for name, target in agents.TARGETS.items():
        mine = [c for c in checks if c.agent == name]
        hooks = []
        for c in mine:
            at, outcome = last.get((name, c.action), (None, None))
            hooks.append(
                {
                    "event": c.event,
                    "action": c.action,
                    "runs": c.runs,
                    "program": c.program,
                    "why": c.why,
                    "trust": c.trust,
                    "last_ran": at,
                    "last_answer": outcome,
                }
            )
        entry: dict[str, Any] = {"agent": name, "settings": target.settings, "installed": bool(mine), "hooks": hooks}
        if mine:
            entry["shell"] = agent_shell.recorded(repo.common_dir, name)
            entry["binary"] = shutil.which(BINARIES[name][0])
        if name == "codex":
            entry["project_trusted"] = agent_trust.codex_project_trusted(top) if mine else None
            entry["config"] = str(agent_trust.codex_home() / "config.toml")
        listed.append(entry)
    return {"agents": listed, "log": str(hook_log.path(str(repo.common_dir)))}


ANSWERED = {
    "context": "put context in",
    "block": "held the stop",
    "message": "showed a message",
    "plain": "gave the summary instructions",
    "notice": "gave the loop notice",
    "nothing": "had nothing to add",
    "error": "failed",
}


def _when(hook: dict[str, Any]) -> str:
    if not hook["last_ran"]:
        return "never ran here"
    at = hook["last_ran"].replace("T", " ").rstrip("Z")
    return f"last ran {at} UTC and {ANSWERED.get(hook['last_answer'], hook['last_answer'])}"


def _unreadable(settings: Path) -> str | None:
    """Why an agent's settings file that is there cannot be read as JSON (None: it can, or it
    is not there)."""
    try:
        json.loads(settings.read_bytes().decode())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return f"is not readable as JSON ({error})"
    return None


def status(repo: Repo, *, as_json: bool = False) -> int:
    from git_continuity.render import text as render

    document = status_document(repo)
    if as_json:
        render.emit_json("agent-status", document)
        return 0
    for entry in document["agents"]:
        name = entry["agent"]
        if not entry["installed"]:
            unreadable = _unreadable(_top(repo) / entry["settings"])
            if unreadable:
                print(f"{name}: {entry['settings']} {unreadable}, so no hook in it can run; mend it, then check again")
            else:
                print(f"{name}: not installed here (git continuity agent install {name})")
            continue
        hooks = entry["hooks"]
        count = f"{len(hooks)} hook{'s' if len(hooks) != 1 else ''} in {entry['settings']}"
        one = len({h["why"] for h in hooks}) == 1 and all(h["runs"] for h in hooks)
        print(f"{name}: {count}" + (f", each {hooks[0]['why']}" if one else ""))
        if name == "codex" and entry["project_trusted"] is not True:
            unread = "could not be read for the project's trust"
            trust = (
                "does not trust this project: Codex runs none of them" if entry["project_trusted"] is False else unread
            )
            print(f"  Codex's {entry['config']} {trust}")
        width = max(len(h["event"]) for h in hooks) + 2
        for h in hooks:
            parts = [] if one else [h["why"] if h["runs"] else f"CANNOT RUN: {h['why']}"]
            parts += [TRUST_SAID[h["trust"]]] if h["trust"] is not None else []
            print(f"  {h['event']:<{width}}" + "; ".join([*parts, _when(h)]))
        if entry.get("binary") is None:
            program, how = BINARIES[name]
            print(f"  {program} is not on this PATH: nothing runs these hooks here until it is ({how})")
        if entry.get("shell") is not None:
            from git_continuity.agents import shell as agent_shell

            print(f"  {agent_shell.said(entry['shell'])}")
    print(f"(each hook run adds a line to {document['log']})")
    return 0
