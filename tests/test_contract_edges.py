"""The command-line contract at its edges (#35): an unknown option is answered with the usage
of the command it was given to; the MCP server refuses a --repo that is no repository at
once (exit 2); ``git -c user.name=…`` names the author as git would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import BIN, cont, git


def test_an_unknown_option_is_answered_with_its_commands_usage(repo: Path) -> None:
    ran = cont(repo, "status", "--bogus")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        "usage: git continuity status [-h] [--stream STREAM] [--full] [-v] [--json]\n"
        "                             [-s]\n"
        "git continuity status: error: unrecognized arguments: --bogus\n"
    )
    nested = cont(repo, "thread", "claim", "t-222222", "--bogus")
    assert nested.err.splitlines()[-1] == "git continuity thread claim: error: unrecognized arguments: --bogus"


def test_mcp_refuses_a_repo_that_is_not_there_at_once(tmp_path: Path) -> None:
    for given, said in (
        (
            tmp_path / "nowhere",
            f"--repo {tmp_path / 'nowhere'}: no such folder; name the repository's folder (or leave --repo out)\n",
        ),
        (
            tmp_path,
            f"not a git repository: {tmp_path}\n"
            "Run git continuity inside a repository (or create one with git init).\n",
        ),
    ):
        ran = subprocess.run(
            [str(BIN / "git-continuity"), "mcp", "--repo", str(given)],
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (ran.returncode, ran.stdout, ran.stderr) == (2, "", f"git-continuity: error: {said}")


def test_git_dash_c_names_the_author_as_git_would(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    done = subprocess.run(
        ["git", "-c", "user.name=Zed Zephyr", "-c", "User.Email=zed@example.com", "continuity", "journal", "add", "hi"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("GIT_AUTHOR_")},
    )
    assert done.returncode == 0, done.stderr
    assert git(repo, "log", "-1", "--format=%an <%ae>", "refs/continuity/main") == "Zed Zephyr <zed@example.com>"
    entry = git(repo, "show", "--format=", "--name-only", "refs/continuity/main")
    assert '"by": "Zed Zephyr <zed@example.com>"' in git(repo, "show", f"refs/continuity/main:{entry}")
