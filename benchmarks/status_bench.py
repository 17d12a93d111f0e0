"""How long `git continuity status` takes on a big repository (issue 13's budget).

A repository with 10,000 commits, a remote-tracking ref and tags; a state of N claims with
local git handles (dereferenced live on every status) and 10,000 journal entries. Prints the
median of repeated runs of the real command, at 100, 1,000, 10,000 and 100,000 claims, with
how much it grew from one size to the next, beside floors measured in the same run: Python
starting, Python importing pygit2 (which status cannot avoid), and git itself listing every
file of the same state (`git ls-tree -r`).

Each size's first run reads every entry, checks it against schema/ and keeps what it read by
object id under .git/continuity/cache/ (the validity cache, the claims folder by its tree id,
what each tree holds); the medians are of the runs after it, as a status runs once anything
has read the state. The median is printed twice: run as an agent or a script runs it, with
no terminal, so the repository's helper process serves it (helper/door.py), and with
GIT_CONTINUITY_HELPER=0, a process of its own as at a terminal. Either way every handle is
dereferenced now. The load average is printed with the figures.

    python benchmarks/status_bench.py [--runs 15] [--commits 10000] [--journal 10000] [--claims 100 1000]

Budget (issue 13): at most 150 ms median at 1,000 claims and 1 s at 100,000, growing
sub-linearly past 10,000.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, JournalEntry, now, stamp

# Bytecode is written and used, as in an installed package (a shell that sets
# PYTHONDONTWRITEBYTECODE would otherwise make every run compile the sources again).
# The signing key, the trusted signers and the witness (trust/signing.py, trust/signers.py, trust/witness.py)
# live in the user's config and state folders: a benchmark's are its own, never the user's,
# and the processes it starts of itself (contention_bench's writers) share them.
SANDBOX = Path(os.environ.get("CONTINUITY_BENCH_SANDBOX") or tempfile.mkdtemp(prefix="continuity-bench-user-"))
os.environ["CONTINUITY_BENCH_SANDBOX"] = str(SANDBOX)
for _name, _sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("XDG_CACHE_HOME", "cache")):
    os.environ[_name] = str(SANDBOX / _sub)
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def sh(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    return subprocess.run(args, cwd=cwd, env=ENV, input=stdin, capture_output=True, check=True).stdout.decode()


def make_history(path: Path, commits: int) -> list[str]:
    """A linear history of `commits` commits, built with git fast-import."""
    sh(path.parent, "git", "init", "-q", "-b", "main", str(path))
    lines = []
    for i in range(1, commits + 1):
        data = f"change {i}\n".encode()
        lines.append(b"commit refs/heads/main\n")
        lines.append(f"mark :{i}\ncommitter Bench <bench@example.com> {1_700_000_000 + i} +0000\n".encode())
        msg = f"commit {i}\n".encode()
        lines.append(f"data {len(msg)}\n".encode() + msg)
        if i > 1:
            lines.append(f"from :{i - 1}\n".encode())
        lines.append(f"M 100644 inline file{i % 50}.txt\ndata {len(data)}\n".encode() + data + b"\n")
    sh(path, "git", "fast-import", "--quiet", stdin=b"".join(lines))
    sh(path, "git", "reset", "-q", "--hard", "main")
    revs = sh(path, "git", "rev-list", "--reverse", "main").split()
    sh(path, "git", "update-ref", "refs/remotes/origin/main", revs[-min(100, len(revs))])
    for n in range(20):
        sh(path, "git", "tag", f"v{n}", revs[n * len(revs) // 25])
    sh(path, "git", "remote", "add", "origin", str(path))
    return revs


PACKET = b"""\
objective:
  text: Ship it
  why: bench
  set_at: '2026-11-30T10:00:00Z'
  set_by: Bench
