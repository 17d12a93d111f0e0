"""Every built-in handle scheme, verified and contradicted against real repositories.

Observed strings are asserted exactly: they are what a new session reads instead of prose.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import Ran, commit, git

Run = Callable[..., Ran]


def ok(run: Run, where: Path, *args: str) -> Ran:
    ran = run(where, *args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def add(run: Run, where: Path, text: str, handle: str) -> None:
    ok(run, where, "claim", "add", text, "--check", handle)


def claims(run: Run, where: Path, *extra: str) -> dict[str, tuple[str | None, str | None, str, str]]:
    """Each claim's (handle, written, state, observed) by its text, from claim list --json."""
    ran = run(where, "claim", "list", "--json", *extra)
    assert ran.code == 0, ran
    return {c["text"]: (c["handle"], c["written"], c["state"], c["observed"]) for c in json.loads(ran.out)["claims"]}


def verified_online(run: Run, where: Path) -> tuple[int, dict[str, tuple[str, str]]]:
    ran = run(where, "verify", "--online", "--json")
    assert ran.err == "", ran
    return ran.code, {c["text"]: (c["state"], c["observed"]) for c in json.loads(ran.out)["claims"]}


@pytest.fixture
def started(repo: Path, inproc: Run) -> Path:
    ok(inproc, repo, "init")
    return repo


# -- commit: --------------------------------------------------------------------------------


