"""Planning the work: --after and --priority, the ready queue, cancelled threads and thread
claims among several sessions and clones (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Ran, git, state_refs

from git_continuity.errors import UserError
from git_continuity.model import Blocker, Thread
from git_continuity.store import planning

Run = Any  # the inproc fixture's runner


def made(run: Run, where: Path, *args: str) -> str:
    """Run thread add and return the new thread's id."""
    ran = run(where, "thread", "add", *args)
    assert ran.code == 0, ran.err
    return str(ran.out.split()[1])


def thread_json(run: Run, where: Path, thread_id: str) -> dict[str, Any]:
    ran = run(where, "thread", "show", thread_id, "--json")
    assert ran.code == 0, ran.err
    return json.loads(ran.out)["thread"]  # type: ignore[no-any-return]


def refused(ran: Ran, message: str, where: Path, before: str) -> None:
    """Exit 2, the one-line message, and nothing written."""
    assert (ran.code, ran.out, ran.err) == (2, "", f"git-continuity: error: {message}\n")
    assert state_refs(where) == before


# -- the rules, on plain values --------------------------------------------------------------


def _thread(
    tid: str, at: str, *, status: str = "open", after: list[str] | None = None, priority: int | None = None
) -> Thread:
    return Thread(tid, tid, status, at, "me", "h", after=after, priority=priority)  # type: ignore[arg-type]


def test_ready_is_by_priority_then_age_and_waits_for_after_and_blockers() -> None:
    threads = {
        t.id: t
        for t in (
            _thread("t-aaaaaa", "2026-01-01T00:00:00Z"),
            _thread("t-bbbbbb", "2026-01-02T00:00:00Z", priority=0),
            _thread("t-cccccc", "2026-01-03T00:00:00Z", after=["t-aaaaaa"], priority=0),
            _thread("t-dddddd", "2026-01-04T00:00:00Z", priority=0),
            _thread("t-eeeeee", "2025-01-01T00:00:00Z", status="waiting"),
            _thread("t-ffffff", "2025-01-01T00:00:00Z", after=["t-gggggg"]),
            _thread("t-gggggg", "2025-01-01T00:00:00Z", status="done"),
        )
    }
    held = [Blocker("b-aaaaaa", "db down", "2026-01-01T00:00:00Z", "me", thread="t-dddddd")]
    assert [t.id for t in planning.ready(threads, held)] == ["t-bbbbbb", "t-ffffff", "t-aaaaaa"]
    standing = {s.thread.id: s.why_not() for s in planning.plan(threads, held) if not s.ready}
    assert standing == {"t-cccccc": "after t-aaaaaa", "t-dddddd": "held by blocker b-aaaaaa"}
    # a done blocker holds nothing
    gone = [Blocker("b-aaaaaa", "db down", "2026-01-01T00:00:00Z", "me", "2026-01-02T00:00:00Z", "t-dddddd")]
    assert [t.id for t in planning.ready(threads, gone)] == ["t-bbbbbb", "t-dddddd", "t-ffffff", "t-aaaaaa"]


def test_a_cycle_is_named_from_the_thread_being_changed() -> None:
    threads = {
        "t-aaaaaa": _thread("t-aaaaaa", "2026-01-01T00:00:00Z", after=["t-bbbbbb"]),
        "t-bbbbbb": _thread("t-bbbbbb", "2026-01-02T00:00:00Z", after=["t-cccccc"]),
        "t-cccccc": _thread("t-cccccc", "2026-01-03T00:00:00Z"),
    }
    with pytest.raises(UserError) as refused_:
        planning.check_after(threads, "t-cccccc", ["t-aaaaaa"])
    assert str(refused_.value) == (
        "--after would make a cycle: t-cccccc → t-aaaaaa → t-bbbbbb → t-cccccc (each waits for the next);"
        " nothing was written"
    )
    assert planning.find_cycle({t: list(v.after or []) for t, v in threads.items()}) is None
    assert planning.check_after(threads, "t-aaaaaa", ["t-cccccc", "t-cccccc"], keep=["t-bbbbbb"]) == [
        "t-bbbbbb",
        "t-cccccc",
    ]


