"""One view, every reader: a change behind the state is reported the same way by status (text
and JSON), orient, handoff, progress, thread show, check, the Stop hook and the MCP tools.

Each test changes one thing (a done thread's closing commit dropped by a reset, where a
claim's evidence came from, the tree a done thread's cmd: check ran on) and reads it back
through every reader, as users and agents run them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import approve, cont, git, made_id, ok, stop_hook

from git_continuity import repo as gitrepo
from git_continuity.mcp import tools as mcp_tools


def mcp(work: Path, tool: str, **arguments: Any) -> mcp_tools.Answer:
    """An MCP tool call, through the server's own dispatch (mcp_tools.call)."""
    return mcp_tools.call(gitrepo.open_repo(work), "main", mcp_tools.BY_NAME[tool], arguments)


def test_a_done_thread_whose_closing_commit_was_reset_away_no_longer_holds_in_every_reader(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship the login fix", "--why", "users cannot log in")
    ok(repo, "hooks", "install")
    ok(repo, "orient")  # the session starts: what follows is its work
    tid = made_id(ok(repo, "thread", "add", "Fix the login", "--check", "file:README"), "t")
    (repo / "fix.txt").write_text("fixed\n")
    git(repo, "add", "fix.txt")
    git(repo, "commit", "-q", "-m", f"Fix the login, closes {tid}")
    closing = git(repo, "rev-parse", "HEAD")
    shown = json.loads(ok(repo, "status", "--json"))["threads"][0]
    assert (shown["status"], shown["standing"], shown.get("closed_by")) == ("done", "holds", closing)
    assert cont(repo, "check", "--closing").code == 0
    assert stop_hook(repo)[0] == {}

    # The move an agent makes after closing: undo the work.
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    why = f"its closing commit {closing[:7]} is on no branch here (reset, amended or rewritten away)"

    status = json.loads(ok(repo, "status", "--json"))
    (thread,) = status["threads"]
    assert (thread["status"], thread["standing"], thread["undone"]) == ("done", "undone", why)
    assert (
        f"{tid} is done, but no longer holds: {why}; it holds a stop like an open thread "
        f"(git continuity thread set {tid} open, or restore the work)"
    ) in status["warnings"]
    text = ok(repo, "status")
    assert f"    no longer holds: {why}\n" in text

    shown_text = ok(repo, "thread", "show", tid)
    assert f"  status  done, no longer holds: {why}\n" in shown_text
    assert json.loads(ok(repo, "thread", "show", tid, "--json"))["thread"]["undone"] == why
    assert f"  done       {tid}  Fix the login  (1 of 1 checks verified; no longer holds)\n" == ok(
        repo, "thread", "list"
    )

    brief = ok(repo, "orient")
    assert "## Done, but no longer holds: reopen it or restore the work\n" in brief
    assert f"- {tid} [done, no longer holds: {why}] Fix the login: 1 of 1 checks verified now\n" in brief
    oriented = json.loads(ok(repo, "orient", "--json"))
    assert [(t["id"], t["standing"], t["undone"]) for t in oriented["undone"]] == [(tid, "undone", why)]

    progress = json.loads(ok(repo, "progress", "--json"))
    assert [(t["id"], t["standing"], t["undone"]) for t in progress["threads"]] == [(tid, "undone", why)]

    check = cont(repo, "check")
    assert (check.code, check.out.splitlines()[0]) == (1, "1 done thread no longer holds.")
    closing_gate = cont(repo, "check", "--closing")
    assert closing_gate.code == 1
    assert closing_gate.out.splitlines()[:3] == [
        f"Not done: 1 done thread no longer holds ({tid}).",
        "",
        f'{tid} "Fix the login": it is done, but no longer holds: {why}',
    ]

    answer, _ = stop_hook(repo)
    assert answer["decision"] == "block"
    assert f'{tid} "Fix the login": it is done, but no longer holds: {why}' in answer["reason"]

    tool = mcp(repo, "status")
    assert [(t["id"], t["standing"], t["undone"]) for t in (tool.document or {})["threads"]] == [(tid, "undone", why)]
    assert tool.document == json.loads(ok(repo, "status", "--json")) | {
        "claims": (tool.document or {})["claims"],  # checked_at: the time of each dereference
        "threads": (tool.document or {})["threads"],
    }
    assert [c["id"] for c in (tool.document or {})["claims"]] == [c["id"] for c in status["claims"]]

    handed = json.loads(ok(repo, "handoff", "--json"))["handoff"]
    assert [(t["id"], t["status"]) for t in handed["threads"]] == [(tid, "done")]

    # Putting the work back makes it hold again, everywhere.
    git(repo, "reset", "-q", "--hard", closing)
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["standing"] == "holds"
    assert cont(repo, "check", "--closing").code == 0
    assert json.loads(ok(repo, "orient", "--json"))["undone"] == []


def test_a_claim_another_clone_verified_is_its_report_in_every_reader(remote_and_clone: tuple[Path, Path]) -> None:
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "objective", "set", "Keep the build green", "--why", "releases depend on it")
    command = "test -f README"
    approve(work, command)
    cid = made_id(ok(work, "claim", "add", "the readme is there", "--check", f"cmd:{command}"), "c")
    ok(work, "verify", cid)
    ok(work, "push")
    other = bare.parent / "other"
    git(bare.parent, "clone", "-q", str(bare), str(other))
    ok(other, "pull")

    here = json.loads(ok(work, "status", "--json"))["claims"][0]
    assert (here["state"], here["origin"]) == ("verified", "recorded")
    there = json.loads(ok(other, "status", "--json"))["claims"][0]
    assert (there["state"], there["origin"]) == ("verified", "reported")
    assert re.fullmatch(
        r"reported by another clone on \S+ (just now|\d+ \w+ ago), not re-derived here: exit 0 in \d+\.\ds on work "
        r"tree [0-9a-f]{7}",
        there["observed"],
    ), there["observed"]

    brief = ok(other, "orient")
    verified = brief.split("## Verified now")[1].split("##")[0] if "## Verified now" in brief else ""
    assert cid not in verified
    unconfirmed = brief.split("## Not confirmed: check before relying on these")[1].split("##")[0]
    # Not approved on this clone: every reader says so, in the one wording (labels.freshness_text).
    fresh = there["freshness"]
    assert fresh["kind"] == "unapproved"
    assert re.fullmatch(
        r"not approved here: it runs here only once a person approves it at a terminal; its last result reported "
        r"by another clone on \S+ (just now|\d+ \w+ ago)",
        fresh["text"],
    ), fresh["text"]
    assert f'- {cid} "the readme is there" (cmd:{command}) is verified [{fresh["text"]}]: {there["observed"]}' in (
        unconfirmed
    )
    assert f"[{fresh['text']}]" in ok(other, "status")
    assert f"  now     verified [{fresh['text']}]: " in ok(other, "claim", "show", cid)
    oriented = json.loads(ok(other, "orient", "--json"))
    assert [(c["id"], c["origin"], c["freshness"]) for c in oriented["unconfirmed"]] == [(cid, "reported", fresh)]
    assert oriented["verified"] == []

    listed = json.loads(ok(other, "claim", "list", "--json"))["claims"]
    assert [(c["id"], c["origin"], c["freshness"]) for c in listed] == [(cid, "reported", fresh)]
    shown = json.loads(ok(other, "claim", "show", cid, "--json"))["claim"]
    assert (shown["state"], shown["origin"], shown["freshness"]) == ("verified", "reported", fresh)
    tool = mcp(other, "status")
    assert [(c["id"], c["state"], c["origin"], c["freshness"]) for c in (tool.document or {})["claims"]] == [
        (cid, "verified", "reported", fresh)
    ]


