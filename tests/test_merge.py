"""The merge of two state histories, rule by rule, on real commits: the same tree whichever
side merges, nothing lost, deletions kept deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import git as run_git

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, JournalEntry
from git_continuity.repo import Oid, Repo
from git_continuity.store import merge, packetfile

T0 = 1_800_000_000  # commit times are set, so which change is newer is part of the test


@pytest.fixture
def r(tmp_path: Path) -> Repo:
    run_git(tmp_path, "init", "-q", "--bare", "state.git")
    return git.open_repo(tmp_path / "state.git")


def change(r: Repo, parent: Oid | None, files: dict[str, bytes | None], at: int, *more: Oid) -> Oid:
    tree = git.write_tree(r, git.commit_tree(r, parent) if parent else None, files)
    parents = [parent] if parent else []
    return git.write_commit_at(r, tree, [*parents, *more], "change", at)


def claim(claim_id: str, text: str) -> bytes:
    return store.entry_bytes(Claim(claim_id, text, "2026-11-30T10:00:00.000Z", "Ada <ada@example.com>", "host"))


def journal(entry_id: str, text: str) -> tuple[str, bytes]:
    entry = JournalEntry(entry_id, text, "2026-11-30T10:00:00.000Z", "Ada <ada@example.com>", "host")
    return f".continuity/journal/2026-11-30/20261130T100000.000000Z-{entry_id}.json", store.entry_bytes(entry)


def files(r: Repo, tree: Oid) -> dict[str, Any]:
    """Every file of a tree, JSON parsed (the packet as its values)."""
    found: dict[str, Any] = {}

    def walk(oid: Oid, prefix: str) -> None:
        for e in git.tree_entries(r, oid) or []:
            path = f"{prefix}{e.name}"
            if e.is_tree:
                walk(e.oid, path + "/")
            elif path == packetfile.PATH:
                found[path] = packetfile.plain(packetfile.parse(git.blob(r, e.oid).decode())[0])
            elif path.endswith(".json"):
                found[path] = json.loads(git.blob(r, e.oid))
            else:
                found[path] = git.blob(r, e.oid).decode()

    walk(tree, "")
    return found


def both_ways(r: Repo, left: Oid, right: Oid) -> merge.Merged:
    """Merge left into right and right into left: the trees must be the same."""
    one, other = merge.merge_commits(r, left, right), merge.merge_commits(r, right, left)
    assert one.tree == other.tree
    assert one.conflicts == other.conflicts
    return one


def initial(r: Repo, at: int = T0) -> Oid:
    return change(
        r,
        None,
        {
            ".continuity/format": b"1\n",
            packetfile.PATH: packetfile.TEMPLATE.encode(),
            **dict([journal("j-aaaaaa", "base")]),
        },
        at,
    )


C = ".continuity/claims/"


def test_entries_added_on_both_sides_are_all_kept(r: Repo) -> None:
    base = initial(r)
    left = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "left"), **dict([journal("j-bbbbbb", "l")])}, T0 + 1)
    right = change(
        r, base, {f"{C}c-bbbbbb.json": claim("c-bbbbbb", "right"), **dict([journal("j-cccccc", "r")])}, T0 + 2
    )
    merged = both_ways(r, left, right)
    assert merged.conflicts == []
    assert sorted(files(r, merged.tree)) == [
        ".continuity/claims/c-aaaaaa.json",
        ".continuity/claims/c-bbbbbb.json",
        ".continuity/format",
        ".continuity/journal/2026-11-30/20261130T100000.000000Z-j-aaaaaa.json",
        ".continuity/journal/2026-11-30/20261130T100000.000000Z-j-bbbbbb.json",
        ".continuity/journal/2026-11-30/20261130T100000.000000Z-j-cccccc.json",
        ".continuity/packet.yaml",
    ]


def test_an_entry_edited_on_both_sides_keeps_the_newer_and_records_the_other(r: Repo) -> None:
    base = change(r, initial(r), {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "base")}, T0 + 1)
    newer = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "newer")}, T0 + 20)
    older = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "older")}, T0 + 10)
    # A later, unrelated change on the older side does not make its edit newer.
    older = change(r, older, {f"{C}c-bbbbbb.json": claim("c-bbbbbb", "other")}, T0 + 30)
    merged = both_ways(r, older, newer)
    state = files(r, merged.tree)
    assert state[f"{C}c-aaaaaa.json"]["text"] == "newer"
    (record,) = merged.conflicts
    assert record == {
        "id": merge.conflict_id(f"{C}c-aaaaaa.json", None, (min(older, newer), max(older, newer))),
        "path": f"{C}c-aaaaaa.json",
        "what": "edited on both sides",
        "kept": json.loads(claim("c-aaaaaa", "newer")),
        "kept_from": {"commit": newer, "at": "2027-01-15T08:00:20.000Z"},
        "lost": json.loads(claim("c-aaaaaa", "older")),
        "lost_from": {"commit": git.commit_parents(r, older)[0], "at": "2027-01-15T08:00:10.000Z"},
        "between": sorted([older, newer]),
    }
    assert state[f".continuity/conflicts/{record['id']}.json"] == record


def test_equal_times_are_decided_by_content_the_same_way_on_both_sides(r: Repo) -> None:
    base = change(r, initial(r), {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "base")}, T0 + 1)
    one = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "one")}, T0 + 5)
    two = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "two")}, T0 + 5)
    merged = both_ways(r, one, two)
    kept = files(r, merged.tree)[f"{C}c-aaaaaa.json"]["text"]
    blobs = {git.entry_oid(r, git.commit_tree(r, c), f"{C}c-aaaaaa.json"): c for c in (one, two)}
    assert kept == ("one" if blobs[max(b for b in blobs if b)] == one else "two")


def test_deletion_wins_and_an_edit_it_overrides_is_kept(r: Repo) -> None:
    base = change(
        r,
        initial(r),
        {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "a"), f"{C}c-bbbbbb.json": claim("c-bbbbbb", "b")},
        T0 + 1,
    )
    deleted = change(r, base, {f"{C}c-aaaaaa.json": None, f"{C}c-bbbbbb.json": None}, T0 + 2)
    # One untouched, one edited after the deletion: the deletion wins both.
    edited = change(r, base, {f"{C}c-bbbbbb.json": claim("c-bbbbbb", "b edited")}, T0 + 3)
    merged = both_ways(r, deleted, edited)
    state = files(r, merged.tree)
    assert not [p for p in state if p.startswith(C)]
    (record,) = merged.conflicts
    assert (record["path"], record["what"], record["kept"], record["lost"]["text"]) == (
        f"{C}c-bbbbbb.json",
        "deleted on one side, edited on the other",
        None,
        "b edited",
    )
    assert (record["kept_from"]["commit"], record["lost_from"]["commit"]) == (deleted, edited)


def test_unrelated_histories_lose_nothing(r: Repo) -> None:
    # Two clones both ran init before syncing, then set different objectives.
    def started(at: int, objective: str, entry: str) -> Oid:
        first = initial(r, at)
        doc, _ = packetfile.parse(packetfile.TEMPLATE)
        packetfile.set_values(
            doc,
            {
                "objective": {"text": objective, "why": "w", "set_at": "2026-11-30T10:00:00Z", "set_by": "x"},
                "next_action": None,
                "blockers": [],
            },
        )
        return change(r, first, {packetfile.PATH: packetfile.dump(doc), **dict([journal(entry, objective)])}, at + 1)

    left, right = started(T0, "left's", "j-llllll"), started(T0 + 5, "right's", "j-rrrrrr")
    assert git.merge_bases(r, left, right) == []
    merged = both_ways(r, left, right)
    state = files(r, merged.tree)
    assert state[packetfile.PATH]["objective"]["text"] == "right's"
    assert sorted(p.rsplit("-", 2)[-2] + "-" + p.rsplit("-", 1)[-1] for p in state if "/journal/" in p) == [
        "j-aaaaaa.json",
        "j-llllll.json",
        "j-rrrrrr.json",
    ]
    (record,) = merged.conflicts
    assert (record["key"], record["kept"]["text"], record["lost"]["text"]) == ("objective", "right's", "left's")


PACKET = """\
# Our packet. This comment is ours and must survive merges.
objective:
  text: Ship it
  why: because
  set_at: '2026-11-30T10:00:00.000Z'
  set_by: Ada <ada@example.com>
