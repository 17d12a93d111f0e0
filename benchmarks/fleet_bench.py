"""A fleet of agents on one repository and one remote (issue 25's budget).

Two runs, each through the command line in fresh processes, as agents call it:

1. W worktrees of one repository, each writing N mixed state changes (`next`, `blocker add`,
   `journal add`, `claim add`, `thread add`) one after the other, all worktrees at once.
2. C clones of one bare remote served by `git daemon` on 127.0.0.1, each doing R rounds of
   `journal add` + `sync --json`, all clones at once; then one more sync round and a pull
   round, and every clone must hold every entry. A sync whose push other clones beat lands
   on its clone's lane (remote_layout), and the next sync of any clone folds it in.

Prints p50/p95/max per write and per sync, the retries the syncs took, and the entries at
the end (0 lost); exits 1 when anything was lost or failed. Beside them, the floor of the
same run: the machine's CPU time the run took (all processes: clients, helpers, git, the
daemon; /proc/stat) per operation, and what that implies when every agent runs at once on
this machine's cores: no operation can take less than CPU per operation x agents / cores.

    python benchmarks/fleet_bench.py [--worktrees 20] [--writes 25] [--clones 12] [--rounds 10]

Budget: worktrees: every write applied, p95 under 0.5 s, none over 5 s; clones: every sync
exits 0 with at most 5 retries, p95 under 3 s, every entry in every clone (0 lost).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from contention_bench import applied, operation
from status_bench import ENV, sh

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from gitserver import git_daemon


def timed(cwd: Path, *args: str) -> tuple[float, int, str]:
    start = time.perf_counter()
    done = subprocess.run(["git", "continuity", *args], cwd=cwd, env=ENV, capture_output=True, text=True)
    return time.perf_counter() - start, done.returncode, done.stdout if done.returncode == 0 else done.stderr


def busy() -> float:
    """CPU seconds the whole machine has spent (every process), from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    ticks = sum(int(n) for i, n in enumerate(fields[:8]) if i not in (3, 4))  # all but idle and iowait
    return ticks / os.sysconf("SC_CLK_TCK")


def floor(cpu: float, operations: int, agents: int) -> str:
    cores = os.cpu_count() or 1
    per = cpu / max(1, operations)
    return (
        f"  floor  CPU {per * 1000:.0f} ms per operation ({cpu:.1f} s in all); {agents} agents at once on {cores}"
        f" cores: at least {per * agents / cores * 1000:.0f} ms each"
    )


