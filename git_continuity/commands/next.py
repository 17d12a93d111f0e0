from __future__ import annotations

from git_continuity import display, packetfile, store
from git_continuity.errors import UserError
from git_continuity.repo import Repo

WHOLE = "git continuity next --full"  # what shows a long next action whole (display.cut)


def next_action(repo: Repo, *, stream: str, text: str | None, as_json: bool = False) -> int:
    """Set the next action, or print it when no text is given (with --json, as JSON)."""
    if text is None:
        snap = store.snapshot(repo, stream)
        store.require_state(snap)
        packet = store.read_packet(snap)
        if packet is None:
            raise UserError("the packet is malformed:\n  " + "\n  ".join(snap.problems))
        if as_json:
            from git_continuity import render

            render.emit_json("next", {"stream": stream, "next_action": packet.next_action})
        else:
            print(display.cut(packet.next_action or "(none: git continuity next TEXT)", WHOLE))
        return 0
    text = text.strip()
    if not text:
        raise UserError("next needs a non-empty text: the first thing the next session should do")

    def make(snap: store.Snapshot) -> store.Change:
        doc, _ = store.read_packet_doc(snap) or (None, None)
        assert doc is not None
        packetfile.set_next_action(doc, text)
        return store.Change(f"next: {text}", {packetfile.PATH: packetfile.dump(doc)})

    store.update(repo, stream, make)
    if as_json:
        from git_continuity import render

        render.emit_json("next", {"stream": stream, "next_action": text})
    else:
        print(display.hang("Next action: ", display.cut(text, WHOLE)))
    return 0
