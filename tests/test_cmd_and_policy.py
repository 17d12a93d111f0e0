"""The ``cmd:`` handle (trust, timeout, captured output, staleness, state from elsewhere) and the
repository policy file ``.continuity.yaml``."""

from __future__ import annotations

import json
import re
import subprocess
import zlib
from collections.abc import Callable
from pathlib import Path

import conftest
import pytest
from conftest import Ran, commit, cont, git, state_refs

FAKE_TOKEN = "fake-token-4f3a9c2e1b7d"  # matches no token pattern: redacted for its variable's name
GHP = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"  # printed by the command, never written in it
Run = Callable[..., Ran]


def run(cwd: Path, *args: str) -> Ran:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True)
    return Ran(done.returncode, done.stdout, done.stderr)


class Cli(conftest.Cli):
    def claims(self, cwd: Path) -> dict[str, dict[str, str]]:
        """Every claim by its text, as status --json shows it."""
        return {c["text"]: c for c in json.loads(self.ok(cwd, "status", "--json"))["claims"]}

    def verified(self, cwd: Path, *ids: str) -> dict[str, tuple[str, str]]:
        """verify --json: each claim's (state, observed), the time a command took left out."""
        done = self.run(cwd, "verify", *ids, "--json")
        assert done.err == ""
        return {c["text"]: (c["state"], took(c["observed"])) for c in json.loads(done.out)["claims"]}


@pytest.fixture
def gc(inproc: Run) -> Cli:
    return Cli(inproc)


def took(text: str) -> str:
    return re.sub(r"^exit (\d+) in \d+\.\ds ", r"exit \1 in Ts ", text)


def approve_line(command: str) -> str:
    return conftest.NOT_APPROVED


def tree(cwd: Path) -> str:
    """The tree the work tree holds (all its files are committed in these tests)."""
    assert git(cwd, "status", "--porcelain", "--untracked-files=all") == ""
    return git(cwd, "rev-parse", "HEAD^{tree}")[:7]


@pytest.fixture
def started(gc: Cli, repo: Path) -> Path:
    gc.ok(repo, "init")
    return repo


# -- trust ------------------------------------------------------------------------------------


def test_a_command_never_runs_until_approved_here(gc: Cli, started: Path, tmp_path: Path) -> None:
    marker = tmp_path / "it-ran"
    command = f"touch {marker}"
    added = cont(started, "claim", "add", "the suite ran", "--check", f"cmd:{command}")
    assert added.out.splitlines()[1:] == [
        f"  handle  cmd:{command}",
        "  now     unchecked: it runs only once approved on this machine: a person's act, at their terminal, then"
        " verify",
    ]
    tid = gc.thread(started, "Run it", f"cmd:{command}")
    gc.ok(started, "hooks", "install")
    # Approval is of one exact command: approving another approves nothing else.
    conftest.approve(started, f"touch {marker}-other")

    assert gc.verified(started) == {
        "the suite ran": ("unknown", approve_line(command)),
        f"cmd:{command}": ("unknown", approve_line(command)),
    }
    closed = cont(started, "thread", "close", tid)
    assert closed.code == 1 and approve_line(command) in closed.out
    assert cont(started, "check", "--closing").code == 1
    blocked = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert blocked.code == 1 and approve_line(command) in blocked.err
    assert cont(started, "status").code == 0
    assert not marker.exists()

    refused = cont(started, "trust", "allow", command)  # an agent's call: no terminal
    assert (refused.code, refused.out) == (2, "")
    assert refused.err.startswith("git-continuity: error: trust allow is a person's decision: run it at a terminal.")
    approved = conftest.at_a_terminal(started, "trust", "allow", command)
    assert (approved.code, conftest.flat(approved.out)) == (
        0,
        conftest.flat(
            f"Approved on this machine: {command}\n  (kept in {conftest.approvals(started)}, outside the repository,"
            " never synced)\nClaims that check it show their last result until git continuity verify runs it.\n"
        ),
    )
    listed = json.loads(gc.ok(started, "trust", "list", "--json"))["commands"]
    assert [(e["command"], e["by"]) for e in listed] == [
        (command, "Ada Agent <ada@example.com>"),
        (f"touch {marker}-other", "Ada Agent <ada@example.com>"),
    ]
    assert gc.verified(started) == {
        "the suite ran": ("verified", f"exit 0 in Ts on work tree {tree(started)}"),
        f"cmd:{command}": ("verified", f"exit 0 in Ts on work tree {tree(started)}"),
    }
    assert marker.exists()


