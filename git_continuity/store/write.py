"""Writing the state: where each entry goes, and one change as one commit on the state ref,
never on top of malformed state, retried when another writer won."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_continuity import atomic, display
from git_continuity import repo as git
from git_continuity.clone import session
from git_continuity.constants import ENV_CHECK_JSON
from git_continuity.display import clean
from git_continuity.errors import UserError
from git_continuity.model import Evidence, JournalEntry, ObjectiveChange, Packet, sortable_name, stamp, to_json
from git_continuity.repo import Oid, Repo
from git_continuity.store import integrity, packetfile, queue, schema
from git_continuity.store.problems import all_problems
from git_continuity.store.read import _keep, _kept, read_packet, read_packet_doc, read_places
from git_continuity.store.state import KINDS, ROOT, Snapshot, good, ref_name, require_state, snapshot_at
from git_continuity.trust import signing

if TYPE_CHECKING:
    from git_continuity.store.attempts import Attempt


_recording = threading.local()  # per thread: the MCP server runs tool calls in threads of their own


@dataclass(frozen=True)
class Written:
    stream: str
    commit: Oid
    subject: str  # the commit message's first line: "journal add j-k7m2qx: …"


@contextlib.contextmanager
def recording() -> Iterator[list[Written]]:
    """The state commits this thread's writes make while it lasts (what a write's --json says)."""
    made: list[Written] = []
    _recording.made = made
    try:
        yield made
    finally:
        _recording.made = None


def entry_bytes(entry: Any) -> bytes:
    return (json.dumps(to_json(entry), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def claim_path(claim_id: str) -> str:
    return f"{ROOT}/claims/{claim_id}.json"


def thread_path(thread_id: str) -> str:
    return f"{ROOT}/threads/{thread_id}.json"


def thread_claim_path(thread_id: str) -> str:
    return f"{ROOT}/thread-claims/{thread_id}.json"


class Taken:
    """The ids a new entry's id must not be (model.new_id's ``taken``): those with a file at
    ``path_of(id)`` in the snapshot, asked of the tree one id at a time (listing the folder
    instead grows with it: ~1.5 ms at 1,000 claims), and those added while making this
    change."""

    def __init__(self, snap: Snapshot, path_of: Callable[[str], str]) -> None:
        self.snap = snap
        self.path_of = path_of
        self.made: set[str] = set()

    def __contains__(self, entry_id: object) -> bool:
        if not isinstance(entry_id, str):
            return False
        if entry_id in self.made:
            return True
        return (
            self.snap.tree is not None
            and git.entry_oid(self.snap.repo, self.snap.tree, self.path_of(entry_id)) is not None
        )

    def add(self, entry_id: str) -> None:
        self.made.add(entry_id)


def journal_path(entry: JournalEntry, moment: Any) -> str:
    return f"{ROOT}/journal/{entry.at[:10]}/{sortable_name(moment, entry.id)}.json"


def evidence_path(evidence: Evidence, moment: Any) -> str:
    return f"{ROOT}/evidence/{evidence.claim}/{sortable_name(moment, evidence.id)}.json"


def attempt_path(attempt: Attempt, moment: Any) -> str:
    return f"{ROOT}/attempts/{attempt.thread}/{sortable_name(moment, attempt.id)}.json"


def attempt_bytes(attempt: Attempt) -> bytes:
    return (json.dumps(attempt.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


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
    """One change of state: the files it sets (None deletes) and the commit message; with a
    new packet, its plain values (kept by its blob id, so no reader parses it again)."""

    message: str
    files: dict[str, bytes | None]
    packet: dict[str, Any] | None = None


def edited_packet(snap: Snapshot, edit: packetfile.Edit) -> tuple[bytes, dict[str, Any]]:
    """The packet after ``edit``, as bytes and as plain values: spliced into its text where it
    was read once already and its values kept (packetfile.Edit.on_text proves the splice),
    else through ruamel.yaml's round trip. The state is well formed (update checked it)."""
    oid = git.entry_oid(snap.repo, snap.tree, packetfile.PATH) if snap.tree else None
    values = _kept(snap, "packet", oid)
    if isinstance(values, dict) and oid is not None:
        spliced = edit.on_text(git.blob(snap.repo, oid).decode())
        if spliced is not None:
            edit.on_values(values)
            return spliced.encode(), values
    doc, _ = require_packet_doc(snap)
    edit.on_doc(doc)
    return packetfile.dump(doc), packetfile.plain(doc)