def spread(label: str, seconds: list[float]) -> str:
    times = sorted(t * 1000 for t in seconds)
    p50 = times[len(times) // 2]
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    return f"  {label:<6} {len(times):>5}  p50 {p50:>6.0f} ms  p95 {p95:>6.0f} ms  max {times[-1]:>6.0f} ms"


def worktrees(root: Path, count: int, writes: int) -> bool:
    main = root / "main"
    sh(root, "git", "init", "-q", "-b", "main", str(main))
    (main / "README").write_text("hello\n")
    sh(main, "git", "add", "README")
    sh(main, "git", "commit", "-q", "-m", "first")
    sh(main, "git", "continuity", "init")
    base = sh(main, "git", "rev-parse", "refs/continuity/main").strip()
    trees = []
    for w in range(count):
        sh(main, "git", "worktree", "add", "-q", "-b", f"agent-{w}", str(root / f"wt{w}"))
        trees.append(root / f"wt{w}")

    def writer(w: int) -> list[tuple[float, int, str]]:
        return [timed(trees[w], *operation(w, n)[1]) for n in range(writes)]

    print(f"fleet: {count} worktrees of one repository x {writes} mixed writes at once, each a fresh process")
    start, cpu = time.perf_counter(), busy()
    with ThreadPoolExecutor(count) as pool:
        results = [r for rs in pool.map(writer, range(count)) for r in rs]
    wall, cpu = time.perf_counter() - start, busy() - cpu
    failed = [r for r in results if r[1] != 0]
    missing = applied(main, base, count, writes)
    print(spread("write", [t for t, _, _ in results]) + f"   wall {wall:.1f} s; failed {len(failed)}")
    print(floor(cpu, len(results), count))
    lost = f"{len(missing)} lost: {'; '.join(missing[:3])}" if missing else "0 lost"
    print(f"  applied: {len(results) - len(missing)} of {len(results)} ({lost})")
    for _, code, said in failed[:3]:
        print(f"  failed ({code}): {said.strip()[:200]}")
    return not failed and not missing


def clones(root: Path, count: int, rounds: int) -> bool:
    (root / "served").mkdir()
    with git_daemon(root / "served", root / "daemon-home") as server:
        _, url = server.bare("fleet")
        seed = root / "seed"
        sh(root, "git", "init", "-q", "-b", "main", str(seed))
        (seed / "README").write_text("hello\n")
        sh(seed, "git", "add", "README")
        sh(seed, "git", "commit", "-q", "-m", "first")
        sh(seed, "git", "push", "-q", url, "main")
        work = [root / f"c{i:02}" for i in range(count)]
        for where in work:
            sh(root, "git", "clone", "-q", url, str(where))
        sh(work[0], "git", "continuity", "init")
        sh(work[0], "git", "continuity", "push")
        for where in work[1:]:
            sh(where, "git", "continuity", "pull")

        def agent(i: int) -> list[tuple[float, int, str, float, int, str]]:
            out = []
            for r in range(rounds):
                wrote = timed(work[i], "journal", "add", f"c{i:02} round {r}")
                out.append((*wrote, *timed(work[i], "sync", "--json")))
            return out

        print(
            f"fleet: {count} clones of one remote (git daemon on 127.0.0.1) x {rounds} rounds of write + sync at once"
        )
        start, cpu = time.perf_counter(), busy()
        with ThreadPoolExecutor(count) as pool:
            results = [r for rs in pool.map(agent, range(count)) for r in rs]
        wall, cpu = time.perf_counter() - start, busy() - cpu
        reports = [json.loads(said) for *_, code, said in results if code == 0]
        retries = [report["retries"] for report in reports]
        landed = [report["landed"] for report in reports]
        failed = [wrote for _, code, wrote, *_ in results if code] + [said for *_, code, said in results if code]
        print(spread("write", [r[0] for r in results]))
        print(spread("sync", [r[3] for r in results]) + f"   wall {wall:.1f} s")
        print(floor(cpu, 2 * len(results), count) + " (a write and a sync counted as one operation each)")
        print(
            f"  retries: {sum(retries)} in all, at most {max(retries, default=0)} in one sync"
            f" ({sum(1 for n in retries if n)} of {len(results)} syncs retried); failed {len(failed)}"
        )
        print(
            f"  landed: {landed.count('shared')} on the shared ref, {landed.count('lane')} on the clone's lane"
            " (other clones pushed first)"
        )
        for said in failed[:3]:
            print(f"  failed: {said.strip()[-600:] if 'Traceback' in said else said.strip()[:300]}")
        for where in work:  # one more round, then everyone takes in the last ones' entries
            timed(where, "sync")
        for where in work:
            timed(where, "pull")
        wanted = {f"c{i:02} round {r}" for i in range(count) for r in range(rounds)}
        short = []
        for where in work:
            entries = json.loads(sh(where, "git", "continuity", "journal", "--all", "--json"))["entries"]
            have = {e["text"] for e in entries}
            if wanted - have:
                short.append(f"{where.name} lacks {len(wanted - have)}")
        lost = "0 lost" if not short else "LOST: " + "; ".join(short[:3])
        print(f"  entries at the end: {len(wanted)} written, in each of {count} clones: {lost}")
        return not failed and not short


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worktrees", type=int, default=20)
    parser.add_argument("--writes", type=int, default=25)
    parser.add_argument("--clones", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--only", choices=("worktrees", "clones"), help="run one of the two")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fleet-bench-") as tmp:
        (Path(tmp) / "wt").mkdir()
        (Path(tmp) / "cl").mkdir()
        ok = True
        if args.only != "clones":
            ok = worktrees(Path(tmp) / "wt", args.worktrees, args.writes)
        if args.only != "worktrees":
            ok = clones(Path(tmp) / "cl", args.clones, args.rounds) and ok
    print("budget: worktrees p95 write 0.5 s, none over 5 s, 0 lost; clones p95 sync 3 s, at most 5 retries, 0 lost")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
