"""One change of ``packet.yaml`` made in its text: the lines of one top-level key replaced,
or an item added at the end of a top-level list, every other line left as it was.

A packet of a hundred blockers takes ruamel.yaml about 40 ms to load and 25 ms to dump, on
every ``next`` and ``blocker add`` of every writer, in turn (store/queue.py): a fleet's
writers waited on it. The splice costs two loads by libyaml (PyYAML's C loader, about 3 ms
each at that size) that prove it: the text after the splice must hold exactly what the text
before it held with the change made, else the splice is not used and the caller takes
ruamel's round trip. So a packet a person shaped in a way this does not foresee (a comment
inside the value replaced, a flow list, Windows line ends, a blank line between items) is
still changed correctly, only more slowly. The lines spliced in are ruamel's own, made by
the caller, so the file reads as the round trip would have written it.
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable
from typing import Any


def replaced(text: str, key: str, lines: str, change: Callable[[dict[str, Any]], None]) -> str | None:
    """``text`` with the lines of top-level ``key`` (its line and the indented lines of its
    value) replaced by ``lines``; None where that is not exactly ``change``, or where a comment
    stands among the lines replaced (it would be lost)."""
    found = _lines(text, key)
    if found is None:
        return None
    all_lines, start, end = found
    if any("#" in line for line in all_lines[start:end]):
        return None
    spliced = "".join([*all_lines[:start], lines, *all_lines[end:]])
    return spliced if _proves(text, spliced, change) else None


def appended(text: str, key: str, item: str, change: Callable[[dict[str, Any]], None]) -> str | None:
    """``text`` with ``item`` (the lines of one list item) after the last item of top-level
    list ``key`` (before the comments that follow it); an empty list written ``key: []``
    becomes a block list. None where that is not exactly ``change``."""
    found = _lines(text, key)
    if found is None:
        return None
    all_lines, start, end = found
    rest = all_lines[start][len(key) + 1 :].strip()
    if rest == "[]" and end == start + 1:
        spliced = "".join([*all_lines[:start], f"{key}:\n", item, *all_lines[end:]])
    elif rest:
        return None
    else:
        at = end
        while at > start + 1 and all_lines[at - 1].lstrip().startswith("#"):
            at -= 1
        spliced = "".join([*all_lines[:at], item, *all_lines[at:]])
    return spliced if _proves(text, spliced, change) else None


# Loading libyaml costs a process 10 ms the first time, what ruamel's round trip costs for a
# packet of about this many bytes: a smaller one is not spliced where libyaml is not loaded
# yet (the helper loads it once for every command).
WORTH_LOADING = 2048


def _lines(text: str, key: str) -> tuple[list[str], int, int] | None:
    """The text's lines, and where the lines of top-level ``key`` start and end: its own
    line and every indented line after it (blank lines among them too, not after them).
    None unless exactly one line starts the key, or where the text has Windows line ends."""
    if "\r" in text or not text.endswith("\n"):
        return None
    if len(text) < WORTH_LOADING and "yaml" not in sys.modules:
        return None
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(f"{key}:") and line[len(key) + 1 :][:1] in " \n"]
    if len(starts) != 1:
        return None
    start = end = starts[0]
    for at in range(start + 1, len(lines)):
        if lines[at].startswith(" "):
            end = at if lines[at].strip() else end
        elif lines[at].strip() and not lines[at].startswith("#"):
            break  # the next key (a comment at column 0 may stand inside the value)
    return lines, start, end + 1


def _proves(before: str, after: str, change: Callable[[dict[str, Any]], None]) -> bool:
    """Whether ``after`` holds exactly what ``before`` holds with ``change`` made."""
    loaded = _load(before)
    if not isinstance(loaded, dict):
        return False
    wanted = copy.deepcopy(loaded)
    try:
        change(wanted)
    except (KeyError, TypeError, AttributeError):
        return False
    return bool(_load(after) == wanted)


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
