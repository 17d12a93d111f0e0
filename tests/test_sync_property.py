"""Random interleavings of operations on three clones and random sync orders: every clone
ends with the same state, and nothing written anywhere is lost.

"Lost" is judged against a model of who knew what: a value written on a clone that had seen
an earlier value of the same field replaces it legitimately; a value written without
knowing another (concurrent writes) must end up either as the final value or as the other
value of a conflict record (or of one dismissed since). Real git, real commands run in this
process; the repositories are tiny so that enough examples fit in well under a minute.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conftest import commit, git
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from git_continuity import constants, store
from git_continuity import repo as gitrepo
from git_continuity.commands import blocker, claim, conflict, init, journal, objective, sync
from git_continuity.commands import next as next_
from git_continuity.errors import UserError
from git_continuity.store import notes as commit_notes
from git_continuity.store import packetfile

CLONES = 3
STREAM = "main"

# Field writes come often and syncs less, so that clones often write the same field without
# having seen each other's writes: the conflicts are what this test is about.
KINDS = [
    "journal", "claim", "blocker", "note",
    "next", "next", "objective", "edit", "edit", "edit", "done",
    "dismiss", "dismiss", "dismiss", "dismiss",
    "pull", "push", "sync",
]  # fmt: skip
operation = st.tuples(st.sampled_from(KINDS), st.integers(0, CLONES - 1), st.integers(0, 5))


@dataclass
class Event:
    key: str  # the field written: next_action, objective, blockers/<id>
    value: Any
    known: frozenset[int]  # events the writing clone had seen


@dataclass
class World:
    root: Path
    clones: list[Path]
    counter: Iterator[int] = field(default_factory=itertools.count)
    known: list[set[int]] = field(default_factory=lambda: [set() for _ in range(CLONES)])
    remote: set[int] = field(default_factory=set)
    events: dict[int, Event] = field(default_factory=dict)
    journal: set[str] = field(default_factory=set)
    claims: set[str] = field(default_factory=set)
    blockers: set[str] = field(default_factory=set)
    note_lines: set[str] = field(default_factory=set)
    dismissed: set[str] = field(default_factory=set)
    dismissed_values: list[tuple[str, Any]] = field(default_factory=list)

    def repo(self, i: int) -> gitrepo.Repo:
        return gitrepo.open_repo(self.clones[i])

    def packet(self, i: int) -> dict[str, Any]:
        snap = store.snapshot(self.repo(i), STREAM)
        doc, _ = store.read_packet_doc(snap) or (None, None)
        return packetfile.plain(doc)  # type: ignore[no-any-return]

    def wrote(self, i: int, key: str) -> None:
        """Record the value a clone now holds for a field, as one write event."""
        packet = self.packet(i)
        if key.startswith("blockers/"):
            value = next(b for b in packet["blockers"] if f"blockers/{b['id']}" == key)
        else:
            value = packet[key]
        n = next(self.counter)
        self.events[n] = Event(key, value, frozenset(self.known[i]))
        self.known[i].add(n)


def quietly(run: Any, *args: Any, **kwargs: Any) -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        return run(*args, **kwargs)


def step(world: World, op: tuple[Any, ...]) -> None:
    kind, i = op[0], op[1]
    r = world.repo(i)
    n = next(world.counter)
    if kind == "journal":
        quietly(journal.add, r, stream=STREAM, text=f"entry {n}")
        world.journal.add(f"entry {n}")
    elif kind == "claim":
        quietly(claim.add, r, stream=STREAM, text=f"claim {n}", check=None)
        world.claims.add(f"claim {n}")
    elif kind == "blocker":
        before = {b["id"] for b in world.packet(i)["blockers"]}
        quietly(blocker.add, r, stream=STREAM, text=f"blocker {n}")
        (new,) = {b["id"] for b in world.packet(i)["blockers"]} - before
        world.blockers.add(new)
        world.wrote(i, f"blockers/{new}")
    elif kind == "next":
        quietly(next_.next_action, r, stream=STREAM, text=f"next {n}")
        world.wrote(i, "next_action")
    elif kind == "objective":
        quietly(objective.set_objective, r, stream=STREAM, text=f"objective {n}", why="random")
        world.wrote(i, "objective")
    elif kind == "note":
        record = {"kind": "provenance", "n": n}
        commit_notes.add(r, gitrepo.resolve_commit(r, "HEAD"), record)
        world.note_lines.add(commit_notes.line(record))
    elif kind in ("done", "edit"):
        change_blocker(world, r, i, kind, op[2], n)
    elif kind == "dismiss":
        dismiss(world, r, op[2])
    else:
        # push and sync both leave the clone and the remote knowing everything of both.
        quietly({"pull": sync.pull, "push": sync.push, "sync": sync.sync}[kind], r, remote=None)
        world.known[i] |= world.remote
        if kind != "pull":
            world.remote |= world.known[i]


def change_blocker(world: World, r: gitrepo.Repo, i: int, kind: str, pick: int, n: int) -> None:
    """Mark a blocker of clone i done, or edit its text as another tool would (a store.update of the packet)."""
    blockers = world.packet(i)["blockers"]
    if not blockers:
        return
    target = blockers[pick % len(blockers)]
    if kind == "done":
        try:
            quietly(blocker.done, r, stream=STREAM, blocker_id=target["id"])
        except UserError:
            return  # already done: refused, nothing written
    else:

        def make(snap: store.Snapshot) -> store.Change:
            doc, _ = store.read_packet_doc(snap) or (None, None)
            assert doc is not None
            for item in doc["blockers"]:
                if item["id"] == target["id"]:
                    item["text"] = f"edited {n}"
            return store.Change("edit a blocker", {packetfile.PATH: packetfile.dump(doc)})

        store.update(r, STREAM, make)
    world.wrote(i, f"blockers/{target['id']}")


def dismiss(world: World, r: gitrepo.Repo, pick: int) -> None:
    """Dismiss one of the conflicts a merge recorded, if there is one."""
    records = store.read_conflicts(store.snapshot(r, STREAM))
    if not records:
        return
    record = records[pick % len(records)]
    quietly(conflict.dismiss, r, stream=STREAM, ids=[record.id])
    world.dismissed.add(record.id)
    key = record.key or record.path
    world.dismissed_values += [(key, record.kept), (key, record.lost)]


@contextlib.contextmanager
def three_clones(template: Path) -> Iterator[World]:
    root = Path(tempfile.mkdtemp(prefix="sync-property-"))
    try:
        shutil.copytree(template, root / "origin.git")
        clones = []
        for i in range(CLONES):
            git(root, "clone", "-q", str(root / "origin.git"), f"c{i}")
            clones.append(root / f"c{i}")
        yield World(root, clones)
    finally:
        shutil.rmtree(root, ignore_errors=True)


_templates: dict[int, Path] = {}


def template_remote(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote with one commit on main, made once (inside the hermetic seal, which a
    module-scoped fixture would run outside of) and copied for each example."""
    found = _templates.get(id(tmp_path_factory))
    if found is None:
        base = tmp_path_factory.mktemp("template")
        git(base, "init", "-q", "--bare", "origin.git")
        git(base, "init", "-q", "seed")
        commit(base / "seed", "first", {"README": "hello\n"})
        git(base / "seed", "push", "-q", str(base / "origin.git"), "main")
        found = _templates[id(tmp_path_factory)] = base / "origin.git"
    return found


