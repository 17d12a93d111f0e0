"""Siblings: the other repositories a stream spans, and this clone's own id among clones.

A sibling is kept in the stream's state as ``.continuity/siblings/<id>.json``: its name and
the URL it is cloned from, the same on every clone (the id is a digest of the name, so the
same sibling added on two clones is one file). Where it lives is local to the machine:
``.git/continuity/siblings.json`` maps each name to a folder. Nothing guesses a folder: a
sibling with none here, or whose folder is no repository any more, is *not found here*, and
what is said names the command that points at it.

A handle scoped to a sibling, ``@api:pushed:HEAD@origin/main``, is dereferenced in that
repository, opened as a plain repository (plugins/verify.py): its own state and its own siblings are
never read there, so a scoped check never leads further and nothing recurses. A stream's
state lives in one repository; a sibling whose own stream lists this repository back,
directly or through its siblings, is a cycle, refused when it is added (``find_cycle``
walks the siblings' lists with a queue and a set of the repositories seen).

Evidence says which clone derived it (``clone_id``, kept in ``.git/continuity/clone.json``):
evidence another clone wrote and sync brought here is its report, never this clone's proof.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from git_continuity import atomic, store
from git_continuity import repo as git
from git_continuity.constants import ID_ALPHABET, SIBLING_RE
from git_continuity.errors import UserError
from git_continuity.repo import Repo
from git_continuity.trust import witness

NAME_RULE = "lower-case letters, digits, '-' and '_', 1 to 32 characters, starting with a letter or digit"
MAX_URL = 1000
MAX_WALK = 64  # repositories a cycle search opens at most


@dataclass(frozen=True)
class Sibling:
    id: str
    name: str
    added_at: str
    added_by: str
    host: str
    url: str | None = None
    session: str | None = None
    agent: str | None = None


@dataclass(frozen=True)
class Found:
    """A sibling as this machine sees it: opened, or why not and how to point at it."""

    sibling: Sibling
    path: Path | None  # the folder this machine names for it (None: none is named)
    repo: Repo | None  # None: not found here
    reason: str | None = None  # set when not found here

    @property
    def name(self) -> str:
        return self.sibling.name


def sibling_id(name: str) -> str:
    digest = hashlib.sha256(f"sibling\0{name}".encode()).digest()
    return "r-" + "".join(ID_ALPHABET[b % len(ID_ALPHABET)] for b in digest[:6])


def path(name: str) -> str:
    return f"{store.ROOT}/siblings/{sibling_id(name)}.json"


def check_name(name: str) -> str:
    if not SIBLING_RE.match(name):
        raise UserError(f"sibling name {name!r} is not usable: {NAME_RULE} (e.g. api, consumer)")
    return name


def check_url(url: str) -> str:
    url = url.strip()
    if not url or len(url) > MAX_URL or url.startswith("-") or re.search(r"[\x00-\x20\x7f]", url):
        raise UserError(
            f"--url {url[:80]!r} is not usable: one URL or path git can clone, without spaces, "
            f"not starting with '-', at most {MAX_URL} characters"
        )
    if re.match(r"^[a-z][a-z0-9+.-]*://[^/@]*:[^/@]*@", url, re.IGNORECASE):
        raise UserError(
            "--url carries a password or token (user:secret@): the URL is synced with the state; "
            "give it without one (your git credential helper supplies it)"
        )
    return url


def read(snap: store.Snapshot) -> list[Sibling]:
    """The stream's siblings, by name."""
    found = [Sibling(**data) for data in store.read_siblings(snap).values()]
    return sorted(found, key=lambda s: s.name)


def _map_file(repo: Repo) -> Path:
    return repo.local_dir / "siblings.json"


def local_paths(repo: Repo) -> dict[str, str]:
    """Where each sibling lives on this machine, by name (never synced)."""
    try:
        data = json.loads(_map_file(repo).read_text())
        kept = data.get("siblings", {}) if isinstance(data, dict) else {}
        return {str(k): str(v) for k, v in kept.items()} if isinstance(kept, dict) else {}
    except (OSError, ValueError):
        return {}


