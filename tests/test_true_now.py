"""True now, wherever a session starts (#33), through the command line and the agents' hooks:
the brief's fresh look at the remotes and the forge, freshness said the same way by every
reader, claims judged at the home from a donor worktree, a session that is the agent's across
worktrees, work not yet shared named, clones told apart, a cmd: check not approved here, the
Stop gate's let-go said to the person, a malformed state held once. Real git, real remotes, a
remote that never answers (a socket that accepts and stays silent), the loopback forge."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import at_a_terminal, claude_hook, commit, cont, git, made_id, ok, stop_hook, write_state
from forge_fakes import FakeGitHub, Fault

ID = r"[2-9a-hjkmnp-z]{6}"


def oriented(work: Path, *args: str, **env: str) -> str:
    done = subprocess.run(
        ["git", "continuity", "orient", *args], cwd=work, capture_output=True, text=True, env={**os.environ, **env}
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def section(brief: str, title: str) -> list[str]:
    """The lines of one ``## title`` section of a brief (without its heading)."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=\n\n|\Z)", brief, re.S | re.M)
    return found.group(1).splitlines() if found else []


def ago(text: str) -> str:
    return re.sub(r"(just now|\d+ (second|minute|hour|day)s? ago)", "AGO", text)


@pytest.fixture
def silent() -> Iterator[str]:
    """A git:// remote that takes the connection and never says a word: a dead remote."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"git://127.0.0.1:{server.getsockname()[1]}/cli.git"
    stop.set()
    thread.join()
    for each in held:
        each.close()
    server.close()


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        yield fake


# -- 1. recorded network evidence is never "Verified now" -----------------------------------------


def test_a_pr_verified_earlier_is_asked_again_and_what_cannot_be_asked_is_never_verified_now(
    repo: Path, github: FakeGitHub
) -> None:
    github.add_pull("acme", "cli", 12, "open")
    ok(repo, "init")
    pr = made_id(ok(repo, "claim", "add", "PR #12 is open", "--check", "github:pr/acme/cli#12=open"), "c")
    assert "verified" in ok(repo, "verify", "--online")  # recorded here: PR #12 is open
    github.add_pull("acme", "cli", 12, "merged")  # merged since

    brief = oriented(repo)
    assert section(brief, "Do not act on these: not true now") == [
        f'- **{pr}** "PR #12 is open" (github:pr/acme/cli#12=open) is contradicted: PR #12 was merged at '
        "2026-11-28T10:02Z by octocat (merge commit eeeeeee)"
    ]
    assert section(brief, "Verified now") == []
    assert "Claims: 1 contradicted (1 re-derived now)." in brief

    # The forge does not answer within the look's bound: the last evidence is shown as what it
    # is, recorded here and not asked now, with why; never under "Verified now".
    github.add_pull("acme", "cli", 12, "open")
    assert "verified" in ok(repo, "verify", "--online")
    github.fault("/pulls/12", Fault(200, delay=3.0))
    brief = oriented(repo, GIT_CONTINUITY_FRESH_LOOK="0.5")
    assert section(brief, "Verified now") == []
    (line,) = section(brief, "Not confirmed: check before relying on these")
    assert ago(line) == (
        f'- {pr} "PR #12 is open" (github:pr/acme/cli#12=open) is verified [recorded here AGO, not asked now: '
        "not answered within 0.5 s]: PR #12 is open, head 1111111"
    )
    assert "Claims: 1 verified (1 recorded earlier, not asked now)." in brief
    document = json.loads(oriented(repo, "--json", GIT_CONTINUITY_FRESH_LOOK="0.5"))
    (unconfirmed,) = document["unconfirmed"]
    assert unconfirmed["freshness"]["kind"] == "recorded"
    assert document["look"]["network"]["unanswered"][0]["handle"] == "github:pr/acme/cli#12=open"


# -- 2. the brief looks at the remotes ------------------------------------------------------------


def test_the_brief_fetches_and_sees_a_force_reset_a_new_tag_and_state_written_on_another_clone(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, laptop = remote_and_clone
    ok(laptop, "init")
    ok(laptop, "objective", "set", "Ship 1.2", "--why", "release is due")
    blocker = made_id(ok(laptop, "blocker", "add", "CI runner is offline"), "b")
    fix = commit(laptop, "Fix the login loop", {"app.py": "fixed\n"})
    git(laptop, "push", "-q", "origin", "main")
    pushed = made_id(ok(laptop, "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main"), "c")
    tagged = made_id(ok(laptop, "claim", "add", "1.2 is tagged", "--check", "tag:v1.2"), "c")
    ok(laptop, "push")

    # Between the sessions, on another clone: the fix is reset away on origin, v1.2 is tagged
    # there, the blocker is done and a journal entry says why.
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    ok(desktop, "pull")
    ok(desktop, "blocker", "done", blocker)
    ok(desktop, "journal", "add", "the CI runner is back")
    ok(desktop, "push")
    git(desktop, "reset", "-q", "--hard", "HEAD~1")
    git(desktop, "push", "-q", "--force", "origin", "main")
    git(desktop, "tag", "v1.2")
    git(desktop, "push", "-q", "origin", "v1.2")
    base = git(desktop, "rev-parse", "--short=7", "HEAD")

    brief = oriented(laptop)
    lines = brief.splitlines()
    assert "Fresh look: fetched now from origin." in lines
    assert any(re.fullmatch(r"Fresh look: origin's state: main: fast-forward \w+\.\.\w+\.", x) for x in lines)
    assert section(brief, "Do not act on these: not true now") == [
        f'- **{pushed}** "the fix is pushed" (pushed:{fix[:12]}…@origin/main) is contradicted: '
        f"origin/main is at {base} (fetched just now), which does not contain {fix[:7]}"
    ]
    assert section(brief, "Verified now") == [f'- {tagged} "1.2 is tagged" (tag:v1.2): tag v1.2 points at {base}']
    assert section(brief, "Blockers") == ["- none"]
    assert re.search(r"^- \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC Ada Agent on \S+: the CI runner is back$", brief, re.M)


def test_claims_are_judged_after_a_look_that_fetched_branches_and_tags_but_no_state(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """A brief judges its claims on what the look fetched, when no state came with it too: it
    never shows what held before the fetch."""
    bare, laptop = remote_and_clone
    ok(laptop, "init")
    fix = commit(laptop, "Fix the login loop", {"app.py": "fixed\n"})
    git(laptop, "push", "-q", "origin", "main")
    pushed = made_id(ok(laptop, "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main"), "c")
    ok(laptop, "push")
    assert (
        section(oriented(laptop), "Verified now")
        == [  # nothing to fetch
            f'- {pushed} "the fix is pushed" (pushed:{fix[:12]}…@origin/main): '
            f"origin/main is at {fix[:7]} (fetched just now), which contains {fix[:7]}"
        ]
    )

    desktop = tmp_path / "desktop"  # no continuity state is written there
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    git(desktop, "reset", "-q", "--hard", "HEAD~1")
    git(desktop, "push", "-q", "--force", "origin", "main")
    base = git(desktop, "rev-parse", "--short=7", "HEAD")

    brief = oriented(laptop)
    assert "Fresh look: fetched now from origin." in brief.splitlines()
    assert section(brief, "Do not act on these: not true now") == [
        f'- **{pushed}** "the fix is pushed" (pushed:{fix[:12]}…@origin/main) is contradicted: '
        f"origin/main is at {base} (fetched just now), which does not contain {fix[:7]}"
    ]


def test_a_branch_no_remote_had_is_told_shared_once_the_look_fetched_it_from_a_remote(
    remote_and_clone: tuple[Path, Path],
) -> None:
    """The brief counts a branch's own commits while the look waits; when the look fetched a
    remote branch that has them (pushed from elsewhere meanwhile), they are counted again."""
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "push")
    git(work, "checkout", "-q", "-b", "agent")
    mine = [commit(work, f"the agent's work {n}", {"agent.txt": f"{n}\n"}) for n in range(2)]
    line = (
        f"- agent: 2 commits on no remote ({mine[1][:7]} the agent's work 1; {mine[0][:7]} the agent's work 0):"
        " no remote has a branch agent"
    )
    assert line in oriented(work).splitlines()

    git(work, "push", "-q", str(bare), "agent:refs/heads/shared")  # by its path: no remote-tracking ref moves
    brief = oriented(work)
    assert "Fresh look: fetched now from origin." in brief.splitlines()
    assert git(work, "rev-parse", "refs/remotes/origin/shared") == mine[1]
    assert line not in brief.splitlines()
    assert "## Not yet shared: only in this clone" not in brief


def _git_commands(trace: Path) -> list[str]:
    """The look's git commands run while ``trace`` was GIT_TRACE2_EVENT, in order, without the
    helpers that git starts for itself (upload-pack, index-pack, rev-list)."""
    return [name for name, _, _ in _spans(trace) if name in ("ls-remote", "fetch")]


def test_the_look_lists_each_remote_and_fetches_only_one_where_something_moved(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "push")
    for n in range(3):
        git(work, "tag", f"v0.{n}")
    git(work, "push", "-q", "origin", "--tags")
    trace = tmp_path / "trace.json"

    oriented(work, GIT_TRACE2_EVENT=str(trace))  # nothing moved: one listing, no fetch
    assert _git_commands(trace) == ["ls-remote"]

    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    moved = commit(other, "Someone else's work")
    git(other, "push", "-q", "origin", "main")
    trace.unlink()
    brief = oriented(work, GIT_TRACE2_EVENT=str(trace))  # origin/main moved: fetched
    assert _git_commands(trace) == ["ls-remote", "fetch"]
    assert "Fresh look: fetched now from origin." in brief.splitlines()
    assert git(work, "rev-parse", "origin/main") == moved

    git(other, "tag", "v1.0")
    git(other, "push", "-q", "origin", "v1.0")
    trace.unlink()
    oriented(work, GIT_TRACE2_EVENT=str(trace))  # a new tag there: fetched
    assert _git_commands(trace) == ["ls-remote", "fetch"]
    assert git(work, "rev-parse", "v1.0") == moved

    trace.unlink()
    oriented(work, GIT_TRACE2_EVENT=str(trace))  # all here now
    assert _git_commands(trace) == ["ls-remote"]


def _spans(trace: Path) -> list[tuple[str, datetime, datetime]]:
    """Each git command run while ``trace`` was GIT_TRACE2_EVENT (git's own record and clock):
    its name, when it started and when it ended, in the order they started."""
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    names = {e["sid"]: e["name"] for e in events if e["event"] == "cmd_name"}
    times = {(e["sid"], e["event"]): _utc(e["time"]) for e in events if e["event"] in ("start", "exit")}
    return sorted(((name, times[sid, "start"], times[sid, "exit"]) for sid, name in names.items()), key=lambda s: s[1])


def test_the_brief_judges_its_claims_and_counts_the_work_tree_while_a_slow_remote_answers_the_look(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """A remote's round trip is often longer than judging this clone's claims takes: that is done
    while the look waits, and git counts the work tree meanwhile. A look that moved nothing keeps
    that judgement, and the brief is the one it would be with the look done first."""
    _, work = remote_and_clone
    ok(work, "init")
    head = git(work, "rev-parse", "HEAD")
    here = made_id(ok(work, "claim", "add", "the first commit is here", "--check", f"commit:{head}"), "c")
    ok(work, "push")
    oriented(work)  # the last look reached origin
    git(work, "config", "remote.origin.uploadpack", "sleep 1; git-upload-pack")  # a remote a second away
    trace = tmp_path / "trace.json"

    document = json.loads(oriented(work, "--json", GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30"))
    spans = [(name, start, end) for name, start, end in _spans(trace) if name in ("ls-remote", "status", "fetch")]
    assert [name for name, _, _ in spans] == ["ls-remote", "status"]
    (_, _, answered), (_, counting, _) = spans
    assert counting < answered  # counted before the remote answered
    (verified,) = document["verified"]
    assert (verified["id"], verified["origin"]) == (here, "now")
    assert _utc(verified["checked_at"]) < answered  # judged before it too, and kept
    brief = oriented(work, GIT_CONTINUITY_FRESH_LOOK="30")
    assert "Fresh look: fetched now from origin." in brief.splitlines()
    assert section(brief, "Verified now") == [
        f'- {here} "the first commit is here" (commit:{head[:12]}…): commit {head[:7]} exists here'
    ]


def test_a_remote_the_last_look_did_not_reach_has_the_brief_judged_once_after_the_look(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """A remote that failed the last look (an old remote nobody removed, a laptop offline) is
    likely to fail fast again: the claims are judged once, after the look, not also while it
    waits and then again."""
    _, work = remote_and_clone
    ok(work, "init")
    head = git(work, "rev-parse", "HEAD")
    ok(work, "claim", "add", "the first commit is here", "--check", f"commit:{head}")
    git(work, "remote", "add", "gone", str(tmp_path / "no-such-remote.git"))
    oriented(work)  # the last look did not reach gone
    git(work, "config", "remote.origin.uploadpack", "sleep 1; git-upload-pack")
    trace = tmp_path / "trace.json"

    document = json.loads(oriented(work, "--json", GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30"))
    spans = _spans(trace)
    answered = max(end for name, _, end in spans if name == "ls-remote")  # origin's, a second away
    (counting,) = [start for name, start, _ in spans if name == "status"]
    assert counting > answered  # once the look ended, as the claims were judged
    (status,) = [e["argv"] for e in map(json.loads, trace.read_text().splitlines()) if "status" in e.get("argv", [])]
    assert status[1:3] == ["-c", "core.preloadIndex=false"]  # one thread: the other core is the brief's
    (verified,) = document["verified"]
    assert _utc(verified["checked_at"]) > answered
    assert [(r["remote"], r["reached"]) for r in document["look"]["remotes"]] == [("gone", False), ("origin", True)]


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_refs_no_refspec_takes_and_refs_a_negative_refspec_leaves_out_cost_no_fetch(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """A remote on GitHub lists a ref for each pull request (refs/pull/N/head), which no
    refspec takes; a branch left out by a negative refspec (^refs/heads/wip) moves there.
    Neither is something a fetch would bring: one listing, no fetch. A branch taken is."""
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "push")
    tip = git(work, "rev-parse", "HEAD")
    pulls = "".join(f"create refs/pull/{n}/head {tip}\n" for n in range(1, 3001))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=bare, input=pulls, text=True, check=True)
    git(work, "config", "--add", "remote.origin.fetch", "^refs/heads/wip")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    commit(other, "Work in progress")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/wip")
    trace = tmp_path / "trace.json"  # what runs, not how soon: a look bound a loaded machine cannot miss

    oriented(work, GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30")
    assert _git_commands(trace) == ["ls-remote"]

    git(other, "push", "-q", "origin", "HEAD:refs/heads/feature")
    trace.unlink()
    oriented(work, GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30")
    assert _git_commands(trace) == ["ls-remote", "fetch"]
    assert git(work, "rev-parse", "origin/feature") == git(other, "rev-parse", "HEAD")
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/remotes/origin/wip", "refs/pull/") == ""


def _runs(trace: Path, name: str) -> list[list[str]]:
    """The arguments of each git ``name`` run while ``trace`` was GIT_TRACE2_EVENT, from its name on."""
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    argvs = [e["argv"] for e in events if e["event"] == "start"]
    return [argv[argv.index(name) :] for argv in argvs if name in argv]


def test_a_listing_asks_git_for_what_a_refspec_takes_and_the_state_and_a_pull_refspec_still_brings_its_refs(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """The remote's listing names what the look may fetch (each refspec's source, the tags, the
    state refs), so that git leaves out the thousands of refs/pull/* nothing takes; a user who
    fetches pull requests has them listed, and fetched when one moved. A refspec of short names
    has every ref listed (git expands it as it fetches)."""
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "push")
    tip = git(work, "rev-parse", "HEAD")
    git(bare, "update-ref", "refs/pull/1/head", tip)
    git(bare, "update-ref", "refs/pull/2/merge", tip)
    trace = tmp_path / "trace.json"
    oriented(work, GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30")
    state = ["refs/continuity/*", "refs/notes/continuity*", "refs/heads/continuity/*", "refs/continuity-lanes/*"]
    state += ["refs/notes/continuity-lanes/*", "refs/heads/continuity/lanes/*"]
    assert _runs(trace, "ls-remote") == [["ls-remote", "--refs", "--", "origin", "refs/heads/*", "refs/tags/*", *state]]

    git(work, "config", "--add", "remote.origin.fetch", "+refs/pull/*/head:refs/remotes/origin/pr/*")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    moved = commit(other, "A pull request's work")
    git(other, "push", "-q", "origin", "HEAD:refs/pull/1/head")
    trace.unlink()
    brief = oriented(work, GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30")
    pulls = ["refs/heads/*", "refs/pull/*/head", "refs/tags/*"]
    assert _runs(trace, "ls-remote") == [["ls-remote", "--refs", "--", "origin", *pulls, *state]]
    assert _git_commands(trace) == ["ls-remote", "fetch"]
    assert "Fresh look: fetched now from origin." in brief.splitlines()
    assert git(work, "for-each-ref", "--format=%(refname) %(objectname)", "refs/remotes/origin/pr/") == (
        f"refs/remotes/origin/pr/1 {moved}"
    )

    git(work, "config", "--replace-all", "remote.origin.fetch", "main:refs/remotes/origin/main")
    trace.unlink()
    oriented(work, GIT_TRACE2_EVENT=str(trace), GIT_CONTINUITY_FRESH_LOOK="30")
    assert _runs(trace, "ls-remote") == [["ls-remote", "--refs", "--", "origin"]]


def test_a_refspec_glob_matches_the_names_git_would() -> None:
    """The look's one question of each listed name (syncing/look.py _any_of) answers as git's
    refspec globs do, a star taking anything, slashes too: as fnmatch does for these."""
    from fnmatch import fnmatchcase

    from git_continuity.syncing.look import _any_of

    patterns = ["refs/heads/*", "refs/tags/*", "refs/notes/continuity*", "refs/continuity/*", "refs/keep/x"]
    names = [
        "refs/heads/main",
        "refs/heads/team/a/b",
        "refs/heads/",
        "refs/heads",
        "refs/pull/12/head",
        "refs/notes/continuity",
        "refs/notes/continuity-lanes/a",
        "refs/notes/commits",
        "refs/continuity/main",
        "refs/keep/x",
        "refs/keep/xy",
        "refs/tags/v1.0",
        "HEAD",
    ]
    for chosen in ([], patterns[:1], patterns, ["refs/*/head"], ["*"]):
        matches = _any_of(chosen)
        assert [n for n in names if matches(n)] == [n for n in names if any(fnmatchcase(n, p) for p in chosen)]


