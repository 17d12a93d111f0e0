"""The hooks' launcher with the real agents (Claude Code, Codex, Gemini CLI): when the
git-continuity-hook it would run cannot start (its virtual environment's Python removed), each
agent and its model are told so, instead of a session that runs on with no brief and no gate;
and what a team commits names no path of one machine, so a teammate's fresh clone runs the
hooks with nothing rewritten.

Marked ``agents``."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from agent_harness import claude, claude_env, codex, gemini, gemini_env, setup_codex, trust_codex_hooks
from conftest import BIN, cont, git
from model_imitation import Imitation, Reply, Tool, Turns, texts

pytestmark = pytest.mark.agents

ID = r"[2-9a-hjkmnp-z]{6}"
TOOL_FREE_PATH = "/usr/bin:/bin"  # the agent's PATH holds no git-continuity


def ok(cwd: Path, *args: str) -> str:
    done = cont(cwd, *args)
    assert done.code == 0, (args, done.out, done.err)
    return done.out


@pytest.fixture
def project(repo: Path) -> tuple[Path, str]:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    found = re.search(rf"t-{ID}", ok(repo, "thread", "add", "Release v1.2", "--check", "tag:v1.2"))
    assert found
    return repo, found.group(0)


def install_from_a_venv_then_remove_its_python(work: Path, agent: str, tmp_path: Path) -> Path:
    """``agent install`` run by git-continuity in a virtual environment of its own (its
    git-continuity-hook as pip installs it, #! that venv's Python), whose Python is then removed
    (an upgrade, a deleted venv). Returns the venv."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    source = Path(__file__).resolve().parents[1]
    (site / "git_continuity_test.pth").write_text(f"{source}\n{sysconfig.get_paths()['purelib']}\n")
    script = (BIN / "git-continuity-hook").read_text().split("\n", 1)[1]
    hook = venv / "bin" / "git-continuity-hook"
    hook.write_text(f"#!{venv}/bin/python\n{script}")
    hook.chmod(0o755)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "git_continuity", "agent", "install", agent],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done
    assert (work / ".git" / "continuity" / "agents" / "hook-program").read_text() == f"{hook}\n"
    for python in venv.glob("bin/python*"):
        python.unlink()
    return venv


def said(venv: Path, agent: str, what: str) -> str:
    return (
        f"git-continuity: {venv}/bin/git-continuity-hook cannot start (its interpreter {venv}/bin/python is gone) "
        f"and git-continuity-hook is not on PATH, so {what}; install git-continuity where this agent finds it "
        f"(or run: git continuity agent install {agent})"
    )


LOST_ALL = "this session gets no continuity brief, no closure gate and no handoff"
LOST_GATE = "the closure gate did not run"


