"""``packet.yaml``: round-trip YAML that keeps a person's comments and order.

Every change goes through load -> edit the mapping -> dump, never through a template, so
what someone wrote by hand (comments, key order, extra blank lines) survives the tool.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from git_continuity import schema

if TYPE_CHECKING:  # ruamel.yaml costs ~25 ms to import: only what edits or parses pays it
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
from git_continuity.model import Blocker, Objective, Packet, to_json

PATH = ".continuity/packet.yaml"

TEMPLATE = """\
# git-continuity packet: the person-edited part of this stream's state.
# Edit it with `git continuity edit`; the commands change it too. Comments are kept.

# What this line of work is for: git continuity objective set TEXT --why TEXT
objective:
# The first thing the next session should do: git continuity next TEXT
next_action:
# What stops progress: git continuity blocker add TEXT, then blocker done ID
blockers: []
"""


class PacketError(Exception):
    """The packet is not valid YAML or breaks its schema; the message names file, key, line."""


def _yaml() -> YAML:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def parse(text: str, where: str = PATH, *, validate: bool = True) -> tuple[CommentedMap, Packet]:
    """The document (to edit and dump) and the packet it holds, or PacketError.

    ``validate=False`` is for content already validated once (the schema check imports
    jsonschema, too slow for every status)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        doc = _yaml().load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise PacketError(f"{where}{line}: not valid YAML: {error.problem}") from None
    except YAMLError as error:
        raise PacketError(f"{where}: not valid YAML: {error}") from None
    if doc is None:
        doc = CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise PacketError(f"{where} line 1: expected a mapping of keys (objective, ...)")
    found = schema.problems("packet", plain(doc)) if validate else []
    if found:
        raise PacketError("\n".join(f"{where}{_line_of(doc, p)}: {schema.key_path(p)}: {m}" for p, m in found))
    return doc, packet_from(doc)


def plain(node: Any) -> Any:
    """The document as plain dicts and lists (what the schema and JSON see)."""
    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node


def _line_of(doc: CommentedMap, path: tuple[str | int, ...]) -> str:
    """' line N' for the deepest part of path that the document has, '' if none."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    node: Any = doc
    line: int | None = None
    for part in path:
        try:
            if isinstance(node, CommentedMap) and part in node:
                line = node.lc.key(part)[0]
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and part < len(node):
                line = node.lc.item(part)[0]
            else:
                break
            node = node[part]
        except (AttributeError, KeyError, TypeError):
            break
    return f" line {line + 1}" if line is not None else ""


def packet_from(doc: Mapping[str, Any]) -> Packet:
    objective = doc.get("objective")
    return Packet(
        objective=Objective(**{k: str(v) for k, v in objective.items()}) if objective else None,
        next_action=doc.get("next_action"),
        blockers=[Blocker(**{k: str(v) for k, v in b.items()}) for b in doc.get("blockers") or []],
    )


def dump(doc: CommentedMap) -> bytes:
    out = io.StringIO()
    _yaml().dump(doc, out)
    return out.getvalue().encode()


def set_objective(doc: CommentedMap, objective: Objective) -> None:
    from ruamel.yaml.comments import CommentedMap

    doc["objective"] = CommentedMap(to_json(objective))


def set_next_action(doc: CommentedMap, text: str) -> None:
    doc["next_action"] = text


def add_blocker(doc: CommentedMap, blocker: Blocker) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if doc.get("blockers") is None:
        doc["blockers"] = CommentedSeq()
    doc["blockers"].append(CommentedMap(to_json(blocker)))


def finish_blocker(doc: CommentedMap, blocker_id: str, at: str) -> None:
    for item in doc.get("blockers") or []:
        if item.get("id") == blocker_id:
            item["done_at"] = at


def set_values(doc: CommentedMap, values: Mapping[str, Any]) -> None:
    """Put merged values into a document, changing only what differs so that comments stay
    where they are: mappings are updated in place, blockers kept in place by id."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if plain(doc.get("objective")) != values["objective"]:
        current = doc.get("objective")
        if isinstance(current, CommentedMap) and values["objective"] is not None:
            _update_mapping(current, values["objective"])
        else:
            doc["objective"] = CommentedMap(values["objective"]) if values["objective"] is not None else None
    if doc.get("next_action") != values["next_action"]:
        doc["next_action"] = values["next_action"]
    wanted = list(values["blockers"])
    if plain(doc.get("blockers") or []) == wanted:
        return
    items = doc.get("blockers")
    if not isinstance(items, CommentedSeq):
        doc["blockers"] = CommentedSeq(CommentedMap(b) for b in wanted)
        return
    by_id = {b["id"]: b for b in wanted}
    for index in reversed(range(len(items))):
        if items[index].get("id") not in by_id:
            del items[index]
    present = {item.get("id") for item in items}
    for item in items:
        _update_mapping(item, by_id[item.get("id")])
    for blocker in wanted:
        if blocker["id"] not in present:
            items.append(CommentedMap(blocker))


def _update_mapping(target: CommentedMap, value: Mapping[str, Any]) -> None:
    for key in [k for k in target if k not in value]:
        del target[key]
    for key, item in value.items():
        if target.get(key) != item:
            target[key] = item
