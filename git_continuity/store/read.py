"""Reading the state: each kind of entry, the packet, and every problem of the whole tree.

Readers return plain values and record what they found malformed on the snapshot, once
per file (state.py). Folders and packets already read without problems are kept under
``.git/continuity/cache/`` by their object ids (content-addressed, so never stale).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from git_continuity import atomic, packetfile, schema
from git_continuity import repo as git
from git_continuity.model import Claim, Evidence, JournalEntry, ObjectiveChange, Packet, Thread
from git_continuity.repo import Oid
from git_continuity.store.state import FORMAT, KINDS, ROOT, Snapshot

if TYPE_CHECKING:  # imported where they are read: a write command needs neither (~8 ms)
    from git_continuity.attempts import Attempt
    from git_continuity.records import ConflictRecord, Handoff


def _json_line(text: str, key: str | int | None) -> str:
    if isinstance(key, str):
        for number, line in enumerate(text.splitlines(), 1):
            if f'"{key}":' in line:
                return f" line {number}"
    return ""


def _entry(snap: Snapshot, path: str, oid: Oid, kind: str) -> dict[str, Any] | None:
    """One JSON entry, validated unless its blob is known good; None (and a problem, the
    first time) if bad."""
    if snap.known_bad(path):
        return None
    raw = git.blob(snap.repo, oid)
    too_big = schema.size_problem(len(raw), schema.MAX_BYTES["entry"])
    if too_big:
        snap.found_bad(path, [f"{path}: {too_big}: it was not read"])
        return None
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        snap.found_bad(path, [f"{path}: not valid JSON: {error}"])
        return None
    if oid in snap.cache:
        return data  # type: ignore[no-any-return]
    found = schema.problems(kind, data)
    stem = path.rsplit("/", 1)[-1].removesuffix(".json")
    if not found and isinstance(data, dict) and not stem.endswith(str(data.get("id"))):
        found = [(("id",), f"{data.get('id')!r} does not match the file name")]
    if found:
        text = raw.decode(errors="replace")
        snap.found_bad(
            path, [f"{path}{_json_line(text, p[-1] if p else None)}: {schema.key_path(p)}: {m}" for p, m in found]
        )
        return None
    snap.cache.add([oid])
    return data  # type: ignore[no-any-return]


def claim_ids(snap: Snapshot) -> set[str]:
    return {e.name.removesuffix(".json") for e in _files(snap, "claims")}


def _files(snap: Snapshot, folder: str) -> list[git.TreeEntry]:
    if snap.tree is None:
        return []
    return [e for e in git.tree_entries(snap.repo, snap.tree, f"{ROOT}/{folder}") or [] if not e.is_tree]


def read_packet_doc(snap: Snapshot) -> tuple[Any, Packet] | None:
    """The packet document and its values, or None (with a problem) when it is malformed."""
    if snap.tree is None or snap.known_bad(packetfile.PATH):
        return None
    oid = git.entry_oid(snap.repo, snap.tree, packetfile.PATH)
    if oid is None:
        snap.found_bad(packetfile.PATH, [f"{packetfile.PATH}: missing (run git continuity edit to recreate it)"])
        return None
    known = oid in snap.cache
    try:
        parsed = packetfile.parse(git.blob(snap.repo, oid).decode(), validate=not known)
    except (packetfile.YamlError, UnicodeDecodeError) as error:
        snap.found_bad(packetfile.PATH, [str(error)])
        return None
    snap.cache.add([oid])
    return parsed


def read_packet(snap: Snapshot) -> Packet | None:
    """The packet's values. A packet once parsed is kept as JSON under the cache folder by
    its blob id, so a status does not pay for ruamel.yaml."""
    oid = git.entry_oid(snap.repo, snap.tree, packetfile.PATH) if snap.tree else None
    cached = snap.repo.local_dir / "cache" / "packet" / f"{oid}.json"
    if oid is not None and oid in snap.cache:
        try:
            return packetfile.packet_from(json.loads(cached.read_text()))
        except (OSError, ValueError, TypeError):
            pass
    parsed = read_packet_doc(snap)
    if parsed is None:
        return None
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
        atomic.write(cached, json.dumps(packetfile.plain(parsed[0])))
    return parsed[1]


def _by_id(snap: Snapshot, folder: str) -> dict[str, dict[str, Any]]:
    """The well-formed entries of a flat folder, by id (malformed ones become problems).

    A folder read once without problems is kept whole as one JSON file under the cache
    folder, named by the folder's tree id (content-addressed, so it never goes stale): a
    status then reads one file instead of a thousand objects."""
    folder_oid = git.entry_oid(snap.repo, snap.tree, f"{ROOT}/{folder}") if snap.tree else None
    cached = snap.repo.local_dir / "cache" / "folders" / f"{folder_oid}.json"
    if folder_oid is not None and folder_oid in snap.cache:
        try:
            kept: dict[str, dict[str, Any]] = json.loads(cached.read_text())
            return kept
        except (OSError, ValueError):
            pass
    found = {}
    whole = True
    for e in _files(snap, folder):
        data = _entry(snap, f"{ROOT}/{folder}/{e.name}", e.oid, KINDS[folder])
        if data is None:
            whole = False
        else:
            found[data["id"]] = data
    if folder_oid is not None and whole:
        try:
            atomic.write(cached, json.dumps(found))
            snap.cache.add([folder_oid])
        except OSError:
            pass  # a cache that cannot be written only costs speed
    return found


def read_claims(snap: Snapshot) -> dict[str, Claim]:
    return {i: Claim(**data) for i, data in _by_id(snap, "claims").items()}


def read_threads(snap: Snapshot) -> dict[str, Thread]:
    return {i: Thread(**data) for i, data in _by_id(snap, "threads").items()}


def read_conflicts(snap: Snapshot) -> list[ConflictRecord]:
    """Conflict records a merge left (merge.py), the newest first."""
    from git_continuity.records import ConflictRecord

    found = []
    for e in _files(snap, "conflicts"):
        data = _entry(snap, f"{ROOT}/conflicts/{e.name}", e.oid, "conflict")
        if data is not None:
            found.append(ConflictRecord.from_json(data))
    return sorted(found, key=lambda c: (max(c.kept_from.at, c.lost_from.at), c.id), reverse=True)


def read_places(snap: Snapshot) -> dict[str, dict[str, Any]]:
    """The places (branches and worktrees with a role) as stored, by id (places.py reads them)."""
    return _by_id(snap, "places")


def read_siblings(snap: Snapshot) -> dict[str, dict[str, Any]]:
    """The sibling repositories the stream spans, as stored, by id (siblings.py reads them)."""
    return _by_id(snap, "siblings")


def thread_path(thread_id: str) -> str:
    return f"{ROOT}/threads/{thread_id}.json"


def read_objective_log(snap: Snapshot) -> list[ObjectiveChange]:
    changes = []
    for e in sorted(_files(snap, "objective"), key=lambda e: e.name):
        data = _entry(snap, f"{ROOT}/objective/{e.name}", e.oid, "objective-change")
        if data is not None:
            changes.append(ObjectiveChange(**{"old": None, "new": None, **data}))
    return changes


def count_objective_changes(snap: Snapshot) -> int:
    return len(_files(snap, "objective"))


def read_journal(snap: Snapshot, latest: int | None = None) -> tuple[list[JournalEntry], int]:
    """The newest ``latest`` entries (all when None), oldest first, and how many there are."""
    if snap.tree is None:
        return [], 0
    days = sorted(
        (e for e in git.tree_entries(snap.repo, snap.tree, f"{ROOT}/journal") or [] if e.is_tree),
        key=lambda e: e.name,
        reverse=True,
    )
    picked: list[tuple[str, Oid]] = []
    total = 0
    for day in days:
        if latest is not None and len(picked) >= latest:
            total += git.tree_size(snap.repo, day.oid)  # counted, not listed
            continue
        files = git.tree_entries(snap.repo, day.oid) or []
        total += len(files)
        names = sorted(((f"{day.name}/{f.name}", f.oid) for f in files), reverse=True)
        picked.extend(names if latest is None else names[: latest - len(picked)])
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
    days = git.tree_entries(snap.repo, snap.tree, f"{ROOT}/journal") or []
    # File names sort by the time they were written (model.sortable_name, to the microsecond):
    # a name before the moment's millisecond is an entry made before it, not worth reading.
    before = moment[:23].replace("-", "").replace(":", "") if len(moment) == 24 and moment[19] == "." else ""
    found = []
    for day in sorted((d for d in days if d.is_tree and d.name >= moment[:10]), key=lambda d: d.name):
        for e in sorted(git.tree_entries(snap.repo, day.oid) or [], key=lambda e: e.name):
            if e.name[:8].isdigit() and e.name < before:
                continue
            data = _entry(snap, f"{ROOT}/journal/{day.name}/{e.name}", e.oid, "journal-entry")
            if data is not None and data["at"] > moment:
                found.append(JournalEntry(**data))
    return found


def latest_handoff(snap: Snapshot) -> Handoff | None:
    """The newest handoff of the stream (the file names sort by time), or None."""
    from git_continuity.records import Handoff

    if snap.tree is None:
        return None
    days = git.tree_entries(snap.repo, snap.tree, f"{ROOT}/handoffs") or []
    for day in sorted((d for d in days if d.is_tree), key=lambda d: d.name, reverse=True):
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
    from git_continuity.attempts import Attempt

    folder = f"{ROOT}/attempts/{thread_id}"
    folder_oid = git.entry_oid(snap.repo, snap.tree, folder) if snap.tree else None
    if folder_oid is None:
        return []
    cached = snap.repo.local_dir / "cache" / "folders" / f"{folder_oid}.json"
    if folder_oid in snap.cache:
        try:
            return [Attempt.from_json(data) for data in json.loads(cached.read_text())]
        except (OSError, ValueError, TypeError, KeyError):
            pass
    found = []
    whole = True
    for e in sorted(_files(snap, f"attempts/{thread_id}"), key=lambda e: e.name):
        data = _entry(snap, f"{folder}/{e.name}", e.oid, "attempt")
        if data is None:
            whole = False
        else:
            found.append(data)
    if whole:
        try:
            atomic.write(cached, json.dumps(found))
            snap.cache.add([folder_oid])
            snap.cache.save()
        except OSError:
            pass  # a cache that cannot be written only costs speed
    return [Attempt.from_json(data) for data in found]


def all_problems(snap: Snapshot) -> list[str]:
    """Every malformed file in the state, each once: those met by earlier reads first, then
    the rest in the order of a full walk, which is made once per snapshot (and skipped when
    the tree is known good)."""
    if snap.tree is None or snap.tree in snap.cache:
        return []
    if snap.walked is None:
        snap.keep_walked(_walk(snap))
    return list(snap.walked or ())


def _walk(snap: Snapshot) -> list[str]:
    assert snap.tree is not None
    root = git.tree_entries(snap.repo, snap.tree, ROOT)
    if root is None:
        return [f"{snap.ref}: its tree has no {ROOT}/ folder"]
    found: list[str] = []
    for top in root:
        if top.name == "packet.yaml":
            read_packet_doc(snap)
        elif top.name == "format":
            if git.blob(snap.repo, top.oid).decode(errors="replace").strip() != FORMAT:
                found.append(f"{ROOT}/format: written by a newer git-continuity (format is not {FORMAT}); upgrade")
        # An entry whose blob is known good is not even read (what _entry would do with
        # it): a merged tree made of two checked sides is walked without reading 20,000 blobs.
        elif top.name in ("claims", "threads", "objective", "conflicts", "places", "siblings"):
            for e in git.tree_entries(snap.repo, top.oid) or []:
                if e.is_tree or e.oid not in snap.cache:
                    _entry(snap, f"{ROOT}/{top.name}/{e.name}", e.oid, KINDS[top.name])
        elif top.name in ("journal", "evidence", "handoffs", "attempts"):
            for shard in git.tree_entries(snap.repo, top.oid) or []:
                for e in git.tree_entries(snap.repo, shard.oid) or []:
                    if e.is_tree or e.oid not in snap.cache:
                        _entry(snap, f"{ROOT}/{top.name}/{shard.name}/{e.name}", e.oid, KINDS[top.name])
        else:
            found.append(f"{ROOT}/{top.name}: not part of the state format {FORMAT}")
    if git.entry_oid(snap.repo, snap.tree, packetfile.PATH) is None:
        read_packet_doc(snap)
    found = [*snap.problems, *found]
    if not found:
        snap.cache.add([snap.tree])
    snap.cache.save()
    return found
