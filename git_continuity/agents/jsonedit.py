"""Editing a JSON file people also edit, by splicing text: what is not changed stays byte
for byte (key order, spacing, escapes, other entries), and removing what was inserted gives
the original text back.

``parse`` gives the document's values with the span of each in the text; ``insert_member``,
``append_item`` and ``remove`` return new text. Each edit is followed by a fresh ``parse``
(settings files are small), so spans never go stale.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")


class JSONEditError(Exception):
    """The text is not JSON we can edit; the message names the line."""


@dataclass
class Node:
    kind: str  # "object", "array" or "scalar"
    start: int  # offset of its first character
    end: int  # offset just past its last character
    depth: int  # containers around it (the top value: 0)
    keys: list[str] = field(default_factory=list)  # object: member names, in order
    key_starts: list[int] = field(default_factory=list)  # object: offset of each name's quote
    children: list[Node] = field(default_factory=list)  # object: member values; array: items

    def get(self, key: str) -> Node | None:
        return self.children[self.keys.index(key)] if key in self.keys else None


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def parse(text: str, where: str) -> tuple[Any, Node]:
    """The value and its span tree, or JSONEditError naming ``where`` and the line.
    Duplicate keys are refused: readers disagree on which one counts."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise JSONEditError(f"{where} line {error.lineno} column {error.colno}: not valid JSON: {error.msg}") from None
    node, _ = _value(text, _skip(text, 0), 0, where)
    return value, node


def _skip(text: str, at: int) -> int:
    """Past the whitespace at ``at``."""
    found = _WS.match(text, at)
    assert found is not None  # the pattern matches the empty string too
    return found.end()


def _string(text: str, at: int) -> tuple[str, int]:
    """The JSON string whose opening quote is at ``at``, and the offset past its closing one."""
    value, end = _DECODER.raw_decode(text, at)
    return str(value), end


def _value(text: str, at: int, depth: int, where: str) -> tuple[Node, int]:
    c = text[at]
    if c == "{":
        node = Node("object", at, at, depth)
        at = _skip(text, at + 1)
        if text[at] == "}":
            node.end = at + 1
            return node, at + 1
        while True:
            key, after = _string(text, at)
            if key in node.keys:
                raise JSONEditError(f"{where} line {line_of(text, at)}: duplicate key {key!r}")
            node.keys.append(key)
            node.key_starts.append(at)
            at = _skip(text, after)
            at = _skip(text, at + 1)  # past ':'
            child, at = _value(text, at, depth + 1, where)
            node.children.append(child)
            at = _skip(text, at)
            if text[at] == "}":
                node.end = at + 1
                return node, at + 1
            at = _skip(text, at + 1)  # past ','
    if c == "[":
        node = Node("array", at, at, depth)
        at = _skip(text, at + 1)
        if text[at] == "]":
            node.end = at + 1
            return node, at + 1
        while True:
            child, at = _value(text, at, depth + 1, where)
            node.children.append(child)
            at = _skip(text, at)
            if text[at] == "]":
                node.end = at + 1
                return node, at + 1
            at = _skip(text, at + 1)
    if c == '"':
        end = _string(text, at)[1]
        return Node("scalar", at, end, depth), end
    for literal in ("true", "false", "null"):
        if text.startswith(literal, at):
            return Node("scalar", at, at + len(literal), depth), at + len(literal)
    match = _NUMBER.match(text, at)
    assert match is not None  # json.loads accepted the text
    return Node("scalar", at, match.end(), depth), match.end()


def indent_unit(text: str, top: Node) -> str:
    """The file's indentation step, read off its first indented line (two spaces if none)."""
    first = top.key_starts[0] if top.kind == "object" and top.keys else None
    if first is not None:
        line_start = text.rfind("\n", 0, first) + 1
        if line_start > top.start:
            unit = text[line_start:first]
            if unit and not unit.strip():
                return unit
    return "  "


def dump(value: Any, unit: str, depth: int) -> str:
    """A value as the file would write it at this depth: nested lines indented one more step."""
    indent: int | str = len(unit) if unit.strip(" ") == "" else unit
    lines = json.dumps(value, indent=indent, ensure_ascii=False).split("\n")
    return "\n".join([lines[0]] + [unit * depth + line for line in lines[1:]])


def _multiline(text: str, node: Node) -> bool:
    return "\n" in text[node.start : node.end] or node.children == []


def insert_member(text: str, obj: Node, key: str, value: Any, unit: str) -> str:
    """``obj`` with ``"key": value`` added as its last member."""
    return _insert(text, obj, json.dumps(key, ensure_ascii=False) + ": ", value, unit)


def append_item(text: str, array: Node, value: Any, unit: str) -> str:
    """``array`` with value added as its last item."""
    return _insert(text, array, "", value, unit)


def _insert(text: str, container: Node, prefix: str, value: Any, unit: str) -> str:
    inner = unit * (container.depth + 1)
    if not container.children:  # {} or [] (any spacing inside): open it up
        body = f"\n{inner}{prefix}{dump(value, unit, container.depth + 1)}\n{unit * container.depth}"
        return text[: container.start + 1] + body + text[container.end - 1 :]
    last = container.children[-1]
    if _multiline(text, container):
        piece = f",\n{inner}{prefix}{dump(value, unit, container.depth + 1)}"
    else:  # a one-line container stays on one line
        piece = f", {prefix}{json.dumps(value, ensure_ascii=False)}"
    return text[: last.end] + piece + text[last.end :]


def remove(text: str, container: Node, index: int) -> str:
    """``container`` without its member or item at ``index``: the exact inverse of the
    inserts above (the separator before it goes with it; the first one takes the one after)."""
    child = container.children[index]
    start = container.key_starts[index] if container.kind == "object" else child.start
    if len(container.children) == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    if index > 0:
        return text[: container.children[index - 1].end] + text[child.end :]
    following = container.key_starts[1] if container.kind == "object" else container.children[1].start
    return text[:start] + text[following:]
