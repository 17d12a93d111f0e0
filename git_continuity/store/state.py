"""One stream's state as of one commit: an immutable snapshot, and where it comes from.

A snapshot never changes once made. What reading it finds wrong is recorded once per file
(``_Reads``, private to the snapshot): a file read twice is parsed again but validated and
reported once, so ``problems`` lists each malformed file once, in the order first met, and
callers never deduplicate. Nothing here asks the network: a missing state raises
``NoState``, and the command layer says whether a remote has it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git_continuity import repo as git
from git_continuity.constants import ENV_STREAM, RESERVED_STREAMS, STATE_PREFIX, usable_stream
from git_continuity.errors import NoState, UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import signing

ROOT = ".continuity"
FORMAT = "1"

# Which schema each folder's entries follow.
KINDS = {
    "claims": "claim",
    "threads": "thread",
    "objective": "objective-change",
    "journal": "journal-entry",
    "evidence": "evidence",
    "handoffs": "handoff",
    "conflicts": "conflict",
    "attempts": "attempt",
    "places": "place",
    "siblings": "sibling",
    "thread-claims": "thread-claim",
}


ENTRIES = frozenset(KINDS.values())
# What the validity cache judges: the entries and the packet. The schemas of the commands'
# output (orient, status…) name none of it, and changing one must not send a year of entries
# to be checked again (a million took two minutes).
STORED = tuple(sorted({*ENTRIES, "packet"}))


def ref_name(stream: str) -> str:
    if not usable_stream(stream):
        given = f" (from {ENV_STREAM})" if os.environ.get(ENV_STREAM) == stream else ""
        if stream in RESERVED_STREAMS:
            raise UserError(
                f"stream name {stream!r}{given} is reserved: HEAD is git's, and notes and lanes name what the state"
                " travels beside as branches; choose another (e.g. agent-b)"
            )
        raise UserError(
            f"stream name {stream!r}{given} is not usable: letters, digits, '-', '_' and inner '.' only,"
            " not ending in .lock (one ref name each, e.g. agent-b)"
        )
    return f"{STATE_PREFIX}{stream}"


# Bumped when reading finds more wrong than before (an empty packet, a file where a folder
# belongs): what an older version judged good must be judged again.
# 3: an object is known good for what it was checked as (good()), not as anything at all.
RULES = 3


def good(kind: str, oid: str, name: str = "") -> str:
    """What the validity cache knows of an object: that it is a good ``kind`` (an entry's
    kind under its file ``name``, whose id the entry must match; ``tree`` for a whole state;
    ``packet``; a folder kept whole), never that it is good as anything else."""
    return f"{kind}:{name}:{oid}"


class ValidityCache:
    """Content already validated against the current schemas, by object id.

    Objects are content-addressed, so a blob or tree that passed once always passes; this
    keeps jsonschema (and a walk of every entry) off the read path. Local only, under
    ``.git/continuity/cache/``, keyed by a digest of the schemas, in 256 files named by the
    first two digits of each entry's object id (and one of the wholes: trees, folders, the
    packet): a read asks about a few objects and reads a few small files, however many
    entries a year of work left (one file of a million entries was 90 MB to read on every
    status).
    """

    def __init__(self, repo: Repo) -> None:
        self.path = validity_path(repo)
        self._shards: dict[str, set[str]] = {}
        self._new: dict[str, list[str]] = {}
        self._saved = time.monotonic()
        if not self.path.exists():
            self._take_in(self.path.with_suffix(""))

    def _take_in(self, whole: Path) -> None:
        """What an earlier version kept in one file, put in the shards once (else a million
        entries would be validated again)."""
        try:
            self.add(whole.read_text().split())
        except OSError:
            return
        self.save()
        whole.unlink(missing_ok=True)

    @staticmethod
    def _name(key: str) -> str:
        # Entries by their object id's first two digits; what is known good as a whole (a
        # tree, a folder, the packet: what nearly every read asks first) in a small file.
        return key.rsplit(":", 1)[-1][:2] if key.partition(":")[0] in ENTRIES else "whole"

    def _shard(self, key: str) -> set[str]:
        name = self._name(key)
        if name not in self._shards:
            try:
                self._shards[name] = set((self.path / name).read_text().split())
            except OSError:
                self._shards[name] = set()
            self._shards[name].update(self._new.get(name, ()))
        return self._shards[name]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._shard(key)

    def add(self, keys: Iterable[str]) -> None:
        """Remember keys as good. A shard not read yet is not read for it: the key is added
        to its file, where a line said twice costs only its bytes (a write of 1,000 entries
        would read all 256 shards, a million keys at a year of journal)."""
        for key in keys:
            name = self._name(key)
            known = self._shards.get(name)
            if known is not None:
                if key in known:
                    continue
                known.add(key)
            self._new.setdefault(name, []).append(key)

    def checkpoint(self) -> None:
        """Save what is known so far, if the last save is CHECKPOINT seconds old: a walk of a
        year of entries judged anew (a schema changed) takes minutes, and an agent's hook is
        killed after 60 s; the next one goes on from here instead of starting over."""
        if time.monotonic() - self._saved > CHECKPOINT:
            self.save()

    def save(self) -> None:
        self._saved = time.monotonic()
        if not self._new:
            return
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            # Appended, not replaced (atomic.write): racing writers each add their lines
            # and none loses another's; a line no object id matches only costs a miss.
            for name, keys in self._new.items():
                with (self.path / name).open("a") as f:
                    f.write("\n".join(keys) + "\n")
            self._new = {}
            os.utime(self.path)  # in use: its time is its last write (forgotten() reads it)
        except OSError:
            return  # a cache that cannot be written only costs speed
        forgotten(self.path)


CHECKPOINT = 5.0  # seconds between saves of a long walk's findings
FORGOTTEN = 14 * 86400  # seconds since its last write after which another schema's cache goes


def forgotten(kept: Path) -> None:
    """Remove the validity caches of other schemas (an upgrade's leftovers, 90 MB each at a
    million entries) that no process has written to for FORGOTTEN seconds. Not at once: two
    installed versions used on one clone would each remove the other's, and judge a year of
    entries again at every turn."""
    import re
    import shutil

    cutoff = time.time() - FORGOTTEN
    try:
        with os.scandir(kept.parent) as entries:
            old = [
                entry.path
                for entry in entries
                if entry.path != str(kept)
                and re.fullmatch(r"valid-[0-9a-f]{16}(-[0-9]+)?(\.d)?", entry.name)
                and _last_written(entry) < cutoff
            ]
    except OSError:
        return
    for path in old:
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)


def _last_written(entry: os.DirEntry[str]) -> float:
    """When a cache was last written to. A folder's own time is set by each save of this
    version, but an older one only appended to its files: a folder that looks old is judged
    by its newest file too (a version still in use must not lose its cache)."""
    when = entry.stat(follow_symlinks=False).st_mtime
    if when < time.time() - FORGOTTEN and entry.is_dir(follow_symlinks=False):
        with os.scandir(entry.path) as files:
            when = max([when, *(file.stat(follow_symlinks=False).st_mtime for file in files)])
    return when


@dataclass
class _Reads:
    """What reading one snapshot found: each malformed file's problems (by path, first met
    first), the whole tree's once walked, and the validity cache it uses."""

    validity: ValidityCache | None = None
    bad: dict[str, tuple[str, ...]] = field(default_factory=dict)
    walked: tuple[str, ...] | None = None
    good_tree: bool | None = None  # the whole tree known good (asked once)
    claim_rows: list[list[Any]] | None = None  # the claims as read (store.read_claims)


