"""git continuity doctor: what it reads, what it says, what --fix repairs (issue 10), and a
lock left by a writer killed with kill -9 (issue 10, item 12)."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import approvals, cont, git, write_state

BAD_CLAIM = ".continuity/claims/c-222222.json"
BAD_TEXT = '{"id": "c-222222", "text": 5}\n'
QUARANTINED = ".continuity/quarantine/claims/c-222222.json"
NOTHING = (
    "doctor: nothing wrong (state refs, notes, tracking refs, locks, refspecs, git hooks, agent hooks,"
    " trust store, policy file, signing read)\n"
)


@pytest.fixture
def started(repo: Path) -> Path:
    assert cont(repo, "init").code == 0
    return repo


def test_a_healthy_repository(started: Path) -> None:
    ran = cont(started, "doctor")
    assert (ran.code, ran.out, ran.err) == (0, NOTHING, "")
    data = json.loads(cont(started, "doctor", "--json").out)
    assert data == {"ok": True, "findings": [], "repaired": []}


def test_a_repository_without_state_is_told_how_to_start_one(repo: Path) -> None:
    ran = cont(repo, "doctor")
    assert (ran.code, ran.out, ran.err) == (
        0,
        NOTHING + "\nAdvice (not problems)\n"
        "  state    refs/continuity/: no stream here yet, so there is no state to read\n"
        "           git continuity init starts one (git continuity pull takes in a remote's)\n",
        "",
    )


def test_bad_usage(started: Path) -> None:
    ran = cont(started, "doctor", "--fx")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err.endswith("error: unrecognized arguments: --fx\n")


def test_a_malformed_entry_is_moved_into_quarantine(started: Path) -> None:
    write_state(started, {BAD_CLAIM: BAD_TEXT, ".continuity/journal/stray.txt": "x\n"})
    tip = git(started, "rev-parse", "refs/continuity/main")
    ran = cont(started, "doctor")
    assert ran.code == 1
    assert ran.out.startswith("doctor: 5 problems (5 repaired by git continuity doctor --fix)\n")
    assert (
        "  state    refs/continuity/main: .continuity/journal/stray.txt: a file directly in .continuity/journal/,"
        " where only its folders belong\n"
        "           fix: git continuity doctor --fix moves it into quarantine (a new state commit)\n"
    ) in ran.out
    assert cont(started, "journal", "add", "x").code == 2  # nothing is written on top of it

    fixed = cont(started, "doctor", "--fix")
    new = git(started, "rev-parse", "refs/continuity/main")
    assert fixed.code == 0, fixed
    assert fixed.out.startswith(
        f"repaired  refs/continuity/main ({new[:7]}): {BAD_CLAIM} moved into .continuity/quarantine/\n"
        f"repaired  refs/continuity/main ({new[:7]}): .continuity/journal/stray.txt"
        " moved into .continuity/quarantine/\n"
        "\n" + NOTHING
    )
    # Nothing deleted: one commit on top, the files kept byte for byte in the quarantine.
    assert git(started, "rev-parse", "refs/continuity/main~1") == tip
    assert git(started, "show", f"refs/continuity/main:{QUARANTINED}") + "\n" == BAD_TEXT
    assert git(started, "show", "refs/continuity/main:.continuity/quarantine/journal/stray.txt") == "x"
    status = cont(started, "status")
    assert status.code == 0
    assert (
        "  2 files in quarantine, moved aside by doctor --fix and never read as state:"
        " git continuity quarantine list (show, restore or drop them)\n"
    ) in status.out
    assert cont(started, "journal", "add", "x").code == 0
    assert cont(started, "check").code == 0


def test_a_malformed_state_on_a_remote_is_repaired_by_a_fast_forward(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = remote_and_clone
    assert cont(work, "init").code == 0
    assert cont(work, "push").code == 0
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(bare), str(mate))
    assert cont(mate, "pull").code == 0
    # The hostile teammate commits a bad claim by hand and pushes it with plain git.
    hostile = tmp_path / "hostile"
    git(tmp_path, "clone", "-q", str(bare), str(hostile))
    git(hostile, "fetch", "-q", "origin", "refs/continuity/main:refs/continuity/main")
    bad = write_state(hostile, {BAD_CLAIM: BAD_TEXT})
    git(hostile, "push", "-q", "origin", "refs/continuity/main")
    assert git(bare, "rev-parse", "refs/continuity/main") == bad

    refused = cont(work, "pull")
    assert refused.code == 2
    assert refused.err.endswith(
        "Repair it: git continuity doctor --fix (moves the malformed files aside in a new commit on top),"
        " then git continuity push origin (a fast-forward).\n"
    )
    found = cont(work, "doctor")
    assert found.code == 1
    assert (
        f"  tracking refs/continuity-remotes/origin/main: {BAD_CLAIM} line 1: text: 5 is not of type 'string'\n"
        "           fix: git continuity doctor --fix, then git continuity push origin (a fast-forward)\n"
    ) in found.out

    fixed = cont(work, "doctor", "--fix")
    assert fixed.code == 1, fixed  # until the push: origin still has it
    assert (
        f"  tracking refs/continuity-remotes/origin/main: {BAD_CLAIM} line 1: text: 5 is not of type 'string'\n"
        "           fix: repaired here already; git continuity push origin repairs origin (a fast-forward)\n"
    ) in fixed.out
    repaired = git(work, "rev-parse", "refs/continuity/main")
    assert git(work, "rev-parse", "refs/continuity/main~1") == bad  # a commit on top of the bad one
    assert f"repaired  origin's main ({bad[:7]}), here as refs/continuity/main: fast-forward" in fixed.out
    assert "repaired  refs/continuity-remotes/origin/main: to repair origin: git continuity push origin\n" in fixed.out

    pushed = cont(work, "push")
    assert (pushed.code, pushed.out) == (0, f"To origin:\n  main: pushed {bad[:7]}..{repaired[:7]}\n")
    assert git(bare, "rev-parse", "refs/continuity/main") == repaired
    assert cont(work, "doctor").code == 0
    # The teammate's pull works again, and the bad claim is kept, aside.
    pulled = cont(mate, "pull")
    assert pulled.code == 0, pulled
    assert git(mate, "rev-parse", "refs/continuity/main") == repaired
    assert git(mate, "show", f"refs/continuity/main:{QUARANTINED}") + "\n" == BAD_TEXT
    assert cont(mate, "status").code == 0


def test_a_ref_file_holding_garbage_is_put_back(started: Path) -> None:
    assert cont(started, "journal", "add", "first").code == 0
    tip = git(started, "rev-parse", "refs/continuity/main")
    (started / ".git" / "refs" / "continuity" / "main").write_text("garbage\n")
    ran = cont(started, "status")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        "git-continuity: error: refs/continuity/main cannot be read (refs/continuity/main: corrupted loose reference"
        " file: refs/continuity/main); nothing was read or written.\n"
        "git continuity doctor names the state it last pointed at, and doctor --fix puts it back there\n"
    )
    found = cont(started, "doctor")
    assert found.code == 1
    assert (
        f"           fix: put it back on {tip[:7]}, the last commit its reflog names: git continuity doctor --fix\n"
    ) in found.out
    assert cont(started, "doctor", "--fix").code == 0
    assert git(started, "rev-parse", "refs/continuity/main") == tip
    assert cont(started, "status").code == 0


def test_a_broken_ref_is_removed_by_compare_and_swap_and_its_reflog_stays(started: Path) -> None:
    from git_continuity import repo as gitrepo

    assert cont(started, "journal", "add", "first").code == 0
    ref, log = (started / ".git" / where / "refs" / "continuity" / "main" for where in ("", "logs"))
    logged = log.read_bytes()
    opened = gitrepo.open_repo(started)
    assert gitrepo.remove_broken_ref(opened, "refs/continuity/main") is False  # it reads: left alone
    assert ref.is_file()
    ref.write_text("garbage\n")
    lock = ref.with_name("main.lock")
    lock.write_text("")  # another writer holds the ref
    with pytest.raises(gitrepo.RefMoved):
        gitrepo.remove_broken_ref(opened, "refs/continuity/main")
    assert ref.read_text() == "garbage\n"
    lock.unlink()
    assert gitrepo.remove_broken_ref(opened, "refs/continuity/main") is True
    assert (ref.exists(), lock.exists(), log.read_bytes()) == (False, False, logged)


def test_a_notes_ref_at_a_blob(started: Path) -> None:
    assert cont(started, "claim", "add", "x", "--check", "commit:HEAD").code == 0
    notes = git(started, "rev-parse", "refs/notes/continuity")
    blob = git(started, "hash-object", "-w", "--stdin")
    (started / ".git" / "refs" / "notes" / "continuity").write_text(blob + "\n")
    state = git(started, "rev-parse", "refs/continuity/main")
    ran = cont(started, "claim", "add", "y", "--check", "commit:HEAD")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        f"git-continuity: error: refs/notes/continuity points at {blob[:7]}, which is not a commit; nothing was"
        " written.\nPut it back on its last notes commit: git continuity doctor --fix\n"
    )
    assert git(started, "rev-parse", "refs/continuity/main") == state  # the claim was not written either
    assert cont(started, "show").code == 2
    assert cont(started, "doctor", "--fix").code == 0
    assert git(started, "rev-parse", "refs/notes/continuity") == notes
    assert cont(started, "show").code == 0


HOLD = """
import sys, time
from git_continuity import repo as git
from git_continuity.repo import refs
repo = git.open_repo(sys.argv[1])
ref = "refs/continuity/main"
tip = refs.ref_target(repo, ref)
real = refs.ref_target
def slow(r, name):  # inside the lock: the moment a writer can be killed
    if name == ref:
        print("locked", flush=True)
        time.sleep(600)
    return real(r, name)
