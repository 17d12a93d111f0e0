"""What the command line does when the machine, not the input, is at fault: the current
folder removed, a read-only repository, an output encoding that cannot hold the state's
text, a Ctrl-C that reaches the command being checked too. One line naming what and where
(or the text shown with what cannot be encoded escaped), an exit code, and the state as it
was."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import BIN, approve, git, untouched


def gc(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "git-continuity"), *args],
        cwd=cwd,
        capture_output=True,
        encoding=env.get("PYTHONIOENCODING", "utf-8"),
        env={**os.environ, **env},
    )


@pytest.fixture
def started(repo: Path) -> Path:
    assert gc(repo, "init").returncode == 0
    assert gc(repo, "claim", "add", "café ☕", "--check", "commit:HEAD").returncode == 0
    return repo


def everything(repo: Path) -> tuple[object, ...]:
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/continuity/", "refs/notes/")
    return untouched(repo), refs


@pytest.mark.parametrize("args", [("status",), ("journal", "add", "x")])
def test_a_removed_current_folder_is_named_not_a_traceback(started: Path, args: tuple[str, ...]) -> None:
    before = everything(started)
    gone = started / "gone"
    gone.mkdir()
    # The process starts in the folder, which is then removed under it (a shell left in it).
    done = subprocess.run(
        ["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" "$@"', str(BIN / "git-continuity"), *args],
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        "git-continuity: error: the current folder no longer exists (removed or moved away); "
        "change to a folder that does and run it again\n",
    )
    assert everything(started) == before


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="mounts read-only as root")
@pytest.mark.parametrize(
    ("where", "refused"),
    [
        (".", "failed to create temporary file '{repo}/.git/objects/tmp_object_git2_XXXXXX'"),
        (".git/refs", "failed to create locked file '{repo}/.git/refs/continuity/main.lock'"),
    ],
)
def test_a_read_only_repository_names_the_file_and_the_reason(started: Path, where: str, refused: str) -> None:
    before = everything(started)
    read_only = 'mount --bind -o ro "$0" "$0" && cd "$1" && shift && exec "$@"'
    command = ["unshare", "-m", "sh", "-c", read_only, str(started / where), str(started), str(BIN / "git-continuity")]
    done = subprocess.run(
        [*command, "journal", "add", "x"],
        capture_output=True,
        text=True,
    )
    if "mount" in done.stderr:
        pytest.skip(f"cannot mount here: {done.stderr}")
    err = re.sub(r"tmp_object_git2_\w+", "tmp_object_git2_XXXXXX", done.stderr)
    expected = "git-continuity: error: " + refused.format(repo=started) + ": Read-only file system\n"
    assert (done.returncode, done.stdout, err) == (2, "", expected)
    assert everything(started) == before


def test_a_claim_echoed_where_the_encoding_cannot_hold_it_is_escaped(repo: Path) -> None:
    assert gc(repo, "init").returncode == 0
    added = gc(repo, "claim", "add", "café ☕", "--check", "commit:HEAD", PYTHONIOENCODING="latin-1")
    head = git(repo, "rev-parse", "HEAD")
    assert (added.returncode, re.sub(r"c-\w{6}", "c-XXXXXX", added.stdout), added.stderr) == (
        0,
        f"Recorded claim c-XXXXXX: café \\u2615\n  handle  commit:{head[:12]}\\u2026  (as written: commit:HEAD)\n"
        f"  now     verified: commit {head[:7]} exists here\n",
        "",
    )


@pytest.mark.parametrize(
    ("env", "cafe"),
    [
        ({"PYTHONIOENCODING": "latin-1"}, "café \\u2615"),
        ({"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}, "caf\\u00e9 \\u2615"),
    ],
)
def test_state_the_output_encoding_cannot_hold_is_shown_escaped(started: Path, env: dict[str, str], cafe: str) -> None:
    before = everything(started)
    shown = gc(started, "status", **env)
    assert (shown.returncode, shown.stderr) == (0, "")
    assert re.findall(r"  verified  c-\w{6}  (.*)\n", shown.stdout) == [cafe]
    as_json = gc(started, "status", "--json", **env)
    assert (as_json.returncode, as_json.stderr) == (0, "")
    assert as_json.stdout.isascii() or env.get("PYTHONIOENCODING") == "latin-1"
    assert [c["text"] for c in json.loads(as_json.stdout)["claims"]] == ["café ☕"]
    assert everything(started) == before


def test_a_ctrl_c_that_reaches_the_command_too_records_nothing(started: Path) -> None:
    command = "echo $$ > pid; exec sleep 30"
    approve(started, command)
    assert gc(started, "claim", "add", "slow", "--check", f"cmd:{command}").returncode == 0
    before = everything(started)
    verify = subprocess.Popen(
        [str(BIN / "git-continuity"), "verify"],
        cwd=started,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    pid = started / "pid"
    for _ in range(400):  # until the check runs
        if pid.exists() and pid.read_text().strip():
            break
        time.sleep(0.05)
    # Ctrl-C as it reaches both: the command's group (its own session) and the verifier's.
    os.killpg(int(pid.read_text()), signal.SIGINT)
    os.killpg(verify.pid, signal.SIGINT)
    out, err = verify.communicate(timeout=30)
    assert (verify.returncode, out, err) == (130, "", "git-continuity: interrupted\n")
    pid.unlink()
    assert everything(started) == before
