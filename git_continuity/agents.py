"""What git-continuity adds to coding agents' project configuration: the hooks of each agent
and the commands they run (agent_settings.py merges them into the settings file and takes
them out again; ``commands/agent.py`` reads and writes the files).

Claude Code (``.claude/settings.json``, ``hooks.<Event>[].hooks[]`` with ``type: "command"``):

- SessionStart, matcher ``startup|resume|clear|compact``: ``orient`` into the context
  (``hookSpecificOutput.additionalContext``), also after a compaction or a resume;
- PreCompact and SessionEnd: ``handoff``;
- Stop: the closure gate, answering ``{"decision": "block", "reason": …}`` while an open
  thread does not verify (``agent_hooks.py`` says how it avoids looping);
- PostToolUseFailure, matcher ``Bash``: the loop notice (tool_calls.py).

Codex (``.codex/hooks.json``, the same shape): SessionStart without a matcher (Codex sends
``startup``, ``resume``, ``clear``, ``compact`` and ``fork``, and each needs the brief: after an
automatic compaction, and in a fork, which starts from its parent's stale one), PreCompact,
Stop, SessionEnd and PostToolUse (matcher ``Bash``: the loop notice); and a block in
``AGENTS.md`` between markers telling any agent the same routine in words. Codex runs project
hooks only in a trusted project and only once a person has trusted each one (``/hooks`` in
Codex; a changed definition needs trusting again).

The hook commands run ``git-continuity-hook`` by the absolute path install found, and from PATH
where that is gone (the settings file is usually committed and shared, and each machine installs
git-continuity its own way). An agent runs a command it cannot find as a failed hook (exit 127)
and goes on without it, silently in headless runs; when neither is there, the command says so
where the agent shows it instead.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_continuity import agent_trust

AGENT_NAMES = {"claude": "claude-code", "codex": "codex", "gemini": "gemini-cli"}  # as recorded on entries


@dataclass(frozen=True)
class Hook:
    event: str  # the agent's event name
    matcher: str | None
    action: str  # what git-continuity-hook agent <agent> runs: session-start, pre-compact, stop, session-end
    timeout: int  # seconds the agent waits before it kills the hook


@dataclass(frozen=True)
class Target:
    agent: str
    settings: str  # the file, relative to the top of the work tree
    hooks: tuple[Hook, ...]
    instructions: str | None  # a Markdown file that gets the routine in words, if any
    # The brief's size at session start, in budget.py's tokens (3 bytes each): under what the
    # agent passes on whole, as measured with the pinned binary (test_agents_brief_real.py).
    brief_tokens: int = 2500
    timeout_unit: int = 1  # what one second is in the file's "timeout" (Gemini CLI counts milliseconds)


CLAUDE = Target(
    "claude",
    ".claude/settings.json",
    (
        Hook("SessionStart", "startup|resume|clear|compact", "session-start", 60),
        Hook("PreCompact", None, "pre-compact", 60),
        # The gate may run a cmd: check (a test suite) whose last evidence no longer applies.
        Hook("Stop", None, "stop", 600),
        Hook("SessionEnd", None, "session-end", 60),
        # Only a failed shell command runs it (Claude Code's own event for a failed tool call).
        Hook("PostToolUseFailure", "Bash", "post-tool-use", 10),
    ),
    None,
    # Claude Code 2.1.197 passes on 10,000 characters of additionalContext; over that the model
    # gets a 2 KB preview and the path of a file holding the rest.
    brief_tokens=3200,
)
CODEX = Target(
    "codex",
    ".codex/hooks.json",
    (
        Hook("SessionStart", None, "session-start", 60),
        Hook("PreCompact", None, "pre-compact", 60),
        Hook("Stop", None, "stop", 600),
        Hook("SessionEnd", None, "session-end", 3),  # Codex clamps it to 3 s, with a warning on every run
        Hook("PostToolUse", "Bash", "post-tool-use", 10),  # after every shell command: tool_calls.py
    ),
    "AGENTS.md",
    # Codex 0.171.0 passes on 2,500 of its tokens (about 4 bytes each, counted on the hook's
    # JSON-escaped output); over that the model gets the head and the tail with the middle cut.
    brief_tokens=3000,
)
# Gemini CLI 0.61.0 (``.gemini/settings.json``, the same shape, timeouts in milliseconds):
# SessionStart puts the brief before the prompt (``<hook_context>…</hook_context>``); AfterAgent is
# the Stop gate (``decision`` block or deny, its ``reason`` sent as the next prompt, with
# ``stop_hook_active``); AfterTool, matcher ``run_shell_command``, the loop notice (appended to the
# tool's result); SessionEnd the handoff. PreCompress is left out: 0.61.0 fires it (trigger
# ``auto``) before every model request, whether or not it compresses, so a handoff there would be
# one per request.
GEMINI = Target(
    "gemini",
    ".gemini/settings.json",
    (
        Hook("SessionStart", None, "session-start", 60),
        Hook("AfterAgent", None, "stop", 600),
        Hook("SessionEnd", None, "session-end", 60),
        Hook("AfterTool", "run_shell_command", "post-tool-use", 10),
    ),
    None,
    timeout_unit=1000,
)
TARGETS = {"claude": CLAUDE, "codex": CODEX, "gemini": GEMINI}


def command(target: Target, hook: Hook) -> str:
    """What a hook runs, as people read it (install prints this)."""
    return f"git-continuity-hook agent {target.agent} {hook.action}"


# What is lost when the hook cannot start, per action.
LOST = {
    "session-start": "this session gets no continuity brief, no closure gate and no handoff",
    "stop": "the closure gate did not run",
    "pre-compact": "no handoff was recorded before this compaction",
    "session-end": "no handoff was recorded at the end of this session",
    "post-tool-use": "nothing notices a failing command retried in a loop",
}


def installed_command(target: Target, hook: Hook, program: str | None) -> str:
    """The command written into the settings file: ``program`` (the absolute path install
    found, so the agent's PATH need not have it), else git-continuity-hook from PATH, else
    a notice where the agent shows it (the context, the model's stop, the summary's
    instructions, stderr at the end) instead of a silent exit 127."""
    where = f"neither at {program} nor on PATH" if program else "not on PATH"
    said = (
        f"git-continuity: git-continuity-hook is {where}, so {LOST[hook.action]}; install git-continuity "
        f"where this agent finds it, then run: git continuity agent install {target.agent}"
    )
    find = (f'h={shlex.quote(program)}; [ -x "$h" ] || ' if program else "") + "h=$(command -v git-continuity-hook)"
    return f'{find} || {{ {_loud(target, hook, said)}; }}; exec "$h" agent {target.agent} {hook.action}'


def _loud(target: Target, hook: Hook, said: str) -> str:
    def out(text: str) -> str:
        return "printf '%s\\n' " + shlex.quote(text)

    def answer(document: dict[str, Any]) -> str:
        return out(json.dumps(document))

    if hook.action == "session-start":
        context = {"hookEventName": "SessionStart", "additionalContext": f"{said}. Tell the user before anything else."}
        return answer({"systemMessage": said, "hookSpecificOutput": context}) + "; exit 0"
    if hook.action == "stop":  # held once, so that the model tells the person; then let go
        block = answer({"decision": "block", "reason": f"{said}. Tell the user, then stop."})
        again = answer({"systemMessage": said})
        return f"if grep -q '\"stop_hook_active\": *true'; then {again}; else {block}; fi; exit 0"
    if hook.action == "post-tool-use":  # after every failed command: the brief said so already
        return "exit 0"
    if hook.action == "pre-compact" and target.agent == "claude":  # plain text: instructions for the summary
        return out(f"Keep in the summary: {said}.") + "; exit 0"
    if hook.action == "pre-compact":
        return answer({"systemMessage": said}) + "; exit 0"
    return f"echo {shlex.quote(said)} >&2; exit 1"  # session-end: the agent shows a failed hook's stderr


_OURS = re.compile(r'^git-continuity-hook agent (\S+) |exec "\$h" agent (\S+) [a-z-]+$')


def is_ours(target: Target, entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    found = _OURS.search(str(entry.get("command", "")))
    return found is not None and target.agent in found.groups()


def group(target: Target, hook: Hook, program: str | None = None) -> dict[str, Any]:
    handler = {
        "type": "command",
        "command": installed_command(target, hook, program),
        "timeout": hook.timeout * target.timeout_unit,
    }
    return ({"matcher": hook.matcher} if hook.matcher else {}) | {"hooks": [handler]}


# -- AGENTS.md --------------------------------------------------------------------------------

BEGIN = (
    "<!-- git-continuity:begin (managed by `git continuity agent install codex`; "
    "removed by `agent uninstall codex`) -->"
)
END = "<!-- git-continuity:end -->"
ROUTINE = """\
## Continuity (git-continuity)

This repository keeps the state of long work on `refs/continuity/<stream>`; claims carry
handles that are re-derived, so trust the dereference, never a summary.

- Start every session with `git continuity orient` and act only on what it says is true now.
  Never act on a claim it lists under "Do not act on these".
- Record what you learn as claims with handles (`git continuity claim add TEXT --check HANDLE`),
  and what you did, tried or ruled out in `git continuity journal add TEXT`.
- Before you say the work is done, `git continuity check --closing` must pass; if a thread is
  honestly not finished, park it (`git continuity thread set ID waiting`) and say why.
- Before your context runs out or the session ends, run `git continuity handoff`.
"""


def instructions_install(text: str | None) -> tuple[str, bool]:
    """AGENTS.md with the routine between markers (replaced in place when present), and
    whether it changed."""
    block = f"{BEGIN}\n{ROUTINE}{END}\n"
    if text is None or text == "":
        return block, True
    if BEGIN in text and END in text:
        start, end = text.index(BEGIN), text.index(END) + len(END) + 1
        new = text[:start] + block + text[end:]
        return new, new != text
    separator = "\n" if text.endswith("\n") else "\n\n"
    return text + separator + block, True


def instructions_uninstall(text: str, *, final_newline: bool = True) -> str | None:
    """AGENTS.md without the block (and the line break install put before it); None when
    nothing else is left. ``final_newline``: whether the text ended with one before install
    (a file that did not comes back without it)."""
    if BEGIN not in text or END not in text:
        return text
    start, end = text.index(BEGIN), text.index(END) + len(END)
    end += 1 if text[end : end + 1] == "\n" else 0
    before = text[:start]
    if before.endswith("\n\n"):
        before = before[:-1]
    if not final_newline and not text[end:] and before.endswith("\n"):
        before = before[:-1]
    rest = before + text[end:]
    return rest if rest else None


# -- whether the installed hooks would run ------------------------------------------------------


@dataclass(frozen=True)
class HookCheck:
    """One hook of ours found in an agent's settings file, and whether it would run."""

    agent: str
    event: str
    action: str
    settings: str  # the file, relative to the top of the work tree
    position: tuple[int, int]  # the matcher group and the handler in the event's list
    program: str | None  # the git-continuity-hook it would run; None: neither found
    runs: bool
    why: str  # one line saying so
    recorded: str | None = None  # the git-continuity-hook recorded at install (None: PATH alone)
    trust: str | None = None  # Codex: trusted, untrusted (never), modified (since), unknown (no tomllib); else None


# The hook command's first assignment: the git-continuity-hook recorded at install, quoted
# for the shell when its path holds a space.
_PROGRAM = re.compile(r"^h=('(?:[^']|'\\'')*'|\S+);")


def _would_run(command_text: str) -> tuple[str | None, str | None, str]:
    """The program an installed command would exec, found as the command finds it (the path
    recorded at install, else git-continuity-hook on this PATH), the path recorded, and a
    line saying so."""
    import os
    import shutil

    found = _PROGRAM.match(command_text)
    recorded = shlex.split(found.group(1))[0] if found and not found.group(1).startswith("$(") else None
    if recorded and os.access(recorded, os.X_OK):
        return recorded, recorded, f"runs {recorded}"
    on_path = shutil.which("git-continuity-hook")
    if on_path:
        gone = f"{recorded} is gone; " if recorded else ""
        return on_path, recorded, f"{gone}runs {on_path} from PATH"
    return None, recorded, f"git-continuity-hook is {unreachable(recorded)}: the hook cannot run"


def unreachable(recorded: str | None) -> str:
    return f"neither at {recorded} nor on PATH" if recorded else "not on PATH"


def installed_hooks(top: Path, targets: Sequence[Target] | None = None) -> list[HookCheck]:
    """Every hook of ours in the agents' settings files under ``top``, and whether its command
    would run (for Codex also whether it is trusted). A settings file that is missing or not
    JSON holds none. What ``agent status`` shows, and what ``doctor`` reports."""
    found = []
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
                    if not is_ours(target, handler):
                        continue
                    action = str(handler["command"]).rsplit(" ", 1)[-1]
                    program, recorded, why = _would_run(str(handler["command"]))
                    state = "unknown" if unknown else None
                    if trust is not None:
                        key = f"{top / target.settings}:{agent_trust.snake(event)}:{g}:{e}"
                        current = agent_trust.codex_hash(event, grp.get("matcher"), handler)
                        state = agent_trust.state(trust.get(key), current)
                    found.append(
                        HookCheck(
                            target.agent,
                            event,
                            action,
                            target.settings,
                            (g, e),
                            program,
                            program is not None,
                            why,
                            recorded,
                            state,
                        )
                    )
    return found
