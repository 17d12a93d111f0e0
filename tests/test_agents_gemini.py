"""`agent install gemini`: the hooks merged into .gemini/settings.json (timeouts in
milliseconds, as Gemini CLI reads them) and taken out again byte for byte; the hooks run as
Gemini CLI 0.61.0 runs them, with the JSON it sent a hook that logged its input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from conftest import BIN, cont, git, shell_found

from git_continuity.agents import probe as agent_probe

HOOK = str(BIN / "git-continuity-hook")
SETTINGS = """{
  "model": {"name": "gemini-2.5-pro"},
  "hooks": {
    "BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5000}]}]
  }
}
"""


def ok(cwd: Path, *args: str) -> str:
    done = cont(cwd, *args)
    assert done.code == 0, (args, done.out, done.err)
    return done.out


def test_install_gemini_merges_its_hooks_and_uninstall_gives_back_the_bytes(repo: Path) -> None:
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    plain = SETTINGS
    settings.write_text(plain)
    out = ok(repo, "agent", "install", "gemini")
    assert out == (
        ".gemini/settings.json: SessionStart runs git-continuity-hook agent gemini session-start\n"
        ".gemini/settings.json: AfterAgent runs git-continuity-hook agent gemini stop\n"
        ".gemini/settings.json: SessionEnd runs git-continuity-hook agent gemini session-end\n"
        ".gemini/settings.json: AfterTool runs git-continuity-hook agent gemini post-tool-use "
        "(matcher run_shell_command)\n"
        ".gemini/hooks/git-continuity-hook: the launcher the hooks run; commit it with the settings\n"
        "Gemini CLI now runs orient at session start, the closure gate after each turn (AfterAgent), handoff at "
        "session end, and a notice when a failing command is run a third time with the same result.\n"
        "Gemini CLI runs a project's hooks only in a trusted folder (it asks when it first opens one).\n"
        f"On this machine the hooks run {HOOK} (recorded in .git/continuity/agents/hook-program), else "
        "git-continuity-hook from PATH; remove them with: git continuity agent uninstall gemini\n" + shell_found()
    )
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["BeforeTool"] == json.loads(plain)["hooks"]["BeforeTool"]
    assert {
        event: [(g.get("matcher"), g["hooks"][0]["timeout"]) for g in groups] for event, groups in hooks.items()
    } == {
        "BeforeTool": [("write_file", 5000)],
        "SessionStart": [(None, 60_000)],
        "AfterAgent": [(None, 600_000)],
        "SessionEnd": [(None, 60_000)],
        "AfterTool": [("run_shell_command", 10_000)],
    }
    assert ok(repo, "agent", "install", "gemini").count("already runs git-continuity") == 4
    assert ok(repo, "agent", "uninstall", "gemini") == (
        ".gemini/settings.json: removed 4 git-continuity hooks\n.gemini/hooks/git-continuity-hook: removed\n"
    )
    assert settings.read_text() == plain


def test_install_gemini_in_a_bare_project_creates_and_removes_everything(repo: Path) -> None:
    ok(repo, "agent", "install", "gemini")
    assert [c.event for c in agent_probe.installed_hooks(repo, common_dir=repo / ".git") if c.agent == "gemini"] == [
        "SessionStart",
        "AfterAgent",
        "SessionEnd",
        "AfterTool",
    ]
    ok(repo, "agent", "uninstall", "gemini")
    assert not (repo / ".gemini").exists()
    assert git(repo, "status", "--porcelain") == ""


def run(repo: Path, event: str, payload: dict[str, Any]) -> dict[str, Any]:
    groups = json.loads((repo / ".gemini" / "settings.json").read_text())["hooks"][event]
    (command,) = [h["command"] for g in groups for h in g["hooks"]]
    base = {
        "session_id": "7df605b5-7d3d-449b-8014-a178c7116ea1",
        "cwd": str(repo),
        "timestamp": "2026-12-01T12:15:16.464Z",
    }
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=repo,
        input=json.dumps({**base, "hook_event_name": event, **payload}),
        capture_output=True,
        text=True,
        env={**os.environ, "GEMINI_PROJECT_DIR": str(repo)},
    )
    assert (done.returncode, done.stderr) == (0, ""), done
    return json.loads(done.stdout) if done.stdout else {}


def test_the_hooks_answer_as_gemini_cli_reads_them(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    ok(repo, "thread", "add", "Release v1.2", "--check", "tag:v1.2")
    ok(repo, "agent", "install", "gemini")
    start = run(repo, "SessionStart", {"source": "startup"})
    assert set(start) == {"hookSpecificOutput"}
    assert start["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert start["hookSpecificOutput"]["additionalContext"].startswith("# git-continuity brief: stream main\n")
    (repo / "CHANGES.txt").write_text("v1.2\n")  # the session changes something: its stop is held
    held = run(
        repo, "AfterAgent", {"prompt": "Release 1.2.", "prompt_response": "Released.", "stop_hook_active": False}
    )
    assert set(held) == {"decision", "reason"} and held["decision"] == "block"
    failed = {
        "tool_name": "run_shell_command",
        "tool_input": {"command": "make image"},
        "tool_response": {
            "llmContent": (
                "<untrusted_context>\nOutput: OOMKilled\nExit Code: 2\nProcess Group PGID: 25452\n</untrusted_context>"
            ),
            "returnDisplay": "OOMKilled",
        },
    }
    assert [run(repo, "AfterTool", failed) for _ in range(2)] == [{}, {}]
    notice = run(repo, "AfterTool", failed)["hookSpecificOutput"]
    assert notice["hookEventName"] == "AfterTool"
    assert notice["additionalContext"].startswith(
        "git-continuity: this is the 3rd time in this session that this command failed with the same result:\n"
        "  $ make image\n  OOMKilled\n"
    )
    passed = {**failed, "tool_response": {"llmContent": "Output: ok\nExit Code: 0", "returnDisplay": "ok"}}
    assert run(repo, "AfterTool", passed) == {}
