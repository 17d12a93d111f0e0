"""True now at a session's start (#33), through the real agent binaries against the loopback
imitations of their model APIs: the brief Claude Code's SessionStart hook gives a session
started in a donor worktree, after the remotes and the forge changed behind the clone; a killed
Claude Code session reported to the next one started in another worktree, whose writes there
are its own; and the Stop gate's let-go told to the person who ran Claude Code, Codex or Gemini
CLI headless, in the model's last answer (the one thing each prints).

Marked ``agents``."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_harness import binary, claude, claude_env, codex, gemini, gemini_env, setup_codex, trust_codex_hooks
from conftest import commit, cont, git, made_id, ok
from forge_fakes import FakeGitHub
from model_imitation import Imitation, Reply, Tool, Turns, texts

pytestmark = pytest.mark.agents


def context(model: Imitation) -> str:
    """The SessionStart context Claude Code sent with the conversation's first request."""
    first = next(b for b in model.conversation() if b.get("tools"))
    (said,) = [t for t in texts(first["messages"]) if "SessionStart hook additional context: " in t]
    return said.split("SessionStart hook additional context: ", 1)[1].split("\n\n\nAvailable agent types", 1)[0]


def section(brief: str, title: str) -> list[str]:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=\n\n|\Z)", brief, re.S | re.M)
    return found.group(1).splitlines() if found else []


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        yield fake


# -- 1, 2, 3: the brief of a session started in a donor worktree, after the world moved -----------


def test_claude_codes_brief_in_a_donor_worktree_is_true_now(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, work = remote_and_clone
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    commit(work, "config", {"conf/app.toml": "port = 80\n"})
    ok(work, "init")
    ok(work, "objective", "set", "Ship 1.2", "--why", "release is due")
    ok(work, "agent", "install", "claude")
    git(work, "add", ".claude")
    git(work, "commit", "-q", "-m", "The agent's hooks")
    git(work, "push", "-q", "origin", "main")
    before = git(work, "rev-parse", "HEAD")
    fix = commit(work, "Fix the login loop", {"app.py": "fixed\n"})
    git(work, "push", "-q", "origin", "main")
    github.add_pull("acme", "cli", 12, "open")
    pr = made_id(ok(work, "claim", "add", "PR #12 is open", "--check", "github:pr/acme/cli#12=open"), "c")
    pushed = made_id(ok(work, "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main"), "c")
    tagged = made_id(ok(work, "claim", "add", "1.2 is tagged", "--check", "tag:v1.2"), "c")
    config = made_id(ok(work, "claim", "add", "the config is conf/app.toml", "--check", "file:conf/app.toml"), "c")
    assert cont(work, "verify", "--online").code == 1  # PR #12 verified open, recorded here; v1.2 not tagged yet
    ok(work, "place", "set", "work", "home", "--why", "the implementation lives here")
    donor = tmp_path / "old"
    git(work, "worktree", "add", "-q", "-b", "old-parser", str(donor))
    ok(work, "place", "set", "old", "donor", "--why", "copy from it, never commit")
    # Behind the clone: the PR is merged, the fix is reset away on origin, v1.2 is tagged there,
    # and at the home the config moves.
    github.add_pull("acme", "cli", 12, "merged")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(bare), str(other))
    git(other, "reset", "-q", "--hard", before)
    git(other, "push", "-q", "--force", "origin", "main")
    git(other, "tag", "v1.2")
    git(other, "push", "-q", "origin", "v1.2")
    git(work, "rm", "-q", "conf/app.toml")
    gone = commit(work, "Move the config into the package")

    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", Turns([], rest=Reply("ok"))) as model:
        ran = claude(donor, home, model, "-p", "Where are we?", env={**claude_env(home, model)})
    assert (ran.code, ran.out) == (0, "ok\n"), ran
    brief = context(model)
    lines = brief.splitlines()
    assert (
        f"Claims are judged in the home, the checkout of branch main in {work}, not in worktree old (branch "
        "old-parser) where this session is."
    ) in lines
    assert "Fresh look: fetched now from origin." in lines
    assert section(brief, "Do not act on these: not true now") == [
        f'- **{pr}** "PR #12 is open" (github:pr/acme/cli#12=open) is contradicted: PR #12 was merged at '
        "2026-11-28T10:02Z by octocat (merge commit eeeeeee)",
        f'- **{pushed}** "the fix is pushed" (pushed:{fix[:12]}…@origin/main) is contradicted: origin/main is at '
        f"{before[:7]} (fetched just now), which does not contain {fix[:7]}",
        f'- **{config}** "the config is conf/app.toml" (file:conf/app.toml) is contradicted: conf/app.toml is not '
        f"in HEAD ({gone[:7]})",
    ]
    assert section(brief, "Verified now") == [f'- {tagged} "1.2 is tagged" (tag:v1.2): tag v1.2 points at {before[:7]}']


