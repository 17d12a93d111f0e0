"""What the command line does with arguments that are not text and with output it cannot
write: one line naming the problem and an exit code, never a traceback, and nothing written
to the state for a refused argument."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import BIN, approve, git


def gc(cwd: Path, *args: str | bytes, stdout: int | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [str(BIN / "git-continuity"), *args], cwd=cwd, capture_output=stdout is None, stdout=stdout, stderr=None
    )


@pytest.fixture
def started(repo: Path) -> Path:
    assert gc(repo, "init").returncode == 0
    return repo


def test_an_argument_that_is_not_utf8_is_refused_naming_it(started: Path) -> None:
    state = git(started, "rev-parse", "refs/continuity/main")
    done = gc(started, "journal", "add", b"caf\xe9 au lait")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode() == (
        "git-continuity: error: argument 3 is not UTF-8 (byte 0xe9 at character 4); nothing was written."
        " Give the text in UTF-8.\n"
    )
    assert git(started, "rev-parse", "refs/continuity/main") == state


def test_output_that_cannot_be_written_is_one_line_not_a_traceback(started: Path) -> None:
    with open("/dev/full", "wb") as full:
        done = subprocess.run([str(BIN / "git-continuity"), "status"], cwd=started, stdout=full, stderr=subprocess.PIPE)
    assert (done.returncode, done.stderr.decode()) == (
        2,
        "git-continuity: error: cannot write the output: No space left on device\n",
    )


@pytest.mark.parametrize("given", ["0", "-1", "601"])
def test_the_timeout_range_and_its_message_agree(started: Path, given: str) -> None:
    done = gc(started, "verify", "--timeout", given)
    assert (done.returncode, done.stderr.decode()) == (
        2,
        f"git-continuity: error: --timeout {given} is out of range: give more than 0 seconds and at most 600\n",
    )


def verifying(started: Path) -> tuple[subprocess.Popen[bytes], int]:
    """`verify` running a command check that waits (its pid written first): the process, and
    the check's pid."""
    import time

    command = "echo $$ > pid; exec sleep 30"
    approve(started, command)
    assert gc(started, "claim", "add", "slow", "--check", f"cmd:{command}").returncode == 0
    (started / "pid").unlink(missing_ok=True)
    child = subprocess.Popen([str(BIN / "git-continuity"), "verify"], cwd=started, stderr=subprocess.PIPE)
    for _ in range(200):  # until the check runs
        if (started / "pid").exists() and (started / "pid").read_text().strip():
            break
        time.sleep(0.05)
    return child, int((started / "pid").read_text())


def assert_ended(pid: int) -> None:
    """The command check ends within 5 s (else it is killed, and the test fails)."""
    import os
    import signal
    import time

    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("the command check was left running")


def test_ctrl_c_during_verify_ends_the_command_check_and_says_so(started: Path) -> None:
    import signal

    child, pid = verifying(started)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=20)
    assert (child.returncode, err.decode()) == (
        130,
        "git-continuity: interrupted\n",
    )
    assert_ended(pid)


def test_a_client_killed_while_its_verify_runs_a_command_check_ends_that_check_too(started: Path) -> None:
    """The helper's copy that runs `verify` learns its client died (SIGIO, its end of the
    connection closed) and ends as a Ctrl-C ends it: the command check it started, in a session
    of its own, is ended with it, not left running. A Ctrl-C that reached the client before it
    could pass it on ended the client alone, and left the check running."""
    child, pid = verifying(started)
    child.kill()
    child.communicate(timeout=20)
    assert_ended(pid)


def test_a_claim_given_two_checks_is_refused_not_cut_to_one(started: Path) -> None:
    state = git(started, "rev-parse", "refs/continuity/main")
    done = gc(started, "claim", "add", "two", "--check", "commit:HEAD", "--check", "tag:v1")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.decode().splitlines()[-1] == (
        "git continuity claim add: error: --check may be given once here; see -h"
    )
    assert git(started, "rev-parse", "refs/continuity/main") == state
