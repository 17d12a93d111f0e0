"""What the helper's tests share: commands run as an agent runs them (a fresh process, no
controlling terminal, the helper on or off), the helper processes of this machine found by
their command line, and the probe that tells which process a `cmd:` check ran under."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import Ran, approve, commit, helpers

ON = {"GIT_CONTINUITY_HELPER": "1", "GIT_CONTINUITY_HELPER_IDLE": "60"}


def run(cwd: Path, *args: str, helper: bool = True, **env: str) -> Ran:
    settings = {**os.environ, **(ON if helper else {"GIT_CONTINUITY_HELPER": "0"}), **env}
    done = subprocess.run(
        ["git", "continuity", *args], cwd=cwd, env=settings, capture_output=True, text=True, start_new_session=True
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def helpers_of(repo: Path) -> list[int]:
    folder = str(repo / ".git" / "continuity")
    return sorted(pid for pid, served in helpers().items() if served == folder and not gone_now(pid))


def helper_of(repo: Path) -> int | None:
    pids = helpers_of(repo)
    assert len(pids) <= 1, pids
    return pids[0] if pids else None


def sockets(repo: Path) -> list[Path]:
    return sorted((repo / ".git" / "continuity").glob("helper*.sock"))


def listening(repo: Path, besides: tuple[int, ...] = ()) -> int:
    """Wait for a helper of the repository (other than ``besides``, each listening already) to
    listen; its pid. A helper listens once warmed: its socket is then one more that answers."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pids = [pid for pid in helpers_of(repo) if pid not in besides]
        if len(pids) == 1 and len([path for path in sockets(repo) if answers(path)]) > len(besides):
            return pids[0]
        time.sleep(0.05)
    raise AssertionError(f"no helper listens for {repo}: {helpers()}")


def answers(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    back = os.open(".", os.O_RDONLY)
    try:
        os.chdir(path.parent)  # a deep checkout's path is longer than a socket's may be
        probe.connect(path.name)
    except OSError:
        return False
    finally:
        os.fchdir(back)
        os.close(back)
        probe.close()
    return True


def gone_now(pid: int) -> bool:
    try:
        return "Z" in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]
    except OSError:
        return True


def gone(pid: int) -> bool:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if gone_now(pid):
            return True
        time.sleep(0.05)
    return False


# The parent of the Python process the command ran in, its nearest ancestor named python*
# (a command in the helper runs in a fork of the helper's python3; a command in its own
# process is named git-continuity, so the nearest is a farther one, never the helper).
PROBE = """pid=$$
while [ "$pid" -gt 1 ]; do
  case $(cat /proc/$pid/comm) in python*) awk '/^PPid/ {print $2}' /proc/$pid/status >> "$1"; exit 0 ;; esac
  pid=$(awk '/^PPid/ {print $2}' /proc/$pid/status)
done
echo 0 >> "$1"
"""


@pytest.fixture
def work(repo: Path) -> Path:
    run(repo, "init", "--no-fetch-refspecs", helper=False)
    run(repo, "objective", "set", "Ship 1.2", "--why", "users wait", helper=False)
    (repo / "probe.sh").write_text(PROBE)
    commit(repo, "probe", {"probe.sh": (repo / "probe.sh").read_text()})
    approve(repo, "sh probe.sh ran.txt")
    assert run(repo, "claim", "add", "the probe runs", "--check", "cmd:sh probe.sh ran.txt", helper=False).code == 0
    return repo


def runs_in_helper(repo: Path, **env: str) -> list[int]:
    """The parents of the processes a `cmd:` check ran in (verify runs them), one per run: the helper's pid
    when the command ran in a copy of it, 0 when in a process of its own."""
    (repo / "ran.txt").unlink(missing_ok=True)
    done = run(repo, "verify", **env)  # type: ignore[arg-type]  # env holds variables, never "helper"
    assert done.code == 0, done
    return [int(line) for line in (repo / "ran.txt").read_text().split()]


def wait_for_child_of(pid: int) -> int:
    """The helper's copy running a command: a child in its client's folder (a spare waiting
    for the next command, helper/spare.py, is in the helper's own)."""
    deadline = time.monotonic() + 20
    own = os.readlink(f"/proc/{pid}/cwd")
    while time.monotonic() < deadline:
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            with contextlib.suppress(OSError):
                if os.readlink(f"/proc/{child}/cwd") != own:
                    return int(child)
        time.sleep(0.05)
    raise AssertionError("the helper started no command")
