"""The helper process (helper/door.py, helper/server.py): commands it runs print and write exactly
what they print and write in their own process; a killed helper, a stale socket, another
installation's helper and two repositories at once each still get their commands run once.

Every command here runs as an agent's does: in a fresh process with no controlling terminal
(start_new_session), the helper switched on."""

from __future__ import annotations

import contextlib
import os
import pty
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import Ran, approve, git
from helper_harness import (
    ON,
    gone,
    gone_now,
    helper_of,
    listening,
    run,
    runs_in_helper,
    sockets,
    wait_for_child_of,
    work,
)

__all__ = ["work"]  # a fixture


def test_a_command_prints_in_the_helper_exactly_what_it_prints_in_its_own_process(work: Path) -> None:
    run(work, "status")
    pid = listening(work)
    assert runs_in_helper(work) == [pid]
    commands = [
        ("status",),
        ("status", "--json"),
        ("--stream", "main", "claim", "list"),
        ("thread", "list"),
        ("journal",),
        ("claim", "show", "c-zzzzzz"),  # an error: exit 2, named
        ("status", "--bogus"),  # a usage error from argparse
        ("status", "--help"),  # help, then argparse's exit 0
        ("ready", "--json"),
        ("claim", "add", "caf\udce9"),  # an argument that is not UTF-8
        ("thread", "add", "  "),
    ]
    for args in commands:
        served, own = run(work, *args), run(work, *args, helper=False)
        assert served == own, args
    assert helper_of(work) == pid  # one helper answered them all
    assert run(work, "claim", "show", "c-zzzzzz").err == (
        "git-continuity: error: no claim 'c-zzzzzz' in stream 'main' (git continuity claim list shows the ids)\n"
    )


def test_writes_through_the_helper_are_the_state_every_process_reads(work: Path) -> None:
    run(work, "status")
    listening(work)
    made = run(work, "claim", "add", "the tip exists", "--check", "commit:HEAD")
    writes = (("journal", "add", "tried the fast path"), ("blocker", "add", "waiting for review"), ("next", "measure"))
    for args in writes:
        assert run(work, *args).code == 0, args
    shown = run(work, "status", helper=False).out
    assert made.out.startswith("Recorded claim c-")
    for text in ("tried the fast path", "waiting for review", "Next       measure", "the tip exists"):
        assert text in shown, text


def test_a_killed_helper_leaves_a_socket_the_next_command_replaces(work: Path) -> None:
    run(work, "status")
    first = listening(work)
    os.kill(first, signal.SIGKILL)
    assert gone(first)
    [left] = sockets(work)  # left behind by the kill
    assert run(work, "status") == run(work, "status", helper=False)
    second = listening(work)
    assert second != first
    assert sockets(work) == [left]  # the new helper took the socket's name over
    assert runs_in_helper(work) == [second]


def test_a_stale_socket_file_is_taken_over(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run(work, "status")
    first = listening(work)
    [path] = sockets(work)
    os.kill(first, signal.SIGKILL)
    assert gone(first)
    path.unlink()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    monkeypatch.chdir(path.parent)
    stale.bind(path.name)
    stale.close()  # a socket file nobody listens on
    assert run(work, "status").code == 0
    pid = listening(work)
    assert runs_in_helper(work) == [pid]


def test_a_helper_of_another_fingerprint_refuses_without_stepping_down(work: Path) -> None:
    """Another installation's helper listening under this one's socket name (two fingerprints
    sharing a name) is told apart by the whole fingerprint: it refuses, the command runs in its
    own process, and that helper goes on serving its own clients."""
    run(work, "status")
    mine = listening(work)
    [path] = sockets(work)
    os.kill(mine, signal.SIGKILL)
    assert gone(mine)
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from git_continuity.helper import peer as helper_peer, server as helper_server; "
            "helper_peer.fingerprint = lambda paths: 'git-continuity 0.0.9'; "
            f"helper_peer.name_of = lambda f: {path.name!r}; "
            "helper_server.serve(sys.argv[1])",
            str(path.parent),
        ],
        env={**os.environ, **ON},
        start_new_session=True,
    )
    listening(work)
    assert helper_of(work) == other.pid
    done = run(work, "journal", "add", "once")
    assert (done.code, done.err) == (0, "")
    assert run(work, "journal", helper=False).out.count("once") == 1
    assert runs_in_helper(work) != [other.pid]  # refused: it ran in a process of its own
    time.sleep(0.5)
    assert other.poll() is None  # still serving
    other.kill()
    other.wait(timeout=20)


