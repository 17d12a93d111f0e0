from __future__ import annotations

import subprocess

from git_continuity import atomic, packetfile, session, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.model import ObjectiveChange, new_id, now, stamp
from git_continuity.repo import Repo


def _editor(repo: Repo) -> str:
    # git var applies git's own order: GIT_EDITOR, core.editor, VISUAL, EDITOR, vi.
    done = subprocess.run(["git", f"--git-dir={repo.common_dir}", "var", "GIT_EDITOR"], capture_output=True, text=True)
    editor = done.stdout.strip()
    if done.returncode != 0 or not editor:
        raise UserError("no editor configured: set GIT_EDITOR, core.editor, VISUAL or EDITOR")
    return editor


def edit(repo: Repo, *, stream: str) -> int:
    """Open the packet in the editor; commit it only if it is valid YAML and fits the schema."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    assert snap.tree is not None
    original_oid = git.entry_oid(repo, snap.tree, packetfile.PATH)
    original = git.blob(repo, original_oid).decode(errors="replace") if original_oid else packetfile.TEMPLATE
    kept = repo.local_dir / "edit" / f"{stream}.packet.yaml"
    if kept.exists():
        print(f"Resuming your earlier edit kept in {kept} (delete it to start over).")
        start = kept.read_text()
    else:
        start = original
        kept.parent.mkdir(parents=True, exist_ok=True)
        atomic.write(kept, start)
    editor = _editor(repo)
    if subprocess.run(["sh", "-c", f'{editor} "$@"', editor, str(kept)]).returncode != 0:
        raise UserError(f"the editor ({editor}) failed; your edit is kept in {kept}")
    text = kept.read_text()
    if text == original:
        kept.unlink()
        print("No changes.")
        return 0
    try:
        _, edited = packetfile.parse(text, str(kept))
    except packetfile.YamlError as error:
        raise UserError(
            f"{error}\nNothing was written. Your edit is kept in {kept}; run git continuity edit again to fix it."
        ) from None
    before = None
    if original_oid:
        try:  # validated: a packet broken by hand is what edit repairs, so it may not parse
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
        if new is not None and new.text != old:
            change = ObjectiveChange(
                new_id("objective"), old, new.text, new.why, stamp(moment), who.by, who.host, **who.stamp()
            )
            files[store.objective_path(change, moment)] = store.entry_bytes(change)
        return store.Change("edit: packet edited by hand", files)

    store.update(repo, stream, make, replacing=packetfile.PATH)
    kept.unlink()
    print("Packet updated.")
    return 0
