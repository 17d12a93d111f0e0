from __future__ import annotations

from git_continuity import repo as git
from git_continuity import store
from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import Blocker, new_id, now, shown, stamp, to_json
from git_continuity.repo import Repo
from git_continuity.store import packetfile


def add(repo: Repo, *, stream: str, text: str, thread: str | None = None) -> int:
    """Record a blocker; with --thread, it holds that thread out of the ready queue."""
    text = text.strip()
    if not text:
        raise UserError("blocker add needs a non-empty text")
    by = git.identity(repo)
    added: list[Blocker] = []

    def make(snap: store.Snapshot) -> store.Change:
        packet = store.require_packet(snap)
        if thread is not None and thread not in (threads := store.read_threads(snap)):
            known = ", ".join(sorted(threads)) or "none"
            raise UserError(f"--thread {thread}: no such thread (threads: {known}); nothing was written")
        blocker = Blocker(new_id("blocker", {b.id for b in packet.blockers}), text, stamp(now()), by, thread=thread)
        added[:] = [blocker]
        data, values = store.edited_packet(snap, packetfile.Edit("blockers", to_json(blocker), append=True))
        return store.Change(f"blocker add {blocker.id}: {text}", {packetfile.PATH: data}, values)

    store.update(repo, stream, make)
    holds = f"\n  it holds thread {thread} out of the ready queue" if thread else ""
    print(hang(f"Blocker {added[0].id}: ", text) + holds)
    print(f"  (git continuity blocker done {added[0].id} when it is gone)")
    return 0


def done(repo: Repo, *, stream: str, blocker_id: str) -> int:
    def make(snap: store.Snapshot) -> store.Change:
        doc, packet = store.require_packet_doc(snap)
        match = [b for b in packet.blockers if b.id == blocker_id]
        if not match:
            open_ids = ", ".join(b.id for b in packet.open_blockers()) or "none"
            raise UserError(f"no blocker {blocker_id!r} in stream '{stream}' (open blockers: {open_ids})")
        if match[0].done_at:
            raise UserError(f"blocker {blocker_id} was already done at {match[0].done_at}")
        packetfile.finish_blocker(doc, blocker_id, stamp(now()))
        return store.Change(f"blocker done {blocker_id}: {match[0].text}", {packetfile.PATH: packetfile.dump(doc)})

    store.update(repo, stream, make)
    print(f"Blocker {blocker_id} is done.")
    return 0


def list_blockers(repo: Repo, *, stream: str, as_json: bool) -> int:
    """Every blocker of the packet: the open ones, then the done ones, each oldest first."""
    from git_continuity.render import text as render

    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    packet = store.read_packet(snap)
    if packet is None:
        raise UserError("the packet is malformed:\n  " + "\n  ".join(snap.problems))
    blockers = sorted(packet.blockers, key=lambda b: (b.done_at is not None, b.added_at, b.id))
    if as_json:
        render.emit_json(
            "blocker-list",
            {
                "stream": stream,
                "blockers": [
                    {"id": b.id, "text": b.text, "added_at": b.added_at, "added_by": b.added_by, "done_at": b.done_at}
                    | ({"thread": b.thread} if b.thread else {})
                    for b in blockers
                ],
            },
        )
        return 0
    if not blockers:
        print('No blockers: git continuity blocker add "…" records what stops progress.')
    for b in blockers:
        when = f"done {shown(b.done_at)} UTC" if b.done_at else f"added {shown(b.added_at)} UTC by {b.added_by}"
        holds = f", holds {b.thread}" if b.thread else ""
        print(hang(f"  {'done' if b.done_at else 'open'}  {b.id}  ", f"{b.text}  ({when}{holds})"))
    return 0
