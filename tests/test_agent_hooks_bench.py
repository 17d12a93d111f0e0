"""benchmarks/agent_hooks_bench.py at a reduced size: each agent hook's command, run as the agent
runs it (the settings file's command through sh, with the agent's names for the project), exits
0 in its own process and through the helper. The times it prints are for docs/speed.md's
table, never asserted here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "agent_hooks_bench.py"


def test_every_agent_hook_runs_as_installed_at_a_reduced_size() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--runs", "1", "--commits", "50", "--journal", "20", "--claims", "10"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    shape = re.sub(r" +\d+\.\d+ ms", " T", done.stdout)
    shape = re.sub(r"built in \d+\.\ds", "built in S", shape)
    shape = re.sub(r"load average at the end: .*\n", "load average at the end: L\n", shape)
    shape = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", shape)
    assert shape == (
        "repository: 50 commits, 10 claims, 20 journal entries; built in S\n"
        "load average at the end: L\n"
        "median of 1                         own process    helper   budget\n"
        "floor: python -c pass T T         \n"
        "floor: python -c 'import pygit2' T T         \n"
        "SessionStart (claude) T T   100 ms\n"
        "Stop (claude) T T    60 ms\n"
        "Stop, work changed (claude) T T    60 ms\n"
        "PostToolUse (codex) T T    30 ms\n"
        "PostToolUseFailure (claude) T T    30 ms\n"
        "UserPromptSubmit (claude)             no hook installed: the agent runs nothing\n"
        "a second remote that never answers; the brief says: mirror (git://127.0.0.1:PORT/cli.git) was not reached: "
        "did not answer within 1 s\n"
        "SessionStart, a remote hangs T T  1100 ms\n"
        "orient, a remote hangs T T  1200 ms\n"
        "budget with a remote that hangs: the fresh look's bound (1 s) + the hook's or orient's own budget\n"
    )
