"""How long taking in a diverged state takes (issue 4's budget): the local part of
`git continuity sync`, after the fetch.

Two states diverge from a common base by N entries on each side (half journal entries,
half claims, written ten to a commit), and both sides change the next action, so the packet
merges field by field and records a conflict. Timed, each from a cold validity cache:

- take in: validating the fetched state (every new entry against its schema), the merge,
  checking the merged tree and moving the ref: what `sync` does between fetch and push;
- merge: the three-way merge alone;
- the floor, measured in the same run: git itself reading every object of both sides
  (`git cat-file --batch-all-objects --batch`, the data the take-in must read at least once).

    python benchmarks/sync_bench.py [--runs 7] [--sizes 100,1000,10000]

Budget (issue 13): at most 1.5 s median for 10,000 entries on each side.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, JournalEntry, new_id
from git_continuity.repo import Oid, Repo
from git_continuity.store import merge, packetfile
from git_continuity.syncing import pulling as sync
from git_continuity.syncing.fetching import Fetched
from git_continuity.syncing.layout import layout_of

os.environ.update(
    {
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
    }
)
PER_COMMIT = 10
T0 = 1_800_000_000


def commit_files(r: Repo, parent: Oid | None, files: dict[str, bytes | None], at: int) -> Oid:
    tree = git.write_tree(r, git.commit_tree(r, parent) if parent else None, files)
    return git.write_commit_at(r, tree, [parent] if parent else [], "bench", at)


def entries(side: str, n: int) -> list[tuple[str, bytes]]:
    out = []
    taken: set[str] = set()
    for i in range(n):
        at = f"2026-11-30T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        if i % 2:
            c = Claim(new_id("claim", taken), f"{side} claim {i}", at, "Bench <b@example.com>", "host")
            taken.add(c.id)
            out.append((store.claim_path(c.id), store.entry_bytes(c)))
        else:
            j = JournalEntry(new_id("journal", taken), f"{side} entry {i}", at, "Bench <b@example.com>", "host")
            taken.add(j.id)
            out.append((f".continuity/journal/2026-11-30/{i:08d}-{side}-{j.id}.json", store.entry_bytes(j)))
    return out


def side(r: Repo, base: Oid, name: str, n: int, at: int) -> Oid:
    tip = base
    items = entries(name, n)
    for start in range(0, n, PER_COMMIT):
        tip = commit_files(r, tip, dict(items[start : start + PER_COMMIT]), at + start)
    doc, _ = packetfile.parse(packetfile.TEMPLATE)
    packetfile.Edit("next_action", f"{name}'s next action").on_doc(doc)
    return commit_files(r, tip, {packetfile.PATH: packetfile.dump(doc)}, at + n + 1)


def build(root: Path, n: int) -> tuple[Repo, Oid, Oid]:
    subprocess.run(["git", "init", "-q", "--bare", str(root)], check=True)
    # The commits are written here unsigned: signing and its checks off, so that what is timed
    # is the take-in (a pull left it out as unsigned, and before that refused it).
    subprocess.run(["git", "-C", str(root), "config", "continuity.sign", "false"], check=True)
    r = git.open_repo(root)
    base = commit_files(r, None, {".continuity/format": b"1\n", packetfile.PATH: packetfile.TEMPLATE.encode()}, T0)
    return r, side(r, base, "left", n, T0 + 10), side(r, base, "right", n, T0 + 20)


def cold(r: Repo) -> None:
    shutil.rmtree(r.local_dir / "cache", ignore_errors=True)


def take_in(r: Repo, left: Oid, right: Oid) -> float:
    git.set_ref(r, "refs/continuity/main", left, "bench: reset")
    cold(r)
    start = time.perf_counter()
    sync.validate(r, Fetched("origin", layout_of(r, "origin"), {"main": right}, None))
    with contextlib.redirect_stdout(io.StringIO()):
        sync.take_in(r, "main", right, "origin")
    return time.perf_counter() - start


def cat_file(r: Repo) -> float:
    start = time.perf_counter()
    subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=r.common_dir, stdout=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def merge_only(r: Repo, left: Oid, right: Oid) -> float:
    start = time.perf_counter()
    merged = merge.merge_commits(r, left, right)
    elapsed = time.perf_counter() - start
    assert len(merged.conflicts) == 1
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default="100,1000,10000")
    args = parser.parse_args()
    print(f"{'entries per side':>16}  {'take in (median)':>16}  {'merge alone (median)':>20}  {'git cat-file':>12}")
    with tempfile.TemporaryDirectory(prefix="sync-bench-") as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            r, left, right = build(Path(tmp) / f"n{n}.git", n)
            taken = statistics.median(take_in(r, left, right) for _ in range(args.runs))
            merged = statistics.median(merge_only(r, left, right) for _ in range(args.runs))
            read = statistics.median(cat_file(r) for _ in range(args.runs))
            print(f"{n:>16,}  {taken * 1000:>13.0f} ms  {merged * 1000:>17.0f} ms  {read * 1000:>9.0f} ms", flush=True)
    print("budget: 10,000 entries per side taken in within 1.5 s (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
