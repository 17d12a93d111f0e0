"""Real git in temporary folders, sealed from the user's configuration."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from git_continuity.cli.main import main

BIN = Path(sys.executable).parent

# A run started in the background by a script (`cmd &` with no job control) inherits SIGINT
# ignored, and so would every command the tests start; the tests that press Ctrl-C need it
# delivered, as at a terminal (a command started from here then gets the default again).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
FIXED_ENV = {
    "GIT_AUTHOR_NAME": "Ada Agent",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Agent",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_EDITOR": "false",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONTINUITY_CHECK_JSON": "1",  # every --json document is checked against schema/
    # Commands run as agents run them: with no terminal, through the repository's helper
    # (helper/door.py); the in_process fixture runs a test's commands in their own process.
    "GIT_CONTINUITY_HELPER": "1",
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
    "XDG_STATE_HOME",
    # A test run inside an agent's session must not take on that session.
    "GIT_CONTINUITY_SESSION",
    "GIT_CONTINUITY_AGENT",
    "GIT_CONTINUITY_HOST",
    "GIT_CONTINUITY_BRIEF_TOKENS",
    "GIT_CONTINUITY_FRESH_LOOK",
    "GIT_CONTINUITY_CALLER_PID",
    "CLAUDE_PROJECT_DIR",
    # ... nor the agent conversation the commands it runs name (session.CONVERSATION_ENV).
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_SESSION_ID",
    "CODEX_THREAD_ID",
)


def helpers(*, copies: bool = False) -> dict[int, str]:
    """Every helper process on this machine: pid -> the folder it serves. A command's copy
    of a helper has its command line too, and may still be leaving when its client has
    ended: counted only with ``copies``."""
    found, parents = {}, {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as file:
                words = file.read().split(b"\0")
            with open(f"/proc/{entry.name}/stat", "rb") as file:
                parent = int(file.read().rpartition(b")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if len(words) > 3 and b"helper_server.serve" in words[2]:
            found[int(entry.name)] = words[3].decode(errors="replace")
            parents[int(entry.name)] = parent
    return {pid: folder for pid, folder in found.items() if copies or parents[pid] not in found}


def end_helpers(under: Path) -> None:
    """End the helpers that serve a folder under ``under`` (and the commands they run): none
    started by a test outlives it, and those of another test run are left alone."""
    for pid, folder in helpers(copies=True).items():
        if folder.startswith(f"{under}{os.sep}"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)  # a test may have stopped it
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(autouse=True)
def helpers_end_with_their_test(request: pytest.FixtureRequest) -> Iterator[None]:
    where = request.getfixturevalue("tmp_path") if "tmp_path" in request.fixturenames else None
    yield
    if where is not None:
        end_helpers(where)


@pytest.fixture(autouse=True, scope="session")
def helpers_end_with_the_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    end_helpers(tmp_path_factory.getbasetemp())


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test's commands each run in a process of their own, as at a terminal (the helper off)."""
    monkeypatch.setenv("GIT_CONTINUITY_HELPER", "0")


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
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
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


Run = Callable[..., Ran]  # the inproc fixture: (cwd, *args) -> Ran


def cont(cwd: Path, *args: str, monkeypatch: pytest.MonkeyPatch | None = None) -> Ran:
    """`git continuity ARGS` in a fresh process, exactly as a user or agent runs it."""
    done = subprocess.run(["git", "continuity", *args], cwd=cwd, capture_output=True, text=True)
    return Ran(done.returncode, done.stdout, done.stderr)


def at_a_terminal(where: Path, *args: str, timeout: float = 60, env: dict[str, str] | None = None) -> Ran:
    """``git continuity ARGS`` as a person runs it at a terminal: a pseudo-terminal that is its
    controlling terminal (/dev/tty) and its stdin, stdout and stderr; what it showed (the
    terminal's \\r\\n as \\n) as ``out``. ``env``: another person's environment."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: a session of its own, the terminal its controlling one
        try:
            os.chdir(where)
            os.execvpe("git", ["git", "continuity", *args], env if env is not None else os.environ)
        finally:
            os._exit(127)
    shown = _terminal_output(fd, timeout)
    return Ran(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), shown, "")


def by_a_person(where: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``git continuity ARGS`` that a person runs at a terminal (trusting a key, approving a
    command, accepting the team's list) and that must succeed; what it showed."""
    done = at_a_terminal(where, *args, env=env)
    assert done.code == 0, (args, done.out)
    return done.out


def approve(where: Path, command: str, env: dict[str, str] | None = None) -> str:
    """A person approves a command for cmd: checks, at a terminal."""
    return by_a_person(where, "trust", "allow", command, env=env)


