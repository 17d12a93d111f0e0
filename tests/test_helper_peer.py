"""The helper checks the process at the other end itself, keeps one helper per kind of client,
loses no exit status when it dies mid-command, runs no thread in a command's copy, remembers
a socket it cannot make, and serves the agents' hooks as it serves commands."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import Ran, approve, git, normalize
from helper_harness import (
    ON,
    gone,
    gone_now,
    helpers_of,
    listening,
    run,
    runs_in_helper,
    wait_for_child_of,
    work,
)

from git_continuity.cli.table import COMMANDS
from git_continuity.helper import door as helper

__all__ = ["work"]  # a fixture


def test_the_helper_reads_its_clients_confinement_itself(work: Path) -> None:
    """A client with fewer open files allowed that reports the helper's own confinement: the
    helper reads the client's limits from /proc, refuses, and the check runs with the client's
    limit (the helper took the client's word for it)."""
    (work / "limits.sh").write_text("ulimit -n > limit.txt\n")
    approve(work, "sh limits.sh")
    run(work, "claim", "add", "limits", "--check", "cmd:sh limits.sh", helper=False)
    run(work, "status")
    first = listening(work)
    lying = (
        "import resource, sys\n"
        "from git_continuity.helper import door as helper, peer as helper_peer\n"
        "told = helper_peer.confinement('self')\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))\n"
        "helper_peer.confinement = lambda pid: told\n"
        "sys.path.insert(0, sys.path[0])  # as the console script has it: its folder first\n"
        "done = helper.through_helper(['verify'])\n"
        "print('ran here' if done is None else f'served {done}')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", lying],
        cwd=work,
        env={**os.environ, **ON},
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "ran here\n", "")
    assert not (work / "limit.txt").exists()  # nothing ran in the helper
    assert not gone_now(first)


def kinds(work: Path, env: dict[str, str]) -> list[int]:
    """The helpers serving a client with ``env``: the first run starts one, the next runs in it."""
    before = helpers_of(work)
    run(work, "status", **env)  # type: ignore[arg-type]  # variables, never "helper"
    pid = listening(work, besides=tuple(before))
    assert runs_in_helper(work, **env) == [pid]
    return [pid]


@pytest.mark.parametrize(
    "env",
    [{"TZ": "Asia/Tokyo"}, {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}, {"LD_PRELOAD": ""}, {"PYTHONHASHSEED": "7"}],
    ids=["TZ", "LANG", "LD_PRELOAD", "PYTHON"],
)
def test_each_kind_of_client_keeps_a_helper_of_its_own(work: Path, env: dict[str, str]) -> None:
    """A client whose environment the helper would not apply (read once at a process's start)
    has a helper of its own, and the first one goes on serving its clients (it stepped down,
    and the two kinds kept stopping each other's)."""
    if "LD_PRELOAD" in env:
        env = {"LD_PRELOAD": next(str(p) for p in Path("/").glob("*lib*/**/libm.so.6"))}
    [first] = kinds(work, {})
    [other] = kinds(work, env)
    assert other != first
    assert runs_in_helper(work) == [first]
    assert runs_in_helper(work, **env) == [other]
    assert sorted(helpers_of(work)) == sorted([first, other])


def as_group(gid: int) -> None:
    os.setgroups([gid])
    os.setgid(gid)


