"""Every problem of a whole state: its tree walked once (each entry read as read.py reads it,
so a problem is worded the same whoever meets it first) and its commit's parents.

What belongs where: the packet and the format file at the top; one file per entry in the
flat folders (claims/, threads/, …) and inside the day or owner folders of the sharded ones
(journal/<day>/, evidence/<claim>/, …); and quarantine/, where doctor --fix moves what it
found malformed: kept and shown, never read as state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from git_continuity import repo as git
from git_continuity.store import packetfile
from git_continuity.store.read import _entry, _files, _shards, read_packet_doc
from git_continuity.store.state import FORMAT, KINDS, ROOT, Snapshot, good


def all_problems(snap: Snapshot) -> list[str]:
    """Every malformed file in the state, each once: those met by earlier reads first, then
    the rest in the order of a full walk, which is made once per snapshot (and skipped when
    the tree is known good). A state commit whose parent is missing here comes first."""
    if snap.tree is None:
        return []
    cut = history_problems(snap)
    if good("tree", snap.tree) in snap.cache:
        return cut
    if snap.walked is None:
        snap.keep_walked(_walk(snap))
    return [*cut, *(snap.walked or ())]


def history_problems(snap: Snapshot) -> list[str]:
    """The state commit's parents that this clone lacks (a deleted object, a cut history):
    such a state cannot be pushed, nor its log read."""
    if snap.commit is None:
        return []
    gone = [p for p in git.commit_parents(snap.repo, snap.commit) if not git.has_commit(snap.repo, p)]
    return [
        f"{snap.ref}: its commit {snap.commit[:7]} names a parent {p[:7]} that is missing here"
        " (a deleted object or a cut history); git continuity doctor says how to repair it"
        for p in gone
    ]


FLAT = ("claims", "threads", "objective", "conflicts", "places", "siblings", "thread-claims")
SHARDED = ("journal", "evidence", "handoffs", "attempts")
QUARANTINE = "quarantine"  # files doctor --fix moved aside: kept, shown, never read as state


def _checked(snap: Snapshot, kind: str, folder: git.TreeEntry, where: str, check: Callable[[], None]) -> None:
    """Check a folder of entries unless it is known good as a whole, and know it so when it
    is: a state a year old is walked after a pull by the folders that changed, not by its
    million entries."""
    known = good(f"folder-{kind}", folder.oid, folder.name)
    if known in snap.cache:
        return
    check()
    # Known good only when no file under it is known bad, by this walk or by a read before it
    # (a file a read found bad is not counted again here).
    if not snap.bad_under(where):
        snap.cache.add([known])
    snap.cache.checkpoint()


def _flat(snap: Snapshot, folder: str) -> None:
    for e in _files(snap, folder):
        if good(KINDS[folder], e.oid, e.name) not in snap.cache:
            _entry(snap, f"{ROOT}/{folder}/{e.name}", e.oid, KINDS[folder])


def _shard(snap: Snapshot, folder: str, shard: git.TreeEntry) -> None:
    for e in git.tree_entries(snap.repo, shard.oid) or []:
        if e.is_tree or good(KINDS[folder], e.oid, e.name) not in snap.cache:
            _entry(snap, f"{ROOT}/{folder}/{shard.name}/{e.name}", e.oid, KINDS[folder])


def _walk(snap: Snapshot) -> list[str]:
    assert snap.tree is not None
    root = git.tree_entries(snap.repo, snap.tree, ROOT)
    if root is None:
        return [f"{snap.ref}: its tree has no {ROOT}/ folder"]
    found: list[str] = []
    for top in root:
        if top.name in ("packet.yaml", "format") and top.is_tree:
            snap.found_bad(f"{ROOT}/{top.name}", [f"{ROOT}/{top.name}: a folder where a file belongs"])
        elif top.name == "packet.yaml":
            if good("packet", top.oid) not in snap.cache:  # else parsed once already: no ruamel.yaml
                read_packet_doc(snap)
        elif top.name == "format":
            if git.blob(snap.repo, top.oid).decode(errors="replace").strip() != FORMAT:
                found.append(f"{ROOT}/format: written by a newer git-continuity (format is not {FORMAT}); upgrade")
        # An entry whose blob is known good is not even read (what _entry would do with
        # it): a merged tree made of two checked sides is walked without reading 20,000 blobs.
        elif top.name in FLAT:
            _checked(snap, top.name, top, f"{ROOT}/{top.name}/", functools.partial(_flat, snap, top.name))
        elif top.name in SHARDED:
            for shard in _shards(snap, top.name):
                _checked(
                    snap,
                    top.name,
                    shard,
                    f"{ROOT}/{top.name}/{shard.name}/",
                    functools.partial(_shard, snap, top.name, shard),
                )
        elif top.name != QUARANTINE or not top.is_tree:
            found.append(f"{ROOT}/{top.name}: not part of the state format {FORMAT}")
    if git.entry_oid(snap.repo, snap.tree, packetfile.PATH) is None:
        read_packet_doc(snap)
    found = [*snap.problems, *found]
    if not found:
        snap.cache.add([good("tree", snap.tree)])
    snap.cache.save()
    return found