NOT_APPROVED = "not approved on this machine (approving a command is a person's act, at their terminal)"


def approvals(work: Path) -> Path:
    """Where the commands approved for this repository are kept: beside the trusted keys, in
    the user's config folder, one file per repository folder (never in .git)."""
    import hashlib

    digest = hashlib.sha256(str((work / ".git").resolve()).encode()).hexdigest()[:20]
    return Path(os.environ["XDG_CONFIG_HOME"]) / "git-continuity" / "approved" / f"{digest}.json"


def flat(text: str) -> str:
    """Text a terminal showed, folded at its width and coloured, as one line of words."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


def _terminal_output(fd: int, timeout: float) -> str:
    """All a pseudo-terminal's other side showed until it closed (then ``fd`` is closed), with
    the terminal's \\r\\n as \\n."""
    import select

    got = b""
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        try:
            chunk = os.read(fd, 65536) if ready else b""
        except OSError:  # the terminal's other side closed: the command ended
            chunk = b""
        if not chunk:
            break
        got += chunk
    os.close(fd)
    return got.decode().replace("\r\n", "\n")


def on_a_pty(where: Path, args: list[str], env: dict[str, str], timeout: float) -> str:
    """``git continuity ARGS`` with a pseudo-terminal as stdout and stderr: what it showed,
    with the terminal's \\r\\n as \\n."""
    import pty

    main, side = pty.openpty()
    done = subprocess.Popen(
        ["git", "continuity", *args],
        cwd=where,
        stdin=subprocess.DEVNULL,
        stdout=side,
        stderr=side,
        env={**os.environ, "TERM": "xterm-256color", **env},
    )
    os.close(side)
    shown = _terminal_output(main, timeout)
    assert done.wait(timeout) == 0, shown
    return shown


SHELL = os.environ.get("SHELL") or "/bin/bash"  # the user's shell: what agent install asks


def shell_found(login: bool = False) -> str:
    flag = "-lc" if login else "-c"
    return f"the model's shell ({SHELL} {flag} 'command -v git-continuity') finds {BIN / 'git-continuity'}\n"


def shell_missing() -> str:
    return (
        f"warning: the model's shell ({SHELL} -lc 'command -v git-continuity') does not find git-continuity: "
        f"the brief tells the model to run {BIN / 'git-continuity'}\n"
    )


def ok(cwd: Path, *args: str) -> str:
    """`git continuity ARGS` that must succeed; what it printed."""
    done = cont(cwd, *args)
    assert done.code == 0, (args, done.out, done.err)
    return done.out


def made_id(out: str, prefix: str) -> str:
    """The first id of a kind (t, c, j…) a command printed."""
    found = re.search(rf"\b{prefix}-[2-9a-hjkmnp-z]{{6}}\b", out)
    assert found, out
    return found.group(0)