# -- 4: a killed session is reported in another worktree; the live one's writes are its own -------


def test_a_killed_claude_session_is_reported_to_the_next_in_another_worktree(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due")
    ok(repo, "agent", "install", "claude")
    git(repo, "add", ".claude")
    git(repo, "commit", "-q", "-m", "The agent's hooks")
    review = tmp_path / "review"
    git(repo, "worktree", "add", "-q", "-b", "review", str(review))
    home = tmp_path / "agent-home"
    home.mkdir()
    session_file = repo / ".git" / "continuity" / "session.json"

    # The first session, in the main checkout, is killed in the middle of a tool call.
    sleeping = Reply("Waiting on the build.", Tool("Bash", {"command": "sleep 60", "description": "wait"}))
    with Imitation("anthropic", Turns([sleeping], wanted=lambda b: bool(b.get("tools")))) as model:
        killed = subprocess.Popen(
            [str(binary("claude")), "-p", "Build it.", "--allowedTools", "Bash"],
            cwd=repo,
            env=claude_env(home, model),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while not _running("sleep 60", killed.pid):  # the agent is in the middle of its tool call
            assert time.monotonic() < deadline and killed.poll() is None, "the first session never got going"
            time.sleep(0.1)
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait()
    first = json.loads(session_file.read_text())
    assert first["ended_at"] is None and first["agent_pid"] is not None

    # The next session starts in the other worktree, and writes in the main checkout with git -C.
    note = f"git -C {repo} continuity journal add 'the build needs more memory'"
    claim = f"git -C {repo} continuity claim add 'the README stays' --check file:README"
    script = Turns(
        [
            Reply("Noting it.", Tool("Bash", {"command": note, "description": "note"})),
            Reply("Claiming it.", Tool("Bash", {"command": claim, "description": "claim"})),
            Reply("Noted."),
        ],
        wanted=lambda b: bool(b.get("tools")),
    )
    with Imitation("anthropic", script) as model:
        ran = claude(review, home, model, "-p", "Pick it up.")
    assert (ran.code, ran.out) == (0, "Noted.\n"), ran
    second = json.loads((repo / ".git" / "worktrees" / "review" / "continuity" / "session.json").read_text())
    brief = context(model)
    assert re.search(
        rf"^Warning: The session {first['id']} \(claude-code\), started \S+ \S+ UTC on laptop in "
        rf"{re.escape(str(repo))}, ended without a handoff \(its agent is no longer running\): what it left is in "
        r"that work tree and under 'Since the last session'\.$",
        brief,
        re.M,
    ), brief
    entries = json.loads(ok(repo, "journal", "--json"))["entries"]
    (written,) = [e for e in entries if e["text"] == "the build needs more memory"]
    assert (written["session"], written["agent"]) == (second["id"], "claude-code")
    claims = json.loads(ok(repo, "claim", "list", "--json"))["claims"]
    assert [c["text"] for c in claims] == ["the README stays"]
    (summary,) = [e["text"] for e in json.loads(ok(repo, "journal", "--json"))["entries"] if e.get("handoff")]
    assert summary.startswith(f"Session {second['id']} handed off (h-") and "1 claim added" in summary, summary
    handoff = json.loads(git(repo, "show", f"refs/continuity/main:{_handoff_path(repo)}"))
    assert handoff["did"]["arrived"] == [] and [c["text"] for c in handoff["did"]["claims"]] == ["the README stays"]
    # Said once: the session after it hears nothing of the killed one.
    assert f"The session {first['id']}" not in ok(repo, "orient")


def _running(command: str, ancestor: int) -> bool:
    """Whether ``command`` runs under process ``ancestor`` (the agent, and nobody else's)."""
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                line = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").strip()
            except OSError:
                continue
            if line == command.encode() and ancestor in _ancestors(int(entry.name)):
                return True
    return False


def _ancestors(pid: int) -> list[int]:
    found = []
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()[1])
        except (OSError, ValueError, IndexError):
            break
        found.append(pid)
    return found


def _handoff_path(repo: Path) -> str:
    (name,) = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    return name


# -- 8: the let-go reaches the person who ran the agent headless --------------------------------

TELL = re.compile(r'Begin your answer to the user with: "([^"]+)" Then stop\.')


def compliant(rest: Reply, first: Reply) -> Callable[[dict[str, Any]], Reply]:
    """A model that makes one change, then says it is done until the gate asks it to tell the
    user what is not, and then says exactly that, as it was asked to."""
    said = {"first": False}

    def answer(body: dict[str, Any]) -> Reply:
        asked = [m.group(1) for t in texts(body) for m in [TELL.search(t)] if m]
        if asked:
            return Reply(asked[-1])
        if not said["first"]:
            said["first"] = True
            return first
        return rest

    return answer


@pytest.fixture
def unverified(repo: Path) -> tuple[Path, str]:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due")
    tid = made_id(ok(repo, "thread", "add", "Release v1.2", "--check", "tag:v1.2"), "t")
    return repo, tid


def not_done(tid: str) -> str:
    return f"Not done: {tid} did not verify (git continuity check --closing shows why)."


def test_claude_code_headless_prints_that_the_gate_let_a_false_done_through(
    unverified: tuple[Path, str], tmp_path: Path
) -> None:
    work, tid = unverified
    ok(work, "agent", "install", "claude")
    home = tmp_path / "agent-home"
    home.mkdir()
    change = Reply("Writing the notes.", Tool("Bash", {"command": "echo notes > NOTES.txt", "description": "n"}))
    script = compliant(Reply("Done."), change)
    with Imitation("anthropic", lambda b: script(b) if b.get("tools") else Reply("ok")) as model:
        ran = claude(work, home, model, "-p", "Release 1.2.")
    assert (ran.code, ran.out) == (0, not_done(tid) + "\n"), ran


def test_codex_exec_prints_that_the_gate_let_a_false_done_through(unverified: tuple[Path, str], tmp_path: Path) -> None:
    work, tid = unverified
    ok(work, "agent", "install", "codex")
    home = tmp_path / "agent-home"
    home.mkdir()
    change = Reply("", Tool("exec_command", {"cmd": "echo notes > NOTES.txt"}))
    with Imitation("openai", compliant(Reply("Done."), change)) as model:
        env = setup_codex(work, home, model)
        trust_codex_hooks(work, env)
        ran = codex(work, env, "Release 1.2.")
    assert (ran.code, ran.out) == (0, not_done(tid) + "\n"), ran


def test_gemini_cli_headless_prints_that_the_gate_let_a_false_done_through(
    unverified: tuple[Path, str], tmp_path: Path
) -> None:
    work, tid = unverified
    ok(work, "agent", "install", "gemini")
    home = tmp_path / "agent-home"
    change = Reply("", Tool("run_shell_command", {"command": "echo notes > NOTES.txt"}))
    with Imitation("gemini", compliant(Reply("Done."), change)) as model:
        ran = gemini(work, gemini_env(home, model), "Release 1.2.")
    assert ran.code == 0, ran
    assert ran.out == "Done." * 4 + not_done(tid) + "\n", ran.out  # Gemini CLI prints every turn's answer
    said = f"git-continuity: the agent stopped although {tid} did not verify (it was told 3 times in a row)"
    assert said in ran.err
