"""store/records.py on plain values: each typed shape's JSON is what its schema in schema/ describes,
and reads back as the same value."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from git_continuity.model import Blocker, Objective, ObjectiveChange
from git_continuity.store import schema
from git_continuity.store.records import (
    Baseline,
    ClaimAdded,
    ConflictRecord,
    Did,
    Failing,
    Handoff,
    MovedRef,
    Origin,
    RefCommit,
    SessionShown,
    Stash,
    ThreadMoved,
    ThreadSummary,
    WorkTree,
)

A, B, C = "a" * 40, "b" * 40, "c" * 40
AT = "2026-11-30T10:15:02.123Z"
LATER = "2026-11-30T11:00:00.000Z"


def sub(name: str, *path: str) -> dict[str, Any]:
    """A part of a published schema: e.g. the work tree inside a handoff."""
    found: Any = schema.load(name)
    for key in path:
        found = found[key]
    assert isinstance(found, dict)
    return found


def problems(part: dict[str, Any], data: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in jsonschema.Draft202012Validator(part).iter_errors(data)]


def object_branch(part: dict[str, Any]) -> dict[str, Any]:
    """The mapping branch of a ``oneOf: [null, {...}]``."""
    (branch,) = [b for b in part["oneOf"] if b.get("type") == "object"]
    assert isinstance(branch, dict)
    return branch


WORK_TREES = [
    WorkTree("main", A, "Fix the login loop", 1, 2, 3, 0, 6, ["a.py", "b.py"], [Stash(B, "WIP on main: 0ca66e8 x")]),
    WorkTree(None, None, None, 0, 0, 0, 0, 0, [], []),  # detached, no commits yet
    WorkTree("main", A, "", 0, 1, 0, 0, None, ["a.py"], []),  # a handoff from before "touched"
]
MOVED = [
    MovedRef("refs/heads/main", A, B, gained=2, commits=[RefCommit(B, "Two"), RefCommit(C, "One")]),
    MovedRef("refs/heads/gone", A, None),
    MovedRef("refs/heads/new", None, B, gained=1, commits=[RefCommit(B, "New")]),
    MovedRef("refs/remotes/origin/main", A, B, missing=True),
    MovedRef("refs/heads/rewritten", A, B, gained=1, lost=3, commits=[RefCommit(B, "Again")]),
    MovedRef("refs/tags/v1", None, C),
]


@pytest.mark.parametrize("tree", WORK_TREES)
def test_a_work_tree_is_what_the_handoff_and_orient_schemas_describe(tree: WorkTree) -> None:
    data = tree.to_json()
    assert problems(object_branch(sub("handoff", "properties", "work_tree")), data) == []
    orient = problems(object_branch(sub("orient", "properties", "work_tree")), data)
    # orient shows the work tree now, which always counts what it touched
    assert orient == ([] if tree.touched is not None else ["[]: 'touched' is a required property"])
    assert WorkTree.from_json(data) == tree
    assert ("touched" in data) == (tree.touched is not None)


def test_a_work_tree_counts_the_paths_it_does_not_name() -> None:
    assert [t.more_paths for t in WORK_TREES] == [4, 0, 0]


@pytest.mark.parametrize("moved", MOVED, ids=lambda m: m.ref)
def test_a_moved_ref_is_what_the_handoff_and_orient_schemas_describe(moved: MovedRef) -> None:
    data = moved.to_json()
    assert list(data) == ["ref", "was", "now", "missing", "gained", "lost", "commits"]
    assert problems(sub("handoff", "properties", "did", "properties", "commits", "items"), data) == []
    since = object_branch(sub("orient", "properties", "since"))["properties"]
    assert problems(since["commits"]["items"], data) == []
    assert problems(since["refs"]["items"], data) == []
    assert MovedRef.from_json(data) == moved


def test_only_a_branch_that_only_gained_commits_grew() -> None:
    assert [m.grew for m in MOVED] == [True, False, True, False, False, False]


def handoff(**changed: Any) -> Handoff:
    made = Handoff(
        id="h-k7m2qx",
        stream="main",
        at=LATER,
        by="Ada Agent <ada@example.com>",
        host="laptop",
        session="s-k7m2qx",
        state=A,
        baseline=Baseline("session", at=AT, state=B),
        objective=Objective("Ship it", "users wait", AT, "Ada Agent <ada@example.com>"),
        next_action="Tag v1",
        blockers=[Blocker("b-k7m2qx", "CI is down", AT, "Ada Agent <ada@example.com>")],
        threads=[
            ThreadSummary("t-k7m2qx", "Ship", "open", 2, 1, [Failing("c-k7m2qx", "contradicted", "HEAD moved …")]),
        ],
        work_tree=WORK_TREES[0],
        did=Did(
            [MOVED[0]],
            [
                ClaimAdded("c-k7m2qx", "tests pass", "cmd:pytest", "t-k7m2qx"),
                ClaimAdded("c-222222", "prose", None, None),
            ],
            [ThreadMoved("t-k7m2qx", "Ship", None, "open"), ThreadMoved("t-333333", "Docs", "open", "done")],
        ),
        claims={"c-k7m2qx": "contradicted", "c-222222": "prose"},
        refs={"refs/heads/main": B, "refs/tags/v1": C},
        journal="j-k7m2qx",
    )
    return Handoff(**{**made.__dict__, **changed})


HANDOFFS = {
    "fewest": handoff(baseline=Baseline("none"), blockers=[], threads=[], work_tree=None, did=Did([], [], [])),
    "most": handoff(
        agent="claude-code",
        agent_session="9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
        started_at=AT,
        objective_change=ObjectiveChange("o-k7m2qx", None, "Ship it", "users wait", AT, "Ada", "laptop", "s-1", "x"),
        note="left the tag for tomorrow",
        next_action=None,
    ),
    "after a handoff": handoff(baseline=Baseline("handoff", at=AT, handoff="h-222222", state=B)),
}


@pytest.mark.parametrize("name", list(HANDOFFS))
def test_a_handoff_is_what_its_schema_describes_and_reads_back(name: str) -> None:
    made = HANDOFFS[name]
    data = made.to_json()
    assert schema.problems("handoff", data) == []
    output = {"stream": "main", "state": {"ref": "refs/continuity/main", "commit": C}, "path": "x", "handoff": data}
    assert schema.problems("handoff-output", output) == []
    back = Handoff.from_json(data)
    # The objective change is stored without the session fields of an objective log entry.
    if made.objective_change is not None:
        c = made.objective_change
        made = handoff(**{**made.__dict__, "objective_change": ObjectiveChange(c.id, c.old, c.new, c.why, c.at, c.by)})
    assert back == made
    summary = object_branch(sub("orient", "properties", "since"))["properties"]["handoff"]
    assert problems(summary, made.summary_json()) == []


def test_a_handoff_leaves_out_what_it_does_not_know() -> None:
    data = HANDOFFS["fewest"].to_json()
    assert data["baseline"] == {"kind": "none"}
    assert not {"agent", "agent_session", "started_at", "objective_change", "note"} & set(data)
    assert data["blockers"] == [] and data["work_tree"] is None


CONFLICTS = [
    ConflictRecord(
        "x-k7m2qx",
        ".continuity/packet.yaml",
        "edited on both sides",
        "Ship it",
        Origin(A, AT),
        "Ship it now",
        Origin(B, LATER),
        (A, B),
        key="next_action",
    ),
    ConflictRecord(
        "x-222222",
        ".continuity/claims/c-k7m2qx.json",
        "deleted on one side, edited on the other",
        None,
        Origin(A, AT),
        {"id": "c-k7m2qx", "text": "tests pass"},
        Origin(B, LATER),
        (A, B),
    ),
]


@pytest.mark.parametrize("record", CONFLICTS, ids=lambda c: c.id)
def test_a_conflict_record_is_what_its_schema_describes(record: ConflictRecord) -> None:
    data = record.to_json()
    assert schema.problems("conflict", data) == []
    assert data["between"] == [A, B] and ("key" in data) == (record.key is not None)
    assert ConflictRecord.from_json(data) == record


@pytest.mark.parametrize(
    "shown",
    [
        SessionShown("s-k7m2qx", "claude-code", "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "laptop", AT, True),
        SessionShown("nightly-42", None, None, "ci-runner", AT, False),
    ],
)
def test_the_session_a_brief_shows_is_what_the_orient_schema_describes(shown: SessionShown) -> None:
    data = shown.to_json()
    assert list(data) == ["id", "agent", "agent_session", "host", "started_at", "continued"]
    assert problems(object_branch(sub("orient", "properties", "session")), data) == []
    assert SessionShown.from_json(data) == shown
