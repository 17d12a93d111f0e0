"""Issue 5's scenario end to end: a session on one machine hands off; a new session on another
clone orients, first without the state (it is told how to fetch it), then with it, and sees
what is true now on top, what must not be acted on, and what changed since the handoff."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import Ran, Run, claude_hook, commit, git, untouched, write_state

ME = "Ada Agent <ada@example.com>"
ID = r"[2-9a-hjkmnp-z]{6}"
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def run(cwd: Path, *args: str, host: str = "laptop", **env: str) -> Ran:
    """`git continuity ARGS` in a fresh process on the named machine (GIT_CONTINUITY_HOST)."""
    done = subprocess.run(
        ["git", "continuity", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CONTINUITY_HOST": host, **env},
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def ok(cwd: Path, *args: str, host: str = "laptop", **env: str) -> Ran:
    done = run(cwd, *args, host=host, **env)
    assert done.code == 0, (args, done.out, done.err)
    return done


def steady(text: str) -> str:
    """What depends on the clock: times and how long ago."""
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "TIME UTC", text)
    text = re.sub(r"(changed|started|as cloned) (just now|\d+ \w+ ago)", r"\1 AGO", text)
    return text


def made(out: str, prefix: str) -> str:
    found = re.search(rf"\b{prefix}-{ID}\b", out)
    assert found, out
    return found.group(0)


def stored_handoff(repo: Path) -> dict[str, Any]:
    files = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").splitlines()
    assert len(files) == 1, files
    data: dict[str, Any] = json.loads(git(repo, "show", f"refs/continuity/main:{files[0]}"))
    return data


# Issue 5's scenario end to end, in order: a session, its handoff, the next session elsewhere.
def test_a_session_hands_off_and_the_next_orients_on_another_clone(  # noqa: PLR0915
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, laptop = remote_and_clone
    base = git(laptop, "rev-parse", "HEAD")

    # -- session 1, on the laptop -----------------------------------------------------------
    ok(laptop, "init")
    ok(laptop, "objective", "set", "Fix the login loop", "--why", "users bounce back to /login")
    ok(laptop, "objective", "set", "Fix the login loop and ship 1.2", "--why", "release is due Friday")
    ok(laptop, "next", "push the fix, then tag v1.2")
    blocker = made(ok(laptop, "blocker", "add", "CI runner is offline").out, "b")
    before_orient = git(laptop, "rev-parse", "refs/continuity/main")
    first = ok(laptop, "orient", "--json")
    started = json.loads(first.out)["session"]
    session = started["id"]
    assert re.fullmatch(rf"s-{ID}", session)
    assert started == {
        "id": session,
        "agent": None,
        "agent_session": None,
        "host": "laptop",
        "started_at": started["started_at"],
        "continued": False,
    }

    fix = commit(laptop, "Fix the login loop", {"app.py": "fixed\n"})
    pushed = made(ok(laptop, "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main").out, "c")
    tagged = made(ok(laptop, "claim", "add", "v1.2 is tagged", "--check", "tag:v1.2").out, "c")
    thread = made(ok(laptop, "thread", "add", "Release v1.2", "--check", "tag:v1.2=HEAD").out, "t")
    check = json.loads(ok(laptop, "status", "--json").out)["threads"][0]["checks"][0]["id"]
    git(laptop, "switch", "-q", "-c", "spike")
    spike = commit(laptop, "Try a cookie-free session", {"spike.txt": "no cookies\n"})
    git(laptop, "switch", "-q", "main")
    (laptop / "notes.txt").write_text("half a thought\n")
    git(laptop, "stash", "-q", "-u")
    stash = git(laptop, "rev-parse", "stash@{0}")
    (laptop / "app.py").write_text("fixed\nand more\n")
    ok(laptop, "journal", "add", "reproduced the loop with an expired cookie")
    before_handoff = git(laptop, "rev-parse", "refs/continuity/main")
    work_tree_before = untouched(laptop)

    handed = ok(laptop, "handoff", "--note", "the spike branch is a dead end")
    assert untouched(laptop) == work_tree_before  # a handoff writes state, never the work tree
    data = stored_handoff(laptop)
    handoff, journal_id = data["id"], data["journal"]
    assert steady(handed.out) == (
        f"# Handoff {handoff}: stream main\n"
        f"Session {session} handed off TIME UTC by Ada Agent on laptop; started TIME UTC.\n"
        "The next session starts with: git continuity orient\n"
        "\n"
        "## Objective\n"
        "Fix the login loop and ship 1.2\n"
        "- why: release is due Friday\n"
        f"- set TIME UTC by {ME}\n"
        '- it was "Fix the login loop" until then; why it changed: release is due Friday\n'
        "\n"
        "## Next action\n"
        "push the fix, then tag v1.2\n"
        "\n"
        "## What this session did\n"
        f"- branch main: {base[:7]} → {fix[:7]}, +1 ({fix[:7]} Fix the login loop)\n"
        f"- branch spike: new at {spike[:7]}, +1 ({spike[:7]} Try a cookie-free session)\n"
        f'- claim added: {pushed} "the fix is pushed" (pushed:{fix[:12]}…@origin/main)\n'
        f'- claim added: {tagged} "v1.2 is tagged" (tag:v1.2)\n'
        f'- claim added: {check} "tag:v1.2=HEAD" (tag:v1.2={fix[:12]}…)\n'
        f"- thread {thread} Release v1.2: new → open\n"
        "\n"
        "## Work tree\n"
        f'- on branch main at {fix[:7]} "Fix the login loop"\n'
        "- uncommitted: 1 unstaged: app.py\n"
        f"- 1 stash, the latest: WIP on main: {fix[:7]} Fix the login loop\n"
        "\n"
        "## Not yet shared: only in this clone\n"
        f"- main: 1 commit not on origin/main ({fix[:7]} Fix the login loop): git push\n"
        "- 9 state changes never sent to origin: git continuity push origin\n"
        "- 1 file not committed: app.py\n"
        "\n"
        "## Open threads\n"
        f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n"
        f"  - contradicted {check}: tag v1.2 does not exist here\n"
        "\n"
        "## Blockers\n"
        f"- {blocker} CI runner is offline\n"
        "\n"
        "## Note\n"
        "the spike branch is a dead end\n"
    )

    # The packet as stored: everything the next session needs, each value as seen then.
    for key in ("at", "started_at"):
        assert STAMP.match(data[key]), data[key]
    status = json.loads(ok(laptop, "status", "--json").out)
    change = json.loads(ok(laptop, "objective", "log", "--json").out)["changes"][-1]
    assert data == {
        "id": handoff,
        "stream": "main",
        "at": data["at"],
        "by": ME,
        "host": "laptop",
        "session": session,
        "started_at": started["started_at"],
        "state": before_handoff,
        "baseline": {"kind": "session", "at": started["started_at"], "state": before_orient},
        "objective": status["objective"],
        "objective_change": change,
        "next_action": "push the fix, then tag v1.2",
        "blockers": status["blockers"],
        "threads": [
            {
                "id": thread,
                "title": "Release v1.2",
                "status": "open",
                "checks": 1,
                "verified": 0,
                "failing": [{"claim": check, "state": "contradicted", "observed": "tag v1.2 does not exist here"}],
            }
        ],
        "work_tree": {
            "branch": "main",
            "head": fix,
            "head_summary": "Fix the login loop",
            "staged": 0,
            "unstaged": 1,
            "untracked": 0,
            "conflicted": 0,
            "touched": 1,
            "paths": ["app.py"],
            "stashes": [{"commit": stash, "message": f"WIP on main: {fix[:7]} Fix the login loop"}],
        },
        "did": {
            "commits": [
                {
                    "ref": "refs/heads/main",
                    "was": base,
                    "now": fix,
                    "missing": False,
                    "gained": 1,
                    "lost": 0,
                    "commits": [{"commit": fix, "summary": "Fix the login loop"}],
                },
                {
                    "ref": "refs/heads/spike",
                    "was": None,
                    "now": spike,
                    "missing": False,
                    "gained": 1,
                    "lost": 0,
                    "commits": [{"commit": spike, "summary": "Try a cookie-free session"}],
                },
            ],
            "claims": [
                {"id": pushed, "text": "the fix is pushed", "handle": f"pushed:{fix}@origin/main", "thread": None},
                {"id": tagged, "text": "v1.2 is tagged", "handle": "tag:v1.2", "thread": None},
                {"id": check, "text": "tag:v1.2=HEAD", "handle": f"tag:v1.2={fix}", "thread": thread},
            ],
            "threads": [{"id": thread, "title": "Release v1.2", "was": None, "now": "open"}],
            "arrived": [],
        },
        "claims": {pushed: "contradicted", tagged: "contradicted", check: "contradicted"},
        "refs": {"refs/heads/main": fix, "refs/heads/spike": spike, "refs/remotes/origin/main": base},
        "note": "the spike branch is a dead end",
        "journal": journal_id,
        "machine": data["machine"],  # memory, free disk, CPUs here (tests/test_machine_limit.py)
        "clone": json.loads((laptop / ".git" / "continuity" / "clone.json").read_text())["id"],
        "unshared": {
            "branch": "main",
            "upstream": "origin/main",
            "ahead": 1,
            "commits": [{"commit": fix, "summary": "Fix the login loop"}],
            "state": [{"remote": "origin", "changes": 9, "never": True}],
            "uncommitted": 1,
            "paths": ["app.py"],
        },
    }
    # The session entry in the journal, and the session ended with the handoff.
    entries = json.loads(ok(laptop, "journal", "--json").out)["entries"]
    assert entries[-1] == {
        "id": journal_id,
        "text": f"Session {session} handed off ({handoff}): main +1; spike +1; 3 claims added; "
        f"{thread} new → open. Not pushed: main +1 (not on origin/main). Next: push the fix, then tag v1.2\n"
        "Note: the spike branch is a dead end",
        "at": data["at"],
        "by": ME,
        "host": "laptop",
        "session": session,
        "handoff": handoff,
    }
    assert entries[-2]["session"] == session  # written during the session
    assert json.loads((laptop / ".git" / "continuity" / "session.json").read_text())["handoff"] == handoff

    # The fix is pushed after the handoff, and one more note is written on the laptop.
    git(laptop, "push", "-q", "origin", "main")
    later = made(ok(laptop, "journal", "add", "pushed the fix after the handoff").out, "j")
    ok(laptop, "push")
    state = git(laptop, "rev-parse", "refs/continuity/main")

    # -- session 2, on the desktop: a clone that never fetched the state --------------------
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    blind = run(desktop, "orient", host="desktop")
    assert (blind.code, blind.err) == (1, "")
    assert blind.out == (
        "# git-continuity brief: stream main\n"
        "No continuity state for stream 'main' in this clone: refs/continuity/main does not exist here. "
        "Nothing below is known; do not take this for an empty state.\n"
        "origin has state for stream 'main' that this clone has never fetched.\n"
        "Take it with: git continuity pull origin\n"
    )
    assert not (desktop / ".git" / "continuity" / "session.json").exists()  # no session on nothing
    doc = json.loads(run(desktop, "orient", "--json", host="desktop").out)
    assert doc["state"] is None and doc["session"] is None
    assert doc["fetch"] == {
        "message": blind.out.split("\n", 1)[1].rstrip("\n"),
        "on_remote": True,
        "commands": ["git continuity pull origin"],
    }

    ok(desktop, "pull", host="desktop")
    brief = ok(desktop, "orient", host="desktop")
    second = json.loads((desktop / ".git" / "continuity" / "session.json").read_text())["id"]
    assert second != session
    assert steady(brief.out) == (
        "# git-continuity brief: stream main\n"
        f"State refs/continuity/main at {state[:7]}, changed AGO. "
        "Claims: 1 verified, 2 contradicted (3 re-derived now).\n"
        f"Session {second} started now on desktop; end it with: git continuity handoff\n"
        "Fresh look: fetched now from origin.\n"
        "Warning: No closure gate here: this clone's git hooks are not installed, so a commit that closes a thread "
        "is not checked (git continuity hooks install).\n"
        "\n"
        "## Do not act on these: not true now\n"
        f'- **{tagged}** "v1.2 is tagged" (tag:v1.2) is contradicted: tag v1.2 does not exist here\n'
        "\n"
        "## Verified now\n"
        f'- {pushed} "the fix is pushed" (pushed:{fix[:12]}…@origin/main): '
        f"origin/main is at {fix[:7]} (fetched just now), which contains {fix[:7]}\n"
        "\n"
        "## Objective\n"
        "Fix the login loop and ship 1.2\n"
        "- why: release is due Friday\n"
        f"- set TIME UTC by {ME}\n"
        '- it was "Fix the login loop" until then; why it changed: release is due Friday\n'
        "\n"
        "## Next action\n"
        "push the fix, then tag v1.2\n"
        "\n"
        "## Blockers\n"
        f"- {blocker} CI runner is offline\n"
        "\n"
        "## Open threads\n"
        f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n"
        f"  - contradicted {check} tag:v1.2={fix[:12]}…: tag v1.2 does not exist here\n"
        "\n"
        "## Work tree\n"
        f'- on branch main at {fix[:7]} "Fix the login loop"\n'
        "- no uncommitted changes\n"
        "\n"
        f"## Since the last session: handoff {handoff}, TIME UTC by Ada Agent on laptop (session {session})\n"
        "\n"
        "### Claims whose state changed\n"
        f'- {pushed} "the fix is pushed": contradicted → verified: '
        f"origin/main is at {fix[:7]} (fetched just now), which contains {fix[:7]}\n"
        "\n"
        "### Branches that differ from laptop's clone (nothing moved: each clone has its own)\n"
        f"- spike: only in laptop's clone, at {spike[:7]}, a commit this clone does not have\n"
        "\n"
        "### Refs that moved\n"
        f"- origin/main: {base[:7]} → {fix[:7]}, +1 ({fix[:7]} Fix the login loop)\n"
        "\n"
        "### Journal entries from other machines\n"
        "- TIME UTC Ada Agent on laptop: pushed the fix after the handoff\n"
        "\n"
        "## Journal (latest 3 of 3)\n"
        "- TIME UTC Ada Agent on laptop: pushed the fix after the handoff\n"
        f"- TIME UTC Ada Agent on laptop (session {session}): Session {session} handed off ({handoff}): "
        f"main +1; spike +1; 3 claims added; {thread} new → open. Not pushed: main +1 (not on origin/main). Next: "
        "push the fix, then tag v1.2\n"
        # The entry's later line, under its first character (the time is shown whole there).
        f"{' ' * len(f'- 2026-01-01 00:00:00 UTC Ada Agent on laptop (session {session}): ')}"
        "Note: the spike branch is a dead end\n"
        f"- TIME UTC Ada Agent on laptop (session {session}): reproduced the loop with an expired cookie\n"
    )

    # The same for a program; a second orient continues the session it started.
    doc = json.loads(ok(desktop, "orient", "--json", host="desktop").out)
    assert doc["session"]["id"] == second and doc["session"]["continued"] is True
    assert [(c["id"], c["state"]) for c in doc["do_not_act"]] == [(tagged, "contradicted")]
    assert [(c["id"], c["state"]) for c in doc["verified"]] == [(pushed, "verified")]
    assert doc["since"]["handoff"] == {
        "id": handoff,
        "at": data["at"],
        "by": ME,
        "host": "laptop",
        "session": session,
        "agent": None,
    }
    assert [{**c, "observed": steady(c["observed"])} for c in doc["since"]["claims"]] == [
        {
            "id": pushed,
            "text": "the fix is pushed",
            "was": "contradicted",
            "now": "verified",
            "observed": f"origin/main is at {fix[:7]} (fetched just now), which contains {fix[:7]}",
        }
    ]
    assert [(r["ref"], r["was"], r["now"], r["missing"]) for r in doc["since"]["refs"]] == [
        ("refs/remotes/origin/main", base, fix, False),
    ]
    # The laptop's own branch: a difference between the clones, not a ref that moved.
    assert [(r["ref"], r["was"], r["now"], r["missing"]) for r in doc["since"]["clones"]] == [
        ("refs/heads/spike", spike, None, True),
    ]
    assert [e["text"] for e in doc["since"]["journal"]] == ["pushed the fix after the handoff"]
    assert doc["budget"] == {
        "max_tokens": None,
        "estimated_tokens": doc["budget"]["estimated_tokens"],
        "over_budget": False,
        "left_out": [],
    }

    # Who did what where: the journal and the log of the state ref say it.
    journal = ok(desktop, "journal", "-n", "2", host="desktop").out
    assert steady(journal) == (
        "(latest 2 of 3; --all shows every entry)\n\n"
        f"TIME UTC  {journal_id}  {ME} on laptop (session {session})\n"
        f"  Session {session} handed off ({handoff}): main +1; spike +1; 3 claims added; {thread} new → open. "
        "Not pushed: main +1 (not on origin/main). Next: push the fix, then tag v1.2\n"
        "  Note: the spike branch is a dead end\n\n"
        f"TIME UTC  {later}  {ME} on laptop\n"
        "  pushed the fix after the handoff\n\n"
    )
    # State written here and not pushed yet: the brief says so on top, with what to run.
    ok(desktop, "journal", "add", "picked it up on the desktop", host="desktop")
    assert ok(desktop, "orient", host="desktop").out.splitlines()[3:5] == [
        "Fresh look: fetched now from origin.",
        "Sync: origin: 1 change here not on origin yet (fetched just now): git continuity push",
    ]
    assert json.loads(ok(desktop, "orient", "--json", host="desktop").out)["remotes"] == [
        {
            "remote": "origin",
            "tracking_ref": "refs/continuity-remotes/origin/main",
            "commit": state,
            "relation": "ahead",
            "ahead": 1,
            "behind": 0,
            "refused": None,
        }
    ]
    log = [line.split("  ", 2)[2] for line in ok(desktop, "log", "-n", "4", host="desktop").out.splitlines()[1:]]
    assert log == [
        f"Ada Agent on laptop  journal add {later}: pushed the fix after the handoff",
        f"Ada Agent on laptop (session {session})  handoff {handoff}: session {session}",
        f"Ada Agent on laptop (session {session})  journal add {entries[-2]['id']}: "
        "reproduced the loop with an expired cookie",
    ]


def test_a_session_continued_with_nothing_changed_leaves_its_files_as_they_were(repo: Path) -> None:
    """A brief that continues the open session, nothing having moved, rewrites none of the
    session's files (a file that replaces another is written out to disk at once on ext4)."""
    ok(repo, "init")
    start = {"session_id": "conversation-1", "hook_event_name": "SessionStart", "source": "startup"}
    claude_hook(repo, "session-start", start)
    folder = repo / ".git" / "continuity"
    files = [folder / "session.json", *(folder / "sessions").iterdir()]  # and the conversation's pointer
    before = {f: (f.stat().st_ino, f.stat().st_mtime_ns, f.read_bytes()) for f in files}
    claude_hook(repo, "session-start", {**start, "source": "resume"})
    assert {f: (f.stat().st_ino, f.stat().st_mtime_ns, f.read_bytes()) for f in files} == before
    assert len(files) == 2 and json.loads(files[0].read_text())["agent_session"] == "conversation-1"


