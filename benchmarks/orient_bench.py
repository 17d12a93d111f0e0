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

Each command runs as an agent runs it, with no controlling terminal, twice: in its own
process (GIT_CONTINUITY_HELPER=0) and handed to the repository's helper process (helper/door.py),
which the agent hooks are not.

    python benchmarks/orient_bench.py [--runs 15] [--commits 10000] [--journal 10000] [--claims 1000]

Target (issue 13): orient and each agent hook at most 200 ms median at 1,000 claims.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from status_bench import ENV, build_state, make_history, one_size_parser, sh

# An installed package carries its compiled bytecode (pip compiles it); a checkout run with
# PYTHONDONTWRITEBYTECODE would compile every module on every start and measure that instead.
ENV.pop("PYTHONDONTWRITEBYTECODE", None)
OWN = {**ENV, "GIT_CONTINUITY_HELPER": "0"}
HELPED = {**ENV, "GIT_CONTINUITY_HELPER": "1"}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def measure(cwd: Path, argv: list[str], runs: int, stdin: str = "", env: dict[str, str] = OWN) -> tuple[float, float]:
    """Medians of wall-clock time and of the processes' CPU time (user + system), in ms: on
    a busy machine every start waits for a core, which the CPU time leaves out (and which
    does not count a command the helper ran: that process is not this one's child)."""
    wall, cpu = [], []
    for _ in range(runs):
        used = _children_cpu()
        start = time.perf_counter()
        done = subprocess.run(
            argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=False, start_new_session=True
        )
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
    args = one_size_parser(__doc__).parse_args()
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
        measure(work, [*cont, "status"], 1, env=HELPED)  # starts the helper
        time.sleep(2)
        commands = {
            "orient": [*cont, "orient"],
            "orient --max-tokens 2500": [*cont, "orient", "--max-tokens", "2500"],
            "orient --json": [*cont, "orient", "--json"],
        }
        rows: list[tuple[str, tuple[float, float], float | None]] = [
            (name, measure(work, argv, args.runs), measure(work, argv, args.runs, env=HELPED)[0])
            for name, argv in commands.items()
        ]
        rows += [
            ("SessionStart hook (claude)", measure(work, [*hook, "session-start"], args.runs, hook_input), None),
            ("Stop hook (claude)", measure(work, [*hook, "stop"], args.runs, stop_input), None),
        ]
        handoff = [*cont, "handoff"]
        rows.append(("handoff", measure(work, handoff, args.runs), measure(work, handoff, args.runs, env=HELPED)[0]))
        print(f"first orient (validates and caches): {first[0]:.0f} ms wall, {first[1]:.0f} ms CPU")
        print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
        print(f"{'median of ' + str(args.runs):<28} {'own process':>19} {'helper':>8} {'target':>8}")
        print(f"{'':<28} {'wall':>8} {'CPU':>10} {'wall':>8}")
        for name, (wall, cpu) in floors:
            print(f"{name:<28} {wall:>6.0f}ms {cpu:>8.0f}ms {'':>8} {'(a floor)':>8}")
        for name, (wall, cpu), helped in rows:
            shown = f"{helped:>6.0f}ms" if helped is not None else f"{'-':>8}"
            print(f"{name:<28} {wall:>6.0f}ms {cpu:>8.0f}ms {shown} {'200ms' if name != 'handoff' else '-':>8}")
    print(f"target: orient and each agent hook at most 200 ms median at {args.claims} claims")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
