"""Issue 4's scenario end to end, through a real git server on 127.0.0.1: machine A starts the
state and pushes; machine B clones and pulls it; both work offline at once; both sync, in
either order, and end with the same state with nothing lost."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Run, commit, cont, git
from gitserver import Server, git_daemon


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("server")
    (root / "repos").mkdir()
    with git_daemon(root / "repos", root / "home") as running:
        yield running


def shared(status: dict[str, Any]) -> dict[str, Any]:
    """status --json without what is local by nature: when each live handle was
    dereferenced (now, on each machine), how this clone stands against its remotes, and
    whether this clone has its closure hooks."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            kept = {k: strip(v) for k, v in value.items() if k not in ("checked_at", "remotes")}
            if "warnings" in kept:
                kept["warnings"] = [w for w in kept["warnings"] if not w.startswith("no closure gate here")]
            return kept
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(status)  # type: ignore[no-any-return]


@pytest.fixture
def ok(inproc: Run) -> Callable[..., str]:
    """A command in this process (fast) that must succeed; the steps that matter most to the
    story run as real processes with `cont`."""

    def run(where: Path, *args: str) -> str:
        done = inproc(where, *args)
        assert done.code == 0, f"{args}: {done.out}{done.err}"
        return done.out

    return run


def status_json(where: Path) -> dict[str, Any]:
    done = cont(where, "status", "--json")
    assert done.code == 0, done.err
    return json.loads(done.out)  # type: ignore[no-any-return]


def in_process(ok: Any, where: Path) -> dict[str, Any]:
    return json.loads(ok(where, "status", "--json"))  # type: ignore[no-any-return]


def short_ids(text: str) -> str:
    return re.sub(r"\b[0-9a-f]{7}\b", "<c>", text)


