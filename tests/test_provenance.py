"""Evidence knows where it was observed: each record names the clone that derived it, and
evidence pulled from another clone is shown as that clone's report and never closes anything
here until it is derived here (the trusted/untrusted split of a proof ledger)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import NOT_APPROVED, Ran, approve, commit, git

COMMAND = "test -f ok.txt"


def on(host: str, cwd: Path, *args: str) -> Ran:
    """`git continuity ARGS` in a fresh process on machine ``host``."""
    env = {**os.environ, "GIT_CONTINUITY_HOST": host}
    done = subprocess.run(["git", "continuity", *args], cwd=cwd, capture_output=True, text=True, env=env)
    return Ran(done.returncode, done.stdout, done.stderr)


def clone_of(work: Path) -> str:
    found: str = json.loads((work / ".git" / "continuity" / "clone.json").read_text())["id"]
    return found


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """Clone a (host-a) that opened a thread whose check it ran and verified, pushed; clone b
    (host-b) that pulled it. Returns both, the thread and its check."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    a = tmp_path / "a"
    git(tmp_path, "init", "-q", str(a))
    commit(a, "first", {"ok.txt": "ok\n"})
    git(a, "remote", "add", "origin", str(bare))
    git(a, "push", "-q", "origin", "main")
    assert on("host-a", a, "init").code == 0
    assert on("host-a", a, "orient").code == 0  # a session, named on what it writes
    made = on("host-a", a, "thread", "add", "the tests pass", "--check", f"cmd:{COMMAND}")
    thread = re.findall(r"\bt-[2-9a-hjkmnp-z]{6}\b", made.out)[0]
    check = json.loads(on("host-a", a, "claim", "list", "--json").out)["claims"][0]["id"]
    approve(a, COMMAND)
    assert on("host-a", a, "verify").code == 0
    assert on("host-a", a, "push").code == 0
    b = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(bare), str(b))
    assert on("host-b", b, "pull").code == 0
    return a, b, thread, check


def evidence(work: Path) -> list[dict[str, str]]:
    paths = git(work, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/evidence/").split()
    return sorted(
        (json.loads(git(work, "show", f"refs/continuity/main:{p}")) for p in paths), key=lambda e: e["checked_at"]
    )


def test_evidence_names_the_clone_that_derived_it(two: tuple[Path, Path, str, str]) -> None:
    a, b, _, check = two
    (first,) = evidence(b)
    session = json.loads((a / ".git" / "continuity" / "session.json").read_text())["id"]
    assert {k: first[k] for k in ("claim", "result", "host", "session", "clone")} == {
        "claim": check,
        "result": "verified",
        "host": "host-a",
        "session": session,
        "clone": clone_of(a),
    }
    assert re.fullmatch(r"k-[2-9a-hjkmnp-z]{10}", clone_of(a))
    # The id is the clone's, shared by its linked worktrees, and kept: asked again, the same.
    git(a, "worktree", "add", "-q", "--detach", "../a-side")
    assert on("host-a", a.parent / "a-side", "status").code == 0
    assert clone_of(a) == first["clone"]


def aged(text: str) -> str:
    """A report's age (how long ago the other clone derived it) as AGO."""
    return re.sub(r" (just now|\d+ \w+ ago), not re-derived", " AGO, not re-derived", text)


def test_another_clones_evidence_is_its_report_and_closes_nothing_here(two: tuple[Path, Path, str, str]) -> None:
    a, b, thread, check = two
    session = evidence(b)[0]["session"]
    (shown,) = json.loads(on("host-b", b, "status", "--json").out)["claims"]
    tree = git(a, "rev-parse", "HEAD^{tree}")
    assert (shown["state"], aged(shown["observed"])) == (
        "verified",
        f"reported by host-a (session {session}) AGO, not re-derived here: exit 0 in 0.0s on work tree {tree[:7]}",
    )
    status = aged(on("host-b", b, "status").out)
    assert f"reported by host-a (session {session}) AGO, not re-derived here: exit 0 in 0.0s" in status
    shown_thread = aged(on("host-b", b, "thread", "show", thread).out)
    assert f"reported by host-a (session {session}) AGO, not re-derived here" in shown_thread

    # The gate does not take it for proof: the check runs here, and here it is not approved.
    closing = on("host-b", b, "thread", "close", thread)
    assert closing.code == 1
    assert NOT_APPROVED in closing.out
    assert json.loads(on("host-b", b, "thread", "list", "--json").out)["threads"][0]["status"] == "open"

    # Derived here, it closes, and its evidence is this clone's own.
    approve(b, COMMAND)
    closed = on("host-b", b, "thread", "close", thread)
    assert closed.code == 0, closed.out
    last = evidence(b)[-1]
    assert (last["claim"], last["host"], last["clone"]) == (check, "host-b", clone_of(b))
    (shown,) = json.loads(on("host-b", b, "status", "--json").out)["claims"]
    assert shown["observed"].startswith("exit 0 in ")  # its own: no report named

    # Back on host-a, the other clone's evidence is named as its report.
    assert on("host-b", b, "push").code == 0
    assert on("host-a", a, "pull").code == 0
    (shown,) = json.loads(on("host-a", a, "status", "--json").out)["claims"]
    assert aged(shown["observed"]).startswith("reported by host-b AGO, not re-derived here: exit 0 in ")


def test_two_clones_on_one_host_are_told_apart(two: tuple[Path, Path, str, str]) -> None:
    a, _, _, _ = two
    c = a.parent / "c"
    git(a.parent, "clone", "-q", str(a.parent / "origin.git"), str(c))
    assert on("host-a", c, "pull").code == 0
    session = evidence(c)[0]["session"]
    (shown,) = json.loads(on("host-a", c, "status", "--json").out)["claims"]
    assert aged(shown["observed"]).startswith(
        f"reported by another clone on host-a (session {session}) AGO, not re-derived here: exit 0 in "
    )
    (mine,) = json.loads(on("host-a", a, "status", "--json").out)["claims"]
    assert mine["observed"].startswith("exit 0 in ")
