"""The helper never makes a client wait unboundedly, and never acts where git would refuse:
a stopped helper, connections that never send, garbage and huge requests each leave every
command run once, with its output; a repository of another user's, a link or a file at the
socket's name, a checkout deeper than a socket's path may be, are each handled without
touching what is not the helper's own."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import BIN, Ran, approve, git, helpers
from helper_harness import (
    ON,
    PROBE,
    gone,
    helper_of,
    helpers_of,
    listening,
    run,
    runs_in_helper,
    sockets,
    work,
)

__all__ = ["work"]  # a fixture


def connect(path: Path) -> socket.socket:
    made = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    back = os.open(".", os.O_RDONLY)
    try:
        os.chdir(path.parent)
        made.connect(path.name)
    finally:
        os.fchdir(back)
        os.close(back)
    return made


def test_a_stopped_helper_never_holds_its_clients(work: Path) -> None:
    """`kill -STOP` of the helper, then 24 commands at once: each runs in its own process and
    ends, none waits for the helper (once its listen queue was full, the next ones waited
    forever)."""
    run(work, "status")
    pid = listening(work)
    expected = run(work, "status", helper=False)
    os.kill(pid, signal.SIGSTOP)
    results: list[Ran | str] = []

    def one() -> None:
        try:
            done = subprocess.run(
                ["git", "continuity", "status"],
                cwd=work,
                env={**os.environ, **ON},
                capture_output=True,
                text=True,
                start_new_session=True,
                timeout=60,
            )
            results.append(Ran(done.returncode, done.stdout, done.stderr))
        except subprocess.TimeoutExpired:
            results.append("hung")

    try:
        threads = [threading.Thread(target=one) for _ in range(24)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert results == [expected] * 24


def test_connections_that_never_send_do_not_starve_a_command(work: Path) -> None:
    """40 connections of one process that send nothing: the helper holds a few of them, for
    a bounded time, and serves the next command at once (each used to hold it 5 s in turn)."""
    run(work, "status")
    pid = listening(work)
    [path] = sockets(work)
    idle = []
    for _ in range(40):
        try:
            idle.append(connect(path))
        except OSError:
            break  # the queue is full: the helper is not reading it
    try:
        assert runs_in_helper(work) == [pid]
    finally:
        for each in idle:
            each.close()


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"garbage that is no request at all\n",
        struct.pack("!II", 1 << 30, 1 << 30),  # a request said to be 2 GiB long
        struct.pack("!II", 5, 100) + b"short",  # cut short, then the connection ends
        struct.pack("!II", 1, 4) + b"x" + b"\xff\xfe\x00\x01",  # a body marshal cannot read
    ],
    ids=["garbage", "huge", "truncated", "unreadable"],
)
def test_bad_requests_crash_nothing_and_run_nothing(work: Path, request_bytes: bytes) -> None:
    run(work, "status")
    pid = listening(work)
    [path] = sockets(work)
    with connect(path) as bad:
        bad.settimeout(10)
        bad.sendall(request_bytes)
        bad.shutdown(socket.SHUT_WR)
        answer = b""
        try:
            while more := bad.recv(4096):
                answer += more
        except OSError:
            pass
    assert not answer.startswith(b"started")
    assert helper_of(work) == pid  # still there
    assert runs_in_helper(work) == [pid]


def test_a_repository_of_another_user_is_refused_before_anything_is_touched(tmp_path: Path) -> None:
    """Another user's repository whose .git/continuity links to a folder of yours: git refuses
    the repository, and the command deletes, binds and starts nothing in your folder first
    (it removed the socket there and left a helper running in it)."""
    mine = tmp_path / "mine"
    mine.mkdir()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(mine / "helper.sock"))
    stale.close()
    (mine / "notes.txt").write_text("mine\n")
    before = sorted((p.name, p.lstat().st_ino) for p in mine.iterdir())
    theirs = tmp_path / "theirs"
    git(tmp_path, "init", "-q", str(theirs))
    (theirs / ".git" / "continuity").symlink_to(mine)
    for path in (theirs, *theirs.rglob("*")):
        os.lchown(path, 65534, 65534)
    done = run(theirs, "status")
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        f"git-continuity: error: cannot open the repository at {theirs}/.git/: {theirs}: "
        f"repository path '{theirs}' is not owned by current user\n"
    )
    assert sorted((p.name, p.lstat().st_ino) for p in mine.iterdir()) == before
    assert [pid for pid, folder in helpers().items() if folder.startswith(str(tmp_path))] == []


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_file_or_a_link_at_the_sockets_name_is_left_alone(work: Path, tmp_path: Path, kind: str) -> None:
    run(work, "status")
    first = listening(work)
    [path] = sockets(work)
    os.kill(first, signal.SIGKILL)
    assert gone(first)
    path.unlink()
    if kind == "file":
        path.write_text("not a socket\n")
    else:
        elsewhere = tmp_path / "elsewhere.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(elsewhere))
        listener.close()
        path.symlink_to(elsewhere)
    made = path.lstat()
    for _ in range(2):
        assert run(work, "status") == run(work, "status", helper=False)
    assert path.lstat().st_ino == made.st_ino  # neither removed nor replaced
    assert runs_in_helper(work) != [first]
    assert helpers_of(work) == []  # no helper was started for a name it could not take


def test_a_checkout_deeper_than_a_sockets_path_is_served(tmp_path: Path) -> None:
    """A socket's path holds 107 bytes; the helper and its clients reach it from its folder."""
    deep = tmp_path / ("d" * 60) / ("e" * 60) / "repo"
    deep.parent.mkdir(parents=True)
    git(tmp_path, "init", "-q", str(deep))
    git(deep, "commit", "-q", "--allow-empty", "-m", "first")
    assert len(str(deep / ".git" / "continuity" / "helper-0123456789abcdef.sock")) > 107
    run(deep, "init", "--no-fetch-refspecs", helper=False)
    (deep / "probe.sh").write_text(PROBE)
    approve(deep, "sh probe.sh ran.txt")
    run(deep, "claim", "add", "probe", "--check", "cmd:sh probe.sh ran.txt", helper=False)
    run(deep, "status")
    pid = listening(deep)
    assert runs_in_helper(deep) == [pid]


