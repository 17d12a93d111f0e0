"""The network, through the user's own git (their SSH agent, credential helpers, proxies)."""

from __future__ import annotations

import os
import subprocess

from git_continuity.repo import Repo


class TransportError(Exception):
    """git could not talk to the remote; the message is what git said."""


def _git(repo: Repo, args: list[str], timeout: float) -> str:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never hang on a password prompt
    try:
        done = subprocess.run(
            ["git", f"--git-dir={repo.common_dir}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise TransportError(f"git {args[0]} timed out after {timeout:g}s") from None
    if done.returncode != 0:
        # git's first fatal:/error: line says what went wrong; its last line is often
        # advice ("and the repository exists.").
        said = [line for line in done.stderr.splitlines() if line.strip()]
        first = next((line for line in said if line.startswith(("fatal:", "error:"))), said[-1] if said else None)
        raise TransportError(first or f"git {args[0]} exited {done.returncode}")
    return done.stdout


def remote_ref(repo: Repo, remote: str, refname: str, timeout: float) -> str | None:
    """Where ``refname`` points on the remote right now (None: the remote lacks it)."""
    out = _git(repo, ["ls-remote", "--", remote, refname], timeout)
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name == refname:
            return oid
    return None


def remote_refs(repo: Repo, remote: str, pattern: str, timeout: float) -> dict[str, str]:
    """The remote's refs matching a pattern (``refs/continuity/*``), by name: what a clone
    that never fetched them can be told it is missing."""
    out = _git(repo, ["ls-remote", "--", remote, pattern], timeout)
    found = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name:
            found[name] = oid
    return found
