"""The in-session loop notice (``git-continuity-hook agent claude|codex post-tool-use``), run as
the agents run it: the installed command through ``sh -c`` in the project, the JSON each
agent sends (shapes as Claude Code 2.1.197 and Codex 0.171.0 sent them to a hook that logged
its input), checking stdout, the session's record and the hook log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import cont, git

NOTICE = (
    "git-continuity: this is the {nth} time in this session that this command failed with the same result:\n"
    "  $ make image\n"
    "  make: *** [image] Error 137 (OOMKilled)\n"
    "Running it again will not change that. Change your approach: find the cause first (read the error, the code, "
    "the logs), or try a different command or plan. If it cannot be done now, record why (git continuity journal "
    "add TEXT), park the thread, and stop."
)


def installed(work: Path, agent: str) -> str:
    settings, event = {
        "claude": (".claude/settings.json", "PostToolUseFailure"),
        "codex": (".codex/hooks.json", "PostToolUse"),
    }[agent]
    groups = json.loads((work / settings).read_text())["hooks"][event]
    (command,) = [h["command"] for g in groups if g.get("matcher") == "Bash" for h in g["hooks"]]
    return str(command)


def fire(work: Path, agent: str, payload: dict[str, Any], cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["sh", "-c", installed(work, agent)],
        cwd=cwd or work,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "CLAUDE_PROJECT_DIR": str(work)},  # as Claude Code sets it for a hook
    )
    assert (done.returncode, done.stderr) == (0, ""), done
    return done.stdout


def claude_failure(work: Path, error: str, command: str = "make image", session: str = "s-one") -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": str(work / "transcript.jsonl"),
        "cwd": str(work),
        "permission_mode": "default",
        "hook_event_name": "PostToolUseFailure",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "Build the image"},
        "tool_use_id": "toolu_0002",
        "error": error,
        "is_interrupt": False,
        "duration_ms": 75,
    }


def said(out: str, event: str) -> str:
    document = json.loads(out)
    assert set(document) == {"hookSpecificOutput"} and document["hookSpecificOutput"]["hookEventName"] == event
    text: str = document["hookSpecificOutput"]["additionalContext"]
    return text


@pytest.fixture
def work(repo: Path) -> Path:
    assert cont(repo, "init").code == 0
    assert cont(repo, "agent", "install", "claude").code == 0
    assert cont(repo, "agent", "install", "codex").code == 0
    return repo


def hook_log(work: Path) -> list[str]:
    return [
        line.split(" ", 1)[1] for line in (work / ".git" / "continuity" / "agent-hooks.log").read_text().splitlines()
    ]


def test_the_third_same_failure_in_a_session_is_told_to_change_its_approach(work: Path) -> None:
    # The same failure each time, but in another temporary folder, at another time, taking another while.
    runs = [
        f"Exit code 2\nbuilding in /tmp/tmp.{folder} at 2026-12-01T11:{minute}Z (pid {pid})\n"
        "make: *** [image] Error 137 (OOMKilled)"
        for folder, minute, pid in (
            ("0QzFYMFE9c", "37:04", 59311),
            ("ylvjNt9NzL", "38:10", 59420),
            ("Pag3ilCttK", "39:55", 60112),
            ("aaaaaaaaaa", "40:55", 60113),
        )
    ]
    outs = [fire(work, "claude", claude_failure(work, error)) for error in runs]
    assert outs[:2] == ["", ""]
    assert said(outs[2], "PostToolUseFailure") == NOTICE.format(nth="3rd")
    assert said(outs[3], "PostToolUseFailure") == NOTICE.format(nth="4th")
    assert hook_log(work) == ["claude post-tool-use nothing"] * 2 + ["claude post-tool-use notice"] * 2


def test_a_different_result_another_command_or_another_session_counts_apart(work: Path) -> None:
    oom = "Exit code 2\nmake: *** [image] Error 137 (OOMKilled)"
    other = "Exit code 2\nmake: *** [image] Error 2 (no space left on device)"
    calls = [
        claude_failure(work, oom),
        claude_failure(work, other),  # the failure changed: progress of a kind
        claude_failure(work, oom, command="make image V=1"),
        claude_failure(work, oom, session="s-two"),
        claude_failure(work, oom),
    ]
    assert [fire(work, "claude", call) for call in calls] == [""] * 5
    # An interrupted call is not a failure of the command.
    assert fire(work, "claude", {**claude_failure(work, oom), "is_interrupt": True}) == ""
    assert said(fire(work, "claude", claude_failure(work, oom)), "PostToolUseFailure") == NOTICE.format(nth="3rd")
    records = sorted(p.name for p in (work / ".git" / "continuity" / "tool-calls").iterdir())
    assert records == ["claude-s-one.json", "claude-s-two.json"]


def rollout(path: Path, calls: dict[str, int]) -> None:
    """The lines of a Codex transcript that carry each call's exit code (as 0.171.0 writes them)."""
    lines = []
    for call, code in calls.items():
        lines.append(json.dumps({"type": "response_item", "payload": {"type": "function_call", "call_id": call}}))
        item = {"type": "CommandExecution", "id": call, "status": "failed" if code else "completed", "exit_code": code}
        lines.append(json.dumps({"type": "event_msg", "payload": {"type": "item_completed", "item": item}}))
    path.write_text("\n".join(lines) + "\n")


