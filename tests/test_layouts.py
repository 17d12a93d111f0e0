"""Work-tree layouts people use (#35): sparse checkouts, and a git folder apart from its work
tree (``GIT_DIR`` with ``GIT_WORK_TREE``, or ``core.worktree``), as dotfile managers and some
CI set them. Each is made by real git and read as git reads it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import commit, git

EMAIL = "ada@example.com"


def run(where: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "continuity", *args], cwd=where, capture_output=True, text=True, env=env)


def ok(where: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = run(where, *args, env=env)
    assert (done.returncode, done.stderr) == (0, ""), (args, done.stdout, done.stderr)
    return done.stdout


def checks_of(where: Path, env: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    threads = json.loads(ok(where, "status", "--json", env=env))["threads"]
    return [(c["handle"], c["state"], c["observed"]) for t in threads for c in t["checks"]]


# -- sparse checkouts ---------------------------------------------------------------------------


def test_clean_in_a_sparse_checkout_counts_what_git_status_counts(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"app/main.py": "x\n", "docs/guide.md": "g\n", "docs/more.md": "m\n", "top.txt": "t\n"})
    git(work, "sparse-checkout", "set", "app")
    assert not (work / "docs").exists()
    assert git(work, "status", "--porcelain") == ""
    ok(work, "init")
    ok(work, "thread", "add", "Tidy", "--check", "clean:")
    assert checks_of(work) == [("clean:", "verified", "the work tree has no uncommitted changes")]

    (work / "app" / "main.py").write_text("y\n")
    assert checks_of(work) == [("clean:", "contradicted", "1 uncommitted change: app/main.py")]
