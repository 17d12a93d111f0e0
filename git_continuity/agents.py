"""What git-continuity adds to coding agents' project configuration, and how it is merged in
and taken out again. Pure text in, text out; ``commands/agent.py`` reads and writes files.

Claude Code (``.claude/settings.json``, ``hooks.<Event>[].hooks[]`` with ``type: "command"``):

- SessionStart, matcher ``startup|resume|clear|compact``: ``orient`` into the context
  (``hookSpecificOutput.additionalContext``), also after a compaction or a resume;
- PreCompact and SessionEnd: ``handoff``;
- Stop: the closure gate, answering ``{"decision": "block", "reason": …}`` while an open
  thread does not verify (``agent_hooks.py`` says how it avoids looping).

Codex (``.codex/hooks.json``, the same shape): SessionStart without a matcher (Codex sends
``startup``, ``resume``, ``clear``, ``compact`` and ``fork``, and each needs the brief: after an
automatic compaction, and in a fork, which starts from its parent's stale one), PreCompact,
Stop and SessionEnd; and a block in ``AGENTS.md`` between markers telling any agent the same
routine in words. Codex runs project hooks only in a trusted project and only once a person
has trusted each one (``/hooks`` in Codex; a changed definition needs trusting again).

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
from dataclasses import dataclass, field
from typing import Any

from git_continuity import jsonedit
from git_continuity.jsonedit import JSONEditError, Node

AGENT_NAMES = {"claude": "claude-code", "codex": "codex"}  # as recorded on entries


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


CLAUDE = Target(
    "claude",
    ".claude/settings.json",
    (
        Hook("SessionStart", "startup|resume|clear|compact", "session-start", 60),
        Hook("PreCompact", None, "pre-compact", 60),
        # The gate may run a cmd: check (a test suite) whose last evidence no longer applies.
        Hook("Stop", None, "stop", 600),
        Hook("SessionEnd", None, "session-end", 60),
    ),
    None,
)
CODEX = Target(
    "codex",
    ".codex/hooks.json",
    (
        Hook("SessionStart", None, "session-start", 60),
        Hook("PreCompact", None, "pre-compact", 60),
        Hook("Stop", None, "stop", 600),
        Hook("SessionEnd", None, "session-end", 3),  # Codex clamps it to 3 s, with a warning on every run
    ),
    "AGENTS.md",
)
TARGETS = {"claude": CLAUDE, "codex": CODEX}


def command(target: Target, hook: Hook) -> str:
    """What a hook runs, as people read it (install prints this)."""
    return f"git-continuity-hook agent {target.agent} {hook.action}"


# What is lost when the hook cannot start, per action.
LOST = {
    "session-start": "this session gets no continuity brief, no closure gate and no handoff",
    "stop": "the closure gate did not run",
    "pre-compact": "no handoff was recorded before this compaction",
    "session-end": "no handoff was recorded at the end of this session",
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
    handler = {"type": "command", "command": installed_command(target, hook, program), "timeout": hook.timeout}
    return ({"matcher": hook.matcher} if hook.matcher else {}) | {"hooks": [handler]}


# -- checking the shape before touching anything ---------------------------------------------


def _check(text: str, value: Any, top: Node, where: str) -> None:
    """Refuse a settings file whose shape we would have to guess at, naming the line."""

    def fail(node: Node, what: str) -> None:
        raise JSONEditError(f"{where} line {jsonedit.line_of(text, node.start)}: {what}")

    if not isinstance(value, dict):
        fail(top, "expected a JSON object at the top")
    hooks_node = top.get("hooks")
    if hooks_node is None:
        return
    if not isinstance(value["hooks"], dict):
        fail(hooks_node, '"hooks" is not an object of events')
    for event, node in zip(hooks_node.keys, hooks_node.children, strict=True):
        groups = value["hooks"][event]
        if not isinstance(groups, list):
            fail(node, f'"hooks.{event}" is not a list of matcher groups')
        for n, (g, g_node) in enumerate(zip(groups, node.children, strict=True)):
            if not isinstance(g, dict):
                fail(g_node, f'"hooks.{event}[{n}]" is not an object')
            if "hooks" in g and not isinstance(g["hooks"], list):
                inner = g_node.get("hooks")
                fail(inner or g_node, f'"hooks.{event}[{n}].hooks" is not a list')


def _parse(text: str, where: str) -> tuple[Any, Node]:
    value, top = jsonedit.parse(text, where)
    _check(text, value, top, where)
    return value, top


# -- install and uninstall -------------------------------------------------------------------


@dataclass
class Merged:
    text: str
    added: list[str]  # events that got our hook
    present: list[str]  # events that had it already
    created: list[list[str]]  # containers install created (["hooks"], ["hooks", "Stop"]): uninstall removes them
    updated: list[str] = field(default_factory=list)  # events whose older command of ours now runs the tool by path


def install(target: Target, text: str | None, where: str, program: str | None = None) -> Merged:
    """The settings text with our hooks merged in, running ``program`` (see installed_command);
    what is there already is left alone, and an entry of ours that a person edited (a longer
    timeout) or that another machine installed counts as installed. An entry of ours from
    before install recorded the path gets the command that finds the tool without PATH."""
    text = "{}\n" if text is None else text
    value, top = _parse(text, where)
    unit = jsonedit.indent_unit(text, top)
    merged = Merged(text, [], [], [])
    hooks = value.get("hooks")
    if hooks is None:
        hooks_value = {h.event: [group(target, h, program)] for h in target.hooks}
        merged.text = jsonedit.insert_member(text, top, "hooks", hooks_value, unit)
        merged.added = [h.event for h in target.hooks]
        merged.created = [["hooks"]]
        return merged
    for hook in target.hooks:
        value, top = _parse(merged.text, where)
        hooks_node = top.get("hooks")
        assert hooks_node is not None
        groups = value["hooks"].get(hook.event)
        found = [
            (g, e)
            for g, grp in enumerate(groups or [])
            for e, x in enumerate(grp.get("hooks") or [])
            if is_ours(target, x)
        ]
        if found:
            g, e = found[0]
            if groups[g]["hooks"][e].get("command") == command(target, hook):
                # Installed before the path was recorded: that command fails silently without PATH.
                event_node = hooks_node.get(hook.event)
                assert event_node is not None
                handlers = event_node.children[g].get("hooks")
                spot = handlers.children[e].get("command") if handlers is not None else None
                assert spot is not None
                new = json.dumps(installed_command(target, hook, program), ensure_ascii=False)
                merged.text = merged.text[: spot.start] + new + merged.text[spot.end :]
                merged.updated.append(hook.event)
            else:
                merged.present.append(hook.event)
            continue
        if groups is None:
            merged.text = jsonedit.insert_member(
                merged.text, hooks_node, hook.event, [group(target, hook, program)], unit
            )
            merged.created.append(["hooks", hook.event])
        else:
            event_node = hooks_node.get(hook.event)
            assert event_node is not None
            merged.text = jsonedit.append_item(merged.text, event_node, group(target, hook, program), unit)
        merged.added.append(hook.event)
    return merged


def uninstall(target: Target, text: str, where: str, created: Sequence[Sequence[str]] | None) -> tuple[str | None, int]:
    """The settings text without our hooks, and how many were removed. A matcher group left
    without hooks goes with them; an event list, the ``hooks`` object or the file itself
    goes when install created it (``created``; when unknown, e.g. installed from another
    clone, when it is left empty). None: remove the file."""
    removed = 0
    while True:
        value, top = _parse(text, where)
        found = _find_ours(target, value)
        if found is None:
            break
        event, g, e = found
        hooks_node = top.get("hooks")
        assert hooks_node is not None
        event_node = hooks_node.get(event)
        assert event_node is not None
        group_node = event_node.children[g]
        handlers = group_node.get("hooks")
        assert handlers is not None
        if len(handlers.children) > 1:
            text = jsonedit.remove(text, handlers, e)
        else:
            text = jsonedit.remove(text, event_node, g)
        removed += 1
    made = {tuple(c) for c in created} if created is not None else None

    def ours(path: tuple[str, ...]) -> bool:
        """Created by install: the container itself, or inside one it created."""
        return made is None or any(path[:n] in made for n in range(1, len(path) + 1))

    value, top = _parse(text, where)
    hooks_node = top.get("hooks")
    if hooks_node is not None and isinstance(value["hooks"], dict):
        for event in list(value["hooks"]):
            value, top = _parse(text, where)
            hooks_node = top.get("hooks")
            assert hooks_node is not None
            if value["hooks"][event] == [] and ours(("hooks", event)) and removed:
                text = jsonedit.remove(text, hooks_node, hooks_node.keys.index(event))
        value, top = _parse(text, where)
        if value.get("hooks") == {} and ours(("hooks",)) and removed:
            text = jsonedit.remove(text, top, top.keys.index("hooks"))
    value, _ = _parse(text, where)
    if value == {} and removed and (made is None or ("file",) in made):
        return None, removed
    return text, removed


def _find_ours(target: Target, value: dict[str, Any]) -> tuple[str, int, int] | None:
    for event, groups in (value.get("hooks") or {}).items():
        for g, group_value in enumerate(groups):
            for e, entry in enumerate(group_value.get("hooks") or []):
                if is_ours(target, entry):
                    return event, g, e
    return None


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
