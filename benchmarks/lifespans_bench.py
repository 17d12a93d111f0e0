"""What lifespans cost `journal` and `orient` on a long journal (issue 15).

10,000 journal entries spread over 200 days, a tenth of them decisions and a tenth findings,
so that most are faded notes and telling them apart needs each old entry's kind. Prints the
median of repeated runs of the real commands in fresh processes beside a baseline (python
starting and importing pygit2) measured in the same run, and the first run of each (the
kinds of old days are read once, then kept by the day folder's tree id).

    python benchmarks/lifespans_bench.py [--runs 15] [--journal 10000] [--days 200]

Budget: orient at most 200 ms over the baseline; journal within the same.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from status_bench import PACKET, _code, median_ms, sh

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import JournalEntry, now, stamp


def build(path: Path, journal: int, days: int) -> None:
    sh(path.parent, "git", "init", "-q", "-b", "main", str(path))
    sh(path, "git", "commit", "-q", "--allow-empty", "-m", "first")
    repo = git.open_repo(path)
    files: dict[str, bytes | None] = {f"{store.ROOT}/format": b"1\n", f"{store.ROOT}/packet.yaml": PACKET}
    moment = now()
    step = timedelta(days=days) / journal
    for i in range(journal):
        at = moment - step * (journal - i)
        kind = "decision" if i % 10 == 0 else "finding" if i % 10 == 1 else None
        e = JournalEntry(id=f"j-{_code(i)}", text=f"entry {i}", at=stamp(at), by="Bench", host="bench", kind=kind)
        files[store.journal_path(e, at)] = store.entry_bytes(e)
    store.update(repo, "main", lambda s: store.Change("bench: journal", files), create=True)


def first_ms(cwd: Path, argv: list[str]) -> float:
    start = time.perf_counter()
    sh(cwd, *argv)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--journal", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "repo"
        build(work, args.journal, args.days)
        baseline = median_ms(work, [sys.executable, "-c", "import pygit2"], args.runs)
        print(f"{args.journal} journal entries over {args.days} days; baseline (python + pygit2) {baseline:.0f} ms")
        for argv in (["git", "continuity", "journal"], ["git", "continuity", "orient"]):
            first = first_ms(work, argv)
            med = median_ms(work, argv, args.runs)
            print(f"{' '.join(argv[1:]):>20}: first run {first:.0f} ms, median {med:.0f} ms ({med - baseline:+.0f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