def test_two_repositories_have_a_helper_each_and_their_own_state(work: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(work), str(other))
    run(other, "init", "--no-fetch-refspecs", helper=False)
    run(work, "status")
    run(other, "status")
    pids = {listening(work), listening(other)}
    assert len(pids) == 2
    failures: list[Ran] = []

    def write(repo: Path, n: int) -> None:
        for i in range(n):
            done = run(repo, "journal", "add", f"{repo.name} {i}")
            if done.code:
                failures.append(done)

    threads = [threading.Thread(target=write, args=(repo, 8)) for repo in (work, other, work, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    for repo, stranger in ((work, "other"), (other, "repo")):
        lines = run(repo, "journal", "-n", "100", helper=False).out
        assert lines.count(f"{repo.name} ") == 16
        assert f"{stranger} " not in lines
    assert {helper_of(work), helper_of(other)} == pids


def slow_verify(work: Path, ignore: int | None = None) -> tuple[subprocess.Popen[str], int]:
    """`verify` of a check that runs for 30 s, started in the helper and running now: the
    client, and the process the helper runs the command in."""
    (work / "slow.sh").write_text("echo started >> slow.txt\nsleep 30\n")
    approve(work, "sh slow.sh")
    run(work, "claim", "add", "slow", "--check", "cmd:sh slow.sh")
    helper = listening(work)
    client = subprocess.Popen(  # the client itself, not git: a signal sent to it reaches it
        ["git-continuity", "verify"],
        cwd=work,
        env={**os.environ, **ON},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=None if ignore is None else lambda: signal.signal(ignore, signal.SIG_IGN),
    )
    command = wait_for_child_of(helper)
    while not (work / "slow.txt").exists():
        time.sleep(0.05)
    return client, command


def test_a_command_killed_in_the_helper_kills_its_client_alike_and_is_not_run_again(work: Path) -> None:
    client, command = slow_verify(work)
    os.kill(command, signal.SIGKILL)
    assert client.communicate(timeout=30) == ("", "")
    assert client.returncode == -signal.SIGKILL  # as a command killed in its own process
    assert (work / "slow.txt").read_text() == "started\n"


def test_a_killed_client_takes_its_command_with_it(work: Path) -> None:
    client, command = slow_verify(work)
    before = git(work, "rev-parse", "refs/continuity/main")
    client.kill()
    client.wait(timeout=30)
    assert gone(command)
    time.sleep(1)
    assert git(work, "rev-parse", "refs/continuity/main") == before  # verify recorded nothing


def test_a_helper_that_does_not_answer_is_passed_by_and_never_runs_the_command(work: Path) -> None:
    run(work, "status")
    pid = listening(work)
    os.kill(pid, signal.SIGSTOP)
    try:
        done = run(work, "journal", "add", "once")
    finally:
        os.kill(pid, signal.SIGCONT)
    assert (done.code, done.err) == (0, "")
    time.sleep(1)  # the helper takes the request it was sent, and is told nothing ran
    assert run(work, "journal", helper=False).out.count("once") == 1


def test_a_client_less_confined_or_otherwise_set_is_not_served_by_the_helper(work: Path) -> None:
    (work / "limits.sh").write_text("ulimit -n > limit.txt\n")
    approve(work, "sh limits.sh")
    run(work, "claim", "add", "limits", "--check", "cmd:sh limits.sh", helper=False)
    run(work, "status")
    first = listening(work)

    def fewer_files() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))

    done = subprocess.run(
        ["git", "continuity", "verify"],
        cwd=work,
        env={**os.environ, **ON},
        capture_output=True,
        text=True,
        start_new_session=True,
        preexec_fn=fewer_files,
    )
    assert done.returncode == 0, done.stderr
    assert (work / "limit.txt").read_text() == "200\n"  # the client's own limit, not the helper's
    time.sleep(0.5)
    assert not gone_now(first)  # it keeps serving the clients it can serve alike
    profiled = run(work, "status", PYTHONPROFILEIMPORTTIME="1")  # Python's own settings alike
    assert "import time:" in profiled.err