def _verify_at_once(repo: Path, count: int) -> list[int]:
    """`verify` run by ``count`` agents at once; where each one's probe ran (runs_in_helper)."""
    (repo / "ran.txt").unlink(missing_ok=True)
    env = {**os.environ, **ON}
    started = [
        subprocess.Popen(
            ["git", "continuity", "verify"],
            cwd=repo,
            env=env,
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    said = [(each.communicate(timeout=60), each.returncode) for each in started]
    assert [code for _, code in said] == [0] * count, [each for each in said if each[1]]
    return [int(line) for line in (repo / "ran.txt").read_text().split()]


def _no_helper_listens(work: Path) -> Path:
    """Start the repository's helper, kill it and take its socket away: where its mark goes."""
    run(work, "status")
    pid = listening(work)
    name = sockets(work)[0].name
    os.kill(pid, signal.SIGKILL)
    assert gone(pid)
    (work / ".git" / "continuity" / name).unlink()
    return work / ".git" / "continuity" / name.replace(".sock", ".starting")


def test_a_fleet_starting_at_once_waits_for_one_helper_instead_of_each_importing_everything(work: Path) -> None:
    """Six commands at once where no helper runs yet: the first starts one and runs in its own
    process; the others wait for that helper to listen and run in it (each in its own process,
    a fleet's twenty agents imported everything twenty times at once)."""
    assert helpers_of(work) == []
    ran = _verify_at_once(work, 6)
    pid = listening(work)
    assert len(ran) == 6
    assert ran.count(pid) == 5
    assert list((work / ".git" / "continuity").glob("*.starting")) == []  # the helper took its mark away


def test_a_helper_that_died_while_warming_holds_a_command_at_most_a_few_seconds(work: Path) -> None:
    """The mark of a helper on its way, left by one that died: the next command waits at most
    STARTING seconds for it and runs in its own process; once the mark is old, the next command
    starts a new helper."""
    mark = _no_helper_listens(work)
    mark.touch()
    own = runs_in_helper(work)  # it waited, then ran in its own process: no helper was there
    assert helpers_of(work) == []  # and it started none: the mark said one was on its way
    os.utime(mark, (1, 1))  # as old as a mark of one that died long ago
    assert runs_in_helper(work) == own  # this one starts a helper, and runs in its own process
    new = listening(work)
    assert runs_in_helper(work) == [new] != own
    assert not mark.exists()


@pytest.mark.parametrize("kind", ["folder", "link", "a file with text"])
def test_what_is_not_a_mark_at_the_marks_name_is_left_alone(work: Path, tmp_path: Path, kind: str) -> None:
    """At the name of a helper's mark, something not made as one (a folder, a link, a file
    with text): no command waits for it, none removes it, and a helper still starts."""
    mark = _no_helper_listens(work)
    if kind == "folder":
        mark.mkdir()
    elif kind == "link":
        mark.symlink_to(tmp_path / "elsewhere")
    else:
        mark.write_text("mine\n")
    os.utime(mark, (1, 1), follow_symlinks=False)  # old: as a mark, it would be removed
    assert run(work, "status").code == 0
    new = listening(work)
    assert runs_in_helper(work) == [new]
    assert mark.is_symlink() if kind == "link" else mark.exists()


def test_a_client_whose_helper_is_named_otherwise_leaves_no_mark_to_wait_for(work: Path) -> None:
    """A client run with interpreter options of its own (`python -X …`) names a socket its
    helper (started with none) does not listen at: the helper takes the client's mark away all
    the same, so the clients after it do not wait STARTING seconds for it in vain."""
    script = str(BIN / "git-continuity")
    env = {**os.environ, **ON}
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-X", "continuity_test", script, "status"],
            cwd=work,
            env=env,
            capture_output=True,
            start_new_session=True,
            check=False,
        )
        assert done.returncode == 0
        listening(work)
        assert list((work / ".git" / "continuity").glob("*.starting")) == []


def test_a_mark_made_in_the_future_holds_no_command(work: Path) -> None:
    """A mark whose time is ahead of the clock (the clock set back, a copied folder) is not a
    helper on its way: the next command starts one instead of every command waiting."""
    mark = _no_helper_listens(work)
    mark.touch()
    ahead = time.time() + 3600
    os.utime(mark, (ahead, ahead))
    assert run(work, "status").code == 0
    new = listening(work)
    assert runs_in_helper(work) == [new]
    assert not mark.exists()
