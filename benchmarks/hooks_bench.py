"""What the continuity hooks add to a commit that closes nothing (issue 13's targets).

Side by side in one run, alternating, on commits whose message names no thread:
  - a bare commit, no hooks at all: the floor of the plain hooks;
  - the plain git hooks (`git continuity hooks install`) in a repository with an active
    stream, an objective, a thread and an open session (as an agent has it);
  - a no-op hook through the pre-commit framework at the pre-commit, commit-msg and
    post-commit stages: the framework's own cost, the floor of its row;
  - a no-op hook of `language: python` at the same stages: for every such hook, on every run,
    pre-commit checks its environment's health by starting the environment's Python, a cost
    any Python hook pays before its own entry runs (which is why the continuity hooks are not
    Python hooks);
  - a no-op `language: script` hook from a hook repository (not `repo: local`) at the same
    stages: what the framework spends on a hook repository itself (reading and checking its
    manifest, finding its clone in the store) beside a local hook;
  - the continuity hooks through the framework at the same stages (place guard, closure
    guard, provenance note), on the same state as the plain hooks' row: `language: script`
    entries running the plain hooks' shell scripts, with no hook environment, and the
    git-continuity on PATH when they need it.

    python benchmarks/hooks_bench.py [--runs 41] [--no-framework]

Targets: the plain hooks add at most 25 ms to the median bare commit; through the framework,
at most 40 ms over the no-op hook. Printed with --runs 21 on a busy 2-core machine (load
average 2.5): plain hooks +19.7 ms over 5.5 ms; the continuity hooks through the framework
+12.7 ms (CPU +15.6 ms) over 403 ms, where the no-op python hook adds +46.1 ms and a no-op
hook repository -5.8 ms (docs/speed.md has the spread over several runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def env_for(home: Path) -> dict[str, str]:
    # Installed packages carry compiled bytecode; PYTHONDONTWRITEBYTECODE would measure compiling.
    kept = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **kept,
        "HOME": str(home),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Bench",
        "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "Bench",
        "GIT_COMMITTER_EMAIL": "bench@example.com",
        "PRE_COMMIT_HOME": str(home / "pre-commit-cache"),
    }


def sh(cwd: Path, env: dict[str, str], *args: str) -> str:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def snapshot_of_project(dest: Path, env: dict[str, str]) -> str:
    """This checkout as it is (uncommitted changes included) as a repository pre-commit can use."""
    files = sh(ROOT, env, "git", "ls-files", "--cached", "--others", "--exclude-standard").split("\n")
    for name in filter(None, files):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    sh(dest, env, "git", "init", "-q")
    sh(dest, env, "git", "add", "-A")
    sh(dest, env, "git", "commit", "-q", "-m", "snapshot")
    return sh(dest, env, "git", "rev-parse", "HEAD").strip()


def as_an_agent_has_it(path: Path, env: dict[str, str]) -> None:
    """An active stream with an objective, a thread and an open session."""
    sh(path, env, "git", "continuity", "init")
    sh(path, env, "git", "continuity", "objective", "set", "bench", "--why", "measure")
    sh(path, env, "git", "continuity", "thread", "add", "a thread", "--check", "commit:HEAD")
    sh(path, env, "git", "continuity", "orient")  # an open session


def noop_hook_repo(dest: Path, env: dict[str, str]) -> str:
    """A hook repository whose one hook, a `language: script` that does nothing, runs at the
    three commit-time stages, as the continuity hooks do: what a hook repository costs the
    framework (its manifest read and checked, its clone looked up) beside a local hook."""
    dest.mkdir()
    (dest / "noop").write_text("#!/bin/sh\n")
    (dest / "noop").chmod(0o755)
    (dest / ".pre-commit-hooks.yaml").write_text(
        "- id: noop\n  name: noop\n  entry: noop\n  language: script\n"
        "  stages: [pre-commit, commit-msg, post-commit]\n  always_run: true\n  pass_filenames: false\n"
    )
    sh(dest, env, "git", "init", "-q")
    sh(dest, env, "git", "add", "-A")
    sh(dest, env, "git", "commit", "-q", "-m", "noop")
    return sh(dest, env, "git", "rev-parse", "HEAD").strip()


def make_repo(path: Path, env: dict[str, str]) -> None:
    sh(path.parent, env, "git", "init", "-q", str(path))
    sh(path, env, "git", "commit", "-q", "--allow-empty", "-m", "first")


FLOORS = {
    "plain hooks": "no hooks",
    "pre-commit: no-op python hook": "pre-commit: no-op hook",
    "pre-commit: no-op hook repo": "pre-commit: no-op hook",
    "pre-commit: continuity hooks": "pre-commit: no-op hook",
}
TARGETS = {
    "plain hooks": 25.0,
    "pre-commit: no-op python hook": 0.0,
    "pre-commit: no-op hook repo": 0.0,
    "pre-commit: continuity hooks": 40.0,
}


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def report(label: str, medians: dict[str, float], runs: int) -> None:
    print(f"\n{label}, median of {runs}:")
    print(f"  {'commit':<30} {'median':>8} {'floor':>8} {'added':>8} {'target':>8}")
    for name, med in medians.items():
        if name in FLOORS:
            floor = medians[FLOORS[name]]
            added = med - floor
            target = f"{TARGETS[name]:>+6.0f}ms" if TARGETS[name] else "     -"
            print(f"  {name:<30} {med:>6.1f}ms {floor:>6.1f}ms {added:>+6.1f}ms {target}")
        else:
            print(f"  {name:<30} {med:>6.1f}ms   (a floor)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=41)
    parser.add_argument("--no-framework", action="store_true", help="skip the pre-commit framework rows")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "home").mkdir()
        env = env_for(base / "home")
        repos: dict[str, Path] = {}
        repos["no hooks"] = base / "bare-commit"
        make_repo(repos["no hooks"], env)
        repos["plain hooks"] = base / "plain"
        make_repo(repos["plain hooks"], env)
        as_an_agent_has_it(repos["plain hooks"], env)
        sh(repos["plain hooks"], env, "git", "continuity", "hooks", "install")
        if not args.no_framework:
            hook_repo = base / "hook-repo"
            hook_repo.mkdir()
            rev = snapshot_of_project(hook_repo, env)
            noop_repo = base / "noop-hook-repo"
            noop_rev = noop_hook_repo(noop_repo, env)
            stages = "[pre-commit, commit-msg, post-commit]"
            configs = {
                "pre-commit: no-op hook": f"""repos:
