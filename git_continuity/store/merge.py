"""Merging two histories of a stream's state, and of the commit notes.

The merged tree is a function of the two commits alone, so it comes out the same whichever
side merges and on whichever machine; two clones that merge each other at once converge.

Entries (every file but the packet) merge three-way against the merge base:

- added on either side: kept (unrelated histories, where both clones ran ``init``, have an
  empty base: everything from both sides is kept);
- changed on one side only: that side's version;
- changed differently on both sides: the newer change wins (the time of the commit that
  introduced each value; equal times are decided by the content), and the other version is
  kept in a conflict record; a thread claim is the exception: the first claim wins (the
  earlier ``at``), since whoever claimed first may already be at work on the thread;
- deleted on one side: deleted (a union would bring dismissed or removed entries back),
  and if the other side had edited it, that edit is kept in a conflict record.

``packet.yaml`` is never merged as text (a line merge of YAML leaves markers or duplicate
keys): ``objective`` and ``next_action`` merge as values and ``blockers`` per id, with the
same rules. The document of the side that changed it last is kept with its comments; if the
other side had changed comments or layout too, its text is kept in a conflict record.

Conflict records are entries themselves (``.continuity/conflicts/<id>.json``), named from
what they are about and the two commits merged, so the same conflict found on two machines
is the same file, and dismissing it (deleting the file) merges like any deletion.

Several merge bases (after two clones merged each other at once) are merged first into a
virtual base, as git's recursive strategy does; otherwise what one clone deleted after such
a merge would come back.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.constants import ID_ALPHABET
from git_continuity.model import stamp
from git_continuity.repo import Oid, Repo, TreeEntry
from git_continuity.store import packetfile, planning

CONFLICTS = f"{store.ROOT}/conflicts"
THREAD_CLAIMS = f"{store.ROOT}/thread-claims/"
MAX_WALK = 100_000  # commits followed back to find when a value was introduced

BOTH = "edited on both sides"
DELETED = "deleted on one side, edited on the other"
LAYOUT = "comments or layout edited on both sides"


@dataclass(frozen=True)
class Conflict:
    """A place where both sides changed the same thing: what was kept, and the other value."""

    path: str
    key: str | None  # within the packet: objective, next_action, blockers/<id>, layout
    what: str
    kept: Any  # None when deletion won
    kept_from: Oid  # the commit that introduced the kept value
    lost: Any
    lost_from: Oid


@dataclass(frozen=True)
class Merged:
    tree: Oid
    conflicts: list[dict[str, Any]]  # the records written into the tree
    unrelated: bool  # no common history: both clones started a state (an empty base)


class Merger:
    """One merge of two commits; owns the caches of the walks it makes."""

    def __init__(self, repo: Repo, left: Oid, right: Oid) -> None:
        self.repo = repo
        self.left = left
        self.right = right
        self.conflicts: list[Conflict] = []
        self._trees: dict[Oid, Oid] = {}
        self._packets: dict[Oid | None, dict[str, Any]] = {}

    # -- when was a value introduced --------------------------------------------------------

    def tree_of(self, commit: Oid) -> Oid:
        found = self._trees.get(commit)
        if found is None:
            found = self._trees[commit] = git.commit_tree(self.repo, commit)
        return found

    def introduced(self, tip: Oid, value_at: Callable[[Oid], Any]) -> Oid:
        """The commit that gave ``value_at`` its value at tip: back from tip through any
        parent holding the same value (like git's history simplification). Commits are the
        same objects on every machine, so every machine finds the same one."""
        target = value_at(tip)
        current = tip
        for _ in range(MAX_WALK):
            nxt = next((p for p in git.commit_parents(self.repo, current) if value_at(p) == target), None)
            if nxt is None:
                return current
            current = nxt
        return current

    def entry_at(self, path: str) -> Callable[[Oid], Oid | None]:
        return lambda commit: git.entry_oid(self.repo, self.tree_of(commit), path)

    def packet_at(self, commit: Oid) -> dict[str, Any]:
        oid = git.entry_oid(self.repo, self.tree_of(commit), packetfile.PATH)
        found = self._packets.get(oid)
        if found is None:
            found = self._packets[oid] = _packet_values(self.repo, oid)
        return found

    def field_at(self, key: str) -> Callable[[Oid], Any]:
        return lambda commit: _field(self.packet_at(commit), key)

    def decide(
        self,
        path: str,
        key: str | None,
        values: tuple[Any, Any, Any],
        value_at: Callable[[Oid], Any],
        *,
        deletion_wins: bool = True,
    ) -> tuple[Any, Conflict | None]:
        """The three-way rule for one value (base, left, right; None: absent). Returns the
        merged value and the conflict to record, if any. ``deletion_wins`` is for entries;
        a scalar set to nothing is a value like any other."""
        base, left, right = values
        if left == right or right == base:
            return left, None
        if left == base:
            return right, None
        from_left, from_right = self.introduced(self.left, value_at), self.introduced(self.right, value_at)
        if deletion_wins and (left is None or right is None) and base is not None:
            # Deleted on one side, edited on the other: the deletion wins (beads 0.30.6 in
            # FIELD-NOTES: union-merged removals resurrected deleted entries).
            if left is None:
                return None, Conflict(path, key, DELETED, None, from_left, right, from_right)
            return None, Conflict(path, key, DELETED, None, from_right, left, from_left)
        if path.startswith(THREAD_CLAIMS) and left is not None and right is not None:
            # The first claim wins: the later one's clone is told at its next sync (store/claiming.py).
            left_wins = self._claimed(left) <= self._claimed(right)
        else:
            rank_left = (git.commit_time(self.repo, from_left), _canonical(left))
            left_wins = rank_left >= (git.commit_time(self.repo, from_right), _canonical(right))
        if left_wins:
            return left, Conflict(path, key, BOTH, left, from_left, right, from_right)
        return right, Conflict(path, key, BOTH, right, from_right, left, from_left)

    def _claimed(self, oid: Oid) -> tuple[str, bytes]:
        return planning.claim_order(git.blob(self.repo, oid))

    # -- trees ------------------------------------------------------------------------------

    def folder(self, path: str, base: Oid | None, left: Oid | None, right: Oid | None) -> Oid | None:
        """The merged folder at path (None: no folder), recursing only where sides differ."""
        if left == right or right == base:
            return left
        if left == base:
            return right
        entries = [self._listing(t) for t in (base, left, right)]
        merged = []
        for name in sorted(set().union(*entries)):
            b, lt, rt = (e.get(name) for e in entries)
            sub = f"{path}/{name}" if path else name
            if any(x is not None and x.is_tree for x in (b, lt, rt)):
                oid = self.folder(sub, *(x.oid if x is not None and x.is_tree else None for x in (b, lt, rt)))
                if oid is not None:
                    merged.append(TreeEntry(name, oid, True))
                continue
            oid = self.file(sub, *(x.oid if x is not None else None for x in (b, lt, rt)))
            if oid is not None:
                merged.append(TreeEntry(name, oid, False))
        return git.write_folder(self.repo, merged) if merged else None

    def _listing(self, tree: Oid | None) -> dict[str, TreeEntry]:
        if tree is None:
            return {}
        return {e.name: e for e in git.tree_entries(self.repo, tree) or []}

    def file(self, path: str, base: Oid | None, left: Oid | None, right: Oid | None) -> Oid | None:
        if path == packetfile.PATH and left is not None and right is not None and left != right:
            return self.packet(base, left, right)
        oid, conflict = self.decide(path, None, (base, left, right), self.entry_at(path))
        if conflict is not None:
            self.conflicts.append(conflict)
        return oid  # type: ignore[no-any-return]

    # -- the packet -------------------------------------------------------------------------

    def packet(self, base: Oid | None, left: Oid, right: Oid) -> Oid:
        if right == base:
            return left
        if left == base:
            return right
        values = [_packet_values(self.repo, oid) for oid in (base, left, right)]
        merged: dict[str, Any] = {}
        for key in ("objective", "next_action"):
            merged[key], conflict = self.decide(
                packetfile.PATH,
                key,
                (values[0][key], values[1][key], values[2][key]),
                self.field_at(key),
                deletion_wins=False,
            )
            if conflict is not None:
                self.conflicts.append(conflict)
        # The document kept is the one changed last (its comments and order); blockers keep
        # its order, then the other side's new ones in theirs.
        from_left = self.introduced(self.left, self.entry_at(packetfile.PATH))
        from_right = self.introduced(self.right, self.entry_at(packetfile.PATH))
        left_text, right_text = git.blob(self.repo, left), git.blob(self.repo, right)
        left_wins = (git.commit_time(self.repo, from_left), left_text) >= (
            git.commit_time(self.repo, from_right),
            right_text,
        )
        kept_oid, other_oid = (left, right) if left_wins else (right, left)
        kept_vals, other_vals = (values[1], values[2]) if left_wins else (values[2], values[1])
        order = list(kept_vals["blockers"]) + [i for i in other_vals["blockers"] if i not in kept_vals["blockers"]]
        order += [i for i in values[0]["blockers"] if i not in order]
        blockers = {}
        for blocker_id in order:
            key = f"blockers/{blocker_id}"
            found = tuple(v["blockers"].get(blocker_id) for v in values)
            value, conflict = self.decide(packetfile.PATH, key, (found[0], found[1], found[2]), self.field_at(key))
            if conflict is not None:
                self.conflicts.append(conflict)
            if value is not None:
                blockers[blocker_id] = value
        merged["blockers"] = list(blockers.values())

        doc, _ = packetfile.parse(git.blob(self.repo, kept_oid).decode(), validate=False)
        base_layout = _layout(self.repo, base) if base is not None else None
        other_layout = _layout(self.repo, other_oid)
        if other_layout != base_layout and other_layout != _layout(self.repo, kept_oid):
            self.conflicts.append(
                Conflict(
                    packetfile.PATH,
                    "layout",
                    LAYOUT,
                    git.blob(self.repo, kept_oid).decode(errors="replace"),
                    from_left if left_wins else from_right,
                    git.blob(self.repo, other_oid).decode(errors="replace"),
                    from_right if left_wins else from_left,
                )
            )
        packetfile.set_values(doc, merged)
        return git.write_blob(self.repo, packetfile.dump(doc))


def _field(values: Mapping[str, Any], key: str) -> Any:
    if key.startswith("blockers/"):
        return values["blockers"].get(key.removeprefix("blockers/"))
    return values[key]


def _packet_values(repo: Repo, oid: Oid | None) -> dict[str, Any]:
    """objective, next_action and blockers (by id) as plain values; an absent packet is empty."""
    if oid is None:
        return {"objective": None, "next_action": None, "blockers": {}}
    doc, _ = packetfile.parse(git.blob(repo, oid).decode(), validate=False)
    plain = packetfile.plain(doc)
    return {
        "objective": plain.get("objective"),
        "next_action": plain.get("next_action"),
        "blockers": {b["id"]: b for b in plain.get("blockers") or []},
    }


def _layout(repo: Repo, oid: Oid) -> list[str]:
    """The packet's comments and key order: what is left of it once its values are merged."""
    doc, _ = packetfile.parse(git.blob(repo, oid).decode(), validate=False)
    return packetfile.comments(doc)


def _canonical(value: Any) -> bytes:
    """A total order on values for equal times (an entry's value is its blob id)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False).encode()


# -- conflict records -----------------------------------------------------------------------


def conflict_id(path: str, key: str | None, between: tuple[Oid, Oid]) -> str:
    """``x-`` and six id characters derived from what the conflict is about and the two
    commits merged: every machine finding it names it the same."""
    digest = int.from_bytes(hashlib.sha256(f"{path}\0{key or ''}\0{between[0]}\0{between[1]}".encode()).digest(), "big")
    chars = []
    for _ in range(6):
        digest, index = divmod(digest, len(ID_ALPHABET))
        chars.append(ID_ALPHABET[index])
    return "x-" + "".join(chars)


def _stored(repo: Repo, path: str, key: str | None, value: Any) -> Any:
    """A value as a conflict record holds it: packet values as they are, entries parsed."""
    if key is not None or value is None:
        return value
    raw = git.blob(repo, value)
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")


def record(repo: Repo, conflict: Conflict, between: tuple[Oid, Oid]) -> dict[str, Any]:
    def origin(commit: Oid) -> dict[str, str]:
        when = datetime.fromtimestamp(git.commit_time(repo, commit), timezone.utc)
        return {"commit": commit, "at": stamp(when)}

    data: dict[str, Any] = {
        "id": conflict_id(conflict.path, conflict.key, between),
        "path": conflict.path,
        "what": conflict.what,
        "kept": _stored(repo, conflict.path, conflict.key, conflict.kept),
        "kept_from": origin(conflict.kept_from),
        "lost": _stored(repo, conflict.path, conflict.key, conflict.lost),
        "lost_from": origin(conflict.lost_from),
        "between": list(between),
    }
    if conflict.key is not None:
        data["key"] = conflict.key
    return data


def record_bytes(data: dict[str, Any]) -> bytes:
    # Not store.entry_bytes: a conflict's ``kept`` is null when deletion won, and says so.
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def conflict_path(conflict_id: str) -> str:
    return f"{CONFLICTS}/{conflict_id}.json"


# -- merging two commits --------------------------------------------------------------------


def merge_commits(repo: Repo, left: Oid, right: Oid, *, depth: int = 0) -> Merged:
    """The merged tree of two state commits and the conflict records it holds."""
    between = (min(left, right), max(left, right))
    bases = git.merge_bases(repo, left, right)
    base = _base_commit(repo, bases, depth)
    merger = Merger(repo, left, right)
    root = merger.folder(
        "", git.commit_tree(repo, base) if base else None, git.commit_tree(repo, left), git.commit_tree(repo, right)
    )
    if root is None:
        root = git.write_tree(repo, None, {})
    records = [record(repo, c, between) for c in merger.conflicts]
    if records:
        root = git.write_tree(repo, root, {conflict_path(r["id"]): record_bytes(r) for r in records})
    return Merged(root, records, not bases)


# Merge bases merged into the virtual one, at most. Clones folding one another's lanes make
# many bases at once; an entry one of the older ones alone holds is, at worst, kept where a
# deletion would have won, never lost.
MAX_BASES = 3


def _base_commit(repo: Repo, bases: list[Oid], depth: int) -> Oid | None:
    """The merge base; several are merged into a virtual one. Only one level deep: the bases
    of the bases are taken as they are (the first of them). A fleet whose clones fold one
    another's lanes makes criss-cross histories where every level has several bases again,
    and merging them all the way down grows without bound; one level keeps deletions and
    changes on either side told apart, and a base one level older only records more conflicts."""
    if not bases:
        return None
    if depth > 0:
        return bases[0]
    if len(bases) > MAX_BASES:  # the newest ones: what the two sides last had in common
        bases = sorted(bases, key=lambda b: (git.commit_time(repo, b), b))[-MAX_BASES:]
    virtual = bases[0]
    for other in bases[1:]:
        merged = merge_commits(repo, virtual, other, depth=depth + 1)
        when = max(git.commit_time(repo, virtual), git.commit_time(repo, other))
        virtual = git.write_commit_at(repo, merged.tree, sorted([virtual, other]), "virtual merge base", when)
    return virtual


def merge_notes(repo: Repo, left: Oid, right: Oid) -> Oid:
    """The union of two notes commits' trees: per annotated commit, every line of both notes
    (sorted, unique, as ``git notes merge -s cat_sort_uniq`` would), so nothing is lost."""
    ours, theirs = git.notes_map(repo, left), git.notes_map(repo, right)
    merged = dict(ours)
    for annotated, note in theirs.items():
        mine = merged.get(annotated)
        if mine is None:
            merged[annotated] = note
        elif mine != note:
            lines = set(git.blob(repo, mine).decode(errors="replace").splitlines())
            lines |= set(git.blob(repo, note).decode(errors="replace").splitlines())
            merged[annotated] = git.write_blob(repo, ("\n".join(sorted(lines - {""})) + "\n").encode())
    return git.write_notes_tree(repo, merged)