next_action: measure
blockers: []
"""


def build_state(path: Path, revs: list[str], claims: int, journal: int) -> None:
    repo = git.open_repo(path)
    store.update(
        repo,
        "main",
        lambda s: store.Change(
            "init",
            {
                f"{store.ROOT}/format": b"1\n",
                f"{store.ROOT}/packet.yaml": PACKET,
            },
        ),
        create=True,
    )
    moment = now()
    files: dict[str, bytes | None] = {}
    kinds = [
        lambda r: f"commit:{r}",
        lambda r: f"reachable:{r}@refs/heads/main",
        lambda r: f"pushed:{r}@origin/main",
        lambda r: f"tag:v{int(r, 16) % 20}",
        lambda r: f"file:file{int(r, 16) % 60}.txt@{r}",
        lambda r: f"ref:refs/heads/main={r}",
    ]
    for i in range(claims):
        rev = revs[(i * 7919) % len(revs)]
        c = Claim(
            id=f"c-{_code(i)}",
            text=f"claim {i}",
            added_at=stamp(moment),
            added_by="Bench",
            host="bench",
            handle=kinds[i % len(kinds)](rev),
        )
        files[store.claim_path(c.id)] = store.entry_bytes(c)
    for i in range(journal):
        at = moment - timedelta(minutes=journal - i)
        e = JournalEntry(id=f"j-{_code(i)}", text=f"entry {i}", at=stamp(at), by="Bench", host="bench")
        files[store.journal_path(e, at)] = store.entry_bytes(e)
    store.update(repo, "main", lambda s: store.Change(f"bench: {claims} claims", files))


def _code(i: int) -> str:
    alphabet = "23456789abcdefghjkmnpqrstuvwxyz"
    out = ""
    for _ in range(6):
        i, r = divmod(i, len(alphabet))
        out = alphabet[r] + out
    return out


ALONE = {**ENV, "GIT_CONTINUITY_HELPER": "0"}  # each command in a process of its own


def one_size_parser(doc: str | None) -> argparse.ArgumentParser:
    """The options of a benchmark on this repository at one size of state (writes, orient)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--journal", type=int, default=10_000)
    parser.add_argument("--claims", type=int, default=1_000)
    return parser


def median_ms(cwd: Path, argv: list[str], runs: int, env: dict[str, str] = ENV) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def helper_up(work: Path) -> None:
    """Wait (a few seconds at most) for the helper the first run started to listen."""
    sock = work / ".git" / "continuity" / "helper.sock"
    for _ in range(100):
        if sock.exists():
            return
        time.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--journal", type=int, default=10_000)
    parser.add_argument("--claims", type=int, nargs="*", default=[100, 1_000, 10_000, 100_000])
    args = parser.parse_args()
    status = ["git", "continuity", "status"]  # as a user runs it: git finds git-continuity
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "history"
        t0 = time.perf_counter()
        revs = make_history(base, args.commits)
        print(f"history: {args.commits} commits built in {time.perf_counter() - t0:.1f}s")
        floors = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import pygit2'": [sys.executable, "-c", "import pygit2"],
        }
        for name, argv in floors.items():
            print(f"floor  {name}: {median_ms(base, argv, args.runs):.0f} ms median of {args.runs}")
        print(f"journal: {args.journal:,} entries; floor beside each size: git ls-tree -r of the same state")
        print(f"{'claims':>7} {'first run':>10} {'median':>8} {'growth':>22} {'no helper':>10} {'git ls-tree -r':>15}")
        previous: tuple[int, float] | None = None
        for n in args.claims:
            work = Path(tmp) / f"c{n}"
            sh(Path(tmp), "git", "clone", "-q", "--no-local", str(base), str(work))
            sh(work, "git", "update-ref", "refs/remotes/origin/main", revs[-min(100, len(revs))])
            for i in range(20):
                sh(work, "git", "tag", "-f", f"v{i}", revs[i * 400])
            build_state(work, revs, n, args.journal)
            runs = args.runs if n <= 10_000 else max(3, args.runs // 3)
            first = median_ms(work, status, 1)  # validates every entry once, then caches
            helper_up(work)
            med = median_ms(work, status, runs)
            alone = median_ms(work, status, runs, ALONE)
            listing = median_ms(work, ["git", "ls-tree", "-r", "refs/continuity/main"], runs)
            growth = f"{med / previous[1]:.1f}x for {n / previous[0]:g}x claims" if previous else "-"
            print(f"{n:>7} {first:>8.0f}ms {med:>6.0f}ms {growth:>22} {alone:>8.0f}ms {listing:>12.0f} ms")
            previous = (n, med)
            shutil.rmtree(work)
    print("budget: 150 ms median at 1,000 claims; 1 s at 100,000; sub-linear growth past 10,000")
    print("load average (1, 5, 15 min) at the end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
