"""``packet.yaml``: round-trip YAML that keeps a person's comments and order.

Every change goes through load -> edit the mapping -> dump, never through a template, so
what someone wrote by hand (comments, key order, extra blank lines) survives the tool.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_continuity.store import packetedit, schema

if TYPE_CHECKING:  # ruamel.yaml costs ~25 ms to import: only what edits or parses pays it
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.composer import Composer
from git_continuity.model import Blocker, Objective, Packet

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


class YamlError(Exception):
    """A YAML file is not valid YAML or breaks its schema; the message names file, key, line."""


def _yaml() -> YAML:
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.Composer = _composer()
    yaml.max_depth = MAX_DEPTH
    return yaml


MAX_DEPTH = 20  # the packet nests three levels deep; a deeper file is an attack or a mistake
NO_ALIASES = "anchors and aliases (&name, *name) are not allowed here: write each value out"


@functools.cache
def _composer() -> type[Composer]:
    """ruamel's composer, refusing anchors and aliases. Nine levels of nine aliases each make
    a 252-byte packet that expands to hundreds of millions of values on every clone that reads
    it (issue 10); nothing a packet or a policy holds needs them."""
    from ruamel.yaml.composer import Composer, ComposerError
    from ruamel.yaml.events import AliasEvent

    class NoAliases(Composer):
        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.parser.peek_event()
            if isinstance(event, AliasEvent) or getattr(event, "anchor", None) is not None:
                raise ComposerError(None, None, NO_ALIASES, event.start_mark)
            return super().compose_node(parent, index)

    return NoAliases


def parse(text: str, where: str = PATH, *, validate: bool = True) -> tuple[CommentedMap, Packet]:
    """The document (to edit and dump) and the packet it holds, or YamlError.

    ``validate=False`` is for content already validated once (the schema check imports
    jsonschema, too slow for every status)."""
    doc = load_mapping(text, where, "objective, next_action, blockers", limit=schema.MAX_BYTES["packet"])
    found = schema.problems("packet", plain(doc)) if validate else []
    if found:
        raise YamlError("\n".join(f"{where}{line_of(doc, p)}: {schema.key_path(p)}: {m}" for p, m in found))
    if validate:
        _require_own_ids(doc, where)
    return doc, packet_from(doc)


def _require_own_ids(doc: CommentedMap, where: str) -> None:
    """Each blocker has an id of its own: two with one id are one blocker to every command
    (done marks both) and to a merge (one's text replaced the other's)."""
    first: dict[str, int] = {}
    for index, blocker in enumerate(doc.get("blockers") or []):
        taken = first.setdefault(str(blocker["id"]), index)
        if taken != index:
            raise YamlError(
                f"{where}{line_of(doc, ('blockers', index, 'id'))}: blockers.{index}.id: {blocker['id']} is the id of"
                f" blockers.{taken} too ({line_of(doc, ('blockers', taken, 'id')).strip()}): give each blocker an id of"
                " its own"
            )


def load_mapping(text: str, where: str, keys: str, *, limit: int) -> CommentedMap:
    """A round-trip YAML mapping (empty for an empty file), or YamlError naming the line.
    A text over ``limit`` bytes is refused before it is parsed."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    too_big = schema.size_problem(len(text.encode(errors="surrogateescape")), limit)
    if too_big:
        raise YamlError(f"{where}: {too_big}: it was not read")

    try:
        doc = _yaml().load(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f" line {mark.line + 1}" if mark is not None else ""
        if error.problem == NO_ALIASES:
            raise YamlError(f"{where}{line}: {NO_ALIASES}") from None
        if str(error.problem).startswith("maximum depth"):
            raise YamlError(f"{where}{line}: nested deeper than {MAX_DEPTH} levels") from None
        raise YamlError(f"{where}{line}: not valid YAML: {error.problem}") from None
    except YAMLError as error:
        raise YamlError(f"{where}: not valid YAML: {error}") from None
    if doc is None:
        return CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise YamlError(f"{where} line 1: expected a mapping of keys ({keys})")
    return doc


def plain(node: Any) -> Any:
    """The document as plain dicts and lists (what the schema and JSON see)."""
    if isinstance(node, dict):
        return {str(k): plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [plain(v) for v in node]
    return node


def line_of(doc: CommentedMap, path: tuple[str | int, ...]) -> str:
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
    return _text(doc).encode()


def _text(doc: CommentedMap) -> str:
    out = io.StringIO()
    _yaml().dump(doc, out)
    return out.getvalue()


def _last_entry(parent: Any, key: Any) -> tuple[Any, Any]:
    """Where ruamel keeps a comment written after the value at ``parent[key]``: on the
    deepest last entry of that value (or on the key itself when the value is a scalar)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    node = parent[key]
    while isinstance(node, (CommentedMap, CommentedSeq)) and len(node):
        parent, key = node, (list(node)[-1] if isinstance(node, CommentedMap) else len(node) - 1)
        node = parent[key]
    return parent, key


def _slot(parent: Any) -> int:
    from ruamel.yaml.comments import CommentedMap

    return 2 if isinstance(parent, CommentedMap) else 0  # ruamel's place for a post comment


def _pop_following(parent: Any, key: Any) -> str | None:
    """Take the comment lines that follow the value at ``parent[key]`` (an inline comment on
    its last line stays where it is)."""
    holder, at = _last_entry(parent, key)
    entry = holder.ca.items.get(at)
    token = entry[_slot(holder)] if entry else None
    if token is None:
        return None
    inline, _, following = str(token.value).partition("\n")
    if not following:
        return None
    if inline.strip():
        token.value = inline + "\n"
    else:
        entry[_slot(holder)] = None
    return str(following)


def _put_following(parent: Any, key: Any, following: str) -> None:
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    holder, at = _last_entry(parent, key)
    entry = holder.ca.items.setdefault(at, [None] * (4 if isinstance(holder, CommentedMap) else 2))
    token = entry[_slot(holder)]
    if token is None:
        entry[_slot(holder)] = CommentToken("\n" + following, CommentMark(0), None)
    else:
        token.value = token.value.rstrip("\n") + "\n" + following


def _change(parent: Any, key: Any, change: Any) -> None:
    """Apply ``change`` to the value at ``parent[key]`` keeping the comment lines a person
    wrote after that value after it. ruamel keeps them on the value's last entry, so a
    value that grows (a blocker added, ``done_at`` set, an objective that was empty) would
    otherwise carry them into its middle: a comment at the end of the file would land inside
    the last blocker."""
    present = key < len(parent) if isinstance(parent, list) else key in parent
    last = (len(parent) - 1 if isinstance(parent, list) else list(parent)[-1]) if len(parent) else None
    anchor = key if present else last
    following = _pop_following(parent, anchor) if anchor is not None else None
    change()
    if following:
        _put_following(parent, key, following)


@dataclass(frozen=True)
class Edit:
    """One change of the packet: top-level ``key`` set to ``value``, or (``append``) ``value``
    added at the end of the list at ``key``. The value is plain data, as JSON holds it."""

    key: str
    value: Any
    append: bool = False

    def on_values(self, values: dict[str, Any]) -> None:
        """Make the change on the packet's plain values."""
        values[self.key] = [*(values.get(self.key) or []), self.value] if self.append else self.value

    def on_doc(self, doc: CommentedMap) -> None:
        """Make the change on the round-trip document (comments after the value stay after it)."""
        from ruamel.yaml.comments import CommentedSeq

        def change() -> None:
            if not self.append:
                doc[self.key] = _node(self.value)
                return
            if doc.get(self.key) is None:
                doc[self.key] = CommentedSeq()
            doc[self.key].append(_node(self.value))

        _change(doc, self.key, change)

    def on_text(self, text: str) -> str | None:
        """The change spliced into the packet's text (packetedit), in the lines ruamel writes
        for it; None where the splice does not prove exactly this change (then ``on_doc``).
        The text must be a packet read once without problems: libyaml expands aliases."""
        from ruamel.yaml.comments import CommentedMap, CommentedSeq

        if not self.append:

            def render(style: str | None) -> str:
                return _text(CommentedMap({self.key: _styled(_node(self.value), style)}))

            return packetedit.replaced(text, self.key, render, self.on_values)
        lines = _text(CommentedMap({self.key: CommentedSeq([_node(self.value)])})).partition("\n")[2]
        return packetedit.appended(text, self.key, lines, self.on_values)


def _styled(value: Any, style: str | None) -> Any:
    """A text written as the value it replaces was (quoted, a block): what ruamel's round trip
    does too (CommentedMap.__setitem__ keeps a scalar's type), so both write the same."""
    from ruamel.yaml import scalarstring as s

    kinds = {'"': s.DoubleQuotedScalarString, "'": s.SingleQuotedScalarString, "|": s.LiteralScalarString}
    kinds[">"] = s.FoldedScalarString
    return kinds[style](value) if isinstance(value, str) and style in kinds else value


def _node(value: Any) -> Any:
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap(value) if isinstance(value, dict) else value


def finish_blocker(doc: CommentedMap, blocker_id: str, at: str) -> None:
    blockers = doc.get("blockers") or []
    for index, item in enumerate(blockers):
        if item.get("id") == blocker_id:
            _set_done(doc, blockers, index, at)


def _set_done(doc: CommentedMap, blockers: Any, index: int, at: str) -> None:
    # A comment between this blocker and the next stays between them, and one at the end
    # of the file stays at the end.
    def set_done() -> None:
        blockers[index]["done_at"] = at

    _change(doc, "blockers", lambda: _change(blockers, index, set_done))


def set_values(doc: CommentedMap, values: Mapping[str, Any]) -> None:
    """Put merged values (objective, next_action, blockers as a list) into a document,
    changing only what differs so comments stay where they are: mappings are updated in
    place, blockers kept in place by id, new ones appended."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    objective = values["objective"]
    if plain(doc.get("objective")) != objective:

        def set_objective() -> None:
            current = doc.get("objective")
            if isinstance(current, CommentedMap) and objective is not None:
                _update_mapping(current, objective)
            else:
                doc["objective"] = CommentedMap(objective) if objective is not None else None

        _change(doc, "objective", set_objective)
    if doc.get("next_action") != values["next_action"]:
        _change(doc, "next_action", lambda: doc.__setitem__("next_action", values["next_action"]))
    wanted = list(values["blockers"])
    if plain(doc.get("blockers") or []) == wanted:
        return

    def set_blockers() -> None:
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

    _change(doc, "blockers", set_blockers)


def _update_mapping(target: CommentedMap, value: Mapping[str, Any]) -> None:
    for key in [k for k in target if k not in value]:
        del target[key]
    for key, item in value.items():
        if target.get(key) != item:
            target[key] = item


def comments(doc: CommentedMap) -> list[str]:
    """The comment lines a person wrote, in document order, and the order of the top-level
    keys: what a merge keeps from one side only, so it can tell whether the other changed it.
    Where ruamel hangs a comment (on a key, or on the last entry of its value) depends on the
    values around it, so only the sequence of lines counts, not where each is attached."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    found: list[str] = [f"key {k}" for k in doc]

    def tokens(item: Any) -> None:
        if isinstance(item, list):
            for sub in item:
                tokens(sub)
        elif item is not None and hasattr(item, "value"):
            found.extend(line.strip() for line in str(item.value).splitlines() if line.strip())

    def walk(node: Any) -> None:
        if not isinstance(node, (CommentedMap, CommentedSeq)):
            return
        tokens(node.ca.comment)
        for key in list(node) if isinstance(node, CommentedMap) else range(len(node)):
            tokens(node.ca.items.get(key))
            walk(node[key])
        tokens(node.ca.end)

    walk(doc)
    return found