def test_a_command_that_hangs_times_out_as_unknown(gc: Cli, started: Path) -> None:
    commit(started, "Policy", {".continuity.yaml": "# the suite is quick here\ncmd_timeout: 1s\n"})
    command = "echo started; sleep 30"
    gc.ok(started, "claim", "add", "the suite passes", "--check", f"cmd:{command}")
    conftest.approve(started, command)
    done = cont(started, "verify", "--json")
    assert done.code == 1
    (claim,) = json.loads(done.out)["claims"]
    assert (claim["state"], claim["observed"]) == (
        "unknown",
        f"timed out after 1s on work tree {tree(started)}; output:\nstarted",
    )


def test_output_is_captured_capped_and_redacted(
    gc: Cli, started: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_TOKEN)
    leaky = "seq 1 30; echo \"token=$GITHUB_TOKEN\"; printf 'gh%s_%s\\n' p ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789; exit 3"
    wide = "python -c \"print('x' * 2000)\""
    tid = gc.thread(started, "Release", f"cmd:{leaky}")
    gc.ok(started, "claim", "add", "a wide line", "--check", f"cmd:{wide}")
    conftest.approve(started, leaky)
    conftest.approve(started, wide)
    gc.ok(started, "hooks", "install")
    here = tree(started)
    shown = "\n".join(str(n) for n in range(21, 31)) + "\ntoken=[redacted]\n[redacted]"  # the last 12 lines

    said: list[str] = []

    def seen(done: Ran) -> Ran:
        said.append(done.out + done.err)
        return done

    assert gc.verified(started) == {
        f"cmd:{leaky}": ("contradicted", f"exit 3 in Ts on work tree {here}; output:\n{shown}"),
        "a wide line": ("verified", f"exit 0 in Ts on work tree {here}; output:\n…" + "x" * 1500),
    }
    said.append(cont(started, "verify", "--json").out)
    status = seen(cont(started, "status"))
    # a thread's check: its observation's lines under the check's column (6 + "contradicted  ")
    assert "\n                    token=[redacted]\n                    [redacted]\n" in status.out
    closing = seen(cont(started, "thread", "close", tid))
    assert closing.code == 1 and "token=[redacted]" in closing.out
    blocked = seen(run(started, "git", "commit", "--allow-empty", "-m", f"Release; closes {tid}"))
    assert blocked.code == 1 and "token=[redacted]" in blocked.err
    seen(cont(started, "check", "--closing", "--json"))
    seen(cont(started, "log"))
    history = git(started, "log", "-p", "refs/continuity/main")
    assert "token=[redacted]" in history  # the evidence is there, masked

    for secret in (FAKE_TOKEN, GHP):
        assert not [text for text in said if secret in text]
        assert secret not in history
        assert secret not in git(started, "log", "-p", "--all", "--notes=continuity")
        assert secret not in anywhere_under(started / ".git"), secret