def said_last(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    blocks = [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]
    return "\n".join(blocks)


def test_claude_code_is_told_when_the_hooks_python_is_gone(project: tuple[Path, str], tmp_path: Path) -> None:
    work, _ = project
    venv = install_from_a_venv_then_remove_its_python(work, "claude", tmp_path)
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", Turns([Reply("Released."), Reply("The hooks cannot run; tell them.")])) as model:
        ran = claude(work, home, model, "-p", "Release 1.2.", env={**claude_env(home, model), "PATH": TOOL_FREE_PATH})
    assert (ran.code, ran.out) == (0, "The hooks cannot run; tell them.\n"), ran
    first, held = model.conversation()
    brief = "\n".join(texts(first["messages"]))
    assert f"SessionStart hook additional context: {said(venv, 'claude', LOST_ALL)}. Tell the user before" in brief
    assert said_last(held) == f"Stop hook feedback:\n{said(venv, 'claude', LOST_GATE)}. Tell the user, then stop."
    # What the model reads of the hook is the reason, not a page of shell.
    assert '[ -x \\"$h\\" ]' not in json.dumps(held) and "stop_hook_active" not in json.dumps(held)
    assert said(venv, "claude", "no handoff was recorded at the end of this session") in ran.err


def test_codex_is_told_when_the_hooks_python_is_gone(project: tuple[Path, str], tmp_path: Path) -> None:
    work, _ = project
    venv = install_from_a_venv_then_remove_its_python(work, "codex", tmp_path)
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("openai", Turns([Reply("Released."), Reply("The hooks cannot run; tell them.")])) as model:
        env = setup_codex(work, home, model)
        trust_codex_hooks(work, env)
        ran = codex(work, {**env, "PATH": f"{Path(shutil.which('git') or '/usr/bin/git').parent}:/bin"}, "Release.")
    assert (ran.code, ran.out) == (0, "The hooks cannot run; tell them.\n"), ran
    first, held = model.conversation()
    developer = [
        "\n".join(p["text"] for p in item["content"] if "text" in p)
        for item in first["input"]
        if item.get("type") == "message" and item.get("role") == "developer"
    ]
    assert f"{said(venv, 'codex', LOST_ALL)}. Tell the user before anything else." in developer
    prompt = [
        "\n".join(p["text"] for p in item["content"] if "text" in p)
        for item in held["input"]
        if item.get("type") == "message" and item.get("role") == "user"
    ][-1]
    assert prompt.split(">", 1)[1].removesuffix("</hook_prompt>") == (
        f"{said(venv, 'codex', LOST_GATE)}. Tell the user, then stop."
    )


def test_gemini_cli_is_told_once_and_not_looped_when_the_hooks_python_is_gone(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    work, _ = project
    venv = install_from_a_venv_then_remove_its_python(work, "gemini", tmp_path)
    with Imitation("gemini", Turns([Reply("Released.")], rest=Reply("Again?"))) as model:
        env = {**gemini_env(tmp_path / "agent-home", model), "PATH": TOOL_FREE_PATH}
        ran = gemini(work, env, "Release 1.2.")
    # One turn: the broken AfterAgent hook allows, with a message, instead of a block each time.
    assert (ran.code, ran.out) == (0, "Released.\n"), ran
    (first,) = model.conversation()
    prompt = [
        part["text"]
        for turn in first["contents"]
        if turn.get("role") == "user"
        for part in turn["parts"]
        if "text" in part and part["text"].endswith("Release 1.2.")
    ]
    assert prompt == [
        f"<hook_context>{said(venv, 'gemini', LOST_ALL)}. Tell the user before anything else."
        "</hook_context>\n\nRelease 1.2."
    ]
    assert said(venv, "gemini", LOST_GATE) in ran.err


def test_a_teammates_fresh_clone_runs_the_committed_hooks_with_the_tool_on_path(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    work, thread = project
    ok(work, "agent", "install", "claude")
    committed = {p: (work / p).read_bytes() for p in (".claude/settings.json", ".claude/hooks/git-continuity-hook")}
    for text in committed.values():  # nothing of this machine in what the team commits
        assert str(BIN).encode() not in text and str(work).encode() not in text
    assert all(
        len(h["command"]) < 200
        for g in json.loads(committed[".claude/settings.json"])["hooks"].values()
        for grp in g
        for h in grp["hooks"]
    )
    git(work, "add", ".claude")
    git(work, "commit", "-qm", "Agent hooks")
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(work, "remote", "add", "origin", str(bare))
    git(work, "push", "-q", "origin", "HEAD")
    ok(work, "push", "origin")
    clone = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(bare), str(clone))
    ok(clone, "pull", "origin")
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", Turns([], rest=Reply("Looked."))) as model:
        ran = claude(clone, home, model, "-p", "What is open?")
    assert (ran.code, ran.out) == (0, "Looked.\n"), ran
    brief = "\n".join(texts(model.conversation()[0]["messages"]))
    assert "SessionStart hook additional context: # git-continuity brief: stream main\n" in brief
    assert f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n" in brief
    assert {p: (clone / p).read_bytes() for p in committed} == committed
    assert git(clone, "status", "--porcelain") == ""


def test_codex_is_told_the_command_its_login_shell_finds(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    installed = ok(repo, "agent", "install", "codex")
    absolute = f"{BIN}/git-continuity"
    shell = f"{os.environ.get('SHELL') or '/bin/bash'} -lc 'command -v git-continuity'"
    assert installed.endswith(
        f"warning: the model's shell ({shell}) does not find git-continuity: the brief tells the model to run "
        f"{absolute}\n"
    )
    home = tmp_path / "agent-home"
    home.mkdir()
    script = Turns(
        [
            Reply("", Tool("exec_command", {"cmd": "git continuity journal add 'by the plain name'"})),
            Reply("", Tool("exec_command", {"cmd": f"{absolute} journal add 'by the absolute command'"})),
            Reply("Noted."),
        ]
    )
    with Imitation("openai", script) as model:
        env = setup_codex(repo, home, model)
        trust_codex_hooks(repo, env)
        ran = codex(repo, env, "Note it.")
    assert (ran.code, ran.out) == (0, "Noted.\n"), ran
    first, plain, _ = model.conversation()
    (brief,) = [t for t in developer_texts(first) if t.startswith("# git-continuity brief: stream main\n")]
    assert brief.split("\n")[1] == (
        "In the shell you run commands in, `git continuity` is not found: wherever this brief, AGENTS.md or "
        f"git-continuity's messages say `git continuity …`, run `{absolute} …` instead."
    )
    # Codex's login shell really does not find it by the plain name; the absolute command runs.
    assert "'continuity' is not a git command" in plain["input"][-1]["output"]
    journal = json.loads(ok(repo, "journal", "--json"))["entries"]
    assert [e["text"] for e in journal if "command" in e["text"] or "name" in e["text"]] == ["by the absolute command"]
    status = json.loads(ok(repo, "agent", "status", "--json"))["agents"][1]["shell"]
    assert status == {"shell": shell, "state": "missing", "command": absolute}


def developer_texts(body: dict[str, Any]) -> list[str]:
    return [
        "\n".join(p["text"] for p in item["content"] if "text" in p)
        for item in body["input"]
        if item.get("type") == "message" and item.get("role") == "developer"
    ]


def test_the_other_machines_brief_names_the_handoff_that_recorded_work_and_what_it_left_there(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, laptop = remote_and_clone
    ok(laptop, "init")
    ok(laptop, "objective", "set", "Parse the config", "--why", "the loader needs it")
    ok(laptop, "agent", "install", "claude")
    git(laptop, "add", ".claude")
    git(laptop, "commit", "-qm", "Agent hooks")
    (laptop / "parser.py").write_text("def parse(): ...\n")  # written, never committed
    handed = json.loads(ok(laptop, "handoff", "--json"))["handoff"]
    worked, host = handed["id"], handed["host"]
    # A later session on the laptop changes nothing, and its context is compacted: no handoff.
    home = tmp_path / "agent-home"
    home.mkdir()
    summary = Reply("<analysis>short</analysis>\n<summary>Nothing was done.</summary>")
    look = Reply("Looking.", Tool("Bash", {"command": "git log --oneline -1"}))
    asked = "Your task is to create a detailed summary of the conversation so far"
    turns = Turns(
        [look, Reply("Nothing to do.")],
        wanted=lambda body: bool(body.get("tools")) and asked not in json.dumps(body["messages"][-1]),
        rest=summary,
    )
    with Imitation("anthropic", turns) as model:
        assert claude(laptop, home, model, "-p", "Anything?").out == "Nothing to do.\n"
        compacted = claude(laptop, home, model, "-p", "--continue", "/compact")
        assert compacted.code == 0, compacted
    summarize = [b for b in model.conversation() if asked in said_last(b)]
    assert len(summarize) == 1  # the compaction happened; its PreCompact recorded nothing
    names = git(laptop, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    assert len(names) == 1 and worked in names[0]
    git(laptop, "push", "-q", "origin", "main")
    ok(laptop, "push", "origin")

    desktop = tmp_path / "desktop"
    git(tmp_path, "clone", "-q", str(bare), str(desktop))
    ok(desktop, "pull", "origin")
    home = tmp_path / "desktop-home"
    home.mkdir()
    with Imitation("anthropic", Turns([], rest=Reply("Looked."))) as model:
        env = {**claude_env(home, model), "GIT_CONTINUITY_HOST": "desktop"}
        ran = claude(desktop, home, model, "-p", "What is open?", env=env)
    assert (ran.code, ran.out) == (0, "Looked.\n"), ran
    brief = "\n".join(texts(model.conversation()[0]["messages"]))
    assert f"## Since the last session: handoff {worked}, " in brief
    assert (
        f"- left on {host}, not here: parser.py (uncommitted there at handoff {worked}; commit and push it on {host})"
        in brief
    )