def test_a_ref_name_that_is_not_utf8_costs_no_fetch_and_breaks_no_brief_nor_handoff(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """git allows any bytes in a ref name; no reader can show such a name as git has it, so it
    is passed by: the look does not fetch for it every time, and the brief and the handoff,
    which record the refs they saw, are made without it once a fetch brought it here."""
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "objective", "set", "Ship", "--why", "due")
    head = git(work, "rev-parse", "HEAD")
    subprocess.run([b"git", b"update-ref", b"refs/heads/caf\xe9", head.encode()], cwd=bare, check=True)
    trace = tmp_path / "trace.json"
    oriented(work, GIT_TRACE2_EVENT=str(trace))
    assert _git_commands(trace) == ["ls-remote"]
    git(work, "fetch", "-q", "origin")  # here now, by the user's own fetch
    assert (
        b"refs/remotes/origin/caf\xe9"
        in subprocess.run(
            ["git", "for-each-ref", "--format=%(refname)"], cwd=work, capture_output=True, check=True
        ).stdout
    )
    assert oriented(work).startswith("# git-continuity brief: stream main\n")
    assert made_id(ok(work, "handoff"), "h")


def test_a_remote_tracking_ref_that_cannot_be_read_is_said_in_gits_words_and_the_brief_goes_on(
    remote_and_clone: tuple[Path, Path],
) -> None:
    _, work = remote_and_clone
    ok(work, "init")
    git(work, "push", "-q", "origin", "HEAD:refs/heads/feat")
    git(work, "fetch", "-q", "origin")
    (work / ".git" / "refs" / "remotes" / "origin" / "feat").write_text("garbage\n")
    lines = oriented(work).splitlines()
    assert lines[3] == (
        f"Fresh look: origin ({git(work, 'remote', 'get-url', 'origin')}) was not reached: fatal: bad object "
        "refs/remotes/origin/feat; what this clone knows of it (its branches, tags and state, and every check that "
        "reads them) is as it last heard from it, just now."
    )