def anywhere_under(folder: Path) -> str:
    """Every file under folder as text, loose objects inflated, plus every object's content."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if path.parent.parent.name == "objects" and len(path.parent.name) == 2:
                data = zlib.decompress(data)
            found.append(data.decode(errors="replace"))
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=folder, capture_output=True, check=True
    )
    found.append(objects.stdout.decode(errors="replace"))
    return "\n".join(found)


def test_evidence_of_a_command_turns_stale_when_the_files_change(gc: Cli, started: Path) -> None:
    command = "test -f README"
    gc.ok(started, "claim", "add", "the readme is there", "--check", f"cmd:{command}")
    conftest.approve(started, command)
    here = tree(started)
    assert gc.verified(started) == {"the readme is there": ("verified", f"exit 0 in Ts on work tree {here}")}

    readme = started / "README"
    readme.write_text("hello, changed\n")
    claim = gc.claims(started)["the readme is there"]
    assert (
        claim["state"],
        took(claim["observed"].removeprefix("worktree moved since it was verified just now: ")),
    ) == (
        "stale",
        f"exit 0 in Ts on work tree {here}",
    )
    assert claim["observed"].startswith("worktree moved since it was verified just now: exit 0 in ")
    (started / "NEW").write_text("untracked files count too\n")
    readme.write_text("hello\n")
    assert gc.claims(started)["the readme is there"]["state"] == "stale"
    (started / "NEW").unlink()
    # The same files again: the evidence applies again.
    assert gc.claims(started)["the readme is there"]["state"] == "verified"


def test_a_gate_does_not_run_a_command_again_on_the_same_files(gc: Cli, started: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    command = f"echo run >> {runs}"
    tid = gc.thread(started, "Suite", f"cmd:{command}")
    conftest.approve(started, command)
    assert cont(started, "verify").code == 0
    assert runs.read_text() == "run\n"
    assert cont(started, "check", "--closing").code == 0
    assert runs.read_text() == "run\n"  # fresh evidence on this very tree was reused
    assert cont(started, "thread", "close", tid).code == 0
    assert runs.read_text() == "run\n"  # and again by the close
    (closed,) = json.loads(gc.ok(started, "status", "--json"))["threads"]
    assert (closed["id"], closed["status"]) == (tid, "done")


def test_state_from_another_clone_never_runs_its_commands_here(gc: Cli, remote_and_clone: tuple[Path, Path]) -> None:
    bare, theirs = remote_and_clone
    command = "touch it-ran"
    gc.ok(theirs, "init")
    tid = gc.thread(theirs, "Run their suite", f"cmd:{command}")
    conftest.approve(theirs, command)  # approved there: that approval never travels
    git(theirs, "push", "-q", "origin", "refs/continuity/main")

    ours = bare.parent / "ours"
    git(bare.parent, "clone", "-q", str(bare), str(ours))
    git(ours, "fetch", "-q", "origin", "refs/continuity/*:refs/continuity/*")
    assert state_refs(ours) == state_refs(theirs)
    gc.ok(ours, "hooks", "install")
    cid = gc.claims(ours)[f"cmd:{command}"]["id"]
    refused = f"  unknown  {cid}  cmd:{command}\n           {approve_line(command)}\n"

    assert gc.claims(ours)[f"cmd:{command}"]["state"] == "unchecked"  # status never runs a command
    assert cont(ours, "status").code == 0
    assert gc.verified(ours) == {f"cmd:{command}": ("unknown", approve_line(command))}
    gate = cont(ours, "check", "--closing")
    assert gate.code == 1 and refused in gate.out
    closing = cont(ours, "thread", "close", tid)
    assert closing.code == 1 and refused in closing.out
    blocked = run(ours, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert blocked.code == 1 and refused in blocked.err
    git(ours, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"closes {tid}")
    pushed = run(ours, "git", "push", "origin", "main")
    assert pushed.code == 1 and refused in pushed.err
    assert run(ours, "git", "commit", "-q", "--amend", "--allow-empty", "-m", "reworded").code == 0
    assert run(ours, "git-continuity-hook", "state").code == 0
    assert not (ours / "it-ran").exists()
    assert not (theirs / "it-ran").exists()

    # Approved here, it runs here.
    conftest.approve(ours, command)
    assert gc.verified(ours)[f"cmd:{command}"][0] == "verified"
    assert (ours / "it-ran").exists()


# -- the policy file --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("policy", "error"),
    [
        (
            "closing_keywords: [closes, ships\ncmd_timeout: 5m\n",
            "line 2: not valid YAML: expected ',' or ']', but got ':'",
        ),
        (
            "# our policy\nclosing_keywords: [ships]\nclosing_checkz: ['clean:']\n",
            "line 3: closing_checkz: unknown key 'closing_checkz'",
        ),
        (
            "cmd_timeout: 5 minutes\n",
            "line 1: cmd_timeout: '5 minutes' is not in the expected form"
            " (a whole number and a unit, s, m, h or d: 90s, 10m, 8h, 2d; at most 99999)",
        ),
        (
            "evidence_max_age:\n  default: 24h\n  cmd: soon\n",
            "line 3: evidence_max_age.cmd: 'soon' is not in the expected form"
            " (a whole number and a unit, s, m, h or d: 90s, 10m, 8h, 2d; at most 99999)",
        ),
    ],
    ids=["invalid-yaml", "unknown-key", "bad-duration", "bad-nested-value"],
)
def test_a_bad_policy_file_is_named_with_its_key_and_line(gc: Cli, started: Path, policy: str, error: str) -> None:
    tid = gc.thread(started, "Tag it", "tag:v1")
    gc.ok(started, "hooks", "install")
    (started / ".continuity.yaml").write_text(policy)
    before = state_refs(started)
    where = f"{started}/.continuity.yaml {error}"
    for args in (("check", "--closing"), ("verify",), ("thread", "close", tid)):
        done = gc.run(started, *args)
        assert (done.code, done.out, done.err) == (2, "", f"git-continuity: error: {where}\n"), args
    # A read goes on with the defaults, naming the file and line (tests/test_policy_reads.py).
    read = gc.run(started, "status")
    assert read.code == 0 and f"  {where}; read with the built-in defaults here" in read.out
    # The hook cannot judge a closing claim: it blocks it, saying why as the commands do...
    blocked = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert (blocked.code, blocked.err) == (1, f"git-continuity: error: {where}\n")
    # ...and lets through every commit that names no thread (one that does may be closing it
    # under keywords the broken file was meant to set, so that one is judged, and blocked, too).
    assert run(started, "git", "commit", "-q", "--allow-empty", "-m", "Tidy the readme").code == 0
    assert run(started, "git", "commit", "-q", "--allow-empty", "-m", f"Work on {tid}").code == 1
    assert state_refs(started) == before


def test_closing_keywords_from_the_policy(gc: Cli, started: Path) -> None:
    commit(started, "Policy", {".continuity.yaml": "closing_keywords: [ships, lands]\n"})
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Tag it", "tag:v1")
    cid = gc.claims(started)["tag:v1"]["id"]
    said = (
        f'git-continuity: this commit closes {tid} ("Tag it"), but 1 of 1 checks is not verified now:\n'
        f"  contradicted  {cid}  tag:v1\n"
        "                tag v1 does not exist here\n"
        f"Make the checks pass first, or leave the closing claim ({tid}) out of the commit message.\n"
    )
    head = git(started, "rev-parse", "HEAD")
    for message in (f"Release ships {tid}", f"Lands: {tid}"):
        blocked = run(started, "git", "commit", "--allow-empty", "-m", message)
        assert (blocked.code, blocked.err) == (1, said), message
    assert git(started, "rev-parse", "HEAD") == head
    # The defaults are replaced, not extended: "closes" no longer claims anything.
    made = run(started, "git", "commit", "--allow-empty", "-m", f"Release; closes {tid}")
    assert (made.code, made.err) == (0, "")
    assert json.loads(gc.ok(started, "status", "--json"))["threads"][0]["status"] == "open"

    git(started, "tag", "v1")
    made = run(started, "git", "commit", "--allow-empty", "-m", f"Release ships {tid}")
    assert (made.code, made.err) == (
        0,
        f'git-continuity: {tid} "Tag it": every check verified now; the thread is done.\n',
    )


def test_closing_checks_from_the_policy_must_pass_too(gc: Cli, started: Path) -> None:
    commit(started, "Policy", {".continuity.yaml": "closing_checks: ['clean:']\n"})
    git(started, "tag", "v1")
    tid = gc.thread(started, "Tag it", "tag:v1")
    cid = gc.claims(started)["tag:v1"]["id"]
    tagged = git(started, "rev-parse", "--short=7", "v1")
    (started / "scratch.txt").write_text("notes\n")
    closed = cont(started, "thread", "close", tid)
    assert (closed.code, closed.out) == (
        1,
        f'Thread {tid} "Tag it" cannot close: 1 of 2 checks is not verified now.\n'
        f"  verified  {cid}  tag:v1\n"
        f"            tag v1 points at {tagged}\n"
        "  policy (.continuity.yaml closing_checks):\n"
        "  contradicted  p-1  policy: clean:\n"
        "                clean:\n"
        "                1 uncommitted change: scratch.txt\n",
    )
    gate = json.loads(cont(started, "check", "--closing", "--json").out)
    assert gate["threads"][0]["policy_checks"] == [
        {"handle": "clean:", "state": "contradicted", "observed": "1 uncommitted change: scratch.txt"}
    ]
    assert gate["threads"][0]["reason"] == "1 of 2 checks is not verified now"

    (started / "scratch.txt").unlink()
    closed = cont(started, "thread", "close", tid)
    assert (closed.code, closed.out) == (
        0,
        f'Thread {tid} "Tag it" is done: every check verified now; the evidence is recorded.\n'
        f"  verified  {cid}  tag:v1\n"
        f"            tag v1 points at {tagged}\n"
        "  policy (.continuity.yaml closing_checks):\n"
        "  verified  p-1  policy: clean:\n"
        "            clean:\n"
        "            the work tree has no uncommitted changes\n",
    )


def test_a_closing_commit_that_carries_its_change_passes_a_clean_policy(gc: Cli, started: Path) -> None:
    commit(started, "Policy", {".continuity.yaml": "closing_checks: ['clean:']\n"})
    gc.ok(started, "hooks", "install")
    git(started, "tag", "v1")
    tid = gc.thread(started, "Tag it", "tag:v1")
    (started / "CHANGES").write_text("1.0: tagged\n")
    git(started, "add", "CHANGES")
    made = run(started, "git", "commit", "-m", f"Changelog; closes {tid}")
    assert (made.code, made.err) == (
        0,
        f'git-continuity: {tid} "Tag it": every check verified now; the thread is done.\n',
    )


@pytest.mark.parametrize("how", [["-a"], ["--", "CHANGES"]], ids=["commit -a", "commit <paths>"])
def test_a_closing_commit_from_a_temporary_index_passes_a_clean_policy(gc: Cli, started: Path, how: list[str]) -> None:
    # git commits these from a temporary index, named to the hooks in GIT_INDEX_FILE.
    commit(started, "Policy", {".continuity.yaml": "closing_checks: ['clean:']\n", "CHANGES": "0.9\n"})
    gc.ok(started, "hooks", "install")
    git(started, "tag", "v1")
    tid = gc.thread(started, "Tag it", "tag:v1")
    (started / "CHANGES").write_text("1.0: tagged\n")
    made = run(started, "git", "commit", "-m", f"Changelog; closes {tid}", *how)
    assert (made.code, made.err) == (
        0,
        f'git-continuity: {tid} "Tag it": every check verified now; the thread is done.\n',
    )
    assert git(started, "status", "--porcelain") == ""


def test_a_message_naming_a_thread_that_does_not_exist(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Tag it", "tag:v1")
    head = git(started, "rev-parse", "HEAD")
    blocked = run(started, "git", "commit", "--allow-empty", "-m", "Fix login; closes t-k7m2qx")
    assert (blocked.code, blocked.out, blocked.err) == (
        1,
        "",
        f"git-continuity: this commit claims to close t-k7m2qx, but stream 'main' has no such thread "
        f"(threads: {tid}).\n"
        "Fix the id in the message (git continuity status lists threads), or drop the closing claim.\n",
    )
    assert git(started, "rev-parse", "HEAD") == head
    # Naming it without a closing keyword claims nothing.
    assert run(started, "git", "commit", "-q", "--allow-empty", "-m", "See t-k7m2qx").code == 0


def test_orient_never_runs_a_command_even_an_approved_one(gc: Cli, started: Path) -> None:
    # A session start must not wait on a test suite: cmd: checks show their last evidence.
    command = "touch ran-at-orient"
    conftest.approve(started, command)
    gc.ok(started, "objective", "set", "ship", "--why", "it is due")
    gc.ok(started, "claim", "add", "the suite passes", "--check", f"cmd:{command}")
    gc.ok(started, "orient")
    assert not (started / "ran-at-orient").exists()
    assert gc.claims(started)["the suite passes"]["state"] == "unchecked"


@pytest.mark.parametrize(
    ("message", "closed"),
    [
        ("Release; closes t-k7m2qx", ["t-k7m2qx"]),
        ("this does not close t-k7m2qx yet", []),
        ("Never fixes t-k7m2qx, only tidies", []),
        ("doesn't resolve t-k7m2qx; closes t-p3g9j6", ["t-p3g9j6"]),
        ("Not yet: closes t-k7m2qx", ["t-k7m2qx"]),
    ],
)
def test_a_negated_keyword_closes_nothing(message: str, closed: list[str]) -> None:
    from git_continuity import model

    assert model.closing_ids(message, ("close", "closes", "fixes", "resolve")) == closed
