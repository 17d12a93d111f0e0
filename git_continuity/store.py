"""The state ref: ``refs/continuity/<stream>``, a chain of commits whose tree is ``.continuity/``.

Layout (machine-written entries are one file each, so two clones' additions never touch
the same file and merge without conflicts; busy folders are sharded):

    .continuity/format                          "1"
    .continuity/packet.yaml                     objective, next action, blockers (people edit it)
    .continuity/claims/<id>.json                one claim (a thread's checks name it in ``thread``)
    .continuity/threads/<id>.json               one thread
    .continuity/objective/<time>-<id>.json      one change of the objective
    .continuity/journal/<day>/<time>-<id>.json  one journal entry
    .continuity/evidence/<claim>/<time>-<id>.json  one dereference of a claim's handle
    .continuity/handoffs/<day>/<time>-<id>.json one handoff: the state a session left for the next
    .continuity/conflicts/<id>.json             one value a merge did not keep (merge.py)

Writing never touches HEAD, the index, the work tree or a branch: trees are built with
TreeBuilder and the ref moves by compare-and-swap, retried when another writer won. Each
commit's message ends with trailers saying where it was written and in which session
(``Host:``, ``Session:``, ``Agent:``), so ``log`` can say who did what where.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from git_continuity import atomic, packetfile, session
from git_continuity import repo as git
from git_continuity.constants import STATE_PREFIX, STREAM_RE
from git_continuity.errors import UserError
from git_continuity.model import (
    Claim,
    Evidence,
    JournalEntry,
    ObjectiveChange,
    Packet,
    Thread,
    sortable_name,
    stamp,
    to_json,
)
from git_continuity.repo import Oid, Repo

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
}


def ref_name(stream: str) -> str:
    if not STREAM_RE.match(stream) or stream.endswith(".lock"):
        raise UserError(
            f"stream name {stream!r} is not usable: letters, digits, '-', '_' and inner '.' only,"
            " not ending in .lock (one ref name each, e.g. agent-b)"
        )
    return f"{STATE_PREFIX}{stream}"


@dataclass
class Snapshot:
    """The state of one stream as of one commit of its ref (commit None: never initialized)."""

    repo: Repo
    stream: str
    commit: Oid | None
    tree: Oid | None
    problems: list[str] = field(default_factory=list)  # malformed files met while reading
    validity: ValidityCache | None = None

    @property
    def ref(self) -> str:
        return ref_name(self.stream)

    @property
    def cache(self) -> ValidityCache:
        if self.validity is None:
            self.validity = ValidityCache(self.repo)
        return self.validity


def snapshot(repo: Repo, stream: str) -> Snapshot:
    return _snapshot_at(repo, stream, git.ref_target(repo, ref_name(stream)))


def _snapshot_at(repo: Repo, stream: str, target: Oid | None) -> Snapshot:
    ref = ref_name(stream)
    if target is not None and git.peel_to_commit(repo, target) != target:
        raise UserError(
            f"{ref} points at {target[:7]}, which is not a commit; nothing was read or written.\n"
            f"Put it back on an earlier state: git reflog {ref} lists them, then "
            f"git update-ref {ref} <commit> {target}"
        )
    tree = git.commit_info(repo, target).tree if target else None
    return Snapshot(repo, stream, target, tree)


def require_state(snap: Snapshot) -> None:
    """Refuse to go on when the stream has no state here, saying how to start."""
    if snap.commit is not None:
        return
    from git_continuity import tracking

    missing = f"no continuity state for stream '{snap.stream}' here ({snap.ref} does not exist)."
    # Never let a clone that lacks the state ref look like it has an empty state: say when
    # a remote has it (git-bug #1301, tbd #135 in FIELD-NOTES).
    on_remote, said = tracking.remote_state_hint(snap.repo, snap.stream)
    if on_remote:
        raise UserError(f"{missing}\n{said}")
    others = [r.removeprefix(STATE_PREFIX) for r in git.list_refs(snap.repo, STATE_PREFIX)]
    hint = f"\nStreams here: {', '.join(others)} (choose one with --stream NAME)." if others else ""
    extra = f"\n{said}" if said else ""
    raise UserError(f"{missing}\nStart one with: git continuity init{hint}{extra}")


class ValidityCache:
    """Content already validated against the current schemas, by object id.

    Objects are content-addressed, so a blob or tree that passed once always passes; this
    keeps jsonschema (and a walk of every entry) off the read path. Local only, under
    ``.git/continuity/cache/``, keyed by a digest of the schemas.
    """

    def __init__(self, repo: Repo) -> None:
        from git_continuity import schema

        self.path = repo.local_dir / "cache" / f"valid-{schema.digest()}"
        self._known: set[str] | None = None
        self._new: list[str] = []

    @property
    def known(self) -> set[str]:
        if self._known is None:
            try:
                self._known = set(self.path.read_text().split())
            except OSError:
                self._known = set()
        return self._known

    def __contains__(self, oid: object) -> bool:
        return oid in self.known

    def add(self, oids: Iterable[str]) -> None:
        fresh = [o for o in oids if o not in self.known]
        self.known.update(fresh)
        self._new.extend(fresh)

    def save(self) -> None:
        if not self._new:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as f:
                f.write("\n".join(self._new) + "\n")
            self._new = []
        except OSError:
            pass  # a cache that cannot be written only costs speed


# -- reading --------------------------------------------------------------------------------


def _json_line(text: str, key: str | int | None) -> str:
    if isinstance(key, str):
        for number, line in enumerate(text.splitlines(), 1):
            if f'"{key}":' in line:
                return f" line {number}"
    return ""


def _entry(snap: Snapshot, path: str, oid: Oid, kind: str) -> dict[str, Any] | None:
    """One JSON entry, validated unless its blob is known good; None (and a problem) if bad."""
    raw = git.blob(snap.repo, oid)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        snap.problems.append(f"{path}: not valid JSON: {error}")
        return None
    if oid in snap.cache:
        return data  # type: ignore[no-any-return]
    from git_continuity import schema

    found = schema.problems(kind, data)
    stem = path.rsplit("/", 1)[-1].removesuffix(".json")
    if not found and isinstance(data, dict) and not stem.endswith(str(data.get("id"))):
        found = [(("id",), f"{data.get('id')!r} does not match the file name")]
    if found:
        text = raw.decode(errors="replace")
        snap.problems.extend(
            f"{path}{_json_line(text, p[-1] if p else None)}: {schema.key_path(p)}: {m}" for p, m in found
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
    if snap.tree is None:
        return None
    oid = git.entry_oid(snap.repo, snap.tree, packetfile.PATH)
    if oid is None:
        snap.problems.append(f"{packetfile.PATH}: missing (run git continuity edit to recreate it)")
        return None
    known = oid in snap.cache
    try:
        parsed = packetfile.parse(git.blob(snap.repo, oid).decode(), validate=not known)
    except (packetfile.YamlError, UnicodeDecodeError) as error:
        snap.problems.append(str(error))
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
    before = len(snap.problems)
    for e in _files(snap, folder):
        data = _entry(snap, f"{ROOT}/{folder}/{e.name}", e.oid, KINDS[folder])
        if data is not None:
            found[data["id"]] = data
    if folder_oid is not None and len(snap.problems) == before:
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


def read_conflicts(snap: Snapshot) -> list[dict[str, Any]]:
    """Conflict records a merge left (merge.py), the newest first."""
    found = []
    for e in _files(snap, "conflicts"):
        data = _entry(snap, f"{ROOT}/conflicts/{e.name}", e.oid, "conflict")
        if data is not None:
            found.append(data)
    return sorted(found, key=lambda c: (max(c["kept_from"]["at"], c["lost_from"]["at"]), c["id"]), reverse=True)


def thread_path(thread_id: str) -> str:
    return f"{ROOT}/threads/{thread_id}.json"


def read_objective_log(snap: Snapshot) -> list[ObjectiveChange]:
    changes = []
    for e in sorted(_files(snap, "objective"), key=lambda e: e.name):
        data = _entry(snap, f"{ROOT}/objective/{e.name}", e.oid, "objective-change")
        if data is not None:
            changes.append(ObjectiveChange(**{"old": None, **data}))
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
    found = []
    for day in sorted((d for d in days if d.is_tree and d.name >= moment[:10]), key=lambda d: d.name):
        for e in sorted(git.tree_entries(snap.repo, day.oid) or [], key=lambda e: e.name):
            data = _entry(snap, f"{ROOT}/journal/{day.name}/{e.name}", e.oid, "journal-entry")
            if data is not None and data["at"] > moment:
                found.append(JournalEntry(**data))
    return found


def latest_handoff(snap: Snapshot) -> dict[str, Any] | None:
    """The newest handoff of the stream (the file names sort by time), or None."""
    if snap.tree is None:
        return None
    days = git.tree_entries(snap.repo, snap.tree, f"{ROOT}/handoffs") or []
    for day in sorted((d for d in days if d.is_tree), key=lambda d: d.name, reverse=True):
        for e in sorted(git.tree_entries(snap.repo, day.oid) or [], key=lambda e: e.name, reverse=True):
            data = _entry(snap, f"{ROOT}/handoffs/{day.name}/{e.name}", e.oid, "handoff")
            if data is not None:
                return data
    return None


def at_commit(snap: Snapshot, commit: Oid | None) -> Snapshot | None:
    """The same stream as of an earlier state commit (None when this clone lacks it)."""
    if commit is None or not git.has_commit(snap.repo, commit):
        return None
    return Snapshot(snap.repo, snap.stream, commit, git.commit_info(snap.repo, commit).tree, validity=snap.cache)


def latest_evidence(snap: Snapshot, claim_id: str) -> Evidence | None:
    files = sorted(_files(snap, f"evidence/{claim_id}"), key=lambda e: e.name)
    for e in reversed(files):
        data = _entry(snap, f"{ROOT}/evidence/{claim_id}/{e.name}", e.oid, "evidence")
        if data is not None:
            return Evidence(**data)
    return None


def all_problems(snap: Snapshot) -> list[str]:
    """Every malformed file in the state (a full walk, skipped when the tree is known good)."""
    if snap.tree is None or snap.tree in snap.cache:
        return []
    before = len(snap.problems)
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
        elif top.name in ("claims", "threads", "objective", "conflicts"):
            for e in git.tree_entries(snap.repo, top.oid) or []:
                _entry(snap, f"{ROOT}/{top.name}/{e.name}", e.oid, KINDS[top.name])
        elif top.name in ("journal", "evidence", "handoffs"):
            for shard in git.tree_entries(snap.repo, top.oid) or []:
                for e in git.tree_entries(snap.repo, shard.oid) or []:
                    _entry(snap, f"{ROOT}/{top.name}/{shard.name}/{e.name}", e.oid, KINDS[top.name])
        else:
            found.append(f"{ROOT}/{top.name}: not part of the state format {FORMAT}")
    if git.entry_oid(snap.repo, snap.tree, packetfile.PATH) is None:
        read_packet_doc(snap)
    found = snap.problems[before:] + found
    if not found:
        snap.cache.add([snap.tree])
    snap.cache.save()
    return found


# -- writing --------------------------------------------------------------------------------


def entry_bytes(entry: Any) -> bytes:
    return (json.dumps(to_json(entry), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def claim_path(claim_id: str) -> str:
    return f"{ROOT}/claims/{claim_id}.json"


def journal_path(entry: JournalEntry, moment: Any) -> str:
    return f"{ROOT}/journal/{entry.at[:10]}/{sortable_name(moment, entry.id)}.json"


def evidence_path(evidence: Evidence, moment: Any) -> str:
    return f"{ROOT}/evidence/{evidence.claim}/{sortable_name(moment, evidence.id)}.json"


def objective_path(change: ObjectiveChange, moment: Any) -> str:
    return f"{ROOT}/objective/{sortable_name(moment, change.id)}.json"


def handoff_path(handoff_id: str, moment: Any) -> str:
    return f"{ROOT}/handoffs/{stamp_day(moment)}/{sortable_name(moment, handoff_id)}.json"


def stamp_day(moment: Any) -> str:
    return str(stamp(moment))[:10]


def handoff_bytes(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


@dataclass
class Change:
    """One change of state: the files it sets (None deletes) and the commit message."""

    message: str
    files: dict[str, bytes | None]


def _validate_change(snap: Snapshot, change: Change) -> None:
    from git_continuity import schema

    for path, data in change.files.items():
        if data is None:
            continue
        if path == packetfile.PATH:
            try:
                packetfile.parse(data.decode(), path)
            except packetfile.YamlError as error:
                raise UserError(f"refusing to write an invalid packet:\n{error}") from None
        elif path != f"{ROOT}/format":
            kind = KINDS[path.split("/")[1]]
            schema.require_valid(kind, json.loads(data), path)
        snap.cache.add([git.write_blob(snap.repo, data)])


def require_well_formed(snap: Snapshot, *, replacing: str | None = None) -> None:
    """Refuse to go on from malformed state, naming every bad file (except ``replacing``)."""
    problems = [p for p in all_problems(snap) if not (replacing and p.startswith(replacing))]
    if problems:
        raise UserError(
            f"the state on {snap.ref} is malformed; nothing was written:\n  "
            + "\n  ".join(problems)
            + "\nThe packet is repaired with git continuity edit. Any other file: put the state back on the"
            f"\nlast good change (git continuity log lists them): git update-ref {snap.ref} <commit>"
        )


def remember_active(snap: Snapshot) -> dict[str, Any]:
    """Leave ``.git/continuity/active/<stream>.json`` (state commit, objective digest) for the
    post-commit hook, which must not pay for pygit2 on every commit."""
    import hashlib

    packet = read_packet(snap)
    text = packet.objective.text if packet and packet.objective else None
    data = {
        "stream": snap.stream,
        "state": snap.commit,
        "objective": hashlib.sha256(text.encode()).hexdigest()[:16] if text else None,
    }
    try:
        path = snap.repo.local_dir / "active" / f"{snap.stream}.json"
        atomic.write(path, json.dumps(data) + "\n")
    except OSError:
        pass  # the hook recomputes it
    return data


def update(
    repo: Repo,
    stream: str,
    make: Callable[[Snapshot], Change],
    *,
    create: bool = False,
    replacing: str | None = None,
    who: session.Who | None = None,
) -> Snapshot:
    """Apply one change as one commit on the state ref, retrying when another writer won.

    ``make`` is called on a fresh snapshot each try, so it always builds on the latest state.
    Broken state is never written on top of: its problems are reported instead, except
    those of the one file ``replacing`` names (how ``edit`` repairs a broken packet).
    ``who`` is the session the commit's trailers name (default: this work tree's current one).
    """
    ref = ref_name(stream)
    trailers = (who or session.who(repo)).trailers()

    def step(tip: Oid | None) -> tuple[Snapshot, bool]:
        snap = _snapshot_at(repo, stream, tip)
        if not create:
            require_state(snap)
        require_well_formed(snap, replacing=replacing)
        change = make(snap)
        _validate_change(snap, change)
        tree = git.write_tree(repo, snap.tree, change.files)
        if tree == snap.tree:
            return snap, False  # nothing changed: no empty commit
        message = change.message.rstrip("\n") + "\n\n" + trailers + "\n"
        commit = git.write_commit(repo, tree, [snap.commit] if snap.commit else [], message)
        summary = change.message.splitlines()[0]
        git.compare_and_swap(repo, ref, commit, snap.commit, f"continuity: {summary}")
        snap.cache.add([tree])
        return Snapshot(repo, stream, commit, tree, validity=snap.cache), True

    after, moved = git.update_ref(repo, ref, step, gave_up="nothing was written. Try again.")
    if moved:
        after.cache.save()
        remember_active(after)
    return after
