"""What git-continuity adds to coding agents' project configuration: the hooks of each agent
and the commands they run (agents/settings.py merges them into the settings file and takes
them out again; ``commands/agent.py`` reads and writes the files).

Claude Code (``.claude/settings.json``, ``hooks.<Event>[].hooks[]`` with ``type: "command"``):

- SessionStart, matcher ``startup|resume|clear|compact``: ``orient`` into the context
  (``hookSpecificOutput.additionalContext``), also after a compaction or a resume;
- PreCompact and SessionEnd: ``handoff``;
- Stop: the closure gate, answering ``{"decision": "block", "reason": …}`` while an open
  thread does not verify (``agents/hooks.py`` says how it avoids looping);
- PostToolUseFailure, matcher ``Bash``: the loop notice (agents/loop_notice.py).

Codex (``.codex/hooks.json``, the same shape): SessionStart without a matcher (Codex sends
``startup``, ``resume``, ``clear``, ``compact`` and ``fork``, and each needs the brief: after an
automatic compaction, and in a fork, which starts from its parent's stale one), PreCompact,
Stop, SessionEnd and PostToolUse (matcher ``Bash``: the loop notice); and a block in
``AGENTS.md`` between markers telling any agent the same routine in words. Codex runs project
hooks only in a trusted project and only once a person has trusted each one (``/hooks`` in
Codex; a changed definition needs trusting again).

Each hook command is ``sh <the agent's folder>/hooks/git-continuity-hook agent <agent> <action>``,
the folder named as the agent names its project at run time (``$CLAUDE_PROJECT_DIR``,
``$GEMINI_PROJECT_DIR``; Codex runs hooks in the session's folder, so git finds the top), and
the launcher there (launcher.sh, copied by install) names no path of one machine: what a team
commits runs on every clone. The launcher runs the git-continuity-hook this clone's install
recorded (``.git/continuity/agents/hook-program``), else the one on PATH, and when that does
not start it says so where the agent shows it (agents/probe.py asks it, for status and doctor).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    # The brief's size at session start, in sessions/budget.py's tokens (3 bytes each): under what the
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
        Hook("PostToolUse", "Bash", "post-tool-use", 10),  # after every shell command: agents/loop_notice.py
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


HOOK_PROGRAM = "agents/hook-program"  # under .git/continuity/: this clone's git-continuity-hook
LAUNCHER = "hooks/git-continuity-hook"  # in the agent's folder (.claude/, .codex/, .gemini/)
# How each agent's hook command names the top of the work tree at run time. Gemini CLI puts the
# quoted folder in the command's place itself; Codex gives no such name and runs hooks in the
# session's folder, which may be below the top.
PROJECT = {
    "claude": '"$CLAUDE_PROJECT_DIR"',
    "codex": '"$(git rev-parse --show-toplevel)"',
    "gemini": "$GEMINI_PROJECT_DIR",
}


def launcher(target: Target) -> str:
    """The launcher's place, relative to the top of the work tree."""
    return f"{target.settings.split('/')[0]}/{LAUNCHER}"


def launcher_text() -> str:
    """The launcher as shipped (launcher.sh beside this module)."""
    return (Path(__file__).parent / "launcher.sh").read_text()


def installed_command(target: Target, hook: Hook) -> str:
    """The command written into the settings file: the launcher, by the path the agent gives
    the project at run time (under 200 characters: Claude Code quotes it to the model at
    every blocked stop)."""
    return f"sh {PROJECT[target.agent]}/{launcher(target)} agent {target.agent} {hook.action}"


# Ours: the launcher's command, and the commands earlier versions installed (the bare one, and
# one that found the tool itself in shell).
_OURS = re.compile(r'(?:^|/)git-continuity-hook agent (\S+) ([a-z-]+)$|exec "\$h" agent (\S+) ([a-z-]+)$')


def is_ours(target: Target, entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    found = _OURS.search(str(entry.get("command", "")))
    return found is not None and target.agent in found.groups()


def form(target: Target, hook: Hook, text: str) -> str:
    """Which command of ours ``text`` is: ``current`` (what install writes), ``older`` (what an
    earlier version wrote: install replaces it) or ``changed`` (edited by hand: left alone)."""
    if text == installed_command(target, hook):
        return "current"
    if text == command(target, hook) or (text.startswith("h=") and 'exec "$h" agent' in text):
        return "older"
    return "changed"


def group(target: Target, hook: Hook) -> dict[str, Any]:
    handler = {
        "type": "command",
        "command": installed_command(target, hook),
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
