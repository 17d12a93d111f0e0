"""Where work happens, as the hooks see it: which place a checkout is, what its role allows,
where the home is, and the guards that refuse a commit in a donor, archive or preservation
place and a push that moves a preservation branch.

Standard library only, like guards' hot path: the roles come from the small file every state
write leaves (``.git/continuity/active/<stream>.json``, store.remember_active), the home's
folder and branch from git's own files under the common git folder. A repository without
places pays one ``git rev-parse`` and one small file read per commit, never pygit2.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from git_continuity import gitcli
from git_continuity.constants import CONFIG_ALLOW_PLACE, ENV_ALLOW_PLACE, GUARDED_ROLES, PLACE_ROLES, STATE_PREFIX

ROLES = PLACE_ROLES
GUARDED = GUARDED_ROLES  # nothing is committed there
# What each role means for the one who finds themselves there.
ADVICE = {
    "home": "work happens here",
    "donor": "copy from it, commit nothing",
    "archive": "read it for history, commit nothing",
    "preservation": "it never moves, so commit nothing on it and push nothing over it",
    "cleanroom": "reproduce from a clean tree here; change nothing by hand",
}
ZERO = "0" * 40

Place = Mapping[str, Any]  # kind (branch, checkout, worktree), name, role (as the active file keeps them)


def label(place: Place) -> str:
    """How a place is named in a sentence: ``branch NAME``, ``the checkout of branch NAME``
    (a checkout's role, matched on every clone by its branch), ``worktree NAME`` (a detached
    checkout, or a record from before checkouts were matched by branch: by folder name)."""
    if place["kind"] == "checkout":
        return f"the checkout of branch {place['name']}"
    return f"{place['kind']} {place['name']}"


def matches(place: Place, worktree: str | None, branch: str | None) -> bool:
    """Whether the checkout named ``worktree`` with ``branch`` checked out is this place: a
    branch or a checkout by the branch (git checks a branch out in one worktree of a clone at
    most, so the branch finds the checkout on every clone, whatever its folder is called); a
    worktree record by its name."""
    name = worktree if place["kind"] == "worktree" else branch
    return name is not None and place["name"] == name


def find_home(places: Iterable[Place]) -> Place | None:
    homes = sorted((p for p in places if p["role"] == "home"), key=lambda p: (p["kind"], p["name"]))
    return homes[0] if homes else None


def _git_dir_of(common: Path, worktree: str) -> Path:
    linked = common / "worktrees" / worktree
    return linked if linked.is_dir() else common


def head_branch(git_dir: Path) -> str | None:
    """The branch a checkout's HEAD names (None: detached, or not readable)."""
    try:
        head = (git_dir / "HEAD").read_text().strip()
    except OSError:
        return None
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: refs/heads/") else None


def checkout_of(common: Path, branch: str) -> Path | None:
    """The folder of the checkout that has ``branch`` checked out in this clone (None: none
    has), from git's own files: the main checkout's HEAD, then each linked worktree's."""
    if common.name == ".git" and head_branch(common) == branch:
        return common.parent
    try:
        linked = sorted(p for p in (common / "worktrees").iterdir() if p.is_dir())
    except OSError:
        return None
    for git_dir in linked:
        if head_branch(git_dir) == branch:
            try:
                return Path((git_dir / "gitdir").read_text().strip()).parent
            except OSError:
                continue
    return None


def worktree_path(common: Path, name: str, paths: Mapping[str, str] | None = None) -> Path | None:
    """A worktree's folder on this machine: git's own record, else the local map
    (``.git/continuity/places.json``), else None."""
    linked = common / "worktrees" / name / "gitdir"
    try:
        return Path(linked.read_text().strip()).parent
    except OSError:
        pass
    if common.name == ".git" and common.parent.name == name:
        return common.parent
    known = (paths if paths is not None else local_paths(common)).get(name)
    return Path(known) if known else None


def local_paths(common: Path) -> dict[str, str]:
    try:
        data = json.loads((common / "continuity" / "places.json").read_text())
        worktrees = data.get("worktrees", {}) if isinstance(data, dict) else {}
        return {str(k): str(v) for k, v in worktrees.items()} if isinstance(worktrees, dict) else {}
    except (OSError, ValueError):
        return {}


def where_home(common: Path, places: Sequence[Place]) -> str:
    """The sentence saying where work happens: the home, and for a worktree its branch (unless
    that branch has a role of its own) and its folder here."""
    home = find_home(places)
    if home is None:
        return "No home is set: git continuity place set WHERE home --why TEXT names it."
    if home["kind"] == "branch":
        return f"Work happens in the home: branch {home['name']}."
    if home["kind"] == "checkout":
        name = home["name"]
        found = checkout_of(common, name)
        if found is not None:
            return f"Work happens in the home: the checkout of branch {name}, in {found}."
        return (
            f"Work happens in the home: the checkout of branch {name}; no checkout here has {name} checked out"
            f" (git switch {name}, or git worktree add DIR {name})."
        )
    path = worktree_path(common, home["name"])
    branch = head_branch(_git_dir_of(common, home["name"])) if path is not None else None
    other = {p["name"] for p in places if p["kind"] == "branch" and p["role"] != "home"}
    text = f"Work happens in the home: worktree {home['name']}"
    text += f" (branch {branch})" if branch and branch not in other else ""
    if path is not None:
        return f"{text}, in {path}."
    # A folder name another clone recorded (before checkouts were matched by branch, or a
    # detached one): not something this clone lacks. Say what it is and how to match it.
    return (
        f"{text}, a folder name recorded on another clone; no checkout here has that name"
        f" (on that clone, git continuity place set {home['name']} home --why TEXT records it by its branch)."
    )


