"""Moving malformed files of a state aside: the repair ``doctor --fix`` makes.

Each malformed entry (and each file where it does not belong) moves to
``.continuity/quarantine/<its path under .continuity/>`` in one new state commit on top of
the broken one: nothing is deleted, the history only grows, and a state already on a remote
is repaired by a push that is a fast-forward (never a force push). The quarantine folder is
shown by status and doctor and never read as state. What cannot move without losing meaning
(the packet: ``git continuity edit`` repairs it; a newer format) is left for its own fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from git_continuity import repo as git
from git_continuity import store
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import signing

ROOT = store.ROOT
FOLDER = f"{ROOT}/{store.QUARANTINE}"
_PATH = re.compile(rf"^({re.escape(ROOT)}/[^:]+?)(?: line \d+)?: ")
KEPT = (f"{ROOT}/packet.yaml", f"{ROOT}/format")  # repaired otherwise: edit; an upgrade


PACKET = f"{ROOT}/packet.yaml"
PACKET_HISTORY = 1000  # earlier state commits searched for the packet's last good version


@dataclass(frozen=True)
class Repair:
    """A state commit that moves the malformed files aside (not yet on any ref)."""

    commit: Oid
    moved: tuple[str, ...]  # the paths moved, as they were
    left: tuple[str, ...]  # the problems a move cannot repair
    packet_from: Oid | None = None  # the earlier state commit whose packet was put back


def last_good_packet(repo: Repo, stream: str, commit: Oid) -> tuple[Oid, bytes] | None:
    """The packet of the newest earlier state commit where it reads well (that commit, the
    bytes), looked for along the first parents; None when there is none."""
    import itertools

    for info in itertools.islice(git.first_parent_log(repo, commit), 1, PACKET_HISTORY):
        oid = git.entry_oid(repo, info.tree, PACKET)
        if oid is not None and store.read_packet_doc(store.Snapshot(repo, stream, info.oid, info.tree)) is not None:
            return info.oid, git.blob(repo, oid)
    return None


def _packet_back(
    repo: Repo, stream: str, commit: Oid, tree: Oid, problems: list[str]
) -> tuple[dict[str, bytes | None], Oid | None]:
    """A malformed packet put back on its last good version, its broken text kept in the
    quarantine for a person (``edit`` wants a terminal an agent has not): the files and the
    commit whose packet it was; nothing when the packet is well-formed or no earlier
    version of it is."""
    oid = git.entry_oid(repo, tree, PACKET)
    found = last_good_packet(repo, stream, commit) if any(p.startswith(PACKET) for p in problems) else None
    if oid is None or found is None:
        return {}, None
    try:
        broken = git.blob(repo, oid)
    except KeyError:
        return {}, None
    return {PACKET: found[1], _free(repo, tree, f"{FOLDER}/packet.yaml", {}): broken}, found[0]


def movable(problem: str) -> str | None:
    """The path a problem names, when moving that path aside repairs it."""
    found = _PATH.match(problem)
    if found is None or found.group(1) in KEPT or found.group(1).startswith(FOLDER + "/"):
        return None
    return found.group(1)


def _blobs(repo: Repo, tree: Oid, path: str) -> dict[str, bytes]:
    """Every file at or under path, as bytes; an object this clone lacks (or a link to a
    commit) is kept as a line that says what it was."""
    below = git.tree_entries(repo, tree, path)
    if below is None:
        oid = git.entry_oid(repo, tree, path)
        if oid is None:
            return {}
        try:
            return {path: git.blob(repo, oid)}
        except KeyError:
            return {path + ".missing": f"object {oid} was missing here when doctor --fix moved it aside\n".encode()}
    found: dict[str, bytes] = {}
    for e in below:
        found.update(_blobs(repo, tree, f"{path}/{e.name}"))
    return found


def _all_paths(repo: Repo, tree: Oid, path: str) -> list[str]:
    below = git.tree_entries(repo, tree, path)
    if below is None:
        return [path]
    return [p for e in below for p in _all_paths(repo, tree, f"{path}/{e.name}")]


def repair(repo: Repo, stream: str, commit: Oid) -> Repair | None:
    """The commit on top of ``commit`` (a state of ``stream``) that moves every malformed
    file it can into quarantine; None when there is nothing to move."""
    signing.arm(repo)
    tree = git.commit_tree(repo, commit)
    snap = store.Snapshot(repo, stream, commit, tree)
    problems = store.all_problems(snap)
    paths = list(dict.fromkeys(p for p in map(movable, problems) if p is not None))
    files, packet_from = _packet_back(repo, stream, commit, tree, problems)
    left = tuple(p for p in problems if movable(p) is None and not (packet_from and p.startswith(PACKET)))
    if not paths and packet_from is None:
        return None
    for path in paths:
        for old in _all_paths(repo, tree, path):
            files[old] = None
        for old, data in _blobs(repo, tree, path).items():
            files[_free(repo, tree, f"{FOLDER}/{old.removeprefix(ROOT + '/')}", files)] = data
    new_tree = git.write_tree(repo, tree, files)
    listed = "".join(f"\n  {p}" for p in [*paths, *([PACKET] if packet_from else [])])
    back = f"; {PACKET} put back on its version of {packet_from[:7]}" if packet_from else ""
    count = len(paths) + bool(packet_from)
    message = (
        f"doctor: move {count} malformed file{'s' if count != 1 else ''} into quarantine{back}\n\n"
        f"Kept under {FOLDER}/, never read as state:{listed}\n"
    )
    made = git.write_commit(repo, new_tree, [commit], message)
    return Repair(made, tuple(paths), left, packet_from)


def _free(repo: Repo, tree: Oid, wanted: str, taken: dict[str, bytes | None]) -> str:
    """wanted, or wanted.2, .3, … when the quarantine already holds that name."""
    name, n = wanted, 1
    while name in taken or git.entry_oid(repo, tree, name) is not None:
        n += 1
        name = f"{wanted}.{n}"
    return name


def quarantined(snap: store.Snapshot) -> list[str]:
    """The files in the stream's quarantine, as paths."""
    if snap.tree is None or git.tree_entries(snap.repo, snap.tree, FOLDER) is None:
        return []
    return _all_paths(snap.repo, snap.tree, FOLDER)


