"""Tokens for the forges, from the environment or the forge's own CLI.

A token lives in memory for one process: it is sent to its forge's API host and nowhere
else, and never written into state, evidence, notes, caches or logs.
"""

from __future__ import annotations

import functools
import os


def from_env(*names: str) -> str | None:
    """The first of these environment variables that is set and not blank."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


@functools.cache
def gh_cli(hostname: str) -> str | None:
    """``gh auth token`` for hostname, when gh is installed and logged in (gh's own order
    puts GH_TOKEN and GITHUB_TOKEN first; the caller asks the environment before this)."""
    import shutil
    import subprocess  # here, not at the top: every verifier imports this module, most never run gh

    gh = shutil.which("gh")
    if gh is None:
        return None
    try:
        done = subprocess.run(
            [gh, "auth", "token", "--hostname", hostname],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    token = done.stdout.strip()
    return token if done.returncode == 0 and token and "\n" not in token else None


def github(api_host: str) -> str | None:
    """GitHub's token order, as gh uses it: GH_TOKEN, GITHUB_TOKEN, then ``gh auth token``.
    (For GitHub Enterprise Server, gh reads GH_ENTERPRISE_TOKEN first.)"""
    public = api_host in ("api.github.com", "github.com")
    names: tuple[str, ...] = ("GH_TOKEN", "GITHUB_TOKEN")
    if not public:
        names = ("GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN", *names)
    host = "github.com" if public else api_host
    return from_env(*names) or gh_cli(host)
