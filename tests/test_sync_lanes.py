"""Per-clone lanes (#25): when other clones moved a stream's shared ref first, a clone's push
goes to its own lane on the remote, which only it writes; every fetch folds every lane in, so
the next sync of any clone carries it into the shared ref. Real git servers on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Run, commit, git
from gitserver import Server, git_daemon, http_backend, set_policy
from test_sync_transport import noted


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("daemon")
    (root / "repos").mkdir()
    with git_daemon(root / "repos", root / "home") as running:
        yield running


@pytest.fixture(scope="module")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("http")
    (root / "repos").mkdir()
    with http_backend(root / "repos", root / "home") as running:
        yield running


def seeded(tmp_path: Path, server: Server, name: str, *clones: str) -> tuple[Path, str, list[Path]]:
    """A bare repository that never takes a forced update, one commit on main, and clones."""
    bare, url = server.bare(name)
    git(bare, "config", "receive.denyNonFastForwards", "true")  # a force push would be refused
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    commit(seed, "first", {"README": "hello\n"})
    git(seed, "push", "-q", str(bare), "main")
    for clone in clones:
        git(tmp_path, "clone", "-q", url, str(tmp_path / clone))
    return bare, url, [tmp_path / c for c in clones]


def clone_id(where: Path) -> str:
    return str(json.loads((where / ".git" / "continuity" / "clone.json").read_text())["id"])


def journal(inproc: Run, where: Path) -> list[str]:
    return sorted(e["text"] for e in json.loads(inproc(where, "journal", "--all", "--json").out)["entries"])


def lane_line(lane: str, tip: str) -> str:
    said = (
        f"  main: sent to this clone's lane ({tip[:7]}): others pushed first\n"
        f"    {lane}\n    (any clone's next sync folds it in)\n"
    )
    assert max(len(line) for line in said.splitlines()) < 80, said
    return said


def test_a_clone_that_loses_the_race_in_the_middle_of_its_sync_lands_on_its_lane(
    daemon: Server, tmp_path: Path, inproc: Run
) -> None:
    bare, url, (a, b, c) = seeded(tmp_path, daemon, "race", "a", "b", "c")
    assert inproc(a, "init").code == 0
    assert inproc(a, "push").code == 0
    for where in (b, c):
        assert inproc(where, "pull").code == 0
    assert inproc(a, "journal", "add", "a's").code == 0
    assert inproc(b, "journal", "add", "b's").code == 0
    # The server holds the first push it is given until the test lets it go; b's whole sync
    # lands meanwhile, between a's fetch and a's push.
    gate, held = tmp_path / "gate", tmp_path / "held"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        f"#!/bin/sh\ncat >/dev/null\nif [ -e {gate} ]; then rm {gate}; touch {held}\n"
        f"  while [ -e {held} ]; do sleep 0.05; done\nfi\n"
    )
    hook.chmod(0o755)
    gate.write_text("")
    racing = subprocess.Popen(
        [sys.executable, "-m", "git_continuity", "sync"],
        cwd=a,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not held.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert held.exists()
    assert inproc(b, "sync").code == 0
    held.unlink()
    out, err = racing.communicate(timeout=60)
    tip = git(a, "rev-parse", "refs/continuity/main")
    lane = f"refs/continuity-lanes/{clone_id(a)}/main"
    assert (racing.returncode, err) == (0, "")
    assert out == ("From origin:\n  main: up to date (1 change here to push)\nTo origin:\n" + lane_line(lane, tip))
    assert git(a, "ls-remote", url, lane).split()[0] == tip
    # a's change has reached the remote, on its lane: status counts nothing waiting.
    assert [b["changes"] for b in json.loads(inproc(a, "status", "--json").out)["outbox"]] == [0]
    # A fresh clone takes in what is only on a lane.
    git(tmp_path, "clone", "-q", url, str(tmp_path / "fresh"))
    fresh = tmp_path / "fresh"
    assert inproc(fresh, "pull").code == 0
    assert journal(inproc, fresh) == ["a's", "b's"]
    # A third clone's sync holds both entries and puts them on the shared ref.
    synced = inproc(c, "sync", "--json")
    assert (synced.code, json.loads(synced.out)["landed"]) == (0, "shared")
    assert journal(inproc, c) == ["a's", "b's"]
    shared = git(c, "ls-remote", url, "refs/continuity/main").split()[0]
    assert shared == git(c, "rev-parse", "refs/continuity/main")
    # a's next sync finds its lane in the shared ref and deletes it; nothing was ever forced
    # (the remote refuses a non-fast-forward).
    again = inproc(a, "sync")
    assert (again.code, again.err) == (0, "")
    assert again.out == (
        f"From origin:\n  main: fast-forward {tip[:7]}..{shared[:7]}\n"
        "To origin:\n  main: lane removed: the shared ref holds it\n"
    )
    assert git(a, "ls-remote", url, "refs/continuity-lanes/*") == ""
    assert journal(inproc, a) == ["a's", "b's"]


def test_a_fetch_that_brings_nothing_new_says_so(daemon: Server, tmp_path: Path, inproc: Run) -> None:
    """The remote holds only this clone's lane, which this clone has: nothing is taken in,
    and the report says so (not an empty line); the push creates the shared ref and removes
    the lane, and says both."""
    _, url, (a,) = seeded(tmp_path, daemon, "quiet", "a")
    assert inproc(a, "init").code == 0
    assert inproc(a, "push").code == 0
    lane = f"refs/continuity-lanes/{clone_id(a)}/main"
    git(a, "push", "-q", "origin", f"refs/continuity/main:{lane}", ":refs/continuity/main")
    tip = git(a, "rev-parse", "refs/continuity/main")
    synced = inproc(a, "sync")
    assert (synced.code, synced.err) == (0, "")
    assert synced.out == (
        "From origin:\n  nothing new\n"
        f"To origin:\n  main: created on origin ({tip[:7]})\n  main: lane removed: the shared ref holds it\n"
    )
    assert git(a, "ls-remote", url, "refs/continuity*").split() == [tip, "refs/continuity/main"]


def test_lanes_under_a_sandbox_proxys_branch_prefix(http: Server, tmp_path: Path, inproc: Run) -> None:
    bare, url, (a, b) = seeded(tmp_path, http, "sandbox", "a", "b")
    set_policy(bare, "claude-branches-only")
    for where in (a, b):
        git(where, "config", "continuity.transport", "branches")
        git(where, "config", "continuity.branchPrefix", "claude/continuity-")
    assert inproc(a, "init", "--local").code == 0
    assert inproc(a, "push").code == 0
    assert inproc(b, "pull").code == 0
    assert inproc(a, "journal", "add", "a's").code == 0
    assert inproc(b, "journal", "add", "b's").code == 0
    assert inproc(b, "push").code == 0
    # a pushes from what it last fetched: the shared branch refuses it, its lane takes it.
    raced = inproc(a, "push")
    tip = git(a, "rev-parse", "refs/continuity/main")
    lane = f"refs/heads/claude/continuity-lanes/{clone_id(a)}/main"
    assert (raced.code, raced.err) == (0, "")
    assert raced.out == "To origin:\n" + lane_line(lane, tip)
    git(tmp_path, "clone", "-q", url, str(tmp_path / "fresh"))
    fresh = tmp_path / "fresh"
    git(fresh, "config", "continuity.transport", "branches")
    git(fresh, "config", "continuity.branchPrefix", "claude/continuity-")
    assert inproc(fresh, "sync").code == 0
    assert journal(inproc, fresh) == ["a's", "b's"]
    assert inproc(a, "sync").code == 0  # the shared branch holds the lane now: a deletes it
    heads = git(a, "ls-remote", url, "refs/heads/*").splitlines()
    assert sorted(line.split("\t")[1] for line in heads) == ["refs/heads/claude/continuity-main", "refs/heads/main"]
    assert git(a, "branch", "--list") == "* main"


def test_a_remote_that_keeps_deletions_keeps_the_lane_and_says_nothing_bad(
    daemon: Server, tmp_path: Path, inproc: Run
) -> None:
    bare, url, (a, b) = seeded(tmp_path, daemon, "keeps", "a", "b")
    # A hook that takes no deletion, all or nothing: one refused ref refuses the whole push.
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\nwhile read old new ref; do\n  case $new in 0000000000000000000000000000000000000000)"
        ' echo "deleting $ref is not allowed"; exit 1 ;; esac\ndone\n'
    )
    hook.chmod(0o755)
    assert inproc(a, "init").code == 0
    assert inproc(a, "push").code == 0
    assert inproc(b, "pull").code == 0
    assert inproc(a, "journal", "add", "a's").code == 0
    assert inproc(b, "journal", "add", "b's").code == 0
    assert inproc(b, "push").code == 0
    assert json.loads(inproc(a, "push", "--json").out)["landed"] == "lane"
    assert inproc(a, "journal", "add", "a's second").code == 0
    synced = inproc(a, "sync", "--json")
    report = json.loads(synced.out)
    assert (synced.code, synced.err, report["landed"], report["refused"], report["message"]) == (
        0,
        "",
        "shared",
        [],
        None,
    )
    lane = f"refs/continuity-lanes/{clone_id(a)}/main"
    assert git(a, "ls-remote", url, lane).split()[1] == lane  # kept, as the remote wants
    assert inproc(b, "sync").code == 0
    assert journal(inproc, b) == ["a's", "a's second", "b's"]


def test_doctors_refspec_check_follows_the_branch_transport(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    bare, work = remote_and_clone
    git(work, "config", "continuity.transport", "branches")
    assert inproc(work, "init", "--no-fetch-refspecs").code == 0
    noted(work, "stream main")  # signed, as every notes commit of ours is
    assert inproc(work, "push").code == 0
    specs = [
        "+refs/heads/continuity/*:refs/continuity-remotes/origin/*",
        "^refs/heads/continuity/notes",
        "^refs/heads/continuity/lanes/*",
    ]
    found = [f for f in json.loads(inproc(work, "doctor", "--json").out)["findings"] if f["area"] == "refspec"]
    assert [(f["where"], f["fix"]) for f in found] == [
        ("remote.origin.fetch", "git continuity doctor --fix adds " + " ".join(specs))
    ]
    assert inproc(work, "doctor", "--fix").code == 0
    assert git(work, "config", "--get-all", "remote.origin.fetch").splitlines() == [
        "+refs/heads/*:refs/remotes/origin/*",
        *specs,
    ]
    # A plain git fetch now brings the stream's branch into its tracking ref, and neither the
    # notes' branch nor any lane beside it.
    git(bare, "update-ref", "refs/heads/continuity/lanes/k-2345678923/main", "refs/heads/continuity/main")
    for name in ("refs/continuity-remotes/origin/main", "refs/notes/continuity-remotes/origin"):
        git(work, "update-ref", "-d", name)
    git(work, "fetch", "-q", "origin")
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/continuity-remotes/") == (
        "refs/continuity-remotes/origin/main"
    )
    assert [f for f in json.loads(inproc(work, "doctor", "--json").out)["findings"] if f["area"] == "refspec"] == []


def test_a_lane_that_is_not_state_is_named_and_left_alone(daemon: Server, tmp_path: Path, inproc: Run) -> None:
    """Anyone who can push may put a blob under refs/continuity-lanes/: the sync names it and
    goes on (it used to fetch it five times, then blame the remote for moving)."""
    bare, _, (a,) = seeded(tmp_path, daemon, "junk-lane", "a")
    assert inproc(a, "init").code == 0
    assert inproc(a, "push").code == 0
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=bare, input="junk\n", capture_output=True, text=True, check=True
    ).stdout.strip()
    git(bare, "update-ref", "refs/continuity-lanes/k-2222222222/main", blob)
    synced = inproc(a, "sync")
    assert (synced.code, synced.err) == (0, "")
    assert synced.out == (
        "From origin:\n  main: up to date\n"
        "  ignored refs/continuity-lanes/k-2222222222/main: not continuity state (a branch of someone's: left alone)\n"
        "To origin:\n  main: up to date\n"
    )
