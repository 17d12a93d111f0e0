"""What wears a user down in a day (issue 27): hints that name the step that is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import approve, git

Run = Any  # the inproc fixture's runner


def test_claim_add_with_an_unapproved_cmd_names_trust_allow(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    ran = inproc(repo, "claim", "add", "tests pass", "--check", "cmd:python -m pytest -q")
    claim = ran.out.split()[2].rstrip(":")
    assert (ran.code, ran.out) == (
        0,
        f"Recorded claim {claim}: tests pass\n"
        "  handle  cmd:python -m pytest -q\n"
        "  now     unchecked: it runs only once approved on this machine: a person's act, at their terminal, then"
        " verify\n",
    )
    approve(repo, "python -m pytest -q")
    again = inproc(repo, "claim", "add", "tests pass", "--check", "cmd:python -m pytest -q")
    assert again.out.splitlines()[-1] == "  now     unchecked: never dereferenced: run git continuity verify"
    assert git(repo, "status", "--porcelain") == ""


def test_max_tokens_is_a_promise_or_says_what_it_cannot_cut(inproc: Run, repo: Path) -> None:
    import re

    from git_continuity.sessions.budget import estimate

    assert inproc(repo, "init").code == 0
    for n in range(14):
        assert (
            inproc(
                repo, "claim", "add", f"v{n} is tagged, which a long claim says at length", "--check", f"tag:v{n}"
            ).code
            == 0
        )
    whole = inproc(repo, "orient").out
    truth = whole.split("\n## Objective", 1)[0]
    for limit in (estimate(truth) - 40, estimate(truth) + 10):  # under the truth; over it, but not with the note
        shown = inproc(repo, "orient", "--max-tokens", str(limit)).out
        said = re.search(r"only it is printed, about (\d+) tokens with this note", shown)
        assert said is not None, shown
        assert int(said[1]) == estimate(shown)  # what it says it printed is what it printed
        assert "never cut" in shown and f"--max-tokens {limit}" in shown
    roomy = estimate(whole) + 50
    assert estimate(inproc(repo, "orient", "--max-tokens", str(roomy)).out) <= roomy
    for limit in (estimate(truth) + 120, estimate(truth) + 200):  # room for the truth and the note: kept
        assert estimate(inproc(repo, "orient", "--max-tokens", str(limit)).out) <= limit