def codex_call(work: Path, call: str, command: str, output: str) -> dict[str, Any]:
    return {
        "session_id": "01a23164-e242-75b3-a977-10d7c4a98edd",
        "turn_id": "01a23164-e25e-7d12-9873-4bb2db4e757a",
        "transcript_path": str(work / "rollout.jsonl"),
        "cwd": str(work),
        "hook_event_name": "PostToolUse",
        "model": "gpt-imitation",
        "permission_mode": "bypassPermissions",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_response": output,
        "tool_use_id": call,
    }


def test_codex_reads_the_exit_code_from_its_transcript(work: Path) -> None:
    oom = "make: *** [image] Error 137 (OOMKilled)\n"
    rollout(work / "rollout.jsonl", {"call_1": 2, "call_2": 0, "call_3": 2, "call_4": 2, "call_6": 2})
    outs = [
        fire(work, "codex", codex_call(work, "call_1", "make image", oom)),
        fire(work, "codex", codex_call(work, "call_2", "make image", oom)),  # exit 0: it passed
        fire(work, "codex", codex_call(work, "call_3", "make image", oom)),
        fire(work, "codex", codex_call(work, "call_5", "make image", oom)),  # not in the transcript: not counted
        fire(work, "codex", codex_call(work, "call_4", "make image", oom)),
    ]
    assert outs[:4] == [""] * 4
    assert said(outs[4], "PostToolUse") == NOTICE.format(nth="3rd")
    gone = {**codex_call(work, "call_6", "make image", oom), "transcript_path": str(work / "gone.jsonl")}
    assert fire(work, "codex", gone) == ""  # no transcript: not counted, never an error
    assert hook_log(work)[-1] == "codex post-tool-use nothing"


def test_outside_a_repository_and_with_odd_input_the_hook_says_nothing(work: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    failing = claude_failure(elsewhere, "Exit code 1\nno")
    for _ in range(4):
        assert fire(work, "claude", failing, cwd=elsewhere) == ""
    assert not (elsewhere / ".git").exists()
    for raw in ("not json", "[1, 2]", json.dumps({"cwd": str(work), "tool_name": "Bash", "tool_input": "ls"})):
        done = subprocess.run(
            ["sh", "-c", installed(work, "claude")],
            cwd=work,
            input=raw,
            capture_output=True,
            text=True,
            env={**os.environ, "CLAUDE_PROJECT_DIR": str(work)},
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_linked_worktree_keeps_its_record_in_the_common_git_directory(work: Path, tmp_path: Path) -> None:
    git(work, "commit", "--allow-empty", "-q", "-m", "first")
    linked = tmp_path / "linked"
    git(work, "worktree", "add", "-q", str(linked))
    sub = linked / "src"
    sub.mkdir()
    failing = {**claude_failure(work, "Exit code 1\nno"), "cwd": str(sub)}
    outs = [fire(work, "claude", failing, cwd=sub) for _ in range(3)]
    assert outs[2] != "" and (work / ".git" / "continuity" / "tool-calls" / "claude-s-one.json").exists()


def test_the_loop_notice_imports_nothing_heavy(work: Path) -> None:
    """It runs after every tool call: no repository door, no schema checker, not the command
    line's parser, and not typing (3 ms of the notice's path), even when the notice is said."""
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['git-continuity-hook', 'agent', 'claude', 'post-tool-use']\n"
        "from git_continuity.cli.hook_entry import main\n"
        "main()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygit2', 'jsonschema', 'argparse', 'pathlib')"
        " or m in ('git_continuity.cli.main', 'typing')), file=sys.stderr)\n"
    )
    for n in range(3):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=work,
            input=json.dumps(claude_failure(work, "Exit code 1\nno")),
            capture_output=True,
            text=True,
            env={**os.environ},
        )
        assert done.returncode == 0, done
        # The third writes the notice, cleaned by display.py, which needs typing only for mypy.
        assert done.stderr == "[]\n", n
