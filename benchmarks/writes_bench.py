"""How long each write command takes at 1,000 claims (issue 13's budget).

The repository of status_bench.py (10,000 commits, 10,000 journal entries) with a state of
N claims. Each write command runs as a user runs it, in a fresh process; before every run
the state ref is put back on the same commit, so each run writes one change onto the same
N claims (and the packet does not grow from run to run). Printed beside floors measured in
the same run: Python starting, Python importing pygit2 (every write needs the object
database), and `git continuity --version` (git finding the command, Python starting, the
command line parsed).

Each write is timed in its own process (GIT_CONTINUITY_HELPER=0: what the budget is for, and
what a command at a terminal does), then handed to the repository's helper as a command
without a terminal is (an agent's, a script's; the first run starts the helper); then once
more through the helper and in its own process with signing off (``git config continuity.sign
false``: no signature made, none checked), so the last column is what tamper evidence (issue
26) adds to a write through the helper, and the second beside the first what it adds in a
process of its own.

    python benchmarks/writes_bench.py [--runs 15] [--claims 1000]

Budget: each write at most 120 ms median at 1,000 claims; signing adds at most 10 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from status_bench import ENV, SANDBOX, build_state, make_history, median_ms, one_size_parser, sh

WRITES = {
    "claim add": ["claim", "add", "the tip exists", "--check", "commit:HEAD"],
    "thread add": ["thread", "add", "Ship it", "--check", "reachable:HEAD@refs/heads/main"],
    "journal add": ["journal", "add", "tried the fast path"],
    "blocker add": ["blocker", "add", "waiting for review"],
    "next": ["next", "measure again"],
}


SEEN: dict[Path, bytes] = {}  # the witness as the first write found it


def witness_files() -> dict[Path, bytes]:
    """The witness as it is now (trust/witness.py): put back with the state ref before each run,
    so every run writes onto a state this user has seen, as a write does."""
    folder = SANDBOX / "state" / "git-continuity" / "witness"
    return {p: p.read_bytes() for p in folder.rglob("*.json")}


def median_write(work: Path, args: list[str], base: str, runs: int, *, helper: bool = False) -> float:
    env = {**ENV, "GIT_CONTINUITY_HELPER": "1" if helper else "0"}
    times = []
    seen = SEEN or witness_files()
    SEEN.update(seen)
    for _ in range(runs):
        sh(work, "git", "update-ref", "refs/continuity/main", base)
        for path, data in seen.items():
            path.write_bytes(data)
        start = time.perf_counter()
        done = subprocess.run(
            ["git", "continuity", *args], cwd=work, env=env, capture_output=True, check=False, start_new_session=True
        )
        times.append((time.perf_counter() - start) * 1000)
        assert done.returncode == 0, done.stderr.decode()
    return statistics.median(times)


def main() -> int:
    args = one_size_parser(__doc__).parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        revs = make_history(work, args.commits)
        build_state(work, revs, args.claims, args.journal)
        sh(work, "git", "continuity", "status")  # validates every entry once, then caches
        base = sh(work, "git", "rev-parse", "refs/continuity/main").strip()
        floors = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import pygit2'": [sys.executable, "-c", "import pygit2"],
            "git continuity --version": ["git", "continuity", "--version"],
        }
        print(f"state: {args.claims:,} claims, {args.journal:,} journal entries; median of {args.runs} runs")
        for name, argv in floors.items():
            print(f"  floor  {name:<26} {median_ms(work, argv, args.runs):>5.0f} ms")
        own = {name: median_write(work, argv, base, args.runs) for name, argv in WRITES.items()}
        median_write(work, WRITES["journal add"], base, 1, helper=True)  # starts the helper
        time.sleep(1)  # and lets it listen
        served = {name: median_write(work, argv, base, args.runs, helper=True) for name, argv in WRITES.items()}
        sh(work, "git", "config", "continuity.sign", "false")
        unsigned = {name: median_write(work, argv, base, args.runs, helper=True) for name, argv in WRITES.items()}
        own_unsigned = {name: median_write(work, argv, base, args.runs) for name, argv in WRITES.items()}
        print(f"  {'write':<24} {'own process':>11} {'unsigned':>9} {'helper':>8} {'unsigned':>9} {'signing':>8}")
        for name in WRITES:
            cost = served[name] - unsigned[name]
            print(
                f"  {name:<24} {own[name]:>8.0f} ms {own_unsigned[name]:>6.0f} ms"
                f" {served[name]:>5.0f} ms {unsigned[name]:>6.0f} ms {cost:>+5.0f} ms"
            )
    print("budget: each write at most 120 ms median at 1,000 claims; signing at most +10 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
