"""One change of ``packet.yaml`` made in its text: the lines of one top-level key replaced,
or an item added after the last of a top-level list, every other line left as it was.

A packet of a hundred blockers takes ruamel.yaml about 40 ms to load and 25 ms to dump, on
every ``next`` and ``blocker add`` of every writer, in turn (store/queue.py): a fleet's
writers waited on it. The splice costs two reads by libyaml (PyYAML's C loader, about 3 ms
each at that size): the first says where the value ends (its marks: a quoted value may go on
at column 0, a comment after a list is not in it), the second proves the splice: the text
after it must hold exactly what the text before it held with the change made, else the splice
is not used and the caller takes ruamel's round trip. So a packet a person shaped in a way
this does not foresee (a comment among the lines replaced, a flow list, Windows line ends) is
still changed correctly, only more slowly. The lines spliced in are ruamel's own, made by the
caller in the style of the value they replace, so the file reads as the round trip writes it.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable
from typing import Any


def replaced(
    text: str, key: str, render: Callable[[str | None], str], change: Callable[[dict[str, Any]], None]
) -> str | None:
    """``text`` with the lines of top-level ``key`` (its line to the last line of its value)
    replaced by ``render(style)``, ``style`` being how the old value was written when it was a
    scalar (libyaml's: '"', "'", "|", ">", or None for plain); None where that is not exactly
    ``change``, or where a comment stands among the lines replaced (it would be lost)."""
    found = _read(text, key)
    if found is None:
        return None
    all_lines, start, value = found
    end = _last_line(value) + 1
    if any("#" in line for line in all_lines[start:end]):
        return None
    style = (value.style or None) if isinstance(value.value, str) else None
    return _proven(text, [*all_lines[:start], render(style), *all_lines[end:]], change)


def appended(text: str, key: str, item: str, change: Callable[[dict[str, Any]], None]) -> str | None:
    """``text`` with ``item`` (the lines of one list item) after the last line of the last
    item of top-level list ``key`` (so before the comments that follow it); an empty list
    written ``key: []`` or ``key:`` becomes a block list. None where that is not exactly
    ``change``."""
    found = _read(text, key)
    if found is None:
        return None
    all_lines, start, value = found
    rest = all_lines[start][len(key) + 1 :].strip()
    if getattr(value, "flow_style", False) or value.tag == NULL:
        if rest not in ("[]", "") or _last_line(value) != start:
            return None  # a list written in flow style, or a null spelled out: ruamel's round trip
        return _proven(text, [*all_lines[:start], f"{key}:\n", item, *all_lines[start + 1 :]], change)
    at = _last_line(value) + 1
    return _proven(text, [*all_lines[:at], item, *all_lines[at:]], change)


# Loading libyaml costs a process 10 ms the first time, what ruamel's round trip costs for a
# packet of about this many bytes: a smaller one is not spliced where libyaml is not loaded
# yet (the helper loads it once, warm(), for every command).
WORTH_LOADING = 2048
NULL = "tag:yaml.org,2002:null"


def warm() -> None:
    """Load libyaml and read a packet once (the helper does, for every command's copy)."""
    _load("next_action:\nblockers: []\n")


def _read(text: str, key: str) -> tuple[list[str], int, Any] | None:
    """The text's lines, the line of top-level ``key`` and its value's node as libyaml reads
    it (its marks say where the value ends, which text alone cannot: a quoted value may go on
    at column 0, a comment after a list is not in it). None where the key is not a plain key
    of its own line, where the text has Windows line ends, or where libyaml cannot read it."""
    if "\r" in text or not text.endswith("\n"):
        return None
    if len(text) < WORTH_LOADING and "yaml" not in sys.modules:
        return None
    loader = _loader()
    if loader is None:
        return None
    import yaml

    reading = loader(text)
    try:
        root = reading.get_single_node()
    except (yaml.YAMLError, _Twice):
        return None
    finally:
        reading.dispose()
    if not isinstance(root, yaml.MappingNode):
        return None
    found = [(k, v) for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == key and not k.style]
    if len(found) != 1 or found[0][0].start_mark.column != 0:
        return None
    lines = text.splitlines(keepends=True)
    start = found[0][0].start_mark.line
    if not lines[start].startswith(f"{key}:"):
        return None
    return lines, start, found[0][1]


def _last_line(node: Any) -> int:
    """The last line that holds some of a value: a block list or mapping ends with its last
    value (libyaml ends it where the next token starts, after the comments that follow it), a
    block scalar before the line its end mark stands at the start of."""
    value = getattr(node, "value", None)
    if isinstance(value, list) and value and not getattr(node, "flow_style", False):
        last = value[-1]
        return _last_line(last[1] if isinstance(last, tuple) else last)
    end = node.end_mark
    return int(end.line if end.column > 0 or end.line == node.start_mark.line else end.line - 1)


def _proven(before: str, lines: list[str], change: Callable[[dict[str, Any]], None]) -> str | None:
    """The spliced text, where it holds exactly what ``before`` holds with ``change`` made."""
    after = "".join(lines)
    loaded = _load(before)
    if not isinstance(loaded, dict):
        return None
    wanted = copy.deepcopy(loaded)
    try:
        change(wanted)
    except (KeyError, TypeError, AttributeError):
        return None
    return after if _load(after) == wanted else None


def _load(text: str) -> Any:
    """The text as libyaml reads it; None where it cannot (no libyaml here: no splice), or
    where a mapping holds a key twice (libyaml keeps the last; ruamel refuses the file)."""
    loader = _loader()
    if loader is None:
        return None
    import yaml

    try:
        return yaml.load(text, Loader=loader)
    except (yaml.YAMLError, _Twice):
        return None


class _Twice(Exception):
    """A mapping holds a key twice."""


@functools.cache
def _loader() -> Any:
    """PyYAML's C safe loader, refusing a key twice in a mapping; None without libyaml."""
    try:
        import yaml
    except ImportError:  # pragma: no cover - pre-commit's dependency
        return None
    if not hasattr(yaml, "CSafeLoader"):
        return None

    class Once(yaml.CSafeLoader):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys = [self.construct_object(key, deep=True) for key, _ in node.value]
            if len(keys) != len({repr(key) for key in keys}):
                raise _Twice
            return super().construct_mapping(node, deep)

    return Once
