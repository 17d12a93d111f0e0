from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from git_continuity import atomic, display, gitcli, store
from git_continuity import repo as git
from git_continuity.clone import session
from git_continuity.display import cut
from git_continuity.errors import UserError
from git_continuity.model import ObjectiveChange, new_id, now, stamp
from git_continuity.repo import Repo
from git_continuity.store import packetfile, schema

REMOVED_WHY = "removed by hand with git continuity edit"


def _editor(repo: Repo) -> str:
    # git var applies git's own order: GIT_EDITOR, core.editor, VISUAL, EDITOR, vi.
    done = gitcli.run("var", "GIT_EDITOR", git_dir=repo.common_dir)
    editor = done.stdout.strip()
    if done.returncode != 0 or not editor:
        raise UserError("no editor configured: set GIT_EDITOR, core.editor, VISUAL or EDITOR")
    return editor


def _kept(repo: Repo, stream: str) -> Path:
    return repo.local_dir / "edit" / f"{stream}.packet.yaml"


def _drop_kept(repo: Repo, *, stream: str) -> int:
    """Drop the edit kept from an earlier attempt that was refused."""
    kept = _kept(repo, stream)
    if not kept.exists():
        print("No kept edit to drop.")
        return 0
    kept.unlink()
    print(f"Dropped the edit kept in {kept}.")
    return 0


def _read_kept(kept: Path) -> str:
    data = kept.read_bytes()
    try:
        return data.decode()
    except UnicodeDecodeError as error:
        raise UserError(
            f"{kept}{display.undecodable(data, error)}.\n"
            f"Nothing was written. Fix it and run git continuity edit again, or drop it: git continuity edit --discard"
        ) from None


def edit(repo: Repo, *, stream: str, discard: bool = False) -> int:
    """Open the packet in the editor; commit it only if it is valid YAML and fits the schema."""
    if discard:
        return _drop_kept(repo, stream=stream)
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    assert snap.tree is not None
    original_oid = git.entry_oid(repo, snap.tree, packetfile.PATH)
    original = git.blob(repo, original_oid).decode(errors="replace") if original_oid else packetfile.TEMPLATE
    kept = _kept(repo, stream)
    if kept.exists():
        print(f"Resuming your earlier edit kept in {kept} (git continuity edit --discard drops it).")
    else:
        atomic.write(kept, original)
    editor = _editor(repo)
    if subprocess.run(["sh", "-c", f'{editor} "$@"', editor, str(kept)]).returncode != 0:
        raise UserError(f"the editor ({editor}) failed; your edit is kept in {kept}")
    text = _read_kept(kept)
    if text == original:
        kept.unlink()
        print("No changes.")
        return 0
    try:
        doc, edited = packetfile.parse(text, str(kept))
    except packetfile.YamlError as error:
        raise UserError(
            f"{error}\nNothing was written. Your edit is kept in {kept}; run git continuity edit again to fix it,"
            " or drop it: git continuity edit --discard"
        ) from None
    if not doc:
        # As git does with an empty commit message: an emptied buffer means "never mind".
        kept.unlink()
        aborted = UserError(
            "the edited packet is empty (nothing but comments and blank lines): nothing was written.\n"
            "To clear a value, keep its key and leave it empty (objective:, next_action:, blockers: [])."
        )
        aborted.exit_code = 1
        raise aborted
    before_doc: Mapping[str, Any] = {}
    before = None
    if original_oid:
        # A packet broken by hand is what edit repairs, so it may not parse, or not validate.
        try:
            limit = schema.MAX_BYTES["packet"]
            before_doc = packetfile.plain(packetfile.load_mapping(original, packetfile.PATH, "", limit=limit))
            _, before = packetfile.parse(original)
        except packetfile.YamlError:
            before = None
    moment, who = now(), session.who(repo)

    def make(s: store.Snapshot) -> store.Change:
        assert s.tree is not None
        if git.entry_oid(repo, s.tree, packetfile.PATH) != original_oid:
            raise UserError(
                f"the packet changed while you were editing; your edit is kept in {kept}: run git continuity edit again"
            )
        files: dict[str, bytes | None] = {packetfile.PATH: text.encode()}
        old = before.objective.text if before and before.objective else None
        new = edited.objective
        change = None
        if new is not None and new.text != old:
            change = ObjectiveChange(
                new_id("objective"), old, new.text, new.why, stamp(moment), who.by, who.host, **who.stamp()
            )
        elif new is None and old is not None:
            change = ObjectiveChange(
                new_id("objective"), old, None, REMOVED_WHY, stamp(moment), who.by, who.host, **who.stamp()
            )
        if change is not None:
            files[store.objective_path(change, moment)] = store.entry_bytes(change)
        return store.Change("edit: packet edited by hand", files)

    store.update(repo, stream, make, replacing=packetfile.PATH)
    kept.unlink()
    changed = changes(before_doc, packetfile.plain(doc))
    if not changed:
        print("Packet updated: comments or layout only, no value changed.")
    else:
        print("Packet updated:\n" + "\n".join(f"  {line}" for line in changed))
    return 0


def _leaves(value: Any, path: str, out: dict[str, Any]) -> dict[str, Any]:
    """Each value in a packet by its path (``objective.why``, ``blockers.b-k7m2qx.text``);
    blockers are named by id, so one removed does not renumber the rest."""
    if isinstance(value, dict):
        for key, item in value.items():
            _leaves(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            name = item.get("id") if isinstance(item, dict) and isinstance(item.get("id"), str) else index
            _leaves(item, f"{path}.{name}", out)
    elif value is not None:
        out[path] = value
    return out


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    return cut(json.dumps(value, ensure_ascii=False), "git continuity status --json", 200)


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """``field: old → new`` for each value that differs, in the order of the edited file."""
    old, new = _leaves(dict(before), "", {}), _leaves(dict(after), "", {})
    paths = list(new) + [p for p in old if p not in new]
    return [f"{p}: {_value(old.get(p))} → {_value(new.get(p))}" for p in paths if old.get(p) != new.get(p)]
