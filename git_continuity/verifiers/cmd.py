"""The ``cmd:`` handle: a command that must exit 0, run only once approved on this machine."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping, Sequence

from git_continuity.api import (
    GIT_CONTINUITY_VERSION,
    Handle,
    Observation,
    Repository,
    Scheme,
    UserError,
    Verifier,
    VerifyContext,
    hookimpl,
    redact,
    tail,
)

NAME = "cmd"
SEEN = Verifier(NAME, GIT_CONTINUITY_VERSION)
SCHEMES = (
    Scheme(
        "cmd",
        "the command exits 0 in the work tree (runs only once a person approves it here, at their terminal)",
        "'cmd:python -m pytest -q'",
        False,
    ),
)


@hookimpl
def continuity_schemes() -> Sequence[Scheme]:
    return SCHEMES


@hookimpl
def continuity_resolve(handle: Handle, repo: Repository) -> Handle | None:
    command = handle.body.strip()
    if not command:
        raise UserError("handle 'cmd:' names no command, e.g. 'cmd:python -m pytest -q'")
    if "\0" in command or "\n" in command:
        raise UserError(f"handle {handle.text!r}: a cmd: check is one line with no NUL characters")
    return Handle("cmd", command)


# What git exports to its hooks to point at this repository's internals. A command run from
# a hook (a test suite that makes its own repositories, say) must not inherit them, or its
# git calls act on the wrong index or repository (pre-commit's git.no_git_env for the same).
HOOK_GIT_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_QUARANTINE_PATH",
    "GIT_CONTINUITY_CALLER_PID",  # who asked for this command, not for the one it runs
)


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in HOOK_GIT_VARIABLES}


def _end(group: int, signal: int) -> None:
    """Signal the command's process group, which may be gone already: the command ended at
    the moment its time ran out, or a Ctrl-C reached it too and subprocess reaped it while
    waiting a moment for it. Nothing is left to end then; the interrupt or the timeout stands."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal)


def run(ctx: VerifyContext, command: str) -> Observation:
    if not ctx.repo.command_approved(command):
        # Never the command that approves it: this text is kept as evidence and read by agents.
        return SEEN.unknown("not approved on this machine (approving a command is a person's act, at their terminal)")
    if ctx.repo.work_dir is None:
        return SEEN.unknown("a bare repository has no work tree to run it in")
    tree = ctx.repo.worktree_tree()
    on = {"worktree": tree} if tree else {}
    where = f"on work tree {tree[:7]}" if tree else ""
    if ctx.tree is not None and tree != ctx.tree:
        # While a commit is being made (commit-msg), it must run on what is committed: a work
        # tree holding more (unstaged or untracked files) would test something else.
        return SEEN.unknown(
            f"the work tree ({(tree or '-')[:7]}) is not what is being committed (tree {ctx.tree[:7]}), so "
            "running it here would not test the commit: commit or stash the rest first "
            "(git stash push --keep-index --include-untracked)",
        )
    import signal
    import subprocess  # here, not at the top: loading the plugin (every write's resolve) runs nothing

    limit = ctx.policy.cmd_timeout.total_seconds()
    start = time.monotonic()
    # Its own session, so a timeout can stop the command and everything it started.
    proc = subprocess.Popen(
        ["sh", "-c", command],
        cwd=ctx.repo.work_dir,
        env=_clean_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _end(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        shown = tail(redact(out.decode(errors="replace")))
        return SEEN.unknown(f"timed out after {limit:g}s {where}" + (f"; output:\n{shown}" if shown else ""), on)
    except BaseException:
        # Ctrl-C, or any other way out: in a session of its own the command gets no signal from
        # the terminal, so end it and all it started before going.
        _end(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    took = time.monotonic() - start
    shown = tail(redact(out.decode(errors="replace")))
    said = f"exit {proc.returncode} in {took:.1f}s {where}" + (f"; output:\n{shown}" if shown else "")
    return (SEEN.verified if proc.returncode == 0 else SEEN.contradicted)(said, on)


@hookimpl
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation]:
    return {h: run(context, h.body) for h in handles}
