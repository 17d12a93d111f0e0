"""Conflicts a merge of two clones' state left for a person to look at: list and dismiss."""

from __future__ import annotations

from git_continuity import store
from git_continuity.errors import UserError
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import conflict_text
from git_continuity.store.merge import conflict_path


def list_conflicts(repo: Repo, *, stream: str, as_json: bool) -> int:
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    conflicts = store.read_conflicts(snap)
    if as_json:
        records = [c.to_json() for c in conflicts]
        render.emit_json("conflict-list", {"stream": stream, "conflicts": records, "problems": snap.problems})
    else:
        print("\n".join(conflict_text.conflict_lines(conflicts)) or "No conflicts.")
        for p in snap.problems:
            print(f"problem: {p}")
    return 2 if snap.problems else 0


def dismiss(repo: Repo, *, stream: str, ids: list[str]) -> int:
    """Delete conflict records once looked at; a deletion merges like any other, so a
    dismissed conflict stays dismissed on every clone."""

    if empty := [i for i in ids if not i.strip()]:
        raise UserError(
            f"conflict dismiss: the conflict id is empty ({empty[0]!r}): git continuity conflict list shows the ids"
        )

    def make(snap: store.Snapshot) -> store.Change:
        known = {c.id for c in store.read_conflicts(snap)}
        missing = [i for i in ids if i not in known]
        if missing:
            listed = ", ".join(sorted(known)) or "none"
            raise UserError(f"no conflict {', '.join(missing)} in stream '{stream}' (conflicts: {listed})")
        return store.Change(f"conflict dismiss {' '.join(ids)}", {conflict_path(i): None for i in dict.fromkeys(ids)})

    store.update(repo, stream, make)
    print(f"Dismissed {', '.join(dict.fromkeys(ids))}.")
    return 0