def test_a_client_of_other_groups_writes_with_its_own(work: Path) -> None:
    """Objects written through the helper get the client's group, not the helper's."""
    run(work, "status")
    first = listening(work)

    def journal(text: str) -> Ran:
        done = subprocess.run(
            ["git", "continuity", "journal", "add", text],
            cwd=work,
            env={**os.environ, **ON},
            capture_output=True,
            text=True,
            start_new_session=True,
            preexec_fn=lambda: as_group(4242),
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    assert journal("first").code == 0  # starts the helper of this group's clients
    second = listening(work, besides=(first,))
    assert second != first
    done = journal("second")
    assert (done.code, done.err) == (0, "")
    tip = git(work, "rev-parse", "refs/continuity/main")
    made = work / ".git" / "objects" / tip[:2] / tip[2:]
    assert made.stat().st_gid == 4242
    assert "Groups:\t4242" in Path(f"/proc/{second}/status").read_text()


def slow_verify(work: Path, seconds: int) -> tuple[subprocess.Popen[str], int, int]:
    """`verify` of a check that takes ``seconds``, started in the helper and running now: the
    client, the helper, and the process the helper runs the command in."""
    (work / "slow.sh").write_text(f"echo started >> slow.txt\nsleep {seconds}\n")
    approve(work, "sh slow.sh")
    run(work, "claim", "add", "slow", "--check", "cmd:sh slow.sh", helper=False)
    run(work, "status")
    pid = listening(work)
    client = subprocess.Popen(  # the client itself, not git: a signal sent to it reaches it
        ["git-continuity", "verify"],
        cwd=work,
        env={**os.environ, **ON},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    command = wait_for_child_of(pid)
    while not (work / "slow.txt").exists():
        time.sleep(0.05)
    return client, pid, command


def test_the_exit_status_is_not_lost_when_the_helper_dies_mid_command(work: Path) -> None:
    """The helper killed while its copy runs `verify`: the copy finishes and says its exit
    code itself (the client ended with 1, "without an exit code", and a retry wrote twice)."""
    client, pid, _ = slow_verify(work, 3)
    os.kill(pid, 9)
    out, err = client.communicate(timeout=60)
    assert (client.returncode, err) == (0, "")
    took = re.compile(r"in \d+\.\ds")
    assert took.sub("in Ns", normalize(out)) == took.sub("in Ns", normalize(run(work, "verify", helper=False).out))


def test_a_commands_copy_runs_no_thread_and_dies_with_its_client(work: Path) -> None:
    client, _, command = slow_verify(work, 30)
    status = Path(f"/proc/{command}/status").read_text()
    assert "Threads:\t1\n" in status
    client.kill()
    client.wait(timeout=30)
    assert gone(command)


def test_a_socket_that_cannot_be_made_is_remembered(work: Path, tmp_path: Path) -> None:
    """A read-only continuity folder: the first command's helper cannot listen and says so;
    the next commands start none (each started one, which imported everything and died)."""
    folder = work / ".git" / "continuity"
    subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
        cache = Path(os.environ["XDG_CACHE_HOME"]) / "git-continuity" / "helper"
        expected = run(work, "journal", helper=False)
        assert run(work, "journal") == expected
        deadline = time.monotonic() + 20
        while not list(cache.glob("*.failed")) and time.monotonic() < deadline:
            time.sleep(0.05)
        [marker] = cache.glob("*.failed")
        assert marker.read_text() == "1\n"
        for _ in range(3):
            assert run(work, "journal") == expected
        time.sleep(2)  # what a helper started by them would have taken to fail
        assert marker.read_text() == "1\n"
        assert helpers_of(work) == []
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_the_served_commands_are_the_rows_of_the_command_table_marked_so() -> None:
    assert {command.name for command in COMMANDS if command.served} == helper.SERVED
    assert helper.served(["--stream", "b", "status", "--json"])
    assert helper.served(["hook-impl", "agent", "claude", "stop"])
    assert helper.served(["sync", "--json"]) and helper.served(["push", "origin"]) and helper.served(["pull"])
    for argv in (["hook-impl", "commit-msg", "MSG"], ["edit"], ["mcp"], ["demo"], ["agent", "install"]):
        assert not helper.served(argv), argv


def test_an_agents_hook_is_served_by_the_helper_and_answers_alike(work: Path) -> None:
    """SessionStart as Claude Code runs it (no terminal, its JSON on stdin): run in a copy of
    the helper, with the same answer as in a process of its own."""
    hook = [str(Path(sys.executable).parent / "git-continuity-hook"), "agent", "claude", "session-start"]
    event = json.dumps({"session_id": "s-1", "cwd": str(work), "hook_event_name": "SessionStart", "source": "startup"})

    def session_start(env: dict[str, str]) -> Ran:
        done = subprocess.run(
            hook,
            cwd=work,
            input=event,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            start_new_session=True,
        )
        return Ran(done.returncode, done.stdout, done.stderr)

    session_start(ON)  # starts the session, and the helper
    pid = listening(work)
    reader, writer = os.pipe()
    client = subprocess.Popen(
        hook,
        cwd=work,
        stdin=reader,
        env={**os.environ, **ON},
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    os.close(reader)
    wait_for_child_of(pid)  # the copy waits for the agent's JSON
    os.write(writer, event.encode())
    os.close(writer)
    out, _ = client.communicate(timeout=60)
    own = session_start({"GIT_CONTINUITY_HELPER": "0"})
    # Each brief after the first names when the one it supersedes was given: a second apart
    # on a slow machine. That time aside, the answers are the same.
    stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
    assert (client.returncode, stamp.sub("TIME", out)) == (own.code, stamp.sub("TIME", own.out))


# The remote's end of a fetch or push (git-upload-pack, git-receive-pack), started by the
# user's git: it writes the pids of the processes it descends from, then does its work.
ANCESTRY = """p=$$
while [ "$p" -gt 1 ]; do echo "$p" >> {out}; p=$(cut -d' ' -f4 /proc/$p/stat); done
echo >> {out}
exec "$@"
"""


def test_sync_push_and_pull_run_in_the_helper_and_say_what_they_say_in_their_own_process(
    work: Path, tmp_path: Path
) -> None:
    """A fleet's agents sync in loops: sync, push and pull are served like the other state
    commands, the network through the user's own git from the helper's copy, with the same
    answers as in a process of their own."""
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "remote.git"))
    git(work, "remote", "add", "origin", str(tmp_path / "remote.git"))
    (tmp_path / "ancestry.sh").write_text(ANCESTRY.format(out=tmp_path / "ancestry.txt"))
    for key, program in (("uploadpack", "git-upload-pack"), ("receivepack", "git-receive-pack")):
        git(work, "config", f"remote.origin.{key}", f"sh {tmp_path / 'ancestry.sh'} {program}")
    run(work, "status")
    pid = listening(work)

    def ancestries() -> list[list[int]]:
        if not (tmp_path / "ancestry.txt").exists():
            return []
        found = (tmp_path / "ancestry.txt").read_text().split("\n\n")
        (tmp_path / "ancestry.txt").unlink()
        return [[int(n) for n in each.split()] for each in found if each.strip()]

    assert run(work, "push").code == 0
    assert run(work, "journal", "add", "sent through the helper").code == 0
    assert run(work, "sync", "--json").code == 0
    assert run(work, "pull").code == 0
    served = ancestries()
    assert len(served) >= 4 and all(pid in each for each in served), served
    for args in (("sync",), ("sync", "--json"), ("pull",), ("push",), ("pull", "nowhere")):
        answer = run(work, *args)
        assert all(pid in each for each in ancestries()), args
        assert answer == run(work, *args, helper=False), args
        assert all(pid not in each for each in ancestries()), args
    assert run(work, "pull", "nowhere").err.startswith("git-continuity: error: ")
    assert helpers_of(work) == [pid]
