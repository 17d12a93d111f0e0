"""The real hook managers from npm, for the hook tests: husky and lefthook, pinned, installed
once into a cache folder (``$GIT_CONTINUITY_HOOK_MANAGERS``, else
``~/.cache/git-continuity-hook-managers``, read when this module is imported, before the tests'
hermetic seal swaps HOME) by the first test that needs them, with ``npm install --prefix``.
Without npm a test is skipped naming the install (a failure under CI)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PINS = {"husky": "9.1.7", "lefthook": "2.2.2"}
CACHE = Path(os.environ.get("GIT_CONTINUITY_HOOK_MANAGERS") or Path.home() / ".cache" / "git-continuity-hook-managers")
NPM_HOME = os.environ.get("HOME", "")  # npm runs with the user's own HOME, not the tests' sealed one


def _installed(name: str) -> str | None:
    try:
        found = json.loads((CACHE / "node_modules" / name / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        return None
    return found if isinstance(found, str) and (CACHE / "node_modules" / ".bin" / name).exists() else None


def install_command() -> str:
    return f"npm install --prefix {CACHE} --save-exact " + " ".join(f"{n}@{v}" for n, v in PINS.items())


def binary(name: str) -> Path:
    """The pinned manager's program, installed on first use when npm is here."""
    if _installed(name) != PINS[name]:
        npm = shutil.which("npm")
        if npm is not None:
            CACHE.mkdir(parents=True, exist_ok=True)
            with open(CACHE / ".install.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if any(_installed(n) != v for n, v in PINS.items()):
                    # --ignore-scripts, in the cache folder: lefthook's postinstall runs
                    # `lefthook install` in the folder npm was started from (a checkout's hooks).
                    subprocess.run(
                        [*install_command().split(), "--no-audit", "--no-fund", "--ignore-scripts"],
                        cwd=CACHE,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL,
                        env={**os.environ, "HOME": NPM_HOME, "LEFTHOOK": "0"},
                        timeout=600,
                        check=False,
                    )
    if _installed(name) != PINS[name]:
        said = f"{name}@{PINS[name]} is needed in {CACHE}; install it with: {install_command()}"
        if os.environ.get("CI") == "true":
            pytest.fail(said)
        pytest.skip(said)
    return CACHE / "node_modules" / ".bin" / name