def require_packet(snap: Snapshot) -> Packet:
    """The packet's values, or a refusal naming why it cannot be read (a packet over its
    size limit reads as well formed from its values kept here, but is not read again)."""
    packet = read_packet(snap)
    if packet is None:
        raise _unreadable(snap)
    return packet


def require_packet_doc(snap: Snapshot) -> tuple[Any, Packet]:
    """The packet's round-trip document and values, or a refusal naming why not."""
    parsed = read_packet_doc(snap)
    if parsed is None:
        raise _unreadable(snap)
    return parsed


def _unreadable(snap: Snapshot) -> UserError:
    found = "\n  ".join(p for p in snap.problems if p.startswith(packetfile.PATH)) or packetfile.PATH
    return UserError(
        f"the packet on {snap.ref} cannot be read; nothing was written:\n  {found}\n"
        "It is repaired with git continuity edit."
    )


def _validate_change(snap: Snapshot, change: Change) -> None:
    """Refuse what must never be written (an entry over its size limit) and remember each
    new blob as valid.

    The entries a change holds were made by this package's own code from its dataclasses,
    which is the schemas' own code: checking each against ``schema/`` on every write would
    import jsonschema (a third of a write's time) to learn nothing. tests/test_writers.py
    checks every writer's output against ``schema/``, and with GIT_CONTINUITY_CHECK_JSON set
    (the tests set it) every write is checked here too. What a person or a remote made is
    checked where it comes in: ``edit`` parses and validates the packet it was given, and
    ``sync`` validates a fetched state before merging it."""
    checking = bool(os.environ.get(ENV_CHECK_JSON))
    for path, data in change.files.items():
        if data is None:
            continue
        if path == packetfile.PATH:
            too_big = schema.size_problem(len(data), schema.MAX_BYTES["packet"])
            if too_big:
                raise UserError(
                    f"refusing to write {path}: {too_big} (no clone would read it); nothing was written.\n"
                    "Mark blockers done, or shorten texts with git continuity edit."
                )
            if checking:
                try:
                    packetfile.parse(data.decode(), path)
                except packetfile.YamlError as error:
                    raise UserError(f"refusing to write an invalid packet:\n{error}") from None
        elif path != f"{ROOT}/format":
            too_big = schema.size_problem(len(data), schema.MAX_BYTES["entry"])
            if too_big:
                raise UserError(f"refusing to write {path}: {too_big}")
            if checking:
                schema.require_valid(KINDS[path.split("/")[1]], json.loads(data), path)
        oid = git.write_blob(snap.repo, data)
        if path == packetfile.PATH and change.packet is not None:
            _keep(snap, "packet", oid, change.packet)
        kind = "packet" if path == packetfile.PATH else KINDS.get(path.split("/")[1])
        if kind is not None:
            snap.cache.add([good(kind, oid, "" if kind == "packet" else path.rsplit("/", 1)[-1])])


def require_well_formed(snap: Snapshot, *, replacing: str | None = None) -> None:
    """Refuse to go on from malformed state, naming every bad file (except ``replacing``)."""
    problems = [p for p in all_problems(snap) if not (replacing and p.startswith(replacing))]
    if not problems:
        return
    said = f"the state on {snap.ref} is malformed; nothing was written:\n  " + "\n  ".join(problems)
    if not display.at_a_terminal():  # an agent's call: the repair is the person's to choose (#33)
        raise UserError(
            said + "\nNothing can be written on this state until it is repaired, and what to repair is the user's"
            " decision (git continuity doctor shows them the state and its repair): tell them; do not repair or"
            " rewrite the state yourself."
        )
    raise UserError(
        said + "\nThe packet is repaired with git continuity edit. Any other file: put the state back on the"
        f"\nlast good change (git continuity log lists them): git update-ref {snap.ref} <commit>"
    )


