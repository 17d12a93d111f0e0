"""Four writers at once on one stream (issue 10's contention budget).

W writers start together in one repository, each running N mixed write commands one after
the other as a user runs them (`next`, `blocker add`, `journal add`, `claim add`,
`thread add`, each in a fresh process). Prints how long each kind of operation took
(median, 95th percentile, longest) beside the same operations run by one writer alone in
the same run (the floor), the wall time, and whether every operation was applied: the
state must end with every blocker, journal entry, claim and thread each writer added, and
one state commit per operation.

    python benchmarks/contention_bench.py [--writers 4] [--ops 250] [--alone 20]

Budget: 4 writers x 250 operations all applied, none over 10 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from status_bench import ENV, sh
from writes_bench import witness_files

KINDS = ("next", "blocker add", "journal add", "claim add", "thread add")


def operation(writer: int, n: int) -> tuple[str, list[str]]:
    kind = KINDS[n % len(KINDS)]
    tag = f"w{writer} op{n}"
    args = {
        "next": ["next", f"next action of {tag}"],
        "blocker add": ["blocker", "add", f"blocker of {tag}"],
        "journal add": ["journal", "add", f"entry of {tag}"],
        "claim add": ["claim", "add", f"claim of {tag}", "--check", "commit:HEAD"],
        "thread add": ["thread", "add", f"thread of {tag}", "--check", "file:README"],
    }[kind]
    return kind, args


def run_writer(work: Path, writer: int, ops: int) -> list[tuple[str, float, int]]:
    """(kind, seconds, exit code) of each operation, in order."""
    out = []
    for n in range(ops):
        kind, args = operation(writer, n)
        start = time.perf_counter()
        done = subprocess.run(["git", "continuity", *args], cwd=work, env=ENV, capture_output=True, check=False)
        out.append((kind, time.perf_counter() - start, done.returncode))
    return out


def table(label: str, results: list[tuple[str, float, int]]) -> None:
    for kind in KINDS:
        times = sorted(t * 1000 for k, t, _ in results if k == kind)
        if not times:
            continue
        p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
        print(
            f"  {label:<7} {kind:<12} {len(times):>5}  median {statistics.median(times):>6.0f} ms"
            f"  p95 {p95:>6.0f} ms  longest {times[-1]:>6.0f} ms"
        )


def applied(work: Path, base: str, writers: int, ops: int) -> list[str]:
    """What is missing from the state after the run (empty: everything was applied)."""
    missing = []
    count = int(sh(work, "git", "rev-list", "--count", f"{base}..refs/continuity/main"))
    if count != writers * ops:
        missing.append(f"{count} state commits for {writers * ops} operations")
    status = json.loads(sh(work, "git", "continuity", "status", "--json"))
    blockers = {b["text"] for b in status["blockers"]}
    claims = {c["text"] for c in status["claims"]}
    threads = {t["title"] for t in status["threads"]}
    entries = json.loads(sh(work, "git", "continuity", "journal", "--json", "-n", str(writers * ops)))["entries"]
    texts = {e["text"] for e in entries}
    for w in range(writers):
        for n in range(ops):
            kind, args = operation(w, n)
            text = args[-1] if kind in ("next", "blocker add", "journal add") else args[2]
            found = {
                "next": True,  # each next replaces the last: counted by the state commits
                "blocker add": text in blockers,
                "journal add": text in texts,
                "claim add": text in claims,
                "thread add": text in threads,
            }[kind]
            if not found:
                missing.append(f"{kind} {text!r}")
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--ops", type=int, default=250)
    parser.add_argument("--alone", type=int, default=20, help="operations of the one writer alone (the floor)")
    parser.add_argument("--worker", nargs=3, metavar=("REPO", "WRITER", "OPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        work, writer, ops = Path(args.worker[0]), int(args.worker[1]), int(args.worker[2])
        print(json.dumps(run_writer(work, writer, ops)))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        sh(Path(tmp), "git", "init", "-q", "-b", "main", str(work))
        (work / "README").write_text("hello\n")
        sh(work, "git", "add", "README")
        sh(work, "git", "commit", "-q", "-m", "first")
        sh(work, "git", "continuity", "init")
        base = sh(work, "git", "rev-parse", "refs/continuity/main").strip()
        seen = witness_files()
        alone = run_writer(work, 99, args.alone)
        # Back where the writers start, the witness with it (the newest state seen: trust/witness.py).
        sh(work, "git", "update-ref", "refs/continuity/main", base)
        for path, data in seen.items():
            path.write_bytes(data)
        print(f"{args.writers} writers x {args.ops} operations, each a fresh process; floor: one writer alone")
        table("alone", alone)
        start = time.perf_counter()
        workers = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", str(work), str(w), str(args.ops)],
                env=ENV,
                stdout=subprocess.PIPE,
                text=True,
            )
            for w in range(args.writers)
        ]
        results = [entry for p in workers for entry in json.loads(p.communicate()[0])]
        wall = time.perf_counter() - start
        failed = [r for r in results if r[2] != 0]
        table("at once", results)
        longest = max(t for _, t, _ in results)
        missing = applied(work, base, args.writers, args.ops)
        print(f"  wall {wall:.1f} s; longest operation {longest:.1f} s; failed {len(failed)}")
        print(f"  applied: {'all ' + str(len(results)) if not missing else 'NOT ALL: ' + '; '.join(missing[:5])}")
    print("budget: every operation applied, none over 10 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