def claude_hook(work: Path, action: str, payload: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A Claude Code hook (``git-continuity-hook agent claude ACTION``) in a fresh process, as
    the agent runs it: its JSON answer and what it said on stderr."""
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", action],
        cwd=work,
        input=json.dumps({"cwd": str(work), **payload}),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer, done.stderr


def stop_hook(work: Path, *, active: bool = False, session: str = "conversation-1") -> tuple[dict[str, Any], str]:
    """Claude Code's Stop hook: its JSON answer and what it said on stderr."""
    return claude_hook(work, "stop", {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active})


@pytest.fixture
def inproc(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
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


def signing_key() -> Path:
    """This test user's git-continuity signing key (made by the first state write)."""
    return Path(os.environ["XDG_CONFIG_HOME"]) / "git-continuity" / "signing_ed25519"


def sign_with_own_key() -> list[str]:
    """git options that sign a commit with the user's git-continuity key, as a person does
    who edits the state by hand (git ... commit-tree -S)."""
    return ["-c", "gpg.format=ssh", "-c", f"user.signingKey={signing_key()}"]


def write_state(
    repo: Path,
    files: dict[str, str | bytes | None],
    message: str = "hand edit",
    ref: str = "refs/continuity/main",
    *,
    signed: bool = True,
) -> str:
    """Commit files onto a state ref with git plumbing only, as a person or another tool
    might (None removes a path): signed with the user's own key (a person's hand edit),
    or unsigned (signed=False: anything else holding .git). The ref moves by
    compare-and-swap; returns the new commit."""
    old = git(repo, "rev-parse", "--verify", ref)
    env = {**os.environ, "GIT_INDEX_FILE": str(repo / ".." / f"scratch-index-{os.getpid()}")}
    Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)

    def plumb(*args: str, data: bytes | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=repo, env=env, input=data, capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode().strip()

    plumb("read-tree", old)
    for path, content in files.items():
        if content is None:
            plumb("update-index", "--force-remove", "--", path)
        else:
            blob = plumb("hash-object", "-w", "--stdin", data=content.encode() if isinstance(content, str) else content)
            plumb("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}")
    tree = plumb("write-tree")
    sign = [*sign_with_own_key(), "commit-tree", "-S"] if signed else ["commit-tree"]
    new = plumb(*sign, tree, "-p", old, "-m", message)
    plumb("update-ref", ref, new, old)
    Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    return new


# -- the real pre-commit framework (test_hooks_framework.py, test_closure.py) ---------------

CHECKOUT = Path(__file__).resolve().parents[1]  # the checkout under test (CI installs it non-editable)
ALL_HOOKS = ("continuity-closure", "continuity-provenance", "continuity-push-guard", "continuity-rewrite")


@dataclass(frozen=True)
class HookRepo:
    """A repository the pre-commit framework can install hooks from, holding the code under test."""

    path: Path
    rev: str
    home: Path  # PRE_COMMIT_HOME, where the hook environment was built once for the session

    def config(self, where: Path, hooks: tuple[str, ...] = ALL_HOOKS) -> Path:
        """A .pre-commit-config.yaml (written at ``where``) using these hooks of this repository."""
        listed = ", ".join(f"{{id: {h}}}" for h in hooks)
        where.write_text(f"repos:\n  - repo: {self.path}\n    rev: {self.rev}\n    hooks: [{listed}]\n")
        return where


def _session_env(home: Path) -> dict[str, str]:
    """The hermetic seal for session fixtures, which run before the per-test seal applies."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in REMOVED_ENV}
    env.update(FIXED_ENV)
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    return env


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    """A snapshot of the checkout (tracked and untracked files, not ignored ones) committed in a
    repository of its own, so that the framework installs the code under test, uncommitted
    changes included; the hook environment is built here once (pip installs the project)."""
    import shutil

    base = tmp_path_factory.mktemp("pre-commit")
    home = base / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Ada Agent\n\temail = ada@example.com\n")
    env = {**_session_env(home), "PRE_COMMIT_HOME": str(base / "cache")}

    def run(cwd: Path, *args: str) -> str:
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        return done.stdout

    snapshot = base / "hook-repo"
    listed = run(CHECKOUT, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = CHECKOUT / name
        if source.is_file():  # a tracked file deleted in the work tree is not part of the snapshot
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    assert (snapshot / ".pre-commit-hooks.yaml").is_file(), f"{CHECKOUT} is not the project checkout"
    run(snapshot, "git", "init", "-q", "-b", "main")
    run(snapshot, "git", "add", "-A")
    run(snapshot, "git", "commit", "-q", "-m", "snapshot of the checkout under test")
    found = HookRepo(snapshot, run(snapshot, "git", "rev-parse", "HEAD").strip(), base / "cache")

    warm = base / "warm"
    run(base, "git", "init", "-q", str(warm))
    found.config(warm / ".pre-commit-config.yaml", (*ALL_HOOKS, "continuity-state"))
    run(warm, sys.executable, "-m", "pre_commit", "install-hooks")
    return found


@pytest.fixture
def precommit(hook_repo: HookRepo, monkeypatch: pytest.MonkeyPatch) -> HookRepo:
    """The session's hook repository, with PRE_COMMIT_HOME pointing at its built environment."""
    monkeypatch.setenv("PRE_COMMIT_HOME", str(hook_repo.home))
    return hook_repo


THREAD_LINE = re.compile(r"^Thread (t-[2-9a-hjkmnp-z]{6}) opened: ", re.MULTILINE)


class Cli:
    """`git continuity` in this process, for setting up (ten times faster than a fresh
    process); what a test asserts runs through git and its hooks, or in a fresh process.
    Test modules subclass it with the few readers they need."""

    def __init__(self, run: Callable[..., Ran]) -> None:
        self.run = run

    def ok(self, cwd: Path, *args: str) -> str:
        done = self.run(cwd, *args)
        assert done.code == 0, f"git continuity {' '.join(args)}: {done.out}{done.err}"
        return done.out

    def thread(self, cwd: Path, title: str, *checks: str) -> str:
        """A new thread with these checks; its id."""
        out = self.ok(cwd, "thread", "add", title, *[arg for c in checks for arg in ("--check", c)])
        match = THREAD_LINE.search(out)
        assert match, out
        return match.group(1)


def kept_in(git_dir: Path) -> str:
    """A place guard's refusal's last line: it runs once the message is written (the commit-msg
    hook), which is kept in the commit's git folder."""
    return f"Its message is kept in {git_dir / 'COMMIT_EDITMSG'}.\n"