@pytest.mark.parametrize("text", ["5", "-1", "high", "1.5", " 2x"])
def test_a_priority_outside_0_to_4_is_refused(text: str) -> None:
    with pytest.raises(UserError) as refused_:
        planning.parse_priority(text)
    assert str(refused_.value) == (
        f"--priority {text}: a priority is a whole number from 0 (highest) to 4 (lowest); 2 is the default"
    )


# -- the command line ---------------------------------------------------------------------


def test_after_priority_and_the_ready_queue(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    first = made(inproc, repo, "Write the migration")
    ran = inproc(repo, "thread", "add", "Run the migration", "--after", first, "--priority", "1")
    second = ran.out.split()[1]
    assert ran.out.splitlines()[:2] == [f"Thread {second} opened: Run the migration", f"  priority 1, after {first}"]
    urgent = made(inproc, repo, "Fix the login loop", "--priority", "0")
    assert inproc(repo, "ready").out == (
        "Ready (2), by priority then age:\n"
        f"  P0  {urgent}  Fix the login loop\n"
        f"  P2  {first}  Write the migration\n"
        "\n"
        "Waiting (1):\n"
        f"  P1  {second}  Run the migration  (after {first})\n"
    )
    document = json.loads(inproc(repo, "ready", "--json").out)
    assert [t["id"] for t in document["ready"]] == [urgent, first]
    assert document["waiting"] == [
        {
            "id": second,
            "title": "Run the migration",
            "priority": 1,
            "added_at": thread_json(inproc, repo, second)["added_at"],
            "after": [first],
            "waits_for": [first],
            "held_by": [],
        }
    ]
    assert thread_json(inproc, repo, second)["after"] == [first]
    assert inproc(repo, "thread", "show", second).out.splitlines()[3] == f"  plan    priority 1, after {first}"
    assert thread_json(inproc, repo, first)["priority"] == 2

    # a blocker for one thread holds it out of the queue
    assert inproc(repo, "blocker", "add", "the staging database is down", "--thread", urgent).code == 0
    assert [t["id"] for t in json.loads(inproc(repo, "ready", "--json").out)["ready"]] == [first]
    # set: drop what it waits for, change the priority
    ran = inproc(repo, "thread", "set", second, "--no-after", first, "--priority", "3")
    assert (ran.code, ran.out) == (0, f"Thread {second}: priority 3.\n")
    assert "after" not in thread_json(inproc, repo, second)
    assert [t["id"] for t in json.loads(inproc(repo, "ready", "--json").out)["ready"]] == [first, second]


def test_next_without_a_next_action_names_the_first_ready_thread_and_clear_removes_it(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    first = made(inproc, repo, "Write the migration", "--priority", "1")
    assert inproc(repo, "next").out == (
        f"(none set) ready first: {first}  Write the migration\n"
        "  (git continuity ready lists the queue; git continuity next TEXT sets the next action)\n"
    )
    assert json.loads(inproc(repo, "next", "--json").out) == {
        "stream": "main",
        "next_action": None,
        "ready": {"id": first, "title": "Write the migration", "priority": 1},
    }
    assert inproc(repo, "next", "rebase and push").code == 0
    assert json.loads(inproc(repo, "next", "--json").out) == {"stream": "main", "next_action": "rebase and push"}
    assert inproc(repo, "next", "--clear").out == "Next action cleared (it was: rebase and push).\n"
    assert json.loads(inproc(repo, "next", "--json").out)["next_action"] is None
    # next --clear --json is the same document as next --json: the ready thread stands in
    ready = {"id": first, "title": "Write the migration", "priority": 1}
    for before in ("rebase and push", None):
        if before:
            assert inproc(repo, "next", before).code == 0
        assert json.loads(inproc(repo, "next", "--clear", "--json").out) == {
            "stream": "main",
            "next_action": None,
            "ready": ready,
        }
    status = inproc(repo, "status").out
    assert (
        f"Next       (none set) ready first: {first} Write the migration (git continuity ready lists the queue)"
        in status
    )


def test_bad_plans_are_refused_naming_what_and_nothing_is_written(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    first = made(inproc, repo, "One")
    second = made(inproc, repo, "Two", "--after", first)
    dropped = made(inproc, repo, "Dropped")
    assert inproc(repo, "thread", "cancel", dropped, "--why", "not needed").code == 0
    before = state_refs(repo)
    known = ", ".join(sorted([first, second, dropped]))
    refused(
        inproc(repo, "thread", "set", first, "--after", second),
        f"--after would make a cycle: {first} → {second} → {first} (each waits for the next); nothing was written",
        repo,
        before,
    )
    refused(
        inproc(repo, "thread", "add", "Three", "--after", "t-zzzzzz"),
        f"--after t-zzzzzz: no such thread (threads: {known}); nothing was written",
        repo,
        before,
    )
    refused(
        inproc(repo, "thread", "add", "Three", "--after", dropped),
        f"--after {dropped}: that thread was cancelled (not needed), so it will never be done; nothing was written",
        repo,
        before,
    )
    refused(
        inproc(repo, "thread", "set", first, "--after", first),
        f"--after {first}: a thread cannot wait for itself; nothing was written",
        repo,
        before,
    )
    refused(
        inproc(repo, "thread", "add", "Three", "--priority", "7"),
        "--priority 7: a priority is a whole number from 0 (highest) to 4 (lowest); 2 is the default",
        repo,
        before,
    )
    refused(
        inproc(repo, "thread", "set", first, "--no-after", second),
        f"--no-after {second}: thread {first} does not wait for it (after: none); nothing was written",
        repo,
        before,
    )
    refused(
        inproc(repo, "blocker", "add", "x", "--thread", "t-zzzzzz"),
        f"--thread t-zzzzzz: no such thread (threads: {known}); nothing was written",
        repo,
        before,
    )


# -- cancel --------------------------------------------------------------------------------


def test_a_cancelled_thread_is_shown_never_gates_and_is_not_done(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    dropped = made(inproc, repo, "Port the old page", "--check", "tag:v9")
    waiter = made(inproc, repo, "After the port", "--after", dropped, "--check", "tag:v10")
    assert inproc(repo, "thread", "set", waiter, "waiting").code == 0  # only the cancelled one is open
    assert inproc(repo, "check", "--closing").code == 1  # the open thread's check fails: it gates
    ran = inproc(repo, "thread", "cancel", dropped, "--why", "the old page is being removed")
    assert (ran.code, ran.out) == (
        0,
        f"Thread {dropped} is cancelled: the old page is being removed\n"
        "  it gates no stop and does not count as done (git continuity thread set ID open reopens it)\n"
        f"  {waiter} waits for it and will never be ready so:"
        f" git continuity thread set {waiter} --no-after {dropped}\n",
    )
    assert inproc(repo, "check", "--closing").code == 0  # a cancelled thread never gates a stop
    shown = thread_json(inproc, repo, dropped)
    assert shown["status"] == "cancelled" and shown["cancelled"]["why"] == "the old page is being removed"
    assert shown["closed_at"] is None
    status = inproc(repo, "status").out
    assert "Threads (1 not done, 0 done, 1 cancelled)" in status
    assert (
        f"  cancelled  {dropped}  Port the old page  (0 of 1 checks verified)\n    why: the old page is being removed\n"
        in status
    )
    assert inproc(repo, "thread", "show", dropped).out.splitlines()[1:4:2] == [
        "  status  cancelled",
        "  why     the old page is being removed",
    ]
    listed = json.loads(inproc(repo, "thread", "list", "--status", "cancelled", "--json").out)
    assert [t["id"] for t in listed["threads"]] == [dropped]
    before = state_refs(repo)
    refused(
        inproc(repo, "thread", "cancel", dropped, "--why", "again"),
        f"thread {dropped} was already cancelled: the old page is being removed",
        repo,
        before,
    )
    brief = inproc(repo, "orient").out
    assert "Port the old page" not in brief


# -- claims --------------------------------------------------------------------------------


def test_a_claim_is_refused_to_a_second_session_unless_stolen_and_ends_with_its_handoff(
    inproc: Run, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert inproc(repo, "init").code == 0
    assert inproc(repo, "objective", "set", "Ship it", "--why", "users wait").code == 0
    work = made(inproc, repo, "Fix the login loop")
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "host-a")
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "s-one")
    assert inproc(repo, "thread", "claim", work).out == (
        f"Thread {work} is claimed by Ada Agent <ada@example.com> on host-a (session s-one).\n"
        "  it ends when this session's handoff is recorded\n"
    )
    assert inproc(repo, "thread", "claim", work).out == f"Thread {work} is already claimed by this session.\n"
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "host-b")
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "s-two")
    before = state_refs(repo)
    ran = inproc(repo, "thread", "claim", work)
    assert ran.code == 2 and state_refs(repo) == before
    assert ran.err.startswith(
        f"git-continuity: error: thread {work} is claimed by Ada Agent <ada@example.com> on host-a (session s-one)"
        " since "
    )
    assert ran.err.endswith(f"Leave it to them, or take it over: git continuity thread claim {work} --steal\n")
    assert (
        f"Claimed elsewhere: {work} 'Fix the login loop' by Ada Agent <ada@example.com> on host-a (session s-one) since"
        in inproc(repo, "orient").out
    )
    assert (
        inproc(repo, "ready").out
        == f"Ready (1), by priority then age:\n  P2  {work}  Fix the login loop  (claimed by Ada Agent"
        " <ada@example.com> on host-a (session s-one))\n"
    )
    ran = inproc(repo, "thread", "claim", work, "--steal")
    assert ran.out.splitlines()[:2] == [
        f"Thread {work} is claimed by Ada Agent <ada@example.com> on host-b (session s-two).",
        "  taken over from Ada Agent <ada@example.com> on host-a (session s-one)",
    ]
    held = json.loads(inproc(repo, "ready", "--json").out)["ready"][0]["claim"]
    assert (held["session"], held["host"], held["stole"]["session"], held["stole"]["host"]) == (
        "s-two",
        "host-b",
        "s-one",
        "host-a",
    )
    assert "stole from: Ada Agent <ada@example.com> on host-a (session s-one)" in git(
        repo, "log", "-1", "--format=%B", "refs/continuity/main"
    )
    # the handoff of the session that holds it ends the claim
    assert inproc(repo, "handoff").code == 0
    assert "claim" not in json.loads(inproc(repo, "ready", "--json").out)["ready"][0]
    assert f"released: {work}" in git(repo, "log", "-1", "--format=%B", "refs/continuity/main")


def test_a_claim_on_a_done_or_cancelled_thread_is_refused(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    git(repo, "tag", "v1")
    done = made(inproc, repo, "Tag it", "--check", "tag:v1")
    assert inproc(repo, "thread", "close", done).code == 0
    dropped = made(inproc, repo, "Drop it")
    assert inproc(repo, "thread", "cancel", dropped, "--why", "no").code == 0
    before = state_refs(repo)
    for tid, status in ((done, "done"), (dropped, "cancelled")):
        refused(
            inproc(repo, "thread", "claim", tid),
            f"thread {tid} is {status}: there is nothing to work on; nothing was written",
            repo,
            before,
        )
    refused(
        inproc(repo, "thread", "claim", "t-zzzzzz"),
        f"no thread 't-zzzzzz' in stream 'main' (threads: {', '.join(sorted([done, dropped]))}); nothing was written",
        repo,
        before,
    )


def test_two_clones_claiming_at_once_the_loser_is_told_at_its_next_sync_and_plans_merge(
    inproc: Run, remote_and_clone: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, a = remote_and_clone
    assert inproc(a, "init").code == 0
    work = made(inproc, a, "Fix the login loop")
    assert inproc(a, "push").code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    assert inproc(b, "pull").code == 0
    # both clones claim, and each plans something of its own
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "host-a")
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "s-aaa")
    assert inproc(a, "thread", "claim", work).code == 0
    later_a = made(inproc, a, "Write the release note", "--after", work)
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "host-b")
    monkeypatch.delenv("GIT_CONTINUITY_SESSION")  # b claims later, and without a session
    assert inproc(b, "thread", "claim", work).code == 0
    later_b = made(inproc, b, "Announce it", "--priority", "0")
    assert inproc(b, "push").code == 0  # b is first on the remote, a claimed first
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "host-a")
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "s-aaa")
    synced = inproc(a, "sync").out
    assert "Thread claim lost" not in synced  # the first claim wins, whichever clone syncs first
    holder = json.loads(inproc(a, "ready", "--json").out)
    held = {t["id"]: t.get("claim", {}).get("session") for t in holder["ready"] + holder["waiting"]}
    assert held[work] == "s-aaa"
    path = f"refs/continuity/main:.continuity/thread-claims/{work}.json"
    claims = {c: json.loads(git(c, "show", path)) for c in (a, b)}
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "host-b")
    monkeypatch.delenv("GIT_CONTINUITY_SESSION")
    told = inproc(b, "sync").out
    since = claims[a]["at"][:16].replace("T", " ")
    assert (
        f"  thread claims: Thread claim lost: {work} (stream main) is held by Ada Agent <ada@example.com> on host-a"
        f" (session s-aaa) since {since} UTC;"
        " they claimed it first (both claims were made before either clone synced), and the merge keeps the first.\n"
        f"  Leave it to them, or take it back: git continuity thread claim {work} --steal\n"
    ) in told, told
    listed = inproc(b, "conflict", "list").out
    assert f'            kept   at "{claims[a]["at"]}", host "host-a", session "s-aaa"  (' in listed, listed
    assert f'            other  at "{claims[b]["at"]}", host "host-b", no session  (' in listed, listed
    # nothing lost: both sides' plans are there, and the other claim is kept as a conflict
    assert thread_json(inproc, a, later_a)["after"] == [work]
    assert thread_json(inproc, a, later_b)["priority"] == 0
    conflicts = json.loads(inproc(a, "conflict", "list", "--json").out)["conflicts"]
    assert [c["path"] for c in conflicts] == [f".continuity/thread-claims/{work}.json"]


