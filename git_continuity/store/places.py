"""Places: branches and checkouts with a role (home, donor, archive, preservation, cleanroom).

A place is kept in the stream's state as ``.continuity/places/<id>.json``, keyed by what is
the same on every clone. The repository is the one whose state holds the record (it travels
with it); within it, a place is a branch (``branch``, by name) or the role of a checkout
(``checkout``: the checkout that has a branch checked out, recorded with whether it was the
main checkout or a linked worktree). On each clone a checkout place is the checkout on that
branch, whatever its folder is called. A detached checkout has no branch to be found by, so
it is recorded by its worktree's name (``worktree``), as every place was before (#27); such
records still read and match by name where a worktree of that name exists. The id is a
digest of kind and name, so the same place set on two clones is one file and merges like
any entry. Where a worktree lives is local to the machine: ``.git/continuity/places.json``.
What a role means and where the home is: place_guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_continuity import atomic, store
from git_continuity import repo as git
from git_continuity.clone import places as place_guard
from git_continuity.constants import ID_ALPHABET
from git_continuity.errors import UserError
from git_continuity.model import shown
from git_continuity.repo import Repo
from git_continuity.store import siblings

ROLES = place_guard.ROLES


@dataclass(frozen=True)
class Place:
    id: str
    kind: str  # branch | checkout (name: its branch) | worktree (name: its folder name)
    name: str
    role: str
    why: str
    set_at: str
    set_by: str
    host: str
    session: str | None = None
    agent: str | None = None
    tree: str | None = None  # a checkout's: main (the main checkout) or linked (a linked worktree)

    @property
    def label(self) -> str:
        return place_guard.label(self.key())

    def key(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "role": self.role}


def place_id(kind: str, name: str) -> str:
    digest = hashlib.sha256(f"{kind}\0{name}".encode()).digest()
    return "p-" + "".join(ID_ALPHABET[b % len(ID_ALPHABET)] for b in digest[:6])


def path(place_id: str) -> str:
    return f"{store.ROOT}/places/{place_id}.json"


def read(snap: store.Snapshot) -> list[Place]:
    """The stream's places, the home first, then by role as ROLES lists them, kind and name."""
    found = [Place(**data) for data in store.read_places(snap).values()]
    return sorted(found, key=lambda p: (ROLES.index(p.role), p.kind, p.name))


@dataclass(frozen=True)
class Target:
    """What ``place set WHERE`` names: kind and name as stored, a checkout's tree, and the
    worktree's name here when WHERE named one."""

    kind: str
    name: str
    tree: str | None = None
    worktree: str | None = None


def resolve(repo: Repo, where: str) -> Target:
    """What WHERE is: ``refs/heads/NAME`` is a branch; a plain name is the checkout of the
    worktree of that name if there is one (by the branch it has checked out; by its name when
    detached), else the branch. Neither: exit 2, naming what there is."""
    where = where.strip()
    trees = git.worktrees(repo)
    if where.startswith("refs/heads/"):
        name = where.removeprefix("refs/heads/")
        if name and git.ref_target(repo, where) is not None:
            return Target("branch", name)
    elif where in trees:
        git_dir = repo.common_dir / "worktrees" / where
        linked = git_dir.is_dir()
        branch = place_guard.head_branch(git_dir if linked else repo.common_dir)
        if branch is None:
            return Target("worktree", where, worktree=where)
        return Target("checkout", branch, "linked" if linked else "main", where)
    elif where and not where.startswith("-") and git.ref_target(repo, f"refs/heads/{where}") is not None:
        return Target("branch", where)
    branches = [r.removeprefix("refs/heads/") for r in git.list_refs(repo, "refs/heads/")]
    raise UserError(
        f"no branch or worktree {where!r} here.\n"
        f"  worktrees: {', '.join(sorted(trees)) or 'none'}\n  branches: {', '.join(branches) or 'none'}\n"
        "Name a worktree by its name (git worktree list), a branch by its name or as refs/heads/NAME."
    )


