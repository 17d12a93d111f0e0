from __future__ import annotations

from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import cut, hang
from git_continuity.errors import UserError
from git_continuity.model import Objective, ObjectiveChange, new_id, now, shown, stamp, to_json
from git_continuity.repo import Repo
from git_continuity.store import packetfile

WHOLE = "git continuity objective log --json"


def set_objective(repo: Repo, *, stream: str, text: str, why: str) -> int:
    text, why = text.strip(), why.strip()
    if not text or not why:
        raise UserError("objective set needs a text and a non-empty --why (the reason is what the next session reads)")
    moment = now()
    who = session.who(repo)
    by = who.by

    def make(snap: store.Snapshot) -> store.Change:
        packet = store.require_packet(snap)
        old = packet.objective.text if packet.objective else None
        change = ObjectiveChange(new_id("objective"), old, text, why, stamp(moment), by, who.host, **who.stamp())
        edit = packetfile.Edit("objective", to_json(Objective(text, why, stamp(moment), by)))
        data, values = store.edited_packet(snap, edit)
        return store.Change(
            f"objective: {text}\n\nwhy: {why}\nwas: {old or '(none)'}",
            {packetfile.PATH: data, store.objective_path(change, moment): store.entry_bytes(change)},
            values,
        )

    store.update(repo, stream, make)
    print(hang("Objective set: ", text))
    print(hang("  why: ", why))
    return 0


def objective_log(repo: Repo, *, stream: str, as_json: bool) -> int:
    from git_continuity.render import text as render

    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    packet = store.read_packet(snap)
    changes = store.read_objective_log(snap)
    if as_json:
        render.emit_json(
            "objective-log",
            {
                "stream": stream,
                "current": render.objective_json(packet.objective if packet else None),
                "changes": [render.change_json(c) for c in changes],
                "problems": snap.problems,
            },
        )
    elif not changes:
        from git_continuity.view.labels import NO_OBJECTIVE

        print(NO_OBJECTIVE[0].upper() + NO_OBJECTIVE[1:] + ".")
    else:
        for c in reversed(changes):
            now_text, was, why = (cut(t, WHOLE) for t in (c.new or "(removed)", c.old or "(none)", c.why))
            said = [hang(f"  {name}: ", text) for name, text in (("now", now_text), ("was", was), ("why", why))]
            print("\n".join([f"{shown(c.at)} UTC  {c.by}", *said, ""]))
    for p in snap.problems if not as_json else []:
        print(f"problem: {p}")
    return 2 if snap.problems else 0
