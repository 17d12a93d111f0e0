"""What the in-session loop notice costs an agent per tool call (issue 14's budget: 50 ms).

The hook command is run exactly as `agent install` wrote it into the settings file, through
`sh -c` in a repository with continuity state, with the agent's JSON on stdin, alternating
with the floor: `python3 -c pass` through the same shell (the interpreter the hook runs on).

  - Claude Code, a failed command (PostToolUseFailure; a successful call runs nothing);
  - Codex, a successful command (PostToolUse runs after every call; the exit code is read from
    a transcript of 2,000 lines);
  - Codex, the same failed command again and again (the notice is written every time).

    python benchmarks/posttooluse_bench.py [--runs 41]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
BUDGET_MS = 50.0


def sh(cwd: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=True)


def installed(work: Path, settings: str, event: str) -> str:
    groups = json.loads((work / settings).read_text())["hooks"][event]
    (command,) = [h["command"] for g in groups for h in g["hooks"] if "post-tool-use" in h["command"]]
    return str(command)


def transcript(path: Path, calls: int) -> None:
    """A Codex rollout as 0.171.0 writes it: per call the function call and its completion."""
    lines = []
    for n in range(calls):
        lines.append(
            json.dumps({"type": "response_item", "payload": {"type": "function_call", "call_id": f"call_{n}"}})
        )
        item = {"type": "CommandExecution", "id": f"call_{n}", "aggregated_output": "x" * 200, "exit_code": n % 2}
        lines.append(json.dumps({"type": "event_msg", "payload": {"type": "item_completed", "item": item}}))
    path.write_text("\n".join(lines) + "\n")


def timed(command: list[str], cwd: Path, env: dict[str, str], stdin: str) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=True)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=41)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        work = base / "work"
        env = {**os.environ, "HOME": str(base), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
        env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.com"}
        env |= {"GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.com"}
        sh(base, env, "git", "init", "-q", str(work))
        sh(work, env, "git", "continuity", "init")
        sh(work, env, "git", "continuity", "agent", "install", "claude")
        sh(work, env, "git", "continuity", "agent", "install", "codex")
        env["CLAUDE_PROJECT_DIR"] = str(work)  # as Claude Code sets it for a hook (the launcher's path)
        rollout = base / "rollout.jsonl"
        transcript(rollout, 1000)
        common = {"cwd": str(work), "tool_name": "Bash", "transcript_path": str(rollout)}
        claude_failed = {
            **common,
            "session_id": "bench-claude",
            "hook_event_name": "PostToolUseFailure",
            "tool_input": {"command": "make image", "description": "Build"},
            "error": "Exit code 2\nbuild took 12.5s\nOOMKilled",
            "is_interrupt": False,
        }
        codex = {**common, "session_id": "bench-codex", "hook_event_name": "PostToolUse", "tool_input": {}}
        codex_ok = {**codex, "tool_input": {"command": "ls"}, "tool_response": "app.py\n", "tool_use_id": "call_998"}
        codex_failed = {
            **codex,
            "tool_input": {"command": "make"},
            "tool_response": "OOMKilled\n",
            "tool_use_id": "call_999",
        }
        rows = {
            "floor: python3 -c pass": (["sh", "-c", f"{sys.executable} -c pass"], ""),
            "Claude Code, a failed command": (
                ["sh", "-c", installed(work, ".claude/settings.json", "PostToolUseFailure")],
                json.dumps(claude_failed),
            ),
            "Codex, a command that passed": (
                ["sh", "-c", installed(work, ".codex/hooks.json", "PostToolUse")],
                json.dumps(codex_ok),
            ),
            "Codex, a failed command (notice)": (
                ["sh", "-c", installed(work, ".codex/hooks.json", "PostToolUse")],
                json.dumps(codex_failed),
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.runs):
            for name, (command, stdin) in rows.items():
                times[name].append(timed(command, work, env, stdin))
        floor = statistics.median(times["floor: python3 -c pass"])
        print(f"{'per tool call':<36}{'median':>9}{'over floor':>12}")
        for name, found in times.items():
            median = statistics.median(found)
            over = "" if name.startswith("floor") else f"+{median - floor:.1f} ms"
            print(f"{name:<36}{median:>6.1f} ms{over:>12}")
        worst = max(statistics.median(t) for n, t in times.items() if not n.startswith("floor"))
        print(f"budget: {BUDGET_MS:.0f} ms median per tool call; the slowest row takes {worst:.1f} ms")
        return 0 if worst <= BUDGET_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