# -- what is kept there, and taking it back or dropping it (git continuity quarantine) ------

_COPY = re.compile(r"\.(?:[2-9]|[1-9]\d+)$")  # the .2, .3 … _free adds to a name already taken


@dataclass(frozen=True)
class Kept:
    """One file in the quarantine: its name there (the path under quarantine/), the path it
    was moved from, and its size."""

    name: str
    was: str
    size: int
    missing: bool  # the object was missing when it was moved: only a line saying so is kept


def kept(snap: store.Snapshot) -> list[Kept]:
    """Every file in the stream's quarantine, in path order."""
    found = []
    for path in quarantined(snap):
        assert snap.tree is not None
        oid = git.entry_oid(snap.repo, snap.tree, path)
        name = path.removeprefix(FOLDER + "/")
        missing = name.endswith(".missing")
        was = f"{ROOT}/{_COPY.sub('', name.removesuffix('.missing'))}"
        size = len(git.blob(snap.repo, oid)) if oid is not None else 0
        found.append(Kept(name, was, size, missing))
    return found


def pick(snap: store.Snapshot, names: list[str], every: bool) -> list[Kept]:
    """The kept files named (by their name under quarantine/, or all with ``every``); a name
    that is not there is refused, naming what is."""
    there = kept(snap)
    if every:
        if names:
            raise UserError("give file names or --all, not both")
        if not there:
            raise UserError(f"the quarantine of stream '{snap.stream}' is empty: nothing to do")
        return there
    if not names:
        raise UserError("name the files (git continuity quarantine list shows them), or give --all")
    by_name = {k.name: k for k in there}
    for name in names:
        if name.removeprefix(FOLDER + "/") not in by_name:
            listed = ", ".join(by_name) or "none"
            raise UserError(
                f"no {name!r} in the quarantine of stream '{snap.stream}' (there: {listed}); nothing was written"
            )
    return [by_name[n.removeprefix(FOLDER + "/")] for n in dict.fromkeys(names)]


def content(snap: store.Snapshot, item: Kept) -> bytes:
    assert snap.tree is not None
    oid = git.entry_oid(snap.repo, snap.tree, f"{FOLDER}/{item.name}")
    return git.blob(snap.repo, oid) if oid is not None else b""


def restorable(snap: store.Snapshot, item: Kept) -> bytes:
    """The file's bytes, when putting it back where it was makes a well-formed entry; else a
    UserError saying what is still wrong (nothing is written)."""
    import json

    from git_continuity.store import schema

    where = f"{FOLDER}/{item.name}"
    folder = item.was.removeprefix(ROOT + "/").split("/")[0]
    if item.missing or folder not in store.KINDS:
        raise UserError(f"{where} cannot go back: {item.was} is no entry of the state format; nothing was written")
    if snap.tree is not None and git.entry_oid(snap.repo, snap.tree, item.was) is not None:
        raise UserError(f"{where} cannot go back: {item.was} exists again; nothing was written")
    data = content(snap, item)
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise UserError(f"{where} is still not valid JSON ({error}); nothing was written") from None
    wrong = schema.problems(store.KINDS[folder], parsed)
    stem = item.was.rsplit("/", 1)[-1].removesuffix(".json")
    if not wrong and not (isinstance(parsed, dict) and stem.endswith(str(parsed.get("id")))):
        wrong = [(("id",), f"{parsed.get('id')!r} does not match the file name")]
    if wrong:
        said = "; ".join(f"{schema.key_path(p)}: {m}" for p, m in wrong[:3])
        raise UserError(
            f"{where} is still malformed ({said}); nothing was written.\n"
            f"Read it with git continuity quarantine show {item.name}, and record what is worth keeping anew."
        )
    return data