def test_the_identity_comes_from_the_clients_home(work: Path, tmp_path: Path) -> None:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    empty = tmp_path / "empty-home"
    empty.mkdir()
    mine = tmp_path / "my-home"
    mine.mkdir()
    (mine / ".gitconfig").write_text("[user]\n\tname = Grace Hopper\n\temail = grace@example.com\n")
    start = {**keep, **ON, "HOME": str(empty), "XDG_CONFIG_HOME": str(empty / ".config")}
    subprocess.run(["git", "continuity", "status"], cwd=work, env=start, capture_output=True, start_new_session=True)
    pid = listening(work)
    own = {**keep, **ON, "HOME": str(mine), "XDG_CONFIG_HOME": str(mine / ".config")}
    done = subprocess.run(
        ["git", "continuity", "journal", "add", "who"],
        cwd=work,
        env=own,
        capture_output=True,
        text=True,
        start_new_session=True,
    )
    assert done.returncode == 0, done.stderr
    assert helper_of(work) == pid  # served by the helper started under the other HOME
    assert git(work, "log", "-1", "--format=%an <%ae>", "refs/continuity/main") == "Grace Hopper <grace@example.com>"


def test_the_helper_keeps_none_of_the_files_its_first_client_had_open(work: Path) -> None:
    reader, writer = os.pipe()
    subprocess.run(
        ["git", "continuity", "status"],
        cwd=work,
        env={**os.environ, **ON},
        capture_output=True,
        start_new_session=True,
        pass_fds=(writer,),
    )
    os.close(writer)
    listening(work)
    assert os.read(reader, 1) == b""  # no process holds the pipe's other end any more
    os.close(reader)


def test_ignored_signals_stay_ignored_and_a_broken_pipe_ends_alike(work: Path) -> None:
    client, command = slow_verify(work, ignore=signal.SIGHUP)
    client.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    assert not gone_now(command)
    os.kill(command, signal.SIGTERM)
    client.communicate(timeout=30)
    for i in range(30):  # 30 entries of 3,000 characters: more than a pipe holds (64 KiB)
        run(work, "journal", "add", f"a long enough line to fill the pipe, number {i}: " + "x" * 3000)
    script = "git continuity journal -n 30 --json | head -c 100 >/dev/null; echo ${PIPESTATUS[0]}"
    ends = [
        subprocess.run(
            ["bash", "-c", script],
            cwd=work,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            start_new_session=True,
        ).stdout
        for env in (ON, {"GIT_CONTINUITY_HELPER": "0"})
    ]
    assert ends == ["0\n", "0\n"]  # the reader left: no error, in the helper as in its own process


def test_an_interrupt_reaches_the_command_in_the_helper(work: Path) -> None:
    client, _ = slow_verify(work)
    client.send_signal(signal.SIGINT)
    assert client.communicate(timeout=30) == ("", "git-continuity: interrupted\n")
    assert client.returncode == 130


def test_the_off_switch_and_a_terminal_keep_commands_in_their_own_process(work: Path) -> None:
    assert run(work, "status", GIT_CONTINUITY_HELPER="off").code == 0
    assert sockets(work) == []
    child, terminal = pty.fork()
    if child == 0:  # a session whose controlling terminal is the pty, as a person's shell
        os.chdir(work)
        os.environ.update(ON)
        os.execvp("git", ["git", "continuity", "status"])
    output = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Objective  Ship 1.2" in output
    assert sockets(work) == []
    assert helper_of(work) is None


