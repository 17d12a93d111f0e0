"""Handles read as git reads what they name: paths from the current folder, '@' in paths,
branches a remote lacks, what a failed transport said, and how old a remote-tracking ref is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, commit, git

Run = Callable[..., Ran]


def ok(run: Run, where: Path, *args: str) -> Ran:
    ran = run(where, *args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def recorded(run: Run, where: Path, handle: str) -> tuple[str, str | None, str, str]:
    """(handle stored, as written, state, observed) of a claim added with ``handle``."""
    ok(run, where, "claim", "add", handle, "--check", handle)
    found = json.loads(ok(run, where, "claim", "list", "--json").out)["claims"]
    c = next(c for c in found if c["text"] == handle)
    return c["handle"], c["written"], c["state"], c["observed"]


def refused(run: Run, where: Path, handle: str) -> str:
    state = git(where, "rev-parse", "refs/continuity/main")
    ran = run(where, "claim", "add", "x", "--check", handle)
    assert (ran.code, ran.out) == (2, ""), ran
    assert git(where, "rev-parse", "refs/continuity/main") == state
    return ran.err.removeprefix("git-continuity: error: ").removesuffix("\n")


@pytest.fixture
def started(repo: Path, inproc: Run) -> Path:
    commit(repo, "code", {"calc.py": "1\n", "src/app.py": "2\n", "pkgs/@scope/a.js": "3\n", "me@home.txt": "4\n"})
    ok(inproc, repo, "init")
    return repo


# -- file: paths from the current folder ------------------------------------------------------


def test_a_path_is_read_from_the_current_folder_and_stored_from_the_top(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    src = started / "src"
    assert recorded(inproc, src, "file:../calc.py") == (
        "file:calc.py",
        "file:../calc.py",
        "verified",
        f"calc.py exists in HEAD ({head[:7]})",
    )
    assert recorded(inproc, src, "file:app.py@HEAD") == (
        f"file:src/app.py@{head}",
        "file:app.py@HEAD",
        "verified",
        f"src/app.py exists in {head[:7]}",
    )
    # :/ is git's spelling of the top, from anywhere.
    assert recorded(inproc, src, "file::/README")[:2] == ("file:README", "file::/README")
    # The stored path is the same from every folder and every clone: read from the top, it holds.
    assert recorded(inproc, started, "file:src/app.py")[0] == "file:src/app.py"
    assert refused(inproc, src, "file:../../calc.py") == (
        "path '../../calc.py' in 'file:../../calc.py' escapes the repository (read from src/, as git"
        " reads paths); give a path inside it"
    )
    assert refused(inproc, started, "file:../calc.py") == (
        "path '../calc.py' in 'file:../calc.py' escapes the repository; give a path inside it"
    )


# -- file: '@' in paths ---------------------------------------------------------------------


def test_at_signs_in_paths(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    here = f"HEAD ({head[:7]})"
    assert recorded(inproc, started, "file:pkgs/@scope/a.js") == (
        "file:pkgs/@scope/a.js",
        None,
        "verified",
        f"pkgs/@scope/a.js exists in {here}",
    )
    assert recorded(inproc, started, "file:me@home.txt") == (
        "file:me@home.txt",
        None,
        "verified",
        f"me@home.txt exists in {here}",
    )
    # Not there yet, and what follows the @ is no revision: a path all the same.
    assert recorded(inproc, started, "file:pkgs/@other/b.js")[:3] == ("file:pkgs/@other/b.js", None, "contradicted")
    # A revision after the last @ still is one...
    assert recorded(inproc, started, "file:me@home.txt@HEAD") == (
        f"file:me@home.txt@{head}",
        "file:me@home.txt@HEAD",
        "verified",
        f"me@home.txt exists in {head[:7]}",
    )
    assert recorded(inproc, started, "file:calc.py@main")[:3] == (
        f"file:calc.py@{head}",
        "file:calc.py@main",
        "verified",
    )
    # ...unless a trailing @ says there is none: the file notes@main, in HEAD now.
    assert recorded(inproc, started, "file:notes@main@") == (
        "file:notes@main",
        "file:notes@main@",
        "contradicted",
        f"notes@main is not in {here}",
    )
    # A file that is here, then a revision that is not: a typo, said as such.
    assert refused(inproc, started, "file:calc.py@HEAD~9") == (
        "revision 'HEAD~9' in 'file:calc.py@HEAD~9' does not resolve to a commit here; for a path that"
        " holds '@', end the handle with '@': file:calc.py@HEAD~9@"
    )


def test_a_path_that_looks_like_a_path_at_a_commit_reads_back_as_a_path(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    name = f"build@{'a' * 40}"
    commit(started, "odd name", {name: "x\n"})
    now = git(started, "rev-parse", "HEAD")
    handle, written, state, observed = recorded(inproc, started, f"file:{name}")
    # Stored with a trailing @, so that reading it back does not take the id for a revision.
    assert (handle, written, state, observed) == (
        f"file:{name}@",
        f"file:{name}",
        "verified",
        f"{name} exists in HEAD ({now[:7]})",
    )
    assert head != now


# -- pushed: a branch the remote lacks ------------------------------------------------------


def test_a_branch_the_remote_lacks_is_said_so(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    bare, work = remote_and_clone
    ok(inproc, work, "init")
    head = git(work, "rev-parse", "HEAD")
    assert recorded(inproc, work, "pushed:HEAD@origin/nosuchbranch") == (
        f"pushed:{head}@origin/nosuchbranch",
        "pushed:HEAD@origin/nosuchbranch",
        "contradicted",
        "origin had no branch nosuchbranch when this clone last heard from it (as cloned just now, not"
        " fetched since; its"
        " branches then: main); verify --online asks origin now",
    )
    ran = inproc(work, "verify", "--online", "--json")
    assert ran.code == 1
    assert [c["observed"] for c in json.loads(ran.out)["claims"]] == [
        "origin has no branch nosuchbranch (asked just now; its branches: main)"
    ]
    # Never fetched at all: a fetch is what helps.
    git(work, "remote", "add", "upstream", str(bare))
    assert recorded(inproc, work, "pushed:HEAD@upstream/main")[2:] == (
        "unknown",
        "upstream/main has never been fetched here: git fetch upstream, or verify --online",
    )


# -- pushed: how old the remote-tracking ref is -----------------------------------------------


def test_right_after_a_push_nothing_is_said_to_be_fetched(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    _, work = remote_and_clone
    ok(inproc, work, "init")
    ours = commit(work, "ours")
    git(work, "push", "-q", "origin", "main")
    assert recorded(inproc, work, "pushed:HEAD@origin/main")[2:] == (
        "verified",
        f"origin/main is at {ours[:7]} (as pushed from here just now), which contains {ours[:7]}",
    )
    git(work, "update-ref", "-d", "refs/remotes/origin/main")
    git(work, "fetch", "-q", "origin")
    assert recorded(inproc, work, "pushed:HEAD~0@origin/main")[3] == (
        f"origin/main is at {ours[:7]} (fetched just now), which contains {ours[:7]}"
    )


# -- what a failed transport said --------------------------------------------------------------


def test_a_transport_failure_quotes_its_cause(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    _, work = remote_and_clone
    ok(inproc, work, "init")
    git(work, "remote", "add", "far", "ssh://nohost.invalid/x.git")
    ok(inproc, work, "claim", "add", "pushed far", "--check", "pushed:HEAD@far/main")
    ran = inproc(work, "verify", "--online", "--json")
    said = json.loads(ran.out)["claims"][0]["observed"]
    assert said == (
        "could not ask far: fatal: Could not read from remote repository."
        " (ssh: Could not resolve hostname nohost.invalid: Name or service not known)"
    )


# -- forms named ------------------------------------------------------------------------------


def test_a_value_not_in_its_form_is_told_the_form(
    started: Path, inproc: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (started / ".continuity.yaml").write_text("cmd_timeout: forever\n")
    ran = inproc(started, "check", "--closing")  # a gate refuses; status reads on (test_policy_reads)
    assert (ran.code, ran.err) == (
        2,
        f"git-continuity: error: {started / '.continuity.yaml'} line 1: cmd_timeout: 'forever' is not in the"
        " expected form (a whole number and a unit, s, m, h or d: 90s, 10m, 8h, 2d; at most 99999)\n",
    )
    (started / ".continuity.yaml").unlink()
    ok(inproc, started, "blocker", "add", "waiting on the vendor")
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/id: b-[a-z0-9]*/id: bad/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("GIT_EDITOR", str(editor))
    ran = inproc(started, "edit")
    kept = started / ".git" / "continuity" / "edit" / "main.packet.yaml"
    line = next(n for n, text in enumerate(kept.read_text().splitlines(), 1) if "id: bad" in text)
    assert ran.code == 2
    assert ran.err.splitlines()[0] == (
        f"git-continuity: error: {kept} line {line}: blockers.0.id: 'bad' is not in the expected form (an id:"
        " a letter, '-' and 6 of 23456789abcdefghjkmnpqrstuvwxyz, e.g. b-k7m2qx)"
    )