def remember(repo: Repo, name: str, folder: Path | None) -> None:
    """Keep (or, with None, forget) where sibling ``name`` lives on this machine."""
    paths = local_paths(repo)
    if folder is None:
        paths.pop(name, None)
    else:
        paths[name] = str(folder)
    target = _map_file(repo)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.write(target, json.dumps({"siblings": dict(sorted(paths.items()))}, indent=2) + "\n")


def open_at(home: Repo, folder: Path, name: str) -> Repo:
    """The repository at ``folder`` (its top: a work tree's folder, or a bare repository's),
    which must not be this repository; else exit 2 naming the folder."""
    where = folder.expanduser()
    if not where.is_dir():
        raise UserError(f"sibling {name}: {where} does not exist or is not a folder")
    try:
        found = git.open_repo(where)
    except UserError:
        raise UserError(f"sibling {name}: {where} is not a git repository (git init or git clone it first)") from None
    top = where.resolve()
    if top not in (found.work_dir.resolve() if found.work_dir else None, found.common_dir):
        inside = found.work_dir or found.common_dir
        raise UserError(f"sibling {name}: {where} is not a repository's top folder: it is inside {inside}")
    if found.common_dir == home.common_dir:
        raise UserError(
            f"sibling {name}: {where} is this repository ({home.common_dir}); "
            "a sibling is another repository the stream spans"
        )
    return found


def locate(home: Repo, sibling: Sibling, paths: dict[str, str] | None = None) -> Found:
    """Open a sibling where this machine says it lives, or say why it is not found here."""
    named = (paths if paths is not None else local_paths(home)).get(sibling.name)
    if named is None:
        return Found(sibling, None, None, f"no folder is named for it on this machine; {point_at(sibling)}")
    try:
        return Found(sibling, Path(named), open_at(home, Path(named), sibling.name))
    except UserError as error:
        why = str(error).removeprefix(f"sibling {sibling.name}: ")
        return Found(sibling, Path(named), None, f"{why}; {point_at(sibling)}")


def point_at(sibling: Sibling) -> str:
    clone = f" (clone it first: git clone {sibling.url} PATH)" if sibling.url else ""
    return f"point at it with: git continuity repo set-path {sibling.name} PATH{clone}"


def not_found(found: Found) -> str:
    return f"sibling {found.name} is not found here: {found.reason}"


def find_cycle(home: Repo, name: str, first: Repo, stream: str) -> list[str] | None:
    """The names leading from this repository back to itself when ``first`` becomes its
    sibling ``name``: each repository's own stream of the same name lists its siblings, and
    those found on this machine are followed, breadth first, each repository once."""
    queue: list[tuple[Repo, list[str]]] = [(first, [name])]
    seen = {first.common_dir}
    while queue and len(seen) <= MAX_WALK:
        there, chain = queue.pop(0)
        snap = store.snapshot(there, stream)
        if snap.commit is None:
            continue
        paths = local_paths(there)
        for sibling in read(snap):
            found = locate(there, sibling, paths)
            if found.repo is None:
                continue
            if found.repo.common_dir == home.common_dir:
                return [*chain, sibling.name]
            if found.repo.common_dir not in seen:
                seen.add(found.repo.common_dir)
                queue.append((found.repo, [*chain, sibling.name]))
    return None


def default_url(there: Repo) -> str | None:
    """The sibling's own origin, as the URL to clone it from elsewhere: a local path made
    absolute, a password dropped (it would be synced)."""
    url = git.config_value(there, "remote.origin.url")
    if not url:
        return None
    url = re.sub(r"^([a-z][a-z0-9+.-]*://[^/@:]*):[^/@]*@", r"\1@", url, flags=re.IGNORECASE)
    scp_like = re.match(r"^[^/]+:", url) is not None
    if "://" not in url and not scp_like and not Path(url).is_absolute():
        url = str(((there.work_dir or there.common_dir) / url).resolve())
    try:
        return check_url(url)
    except UserError:
        return None


# -- this clone ------------------------------------------------------------------------------


def clone_id(repo: Repo) -> str | None:
    """This clone's id (``k-`` and ten characters), kept in ``.git/continuity/clone.json``
    (trust/witness.py, which tells a new clone from a ``.git`` put back by it); None when it cannot
    be kept (a read-only repository): evidence then says only its host."""
    return witness.clone_id(repo)
