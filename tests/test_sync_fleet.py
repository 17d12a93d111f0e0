"""A fleet on one remote: many clones writing and syncing at the same moment, through a git
daemon. Every sync ends well within its retries, and no entry is lost anywhere."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Run, commit, git, state_refs
from gitserver import Server, git_daemon


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("server")
    (root / "repos").mkdir()
    with git_daemon(root / "repos", root / "home") as running:
        yield running


def fleet(tmp_path: Path, url: str, size: int, inproc) -> list[Path]:  # type: ignore[no-untyped-def]
    """``size`` clones of a remote that has a state with one journal entry."""
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    commit(seed, "first", {"README": "hello\n"})
    git(seed, "push", "-q", url, "main")
    clones = [tmp_path / f"c{i:02}" for i in range(size)]
    for where in clones:
        git(tmp_path, "clone", "-q", url, str(where))
    assert inproc(clones[0], "init").code == 0
    assert inproc(clones[0], "push").code == 0
    for where in clones[1:]:
        assert inproc(where, "pull").code == 0
    return clones


def at_once(clones: list[Path], round_: int) -> list[tuple[int, str, str]]:
    """Every clone adds one journal entry and syncs, all at the same moment."""
    script = (
        "import contextlib, io, sys\nfrom git_continuity.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(['journal', 'add', sys.argv[1]])\n"
        "raise SystemExit(code or main(['sync', '--json']))\n"
    )
    running = [
        subprocess.Popen(
            [sys.executable, "-c", script, f"{where.name} round {round_}"],
            cwd=where,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for where in clones
    ]
    said = [p.communicate() for p in running]
    return [(p.returncode, out, err) for p, (out, err) in zip(running, said, strict=True)]


def entries(inproc, where: Path) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(e["text"] for e in json.loads(inproc(where, "journal", "--all", "--json").out)["entries"])


def test_twelve_clones_writing_and_syncing_at_once_all_land(server: Server, tmp_path: Path, inproc: Run) -> None:
    _, url = server.bare("fleet")
    clones = fleet(tmp_path, url, 12, inproc)
    landed = []
    for round_ in (1, 2):
        for where, (code, out, err) in zip(clones, at_once(clones, round_), strict=True):
            # Every sync lands: on the shared ref, or on this clone's lane when others moved
            # it first, within its retries.
            assert (code, err) == (0, ""), (where.name, out, err)
            report = json.loads(out)
            assert 0 <= report["retries"] <= 5
            assert report["refused"] == [] and report["message"] is None
            landed.append(report["landed"])
    # One more sync each, one after the other: every lane is folded into the shared ref, and
    # each clone deletes its own once the shared ref holds it.
    for where in clones:
        assert inproc(where, "sync").code == 0
    assert git(clones[0], "ls-remote", url, "refs/continuity-lanes/*") == ""
    for where in clones:
        assert inproc(where, "pull").code == 0
    wanted = sorted([f"{w.name} round {r}" for w in clones for r in (1, 2)])
    assert [(w.name, sorted(set(wanted) - set(entries(inproc, w)))) for w in clones] == [(w.name, []) for w in clones]
    assert len({state_refs(where) for where in clones}) == 1
    assert git(clones[0], "ls-remote", url, "refs/continuity/main").split()[0] == git(
        clones[0], "rev-parse", "refs/continuity/main"
    )
    assert "lane" in landed and "shared" in landed  # they did race: the lanes are what this is about


def test_a_ref_the_server_is_moving_at_that_moment_goes_to_the_lane(
    server: Server, tmp_path: Path, inproc: Run
) -> None:
    """receive-pack refuses a ref another push holds at that moment ("failed to update ref",
    its remote: lines say "cannot lock ref 'refs/continuity/main': …"): a race too, so the
    state goes to this clone's lane; the next push, the server free again, lands on the
    shared ref and deletes the lane in the same push."""
    bare, url = server.bare("locked")
    (work,) = fleet(tmp_path, url, 1, inproc)
    assert inproc(work, "journal", "add", "while the server was busy").code == 0
    lock = bare / "refs" / "continuity" / "main.lock"
    lock.write_text("")  # what a push landing at the same moment holds
    try:
        ran = inproc(work, "push", "--json")
    finally:
        lock.unlink()
    assert (ran.code, ran.err) == (0, "")
    report = json.loads(ran.out)
    assert (report["landed"], report["retries"], report["refused"]) == ("lane", 0, [])
    tip = git(work, "rev-parse", "refs/continuity/main")
    (lane,) = report["lanes"]
    assert git(work, "ls-remote", url, "refs/continuity-lanes/*") == f"{tip}\t{lane}"
    again = inproc(work, "push", "--json")
    assert (again.code, again.err, json.loads(again.out)["landed"]) == (0, "", "shared")
    assert git(work, "ls-remote", url, "refs/continuity/*", "refs/continuity-lanes/*") == (
        f"{tip}\trefs/continuity/main"
    )


def session_end(where: Path) -> str:
    """Claude Code's SessionEnd hook, as `agent install` writes it, with its JSON on stdin."""
    payload = {"session_id": "s-end", "transcript_path": "/tmp/t.jsonl", "cwd": str(where), "reason": "exit"}
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "session-end"],
        cwd=where,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    return str(json.loads(done.stdout).get("systemMessage", ""))


def test_a_session_that_ends_sends_its_state_where_it_was_synced_before(
    remote_and_clone: tuple[Path, Path],
    tmp_path: Path,
    inproc: Run,
) -> None:
    bare, work = remote_and_clone
    assert inproc(work, "init").code == 0
    assert inproc(work, "objective", "set", "ship the fix", "--why", "users wait").code == 0
    assert inproc(work, "sync").code == 0
    assert inproc(work, "journal", "add", "done for today").code == 0
    said = session_end(work)
    assert said.startswith("git-continuity: handoff h-") and said.endswith("; synced with origin"), said
    assert git(work, "ls-remote", str(bare), "refs/continuity/main").split()[0] == git(
        work, "rev-parse", "refs/continuity/main"
    )
    # Unreachable now: said so, nothing lost; the outbox keeps counting.
    git(work, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    assert inproc(work, "journal", "add", "offline").code == 0
    said = session_end(work)
    assert f"; not synced with origin: cannot reach origin ({tmp_path / 'gone.git'}):" in said, said
    assert said.endswith("(the next git continuity sync sends it)")
    boxes = json.loads(inproc(work, "status", "--json").out)["outbox"]
    assert [(b["remote"], b["changes"] >= 2) for b in boxes] == [("origin", True)]


def test_a_session_that_ends_in_a_clone_kept_local_sends_nothing(
    remote_and_clone: tuple[Path, Path],
    inproc: Run,
) -> None:
    bare, work = remote_and_clone
    assert inproc(work, "init", "--local").code == 0
    assert inproc(work, "objective", "set", "ship the fix", "--why", "users wait").code == 0
    assert inproc(work, "journal", "add", "private notes").code == 0
    said = session_end(work)
    assert said.startswith("git-continuity: handoff h-") and "sync" not in said, said
    assert git(work, "ls-remote", str(bare), "refs/continuity/*") == ""