@dataclass(frozen=True)
class Snapshot:
    """The state of one stream as of one commit of its ref (commit None: never initialized)."""

    repo: Repo
    stream: str
    commit: Oid | None
    tree: Oid | None
    validity: ValidityCache | None = field(default=None, repr=False, compare=False)
    _reads: _Reads = field(default_factory=_Reads, init=False, repr=False, compare=False)

    @property
    def ref(self) -> str:
        return ref_name(self.stream)

    @property
    def cache(self) -> ValidityCache:
        if self._reads.validity is None:
            self._reads.validity = self.validity or _validity(self.repo)
        return self._reads.validity

    @property
    def good_tree(self) -> bool:
        """Whether the whole tree is known good: every entry in it is, under its name."""
        if self._reads.good_tree is None:
            self._reads.good_tree = self.tree is not None and good("tree", self.tree) in self.cache
        return self._reads.good_tree

    @property
    def problems(self) -> list[str]:
        """The malformed files met so far while reading, each once (a new list each time:
        readers record problems through found_bad, never by changing this list)."""
        return [p for found in self._reads.bad.values() for p in found]

    @property
    def walked(self) -> tuple[str, ...] | None:
        """Every problem of the whole tree, once all_problems has walked it."""
        return self._reads.walked

    def keep_walked(self, problems: Iterable[str]) -> None:
        self._reads.walked = tuple(problems)

    def claim_rows(self, read: Callable[[], list[list[Any]]]) -> list[list[Any]]:
        """The claims' rows (store.read_claims), read once: a brief asks for them three times."""
        if self._reads.claim_rows is None:
            self._reads.claim_rows = read()
        return self._reads.claim_rows

    def bad_under(self, folder: str) -> bool:
        """Whether this folder (a path ending in /), or a file under it, is known to be malformed."""
        return any(path.startswith(folder) or path == folder.rstrip("/") for path in self._reads.bad)

    def known_bad(self, path: str) -> bool:
        return path in self._reads.bad

    def found_bad(self, path: str, problems: Iterable[str]) -> None:
        """Record what is wrong with one file (the first reading of it only)."""
        self._reads.bad.setdefault(path, tuple(problems))


