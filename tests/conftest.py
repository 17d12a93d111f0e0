"""Real git in temporary folders, sealed from the user's configuration."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_continuity.cli import main

BIN = Path(sys.executable).parent
FIXED_ENV = {
    "GIT_AUTHOR_NAME": "Ada Agent",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Agent",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_EDITOR": "false",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONTINUITY_CHECK_JSON": "1",  # every --json document is checked against schema/
    "LC_ALL": "C",
    "TZ": "UTC",
}
REMOVED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_CONTINUITY_STREAM",
    "GIT_CONTINUITY_TRACE",
    "VISUAL",
    "EDITOR",
    "GIT_CONFIG_GLOBAL",
    "XDG_CONFIG_HOME",
)


@pytest.fixture(autouse=True)
def hermetic_seal(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """HOME, config and identity of our own for every test; a test that reads the real
    HOME fails because it no longer exists as far as git is concerned."""
    home = tmp_path_factory.mktemp("home")
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Ada Agent\n\temail = ada@example.com\n"
        "[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n"
        '[protocol "file"]\n\tallow = always\n'
    )
    for name in REMOVED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    for key, value in FIXED_ENV.items():
        monkeypatch.setenv(key, value)
    yield


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout.strip()


@dataclass
class Ran:
    code: int
    out: str
    err: str


def cont(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch | None = None) -> Ran:
    """`git continuity ARGS` in a fresh process, exactly as a user or agent runs it."""
    done = subprocess.run(["git", "continuity", *args], cwd=cwd, capture_output=True, text=True)
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def inproc(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """`git continuity ARGS` in this process (fast, for the many small cases)."""

    def run(cwd: Path, *args: str) -> Ran:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run


def commit(repo: Path, message: str, files: dict[str, str] | None = None) -> str:
    for name, text in (files or {}).items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        git(repo, "add", name)
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with one commit."""
    path = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(path))
    commit(path, "first", {"README": "hello\n"})
    return path


@pytest.fixture
def remote_and_clone(tmp_path: Path) -> tuple[Path, Path]:
    """A bare remote with one commit on main and a clone of it."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    commit(seed, "first", {"README": "hello\n"})
    git(seed, "push", "-q", str(bare), "main")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(bare), str(work))
    return bare, work


def state_refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/continuity/")


def untouched(repo: Path) -> tuple[str, str, str, bytes]:
    """What writing state must never change: HEAD, branches and tags, the index, the work tree."""
    index = repo / ".git" / "index"
    return (
        git(repo, "rev-parse", "--symbolic-full-name", "HEAD", check=False)
        + git(repo, "rev-parse", "HEAD", check=False),
        git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/", "refs/tags/", "refs/remotes/"),
        git(repo, "status", "--porcelain", "--untracked-files=all", check=False),
        index.read_bytes() if index.exists() else b"",
    )


_HEX = re.compile(r"\b[0-9a-f]{40}\b")


def normalize(text: str, repo: Path | None = None) -> str:
    """Replace what differs between runs (ids, times, object ids) with stable placeholders,
    so the rest of the text can be asserted exactly."""
    text = re.sub(r"\b([cbjeo])-[2-9a-hjkmnp-z]{6}\b", r"\1-XXXXXX", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\dZ?", "TIME", text)
    text = _HEX.sub("<oid>", text)
    text = re.sub(r"\b[0-9a-f]{7}\b", "<short>", text)
    return text
