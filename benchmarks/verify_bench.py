"""How long `git continuity verify --online` takes on 100 network claims (issue 6's budget).

A loopback server speaking GitHub's API (the tests' fake, whose answers are checked against
GitHub's published description) answers every request after 50 ms. The state holds 100
`github:pr/...` claims. Each round clears the conditional-request cache, runs the real
command in a fresh process (every request answered in full), then runs it again (every
request answered 304 from the cache). Prints the median of each, and how many full and 304
answers the server sent.

    python benchmarks/verify_bench.py [--runs 5] [--claims 100] [--delay 0.05]

Budget: at most 1 s median for the first run; the second sends no full answers.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from forge_fakes import FakeGitHub

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, new_id, now, stamp

ENV = {
    **os.environ,
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "GH_TOKEN": "bench-token",
}


def make_state(path: Path, claims: int) -> None:
    subprocess.run(["git", "init", "-q", str(path)], env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "one"], cwd=path, env=ENV, check=True)
    subprocess.run(["git", "continuity", "init"], cwd=path, env=ENV, check=True, capture_output=True)
    repo = git.open_repo(path)
    moment = now()
    taken: set[str] = set()
    files: dict[str, bytes | None] = {}
    for n in range(1, claims + 1):
        claim_id = new_id("claim", taken)
        taken.add(claim_id)
        handle = f"github:pr/octo/app#{n}=open"
        claim = Claim(claim_id, f"PR {n} is open", stamp(moment), "Bench <bench@example.com>", "bench", handle)
        files[store.claim_path(claim_id)] = store.entry_bytes(claim)
    store.update(repo, "main", lambda snap: store.Change(f"bench: {claims} claims", files))


def timed(path: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(["git", "continuity", "verify", "--online", "--json"], cwd=path, env=env, capture_output=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"verify exited {done.returncode}:\n{done.stdout.decode()[-2000:]}{done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--claims", type=int, default=100)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds the server waits before each answer")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as tmp, FakeGitHub() as github:
        github.delay = args.delay
        for n in range(1, args.claims + 1):
            github.add_pull("octo", "app", n)
        path = Path(tmp) / "repo"
        make_state(path, args.claims)
        env = {**ENV, "GITHUB_API_URL": github.url}
        cache = path / ".git" / "continuity" / "cache" / "http"
        first, second = [], []
        for run in range(args.runs):
            shutil.rmtree(cache, ignore_errors=True)
            before = dict(github.sent)
            first.append(timed(path, env))
            middle = dict(github.sent)
            second.append(timed(path, env))
            after = dict(github.sent)
            cold = {k: middle[k] - before[k] for k in before}
            warm = {k: after[k] - middle[k] for k in middle}
            print(
                f"run {run + 1}: first {first[-1] * 1000:.0f} ms ({cold['full']} full, {cold['not_modified']} 304), "
                f"second {second[-1] * 1000:.0f} ms ({warm['full']} full, {warm['not_modified']} 304)"
            )
        if github.errors:
            raise SystemExit(f"the fake broke GitHub's description: {github.errors[:3]}")
        print(
            f"\n{args.claims} network claims, server answering each request after {args.delay * 1000:.0f} ms:\n"
            f"  first run (full answers):  median {statistics.median(first) * 1000:.0f} ms (budget 1000 ms)\n"
            f"  second run (304 answers):  median {statistics.median(second) * 1000:.0f} ms"
        )


if __name__ == "__main__":
    main()