def remember_active(snap: Snapshot) -> dict[str, Any]:
    """Leave ``.git/continuity/active/<stream>.json`` (state commit, objective digest, the
    places' roles) for the post-commit hook and the place guard (clone/places.py), which must
    not pay for pygit2 on every commit."""
    import hashlib

    packet = read_packet(snap)
    text = packet.objective.text if packet and packet.objective else None
    digest = hashlib.sha256(text.encode()).hexdigest()[:16] if text else None
    data = {
        "stream": snap.stream,
        "state": snap.commit,
        "objective": digest,
        "places": sorted(
            ({"kind": p["kind"], "name": p["name"], "role": p["role"]} for p in read_places(snap).values()),
            key=lambda p: (p["kind"], p["name"]),
        ),
    }
    try:
        path = snap.repo.local_dir / "active" / f"{snap.stream}.json"
        atomic.write(path, json.dumps(data) + "\n")
    except OSError:
        pass  # the hook recomputes it
    if snap.repo.work_dir is not None and snap.commit is not None:
        _keep_provenance_line(snap.repo, snap.stream, snap.commit, digest)
    return data


def _keep_provenance_line(repo: Repo, stream: str, state: str, objective: str | None) -> None:
    """The line of this work tree's next commit, for the post-commit hook's shell (clone/provenance.py),
    as a process that names no session in its environment has it: an agent's hook names its
    agent in its own environment only, and the commands the agent runs name none."""
    from git_continuity.clone import provenance

    git_dir = git.worktree_git_dir(repo)
    try:
        found = session.resolve(git_dir, environment=False)
    except UserError:
        return
    host = session.hostname(environment=False)
    base = provenance.record(stream, state, objective, [], "", host, found.id, found.agent)
    provenance.keep(git_dir, base, environment=False, signer=signing.shell_signer(repo))


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
        snap = snapshot_at(repo, stream, tip)
        integrity.check(repo, stream, tip)
        if not create:
            require_state(snap)
        require_well_formed(snap, replacing=replacing)
        change = make(snap)
        _validate_change(snap, change)
        tree = git.write_tree(repo, snap.tree, change.files)
        if tree == snap.tree:
            return snap, False  # nothing changed: no empty commit
        # Text from people (an entry's) drives no terminal from git log either (display.clean).
        message = clean(change.message.rstrip("\n")) + "\n\n" + trailers + "\n"
        commit = git.write_commit(repo, tree, [snap.commit] if snap.commit else [], message)
        summary = clean(change.message.splitlines()[0])
        git.compare_and_swap(repo, ref, commit, snap.commit, f"continuity: {summary}")
        integrity.wrote(repo, stream, snap.commit, commit)
        snap.cache.add([good("tree", tree)])
        return Snapshot(repo, stream, commit, tree, validity=snap.cache), True

    # Writers take turns instead of racing (queue.py). Without a ref there is nothing to
    # queue for but init, and a refused write leaves no lock file behind.
    queued = queue.turn(repo, stream) if create or git.ref_target(repo, ref) else contextlib.nullcontext()
    with queued:
        after, moved = git.update_ref(repo, ref, step, gave_up="nothing was written. Try again.")
        if moved:
            # Before the turn passes: the next writer then knows this change's files good (a
            # new packet is otherwise parsed and validated again, in its turn).
            after.cache.save()
    if moved:
        remember_active(after)
        made: list[Written] | None = getattr(_recording, "made", None)
        if made is not None and after.commit is not None:
            made.append(Written(stream, after.commit, git.commit_info(repo, after.commit).message.split("\n", 1)[0]))
    return after
