"""Reading the state: each kind of entry, the packet, and every problem of the whole tree.

Readers return plain values and record what they found malformed on the snapshot, once
per file (state.py). Folders and packets already read without problems are kept under
``.git/continuity/cache/`` by their object ids (content-addressed, so never stale).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from git_continuity import atomic
from git_continuity import repo as git
from git_continuity.model import Claim, Evidence, JournalEntry, ObjectiveChange, Packet, Thread
from git_continuity.repo import Oid
from git_continuity.store import packetfile, schema
from git_continuity.store.state import KINDS, ROOT, Snapshot, good

if TYPE_CHECKING:  # imported where they are read: a write command needs neither (~8 ms)
    from git_continuity.store.attempts import Attempt
    from git_continuity.store.records import ConflictRecord, Handoff


def _json_line(text: str, key: str | int | None) -> str:
    if isinstance(key, str):
        for number, line in enumerate(text.splitlines(), 1):
            if f'"{key}":' in line:
                return f" line {number}"
    return ""


def _entry(snap: Snapshot, path: str, oid: Oid, kind: str) -> dict[str, Any] | None:
    """One JSON entry, validated unless known good; None (and a problem, the first time) if bad."""
    if snap.known_bad(path):
        return None
    try:
        raw = git.blob(snap.repo, oid)
    except KeyError:
        snap.found_bad(path, [f"{path}: {MISSING_OBJECT.format(oid[:7])}"])
        return None
    too_big = schema.size_problem(len(raw), schema.MAX_BYTES["entry"])
    if too_big:
        snap.found_bad(path, [f"{path}: {too_big}: it was not read"])
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        snap.found_bad(path, [f"{path}: not valid JSON: {error}"])
        return None
    except RecursionError:  # json's decoder recurses once per level
        snap.found_bad(path, [f"{path}: nested deeper than {MAX_NESTING} levels: it was not read"])
        return None
    name = path.rsplit("/", 1)[-1]
    known = good(kind, oid, name)
    if snap.good_tree or known in snap.cache:
        return data  # type: ignore[no-any-return]
    if _too_deep(data):
        snap.found_bad(path, [f"{path}: nested deeper than {MAX_NESTING} levels: it was not read"])
        return None
    found = schema.problems(kind, data)
    if not found and isinstance(data, dict) and not name.removesuffix(".json").endswith(str(data.get("id"))):
        found = [(("id",), f"{data.get('id')!r} does not match the file name")]
    if found:
        text = raw.decode(errors="replace")
        snap.found_bad(
            path, [f"{path}{_json_line(text, p[-1] if p else None)}: {schema.key_path(p)}: {m}" for p, m in found]
        )
        return None
    snap.cache.add([known])
    return data  # type: ignore[no-any-return]


MAX_NESTING = 32  # entries nest a few levels; a deeper one is a mistake or an attack
MISSING_OBJECT = "its object {} is missing here (deleted, or a fetch that did not finish)"


def _too_deep(data: Any) -> bool:
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_NESTING:
                return True
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))
    return False


def claim_ids(snap: Snapshot) -> set[str]:
    return {e.name.removesuffix(".json") for e in _files(snap, "claims")}


def _folder(snap: Snapshot, folder: str) -> list[git.TreeEntry]:
    """The entries of ``.continuity/<folder>``; a file where the folder belongs is a problem."""
    assert snap.tree is not None
    path = f"{ROOT}/{folder}"
    found = git.tree_entries(snap.repo, snap.tree, path)
    if found is None and git.entry_oid(snap.repo, snap.tree, path) is not None:
        snap.found_bad(path, [f"{path}: a file where a folder of entries belongs"])
    return found or []


def _files(snap: Snapshot, folder: str) -> list[git.TreeEntry]:
    """The entry files of a folder of entries; a folder inside it is a problem."""
    return _listing(snap, folder)[0]


def _listing(snap: Snapshot, folder: str) -> tuple[list[git.TreeEntry], bool]:
    """_files, and whether the folder holds nothing but files (what may be cached whole)."""
    if snap.tree is None:
        return [], True
    found = _folder(snap, folder)
    whole = not snap.known_bad(f"{ROOT}/{folder}")
    for e in found:
        if e.is_tree:
            snap.found_bad(f"{ROOT}/{folder}/{e.name}", [f"{ROOT}/{folder}/{e.name}: a folder where an entry belongs"])
            whole = False
    return [e for e in found if not e.is_tree], whole


def _shards(snap: Snapshot, folder: str) -> list[git.TreeEntry]:
    """The shard folders of a sharded folder (journal/<day>/…); a file directly in it is a problem."""
    if snap.tree is None:
        return []
    found = _folder(snap, folder)
    for e in found:
        if not e.is_tree:
            where = f"{ROOT}/{folder}/{e.name}"
            snap.found_bad(where, [f"{where}: a file directly in {ROOT}/{folder}/, where only its folders belong"])
    return [e for e in found if e.is_tree]


def read_packet_doc(snap: Snapshot) -> tuple[Any, Packet] | None:
    """The packet document and its values, or None (with a problem) when it is malformed."""
    if snap.tree is None or snap.known_bad(packetfile.PATH):
        return None
    oid = git.entry_oid(snap.repo, snap.tree, packetfile.PATH)
    if oid is None:
        snap.found_bad(packetfile.PATH, [f"{packetfile.PATH}: missing (run git continuity edit to recreate it)"])
        return None
    known = good("packet", oid) in snap.cache
    try:
        raw = git.blob(snap.repo, oid)
        parsed = packetfile.parse(raw.decode(), validate=not known)
    except KeyError:
        snap.found_bad(packetfile.PATH, [f"{packetfile.PATH}: {MISSING_OBJECT.format(oid[:7])}"])
        return None
    except UnicodeDecodeError as error:
        where = f"byte offset {error.start} is not UTF-8 (0x{raw[error.start]:02x})"
        snap.found_bad(packetfile.PATH, [f"{packetfile.PATH}: {where}"])
        return None
    except packetfile.YamlError as error:
        snap.found_bad(packetfile.PATH, [str(error)])
        return None
    if not any(key in parsed[0] for key in ("objective", "next_action", "blockers")):
        snap.found_bad(packetfile.PATH, [f"{packetfile.PATH}: {EMPTY_PACKET}"])
        return None
    snap.cache.add([good("packet", oid)])
    return parsed


EMPTY_PACKET = "empty: none of objective, next_action, blockers is there (git continuity edit writes them back)"


def read_packet(snap: Snapshot) -> Packet | None:
    """The packet's values. A packet once parsed is kept as JSON under the cache folder by
    its blob id, so a status does not pay for ruamel.yaml."""
    oid = git.entry_oid(snap.repo, snap.tree, packetfile.PATH) if snap.tree else None
    kept = _kept(snap, "packet", oid)
    if kept is not None:
        with contextlib.suppress(TypeError, AttributeError):
            return packetfile.packet_from(kept)
    parsed = read_packet_doc(snap)
    if parsed is None:
        return None
    assert oid is not None  # read_packet_doc found it
    _keep(snap, "packet", oid, packetfile.plain(parsed[0]))
    return parsed[1]


def _kept(snap: Snapshot, kind: str, oid: Oid | None) -> Any:
    """What was kept under the cache folder for an object read once as ``kind`` without
    problems (None: nothing kept, or unreadable). Keyed by the object's id: never stale. In a
    tree known good as a whole, what was kept of a part of it was kept from a good read."""
    if oid is None or not (snap.good_tree or good(kind, oid) in snap.cache):
        return None
    try:
        return json.loads((snap.repo.local_dir / "cache" / kind / f"{oid}.json").read_bytes())
    except (OSError, ValueError):
        return None


def _keep(snap: Snapshot, kind: str, oid: Oid, value: Any) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
        atomic.write(snap.repo.local_dir / "cache" / kind / f"{oid}.json", json.dumps(value))
        snap.cache.add([good(kind, oid)])


def _folder_oid(snap: Snapshot, folder: str) -> Oid | None:
    return git.entry_oid(snap.repo, snap.tree, f"{ROOT}/{folder}") if snap.tree else None


def _read_folder(snap: Snapshot, folder: str) -> tuple[dict[str, dict[str, Any]], bool]:
    """The well-formed entries of a flat folder, by id (malformed ones become problems), and
    whether it was all well formed (what may be kept whole)."""
    found = {}
    listed, whole = _listing(snap, folder)
    for e in listed:
        data = _entry(snap, f"{ROOT}/{folder}/{e.name}", e.oid, KINDS[folder])
        if data is None:
            whole = False
        else:
            found[data["id"]] = data
    return found, whole


def _by_id(snap: Snapshot, folder: str) -> dict[str, dict[str, Any]]:
    """The well-formed entries of a flat folder, by id (malformed ones become problems).

    A folder read once without problems is kept whole as one JSON file under the cache
    folder, named by the folder's tree id (content-addressed, so it never goes stale): a
    status then reads one file instead of a thousand objects."""
    folder_oid = _folder_oid(snap, folder)
    kept = _kept(snap, f"folders/{folder}", folder_oid)
    if isinstance(kept, dict):
        return kept
    found, whole = _read_folder(snap, folder)
    if folder_oid is not None and whole:
        _keep(snap, f"folders/{folder}", folder_oid, found)
    return found


CLAIM_FIELDS = [f.name for f in fields(Claim)]


def read_claims(snap: Snapshot) -> dict[str, Claim]:
    """Every well-formed claim, by id (new objects at each call: a reader may change one)."""
    return {row[0]: Claim(*row) for row in snap.claim_rows(lambda: _claim_rows(snap))}


def _claim_rows(snap: Snapshot) -> list[list[Any]]:
    """Each claim's values in the order of Claim's fields. The claims folder is kept as such
    rows: a third of the time of reading them back as objects, which a status of 100,000
    claims felt."""
    folder_oid = _folder_oid(snap, "claims")
    kept = _kept(snap, "claims", folder_oid)
    if isinstance(kept, dict) and kept.get("fields") == CLAIM_FIELDS and isinstance(kept.get("rows"), list):
        rows: list[list[Any]] = kept["rows"]
        if all(isinstance(row, list) and len(row) == len(CLAIM_FIELDS) and isinstance(row[0], str) for row in rows):
            return rows
    found, whole = _read_folder(snap, "claims")
    rows = [[getattr(c, name) for name in CLAIM_FIELDS] for c in (Claim(**data) for data in found.values())]
    if folder_oid is not None and whole:
        _keep(snap, "claims", folder_oid, {"fields": CLAIM_FIELDS, "rows": rows})
    return rows


def read_threads(snap: Snapshot) -> dict[str, Thread]:
    return {i: Thread(**data) for i, data in _by_id(snap, "threads").items()}


def read_conflicts(snap: Snapshot) -> list[ConflictRecord]:
    """Conflict records a merge left (store/merge.py), the newest first."""
    listed = _files(snap, "conflicts")
    if not listed:
        return []  # most states: records (14 dataclasses, ~6 ms to import) are not needed
    from git_continuity.store.records import ConflictRecord

    found = []
    for e in listed:
        data = _entry(snap, f"{ROOT}/conflicts/{e.name}", e.oid, "conflict")
        if data is not None:
            found.append(ConflictRecord.from_json(data))
    return sorted(found, key=lambda c: (max(c.kept_from.at, c.lost_from.at), c.id), reverse=True)


def read_places(snap: Snapshot) -> dict[str, dict[str, Any]]:
    """The places (branches and worktrees with a role) as stored, by id (store/places.py reads them)."""
    return _by_id(snap, "places")


def read_siblings(snap: Snapshot) -> dict[str, dict[str, Any]]:
    """The sibling repositories the stream spans, as stored, by id (store/siblings.py reads them)."""
    return _by_id(snap, "siblings")


def read_thread_claims(snap: Snapshot) -> dict[str, dict[str, Any]]:
    return _by_id(snap, "thread-claims")  # which session is on which thread (planning.claims_from)


def read_objective_log(snap: Snapshot) -> list[ObjectiveChange]:
    changes = []
    for e in sorted(_files(snap, "objective"), key=lambda e: e.name):
        data = _entry(snap, f"{ROOT}/objective/{e.name}", e.oid, "objective-change")
        if data is not None:
            changes.append(ObjectiveChange(**{"old": None, "new": None, **data}))
    return changes


def count_objective_changes(snap: Snapshot) -> int:
    return len(_files(snap, "objective"))


class DayCounts:
    """How many entries each day folder of a journal holds, kept by the folder's tree id
    under the cache folder (``journal-days``): a read that shows the newest entries counts
    the rest without reading a year of day folders (each folder's tree is read once)."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.path = snap.repo.local_dir / "cache" / "journal-days"
        self.known: dict[str, int] = {}
        self.asked: set[str] = set()
        self.new = False
        with contextlib.suppress(OSError, ValueError):
            for line in self.path.read_text().splitlines():
                oid, _, count = line.partition(" ")
                self.known[oid] = int(count)

    def count(self, day: git.TreeEntry) -> int:
        self.asked.add(day.oid)
        if day.oid not in self.known:
            self.known[day.oid] = git.tree_size(self.snap.repo, day.oid)
            self.new = True
        return self.known[day.oid]

    def keep(self) -> None:
        """Write down what was counted (only the folders asked about: the others changed)."""
        if self.new:
            text = "".join(f"{oid} {n}\n" for oid, n in self.known.items() if oid in self.asked)
            with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
                atomic.write(self.path, text)
            self.new = False


def read_journal(snap: Snapshot, latest: int | None = None) -> tuple[list[JournalEntry], int]:
    """The newest ``latest`` entries (all when None), oldest first, and how many there are."""
    if snap.tree is None:
        return [], 0
    days = sorted(_shards(snap, "journal"), key=lambda e: e.name, reverse=True)
    picked: list[tuple[str, Oid]] = []
    total = 0
    counts = DayCounts(snap)
    for day in days:
        if latest is not None:  # the newest of each day taken from its end, the rest counted
            total += counts.count(day)
            if len(picked) < latest:
                newest = git.last_entries(snap.repo, day.oid, latest - len(picked))
                picked.extend((f"{day.name}/{f.name}", f.oid) for f in newest)
            continue
        files = git.tree_entries(snap.repo, day.oid) or []
        total += len(files)
        picked.extend(sorted(((f"{day.name}/{f.name}", f.oid) for f in files), reverse=True))
    counts.keep()
    entries = []
    for path, oid in reversed(picked):
        data = _entry(snap, f"{ROOT}/journal/{path}", oid, "journal-entry")
        if data is not None:
            entries.append(JournalEntry(**data))
    return entries, total


def journal_since(snap: Snapshot, moment: str) -> list[JournalEntry]:
    """Journal entries made after ``moment`` (a stored time), oldest first; only the day
    folders from that day on are read."""
    if snap.tree is None:
        return []
    # File names sort by the time they were written (model.sortable_name, to the microsecond):
    # a name before the moment's millisecond is an entry made before it, not worth reading.
    before = moment[:23].replace("-", "").replace(":", "") if len(moment) == 24 and moment[19] == "." else ""
    found = []
    for day in sorted((d for d in _shards(snap, "journal") if d.name >= moment[:10]), key=lambda d: d.name):
        for e in sorted(git.tree_entries(snap.repo, day.oid) or [], key=lambda e: e.name):
            if e.name[:8].isdigit() and e.name < before:
                continue
            data = _entry(snap, f"{ROOT}/journal/{day.name}/{e.name}", e.oid, "journal-entry")
            if data is not None and data["at"] > moment:
                found.append(JournalEntry(**data))
    return found


def latest_handoff(snap: Snapshot) -> Handoff | None:
    """The newest handoff of the stream (the file names sort by time), or None."""
    from git_continuity.store.records import Handoff

    if snap.tree is None:
        return None
    for day in sorted(_shards(snap, "handoffs"), key=lambda d: d.name, reverse=True):
        for e in sorted(git.tree_entries(snap.repo, day.oid) or [], key=lambda e: e.name, reverse=True):
            data = _entry(snap, f"{ROOT}/handoffs/{day.name}/{e.name}", e.oid, "handoff")
            if data is not None:
                return Handoff.from_json(data)
    return None


def latest_evidence(snap: Snapshot, claim_id: str) -> Evidence | None:
    files = sorted(_files(snap, f"evidence/{claim_id}"), key=lambda e: e.name)
    for e in reversed(files):
        data = _entry(snap, f"{ROOT}/evidence/{claim_id}/{e.name}", e.oid, "evidence")
        if data is not None:
            return Evidence(**data)
    return None


def evidence_history(snap: Snapshot, claim_id: str) -> list[Evidence]:
    """Every evidence entry recorded for a claim, oldest first (claim show)."""
    found = []
    for e in sorted(_files(snap, f"evidence/{claim_id}"), key=lambda e: e.name):
        data = _entry(snap, f"{ROOT}/evidence/{claim_id}/{e.name}", e.oid, "evidence")
        if data is not None:
            found.append(Evidence(**data))
    return found


def read_attempts(snap: Snapshot, thread_id: str) -> list[Attempt]:
    """Every attempt recorded for a thread, in the order of their file names (attempts.ordered
    puts them in time order across clones). A thread's folder read once without problems is
    kept whole under the cache folder by its tree id, as _by_id keeps flat folders: a thread
    with 10,000 attempts is then one file to read, not 10,000 objects."""
    from git_continuity.store.attempts import Attempt

    folder = f"{ROOT}/attempts/{thread_id}"
    folder_oid = _folder_oid(snap, f"attempts/{thread_id}")
    if folder_oid is None:
        return []
    kept = _kept(snap, "folders/attempts", folder_oid)
    if kept is not None:
        with contextlib.suppress(TypeError, KeyError):
            return [Attempt.from_json(data) for data in kept]
    found = []
    listed, whole = _listing(snap, f"attempts/{thread_id}")
    for e in sorted(listed, key=lambda e: e.name):
        data = _entry(snap, f"{folder}/{e.name}", e.oid, "attempt")
        if data is None:
            whole = False
        else:
            found.append(data)
    if whole:
        _keep(snap, "folders/attempts", folder_oid, found)
        snap.cache.save()
    return [Attempt.from_json(data) for data in found]
