"""benchmarks/fleet_bench.py at a reduced size: a fleet of worktrees writing at once and of
clones syncing one git daemon at once, every write applied, every sync exiting 0 (on the
shared ref or its clone's lane) and every entry in every clone.
The times it prints are for docs/speed.md's tables, never asserted here."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "fleet_bench.py"


def test_the_fleet_benchmark_loses_nothing_at_a_reduced_size(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--worktrees", "3", "--writes", "5", "--clones", "3", "--rounds", "2"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    shape = re.sub(r" +\d+(\.\d+)? (ms|s)\b", " T", done.stdout)
    shape = re.sub(
        r"retries: \d+ in all, at most \d+ in one sync \(\d+ of",
        "retries: N in all, at most M in one sync (K of",
        shape,
    )
    shape = re.sub(r"landed: \d+ on the shared ref, \d+ on", "landed: S on the shared ref, L on", shape)
    shape = re.sub(
        r"\(\d+\.\d s in all\); (\d+) agents at once on \d+ cores", r"(T in all); \1 agents at once on C cores", shape
    )
    assert shape == (
        "fleet: 3 worktrees of one repository x 5 mixed writes at once, each a fresh process\n"
        "  write     15  p50 T  p95 T  max T   wall T; failed 0\n"
        "  floor  CPU T per operation (T in all); 3 agents at once on C cores: at least T each\n"
        "  applied: 15 of 15 (0 lost)\n"
        "fleet: 3 clones of one remote (git daemon on 127.0.0.1) x 2 rounds of write + sync at once\n"
        "  write      6  p50 T  p95 T  max T\n"
        "  sync       6  p50 T  p95 T  max T   wall T\n"
        "  floor  CPU T per operation (T in all); 3 agents at once on C cores: at least T each"
        " (a write and a sync counted as one operation each)\n"
        "  retries: N in all, at most M in one sync (K of 6 syncs retried); failed 0\n"
        "  landed: S on the shared ref, L on the clone's lane (other clones pushed first)\n"
        "  entries at the end: 6 written, in each of 3 clones: 0 lost\n"
        "budget: worktrees p95 write T, none over T, 0 lost; clones p95 sync T, at most 5 retries, 0 lost\n"
    )
