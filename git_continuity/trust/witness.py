"""The witness: for each repository and stream, the newest state commit this user has seen
here, and its depth (how many commits its history holds), kept outside ``.git`` in the
user's state folder (``$XDG_STATE_HOME/git-continuity/witness/<repository>/<stream>.json``).

Git's hashes chain a state's history, but nothing in ``.git`` says where its ref should be:
a ref moved back (the newest changes cut off), a rewritten history, or a whole ``.git`` put
back to an older copy all look like a state. Every read checks that the ref still descends
from the witness (store/integrity.py), and the witness only ever moves forward.

The witness is kept by folder, and names the clone it saw there by the id the clone keeps in
its ``.git`` (``clone_id``): a ``.git`` put back brings its id back and is judged against the
witness, while a new clone made at a known folder (CI workspaces and agent sandboxes clone
into the same folder every run) has an id of its own and is read as the new clone it is,
judged by its signatures alone. (A ``.git`` put back with its id changed by hand reads as a
new clone too: the id tells honest copies apart, not forged ones.)
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from git_continuity import atomic
from git_continuity import repo as git
from git_continuity.constants import ID_ALPHABET
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo

CLONE_ID = re.compile(r"^k-[2-9a-hjkmnp-z]{10}$")


def clone_id(repo: Repo) -> str | None:
    """This clone's id (``k-`` and ten characters), made the first time it is asked for and
    kept in ``.git/continuity/clone.json``; linked worktrees share it. None when it cannot be
    kept (a read-only repository)."""
    target = repo.local_dir / "clone.json"
    try:
        found = json.loads(target.read_text()).get("id")
        if isinstance(found, str) and CLONE_ID.match(found):
            return found
    except (OSError, ValueError, AttributeError):
        pass
    made = "k-" + "".join(secrets.choice(ID_ALPHABET) for _ in range(10))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic.write(target, json.dumps({"id": made}) + "\n")
        kept = json.loads(target.read_text()).get("id")  # another process may have won the race
        return kept if isinstance(kept, str) else made
    except (OSError, ValueError, AttributeError):
        return None


def state_folder() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "git-continuity"


def folder(repo: Repo) -> Path:
    """This repository's witness folder, named by a digest of where its ``.git`` is."""
    return state_folder() / "witness" / hashlib.sha256(str(repo.common_dir).encode()).hexdigest()[:20]


def path(repo: Repo, stream: str) -> Path:
    return folder(repo) / f"{stream}.json"


@dataclass(frozen=True)
class Seen:
    commit: Oid
    depth: int
    seen: str  # when, as an ISO time (UTC)
    baseline: str | None = None  # why this commit was taken without its signatures checked
    clone: str | None = None  # the id of the clone that was seen (None: a witness from before ids)


def read(repo: Repo, stream: str) -> Seen | None:
    """What this user last saw of the stream here (None: never read here, or what was seen
    here was another clone: this one was made since, at the same folder)."""
    found = _read(repo, stream)
    if found is None or found.clone is None or found.clone == clone_id(repo):
        return found
    return None


def _read(repo: Repo, stream: str) -> Seen | None:
    where = path(repo, stream)
    try:
        text = where.read_text()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _corrupt(where, f"cannot be read ({error})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise _corrupt(where, f"is not a witness file (not JSON: {error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict) or not {"repository", "stream", "commit", "depth", "seen"} <= set(data):
        keys = "repository, stream, commit, depth and seen"
        raise _corrupt(where, f"is not a witness file (a JSON object of {keys} is)")
    try:
        if data["repository"] != str(repo.common_dir) or data["stream"] != stream:
            raise _corrupt(where, f"belongs to {data['repository']} ({data['stream']}), not to {repo.common_dir}")
        commit = Oid(str(data["commit"]))
        if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit):
            raise ValueError(f"{commit!r} is not a commit id")
        clone = data.get("clone")
        return Seen(commit, int(data["depth"]), str(data["seen"]), data.get("baseline"), str(clone) if clone else None)
    except (ValueError, KeyError, TypeError) as error:
        raise _corrupt(where, f"is not a witness file ({error})") from None


def read_unchecked(repo: Repo, stream: str) -> Seen | None:
    """What the witness holds, or None when it holds nothing readable (a corrupt file is
    about to be replaced: doctor --accept)."""
    try:
        return read(repo, stream)
    except UserError:
        return None


def _corrupt(where: Path, why: str) -> UserError:
    return UserError(
        f"{where} {why}; nothing was read or written.\nIt records the newest state seen here: check the state by"
        f" hand (git continuity log), then remove the file (rm {where}) to start it again from the state as it is"
    )


@contextlib.contextmanager
def _locked(repo: Repo, stream: str) -> Iterator[None]:
    where = path(repo, stream)
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(where.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def record(repo: Repo, stream: str, seen: Seen, *, force: bool = False) -> None:
    """Remember seen as the newest state of the stream, unless the witness already holds a
    commit that descends from it (another reader or writer got further meanwhile). ``force``
    re-anchors it wherever it is (doctor --accept)."""
    with _locked(repo, stream):
        now = read_unchecked(repo, stream) if force else read(repo, stream)
        if not force and now is not None and now.commit != seen.commit and git.has_commit(repo, now.commit):
            with contextlib.suppress(git.HistoryCut):
                if git.is_ancestor(repo, seen.commit, now.commit):
                    return
        data = {
            "repository": str(repo.common_dir),
            "stream": stream,
            "commit": seen.commit,
            "depth": seen.depth,
            "seen": seen.seen,
        }
        if seen.baseline:
            data["baseline"] = seen.baseline
        if (clone := clone_id(repo)) is not None:
            data["clone"] = clone
        atomic.write(path(repo, stream), json.dumps(data, indent=1) + "\n")
