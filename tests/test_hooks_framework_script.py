"""The commit-time hooks of .pre-commit-hooks.yaml through the real pre-commit framework: they
are the plain hooks' shell scripts (``language: script``), with no hook environment for the
framework to build or to health-check on every commit (issue 13), and they run the
git-continuity on the user's PATH."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import conftest
import pytest
from conftest import HookRepo, Ran, git

COMMIT_TIME = ("continuity-place-guard", "continuity-closure", "continuity-provenance")
HOOK_TYPES = ("pre-commit", "commit-msg", "post-commit")
PASSED = "continuity place guard...Passed\ncontinuity closure guard...Passed\ncontinuity provenance note...Passed\n"


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Ran:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)
    return Ran(done.returncode, done.stdout, done.stderr)


def dots(text: str) -> str:
    """pre-commit's report without the dots that pad hook names."""
    return re.sub(r"\.{3,}", "...", text)


def missing(hook: str, hook_id: str) -> str:
    """What a commit-time hook says under the framework when no git-continuity is on PATH."""
    return (
        f"git-continuity: the {hook} hook ({hook_id} in .pre-commit-config.yaml) runs the git-continuity on PATH,"
        " and there is none: install git-continuity (the version its rev names), or leave the hook out with"
        f" SKIP={hook_id}\n"
    )


def failed(name: str, hook_id: str, said: str) -> str:
    return f"{name}...Failed\n- hook id: {hook_id}\n- exit code: 1\n\n{said}\n"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A pre-commit store of this test's own: what the commit-time hooks put there is all there is."""
    path = tmp_path / "pre-commit-store"
    monkeypatch.setenv("PRE_COMMIT_HOME", str(path))
    return path


@pytest.fixture
def work(inproc: Callable[..., Ran], repo: Path, hook_repo: HookRepo, store: Path) -> Path:
    """A repository with a stream started and the three commit-time hooks installed by
    `pre-commit install` and `pre-commit install-hooks`."""
    gc = conftest.Cli(inproc)
    gc.ok(repo, "init")
    hook_repo.config(repo / ".pre-commit-config.yaml", COMMIT_TIME)
    git(repo, "add", ".pre-commit-config.yaml")
    git(repo, "commit", "-q", "-m", "Use the continuity hooks")
    installed = run(repo, sys.executable, "-m", "pre_commit", "install", *[f"--hook-type={t}" for t in HOOK_TYPES])
    assert (installed.code, installed.out) == (
        0,
        "".join(f"pre-commit installed at .git/hooks/{t}\n" for t in HOOK_TYPES),
    )
    built = run(repo, sys.executable, "-m", "pre_commit", "install-hooks")
    # Only the hook repository is cloned: no "Installing environment" (pip, a virtualenv).
    assert (built.code, built.out, built.err) == (0, f"[INFO] Initializing environment for {hook_repo.path}.\n", "")
    return repo


def without_git_continuity() -> dict[str, str]:
    """The environment with no git-continuity anywhere on PATH (git and sh remain)."""
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if d and not (Path(d) / "git-continuity").exists()]
    return {**os.environ, "PATH": os.pathsep.join(kept)}


def test_the_commit_time_hooks_have_no_hook_environment(
    inproc: Callable[..., Ran], work: Path, hook_repo: HookRepo, store: Path
) -> None:
    gc = conftest.Cli(inproc)
    tid = gc.thread(work, "Write the notes", "file:NOTES.md")
    (work / "NOTES.md").write_text("notes\n")
    git(work, "add", "NOTES.md")
    made = run(work, "git", "commit", "-q", "-m", f"Write the notes; closes {tid}")
    assert (made.code, made.out, dots(made.err)) == (0, "", PASSED)
    (thread,) = json.loads(gc.ok(work, "status", "--json"))["threads"]
    assert (thread["status"], thread["closed_by"]) == ("done", git(work, "rev-parse", "HEAD"))
    plain = run(work, "git", "commit", "-q", "--allow-empty", "-m", "Plain work")
    assert (plain.code, plain.out, dots(plain.err)) == (0, "", PASSED)
    assert [json.loads(line)["kind"] for line in git(work, "notes", "--ref=continuity", "show").splitlines()] == [
        "provenance"
    ]

    # The store holds the clone of the hook repository and nothing built in it.
    (clone,) = [p for p in store.iterdir() if p.is_dir()]
    assert sorted(p.name for p in store.iterdir() if p != clone) == [".lock", "README", "db.db"]
    assert sorted(p.name for p in clone.iterdir()) == sorted(p.name for p in hook_repo.path.iterdir())


def test_without_git_continuity_on_path_a_hook_that_needs_it_fails(inproc: Callable[..., Ran], work: Path) -> None:
    gc = conftest.Cli(inproc)
    tid = gc.thread(work, "Tag the release", "tag:v1.0")
    env = without_git_continuity()
    assert shutil.which("git-continuity", path=env["PATH"]) is None

    # A commit that names no thread needs no git-continuity: the shell scripts decide, and
    # post-commit writes the note with git.
    plain = run(work, "git", "commit", "-q", "--allow-empty", "-m", "Plain work", env=env)
    assert (plain.code, plain.out, dots(plain.err)) == (0, "", PASSED)
    (note,) = git(work, "notes", "--ref=continuity", "show").splitlines()
    assert json.loads(note)["threads"] == []

    # One that names a thread needs it: the closure guard refuses rather than pass unchecked...
    head = git(work, "rev-parse", "HEAD")
    closing = run(work, "git", "commit", "-q", "--allow-empty", "-m", f"Release 1.0; closes {tid}", env=env)
    assert (closing.code, closing.out, dots(closing.err)) == (
        1,
        "",
        "continuity place guard...Passed\n"
        + failed("continuity closure guard", "continuity-closure", missing("commit-msg", "continuity-closure")),
    )
    assert git(work, "rev-parse", "HEAD") == head
    # ...and post-commit (which git runs even for --no-verify) fails: the commit is made, unnoted.
    unverified = run(work, "git", "commit", "-q", "--no-verify", "--allow-empty", "-m", f"Work on {tid}", env=env)
    assert (unverified.code, unverified.out, dots(unverified.err)) == (
        0,
        "",
        failed("continuity provenance note", "continuity-provenance", missing("post-commit", "continuity-provenance")),
    )
    assert git(work, "notes", "--ref=continuity", "list", "HEAD", check=False) == ""

    # A place that is not home: the place guard needs git-continuity to judge it.
    gc.ok(work, "place", "set", "repo", "donor", "--why", "copy parts, never commit")
    refused = run(work, "git", "commit", "-q", "--allow-empty", "-m", "More work", env=env)
    assert (refused.code, refused.out, dots(refused.err)) == (
        1,
        "",
        failed("continuity place guard", "continuity-place-guard", missing("pre-commit", "continuity-place-guard")),
    )
