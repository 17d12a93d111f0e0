""" "Done" cannot be talked around: the moves an agent (or a teammate) makes to get past the
gate, each tried through the real CLI, git and hooks, and each closed.

1. withdraw the failing check, then close;   2. close, then undo the work (amend);
3. commit where the git hooks are missing;   4. a handoff credited with a teammate's work;
5. check closing threads;                    6. the Stop gate letting go silently;
7. a Stop held when the session changed nothing;
8. rewrite the state ref with git plumbing, then stop. (The reset and a done thread's cmd:
   checks after a commit are in test_view.py.)"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from conftest import at_a_terminal, claude_hook, cont, git, made_id, ok, stop_hook

ID = "[2-9a-hjkmnp-z]{6}"


def state(repo: Path) -> str:
    return git(repo, "rev-parse", "refs/continuity/main")


def started(repo: Path) -> Path:
    ok(repo, "init")
    ok(repo, "objective", "set", "Release 1.0", "--why", "customers wait for it")
    return repo


# -- 1. withdraw the failing check, then close -------------------------------------------------


def test_a_withdrawn_check_stays_on_its_thread_and_the_close_must_accept_it(repo: Path) -> None:
    started(repo)
    ok(repo, "orient")  # the session starts
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a")
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "file:a.txt", "--check", "tag:v1"), "t")
    shown = json.loads(ok(repo, "thread", "show", tid, "--json"))["thread"]
    by_handle = {c["handle"]: c["id"] for c in shown["checks"]}
    file_check, tag_check = by_handle["file:a.txt"], by_handle["tag:v1"]

    # A done thread's checks cannot be withdrawn; nor can the contract be dropped silently.
    withdrawn = cont(repo, "claim", "retract", tag_check, "--why", "x")
    assert (withdrawn.code, withdrawn.err) == (0, "")
    assert withdrawn.out == (
        f"Check {tag_check} withdrawn from thread {tid}; it stays on the thread with its reason, and the thread "
        f'now closes only with: git continuity thread close {tid} --accept-withdrawn "why"\n'
    )
    text = ok(repo, "thread", "show", tid)
    assert f"1 check withdrawn: {tag_check} tag:v1: x" in text
    status = json.loads(ok(repo, "status", "--json"))
    (thread,) = status["threads"]
    assert [c["id"] for c in thread["checks"]] == [file_check]
    assert [(w["id"], w["why"]) for w in thread["withdrawn"]] == [(tag_check, "x")]
    assert [c["id"] for c in status["claims"]] == [file_check]  # no longer a claim of its own
    assert f"    1 check withdrawn: {tag_check} tag:v1: x\n" in ok(repo, "status")

    before = state(repo)
    refused = cont(repo, "thread", "close", tid)
    assert refused.code == 1
    assert refused.out.startswith(
        f'Thread {tid} "Release" cannot close: 1 of its checks was withdrawn while it was open '
        f"({tag_check} tag:v1: x); it closes only with: git continuity thread close {tid} "
        '--accept-withdrawn "why that is acceptable".\n'
    )
    gate = cont(repo, "check", "--closing")
    assert gate.code == 1 and f"{tag_check} tag:v1: x" in gate.out
    empty = cont(repo, "thread", "close", tid, "--accept-withdrawn", "  ")
    assert (empty.code, empty.err) == (
        2,
        "git-continuity: error: --accept-withdrawn needs a reason: it is recorded on the thread; nothing was written\n",
    )
    assert json.loads(ok(repo, "thread", "show", tid, "--json"))["thread"]["status"] == "open"
    assert state(repo) == before  # the refusals wrote nothing

    closed = cont(repo, "thread", "close", tid, "--accept-withdrawn", "v1 is tagged by the release job")
    assert closed.code == 0, closed.out
    assert closed.out.startswith(
        f'Thread {tid} "Release" is done with 1 withdrawn check: every other check verified now; the evidence '
        "and your reason are recorded.\n"
    )
    done = json.loads(ok(repo, "thread", "show", tid, "--json"))["thread"]
    assert (done["status"], done["accepted_withdrawn"]["why"], done["accepted_withdrawn"]["checks"]) == (
        "done",
        "v1 is tagged by the release job",
        [tag_check],
    )
    assert "  status  done with 1 withdrawn check\n" in ok(repo, "thread", "show", tid)

    # The Stop gate names such a close once, where the user reads it; then lets the agent go.
    answer, _ = stop_hook(repo)
    assert answer == {
        "decision": "block",
        "reason": f'git-continuity: {tid} "Release" closed with 1 withdrawn check: v1 is tagged by the release '
        "job. Tell the user in your answer that this was closed without those checks and why, then stop.",
    }
    assert stop_hook(repo, active=True)[0] == {}

    # The checks it closed on cannot be withdrawn now.
    late = cont(repo, "claim", "retract", file_check, "--why", "y")
    assert (late.code, late.err) == (
        2,
        f"git-continuity: error: claim {file_check} is an acceptance check of {tid}, which is done: the checks it "
        f"closed on cannot be withdrawn; reopen it first (git continuity thread reopen {tid}); nothing was written\n",
    )


def test_a_thread_whose_every_check_is_withdrawn_never_closes(repo: Path) -> None:
    started(repo)
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "tag:v1"), "t")
    (check,) = [c["id"] for c in json.loads(ok(repo, "status", "--json"))["threads"][0]["checks"]]
    ok(repo, "claim", "retract", check, "--why", "not needed")
    refused = cont(repo, "thread", "close", tid, "--accept-withdrawn", "it is fine")
    assert refused.code == 1
    assert refused.out.startswith(f'Thread {tid} "Release" cannot close: it has no acceptance checks')


# -- 2. close, then amend the closing commit away ----------------------------------------------


def test_amending_the_closing_commit_undoes_the_close_everywhere(repo: Path) -> None:
    started(repo)
    ok(repo, "hooks", "install")
    ok(repo, "orient")
    tid = made_id(ok(repo, "thread", "add", "Write the notes", "--check", "file:README"), "t")
    git(repo, "commit", "-q", "--allow-empty", "-m", f"Notes; closes {tid}")
    closing = git(repo, "rev-parse", "HEAD")
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["status"] == "done"
    git(repo, "commit", "-q", "--amend", "--allow-empty", "-m", "Notes, reworded")
    why = f"its closing commit {closing[:7]} is on no branch here (reset, amended or rewritten away)"
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["undone"] == why
    assert cont(repo, "check").code == 1
    answer, _ = stop_hook(repo)
    assert answer["decision"] == "block"
    assert f"it is done, but no longer holds: {why}" in answer["reason"]
    # Reopening it is the way on; a thread that is not done is not reopened.
    assert (
        ok(repo, "thread", "reopen", tid)
        == f'Thread {tid} "Write the notes" is open again: it closes once every check verifies now.\n'
    )
    again = cont(repo, "thread", "reopen", tid)
    assert (again.code, again.err) == (
        2,
        f"git-continuity: error: thread {tid} is open, not done: only a done thread is reopened "
        f"(git continuity thread set {tid} open parks or unparks one); nothing was written\n",
    )


# -- 3. a clone without the git hooks ----------------------------------------------------------


def test_a_clone_without_the_hooks_says_so_and_check_names_the_unjudged_commit(repo: Path) -> None:
    started(repo)
    said = (
        "no closure gate here: this clone's git hooks are not installed, so a commit that closes a thread is not "
        "checked (git continuity hooks install)"
    )
    assert said not in json.loads(ok(repo, "status", "--json"))["warnings"]  # no thread: nothing to gate
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "tag:v1"), "t")
    assert said in json.loads(ok(repo, "status", "--json"))["warnings"]
    assert f"Warning: N{said[1:]}." in ok(repo, "orient")
    doctor = cont(repo, "doctor")
    assert doctor.code == 1 and "no closure gate here" in doctor.out

    git(repo, "commit", "-q", "--allow-empty", "-m", f"Release; closes {tid}")  # nothing stops it here
    commit = git(repo, "rev-parse", "--short=7", "HEAD")
    check = cont(repo, "check", "--json")
    assert json.loads(check.out)["unjudged"] == [
        f'commit {commit} ("Release; closes {tid}") claims to close {tid}, but no gate judged it: {tid} is open; '
        "the commit went in without the closure hooks (git continuity hooks install)"
    ]
    assert "Not judged by any gate:\n  commit " in ok(repo, "check")

    ok(repo, "hooks", "install")
    assert said not in json.loads(ok(repo, "status", "--json"))["warnings"]
    assert cont(repo, "doctor").code == 0


def test_a_commit_naming_a_thread_of_another_stream_is_refused(repo: Path) -> None:
    started(repo)
    ok(repo, "hooks", "install")
    ok(repo, "--stream", "docs", "init")
    other = made_id(ok(repo, "--stream", "docs", "thread", "add", "Docs", "--check", "file:README"), "t")
    made = subprocess.run(
        ["git", "commit", "--allow-empty", "-m", f"Docs; closes {other}"], cwd=repo, capture_output=True, text=True
    )
    assert made.returncode != 0
    assert made.stderr == (
        f"git-continuity: this commit claims to close {other}, a thread of stream 'docs', but this commit is judged "
        f"for stream 'main': close it with git continuity --stream docs thread close {other}, or commit with "
        "GIT_CONTINUITY_STREAM=docs.\n"
    )


# -- 4. the handoff credits only this session's work -------------------------------------------


def test_a_handoff_reports_what_arrived_from_a_teammate_as_arrived(remote_and_clone: tuple[Path, Path]) -> None:
    bare, alice = remote_and_clone
    started(alice)
    tid = made_id(ok(alice, "thread", "add", "Fix the login", "--check", "file:login.txt"), "t")
    ok(alice, "push")
    git(alice, "push", "-q", "origin", "main")
    bob = bare.parent / "bob"
    git(bare.parent, "clone", "-q", str(bare), str(bob))
    ok(bob, "pull")
    ok(bob, "orient")  # Bob's session starts

    (alice / "login.txt").write_text("fixed\n")
    git(alice, "add", "login.txt")
    git(alice, "commit", "-q", "-m", "Fix the login")
    ok(alice, "thread", "close", tid)
    ok(alice, "push")
    git(alice, "push", "-q", "origin", "main")

    git(bob, "pull", "-q", "--ff-only")
    ok(bob, "pull")
    (bob / "bob.txt").write_text("mine\n")
    git(bob, "add", "bob.txt")
    git(bob, "commit", "-q", "-m", "Bob's own change")
    text = ok(bob, "handoff")
    assert "## What arrived meanwhile (pull or sync), not this session's\n" in text
    assert f"- thread {tid} Fix the login: open → done: arrived from Ada Agent <ada@example.com>" in text
    (path,) = git(bob, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    handed = json.loads(git(bob, "show", f"refs/continuity/main:{path}"))["did"]
    assert [[c["summary"] for c in m["commits"]] for m in handed["commits"]] == [["Bob's own change"]]
    assert handed["threads"] == []
    assert [a["what"].split(" (")[0] for a in handed["arrived"]] == [
        "main +1",
        f"thread {tid} Fix the login: open → done",
    ]


# -- 5. check writes nothing ------------------------------------------------------------------


def test_check_never_closes_a_thread_whose_check_already_holds(repo: Path) -> None:
    started(repo)
    tid = made_id(ok(repo, "thread", "add", "Keep the readme", "--check", "file:README"), "t")
    before = state(repo)
    for args in (("check",), ("check", "--closing"), ("check", "--closing", "--json")):
        assert cont(repo, *args).code == 0
    assert state(repo) == before
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["status"] == "open"
    assert ok(repo, "check", "--closing") == (
        f"Done: every open thread verifies now ({tid}); close it with: git continuity thread close {tid}\n"
    )
    assert "writes nothing" in ok(repo, "check", "-h")


# -- 6. the Stop gate lets go loudly, and the next brief leads with it ---------------------------


def test_the_gate_letting_go_is_said_to_the_user_recorded_and_led_with(repo: Path) -> None:
    started(repo)
    ok(repo, "orient")
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "tag:v9"), "t")
    answers = [stop_hook(repo, active=n > 0) for n in range(5)]
    # The fourth asks the model to tell the person (a headless run prints only its answer); the fifth lets go.
    assert [a.get("decision") for a, _ in answers] == ["block", "block", "block", "block", None]
    let_go, stderr = answers[-1]
    said = (
        f"git-continuity: the agent stopped although {tid} did not verify (it was told 3 times in a row); "
        "git continuity check --closing shows why."
    )
    assert let_go == {"systemMessage": said}
    assert stderr == said + "\n"
    (entry,) = [e for e in json.loads(ok(repo, "journal", "--json"))["entries"] if "Stop gate let go" in e["text"]]
    assert re.fullmatch(
        rf"Stop gate let go: session s-{ID} ended with {tid} unverified, after 3 blocks in a row; what it said was "
        r"done is not \(git continuity check --closing shows why\)",
        entry["text"],
    ), entry["text"]
    brief = ok(repo, "orient")
    assert f"## The last session stopped on unverified work\n- {entry['text']}\n" in brief


# -- 7. a session that changed nothing may stop -------------------------------------------------


def test_a_session_that_changed_nothing_may_stop_and_one_never_seen_is_held(repo: Path) -> None:
    started(repo)
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "tag:v9"), "t")
    # No SessionStart was seen: fail closed.
    assert stop_hook(repo)[0]["decision"] == "block"
    ok(repo, "orient")  # a session starts, and only answers a question
    assert stop_hook(repo)[0] == {}
    assert f"- {tid} [open] Release: 0 of 1 checks verified now" in ok(repo, "orient")
    (repo / "draft.txt").write_text("work\n")  # now it changed the work tree
    assert stop_hook(repo)[0]["decision"] == "block"


# -- 8. rewrite the state ref with git plumbing, then stop ----------------------------------------


def test_a_state_rewritten_with_plumbing_holds_the_stop_and_offers_the_agent_no_way_past(repo: Path) -> None:
    """The gate cannot read a state it refuses, so it cannot judge the stop: it holds the agent
    once to tell the user (before, it let the agent stop with a message cut at its colon), and
    neither the Stop reason nor the next brief hands the agent the fixes that are the user's."""
    started(repo)
    ok(repo, "orient")
    ok(repo, "thread", "add", "Release", "--check", "tag:v9")
    forged = git(repo, "commit-tree", "refs/continuity/main^{tree}", "-p", "refs/continuity/main", "-m", "done")
    git(repo, "update-ref", "refs/continuity/main", forged)
    (repo / "work.txt").write_text("work\n")
    when = git(repo, "log", "-1", "--format=%cd", "--date=format:%Y-%m-%d %H:%M", forged)
    refused = (
        "the state on refs/continuity/main is not what was written here; nothing was read:\n"
        f'  commit {forged[:7]} is not signed; subject as its writer gave it: "done", author field, not verified:'
        f' "Ada Agent <ada@example.com>", {when}\n'
        f"After a look (git show {forged[:7]}), the state is accepted as it is, by a person at their terminal\n"
        "What to accept or put back is the user's decision (git continuity doctor shows them the state and the"
        " fixes): do not accept, restore or rewrite the state yourself."
    )
    held, _ = stop_hook(repo)
    assert held == {
        "decision": "block",
        "reason": "git-continuity: the closure gate cannot judge this stop: "
        + refused
        + "\nTell the user in your answer what happened to the state, then stop.",
    }
    said = (
        "git-continuity: the agent stopped while the closure gate could not read the state: the state on"
        " refs/continuity/main is not what was written here; nothing was read"
    )
    assert stop_hook(repo, active=True) == ({"systemMessage": said}, said + "\n")
    assert stop_hook(repo)[0] == held  # the next turn's stop is held again
    started_session = {"session_id": "conversation-2", "hook_event_name": "SessionStart", "source": "startup"}
    assert claude_hook(repo, "session-start", started_session) == (
        {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": f"git-continuity could not orient this session: {refused}\nTell the user first.",
            }
        },
        "",
    )
    assert "doctor --accept" not in cont(repo, "status").err  # an agent is offered no fix of the user's
    assert "doctor --accept" in at_a_terminal(repo, "status").out  # the person at a terminal is


def test_a_stop_like_the_last_writes_nothing(repo: Path) -> None:
    """The Stop gate keeps, per conversation, the blocks in a row and what it told of: a turn
    that changes neither leaves that file as it was (each write of it cost a Stop 6 ms)."""
    ok(repo, "init")
    claude_hook(repo, "session-start", {"hook_event_name": "SessionStart", "source": "startup", "session_id": "c-1"})
    assert stop_hook(repo, session="c-1")[0] == {}
    kept = repo / ".git" / "continuity" / "stop.json"
    before = kept.stat()
    assert stop_hook(repo, session="c-1")[0] == {}
    after = kept.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert json.loads(kept.read_text()) == {"agent_session": "c-1", "blocks": 0, "told": []}
