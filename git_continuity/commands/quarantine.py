"""`git continuity quarantine list|show|restore|drop`: what doctor --fix moved aside, read,
put back once it is well-formed again, or dropped for good (recorded in the journal)."""

from __future__ import annotations

import hashlib

from git_continuity import store
from git_continuity.clone import session
from git_continuity.model import JournalEntry, new_id, now, stamp
from git_continuity.repo import Repo
from git_continuity.store import quarantine


def _snap(repo: Repo, stream: str) -> store.Snapshot:
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    return snap


def list_kept(repo: Repo, *, stream: str, as_json: bool) -> int:
    snap = _snap(repo, stream)
    found = quarantine.kept(snap)
    if as_json:
        from git_continuity.render import text as render

        files = [
            {
                "name": k.name,
                "was": k.was,
                "bytes": k.size,
                "missing": k.missing,
                "path": f"{quarantine.FOLDER}/{k.name}",
            }
            for k in found
        ]
        render.emit_json("quarantine-list", {"stream": stream, "files": files})
        return 0
    if not found:
        print(f"The quarantine of stream '{stream}' is empty.")
        return 0
    print(f"Quarantine of stream '{stream}' ({len(found)} file{'s' if len(found) != 1 else ''}, never read as state):")
    for k in found:
        said = "its object was missing when it was moved" if k.missing else f"{k.size:,} bytes"
        print(f"  {k.name}  (was {k.was}; {said})")
    print("Read one: git continuity quarantine show NAME; put it back: restore NAME; drop it: drop NAME (or --all)")
    return 0


def show(repo: Repo, *, stream: str, name: str) -> int:
    snap = _snap(repo, stream)
    (item,) = quarantine.pick(snap, [name], False)
    print(f"{quarantine.FOLDER}/{item.name} (was {item.was}):")
    print(quarantine.content(snap, item).decode(errors="replace").rstrip("\n"))
    return 0


def restore(repo: Repo, *, stream: str, names: list[str], every: bool) -> int:
    back: list[quarantine.Kept] = []

    def make(snap: store.Snapshot) -> store.Change:
        chosen = quarantine.pick(snap, names, every)
        files: dict[str, bytes | None] = {}
        for item in chosen:
            files[item.was] = quarantine.restorable(snap, item)
            files[f"{quarantine.FOLDER}/{item.name}"] = None
        back[:] = chosen
        listed = "".join(f"\n  {k.name} -> {k.was}" for k in chosen)
        return store.Change(f"quarantine restore: {len(chosen)} file{'s' if len(chosen) != 1 else ''}{listed}", files)

    store.update(repo, stream, make)
    for k in back:
        print(f"Restored {k.was} from the quarantine: it is well-formed and read as state again.")
    return 0


def drop(repo: Repo, *, stream: str, names: list[str], every: bool) -> int:
    who = session.who(repo)
    moment = now()
    gone: list[quarantine.Kept] = []
    entry_id: list[str] = []

    def make(snap: store.Snapshot) -> store.Change:
        chosen = quarantine.pick(snap, names, every)
        lines = []
        for k in chosen:
            digest = hashlib.sha1(quarantine.content(snap, k)).hexdigest()
            lines.append(f"- {k.name} (was {k.was}; {k.size:,} bytes, sha1 {digest})")
        text = (
            f"Dropped {len(chosen)} file{'s' if len(chosen) != 1 else ''} from the quarantine (moved aside by doctor"
            " --fix; the state history keeps them):\n" + "\n".join(lines)
        )
        entry = JournalEntry(new_id("journal"), text, stamp(moment), who.by, who.host, **who.stamp(), kind="finding")
        files: dict[str, bytes | None] = {f"{quarantine.FOLDER}/{k.name}": None for k in chosen}
        files[store.journal_path(entry, moment)] = store.entry_bytes(entry)
        gone[:] = chosen
        entry_id[:] = [entry.id]
        return store.Change(f"quarantine drop: {len(chosen)} file{'s' if len(chosen) != 1 else ''}\n\n{text}", files)

    store.update(repo, stream, make)
    print(
        f"Dropped {len(gone)} file{'s' if len(gone) != 1 else ''} from the quarantine;"
        f" journal entry {entry_id[0]} says which:"
    )
    for k in gone:
        print(f"  {k.name}  (was {k.was})")
    return 0