def test_the_mcp_ready_tool_answers_with_the_ready_document(inproc: Run, repo: Path) -> None:
    from git_continuity.mcp import tools as mcp_tools
    from git_continuity.repo import open_repo

    assert inproc(repo, "init").code == 0
    first = made(inproc, repo, "Write the migration")
    urgent = made(inproc, repo, "Fix the login loop", "--priority", "0")
    assert inproc(repo, "thread", "add", "Run it", "--after", first).code == 0
    opened = open_repo(repo)
    answer = mcp_tools.call(opened, "main", mcp_tools.BY_NAME["ready"], {})
    assert answer.text == f"{urgent} P0: Fix the login loop\n{first} P2: Write the migration"
    assert answer.document is not None and [t["title"] for t in answer.document["waiting"]] == ["Run it"]


def test_the_status_column_holds_cancelled_so_rows_line_up(inproc: Run, repo: Path) -> None:
    """'cancelled' is nine characters: status and thread list keep it inside the column."""
    assert inproc(repo, "init").code == 0
    dropped = made(inproc, repo, "Port the old page", "--check", "tag:v9")
    kept = made(inproc, repo, "Write the new page", "--check", "tag:v10")
    assert inproc(repo, "thread", "cancel", dropped, "--why", "not needed").code == 0
    status = inproc(repo, "status").out
    assert (
        f"  cancelled  {dropped}  Port the old page  (0 of 1 checks verified)\n"
        "    why: not needed\n"
        f"  open       {kept}  Write the new page  (0 of 1 checks verified)\n"
    ) in status, status
    assert inproc(repo, "thread", "list").out == (
        f"  cancelled  {dropped}  Port the old page  (0 of 1 checks verified)\n"
        f"  open       {kept}  Write the new page  (0 of 1 checks verified)\n"
    )


def test_next_clear_with_none_set_writes_nothing(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    before = state_refs(repo)
    ran = inproc(repo, "next", "--clear")
    assert (ran.code, ran.out, ran.err) == (0, "No next action is set: nothing to clear.\n", "")
    ran = inproc(repo, "next", "--clear", "--json")
    assert (ran.code, json.loads(ran.out), ran.err) == (0, {"stream": "main", "next_action": None}, "")
    assert state_refs(repo) == before
