"""What wears a user down in a day (issue 27): hints that name the step that is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import git

Run = Any  # the inproc fixture's runner


def test_claim_add_with_an_unapproved_cmd_names_trust_allow(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    ran = inproc(repo, "claim", "add", "tests pass", "--check", "cmd:python -m pytest -q")
    claim = ran.out.split()[2].rstrip(":")
    assert (ran.code, ran.out) == (
        0,
        f"Recorded claim {claim}: tests pass\n"
        "  handle  cmd:python -m pytest -q\n"
        "  now     unchecked: it runs only once approved on this machine:"
        " git continuity trust allow 'python -m pytest -q', then verify\n",
    )
    assert inproc(repo, "trust", "allow", "python -m pytest -q").code == 0
    again = inproc(repo, "claim", "add", "tests pass", "--check", "cmd:python -m pytest -q")
    assert again.out.splitlines()[-1] == "  now     unchecked: never dereferenced: run git continuity verify"
    assert git(repo, "status", "--porcelain") == ""