# Issue 4's scenario end to end, in order: each step stands on what the machines synced before.
@pytest.mark.parametrize("first", ["a", "b"])
def test_state_follows_the_work_to_a_second_machine(  # noqa: PLR0915
    server: Server, tmp_path: Path, first: str, monkeypatch: pytest.MonkeyPatch, ok: Any
) -> None:
    _, url = server.bare(f"project-{first}")
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    commit(seed, "first", {"README": "hello\n"})
    git(seed, "push", "-q", url, "main")
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "-q", url, str(a))

    # Machine A starts the state, with a provenance note on a commit, and pushes both.
    ok(a, "hooks", "install")
    ok(a, "init")
    ok(a, "objective", "set", "Ship sync", "--why", "work moves between machines")
    blocker = re.findall(r"b-\w{6}", ok(a, "blocker", "add", "CI runner offline"))[0]
    ok(a, "claim", "add", "the README is there", "--check", "file:README@HEAD")
    ok(a, "claim", "add", "the reviewers are happy")
    thread = re.findall(r"t-\w{6}", ok(a, "thread", "add", "Seed the project", "--check", "commit:HEAD"))[0]
    ok(a, "journal", "add", "A: started")
    work = commit(a, "Add the sync module", {"sync.py": "# sync\n"})
    git(a, "push", "-q", "origin", "main")
    pushed = cont(a, "push").out
    assert short_ids(pushed) == "To origin:\n  main: created on origin (<c>)\n  notes: created on origin (<c>)\n"

    # Machine B clones: told that origin has state, never shown an empty one; one pull takes it.
    git(tmp_path, "clone", "-q", url, str(b))
    fresh = cont(b, "status")
    assert (fresh.code, fresh.out) == (2, "")
    assert fresh.err == (
        "git-continuity: error: no continuity state for stream 'main' here (refs/continuity/main does not exist).\n"
        "origin has state for stream 'main' that this clone has never fetched.\n"
        "Take it with: git continuity pull origin\n"
    )
    assert short_ids(cont(b, "pull").out) == "From origin:\n  main: new here (<c>)\n  notes: new here (<c>)\n"
    assert shared(status_json(b)) == shared(status_json(a))
    assert in_process(ok, b)["remotes"][0]["relation"] == "same"
    # A's provenance note, on B.
    noted = git(b, "log", "-1", "--notes=continuity", "--format=%N", work)
    assert json.loads(noted.splitlines()[0])["kind"] == "provenance"

    # Both work offline at once.
    ok(a, "objective", "set", "Ship sync and the demo", "--why", "the demo sells it")
    ok(a, "claim", "add", "A's first claim")
    ok(a, "claim", "add", "A's second claim")
    ok(a, "journal", "add", "A: objective moved")
    monkeypatch.setenv("GIT_EDITOR", "sed -i -e 's/text: CI runner offline/text: CI runner offline, ticket 42/'")
    ok(a, "edit")
    ok(b, "claim", "add", "B's claim")
    closed = ok(b, "thread", "close", thread)
    assert closed.startswith(f'Thread {thread} "Seed the project" is done')
    ok(b, "journal", "add", "B: closed the seed thread")
    ok(b, "journal", "add", "B: flaky runner seen")
    monkeypatch.setenv("GIT_EDITOR", "sed -i -e 's/text: CI runner offline/text: CI runner is back but flaky/'")
    ok(b, "edit")

    # Both sync, in the order of the parameter; then the first once more to take in the merge.
    one, two = (a, b) if first == "a" else (b, a)
    assert cont(one, "sync").code == 0
    merged = cont(two, "sync")
    assert merged.code == 0
    assert "conflict to look at: git continuity conflict list" in merged.out
    assert cont(one, "sync").code == 0
    assert git(a, "rev-parse", "refs/continuity/main") == git(b, "rev-parse", "refs/continuity/main")
    assert git(a, "rev-parse", "refs/notes/continuity") == git(b, "rev-parse", "refs/notes/continuity")
    final = status_json(a)
    assert shared(status_json(b)) == shared(final)

    # Everything from both sides is there.
    assert final["objective"]["text"] == "Ship sync and the demo"
    claims = {c["text"] for c in final["claims"]}
    assert claims == {
        "commit:HEAD",  # the thread's acceptance check
        "the README is there",
        "the reviewers are happy",
        "A's first claim",
        "A's second claim",
        "B's claim",
    }
    assert [(t["id"], t["status"]) for t in final["threads"]] == [(thread, "done")]
    journal = json.loads(ok(a, "journal", "--all", "--json"))["entries"]
    assert sorted(e["text"] for e in journal) == [
        "A: objective moved",
        "A: started",
        "B: closed the seed thread",
        "B: flaky runner seen",
    ]
    # The blocker edited on both sides: one winner in the packet, the other value kept.
    (conflict,) = final["conflicts"]
    values = {"CI runner offline, ticket 42", "CI runner is back but flaky"}
    assert conflict["path"] == ".continuity/packet.yaml"
    assert conflict["key"] == f"blockers/{blocker}"
    assert conflict["what"] == "edited on both sides"
    assert {conflict["kept"]["text"], conflict["lost"]["text"]} == values
    assert [b["text"] for b in final["blockers"]] == [conflict["kept"]["text"]]
    # The winner is the later change (then the larger value): the same on both machines.
    assert (conflict["kept_from"]["at"], conflict["kept"]["text"]) > (
        conflict["lost_from"]["at"],
        conflict["lost"]["text"],
    )
    text = cont(b, "status").out
    assert (
        f"Conflicts (1 to look at; git continuity conflict dismiss ID once looked at)\n"
        f"  {conflict['id']}  blocker {blocker}: edited on both sides\n"
        f'            kept   text "{conflict["kept"]["text"]}"  ' in text
    )

    # A dismisses it once looked at; the deletion wins on every clone, whatever the order.
    ok(a, "conflict", "dismiss", conflict["id"])
    ok(b, "journal", "add", "B: one more")
    ok(b, "sync")
    ok(a, "sync")
    ok(b, "sync")
    assert in_process(ok, a)["conflicts"] == in_process(ok, b)["conflicts"] == []
    assert shared(in_process(ok, a)) == shared(in_process(ok, b))
    assert git(a, "rev-parse", "refs/continuity/main") == git(b, "rev-parse", "refs/continuity/main")
    # Branch listings never show the state.
    assert git(b, "branch", "-a") == "* main\n  remotes/origin/HEAD -> origin/main\n  remotes/origin/main"
