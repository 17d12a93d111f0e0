from __future__ import annotations

from typing import Any

from git_continuity import display, store
from git_continuity.errors import UserError
from git_continuity.model import Packet, Thread
from git_continuity.repo import Repo
from git_continuity.store import packetfile, planning

WHOLE = "git continuity next --full"  # what shows a long next action whole (display.cut)


def next_action(repo: Repo, *, stream: str, text: str | None, as_json: bool = False, clear: bool = False) -> int:
    """Set the next action, clear it (--clear), or print it when no text is given (with
    --json, as JSON); when none is set, the first thread of the ready queue stands in."""
    if clear:
        return _clear(repo, stream, text, as_json)
    if text is None:
        snap = store.snapshot(repo, stream)
        store.require_state(snap)
        packet = store.read_packet(snap)
        if packet is None:
            raise UserError("the packet is malformed:\n  " + "\n  ".join(snap.problems))
        first = _first_ready(snap, packet)
        if as_json:
            from git_continuity.render import text as render
            from git_continuity.view import signed_items

            document = _document(stream, packet.next_action, first)
            render.emit_json("next", document, signed_items.marker(repo, stream, snap.commit))
        elif first is not None:
            print(display.hang(f"(none set) ready first: {first.id}  ", display.cut(first.title, WHOLE)))
            print("  (git continuity ready lists the queue; git continuity next TEXT sets the next action)")
        else:
            print(display.cut(packet.next_action or "(none: git continuity next TEXT)", WHOLE))
        return 0
    text = text.strip()
    if not text:
        raise UserError("next needs a non-empty text: the first thing the next session should do")

    def make(snap: store.Snapshot) -> store.Change:
        data, values = store.edited_packet(snap, packetfile.Edit("next_action", text))
        return store.Change(f"next: {text}", {packetfile.PATH: data}, values)

    store.update(repo, stream, make)
    if as_json:
        from git_continuity.render import text as render

        render.emit_json("next", {"stream": stream, "next_action": text})
    else:
        print(display.hang("Next action: ", display.cut(text, WHOLE)))
    return 0


def _first_ready(snap: store.Snapshot, packet: Packet | None) -> Thread | None:
    """The first thread of the ready queue, which stands in when no next action is set."""
    if packet is None or packet.next_action:
        return None
    queue = planning.ready(store.read_threads(snap), packet.blockers)
    return queue[0] if queue else None


def _document(stream: str, next_action: str | None, first: Thread | None) -> dict[str, Any]:
    """What ``next --json`` prints (schema/next.schema.json), the same after --clear."""
    found: dict[str, Any] = {"stream": stream, "next_action": next_action}
    if first is not None:
        found["ready"] = {"id": first.id, "title": first.title, "priority": planning.priority_of(first)}
    return found


def _clear(repo: Repo, stream: str, text: str | None, as_json: bool) -> int:
    if text is not None:
        raise UserError("next --clear takes no text: it removes the next action (next TEXT sets one)")
    first = store.snapshot(repo, stream)
    store.require_state(first)
    current = store.read_packet(first)
    if current is not None and current.next_action is None:
        if as_json:  # nothing to clear: no state commit for a change that changes nothing
            from git_continuity.render import text as render

            render.emit_json("next", _document(stream, None, _first_ready(first, current)))
        else:
            print("No next action is set: nothing to clear.")
        return 0
    was: list[str | None] = []

    def make(snap: store.Snapshot) -> store.Change:
        packet = store.require_packet(snap)
        was[:] = [packet.next_action]
        data, values = store.edited_packet(snap, packetfile.Edit("next_action", None))
        return store.Change(f"next --clear: was {packet.next_action or 'none'}", {packetfile.PATH: data}, values)

    store.update(repo, stream, make)
    if as_json:
        from git_continuity.render import text as render

        after = store.snapshot(repo, stream)
        render.emit_json("next", _document(stream, None, _first_ready(after, store.read_packet(after))))
    else:
        print(f"Next action cleared (it was: {was[0]})." if was and was[0] else "Next action cleared (none was set).")
    return 0
