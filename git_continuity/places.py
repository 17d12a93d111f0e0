"""Places: branches and worktrees with a role (home, donor, archive, preservation, cleanroom).

A place is kept in the stream's state as ``.continuity/places/<id>.json``, keyed by what is
the same on every clone: a branch's name, or a worktree's name (a linked worktree's as git
named it, the main checkout's folder name). Its id is a digest of kind and name, so the same
place set on two clones is one file and merges like any entry. Where a worktree lives is
local to the machine: ``.git/continuity/places.json`` keeps the folder each named worktree
had when its role was set. What a role means and where the home is: place_guard.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_continuity import atomic, place_guard, siblings, store
from git_continuity import repo as git
from git_continuity.constants import ID_ALPHABET
from git_continuity.errors import UserError
from git_continuity.model import shown
from git_continuity.repo import Repo

ROLES = place_guard.ROLES


@dataclass(frozen=True)
class Place:
    id: str
    kind: str  # branch | worktree
    name: str
    role: str
    why: str
    set_at: str
    set_by: str
    host: str
    session: str | None = None
    agent: str | None = None

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name}"

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


def resolve(repo: Repo, where: str) -> tuple[str, str]:
    """(kind, name) of WHERE: ``refs/heads/NAME`` is a branch; a plain name is the worktree of
    that name if there is one, else the branch. Neither: exit 2, naming what there is."""
    where = where.strip()
    trees = git.worktrees(repo)
    if where.startswith("refs/heads/"):
        name = where.removeprefix("refs/heads/")
        if name and git.ref_target(repo, where) is not None:
            return "branch", name
    elif where in trees:
        return "worktree", where
    elif where and not where.startswith("-") and git.ref_target(repo, f"refs/heads/{where}") is not None:
        return "branch", where
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
    folder = git.worktrees(repo).get(place.name)
    if folder is not None:
        return True, folder
    known = local_paths(repo).get(place.name)
    return False, Path(known) if known else None


def homes_warning(known: list[Place]) -> list[str]:
    """Two homes or more: a merge of two clones' states kept the home each had set (place set
    refuses a second one, so only a merge makes them). Which one orientation names, and how
    to keep one."""
    homes = [p for p in known if p.role == "home"]
    if len(homes) < 2:
        return []
    first = place_guard.find_home([p.key() for p in homes])
    named = next(p for p in homes if first is not None and p.key() == first)
    each = "; ".join(f"{p.label} (set {shown(p.set_at)} by {p.set_by} on {p.host}: {p.why})" for p in homes)
    others = " or ".join(p.name for p in homes if p is not named)
    return [
        f"Warning: {len(homes)} homes, kept by a merge of two clones' states: {each}. "
        f"Work is pointed at {named.label} until one is cleared: git continuity place clear {others}"
    ]


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
    role = place["role"] if place else ("home" if place_guard.in_home(home, worktree, branch) else None)
    lead = place_guard.lead(repo.common_dir, keys, worktree, branch)
    lines = lead + homes_warning(known) + missing
    return lines, {
        "worktree": worktree,
        "branch": branch,
        "role": role,
        "home": {"kind": home["kind"], "name": home["name"]} if home else None,
        "lead": lead[0] if lead else None,
    }