def validity_path(repo: Repo) -> Path:
    from git_continuity.store import schema

    return repo.local_dir / "cache" / f"valid-{schema.digest(STORED)}-{RULES}.d"


def _validity(repo: Repo) -> ValidityCache:
    """The validity cache of this repository, one for every snapshot a process reads (each
    would read its files again), made again when the schemas it was made for changed."""
    found = repo.validity
    if not isinstance(found, ValidityCache) or found.path != validity_path(repo):
        found = repo.validity = ValidityCache(repo)
    return found


READS = 10  # reads of a ref that writers keep moving, before giving up


def snapshot(repo: Repo, stream: str) -> Snapshot:
    """The stream as its ref says now, refused unless it is what was written (integrity.py)."""
    from git_continuity.store import integrity

    for _ in range(READS):
        snap = snapshot_at(repo, stream, git.ref_target(repo, ref_name(stream)))
        try:
            integrity.check(repo, stream, snap.commit)
        except git.RefMoved:
            continue  # a writer moved it on meanwhile: read it where it is now
        return snap
    raise UserError(f"{ref_name(stream)} kept moving while it was read ({READS} reads); nothing was read. Try again.")


def snapshot_at(repo: Repo, stream: str, target: Oid | None) -> Snapshot:
    """The stream as of target, the commit its ref was read at (None: no ref). Commits
    written from here on are signed as this repository says (signing.arm)."""
    signing.arm(repo)
    ref = ref_name(stream)
    if target is not None and git.peel_to_commit(repo, target) != target:
        raise UserError(
            f"{ref} points at {target[:7]}, which is not a commit; nothing was read or written.\n"
            f"Put it back on an earlier state: git reflog {ref} lists them, then "
            f"git update-ref {ref} <commit> {target}"
        )
    tree = git.commit_info(repo, target).tree if target else None
    if target is not None and tree is not None and git.tree_entries(repo, tree) is None:
        holder = git.promisor(repo)
        if holder is not None:
            raise UserError(
                f"{ref} points at {target[:7]}, whose tree {tree[:7]} this partial clone's filter ({holder.filter})"
                f" left out; nothing was read or written.\ngit continuity pull {holder.remote} fetches the state whole"
            )
        raise UserError(
            f"{ref} points at {target[:7]}, whose tree {tree[:7]} is missing here (a deleted object, or a fetch"
            " that did not finish); nothing was read or written.\ngit continuity doctor says how to repair it"
        )
    return Snapshot(repo, stream, target, tree)


def at_commit(snap: Snapshot, commit: Oid | None) -> Snapshot | None:
    """The same stream as of an earlier state commit (None when this clone lacks it)."""
    if commit is None or not git.has_commit(snap.repo, commit):
        return None
    return Snapshot(snap.repo, snap.stream, commit, git.commit_info(snap.repo, commit).tree, validity=snap.cache)


def require_state(snap: Snapshot) -> None:
    """Refuse to go on when the stream has no state here, saying how to start.

    Local only: whether a remote has the state is for the command layer to add (cli.main
    asks, through tracking.explain_missing), never a reader's business."""
    if snap.commit is not None:
        return
    missing = f"no continuity state for stream '{snap.stream}' here ({snap.ref} does not exist)."
    others = [r.removeprefix(STATE_PREFIX) for r in git.list_refs(snap.repo, STATE_PREFIX)]
    hint = f"\nStreams here: {', '.join(others)} (choose one with --stream NAME)." if others else ""
    raise NoState(
        f"{missing}\nStart one with: git continuity init{hint}", repo=snap.repo, stream=snap.stream, missing=missing
    )