def test_a_new_session_records_the_work_tree_git_counted_for_its_brief(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new session's start records the work tree as it is (what the Stop gate compares)
    from the one count of it git made for the brief: a clean one is the index, not counted
    again; a changed one is read in full, as `git add -A` would write it."""
    ok(repo, "init")
    traced = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(traced))

    def statuses() -> int:
        events = [json.loads(line) for line in traced.read_text().splitlines()]
        traced.unlink()
        return sum(e.get("event") == "cmd_name" and e.get("name") == "status" for e in events)

    def recorded() -> str:
        return str(json.loads((repo / ".git" / "continuity" / "session.json").read_text())["worktree"])

    start = {"hook_event_name": "SessionStart", "source": "startup"}
    claude_hook(repo, "session-start", {**start, "session_id": "conversation-1"})
    assert (statuses(), recorded()) == (1, git(repo, "rev-parse", "HEAD^{tree}"))

    (repo / "new.txt").write_text("new\n")
    claude_hook(repo, "session-start", {**start, "session_id": "conversation-2"})
    assert statuses() == 2
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    index = tmp_path / "index"
    index.write_bytes((repo / ".git" / "index").read_bytes())
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    written = subprocess.run(["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True)
    assert recorded() == written.stdout.strip()


# -- bad input ------------------------------------------------------------------------------


def test_a_handoff_without_an_objective_says_what_to_set_and_writes_nothing(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "orient")
    session_file = (repo / ".git" / "continuity" / "session.json").read_text()
    before = git(repo, "rev-parse", "refs/continuity/main")
    refused = run(repo, "handoff")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: handoff needs an objective: the next session must know what this work is for, "
        "and there is none.\n"
        'Set it first: git continuity objective set "what this work is for" --why "why now"\n'
    )
    assert git(repo, "rev-parse", "refs/continuity/main") == before
    assert (repo / ".git" / "continuity" / "session.json").read_text() == session_file  # still open


def test_a_handoff_needs_state(repo: Path) -> None:
    refused = run(repo, "handoff")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: no continuity state for stream 'main' here (refs/continuity/main does not exist).\n"
        "Start one with: git continuity init\n"
    )


def test_orient_where_no_remote_has_state(remote_and_clone: tuple[Path, Path], tmp_path: Path) -> None:
    _, work = remote_and_clone
    told = run(work, "orient")
    assert (told.code, told.err) == (1, "")
    assert told.out == (
        "# git-continuity brief: stream main\n"
        "No continuity state for stream 'main' in this clone: refs/continuity/main does not exist here. "
        "Nothing below is known; do not take this for an empty state.\n"
        "To start keeping state here: git continuity init\n"
    )
    doc = json.loads(run(work, "orient", "--json").out)
    assert doc["state"] is None and doc["session"] is None
    assert doc["fetch"]["on_remote"] is False
    assert doc["fetch"]["commands"] == ["git continuity init"]

    git(work, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    told = run(work, "orient")
    assert told.code == 1
    assert told.out.splitlines()[2].startswith("(Could not ask origin whether it has state: fatal: '")

    alone = tmp_path / "alone"
    git(tmp_path, "init", "-q", str(alone))
    assert run(alone, "orient").out == (
        "# git-continuity brief: stream main\n"
        "No continuity state for stream 'main' in this clone: refs/continuity/main does not exist here. "
        "Nothing below is known; do not take this for an empty state.\n"
        "To start keeping state here: git continuity init\n"
    )


def test_max_tokens_keeps_the_truth_first_and_says_what_it_left_out(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    untrue = made(ok(repo, "claim", "add", "v9 is tagged", "--check", "tag:v9").out, "c")
    for n in range(12):
        ok(repo, "claim", "add", f"the first commit exists ({n})", "--check", "commit:HEAD")
    for n in range(4):
        ok(repo, "journal", "add", f"note {n}")
    state = git(repo, "rev-parse", "--short=7", "refs/continuity/main")
    session = json.loads(ok(repo, "orient", "--json").out)["session"]["id"]
    truth = (
        "# git-continuity brief: stream main\n"
        f"State refs/continuity/main at {state}, changed AGO. "
        "Claims: 12 verified, 1 contradicted (13 re-derived now).\n"
        f"Session {session} continues, started AGO on laptop; end it with: git continuity handoff\n"
        "\n"
        "## Do not act on these: not true now\n"
        f'- **{untrue}** "v9 is tagged" (tag:v9) is contradicted: tag v9 does not exist here\n'
    )

    # Smaller than the truth: the truth anyway, said to be over budget; exit 0.
    tight = ok(repo, "orient", "--max-tokens", "10")
    assert re.sub(r"about \d+ tokens", "about N tokens", steady(tight.out)) == truth + (
        "\n"
        "---\n"
        "Over budget: --max-tokens 10 cannot be kept: the truth section is never cut and is about N tokens;"
        " only it is printed, about N tokens with this note. "
        "Left out: the objective, the next action, 12 of 12 verified claims, "
        "the work tree, the changes since the last session, 4 of 4 journal entries. "
        "See: git continuity claim list --state verified; git status; git continuity journal.\n"
    )
    doc = json.loads(ok(repo, "orient", "--json", "--max-tokens", "10").out)
    assert doc["budget"]["over_budget"] is True
    assert [c["id"] for c in doc["do_not_act"]] == [untrue]
    assert doc["verified"] == [] and doc["journal"] == [] and doc["objective"] is None

    # Room for some: sections in priority order, the first that does not fit cut item by
    # item, nothing less important after it, and the rest named with how to see it.
    cut = ok(repo, "orient", "--max-tokens", "500")
    assert len(cut.out.encode()) <= 500 * 3
    verified = [line for line in cut.out.splitlines() if "exists here" in line]
    assert len(verified) == 6
    assert steady(cut.out) == truth + (
        "\n## Verified now\n"
        + "".join(line + "\n" for line in verified)
        + "- … 6 more verified claims: git continuity claim list --state verified\n"
        "\n"
        "## Objective\n"
        "Ship it\n"
        "- why: users wait\n"
        "- set TIME UTC by Ada Agent <ada@example.com>\n"
        "\n"
        "## Next action\n"
        "(none: git continuity next TEXT)\n"
        "\n"
        "## Blockers\n"
        "- none\n"
        "\n"
        "## Open threads\n"
        "- none\n"
        "\n"
        "---\n"
        "Left out to stay under 500 tokens (1 token ≈ 3 bytes): 6 of 12 verified claims, the work tree, "
        "the changes since the last session, 4 of 4 journal entries. "
        "See: git continuity claim list --state verified; git status; git continuity journal.\n"
    )
    doc = json.loads(ok(repo, "orient", "--json", "--max-tokens", "500").out)
    assert len(doc["verified"]) == 6 and doc["journal"] == [] and doc["work_tree"] is None
    assert doc["objective"]["text"] == "Ship it"
    assert doc["budget"]["left_out"] == [
        {"section": "verified", "count": 6, "of": 12, "see": "git continuity claim list --state verified"},
        {"section": "work_tree", "count": 1, "of": 1, "see": "git status"},
        {"section": "since_none", "count": 1, "of": 1, "see": None},
        {"section": "journal", "count": 4, "of": 4, "see": "git continuity journal"},
    ]
    assert doc["budget"]["estimated_tokens"] <= 500 and doc["budget"]["over_budget"] is False

    for bad in ("0", "-5"):
        refused = run(repo, "orient", "--max-tokens", bad)
        assert (refused.code, refused.out) == (2, "")
        assert refused.err == "git-continuity: error: --max-tokens takes a whole number of tokens, 1 or more\n"


def test_malformed_state_is_named_in_the_brief_and_blocks_a_handoff(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    ok(repo, "orient")
    ok(repo, "handoff")
    (path,) = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    stored = json.loads(git(repo, "show", f"refs/continuity/main:{path}"))
    broken = json.dumps({**stored, "next_action": 7}, indent=2, sort_keys=True) + "\n"
    write_state(repo, {path: broken})
    before = git(repo, "rev-parse", "refs/continuity/main")
    line = next(n for n, text in enumerate(broken.splitlines(), 1) if '"next_action"' in text)

    brief = run(repo, "orient")
    assert (brief.code, brief.err) == (2, "")
    assert f"Problem: {path} line {line}: next_action: 7 is not of type 'string', 'null'\n" in brief.out
    assert "- no earlier handoff on this stream: nothing to compare with\n" in brief.out  # the bad one is not read
    refused = run(repo, "handoff")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: the state on refs/continuity/main is malformed; nothing was written:\n"
        f"  {path} line {line}: next_action: 7 is not of type 'string', 'null'\n"
        "Nothing can be written on this state until it is repaired, and what to repair is the user's decision (git"
        " continuity doctor shows them the state and its repair): tell them; do not repair or rewrite the state"
        " yourself.\n"
    )
    assert git(repo, "rev-parse", "refs/continuity/main") == before


def test_handoff_json_is_the_packet_as_stored_and_works_without_a_branch(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    ok(empty, "init")
    ok(empty, "objective", "set", "Start", "--why", "nothing here yet")
    doc = json.loads(ok(empty, "handoff", "--json").out)  # checked against schema/handoff-output
    assert doc["state"] == {"ref": "refs/continuity/main", "commit": git(empty, "rev-parse", "refs/continuity/main")}
    assert doc["handoff"] == json.loads(git(empty, "show", f"refs/continuity/main:{doc['path']}"))
    assert doc["handoff"]["baseline"] == {"kind": "none"}
    assert doc["handoff"]["work_tree"] == {
        "branch": "main",
        "head": None,
        "head_summary": None,
        "staged": 0,
        "unstaged": 0,
        "untracked": 0,
        "conflicted": 0,
        "touched": 0,
        "paths": [],
        "stashes": [],
    }
    handed = ok(empty, "handoff").out
    assert "## What this session did\n- no commits, claims or thread changes\n" in handed
    assert "## Work tree\n- on branch main (no commits yet)\n- no uncommitted changes\n" in handed

    first = commit(empty, "first")
    git(empty, "checkout", "-q", "--detach")
    assert f'## Work tree\n- detached HEAD at {first[:7]} "first"\n' in ok(empty, "orient").out

    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    ok(bare, "init")
    ok(bare, "objective", "set", "Keep state on a server", "--why", "no work tree there")
    assert "## Work tree\n- bare repository: no work tree\n" in ok(bare, "handoff").out
    assert json.loads(ok(bare, "orient", "--json").out)["work_tree"] is None


# -- sessions -------------------------------------------------------------------------------


def test_every_entry_written_in_a_session_carries_it(repo: Path) -> None:
    ok(repo, "init")
    started = json.loads(ok(repo, "orient", "--json", GIT_CONTINUITY_AGENT="claude-code").out)["session"]
    session = started["id"]
    assert started["agent"] == "claude-code"
    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    claim = made(ok(repo, "claim", "add", "the first commit exists", "--check", "commit:HEAD").out, "c")
    thread = made(ok(repo, "thread", "add", "Ship", "--check", "clean:").out, "t")
    entry = made(ok(repo, "journal", "add", "looked around").out, "j")
    ok(repo, "verify")

    def entries(folder: str) -> list[dict[str, Any]]:
        names = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", f".continuity/{folder}/")
        return [json.loads(git(repo, "show", f"refs/continuity/main:{n}")) for n in names.splitlines()]

    stamped = {"session": session, "agent": "claude-code"}
    for folder in ("claims", "threads", "objective", "journal", "evidence"):
        for data in entries(folder):
            assert {k: data.get(k) for k in stamped} == stamped, (folder, data)
            assert data.get("host") == "laptop", (folder, data)
    assert {claim, thread, entry} <= {d["id"] for f in ("claims", "threads", "journal") for d in entries(f)}
    trailers = git(repo, "log", "-1", "--format=%(trailers)", "refs/continuity/main")
    assert trailers == f"Host: laptop\nSession: {session}\nAgent: claude-code"

    # The environment names another session: it wins, for this process only.
    other = made(ok(repo, "journal", "add", "from a scheduler", GIT_CONTINUITY_SESSION="nightly-42").out, "j")
    assert next(e for e in entries("journal") if e["id"] == other)["session"] == "nightly-42"

    # A session id that could not be stored is refused before anything is written.
    before = git(repo, "rev-parse", "refs/continuity/main")
    for bad in ("-rf", "a b", "x" * 65):
        refused = run(repo, "journal", "add", "no", GIT_CONTINUITY_SESSION=bad)
        assert (refused.code, refused.out) == (2, "")
        assert refused.err == (
            f"git-continuity: error: GIT_CONTINUITY_SESSION={bad!r} is not a usable session id: letters, digits, "
            "'.', '_', ':' and '-', at most 64 characters, starting with a letter or digit\n"
        )
    refused = run(repo, "journal", "add", "no", GIT_CONTINUITY_AGENT="two\nlines")
    assert refused.err == (
        "git-continuity: error: GIT_CONTINUITY_AGENT='two\\nlines' is not a usable agent name: "
        "1 to 64 characters, no control characters\n"
    )
    assert git(repo, "rev-parse", "refs/continuity/main") == before

    # After the handoff the session is over: what is written next carries none.
    ok(repo, "handoff")
    after = made(ok(repo, "journal", "add", "between sessions").out, "j")
    assert "session" not in next(e for e in entries("journal") if e["id"] == after)


def test_the_provenance_note_names_the_session_without_being_told(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "hooks", "install")
    session = json.loads(ok(repo, "orient", "--json", GIT_CONTINUITY_AGENT="codex").out)["session"]["id"]
    made_in_session = commit(repo, "work in the session")
    (record,) = json.loads(ok(repo, "show", "--json", made_in_session).out)["records"]
    assert (record["kind"], record["session"], record["agent"]) == ("provenance", session, "codex")

    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    ok(repo, "handoff")
    made_after = commit(repo, "work between sessions")
    (record,) = json.loads(ok(repo, "show", "--json", made_after).out)["records"]
    assert "session" not in record and "agent" not in record


def test_orient_continues_the_open_session_and_says_when_one_ended_without_a_handoff(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    first = json.loads(ok(repo, "orient", "--json").out)["session"]
    again = json.loads(ok(repo, "orient", "--json").out)
    assert again["session"] == {**first, "continued": True}
    assert again["warnings"] == []

    # Another agent conversation starts here: the open session ended without a handoff.
    hooked = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "session-start"],
        cwd=repo,
        input=json.dumps({"session_id": "conversation-2", "cwd": str(repo), "source": "startup"}),
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CONTINUITY_HOST": "laptop"},
    )
    context = json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
    now = json.loads((repo / ".git" / "continuity" / "session.json").read_text())
    assert now["id"] != first["id"] and now["agent_session"] == "conversation-2" and now["agent"] == "claude-code"
    assert steady(context).splitlines()[2:4] == [
        f"Session {now['id']} (claude-code) started now on laptop; end it with: git continuity handoff",
        f"Warning: The previous session {first['id']} (started TIME UTC on laptop) ended without a handoff: "
        "what it left is in the work tree and under 'Since the last session'.",
    ]


def test_the_session_file_holds_what_is_read_and_an_older_file_still_continues(repo: Path) -> None:
    ok(repo, "init")
    first = json.loads(ok(repo, "orient", "--json").out)["session"]
    file = repo / ".git" / "continuity" / "session.json"
    stored = json.loads(file.read_text())
    assert sorted(stored) == [
        "agent",
        "agent_pid",
        "agent_session",
        "agent_start",
        "ended_at",
        "handoff",
        "host",
        "id",
        "refs",
        "started_at",
        "state",
        "stream",
        "worktree",
    ]
    # Files written before stop_blocks was dropped (the Stop gate counts in its own file).
    file.write_text(json.dumps({**stored, "stop_blocks": 2}))
    again = json.loads(ok(repo, "orient", "--json").out)["session"]
    assert again == {**first, "continued": True}
    assert "stop_blocks" not in json.loads(file.read_text())


def test_each_linked_worktree_has_its_own_session(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other))
    here = json.loads(ok(repo, "orient", "--json").out)["session"]["id"]
    there = json.loads(ok(other, "orient", "--json").out)["session"]["id"]
    assert here != there
    entry = made(ok(other, "journal", "add", "in the other worktree").out, "j")
    journal = json.loads(ok(repo, "journal", "--json").out)["entries"]
    assert [(e["id"], e.get("session")) for e in journal] == [(entry, there)]
    assert (Path(git(other, "rev-parse", "--absolute-git-dir")) / "continuity" / "session.json").exists()


def test_every_budget_gives_a_brief(repo: Path, inproc: Run) -> None:
    # Between "the truth fits" and "the truth and the footer fit" the cut once had nothing
    # left to drop and crashed; every budget must give a brief.
    assert inproc(repo, "init").code == 0
    assert inproc(repo, "objective", "set", "Ship it", "--why", "users wait").code == 0
    assert inproc(repo, "claim", "add", "v9 is tagged", "--check", "tag:v9").code == 0
    for n in range(6):
        assert inproc(repo, "claim", "add", f"commit {n} exists", "--check", "commit:HEAD").code == 0
    for budget in range(20, 400, 4):
        done = inproc(repo, "orient", "--max-tokens", str(budget))
        assert (done.code, done.err) == (0, ""), budget
        assert done.out.startswith("# git-continuity brief: stream main\n"), budget


def test_an_unreadable_packet_is_not_shown_as_no_objective(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    write_state(repo, {".continuity/packet.yaml": "objective: [unclosed\n"})
    brief = run(repo, "orient")
    assert brief.code == 2
    assert "## Objective\n(unreadable packet: see the problems above)\n" in brief.out
    assert "(no objective: nothing says" not in brief.out


def test_a_brief_cut_to_its_budget_makes_the_lines_of_the_claims_it_shows_not_of_every_claim(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session start of 1,000 claims shows the few that fit: the others are counted, never
    written out (sessions/budget.py Item, made when shown)."""
    from git_continuity import repo as gitrepo
    from git_continuity.render import text as render
    from git_continuity.sessions import orient

    ok(repo, "init")
    for n in range(30):
        ok(repo, "claim", "add", f"claim {n}: " + "a sentence of some length " * 4, "--check", "commit:HEAD")
    written: list[str] = []
    real = render.claim_json

    def claim_json(a: Any) -> dict[str, Any]:
        written.append(a.claim.id)
        return real(a)

    monkeypatch.setattr(render, "claim_json", claim_json)

    built = orient.build(gitrepo.open_repo(repo), stream="main", max_tokens=700)
    shown = [c["id"] for c in built.document["verified"]]
    assert 0 < len(shown) < 30
    # Those shown, and the next one or two the cut tried against the budget (with and without its footer).
    assert written[: len(shown)] == shown and len(written) <= len(shown) + 2
    assert f"- … {30 - len(shown)} more verified claims: git continuity claim list --state verified" in built.text