def test_a_done_threads_cmd_check_reads_verified_at_its_commit_after_later_commits(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship the parser", "--why", "the importer needs it")
    command = "test -f parser.py"
    approve(repo, command)
    tid = made_id(ok(repo, "thread", "add", "Write the parser", "--check", f"cmd:{command}"), "t")
    (repo / "parser.py").write_text("def parse(): ...\n")
    git(repo, "add", "parser.py")
    git(repo, "commit", "-q", "-m", "Add the parser")
    ok(repo, "thread", "close", tid)
    # Later work changes the tree the check ran on; nothing about the parser changed.
    (repo / "notes.md").write_text("more\n")
    git(repo, "add", "notes.md")
    git(repo, "commit", "-q", "-m", "Notes")

    status = json.loads(ok(repo, "status", "--json"))
    (thread,) = status["threads"]
    (check,) = thread["checks"]
    assert (thread["standing"], check["state"], check["origin"]) == ("holds", "verified", "recorded")
    assert re.fullmatch(
        r"verified when closed \(\d{4}-\d\d-\d\dT[\d:.]+Z\): exit 0 in \d+\.\ds on work tree [0-9a-f]{7}",
        check["observed"],
    ), check["observed"]
    assert [w for w in status["warnings"] if tid in w] == []
    brief = ok(repo, "orient")
    assert "Do not act on these" not in brief or tid not in brief.split("Do not act on these")[1].split("##")[0]
    assert json.loads(ok(repo, "orient", "--json"))["do_not_act"] == []
    assert cont(repo, "check").code == 0
    assert json.loads(ok(repo, "claim", "show", check["id"], "--json"))["claim"]["state"] == "verified"
    # verify re-runs it on the tree now: a dereference replaces what it closed on.
    verified = json.loads(ok(repo, "verify", check["id"], "--json"))["claims"][0]
    assert (verified["state"], verified["origin"]) == ("verified", "now")
    assert re.fullmatch(r"exit 0 in \d+\.\ds on work tree [0-9a-f]{7}", verified["observed"]), verified["observed"]