def test_commit(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    # A commit no ref holds: it exists until git prunes it.
    loose = git(started, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "never on a branch")
    add(inproc, started, "HEAD exists", "commit:HEAD")
    add(inproc, started, "the loose commit exists", f"commit:{loose[:10]}")
    assert claims(inproc, started) == {
        "HEAD exists": (f"commit:{head}", "commit:HEAD", "verified", f"commit {head[:7]} exists here"),
        "the loose commit exists": (
            f"commit:{loose}",
            f"commit:{loose[:10]}",
            "verified",
            f"commit {loose[:7]} exists here",
        ),
    }
    git(started, "prune", "--expire=now")
    assert claims(inproc, started)["the loose commit exists"][2:] == (
        "contradicted",
        f"commit {loose[:7]} does not exist in this clone",
    )


def test_a_tag_name_resolves_to_the_commit_it_names(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    git(started, "tag", "-a", "v1", "-m", "release 1")
    add(inproc, started, "v1 is a commit", "commit:v1")
    assert claims(inproc, started)["v1 is a commit"] == (
        f"commit:{head}",
        "commit:v1",
        "verified",
        f"commit {head[:7]} exists here",
    )


def test_head_does_not_drift(started: Path, inproc: Run) -> None:
    first = git(started, "rev-parse", "HEAD")
    add(inproc, started, "the fix is committed", "commit:HEAD")
    add(inproc, started, "main is at the fix", "ref:main=HEAD")
    add(inproc, started, "the fix is on main", "reachable:HEAD@main")
    add(inproc, started, "README is in the fix", "file:README@HEAD")
    add(inproc, started, "v1 is the fix", "tag:v1=HEAD")
    second = commit(started, "later", {"later.txt": "x\n"})
    git(started, "tag", "v1")  # at the later commit
    assert claims(inproc, started) == {
        "the fix is committed": (f"commit:{first}", "commit:HEAD", "verified", f"commit {first[:7]} exists here"),
        "main is at the fix": (
            f"ref:refs/heads/main={first}",
            "ref:main=HEAD",
            "contradicted",
            f"refs/heads/main is at {second[:7]}, not {first[:7]}",
        ),
        "the fix is on main": (
            f"reachable:{first}@refs/heads/main",
            "reachable:HEAD@main",
            "verified",
            f"refs/heads/main is at {second[:7]}, which contains {first[:7]}",
        ),
        "README is in the fix": (
            f"file:README@{first}",
            "file:README@HEAD",
            "verified",
            f"README exists in {first[:7]}",
        ),
        "v1 is the fix": (
            f"tag:v1={first}",
            "tag:v1=HEAD",
            "contradicted",
            f"tag v1 points at {second[:7]}, not {first[:7]}",
        ),
    }
    # The stored claim files name the ids, not HEAD.
    for name in git(started, "ls-tree", "--name-only", "refs/continuity/main:.continuity/claims").splitlines():
        data = json.loads(git(started, "show", f"refs/continuity/main:.continuity/claims/{name}"))
        assert "HEAD" not in data["handle"] and first in data["handle"]


# -- ref: -----------------------------------------------------------------------------------


def test_ref(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    git(started, "branch", "feature")
    git(started, "tag", "-a", "v1", "-m", "release 1")
    add(inproc, started, "main is here", "ref:main=HEAD")
    add(inproc, started, "feature is here", "ref:refs/heads/feature=main")
    add(inproc, started, "the annotated tag is here", "ref:v1=HEAD")
    add(inproc, started, "a ref made later is here", "ref:refs/heads/later=HEAD")
    assert claims(inproc, started) == {
        "main is here": (
            f"ref:refs/heads/main={head}",
            "ref:main=HEAD",
            "verified",
            f"refs/heads/main is at {head[:7]}",
        ),
        "feature is here": (
            f"ref:refs/heads/feature={head}",
            "ref:refs/heads/feature=main",
            "verified",
            f"refs/heads/feature is at {head[:7]}",
        ),
        "the annotated tag is here": (
            f"ref:refs/tags/v1={head}",
            "ref:v1=HEAD",
            "verified",
            f"refs/tags/v1 is at {head[:7]}",
        ),
        "a ref made later is here": (
            f"ref:refs/heads/later={head}",
            "ref:refs/heads/later=HEAD",
            "contradicted",
            "refs/heads/later does not exist here",
        ),
    }
    moved = commit(started, "moved on")
    git(started, "branch", "later")
    git(started, "branch", "-D", "feature")
    found = claims(inproc, started)
    assert found["main is here"][2:] == ("contradicted", f"refs/heads/main is at {moved[:7]}, not {head[:7]}")
    assert found["feature is here"][2:] == ("contradicted", "refs/heads/feature does not exist here")
    assert found["a ref made later is here"][2:] == (
        "contradicted",
        f"refs/heads/later is at {moved[:7]}, not {head[:7]}",
    )


# -- reachable: -----------------------------------------------------------------------------


def test_reachable(started: Path, inproc: Run) -> None:
    first = git(started, "rev-parse", "HEAD")
    git(started, "checkout", "-q", "-b", "side")
    side = commit(started, "side work")
    git(started, "checkout", "-q", "main")
    second = commit(started, "main work")
    add(inproc, started, "the first commit is on main", f"reachable:{first}@main")
    add(inproc, started, "main's tip is on main", "reachable:main@refs/heads/main")
    add(inproc, started, "the side work is on main", "reachable:side@main")
    add(inproc, started, "the side work is on side", "reachable:side@side")
    assert claims(inproc, started) == {
        "the first commit is on main": (
            f"reachable:{first}@refs/heads/main",
            f"reachable:{first}@main",
            "verified",
            f"refs/heads/main is at {second[:7]}, which contains {first[:7]}",
        ),
        "main's tip is on main": (
            f"reachable:{second}@refs/heads/main",
            "reachable:main@refs/heads/main",
            "verified",
            f"refs/heads/main is at {second[:7]}, which contains {second[:7]}",
        ),
        "the side work is on main": (
            f"reachable:{side}@refs/heads/main",
            "reachable:side@main",
            "contradicted",
            f"refs/heads/main is at {second[:7]}, which does not contain {side[:7]}",
        ),
        "the side work is on side": (
            f"reachable:{side}@refs/heads/side",
            "reachable:side@side",
            "verified",
            f"refs/heads/side is at {side[:7]}, which contains {side[:7]}",
        ),
    }
    git(started, "merge", "-q", "--no-edit", "side")
    merged = git(started, "rev-parse", "HEAD")
    git(started, "branch", "-q", "-D", "side")
    found = claims(inproc, started)
    assert found["the side work is on main"][2:] == (
        "verified",
        f"refs/heads/main is at {merged[:7]}, which contains {side[:7]}",
    )
    assert found["the side work is on side"][2:] == ("contradicted", "refs/heads/side does not exist here")


# -- pushed: offline, from the remote-tracking ref ------------------------------------------


def fetch_at(work: Path, when: datetime, *args: str) -> None:
    """git fetch, with the reflog entry (what "fetched ... ago" reads) stamped at ``when``."""
    env = {**os.environ, "GIT_COMMITTER_DATE": f"{int(when.timestamp())} +0000"}
    import subprocess

    done = subprocess.run(["git", "fetch", "-q", *args], cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_pushed_offline(remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run) -> None:
    bare, work = remote_and_clone
    ok(inproc, work, "init")
    base = git(work, "rev-parse", "HEAD")
    # A teammate pushes; we fetch it three hours ago (as the reflog says).
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(bare), str(mate))
    theirs = commit(mate, "theirs")
    git(mate, "push", "-q", "origin", "main")
    fetch_at(work, datetime.now(timezone.utc) - timedelta(hours=3, minutes=2), "origin")
    ours = commit(work, "ours, not pushed")
    add(inproc, work, "the base is pushed", "pushed:HEAD~1@origin/main")
    add(inproc, work, "their commit is pushed", f"pushed:{theirs}@origin/main")
    add(inproc, work, "our commit is pushed", "pushed:HEAD@origin/main")
    where = f"origin/main is at {theirs[:7]} (fetched 3 hours ago)"
    assert claims(inproc, work) == {
        "the base is pushed": (
            f"pushed:{base}@origin/main",
            "pushed:HEAD~1@origin/main",
            "verified",
            f"{where}, which contains {base[:7]}",
        ),
        "their commit is pushed": (
            f"pushed:{theirs}@origin/main",
            None,
            "verified",
            f"{where}, which contains {theirs[:7]}",
        ),
        "our commit is pushed": (
            f"pushed:{ours}@origin/main",
            "pushed:HEAD@origin/main",
            "contradicted",
            f"{where}, which does not contain {ours[:7]}",
        ),
    }
    # Offline means offline: a push the tracking ref has not seen changes nothing until a fetch.
    git(work, "merge", "-q", "--no-edit", "origin/main")
    merged = git(work, "rev-parse", "HEAD")
    git(work, "push", "-q", str(bare), "HEAD:main")
    assert claims(inproc, work)["our commit is pushed"][2] == "contradicted"
    fetch_at(work, datetime.now(timezone.utc) - timedelta(minutes=5), "origin")
    assert claims(inproc, work)["our commit is pushed"][2:] == (
        "verified",
        f"origin/main is at {merged[:7]} (fetched 5 minutes ago), which contains {ours[:7]}",
    )


def test_pushed_right_after_a_clone(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    _, work = remote_and_clone
    ok(inproc, work, "init")
    head = git(work, "rev-parse", "HEAD")
    add(inproc, work, "the clone's commit is pushed", "pushed:HEAD@origin/main")
    # git clone leaves the remote-tracking ref's reflog empty: its age is the clone's.
    assert claims(inproc, work)["the clone's commit is pushed"][2:] == (
        "verified",
        f"origin/main is at {head[:7]} (as cloned just now, not fetched since), which contains {head[:7]}",
    )


def test_pushed_to_a_remote_never_fetched_is_unknown(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    bare, work = remote_and_clone
    ok(inproc, work, "init")
    git(work, "remote", "add", "upstream", str(bare))
    add(inproc, work, "pushed upstream", "pushed:HEAD@upstream/main")
    add(inproc, work, "pushed to a new branch", "pushed:HEAD@origin/topic")
    found = claims(inproc, work)
    assert found["pushed upstream"][2:] == (
        "unknown",
        "upstream/main has never been fetched here: git fetch upstream, or verify --online",
    )
    # origin was seen (the clone) without topic: a fetch would not help, the remote lacks it.
    assert found["pushed to a new branch"][2:] == (
        "contradicted",
        "origin had no branch topic when this clone last heard from it (as cloned just now, not fetched"
        " since; its branches then: main); verify --online asks origin now",
    )
    git(work, "remote", "remove", "upstream")
    assert claims(inproc, work)["pushed upstream"][2:] == ("unknown", "upstream is not a configured remote here")


def test_pushed_to_a_remote_whose_name_has_a_slash(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    bare, work = remote_and_clone
    ok(inproc, work, "init")
    git(work, "remote", "add", "team/origin", str(bare))
    git(work, "fetch", "-q", "team/origin")
    head = git(work, "rev-parse", "HEAD")
    add(inproc, work, "pushed to the team", "pushed:HEAD@team/origin/main")
    handle, _, state, observed = claims(inproc, work)["pushed to the team"]
    assert (handle, state) == (f"pushed:{head}@team/origin/main", "verified")
    assert observed.startswith("team/origin/main is at ") and observed.endswith(f", which contains {head[:7]}")


# -- pushed: online, asking the remote itself -----------------------------------------------


def test_pushed_online(remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run) -> None:
    bare, work = remote_and_clone
    ok(inproc, work, "init")
    ours = commit(work, "ours")
    git(work, "remote", "add", "gone", str(tmp_path / "nothere.git"))
    add(inproc, work, "ours is pushed", "pushed:HEAD@origin/main")
    add(inproc, work, "ours is on a branch the remote lacks", "pushed:HEAD@origin/topic")
    add(inproc, work, "ours is on a remote that is gone", "pushed:HEAD@gone/main")
    base = git(work, "rev-parse", "origin/main")

    code, found = verified_online(inproc, work)
    assert code == 1
    assert found == {
        "ours is pushed": (
            "contradicted",
            f"origin/main is at {base[:7]} (asked just now), which does not contain {ours[:7]}",
        ),
        "ours is on a branch the remote lacks": (
            "contradicted",
            "origin has no branch topic (asked just now; its branches: main)",
        ),
        "ours is on a remote that is gone": (
            "unknown",
            f"could not ask gone: fatal: '{tmp_path / 'nothere.git'}' does not appear to be a git repository",
        ),
    }

    # A real push; the remote-tracking ref is not what is asked.
    git(work, "push", "-q", str(bare), "HEAD:main", "HEAD:topic")
    assert git(work, "rev-parse", "origin/main") == base
    code, found = verified_online(inproc, work)
    assert found["ours is pushed"] == (
        "verified",
        f"origin/main is at {ours[:7]} (asked just now), which contains {ours[:7]}",
    )
    assert found["ours is on a branch the remote lacks"] == (
        "verified",
        f"origin/topic is at {ours[:7]} (asked just now), which contains {ours[:7]}",
    )

    # The remote moved on to a commit this clone has never seen.
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(bare), str(mate))
    theirs = commit(mate, "theirs")
    git(mate, "push", "-q", "origin", "main")
    code, found = verified_online(inproc, work)
    assert found["ours is pushed"] == (
        "unknown",
        f"origin/main is at {theirs[:7]} (asked just now), a commit this clone lacks: git fetch origin",
    )
    git(work, "fetch", "-q", "origin")
    code, found = verified_online(inproc, work)
    assert found["ours is pushed"] == (
        "verified",
        f"origin/main is at {theirs[:7]} (asked just now), which contains {ours[:7]}",
    )

    # The evidence of the last online check is recorded, one file per claim per verify.
    evidence = git(work, "ls-tree", "-r", "--name-only", "refs/continuity/main:.continuity/evidence").splitlines()
    assert len(evidence) == 4 * 3


# -- tag: -----------------------------------------------------------------------------------


def test_tag(started: Path, inproc: Run) -> None:
    first = git(started, "rev-parse", "HEAD")
    git(started, "tag", "light")
    git(started, "tag", "-a", "annotated", "-m", "release")
    add(inproc, started, "the lightweight tag exists", "tag:light")
    add(inproc, started, "the annotated tag exists", "tag:annotated")
    add(inproc, started, "the lightweight tag is here", "tag:light=HEAD")
    add(inproc, started, "the annotated tag is here", "tag:annotated=main")
    add(inproc, started, "v2 is tagged", "tag:v2")
    assert claims(inproc, started) == {
        "the lightweight tag exists": ("tag:light", None, "verified", f"tag light points at {first[:7]}"),
        "the annotated tag exists": ("tag:annotated", None, "verified", f"tag annotated points at {first[:7]}"),
        "the lightweight tag is here": (
            f"tag:light={first}",
            "tag:light=HEAD",
            "verified",
            f"tag light points at {first[:7]}",
        ),
        "the annotated tag is here": (
            f"tag:annotated={first}",
            "tag:annotated=main",
            "verified",
            f"tag annotated points at {first[:7]}",
        ),
        "v2 is tagged": ("tag:v2", None, "contradicted", "tag v2 does not exist here"),
    }
    second = commit(started, "second")
    git(started, "tag", "-f", "-a", "annotated", "-m", "moved")
    git(started, "tag", "v2")
    git(started, "tag", "-d", "light")
    assert claims(inproc, started) == {
        "the lightweight tag exists": ("tag:light", None, "contradicted", "tag light does not exist here"),
        "the annotated tag exists": ("tag:annotated", None, "verified", f"tag annotated points at {second[:7]}"),
        "the lightweight tag is here": (
            f"tag:light={first}",
            "tag:light=HEAD",
            "contradicted",
            "tag light does not exist here",
        ),
        "the annotated tag is here": (
            f"tag:annotated={first}",
            "tag:annotated=main",
            "contradicted",
            f"tag annotated points at {second[:7]}, not {first[:7]}",
        ),
        "v2 is tagged": ("tag:v2", None, "verified", f"tag v2 points at {second[:7]}"),
    }


# -- file: ----------------------------------------------------------------------------------


def test_file(started: Path, inproc: Run) -> None:
    first = commit(started, "config", {"conf/app.toml": "[app]\n"})
    add(inproc, started, "README is here", "file:README")
    add(inproc, started, "the config folder is here", "file:./conf/../conf")
    add(inproc, started, "the config was committed", "file:conf/app.toml@HEAD")
    add(inproc, started, "the notes are here", "file:NOTES")
    add(inproc, started, "the notes were in the first commit", "file:NOTES@HEAD~1")
    assert claims(inproc, started) == {
        "README is here": ("file:README", None, "verified", f"README exists in HEAD ({first[:7]})"),
        "the config folder is here": (
            "file:conf",
            "file:./conf/../conf",
            "verified",
            f"conf exists in HEAD ({first[:7]})",
        ),
        "the config was committed": (
            f"file:conf/app.toml@{first}",
            "file:conf/app.toml@HEAD",
            "verified",
            f"conf/app.toml exists in {first[:7]}",
        ),
        "the notes are here": ("file:NOTES", None, "contradicted", f"NOTES is not in HEAD ({first[:7]})"),
        "the notes were in the first commit": (
            f"file:NOTES@{git(started, 'rev-parse', 'HEAD~1')}",
            "file:NOTES@HEAD~1",
            "contradicted",
            f"NOTES is not in {git(started, 'rev-parse', '--short=7', 'HEAD~1')}",
        ),
    }
    git(started, "rm", "-q", "-r", "conf")
    (started / "NOTES").write_text("notes\n")  # in the work tree only: not in HEAD's tree
    second = commit(started, "config removed")
    found = claims(inproc, started)
    assert found["the config folder is here"][2:] == ("contradicted", f"conf is not in HEAD ({second[:7]})")
    assert found["the config was committed"][2:] == ("verified", f"conf/app.toml exists in {first[:7]}")
    assert found["the notes are here"][2:] == ("contradicted", f"NOTES is not in HEAD ({second[:7]})")


# -- clean: ---------------------------------------------------------------------------------


def test_clean(started: Path, inproc: Run) -> None:
    (started / ".gitignore").write_text("*.log\n")
    commit(started, "ignore logs", {".gitignore": "*.log\n"})
    add(inproc, started, "the work tree is clean", "clean:")

    def state() -> tuple[str, str]:
        handle, written, *rest = claims(inproc, started)["the work tree is clean"]
        assert (handle, written) == ("clean:", None)
        return rest[0], rest[1]

    (started / "build.log").write_text("ignored\n")
    assert state() == ("verified", "the work tree has no uncommitted changes")
    (started / "new.txt").write_text("untracked\n")
    assert state() == ("contradicted", "1 uncommitted change: new.txt")
    (started / "new.txt").unlink()
    (started / "README").write_text("staged\n")
    git(started, "add", "README")
    assert state() == ("contradicted", "1 uncommitted change: README")
    git(started, "commit", "-q", "-m", "staged change committed")
    assert state() == ("verified", "the work tree has no uncommitted changes")
    (started / "README").write_text("edited, not staged\n")
    for name in ("a.txt", "b.txt", "c.txt"):
        (started / name).write_text("x\n")
    assert state() == ("contradicted", "4 uncommitted changes: README, a.txt, b.txt and 1 more")


# -- names as git checks them ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("handle", "message"),
    [
        ("tag:v 1", "tag name 'v 1' in 'tag:v 1' is not a valid ref name (it has a space); e.g. tag:v1.2"),
        ("tag:v1~", "tag name 'v1~' in 'tag:v1~' is not a valid ref name (it has '~'); e.g. tag:v1.2"),
        ("tag:.v1", "tag name '.v1' in 'tag:.v1' is not a valid ref name (a part starts with '.'); e.g. tag:v1.2"),
        (
            "pushed:HEAD@origin/main;touch x",
            "branch 'main;touch x' in 'pushed:HEAD@origin/main;touch x' is not a valid ref name (it has a space)",
        ),
        (
            "pushed:HEAD@origin/a..b",
            "branch 'a..b' in 'pushed:HEAD@origin/a..b' is not a valid ref name (it has '..')",
        ),
        (
            "pushed:HEAD@origin",
            "'pushed:HEAD@origin' names the remote origin but no branch; the form is"
            " pushed:<rev>@<remote>/<branch>, e.g. pushed:HEAD@origin/main",
        ),
        (
            "Pushed:HEAD@origin/main",
            "handle 'Pushed:HEAD@origin/main' is not of the form scheme:address, e.g. commit:HEAD or tag:v1.2\n"
            "(schemes are lower case: did you mean pushed:HEAD@origin/main?)",
        ),
    ],
)
def test_names_in_handles_are_checked_as_git_checks_them(
    remote_and_clone: tuple[Path, Path], inproc: Run, handle: str, message: str
) -> None:
    _, work = remote_and_clone
    ok(inproc, work, "init")
    state = git(work, "rev-parse", "refs/continuity/main")
    ran = inproc(work, "claim", "add", "x", "--check", handle)
    assert (ran.code, ran.out, ran.err) == (2, "", f"git-continuity: error: {message}\n")
    assert git(work, "rev-parse", "refs/continuity/main") == state


def test_the_work_tree_a_command_ran_on_is_read_while_a_file_in_it_keeps_changing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tree a `cmd:` check records (the work tree as it is) is read again where a file
    changed as it was read: a file written while `verify` ran (an agent's tool, a log, a
    probe of another verify) made the check unknown with libgit2's "failed to read file into
    stream". That file is read again at once, not the whole work tree: a third of the reads
    of a file written every millisecond meet a write, and ten whole reads in a row did, under
    load, once in a few hundred."""
    import threading
    import time

    from git_continuity import repo as git
    from git_continuity.repo import worktree

    counted = []
    changed_paths = worktree._changed_paths

    def counting(repo: git.Repo) -> object:
        counted.append(repo)
        return changed_paths(repo)

    monkeypatch.setattr(worktree, "_changed_paths", counting)

    subprocess.run(["git", "init", "-q", str(tmp_path / "w")], check=True)
    repo = git.open_repo(tmp_path / "w")
    log = tmp_path / "w" / "ran.txt"
    stop = threading.Event()

    def churn() -> None:
        n = 0
        while not stop.is_set():
            with log.open("a") as out:
                out.write(f"{n}\n" * 50)
            n += 1
            if n % 200 == 0:
                log.write_text("")
            time.sleep(0.0005)  # a busy writer, not one that never lets go of the file

    writer = threading.Thread(target=churn)
    writer.start()
    try:
        failures = []
        for _ in range(300):
            try:
                worktree.worktree_tree(repo)
            except Exception as error:  # what the verifier turns into "unknown"
                failures.append(repr(error))
    finally:
        stop.set()
        writer.join()
    assert failures == []
    assert len(counted) == 300  # git status once for each: no whole work tree read again


def test_a_file_taken_as_one_read_finds_it_is_the_blob_and_mode_git_add_stages(repo: Path) -> None:
    """A file that kept changing as libgit2 read it is taken as one read finds it: the blob and
    the mode `git add` stages for the same bytes, end-of-line settings and executable bit
    included."""
    from git_continuity import repo as git_repo
    from git_continuity.repo import worktree

    (repo / ".gitattributes").write_text("*.txt text eol=lf\n")
    (repo / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "run.sh").write_text("#!/bin/sh\necho ran\n")
    (repo / "run.sh").chmod(0o755)
    at = git_repo.open_repo(repo)
    for path in ("crlf.txt", "run.sh"):
        entry = worktree._as_read_once(at, path)
        git(repo, "add", path)
        assert f"{entry.mode:o} {entry.id} 0\t{path}" == git(repo, "ls-files", "-s", path)


def as_git_add_all_writes(work: Path, tmp_path: Path) -> str:
    """The tree `git add -A` then `git write-tree` make of the work tree, on a copy of its index
    (its time kept: a copy made now would take every file written this second as unchanged)."""
    import shutil

    shutil.copy2(work / ".git" / "index", tmp_path / "index")
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    subprocess.run(["git", "add", "-A"], cwd=work, env=env, check=True, capture_output=True)
    return subprocess.run(
        ["git", "write-tree"], cwd=work, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_the_work_tree_as_it_is_is_the_tree_git_add_all_writes(tmp_path: Path) -> None:
    """What a session's start and a `cmd:` check record of the work tree, and what the Stop
    gate compares, is the tree `git add -A` then `git write-tree` make of it: changed, new,
    deleted and ignored files, a mode changed, a symlink, a file a glob would match, and a
    repository cloned inside it (taken at its HEAD commit, where it made the read fail)."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = tmp_path / "w"
    git(tmp_path, "init", "-q", str(work))
    files = {"a.txt": "a\n", "sub/b.txt": "b\n", "run.sh": "#!/bin/sh\n", "a*": "star\n", ".gitignore": "*.log\n"}
    commit(work, "one", files)
    (work / "a.txt").write_text("changed\n")
    (work / "deep" / "er").mkdir(parents=True)
    (work / "deep" / "er" / "new.txt").write_text("new\n")
    (work / "noise.log").write_text("ignored\n")
    (work / "sub" / "b.txt").unlink()
    (work / "a*").unlink()
    (work / "run.sh").chmod(0o755)
    (work / "link").symlink_to("a.txt")
    inner = work / "vendor" / "lib"
    git(tmp_path, "init", "-q", str(inner))
    commit(inner, "theirs", {"lib.c": "int x;\n"})

    expected = as_git_add_all_writes(work, tmp_path)
    index = (work / ".git" / "index").read_bytes()
    assert worktree.worktree_tree(opened.open_repo(work)) == expected
    assert (work / ".git" / "index").read_bytes() == index  # the index on disk is never written


def in_conflict(work: Path, name: str) -> Path:
    """A new repository at ``work`` in the middle of a merge whose one file, ``name``, conflicts."""
    git(work.parent, "init", "-q", "-b", "main", str(work))
    commit(work, "one", {name: "base\n"})
    git(work, "checkout", "-q", "-b", "side")
    commit(work, "side", {name: "side\n"})
    git(work, "checkout", "-q", "main")
    commit(work, "main", {name: "main\n"})
    assert subprocess.run(["git", "merge", "-q", "side"], cwd=work, capture_output=True).returncode == 1
    return work


def test_the_work_tree_as_it_is_holds_a_conflict_turned_folder_and_a_clone_cut_short(tmp_path: Path) -> None:
    """A file in conflict replaced by a folder, and a folder whose .git is no repository (a
    clone cut short), are read as `git add -A` reads them: the folder's files."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = in_conflict(tmp_path / "w", "a")
    (work / "a").unlink()
    (work / "a").mkdir()
    (work / "a" / "f").write_text("now a folder\n")
    (work / "cut" / ".git").mkdir(parents=True)
    (work / "cut" / "kept.c").write_text("int x;\n")

    expected = as_git_add_all_writes(work, tmp_path)
    assert worktree.worktree_tree(opened.open_repo(work)) == expected


def test_the_work_tree_as_it_is_of_a_sparse_checkout_keeps_the_files_outside_its_set(tmp_path: Path) -> None:
    """A sparse checkout's files outside its set are not in the work tree, and not gone: the
    tree is what `git add -A` then `git write-tree` make of it, as git status sees it (libgit2,
    which knows no sparse checkout, left them out), whatever index a commit in progress names."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = tmp_path / "w"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "one", {"docs/guide.md": "read me\n", "src/main.c": "int main;\n", "top.txt": "top\n"})
    git(work, "sparse-checkout", "set", "--cone", "src")
    assert not (work / "docs").exists()
    (work / "src" / "main.c").write_text("int main(void);\n")
    (work / "src" / "new.c").write_text("int new;\n")

    expected = as_git_add_all_writes(work, tmp_path)
    listed = git(work, "ls-tree", "-r", "--name-only", expected).split()
    assert listed == ["docs/guide.md", "src/main.c", "src/new.c", "top.txt"]
    assert worktree.worktree_tree(opened.open_repo(work)) == expected

    # A commit in progress names an index of its own (commit -a): git status is not asked of it.
    os.environ["GIT_INDEX_FILE"] = str(tmp_path / "index")
    try:
        assert worktree.worktree_tree(opened.open_repo(work)) == expected
    finally:
        del os.environ["GIT_INDEX_FILE"]


def test_the_work_tree_as_it_is_holds_what_was_staged_and_then_changed(tmp_path: Path) -> None:
    """Staged changes the work tree then changed again are read as `git add -A` reads them: a
    file added with intent to add, one added then deleted, one removed from the index but kept,
    one staged as renamed, one staged then edited, a file turned into a link."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = tmp_path / "w"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "one", {"kept.txt": "k\n", "old.txt": "o\n", "edit.txt": "e\n", "turn.txt": "t\n"})
    (work / "intent.txt").write_text("i\n")
    git(work, "add", "-N", "intent.txt")
    (work / "brief.txt").write_text("b\n")
    git(work, "add", "brief.txt")
    (work / "brief.txt").unlink()
    git(work, "rm", "-q", "--cached", "kept.txt")
    git(work, "mv", "old.txt", "new.txt")
    (work / "edit.txt").write_text("staged\n")
    git(work, "add", "edit.txt")
    (work / "edit.txt").write_text("then edited\n")
    (work / "turn.txt").unlink()
    (work / "turn.txt").symlink_to("kept.txt")

    expected = as_git_add_all_writes(work, tmp_path)
    index = (work / ".git" / "index").read_bytes()
    assert worktree.worktree_tree(opened.open_repo(work)) == expected
    assert (work / ".git" / "index").read_bytes() == index


def test_the_work_tree_as_it_is_holds_a_submodules_new_commit_its_settings_hide(tmp_path: Path) -> None:
    """A submodule whose new commit the user's settings hide from git status (`ignore = all`)
    is still taken at that commit, as `git add -A` takes it: from git status's own count too,
    which a brief makes and a new session's start reuses."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    upstream, work = tmp_path / "up", tmp_path / "w"
    git(tmp_path, "init", "-q", str(upstream))
    commit(upstream, "one", {"u": "u\n"})
    commit(upstream, "two", {"u2": "2\n"})
    git(tmp_path, "init", "-q", str(work))
    commit(work, "one", {"a": "a\n"})
    git(work, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(upstream), "sm")
    git(work, "commit", "-q", "-m", "sm")
    git(work, "config", "submodule.sm.ignore", "all")
    git(work / "sm", "checkout", "-q", "HEAD~1")

    expected = as_git_add_all_writes(work, tmp_path)
    assert git(work, "rev-parse", f"{expected}:sm") == git(work / "sm", "rev-parse", "HEAD")
    repo = opened.open_repo(work)
    assert worktree.worktree_tree(repo) == expected
    counted = worktree.changes(repo)
    assert counted == worktree.CLEAN  # what git status says, the settings heeded
    assert worktree.worktree_tree(repo, counted) == expected


def test_a_work_tree_git_status_finds_clean_is_heads_tree_read_without_the_index(tmp_path: Path) -> None:
    """Where a brief's count (git status) found nothing staged, changed or new, the work tree is
    HEAD's tree: the index is not read (one libgit2 cannot read, here a file that is no index,
    is not asked about), and the tree is the one `git add -A` writes. On an unborn branch, or
    with a count of nothing, the index is read as ever."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = tmp_path / "w"
    git(tmp_path, "init", "-q", str(work))
    unborn = opened.open_repo(work)
    assert worktree.worktree_tree(unborn, worktree.CLEAN) == git(work, "write-tree")  # the empty tree
    commit(work, "one", {"a": "a\n", "d/b": "b\n"})
    expected = as_git_add_all_writes(work, tmp_path)
    assert expected == git(work, "rev-parse", "HEAD^{tree}")
    assert worktree.changes(opened.open_repo(work)) == worktree.CLEAN

    # A commit git replace stands in for HEAD: git status compared with its tree, libgit2 reads HEAD's.
    other = git(work, "commit-tree", git(work, "write-tree"), "-m", "in its place")
    commit(work, "two", {"a": "changed\n"})
    git(work, "replace", "HEAD", other)
    git(work, "reset", "-q", "--hard", "HEAD")
    replaced = opened.open_repo(work)
    assert worktree.changes(replaced) == worktree.CLEAN
    assert worktree.worktree_tree(replaced, worktree.CLEAN) == as_git_add_all_writes(work, tmp_path) == expected
    git(work, "replace", "-d", "HEAD")
    git(work, "reset", "-q", "--hard", "HEAD")
    expected = git(work, "rev-parse", "HEAD^{tree}")

    (work / ".git" / "index").write_bytes(b"not an index")
    repo = opened.open_repo(work)
    assert worktree.worktree_tree(repo, worktree.CLEAN) == expected
    with pytest.raises(OSError, match="index file smaller than expected"):  # where the index is read
        worktree.worktree_tree(repo)


def test_the_work_tree_as_it_is_holds_a_conflict_turned_repository(tmp_path: Path) -> None:
    """A file in conflict replaced by a repository of its own (which git status does not list)
    is taken at that repository's HEAD commit, as `git add -A` takes it."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = in_conflict(tmp_path / "w", "f")
    (work / "f").unlink()
    git(work, "init", "-q", "f")
    commit(work / "f", "inner", {"x": "x\n"})

    expected = as_git_add_all_writes(work, tmp_path)
    assert git(work, "rev-parse", f"{expected}:f") == git(work / "f", "rev-parse", "HEAD")
    assert worktree.worktree_tree(opened.open_repo(work)) == expected


def test_the_work_tree_as_it_is_read_with_a_relative_git_dir_is_of_that_repository(tmp_path: Path) -> None:
    """GIT_DIR and GIT_WORK_TREE given relative to a folder below the work tree's top (inside a
    repository nested in another): git status is asked of that repository, not of the one a
    relative path names from the top, for the tree and for the brief's count of changes."""
    outer = tmp_path / "outer"
    git(tmp_path, "init", "-q", str(outer))
    commit(outer, "outer", {"p": "p\n"})
    work = outer / "inner"
    git(outer, "init", "-q", "inner")
    commit(work, "inner", {"o": "o\n", "sub/keep": "k\n"})
    (work / "o").write_text("changed\n")
    (work / "sub" / "new").write_text("new\n")

    expected = as_git_add_all_writes(work, tmp_path)
    code = "from git_continuity import repo\nfrom git_continuity.repo import worktree\nopened = repo.open_repo()\n"
    code += "print(worktree.worktree_tree(opened))\nprint(worktree.changes(opened))"
    env = {**os.environ, "GIT_DIR": "../.git", "GIT_WORK_TREE": ".."}
    read = subprocess.run([sys.executable, "-c", code], cwd=work / "sub", env=env, capture_output=True, text=True)
    counted = "Changes(staged=[], unstaged=['o'], untracked=['sub/new'], conflicted=[])"
    assert (read.returncode, read.stdout) == (0, f"{expected}\n{counted}\n")


def test_a_folder_no_index_may_hold_is_left_out_of_the_work_tree_and_breaks_no_brief(tmp_path: Path) -> None:
    """A folder named .GIT (from an archive made on another system), whose files git add -A
    cannot take, is left out of the work tree as it is: the brief is given, no traceback."""
    from git_continuity import repo as opened
    from git_continuity.repo import worktree

    work = tmp_path / "w"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "one", {"a": "a\n"})
    (work / ".GIT").mkdir()
    (work / ".GIT" / "x").write_text("x\n")
    assert git(work, "status", "--porcelain", "--untracked-files=all") == "?? .GIT/x"
    assert worktree.worktree_tree(opened.open_repo(work)) == git(work, "rev-parse", "HEAD^{tree}")
    assert subprocess.run(["git", "continuity", "init"], cwd=work, capture_output=True).returncode == 0
    brief = subprocess.run(["git", "continuity", "orient"], cwd=work, capture_output=True, text=True)
    assert (brief.returncode, "Traceback" in brief.stderr) == (0, False)
    assert brief.stdout.startswith("# git-continuity brief: stream main\n")
