"""benchmarks/real_history_bench.py at a reduced size, so that it cannot rot: it builds its
history, old branches, loose tags and journal, runs every read and hook right after a commit,
a push and a fetch, warm, and on a branch no remote has, and prints a row for each beside git's own. The times it prints
are for docs/speed.md, never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "real_history_bench.py"
ROWS = [
    "status",
    "orient",
    "orient, no fresh look",
    "verify",
    "SessionStart",
    "SessionStart, resumed",
    "Stop",
    "commit, continuity hooks",
    "commit, no hooks (floor)",
]


@pytest.mark.slow
def test_the_real_history_benchmark_runs_every_read_and_hook_in_every_situation_at_a_reduced_size() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(BENCH),
            *("--runs", "1", "--commits", "400", "--files", "40", "--branches", "3", "--pulls", "20", "--tags", "50"),
            *("--journal", "300", "--days", "30", "--claims", "30", "--done", "2"),
        ],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].startswith(
        "history: 400 commits with merges, 40 files, 3 old branches, 20 pull refs on the remote, 50 loose tags; "
        "state: 30 claims, 2 done threads, 300 journal entries over 30 days; built in "
    )
    situations = [line for line in lines if not line.startswith(" ")][1:]
    assert situations[:-1] == [
        *("warm:", "after a commit:", "after a push:", "after a fetch:", "on a branch no remote has:"),
        "floors, same run:",
    ]
    assert situations[-1].startswith("load average at the end: ")
    named = [line.split("  ")[1].strip() for line in lines if line.startswith("  ") and "ms" in line]
    assert named == [*ROWS, "hooks added (median)"] * 5 + [
        "git log -1",
        "git merge-base --is-ancestor HEAD~5",
        "git merge-base --is-ancestor, far",
        "python -c pass",
    ]