def test_an_idle_helper_leaves_and_so_does_one_whose_repository_is_gone(work: Path, tmp_path: Path) -> None:
    run(work, "status", GIT_CONTINUITY_HELPER_IDLE="1")
    pid = listening(work)
    assert gone(pid)
    assert sockets(work) == []
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(work), str(other))
    run(other, "init", "--no-fetch-refspecs", helper=False)
    run(other, "status")
    pid = listening(other)
    subprocess.run(["rm", "-rf", str(other)], check=True)
    assert gone(pid)


def test_each_command_in_one_helper_takes_the_stream_its_own_environment_names(work: Path) -> None:
    """The helper builds the command line once; the default of --stream is each client's own
    GIT_CONTINUITY_STREAM, never the one a client before it had."""
    run(work, "status")
    pid = listening(work)
    assert run(work, "init", "--no-fetch-refspecs", GIT_CONTINUITY_STREAM="side").code == 0
    for stream in ("side", "", "side", "main"):
        assert run(work, "journal", "add", f"for {stream or 'the default'}", GIT_CONTINUITY_STREAM=stream).code == 0
    assert helper_of(work) == pid
    side = run(work, "--stream", "side", "journal", helper=False).out
    main = run(work, "--stream", "main", "journal", helper=False).out
    assert sorted(line.split("  ", 2)[-1] for line in side.splitlines() if "for " in line) == ["for side", "for side"]
    assert sorted(line.split("  ", 2)[-1] for line in main.splitlines() if "for " in line) == [
        "for main",
        "for the default",
    ]


def test_a_command_the_helper_runs_imports_next_to_nothing_in_its_own_process(work: Path) -> None:
    """The client of every command an agent runs: the command's own script (not the one pip
    writes for an entry point, which imports re) and the standard library's C modules."""
    # PYTHONPROFILEIMPORTTIME: a fingerprint of its own, so a helper started alike serves it.
    run(work, "status", PYTHONPROFILEIMPORTTIME="1")
    pid = listening(work)
    done = run(work, "journal", "add", "served", PYTHONPROFILEIMPORTTIME="1")
    assert done.code == 0
    assert helper_of(work) == pid
    imported = [line.rsplit("|", 1)[1].strip() for line in done.err.splitlines() if line.startswith("import time:")]
    ours = [name for name in imported if name.startswith("git_continuity")]
    assert ours == [
        "git_continuity",
        "git_continuity.helper",
        "git_continuity.helper.door",
        "git_continuity.helper.place",
        "git_continuity.helper.peer",
    ]
    assert {"re", "enum", "subprocess", "pygit2", "typing"} & set(imported) == set()


