"""A coding agent's settings file (``.claude/settings.json``, ``.codex/hooks.json``) with our
hooks merged in, and taken out again, byte for byte: pure text in, text out (agents/jsonedit.py
edits the JSON where it stands, so comments of layout, order and indentation stay).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from git_continuity.agents import jsonedit
from git_continuity.agents.jsonedit import JSONEditError, Node
from git_continuity.agents.table import Target, form, group, installed_command, is_ours

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
    updated: list[str] = field(default_factory=list)  # events whose earlier command of ours now runs the launcher
    changed: list[str] = field(default_factory=list)  # events whose command of ours was edited by hand (left alone)


def install(target: Target, text: str | None, where: str) -> Merged:
    """The settings text with our hooks merged in (agents.installed_command: the launcher);
    what is there already is left alone, and an entry of ours that a person edited (a longer
    timeout) or that another machine installed counts as installed. An earlier version's
    command of ours is replaced by the launcher's; one edited by hand is left and reported."""
    text = "{}\n" if text is None else text
    value, top = _parse(text, where)
    unit = jsonedit.indent_unit(text, top)
    merged = Merged(text, [], [], [])
    hooks = value.get("hooks")
    if hooks is None:
        hooks_value = {h.event: [group(target, h)] for h in target.hooks}
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
            shape = form(target, hook, str(groups[g]["hooks"][e].get("command")))
            if shape == "older":
                # An earlier version's command: it named this machine's path, or failed silently.
                event_node = hooks_node.get(hook.event)
                assert event_node is not None
                handlers = event_node.children[g].get("hooks")
                spot = handlers.children[e].get("command") if handlers is not None else None
                assert spot is not None
                new = json.dumps(installed_command(target, hook), ensure_ascii=False)
                merged.text = merged.text[: spot.start] + new + merged.text[spot.end :]
                merged.updated.append(hook.event)
            else:
                (merged.present if shape == "current" else merged.changed).append(hook.event)
            continue
        if groups is None:
            merged.text = jsonedit.insert_member(merged.text, hooks_node, hook.event, [group(target, hook)], unit)
            merged.created.append(["hooks", hook.event])
        else:
            event_node = hooks_node.get(hook.event)
            assert event_node is not None
            merged.text = jsonedit.append_item(merged.text, event_node, group(target, hook), unit)
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