refs.ref_target = slow
refs.compare_and_swap(repo, ref, tip, tip, "held")
"""


@pytest.mark.parametrize("ref", ["refs/continuity/main"])
def test_a_writer_killed_with_its_lock_held(started: Path, ref: str) -> None:
    writer = subprocess.Popen([sys.executable, "-c", HOLD, str(started)], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "locked\n"
    lock = started / ".git" / f"{ref}.lock"
    assert lock.is_file()
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    before = git(started, "rev-parse", ref)

    began = time.monotonic()
    ran = cont(started, "journal", "add", "more")
    took = time.monotonic() - began
    assert (ran.code, ran.out) == (2, "")
    assert re.sub(r", \d s old, ", ", N s old, ", ran.err) == (
        f"git-continuity: error: {ref} is locked: {lock}, N s old, left by process {writer.pid} on"
        f" {socket.gethostname()}, which no longer runs; nothing was written.\n"
        "Clear it with: git continuity doctor --fix\n"
    )
    assert took < 3, took  # at once, not after 50 tries (6-8 s before)
    assert git(started, "rev-parse", ref) == before

    fixed = cont(started, "doctor", "--fix")
    assert fixed.code == 0, fixed
    assert fixed.out.startswith(f"repaired  {lock}: removed (its writer is gone)\n")
    assert not lock.exists()
    assert cont(started, "journal", "add", "more").code == 0


def test_git_hooks_whose_python_is_gone(started: Path) -> None:
    assert cont(started, "hooks", "install").code == 0
    hook = started / ".git" / "hooks" / "commit-msg"
    hook.write_text(re.sub("^python='.*'$", "python='/nowhere/python3'", hook.read_text(), flags=re.MULTILINE))
    ran = cont(started, "doctor")
    assert ran.code == 1
    fallback = subprocess.run(["sh", "-c", "command -v git-continuity"], capture_output=True, text=True).stdout.strip()
    assert (
        f"  hook     {hook}: runs /nowhere/python3, which does not exist; it falls back to {fallback} from PATH\n"
        "           fix: git continuity hooks install (records this Python)\n"
    ) in ran.out
    assert cont(started, "hooks", "install").code == 0
    assert cont(started, "doctor").out == NOTHING


def test_agent_hooks_whose_command_cannot_start(started: Path, tmp_path: Path) -> None:
    assert cont(started, "agent", "install", "claude").code == 0
    settings = started / ".claude" / "settings.json"
    assert cont(started, "doctor").out == NOTHING
    (started / ".git" / "continuity" / "agents" / "hook-program").write_text("/gone/bin/git-continuity-hook\n")
    ran = cont(started, "doctor")
    assert (ran.code, ran.out) == (
        0,
        NOTHING.rstrip("\n") + "\n\nAdvice (not problems)\n"
        f"  agent    {settings}: the claude hooks' recorded /gone/bin/git-continuity-hook is gone; they run"
        " git-continuity-hook from PATH\n           git continuity agent install claude\n",
    )
    # With the tool on no PATH either, the hooks cannot start: the agent would go on without them.
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "git_continuity", "doctor"], cwd=started, env=env, capture_output=True, text=True
    )
    assert done.returncode == 1, done
    assert (
        f"  agent    {settings}: the claude hooks cannot run: git-continuity-hook is neither at"
        " /gone/bin/git-continuity-hook nor on PATH, so this session gets no continuity brief, no closure gate and"
        " no handoff; install git-continuity where this agent finds it (or run: git continuity agent install"
        " claude)\n"
        "           fix: install git-continuity where the agent finds it, then: git continuity agent install claude\n"
    ) in done.stdout


def test_a_trust_store_and_a_policy_that_cannot_be_read(started: Path) -> None:
    approvals(started).parent.mkdir(parents=True, exist_ok=True)
    approvals(started).write_text("{nope")
    (started / ".continuity.yaml").write_text("closing_keywords: &k [closes]\n")
    ran = cont(started, "doctor", "--json")
    assert ran.code == 1
    found = {f["area"]: f for f in json.loads(ran.out)["findings"]}
    assert set(found) == {"trust", "policy"}
    assert found["policy"]["problem"] == (
        "line 1: anchors and aliases (&name, *name) are not allowed here: write each value out"
    )
    assert found["trust"]["where"] == str(approvals(started))


def test_what_would_refuse_every_write_is_named_before_one_is_tried(started: Path) -> None:
    """doctor said "nothing wrong" while every write was refused: a broken allowed-signers line,
    a signing key others can read, a configured key that is not there, a setting that is
    neither true nor false (which stopped doctor itself)."""
    allowed = Path(os.environ["XDG_CONFIG_HOME"]) / "git-continuity" / "allowed_signers"
    key = Path(os.environ["XDG_CONFIG_HOME"]) / "git-continuity" / "signing_ed25519"
    kept = allowed.read_text()

    def finding() -> tuple[int, str]:
        ran = cont(started, "doctor")
        lines = [line for line in ran.out.splitlines() if "signing  state commits" in line or "fix:" in line]
        return ran.code, "\n".join(line.strip() for line in lines)

    allowed.write_text(kept + "garbage line here\n")
    assert finding() == (
        1,
        f"signing  state commits: {allowed} line 2: expected PRINCIPALS [OPTIONS] KEYTYPE BASE64 (git's"
        " allowed-signers format); nothing was read or written.\n"
        "fix: Fix the line or remove it: each line is an e-mail, then the key as KEYTYPE BASE64 (what .pub files hold)",
    )
    allowed.write_text(kept)
    key.chmod(0o640)
    code, said = finding()
    assert code == 1 and said.startswith(
        f"signing  state commits: {key}: other users can read or change this signing key"
    )
    fix = f"fix: chmod 600 {key} (or remove it and its .pub: a new key is made, and teammates must trust the new one)"
    assert said.endswith(fix)
    key.chmod(0o600)
    git(started, "config", "user.signingKey", "/nonexistent")
    git(started, "config", "gpg.format", "ssh")
    code, said = finding()
    assert code == 1 and said.startswith(
        "signing  state commits: user.signingKey (/nonexistent) is not an SSH key ssh-keygen can sign with"
    )
    git(started, "config", "--unset", "user.signingKey")
    git(started, "config", "continuity.sign", "maybe")
    assert finding() == (
        1,
        "signing  state commits: git config continuity.sign is 'maybe': true or false (git config continuity.sign"
        " false turns signing off)\nfix: fix what it names",
    )
    git(started, "config", "--unset", "continuity.sign")
    assert cont(started, "doctor").out == NOTHING