def test_a_refspec_of_short_names_is_fetched_as_git_would(remote_and_clone: tuple[Path, Path], tmp_path: Path) -> None:
    bare, work = remote_and_clone
    ok(work, "init")
    git(work, "config", "remote.origin.fetch", "main:refs/remotes/origin/main")  # git expands main itself
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    moved = commit(other, "Someone else's work")
    git(other, "push", "-q", "origin", "main")
    assert "Fresh look: fetched now from origin." in oriented(work).splitlines()
    assert git(work, "rev-parse", "origin/main") == moved


def test_a_fetch_of_thousands_of_new_branches_is_not_stopped_by_what_it_says(
    remote_and_clone: tuple[Path, Path],
) -> None:
    """git fetch says a line for each ref it writes; unread, those lines would fill a pipe
    and stop it until the look's bound."""
    bare, work = remote_and_clone
    ok(work, "init")
    head = git(work, "rev-parse", "HEAD")
    subprocess.run(
        ["git", "update-ref", "--stdin"],
        cwd=bare,
        input="".join(f"create refs/heads/topic/{n:04d} {head}\n" for n in range(3000)),
        text=True,
        check=True,
    )
    lines = oriented(work, GIT_CONTINUITY_FRESH_LOOK="20").splitlines()
    assert "Fresh look: fetched now from origin." in lines
    assert len(git(work, "for-each-ref", "refs/remotes/origin/topic/").splitlines()) == 3000