next_action: write tests  # an inline comment
# blockers below
blockers:
  - id: b-aaaaaa
    text: runner offline
    added_at: '2026-11-30T10:00:00.000Z'
    added_by: Ada <ada@example.com>
# the end
"""


def with_packet(text: str) -> dict[str, bytes | None]:
    return {packetfile.PATH: text.encode()}


def test_packet_fields_merge_one_by_one_and_keep_comments(r: Repo) -> None:
    base = change(r, initial(r), with_packet(PACKET), T0 + 1)
    left = change(r, base, with_packet(PACKET.replace("write tests", "push the fix")), T0 + 2)
    blocker = "  - id: b-bbbbbb\n    text: key missing\n    added_at: '2026-11-30T11:00:00.000Z'\n    added_by: Bo\n"
    right = change(r, base, with_packet(PACKET.replace("# the end\n", blocker + "# the end\n")), T0 + 3)
    merged = both_ways(r, left, right)
    assert merged.conflicts == []
    text = git.blob(r, git.entry_oid(r, merged.tree, packetfile.PATH) or Oid("")).decode()
    # ruamel keeps an inline comment at its column, as it does when a command sets a value.
    assert text == PACKET.replace("write tests  #", "push the fix #").replace("# the end\n", blocker + "# the end\n")


def test_blockers_edited_on_both_sides_keep_one_value_and_record_the_other(r: Repo) -> None:
    base = change(r, initial(r), with_packet(PACKET), T0 + 1)
    left = change(r, base, with_packet(PACKET.replace("runner offline", "runner offline, ticket 42")), T0 + 2)
    right = change(r, base, with_packet(PACKET.replace("runner offline", "runner back, flaky")), T0 + 3)
    removed = PACKET.split("blockers:")[0] + "blockers: []\n# the end\n"
    merged = both_ways(r, left, right)
    state = files(r, merged.tree)
    assert [b["text"] for b in state[packetfile.PATH]["blockers"]] == ["runner back, flaky"]
    (record,) = merged.conflicts
    assert (record["key"], record["kept"]["text"], record["lost"]["text"]) == (
        "blockers/b-aaaaaa",
        "runner back, flaky",
        "runner offline, ticket 42",
    )
    # A blocker removed by hand on one side and edited on the other stays removed.
    gone = change(r, base, with_packet(removed), T0 + 4)
    merged = both_ways(r, left, gone)
    assert files(r, merged.tree)[packetfile.PATH]["blockers"] == []
    (record,) = merged.conflicts
    assert (record["what"], record["kept"], record["lost"]["text"]) == (
        "deleted on one side, edited on the other",
        None,
        "runner offline, ticket 42",
    )


def test_comments_edited_on_both_sides_keep_the_other_text_in_a_record(r: Repo) -> None:
    base = change(r, initial(r), with_packet(PACKET), T0 + 1)
    left = change(r, base, with_packet(PACKET.replace("# the end", "# the end, says left")), T0 + 2)
    right = change(r, base, with_packet(PACKET.replace("# blockers below", "# blockers, says right")), T0 + 3)
    merged = both_ways(r, left, right)
    (record,) = merged.conflicts
    assert (record["key"], record["what"]) == ("layout", "comments or layout edited on both sides")
    assert record["lost"] == PACKET.replace("# the end", "# the end, says left")
    assert git.blob(r, git.entry_oid(r, merged.tree, packetfile.PATH) or Oid("")).decode() == record["kept"]


def test_a_conflict_dismissed_after_a_criss_cross_merge_stays_dismissed(r: Repo) -> None:
    # Two clones merge each other's state at once (same tree, two merge commits); one then
    # dismisses the conflict. Merging against one base only would bring the record back.
    base = change(r, initial(r), {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "base")}, T0 + 1)
    left = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "left")}, T0 + 2)
    right = change(r, base, {f"{C}c-aaaaaa.json": claim("c-aaaaaa", "right")}, T0 + 3)
    merged = both_ways(r, left, right)
    (record,) = merged.conflicts
    on_left = git.write_commit_at(r, merged.tree, [left, right], "merge", T0 + 4)
    on_right = git.write_commit_at(r, merged.tree, [right, left], "merge", T0 + 5)
    assert git.merge_bases(r, on_left, on_right) == sorted([left, right])
    dismissed = change(r, on_left, {merge.conflict_path(record["id"]): None}, T0 + 6)
    again = both_ways(r, dismissed, on_right)
    assert again.conflicts == []
    assert again.tree == git.commit_tree(r, dismissed)


def test_notes_merge_keeps_every_line_of_both(r: Repo) -> None:
    target = change(r, None, {"x": b"x"}, T0)
    other = change(r, None, {"y": b"y"}, T0)

    def notes(parent: Oid | None, notes: dict[Oid, str]) -> Oid:
        tree = git.write_notes_tree(r, {k: git.write_blob(r, v.encode()) for k, v in notes.items()})
        return git.write_commit_at(r, tree, [parent] if parent else [], "notes", T0)

    base = notes(None, {target: '{"a":1}\n'})
    left = notes(base, {target: '{"a":1}\n{"b":2}\n'})
    right = notes(base, {target: '{"a":1}\n{"c":3}\n', other: '{"d":4}\n'})
    tree = merge.merge_notes(r, left, right)
    assert tree == merge.merge_notes(r, right, left)
    merged = {
        k: git.blob(r, v).decode() for k, v in git.notes_map(r, git.write_commit_at(r, tree, [], "n", T0)).items()
    }
    assert merged == {target: '{"a":1}\n{"b":2}\n{"c":3}\n', other: '{"d":4}\n'}