def standing(places: Sequence[Place], worktree: str | None, branch: str | None) -> Place | None:
    """The place this checkout stands in that is not the home (a worktree record by its name
    first, then the checkout of its branch, then its branch); None when it stands in none but
    the home."""
    for kind in ("worktree", "checkout", "branch"):
        for place in places:
            if place["kind"] == kind and place["role"] != "home" and matches(place, worktree, branch):
                return place
    return None


def home_here(places: Iterable[Place], worktree: str | None, branch: str | None) -> Place | None:
    """The home this checkout is (after a merge kept two homes, any of them), or None."""
    return next((p for p in places if p["role"] == "home" and matches(p, worktree, branch)), None)


def lead(common: Path, places: Sequence[Place], worktree: str | None, branch: str | None) -> list[str]:
    """What orientation says first: the place this checkout is and where the home is, when
    this is not the home; nothing when there are no places, or this is the home."""
    if not places:
        return []
    place = standing(places, worktree, branch)
    if place is None:
        if home_here(places, worktree, branch) is not None:
            return []  # a home (of two, after a merge: places.homes_warning says so)
        where = f"worktree {worktree}" if worktree else "this checkout"
        where += f" (branch {branch})" if branch else ""
        return [f"You are in {where}, which is not the home. {where_home(common, places)}"]
    role = place["role"]
    return [f"You are in {_named(place)}: {ADVICE[role]}. {where_home(common, places)}"]


def _named(place: Place) -> str:
    """``a donor worktree (cli-old)``, ``a donor checkout (branch cli-old)``."""
    role, kind = place["role"], place["kind"]
    name = f"branch {place['name']}" if kind == "checkout" else place["name"]
    return f"{_article(role)} {role} {kind} ({name})"


def _article(role: str) -> str:
    return "an" if role[0] in "aeiou" else "a"


# -- the hooks ------------------------------------------------------------------------------


_git = gitcli.run


def allowed() -> bool:
    """The documented override: GIT_CONTINUITY_ALLOW_PLACE=1, or continuity.allowPlace=true
    (``git -c continuity.allowPlace=true commit``)."""
    if os.environ.get(ENV_ALLOW_PLACE, "") not in ("", "0"):
        return True
    return _git("config", "--type=bool", "--get", CONFIG_ALLOW_PLACE).stdout.strip() == "true"


OVERRIDE = (
    f"To {{what}} on purpose: {ENV_ALLOW_PLACE}=1 git {{verb}} ... (or git -c {CONFIG_ALLOW_PLACE}=true {{verb}} ...)."
)


def active_places(stream: str) -> tuple[Path, Path, list[dict[str, Any]]] | None:
    """(this checkout's git folder, the common one, the stream's places), or None when the
    stream has no state here. The places come from the active file; when it is missing or
    older than the state ref (moved by a pull), through the repository once."""
    found = _git("rev-parse", "--git-dir", "--git-common-dir", "-q", "--verify", f"{STATE_PREFIX}{stream}^{{commit}}")
    lines = found.stdout.split("\n")
    if found.returncode != 0 or len(lines) < 3:
        return None
    git_dir, common, state = Path(lines[0]).resolve(), Path(lines[1]).resolve(), lines[2]
    try:
        data = json.loads((common / "continuity" / "active" / f"{stream}.json").read_text())
        if data.get("state") == state and isinstance(data.get("places"), list):
            return git_dir, common, data["places"]
    except (OSError, ValueError, AttributeError):
        pass
    from git_continuity import repo as git
    from git_continuity import store

    return git_dir, common, store.remember_active(store.snapshot(git.open_repo(), stream))["places"]


def checkout_name(git_dir: Path, common: Path) -> str:
    """The name of the checkout a hook runs in: a linked worktree's, or the main checkout's
    folder name (hooks run at the top of the work tree)."""
    if git_dir.parent.name == "worktrees" and git_dir.parent.parent == common:
        return git_dir.name
    return common.parent.name if common.name == ".git" else Path.cwd().name


def commit_refusal(stream: str) -> str | None:
    """Why a commit here is refused (None: it is not)."""
    found = active_places(stream)
    if found is None or not found[2]:
        return None
    git_dir, common, places = found
    place = standing(places, checkout_name(git_dir, common), head_branch(git_dir))
    if place is None or place["role"] not in GUARDED or allowed():
        return None
    return (
        f"git-continuity: this is {_named(place)}: "
        f"{ADVICE[place['role']]}. {where_home(common, places)}\n" + OVERRIDE.format(what="commit here", verb="commit")
    )


def push_refusal(stream: str, remote: str, updates: Sequence[Sequence[str]]) -> str | None:
    """Why a push is refused: it moves (or deletes) a preservation branch the remote has.
    ``updates`` are git's pre-push lines: local ref, local id, remote ref, remote id."""
    moved = [
        parts[2].removeprefix("refs/heads/")
        for parts in updates
        if len(parts) == 4 and parts[2].startswith("refs/heads/") and parts[3] != ZERO and parts[1] != parts[3]
    ]
    if not moved:
        return None
    found = active_places(stream)
    if found is None:
        return None
    _, common, places = found
    # A preserved checkout is preserved by its branch, as the commit guard matches it.
    kept = {p["name"] for p in places if p["kind"] in ("branch", "checkout") and p["role"] == "preservation"}
    hit = [name for name in moved if name in kept]
    if not hit or allowed():
        return None
    return (
        f"git-continuity: this push moves {', '.join(hit)} on {remote}, a preservation branch: "
        f"{ADVICE['preservation']}. {where_home(common, places)}\n" + OVERRIDE.format(what="move it", verb="push")
    )