def test_a_tag_that_differs_from_the_remotes_is_left_as_it_is_and_said(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = remote_and_clone
    ok(work, "init")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    commit(other, "Release", {"release.txt": "1.2\n"})
    git(other, "tag", "v1.2")
    git(other, "push", "-q", "origin", "main", "v1.2")
    git(work, "tag", "v1.2")  # here on another commit
    ours = git(work, "rev-parse", "v1.2")
    lines = oriented(work).splitlines()
    assert lines[3:5] == [
        "Fresh look: fetched now from origin.",
        "Tag v1.2 differs between this clone and origin: left as it is here (git ls-remote origin refs/tags/v1.2 shows "
        "theirs).",
    ]
    assert git(work, "rev-parse", "v1.2") == ours


def test_a_remote_that_never_answers_is_said_with_what_is_known_of_it_and_its_age(
    remote_and_clone: tuple[Path, Path], silent: str
) -> None:
    _, work = remote_and_clone
    ok(work, "init")
    head = git(work, "rev-parse", "HEAD")
    pushed = made_id(ok(work, "claim", "add", "main is pushed", "--check", "pushed:HEAD@origin/main"), "c")
    git(work, "remote", "set-url", "origin", silent)

    brief = oriented(work, GIT_CONTINUITY_FRESH_LOOK="1")
    assert ago(brief.splitlines()[3]) == (
        f"Fresh look: origin ({silent}) was not reached: did not answer within 1 s; what this clone knows of it "
        "(its branches, tags and state, and every check that reads them) is as it last heard from it, AGO."
    )
    assert section(brief, "Verified now") == []
    assert [ago(x) for x in section(brief, "Not confirmed: check before relying on these")] == [
        f'- {pushed} "main is pushed" (pushed:{head[:12]}…@origin/main) is verified [recorded here AGO, not asked '
        f"now: origin did not answer within 1 s]: origin/main is at {head[:7]} (as cloned AGO, not fetched since), "
        f"which contains {head[:7]}"
    ]
    look = json.loads(oriented(work, "--json", GIT_CONTINUITY_FRESH_LOOK="1"))["look"]
    assert [(r["remote"], r["reached"], r["failed"]) for r in look["remotes"]] == [
        ("origin", False, "did not answer within 1 s")
    ]
    # No git process of the look outlives it: none is left talking to the silent remote.
    assert not [p for p in _processes() if silent in p]


def test_the_look_is_woken_as_each_listing_ends_not_by_looking_in_turns(
    remote_and_clone: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look waits on the end of each git process it started (a pidfd each), not by
    looking every few milliseconds: a session start waited half of that more, for nothing."""
    import time

    from git_continuity import repo as opened
    from git_continuity.syncing import transport

    _, work = remote_and_clone
    here = opened.open_repo(work)
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    started = [transport.start_listing(here, "origin"), transport.start_listing(here, "origin")]
    ended = transport.finish_all(started, time.monotonic() + 10, 10)
    main = git(work, "rev-parse", "origin/main")
    assert [(f.remote, f.failed, dict(f.listed)) for f in ended] == [("origin", None, {"refs/heads/main": main})] * 2
    assert slept == []

    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # pidfds numbered past 1,024
    try:
        ended = transport.finish_all([transport.start_listing(here, "origin")], time.monotonic() + 10, 10)
    finally:
        for fd in held:
            os.close(fd)
    assert [(f.remote, f.failed) for f in ended] == [("origin", None)]

    monkeypatch.delattr(os, "pidfd_open")  # not Linux: it looks at them in turns, and ends alike
    started = [transport.start_listing(here, "origin")]
    ended = transport.finish_all(started, time.monotonic() + 10, 10)
    assert [(f.remote, f.failed, dict(f.listed)) for f in ended] == [("origin", None, {"refs/heads/main": main})]
    assert slept and set(slept) == {transport.POLL}


def _processes() -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                found.append(Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                continue
    return found


def test_what_a_compactions_look_fetched_is_not_the_sessions_change(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """A compacted (or resumed) conversation gets a fresh brief, whose look fetches what others
    pushed meanwhile: the session did not change that, so a Stop with nothing of its own changed
    is not held."""
    bare, work = remote_and_clone
    ok(work, "init")
    ok(work, "thread", "add", "Release", "--check", "tag:v9")
    claude_hook(work, "session-start", {"session_id": "c-1", "source": "startup"})
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    commit(other, "Someone else's work")
    git(other, "push", "-q", "origin", "main")
    claude_hook(work, "session-start", {"session_id": "c-1", "source": "compact"})
    assert git(work, "rev-parse", "origin/main") == git(other, "rev-parse", "HEAD")  # the look fetched it
    assert stop_hook(work, session="c-1")[0] == {}


# -- 3. a session in a donor worktree judges the stream's claims at the home ---------------------


def test_a_session_started_in_a_donor_worktree_judges_the_claims_at_the_home(repo: Path, tmp_path: Path) -> None:
    commit(repo, "config", {"conf/app.toml": "port = 80\n"})
    ok(repo, "init")
    ok(repo, "place", "set", "repo", "home", "--why", "the implementation lives here")
    donor = tmp_path / "old"
    git(repo, "worktree", "add", "-q", "-b", "old-parser", str(donor))
    ok(repo, "place", "set", "old", "donor", "--why", "the old parser: copy parts, never commit")
    config = made_id(
        ok(repo, "claim", "add", "the config lives in conf/app.toml", "--check", "file:conf/app.toml"), "c"
    )
    git(repo, "rm", "-q", "conf/app.toml")
    gone = commit(repo, "Move the config into the package")

    brief = oriented(donor)
    assert brief.splitlines()[1:3] == [
        f"You are in a donor checkout (branch old-parser): copy from it, commit nothing. Work happens in the home: "
        f"the checkout of branch main, in {repo}.",
        f"Claims are judged in the home, the checkout of branch main in {repo}, not in worktree old (branch "
        "old-parser) where this session is.",
    ]
    assert section(brief, "Verified now") == []
    assert section(brief, "Do not act on these: not true now") == [
        f'- **{config}** "the config lives in conf/app.toml" (file:conf/app.toml) is contradicted: '
        f"conf/app.toml is not in HEAD ({gone[:7]})"
    ]
    # The same through an agent's SessionStart hook started in the donor.
    answer, _ = claude_hook(donor, "session-start", {"session_id": "c-1", "source": "startup"})
    said = answer["hookSpecificOutput"]["additionalContext"]
    assert f"conf/app.toml is not in HEAD ({gone[:7]})" in said and "exists in HEAD" not in said


# -- 4. a session is the agent's session, across the worktrees of one clone -----------------------

AGENT = """
import ctypes, json, os, subprocess, sys, time
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)  # its name, as an agent's process has one
for step in json.loads(sys.argv[2]):
    done = subprocess.run(step["argv"], cwd=step["cwd"], input=step["input"].encode(), capture_output=True,
                          env={**os.environ, **step["env"]})
    print(json.dumps({"out": done.stdout.decode(), "err": done.stderr.decode(), "code": done.returncode}), flush=True)
if sys.argv[3] == "stay":
    time.sleep(600)
"""


def agent(name: str, steps: list[dict[str, Any]], *, stay: bool) -> tuple[subprocess.Popen[str], list[dict[str, Any]]]:
    """A process named like an agent that runs its hooks and commands as children, as an agent
    does; it ends after them, or stays (a live agent) until killed."""
    child = subprocess.Popen(
        [sys.executable, "-c", AGENT, name, json.dumps(steps), "stay" if stay else "go"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    said = [json.loads(child.stdout.readline()) for _ in steps]
    if not stay:
        child.wait(30)
    return child, said


def hook(where: Path, action: str, conversation: str) -> dict[str, Any]:
    payload = {"session_id": conversation, "cwd": str(where), "hook_event_name": action, "source": "startup"}
    return {
        "argv": ["git-continuity-hook", "agent", "claude", action],
        "cwd": str(where),
        "input": json.dumps(payload),
        "env": {},
    }


def run_as(where: Path, conversation: str, *args: str) -> dict[str, Any]:
    env = {"CLAUDE_CODE_SESSION_ID": conversation}
    return {"argv": ["git", *args], "cwd": str(where), "input": "", "env": env}


def test_a_killed_session_is_reported_anywhere_in_the_clone_and_each_write_is_its_own_sessions(
    repo: Path, tmp_path: Path
) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due")
    other = tmp_path / "review"
    git(repo, "worktree", "add", "-q", "-b", "review", str(other))
    # An agent starts a session in the main checkout and is killed: no SessionEnd, no handoff.
    _, said = agent("agent-one", [hook(repo, "session-start", "conversation-1")], stay=False)
    first = json.loads((repo / ".git" / "continuity" / "session.json").read_text())["id"]
    # Another agent starts in the other worktree: it is told, and its writes in the main
    # checkout (git -C) are its own.
    live, said = agent(
        "agent-two",
        [
            hook(other, "session-start", "conversation-2"),
            run_as(other, "conversation-2", "-C", str(repo), "continuity", "journal", "add", "reviewed the login fix"),
            run_as(
                other,
                "conversation-2",
                "-C",
                str(repo),
                "continuity",
                "claim",
                "add",
                "README stays",
                "--check",
                "file:README",
            ),
            hook(other, "session-end", "conversation-2"),
        ],
        stay=True,
    )
    try:
        brief = json.loads(said[0]["out"])["hookSpecificOutput"]["additionalContext"]
        second = json.loads((repo / ".git" / "worktrees" / "review" / "continuity" / "session.json").read_text())["id"]
        assert re.search(
            rf"^Warning: The session {first} \(claude-code\), started \S+ \S+ UTC on \S+ in {re.escape(str(repo))}, "
            r"ended without a handoff \(its agent is no longer running\): what it left is in that work tree and under "
            r"'Since the last session'\.$",
            brief,
            re.M,
        ), brief
        entries = json.loads(ok(repo, "journal", "--json"))["entries"]
        (written,) = [e for e in entries if e["text"] == "reviewed the login fix"]
        assert written["session"] == second
        handoff = json.loads(said[3]["out"])["systemMessage"]
        assert handoff.startswith("git-continuity: handoff h-") and f"(session {second})" in handoff
        (summary,) = [e["text"] for e in json.loads(ok(repo, "journal", "--json"))["entries"] if e.get("handoff")]
        assert summary.startswith(f"Session {second} handed off") and "1 claim added" in summary
        assert "arrived" not in summary
    finally:
        live.kill()
        live.wait()
    # The killed one is said once: the next session does not hear of it again.
    third = ok(repo, "orient")
    assert f"The session {first}" not in third


# -- 5. work not yet shared ---------------------------------------------------------------------


def test_work_not_yet_shared_is_named_in_the_brief_and_the_handoff(remote_and_clone: tuple[Path, Path]) -> None:
    _, work = remote_and_clone
    ok(work, "init")
    ok(work, "objective", "set", "Ship 1.2", "--why", "release is due")
    ok(work, "push")
    one = commit(work, "Parse the new flags", {"flags.py": "x\n"})
    two = commit(work, "Document the flags", {"FLAGS.md": "y\n"})
    ok(work, "journal", "add", "the flags parse")
    (work / "scratch.txt").write_text("half a thought\n")

    brief = oriented(work)
    assert section(brief, "Not yet shared: only in this clone") == [
        f"- main: 2 commits not on origin/main ({two[:7]} Document the flags; {one[:7]} Parse the new flags): git push",
        "- 1 state change not on origin: git continuity push origin",
        "- 1 file not committed: scratch.txt",
    ]
    handed = ok(work, "handoff")
    assert "## Not yet shared: only in this clone\n- main: 2 commits not on origin/main" in handed
    summary = json.loads(ok(work, "journal", "--json"))["entries"][-1]["text"]
    assert "Not pushed: main +2 (not on origin/main)." in summary
    git(work, "push", "-q", "origin", "main")
    ok(work, "push")
    (work / "scratch.txt").unlink()
    assert section(oriented(work), "Not yet shared: only in this clone") == []


# -- 6. differences between clones are not moves ------------------------------------------------


def test_a_branch_that_differs_between_two_clones_is_said_as_a_difference(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, laptop = remote_and_clone
    ok(laptop, "init")
    ok(laptop, "objective", "set", "Ship 1.2", "--why", "release is due")
    git(laptop, "switch", "-q", "-c", "old-parser")
    shared = commit(laptop, "Old parser, as shipped", {"parser.py": "old\n"})
    git(laptop, "push", "-q", "origin", "old-parser")
    kept = commit(laptop, "Old parser: a fix never pushed", {"parser.py": "old, fixed\n"})
    git(laptop, "switch", "-q", "main")
    handed = subprocess.run(
        ["git", "continuity", "handoff"], cwd=laptop, env={**os.environ, "GIT_CONTINUITY_HOST": "laptop"}, text=True
    )
    assert handed.returncode == 0
    ok(laptop, "push")

    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    git(desktop, "branch", "-q", "old-parser", "origin/old-parser")
    ok(desktop, "pull")
    brief = oriented(desktop, GIT_CONTINUITY_HOST="desktop")
    assert (
        "### Branches that differ from laptop's clone (nothing moved: each clone has its own)\n"
        + (
            f"- old-parser: laptop's is at {kept[:7]}, a commit this clone does not have (not pushed from there); "
            f"here at {shared[:7]}\n"
        )
        in brief
    )
    assert f"{kept[:7]} → {shared[:7]}" not in brief and "is not in this clone" not in brief


# -- 7. a cmd: check not approved here ----------------------------------------------------------


def test_a_cmd_check_not_approved_here_says_a_person_must_approve_it_and_names_no_command(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, laptop = remote_and_clone
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "laptop")
    ok(laptop, "init")
    ok(laptop, "orient")  # a session, named on the evidence
    assert at_a_terminal(laptop, "trust", "allow", "true").code == 0
    tests = made_id(ok(laptop, "claim", "add", "the tests pass", "--check", "cmd:true"), "c")
    ok(laptop, "verify", tests)
    ok(laptop, "push")
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "desktop")
    ok(desktop, "pull")

    brief = oriented(desktop)
    (line,) = section(brief, "Not confirmed: check before relying on these")
    assert re.fullmatch(
        rf'- {tests} "the tests pass" \(cmd:true\) is verified \[not approved here: it runs here only once a person '
        rf"approves it at a terminal; its last result reported by laptop \(session s-{ID}\) just now\]: reported by "
        rf"laptop \(session s-{ID}\) just now, not re-derived here: exit 0 in 0\.\ds on work tree [0-9a-f]{{7}}",
        line,
    ), line
    assert "trust allow" not in brief
    status = ok(desktop, "status")
    assert "[not approved here: it runs here only once a person approves it at a terminal;" in status
    shown = json.loads(ok(desktop, "claim", "show", tests, "--json"))
    assert shown["claim"]["freshness"]["kind"] == "unapproved"


# -- 8. the let-go reaches the person ------------------------------------------------------------


def test_the_gate_lets_go_through_a_last_block_that_asks_the_model_to_tell_the_person(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "orient")
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "tag:v9"), "t")
    (repo / "draft.txt").write_text("work\n")
    answers = [stop_hook(repo, active=n > 0)[0] for n in range(5)]
    assert [a.get("decision") for a in answers] == ["block", "block", "block", "block", None]
    assert answers[3]["reason"] == (
        f"git-continuity: you may stop now, but {tid} did not verify (you were told 3 times in a row), so what you "
        f'said was done is not. Begin your answer to the user with: "Not done: {tid} did not verify (git continuity '
        'check --closing shows why)." Then stop.'
    )
    assert answers[4] == {
        "systemMessage": f"git-continuity: the agent stopped although {tid} did not verify (it was told 3 times "
        "in a row); git continuity check --closing shows why."
    }


# -- 9. a malformed state holds the stop once and offers the agent no repair -----------------------


def test_a_malformed_state_holds_the_stop_once_and_names_nothing_the_agent_cannot_do(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "orient")
    tid = made_id(ok(repo, "thread", "add", "Release", "--check", "tag:v9"), "t")
    write_state(repo, {f".continuity/threads/{tid}.json": '{"id": 5}'})
    (repo / "draft.txt").write_text("work\n")
    held, _ = stop_hook(repo)
    reason = held["reason"]
    assert held["decision"] == "block"
    assert reason.startswith(
        "git-continuity: the closure gate cannot judge this stop: the state on refs/continuity/main is malformed, so "
        "nothing can be written on it (a journal entry, a thread parked) until it is repaired:\n"
        f"  .continuity/threads/{tid}.json: (top level): 'title' is missing\n"
    )
    assert reason.endswith("\nTell the user in your answer what happened to the state, then stop.")
    for never in ("journal add", "thread set", "park it", "update-ref", "doctor --fix"):
        assert never not in reason
    said = (
        "git-continuity: the agent stopped while the closure gate could not read the state: the state on "
        "refs/continuity/main is malformed, so nothing can be written on it (a journal entry, a thread parked) until "
        "it is repaired"
    )
    assert stop_hook(repo, active=True) == ({"systemMessage": said}, said + "\n")
    # A write an agent tries on it is refused with what to tell the user, not with plumbing.
    refused = cont(repo, "journal", "add", "why it is not done")
    assert refused.code == 2
    assert "update-ref" not in refused.err
    assert refused.err.endswith(
        "Nothing can be written on this state until it is repaired, and what to repair is the user's decision (git "
        "continuity doctor shows them the state and its repair): tell them; do not repair or rewrite the state "
        "yourself.\n"
    )
    # A person at a terminal is shown the repair.
    shown = at_a_terminal(repo, "journal", "add", "why it is not done")
    assert shown.code == 2
    assert shown.out.endswith(
        "The packet is repaired with git continuity edit. Any other file: put the state back on the\n"
        "last good change (git continuity log lists them): git update-ref refs/continuity/main <commit>\n"
    )


def test_a_cmd_check_verified_by_an_agent_where_it_is_not_approved_names_no_command_that_approves_it(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """Evidence is data every clone and agent reads: what a cmd: check not approved here left
    in it says a person must approve it, never a command an agent would run to approve it."""
    bare, laptop = remote_and_clone
    ok(laptop, "init")
    assert at_a_terminal(laptop, "trust", "allow", "true").code == 0
    tests = made_id(ok(laptop, "thread", "add", "Tests pass", "--check", "cmd:true"), "t")
    ok(laptop, "push")
    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    ok(desktop, "pull")

    verified = cont(desktop, "verify")  # an agent's call: no terminal
    assert verified.code == 1
    read = [verified.out, oriented(desktop), ok(desktop, "status"), cont(desktop, "check", "--closing").out]
    read += [ok(desktop, "thread", "show", tests), ok(desktop, "claim", "list", "--json")]
    assert [text for text in read if "trust allow" in text] == []
    (claim,) = json.loads(ok(desktop, "claim", "list", "--json"))["claims"]
    assert claim["state"] == "unknown"
    assert (
        claim["observed"] == "not approved on this machine (approving a command is a person's act, at their terminal)"
    )
