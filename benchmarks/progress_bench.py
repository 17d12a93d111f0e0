"""How long `git continuity progress` and `orient` take when one thread has 10,000 attempts
(issue 14: "10,000 attempts on one thread: progress stays fast").

A state with one thread (a failing check) and N attempts on it, spread over 100 sessions,
the same failure each time. Prints the median of repeated runs of the real commands in a
fresh process, the first run (nothing cached yet) apart.

    python benchmarks/progress_bench.py [--runs 9] [--attempts 10000]

Budget: progress at 10,000 attempts within 1 s; orient within its 400 ms plus what reading
the attempts costs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from status_bench import ENV, PACKET, _code, sh

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, Thread, now, stamp
from git_continuity.store.attempts import Attempt, AttemptCheck, fingerprint


def build(path: Path, attempts: int) -> None:
    sh(path.parent, "git", "init", "-q", "-b", "main", str(path))
    sh(path, "git", "commit", "-q", "--allow-empty", "-m", "first")
    repo = git.open_repo(path)
    store.update(
        repo,
        "main",
        lambda s: store.Change("init", {f"{store.ROOT}/format": b"1\n", f"{store.ROOT}/packet.yaml": PACKET}),
        create=True,
    )
    moment = now()
    at = stamp(moment - timedelta(days=30))
    thread = Thread("t-2222aa", "Docker build passes", "open", at, "Bench", "bench")
    claim = Claim("c-2222aa", "the image builds", at, "Bench", "bench", handle="tag:no-such-tag", thread=thread.id)
    seen = "no tag no-such-tag here"
    files: dict[str, bytes | None] = {
        store.thread_path(thread.id): store.entry_bytes(thread),
        store.claim_path(claim.id): store.entry_bytes(claim),
    }
    check = AttemptCheck(
        claim.id, "tag:no-such-tag", "contradicted", fingerprint("tag:no-such-tag", "contradicted", seen), seen
    )
    for i in range(attempts):
        when = moment - timedelta(minutes=attempts - i)
        a = Attempt(f"a-{_code(i)}", thread.id, stamp(when), "verify", "bench", (check,), session=f"s-{_code(i % 100)}")
        files[store.attempt_path(a, when)] = store.attempt_bytes(a)
    store.update(repo, "main", lambda s: store.Change(f"bench: {attempts} attempts", files))


def timed(cwd: Path, argv: list[str], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
        assert done.returncode == 0, done.stderr.decode()
    return times[0], statistics.median(times[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--attempts", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "repo"
        build(path, args.attempts)
        for name, argv in (
            ("progress", ["git", "continuity", "progress"]),
            ("progress --json", ["git", "continuity", "progress", "--json"]),
            ("orient", ["git", "continuity", "orient"]),
        ):
            first, median = timed(path, argv, args.runs)
            print(f"{name:16} at {args.attempts:,} attempts: first {first:.0f} ms, median {median:.0f} ms")
    print("budget: progress within 1,000 ms at 10,000 attempts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
