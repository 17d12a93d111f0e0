"""place set|list|clear: which branches and worktrees are the home, donors, archives,
preservation branches and cleanrooms (store/places.py)."""

from __future__ import annotations

from git_continuity import store
from git_continuity.clone import places as place_guard
from git_continuity.clone import session
from git_continuity.display import hang
from git_continuity.errors import UserError
from git_continuity.model import now, shown, stamp, to_json
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import places


def set_place(repo: Repo, *, stream: str, where: str, role: str, why: str) -> int:
    """Give a branch or checkout a role (one home per stream)."""
    why = why.strip()
    if role not in places.ROLES:
        raise UserError(f"unknown role {role!r}: choose one of {', '.join(places.ROLES)}")
    if not why:
        raise UserError("place set needs a non-empty --why: the next session reads it")
    target = places.resolve(repo, where)
    place_id = places.place_id(target.kind, target.name)
    moment = now()
    who = session.who(repo)
    made: list[places.Place] = []
    replaced: list[places.Place] = []

    def make(snap: store.Snapshot) -> store.Change:
        current = places.read(snap)
        # A record of this same checkout by its folder name (written before checkouts were
        # matched by branch) gives way to the record by branch: the one place, migrated.
        older = [p for p in current if target.kind == "checkout" and p.kind == "worktree" and p.name == target.worktree]
        other = [p for p in current if p.role == "home" and p.id != place_id and p not in older]
        if role == "home" and other:
            raise UserError(
                f"stream '{stream}' already has a home: {other[0].label} ({other[0].why}).\n"
                f"Clear it first: git continuity place clear {places.clear_name(other[0], current)}"
            )
        # A branch and the checkout on it are one place wherever the branch is checked out:
        # two roles there contradict each other (a home where commits are refused).
        twin = "checkout" if target.kind == "branch" else "branch" if target.kind == "checkout" else None
        clash = next((p for p in current if p.kind == twin and p.name == target.name and p.role != role), None)
        if clash is not None:
            named = place_guard.label({"kind": target.kind, "name": target.name})
            raise UserError(
                f"{named} cannot be {role}: {clash.label} is {clash.role}, and one checkout would be both.\n"
                f"Clear that role first: git continuity place clear {places.clear_name(clash, current)}"
            )
        place = places.Place(
            id=place_id,
            kind=target.kind,
            name=target.name,
            role=role,
            why=why,
            set_at=stamp(moment),
            set_by=who.by,
            host=who.host,
            tree=target.tree,
            **who.stamp(),
        )
        made[:], replaced[:] = [place], older
        files: dict[str, bytes | None] = {places.path(place_id): store.entry_bytes(place)}
        files.update({places.path(p.id): None for p in older})
        gone = "".join(f"\n\nreplaces {p.id}: {p.label} (by folder name)" for p in older)
        return store.Change(f"place set {place_id}: {place.label} is {role}\n\n{why}{gone}", files)

    store.update(repo, stream, make)
    place = made[0]
    folder = places.found_here(repo, place)[1]
    if target.kind == "worktree":
        places.remember_path(repo, target.name, folder)
    for p in replaced:
        places.remember_path(repo, p.name, None)
    print(f"{place.label} is now {role}: {place_guard.ADVICE[role]}")
    print(hang("  why  ", why))
    if target.kind == "checkout":
        tree = "the main checkout" if target.tree == "main" else "a linked worktree"
        print(f"  on every clone, the checkout on branch {target.name} (here: {tree})")
    for p in replaced:
        print(f"  replaces {p.label}, recorded by its folder name")
    return 0


def clear_place(repo: Repo, *, stream: str, where: str) -> int:
    """Take a place's role away (a deletion, which syncs as one)."""
    first = store.snapshot(repo, stream)
    store.require_state(first)
    known = places.read(first)
    wanted = where.strip()
    gone = places.find(repo, known, wanted)
    if gone is None:
        listed = ", ".join(p.label for p in known) or "none"
        raise UserError(f"no place {wanted!r} in stream '{stream}' (places: {listed})")

    def make(snap: store.Snapshot) -> store.Change:
        return store.Change(f"place clear {gone.id}: {gone.label} was {gone.role}", {places.path(gone.id): None})

    store.update(repo, stream, make)
    if gone.kind == "worktree":
        places.remember_path(repo, gone.name, None)
    print(f"{gone.label} has no role any more (it was {gone.role})")
    return 0


def list_places(repo: Repo, *, stream: str, as_json: bool) -> int:
    """Every place of the stream, whether it exists here, and which one this checkout is."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    known = places.read(snap)
    worktree, branch = places.here(repo)
    rows = []
    for place in known:
        found, folder = places.found_here(repo, place)
        at_place = places.here_in(place, worktree, branch)
        row = {k: v for k, v in to_json(place).items() if k not in ("host", "session", "agent")}
        rows.append({**row, "found": found, "path": str(folder) if folder and found else None, "here": at_place})
    if as_json:
        render.emit_json(
            "place-list",
            {
                "stream": stream,
                "here": {"worktree": worktree, "branch": branch},
                "places": rows,
                "problems": snap.problems,
            },
        )
        return 2 if snap.problems else 0
    if not rows and not snap.problems:
        print(
            f"No places in stream '{stream}'. Name where work happens with:\n"
            "  git continuity place set WHERE home --why TEXT"
        )
        return 0
    for row in rows:
        mark = "*" if row["here"] else " "
        where = f"  {row['path']}" if row["path"] else ("" if row["found"] else "  (not found here)")
        print(f"{mark} {row['role']:<12} {place_guard.label(row).removeprefix('the ')}{where}")
        print(f"    why  {row['why']}  (set {shown(str(row['set_at']))} by {row['set_by']})")
    lead = places.lead(repo, known) + places.homes_warning(known, worktree, branch)
    if lead:
        print()
        print("\n".join(lead))
    for p in snap.problems:
        print(f"problem: {p}")
    return 2 if snap.problems else 0