def here(repo: Repo) -> tuple[str | None, str | None]:
    """(this checkout's worktree name, its branch)."""
    return git.worktree_name(repo), git.current_branch(repo)


def lead(repo: Repo, places: list[Place]) -> list[str]:
    """Orientation's first lines (place_guard.lead) for this checkout."""
    worktree, branch = here(repo)
    return place_guard.lead(repo.common_dir, [p.key() for p in places], worktree, branch)


def where_home(repo: Repo, places: list[Place]) -> str:
    return place_guard.where_home(repo.common_dir, [p.key() for p in places])


def _map_file(repo: Repo) -> Path:
    return repo.local_dir / "places.json"


def local_paths(repo: Repo) -> dict[str, str]:
    return place_guard.local_paths(repo.common_dir)


def remember_path(repo: Repo, name: str, folder: Path | None) -> None:
    """Keep (or, with None, forget) where worktree ``name`` lives on this machine."""
    paths = local_paths(repo)
    if folder is None:
        paths.pop(name, None)
    else:
        paths[name] = str(folder)
    data: dict[str, Any] = {"worktrees": dict(sorted(paths.items()))}
    with contextlib.suppress(OSError):  # git's own worktree records still say where a worktree is
        atomic.write(_map_file(repo), json.dumps(data, indent=2) + "\n")


def found_here(repo: Repo, place: Place) -> tuple[bool, Path | None]:
    """Whether the place exists in this clone, and a worktree's folder."""
    if place.kind == "branch":
        return git.ref_target(repo, f"refs/heads/{place.name}") is not None, None
    if place.kind == "checkout":
        at = place_guard.checkout_of(repo.common_dir, place.name)
        return at is not None, at
    folder = git.worktrees(repo).get(place.name)
    if folder is not None:
        return True, folder
    known = local_paths(repo).get(place.name)
    return False, Path(known) if known else None


def homes_warning(known: list[Place], worktree: str | None = None, branch: str | None = None) -> list[str]:
    """Two homes or more: a merge of two clones' states kept the home each had set (place set
    refuses a second one, so only a merge makes them). Which of them this checkout is, which
    one the other places point at, and how to keep one."""
    homes = [p for p in known if p.role == "home"]
    if len(homes) < 2:
        return []
    first = place_guard.find_home([p.key() for p in homes])
    named = next(p for p in homes if first is not None and p.key() == first)
    each = "; ".join(f"{p.label} (set {shown(p.set_at)} by {p.set_by} on {p.host}: {p.why})" for p in homes)
    mine = next((p for p in homes if here_in(p, worktree, branch)), None)
    this = f" This checkout is one of them ({mine.label})." if mine is not None else ""
    others = " or ".join(clear_name(p, known) for p in homes if p is not named)
    return [
        f"Warning: {len(homes)} homes are set, kept by a merge of two clones' states: {each}.{this} "
        f"Until one is cleared, the other places point at {named.label}: git continuity place clear {others}"
    ]


def clear_name(place: Place, known: list[Place]) -> str:
    """What ``place clear`` takes to name this place: its name, or refs/heads/NAME for a
    branch that a checkout or worktree place shares its name with (those come first)."""
    shared = any(p.name == place.name and p.kind != "branch" for p in known)
    return f"refs/heads/{place.name}" if place.kind == "branch" and shared else place.name


def find(repo: Repo, known: list[Place], where: str) -> Place | None:
    """The place ``place clear WHERE`` means: refs/heads/NAME is the branch; a plain name is
    a worktree recorded by that name, else the checkout of the worktree of that name here (by
    its branch), else the checkout of branch NAME, else branch NAME."""
    if where.startswith("refs/heads/"):
        wanted = where.removeprefix("refs/heads/")
        return next((p for p in known if p.kind == "branch" and p.name == wanted), None)
    branch = None
    if where in git.worktrees(repo):
        linked = repo.common_dir / "worktrees" / where
        branch = place_guard.head_branch(linked if linked.is_dir() else repo.common_dir)
    tries: tuple[tuple[str, str | None], ...] = (
        ("worktree", where),
        ("checkout", branch),
        ("checkout", where),
        ("branch", where),
    )
    for kind, name in tries:
        found = next((p for p in known if p.kind == kind and p.name == name), None)
        if found is not None:
            return found
    return None