def check(world: World) -> None:
    # Converge: everyone syncs until the last one has seen everything, then once more.
    for i in [*range(CLONES), *range(CLONES - 1)]:
        step(world, ("sync", i))
    refs = {git(c, "rev-parse", f"refs/continuity/{STREAM}") for c in world.clones}
    assert len(refs) == 1, "the clones did not converge"
    assert refs == {git(world.clones[0], "ls-remote", "origin", f"refs/continuity/{STREAM}").split()[0]}
    note_refs = {git(c, "rev-parse", "-q", "--verify", "refs/notes/continuity", check=False) for c in world.clones}
    assert len(note_refs) == 1

    r = world.repo(0)
    snap = store.snapshot(r, STREAM)
    assert store.all_problems(snap) == []
    entries, _ = store.read_journal(snap)
    assert {e.text for e in entries} == world.journal
    assert {c.text for c in store.read_claims(snap).values()} == world.claims
    packet = world.packet(0)
    assert {b["id"] for b in packet["blockers"]} == world.blockers
    records = store.read_conflicts(snap)
    event(f"conflicts left: {min(len(records), 3)}{'+' if len(records) > 2 else ''}")
    event(f"conflicts dismissed: {bool(world.dismissed)}")
    assert not {c.id for c in records} & world.dismissed, "a dismissed conflict came back"
    if world.note_lines:
        head = gitrepo.resolve_commit(r, "HEAD")
        assert set((gitrepo.read_note(r, constants.NOTES_REF, head) or "").splitlines()) == world.note_lines

    # Nothing lost: every write no later write knew about is the final value or in a record.
    kept = world.dismissed_values + [(c.key or c.path, v) for c in records for v in (c.kept, c.lost)]
    superseded = {k for e in world.events.values() for k in e.known}
    for n, write in world.events.items():
        if n in superseded:
            continue
        if write.key.startswith("blockers/"):
            final = next(b for b in packet["blockers"] if f"blockers/{b['id']}" == write.key)
        else:
            final = packet[write.key]
        assert write.value == final or (write.key, write.value) in kept, f"lost: {write}"


@settings(
    max_examples=20,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    starts=st.sampled_from(["one init, then pulls", "every clone runs init"]),
    clash=st.booleans(),
    # After each phase every clone syncs and the check runs: the second phase starts from
    # converged clones that all hold the first one's conflicts, to dismiss or edit at once.
    phases=st.lists(st.lists(operation, min_size=2, max_size=14), min_size=1, max_size=2),
)
def test_random_interleavings_converge_and_lose_nothing(
    tmp_path_factory: pytest.TempPathFactory, starts: str, clash: bool, phases: list[list[tuple[Any, ...]]]
) -> None:
    with three_clones(template_remote(tmp_path_factory)) as world:
        if starts == "one init, then pulls":
            quietly(init.init, world.repo(0), stream=STREAM, local=True)
            step(world, ("blocker", 0))  # a blocker every clone has, to edit at once
            quietly(sync.push, world.repo(0), remote=None)
            world.remote |= world.known[0]
            for i in range(1, CLONES):
                step(world, ("pull", i))
            if clash:  # every clone edits the shared blocker and the next action, unseen
                for i in range(CLONES):
                    step(world, ("edit", i, 0))
                    step(world, ("next", i))
        else:
            # Unrelated histories: each init is its own root commit (same second, other author).
            author = os.environ["GIT_AUTHOR_NAME"]
            try:
                for i in range(CLONES):
                    os.environ["GIT_AUTHOR_NAME"] = f"clone {i}"
                    quietly(init.init, world.repo(i), stream=STREAM, local=True)
            finally:
                os.environ["GIT_AUTHOR_NAME"] = author
        for operations in phases:
            for op in operations:
                step(world, op)
            check(world)
