"""How long `git continuity orient` takes on the benchmark repository (issue 5's budget).

The repository of status_bench.py: 10,000 commits, a remote-tracking ref and tags, a state of
1,000 claims with local git handles (every one re-dereferenced by orient) and 10,000 journal
entries; plus an open thread, a handoff to compare with, and commits and a moved
remote-tracking ref since that handoff, so every part of the brief is computed. Prints the
median of repeated runs of the real commands in fresh processes, beside a baseline (python
starting and importing pygit2) measured in the same run:

- ``orient``, the whole brief (the session it starts is continued by the runs after it);
- ``orient --max-tokens 2500``, the brief the SessionStart hook asks for;
- ``orient --json``;
- the Claude Code SessionStart and Stop hooks themselves, fed their JSON on stdin (the first
  Stop closes the thread, whose check verifies: the runs after it judge a state with no open
  thread, as at the end of finished work);
- ``handoff`` (each run ends a session; it writes one commit).

    python benchmarks/orient_bench.py [--runs 15] [--commits 10000] [--journal 10000] [--claims 1000]

Target (issue 13): orient and each agent hook at most 200 ms median at 1,000 claims.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from status_bench import ENV, build_state, make_history, sh

# An installed package carries its compiled bytecode (pip compiles it); a checkout run with
# PYTHONDONTWRITEBYTECODE would compile every module on every start and measure that instead.
ENV.pop("PYTHONDONTWRITEBYTECODE", None)


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(cwd: Path, argv: list[str], runs: int, stdin: str = "") -> tuple[float, float]:
    """Medians of wall-clock time and of the processes' CPU time (user + system), in ms: on
    a busy machine every start waits for a core, which the CPU time leaves out."""
    wall, cpu = [], []
    for _ in range(runs):
        used = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=ENV, input=stdin, capture_output=True, text=True, check=False)
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((_children_cpu() - used) * 1000)
        assert done.returncode == 0, done.stderr
    return statistics.median(wall), statistics.median(cpu)


def prepare(work: Path, revs: list[str]) -> None:
    """A thread, a session that hands off, and work after it: the 'since' part of the brief."""
    cont = ["git", "continuity"]
    sh(work, *cont, "thread", "add", "Ship it", "--check", f"reachable:{revs[-1]}@refs/heads/main")
    sh(work, *cont, "orient")
    sh(work, *cont, "handoff")
    for n in range(5):
        sh(work, "git", "commit", "-q", "--allow-empty", "-m", f"after the handoff {n}")
    sh(work, "git", "update-ref", "refs/remotes/origin/main", revs[-50])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--journal", type=int, default=10_000)
    parser.add_argument("--claims", type=int, default=1_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "history"
        t0 = time.perf_counter()
        revs = make_history(base, args.commits)
        work = Path(tmp) / "work"
        sh(Path(tmp), "git", "clone", "-q", "--no-local", str(base), str(work))
        sh(work, "git", "update-ref", "refs/remotes/origin/main", revs[-100])
        for i in range(20):
            sh(work, "git", "tag", "-f", f"v{i}", revs[i * 400])
        build_state(work, revs, args.claims, args.journal)
        prepare(work, revs)
        print(
            f"repository: {args.commits} commits, {args.claims} claims, {args.journal} journal entries, "
            f"a handoff; built in {time.perf_counter() - t0:.1f}s"
        )
        floors = [
            ("python", measure(work, [sys.executable, "-c", "pass"], args.runs)),
            ("python + import pygit2", measure(work, [sys.executable, "-c", "import pygit2"], args.runs)),
        ]
        cont = ["git", "continuity"]
        first = measure(work, [*cont, "orient"], 1)  # starts the session; caches warm up
        hook_input = json.dumps(
            {"session_id": "bench", "cwd": str(work), "hook_event_name": "SessionStart", "source": "startup"}
        )
        stop_input = json.dumps(
            {"session_id": "bench", "cwd": str(work), "hook_event_name": "Stop", "stop_hook_active": False}
        )
        hook = ["git-continuity-hook", "agent", "claude"]
        rows = [
            ("orient", measure(work, [*cont, "orient"], args.runs)),
            ("orient --max-tokens 2500", measure(work, [*cont, "orient", "--max-tokens", "2500"], args.runs)),
            ("orient --json", measure(work, [*cont, "orient", "--json"], args.runs)),
            ("SessionStart hook (claude)", measure(work, [*hook, "session-start"], args.runs, hook_input)),
            ("Stop hook (claude)", measure(work, [*hook, "stop"], args.runs, stop_input)),
            ("handoff", measure(work, [*cont, "handoff"], args.runs)),
        ]
        print(f"first orient (validates and caches): {first[0]:.0f} ms wall, {first[1]:.0f} ms CPU")
        print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
        print(f"{'median of ' + str(args.runs):<28} {'wall':>8} {'CPU':>8} {'target':>8}")
        for name, (wall, cpu) in floors:
            print(f"{name:<28} {wall:>6.0f}ms {cpu:>6.0f}ms   (a floor)")
        for name, (wall, cpu) in rows:
            print(f"{name:<28} {wall:>6.0f}ms {cpu:>6.0f}ms {'200ms' if name != 'handoff' else '-':>8}")
    print(f"target: orient and each agent hook at most 200 ms median at {args.claims} claims")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
