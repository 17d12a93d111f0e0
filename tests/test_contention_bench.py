"""benchmarks/contention_bench.py at a reduced size, so that it cannot rot: its writers, each
a process of the benchmark's own, share its signing key and witness, and every write lands.
(Its writers had each a sandbox of their own, so every write was refused as signed by a key
not trusted there.) The times it prints are for docs/speed.md, never asserted here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "contention_bench.py"


def test_the_contention_benchmark_applies_every_write_at_a_reduced_size() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--writers", "2", "--ops", "5", "--alone", "3"],
        cwd=BENCH.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    lines = done.stdout.splitlines()
    assert lines[0] == "2 writers x 5 operations, each a fresh process; floor: one writer alone"
    assert next(line for line in lines if "failed" in line).endswith("failed 0")
    assert lines[-2:] == ["  applied: all 10", "budget: every operation applied, none over 10 s"]
