"""Issue 2's scenario end to end: session 1 records, its push is rejected; session 2, a
fresh process, sees the truth derived from the actual refs."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import commit, cont, git, untouched


def test_a_new_session_sees_the_rejected_push_as_contradicted(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    bare, work = remote_and_clone

    # Session 1.
    assert cont(work, "init").code == 0
    assert cont(work, "objective", "set", "Fix the login loop", "--why", "users bounce back to /login").code == 0
    assert cont(work, "objective", "set", "Fix the login loop and ship 1.2", "--why", "release is due Friday").code == 0
    assert cont(work, "next", "rebase on origin/main and push again").code == 0
    blocker = cont(work, "blocker", "add", "CI runner is offline")
    assert blocker.code == 0
    assert cont(work, "journal", "add", "reproduced the loop with an expired cookie").code == 0
    assert cont(work, "journal", "add", "fix written; pushing").code == 0
    fix = commit(work, "Fix the login loop", {"conf/app.toml": "[login]\nloop = false\n"})

    # A teammate pushes first, so this session's push is rejected.
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(bare), str(mate))
    theirs = commit(mate, "Teammate's change", {"other": "x\n"})
    git(mate, "push", "-q", "origin", "main")
    rejected = git(work, "push", "origin", "main", check=False)
    assert git(work, "rev-parse", "origin/main") != fix, rejected
    git(work, "fetch", "-q", "origin")
    assert git(work, "rev-parse", "origin/main") == theirs
    before = untouched(work)

    pushed = cont(work, "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main")
    assert pushed.code == 0
    assert f"handle  pushed:{fix[:12]}…@origin/main  (as written: pushed:HEAD@origin/main)" in pushed.out
    assert cont(work, "claim", "add", "v1.2 is tagged", "--check", "tag:v1.2").code == 0
    assert cont(work, "claim", "add", "config moved", "--check", "file:conf/app.toml@HEAD").code == 0
    assert cont(work, "claim", "add", "the reviewers are happy").code == 0
    # Writing state touched no branch, no index, no work tree.
    assert untouched(work) == before

    # Session 2: a fresh process that knows nothing.
    status = cont(work, "status")
    assert status.code == 0, status.err
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \([^)]*\)", "TIME", status.out)
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "TIME", text)
    text = re.sub(r"\b([cb])-[2-9a-hjkmnp-z]{6}\b", r"\1-ID", text)
    text = re.sub(r"refs/continuity/main at [0-9a-f]{7}, changed [^)]*", "refs/continuity/main at REF", text)
    text = re.sub(r"\((fetched|as pushed from here) [^)]*\)", r"(\1 AGO)", text)
    text = re.sub(r"the oldest made .* \(git", "the oldest made AGO (git", text)
    assert (
        text
        == f"""\
stream main  (refs/continuity/main at REF)

Objective  Fix the login loop and ship 1.2
  why      release is due Friday
  set      TIME by Ada Agent <ada@example.com>; 1 earlier: git continuity objective log
Next       rebase on origin/main and push again

Blockers (1 open)
  b-ID  CI runner is offline

Claims (1 verified, 2 contradicted, 1 prose; states derived now, not stored)
  contradicted  c-ID  the fix is pushed
                pushed:{fix[:12]}…@origin/main
                origin/main is at {theirs[:7]} (fetched AGO), which does not contain {fix[:7]}
  contradicted  c-ID  v1.2 is tagged
                tag:v1.2
                tag v1.2 does not exist here
  verified      c-ID  config moved
                file:conf/app.toml@{fix[:12]}…
                conf/app.toml exists in {fix[:7]}
  prose         c-ID  the reviewers are happy
                no handle: shown, never trusted

Journal (2: git continuity journal)
  TIME  reproduced the loop with an expired cookie
  TIME  fix written; pushing

Outbox
  origin: 11 changes never sent there, the oldest made AGO (git continuity sync origin)
"""
    )

    # The same, machine-readable.
    data = json.loads(cont(work, "status", "--json").out)
    assert data["objective"]["text"] == "Fix the login loop and ship 1.2"
    assert data["objective"]["why"] == "release is due Friday"
    assert data["next_action"] == "rebase on origin/main and push again"
    assert [b["text"] for b in data["blockers"]] == ["CI runner is offline"]
    assert [(c["text"], c["handle"], c["state"]) for c in data["claims"]] == [
        ("the fix is pushed", f"pushed:{fix}@origin/main", "contradicted"),
        ("v1.2 is tagged", "tag:v1.2", "contradicted"),
        ("config moved", f"file:conf/app.toml@{fix}", "verified"),
        ("the reviewers are happy", None, "prose"),
    ]
    assert data["claims"][0]["observed"].startswith(f"origin/main is at {theirs[:7]} (fetched ")
    assert data["claims"][0]["observed"].endswith(f"), which does not contain {fix[:7]}")
    assert [e["text"] for e in data["journal"]] == [
        "reproduced the loop with an expired cookie",
        "fix written; pushing",
    ]
    assert data["counts"] == {"verified": 1, "contradicted": 2, "unknown": 0, "unchecked": 0, "stale": 0, "prose": 1}
    assert data["problems"] == [] and data["warnings"] == []

    # The earlier objective, with why it changed.
    log = json.loads(cont(work, "objective", "log", "--json").out)
    assert [(c["old"], c["new"], c["why"]) for c in log["changes"]] == [
        (None, "Fix the login loop", "users bounce back to /login"),
        ("Fix the login loop", "Fix the login loop and ship 1.2", "release is due Friday"),
    ]

    # Fix the push for real: rebase, push, and the same claim about the new commit verifies.
    git(work, "rebase", "-q", "origin/main")
    git(work, "push", "-q", "origin", "main")
    assert cont(work, "claim", "add", "the rebased fix is pushed", "--check", "pushed:HEAD@origin/main").code == 0
    verified = cont(work, "verify", "--online", "--json")
    assert verified.code == 1  # the old claims still do not hold
    states = {c["text"]: c["state"] for c in json.loads(verified.out)["claims"]}
    assert states["the rebased fix is pushed"] == "verified"
    assert states["the fix is pushed"] == "contradicted"