def here_in(place: Place, worktree: str | None, branch: str | None) -> bool:
    """Whether this checkout is the place (place_guard.matches)."""
    return place_guard.matches(place.key(), worktree, branch)


def siblings_missing(repo: Repo, snap: store.Snapshot) -> list[str]:
    """A line for each sibling of the stream not found on this machine, saying how to point
    at it (nothing is guessed)."""
    listed = siblings.read(snap)
    paths = siblings.local_paths(repo) if listed else {}
    found = [siblings.locate(repo, s, paths) for s in listed]
    return [f"Sibling {f.name} is not found here: {f.reason}; its checks are unknown." for f in found if f.repo is None]


def situation(repo: Repo, snap: store.Snapshot) -> tuple[list[str], dict[str, Any] | None]:
    """Where this checkout stands, for orient and status: the lines they lead with (none when
    this is the home, there are no places, and every sibling is found here) and the place
    for --json (None: no places)."""
    known = read(snap)
    missing = siblings_missing(repo, snap)
    if not known:
        return missing, None
    worktree, branch = here(repo)
    keys = [p.key() for p in known]
    home = place_guard.find_home(keys)
    place = place_guard.standing(keys, worktree, branch)
    role = place["role"] if place else ("home" if place_guard.home_here(keys, worktree, branch) else None)
    lead = place_guard.lead(repo.common_dir, keys, worktree, branch)
    lines = lead + homes_warning(known, worktree, branch) + missing
    return lines, {
        "worktree": worktree,
        "branch": branch,
        "role": role,
        "home": {"kind": home["kind"], "name": home["name"]} if home else None,
        "lead": lead[0] if lead else None,
    }


@dataclass(frozen=True)
class Judged:
    """Where a stream's claims are judged: the home's checkout when this checkout is not the
    home and the home is checked out in this clone, else here. ``said`` is the brief's line
    naming where, when that is not simply here."""

    snap: store.Snapshot
    said: str | None
    away: bool  # judged in another checkout than the one the command runs in


def judged_at(repo: Repo, snap: store.Snapshot) -> Judged:
    """Claims are judged where the work is: a file: or clean: check asked from a donor
    worktree is about the home's HEAD and work tree, not the donor's (#33). Where the home is
    no checkout of this clone, they are judged here, and the line says so."""
    known = read(snap)
    if not known:
        return Judged(snap, None, False)
    worktree, branch = here(repo)
    keys = [p.key() for p in known]
    home = place_guard.find_home(keys)
    if home is None or place_guard.home_here(keys, worktree, branch) is not None:
        return Judged(snap, None, False)
    folder = _home_folder(repo, home)
    mine = f"worktree {worktree}" if worktree else "this checkout"
    mine += f" (branch {branch})" if branch else ""
    if folder is None:
        return Judged(
            snap,
            f"Claims are judged here, in {mine}: the home ({place_guard.label(home)}) is checked out nowhere in this"
            " clone, so its checks of HEAD and the work tree read this checkout.",
            False,
        )
    try:
        there = git.open_repo(folder)
    except UserError:
        return Judged(snap, None, False)
    if there.work_dir is not None and repo.work_dir is not None and there.work_dir.resolve() == repo.work_dir.resolve():
        return Judged(snap, None, False)
    return Judged(
        store.snapshot(there, snap.stream),
        f"Claims are judged in the home, {place_guard.label(home)} in {folder}, not in {mine} where this session is.",
        True,
    )


def _home_folder(repo: Repo, home: Mapping[str, Any]) -> Path | None:
    """The home's checkout folder in this clone (a branch home: the checkout that has it)."""
    if home["kind"] in ("checkout", "branch"):
        return place_guard.checkout_of(repo.common_dir, str(home["name"]))
    return place_guard.worktree_path(repo.common_dir, str(home["name"]))