- repo: local
  hooks:
  - id: noop
    name: noop
    entry: "true"
    language: system
    stages: {stages}
    always_run: true
    pass_filenames: false
""",
                "pre-commit: no-op python hook": f"""repos:
- repo: local
  hooks:
  - id: noop
    name: noop
    entry: "true"
    language: python
    stages: {stages}
    always_run: true
    pass_filenames: false
""",
                "pre-commit: no-op hook repo": f"""repos:
- repo: {noop_repo}
  rev: {noop_rev}
  hooks:
  - id: noop
""",
                "pre-commit: continuity hooks": f"""repos:
- repo: {hook_repo}
  rev: {rev}
  hooks:
  - id: continuity-place-guard
  - id: continuity-closure
  - id: continuity-provenance
""",
            }
            for name, config in configs.items():
                path = base / name.replace(" ", "-").replace(":", "")
                make_repo(path, env)
                if name == "pre-commit: continuity hooks":
                    as_an_agent_has_it(path, env)  # the same state as the plain hooks' row
                else:
                    sh(path, env, "git", "continuity", "init")
                (path / ".pre-commit-config.yaml").write_text(config)
                types = ("pre-commit", "commit-msg", "post-commit")
                sh(path, env, "pre-commit", "install", *[a for t in types for a in ("--hook-type", t)])
                t0 = time.perf_counter()
                sh(path, env, "pre-commit", "install-hooks")
                print(f"{name}: environment built in {time.perf_counter() - t0:.1f}s (once)")
                repos[name] = path
        times: dict[str, list[float]] = {name: [] for name in repos}
        cpu: dict[str, list[float]] = {name: [] for name in repos}
        for i in range(args.runs):
            for name, path in repos.items():  # alternate, so drift hits every row alike
                used = _children_cpu()
                start = time.perf_counter()
                sh(path, env, "git", "commit", "-q", "--allow-empty", "-m", f"change {i}: nothing closed")
                times[name].append((time.perf_counter() - start) * 1000)
                cpu[name].append((_children_cpu() - used) * 1000)
        print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
        # Wall-clock medians are what a person waits; on a busy machine every process start
        # waits for a core, so the processes' own CPU time (user + system) is printed beside.
        for label, values in (("wall clock", times), ("CPU time of the processes", cpu)):
            report(label, {name: statistics.median(v) for name, v in values.items()}, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