def test_an_agents_hook_the_helper_runs_imports_next_to_nothing_in_its_own_process(work: Path) -> None:
    """The client of every hook an agent runs (a Stop here), as its launcher starts it: the
    hooks' own script, which imports no more than the command's."""
    hook = [str(Path(sys.executable).parent / "git-continuity-hook"), "agent", "claude", "stop"]
    env = {**os.environ, **ON, "PYTHONPROFILEIMPORTTIME": "1"}

    def stop() -> subprocess.CompletedProcess[str]:
        event = '{"session_id": "s-1", "hook_event_name": "Stop", "stop_hook_active": false}'
        return subprocess.run(
            hook, cwd=work, input=event, env=env, capture_output=True, text=True, start_new_session=True
        )

    stop()  # starts a helper of this fingerprint
    pid = listening(work)
    done = stop()
    assert (done.returncode, done.stdout) == (0, "{}\n")
    assert helper_of(work) == pid
    imported = [line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert [name for name in imported if name.startswith("git_continuity")] == [
        "git_continuity",
        "git_continuity.cli",
        "git_continuity.cli.hook_entry",
        "git_continuity.helper",
        "git_continuity.helper.door",
        "git_continuity.helper.place",
        "git_continuity.helper.peer",
    ]
    assert {"re", "enum", "subprocess", "pygit2", "typing"} & set(imported) == set()


def test_the_helper_splices_every_packet_it_writes(work: Path) -> None:
    """The helper loads libyaml once, so each of its copies splices a change into packet.yaml
    however small the packet (a process of its own splices only a large one: loading libyaml
    there costs what ruamel's round trip of a small packet does); both write the same text."""
    run(work, "status")
    pid = listening(work)
    assert any("/yaml/_yaml" in line for line in Path(f"/proc/{pid}/maps").read_text().splitlines())
    before = git(work, "show", "refs/continuity/main:.continuity/packet.yaml")
    assert run(work, "next", "push the fix").code == 0
    after = git(work, "show", "refs/continuity/main:.continuity/packet.yaml")
    assert after == before.replace("\nnext_action:\n", "\nnext_action: push the fix\n")
    assert run(work, "next", "then tag it", helper=False).code == 0
    assert git(work, "show", "refs/continuity/main:.continuity/packet.yaml") == after.replace(
        "push the fix", "then tag it"
    )


def spare_of(helper: int) -> int:
    """The helper's spare (helper/spare.py): a child waiting in the helper's own folder, once
    its memory is its own (a copy made by fork shares what it has not written: a spare shares
    next to nothing, once it copied it all, which this machine's kernel does)."""
    deadline = time.monotonic() + 20
    own = os.readlink(f"/proc/{helper}/cwd")
    while time.monotonic() < deadline:
        for child in Path(f"/proc/{helper}/task/{helper}/children").read_text().split():
            try:
                waiting = os.readlink(f"/proc/{child}/cwd") == own
                held = memory(int(child))
            except OSError:
                continue
            if waiting and held["Shared_Dirty"] < held["Private_Dirty"] // 10:
                return int(child)
        time.sleep(0.05)
    raise AssertionError(f"no spare under {helper} whose memory is its own")


def memory(pid: int) -> dict[str, int]:
    """kB by kind, from /proc/PID/smaps_rollup."""
    found = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, rest = line.partition(":")
        found[name] = int(rest.split()[0])
    return found


def test_the_next_command_is_run_by_a_spare_made_ahead_with_its_memory_already_its_own(work: Path) -> None:
    """Once a command ended, the helper forks a spare, which copies the helper's writable
    memory before any command comes (MADV_POPULATE_WRITE, this machine's kernel has it): the
    next command runs in it, and writes almost none of what it inherited."""
    (work / "who.sh").write_text(  # the nearest python process above the check: the command's
        'pid=$$\nwhile [ "$pid" -gt 1 ]; do\n'
        "  case $(cat /proc/$pid/comm) in python*) echo $pid >> who.txt; exit 0 ;; esac\n"
        "  pid=$(awk '/^PPid/ {print $2}' /proc/$pid/status)\ndone\n"
    )
    approve(work, "sh who.sh")
    run(work, "claim", "add", "who", "--check", "cmd:sh who.sh")
    helper = listening(work)
    spare = spare_of(helper)
    assert run(work, "verify").code == 0
    assert int((work / "who.txt").read_text().split()[0]) == spare  # the check ran under the spare
    assert gone(spare)
    assert spare_of(helper) != spare  # and the next is ready


def spares_of(helper: int) -> list[int]:
    """The helper's spares whose memory is their own (spare_of), as many as it keeps."""
    own = os.readlink(f"/proc/{helper}/cwd")
    found = []
    for child in Path(f"/proc/{helper}/task/{helper}/children").read_text().split():
        try:
            held = memory(int(child))
            if os.readlink(f"/proc/{child}/cwd") == own and held["Shared_Dirty"] < held["Private_Dirty"] // 10:
                found.append(int(child))
        except OSError:
            continue
    return found


def two_at_once(work: Path, helper: int) -> list[int]:
    """A command that waits (an agent's Stop hook, reading its event) taken by the helper's
    spare, and another while it waits, which finds no spare ready; then the helper's spares
    once it made them (two, or what it had after 20 s)."""
    first = spare_of(helper)
    waiting = subprocess.Popen(
        ["git", "continuity", "hook-impl", "agent", "claude", "stop"],
        cwd=work,
        env={**os.environ, **ON},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while os.readlink(f"/proc/{first}/cwd") != str(work.resolve()) and time.monotonic() < deadline:
        time.sleep(0.01)  # until the spare runs it, in the client's folder
    assert os.readlink(f"/proc/{first}/cwd") == str(work.resolve())
    assert run(work, "status").code == 0
    event = '{"session_id": "s", "hook_event_name": "Stop", "stop_hook_active": false}'
    assert waiting.communicate(event.encode())[1] is None and waiting.returncode == 0
    deadline = time.monotonic() + 20
    while len(spares_of(helper)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    return spares_of(helper)


def test_a_helper_whose_commands_come_closer_together_than_a_spare_is_made_keeps_two(work: Path) -> None:
    """One spare while commands come apart; once a command came with none ready (two at once
    here: the first takes the spare), two, made one after the other once the commands ended."""
    run(work, "status")
    helper = listening(work)
    first = spare_of(helper)
    time.sleep(0.5)
    assert spares_of(helper) == [first]  # one, however long it waits
    assert len(two_at_once(work, helper)) == 2
    assert gone(first)
    assert run(work, "status").code == 0
    deadline = time.monotonic() + 20
    while len(spares_of(helper)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(spares_of(helper)) == 2  # kept two


def sockets_of(pid: int) -> set[str]:
    """The sockets a process holds open, as /proc names them (socket:[inode])."""
    found = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            if (target := os.readlink(fd)).startswith("socket:"):
                found.add(target)
    return found


def test_a_spare_holds_no_socket_of_the_helper_so_closing_its_end_of_a_pair_ends_that_spare(work: Path) -> None:
    """A spare forked while another waits closes the helper's end of the other's pair, as it
    closes the listener: the helper then holds the only copy, and a spare it lets go (a
    command it could not hand) ends once the helper closes it, without a kill that might reach
    another process by the same pid."""
    run(work, "status")
    helper = listening(work)
    spares = two_at_once(work, helper)
    assert len(spares) == 2
    held = sockets_of(helper)
    assert [sockets_of(each) & held for each in spares] == [set(), set()]


def test_a_spares_command_makes_its_new_objects_in_memory_the_spare_made_ready() -> None:
    """The spare also makes Python's arenas for small objects ahead (spare.reserve): 3 MB of new
    objects, as a command makes, map no new arena, whose every page would cost a fault."""
    code = (
        "import sys\nfrom git_continuity.helper import spare\n"
        "kept = spare.reserve() if sys.argv[1] == 'reserved' else []\n"
        "sys._debugmallocstats()\n"
        "made = [(str(i) * 10, i * 7) for i in range(20_000)]\n"
        "sys._debugmallocstats()\n"
    )

    def arenas(how: str) -> list[int]:
        done = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=True)
        said = done.stderr.splitlines()
        return [int(line.rsplit("=", 1)[1]) for line in said if line.startswith("# arenas allocated current")]

    before, after = arenas("reserved")
    assert after == before
    before, after = arenas("none")
    assert after > before  # without it, the same objects map new arenas


def test_a_spare_goes_with_its_helper(work: Path) -> None:
    run(work, "status")
    helper = listening(work)
    spare = spare_of(helper)
    os.kill(helper, signal.SIGKILL)
    assert gone(helper) and gone(spare)  # killed with it

    run(work, "status", GIT_CONTINUITY_HELPER_IDLE="1")  # a helper that leaves once idle for a second
    helper = listening(work)
    run(work, "status", GIT_CONTINUITY_HELPER_IDLE="1")
    spare = spare_of(helper)
    assert gone(helper) and gone(spare)  # it left with the helper
