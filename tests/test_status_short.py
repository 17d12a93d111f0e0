"""``status -s``: the state of a day in about ten lines, from the same view as the whole
status (#37): what is open, what is not true now, what has not been shared yet."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import git, made_id, ok


def steady(text: str) -> str:
    return re.sub(r"at [0-9a-f]{7}, changed just now", "at COMMIT, changed just now", text)


def test_the_short_status_names_what_is_open_false_and_not_shared(remote_and_clone: tuple[Path, Path]) -> None:
    _, work = remote_and_clone
    ok(work, "init")
    ok(work, "hooks", "install")
    ok(work, "objective", "set", "Ship the login fix\nand the docs", "--why", "users are locked out")
    tag = made_id(ok(work, "thread", "add", "Tag the release", "--check", "tag:v1"), "t")
    notes = made_id(ok(work, "thread", "add", "Write the notes\nwith the upgrade steps", "--check", "file:NOTES"), "t")
    claims = [made_id(line, "c") for line in ok(work, "claim", "list").splitlines() if "c-" in line]
    ok(work, "push")
    assert steady(ok(work, "status", "-s")).splitlines() == [
        "stream main  (refs/continuity/main at COMMIT, changed just now)",
        "Objective  Ship the login fix…",
        f"Open       2 threads: {tag} Tag the release (0/1), {notes} Write the notes… (0/1)",
        f"Not true   2 claims contradicted ({', '.join(sorted(claims, key=claims.index))})",
        "Not shared nothing: every remote has this state",
        "Whole      git continuity status (this is status -s)",
    ]
    (work / "NOTES").write_text("upgrade: run the migration\n")
    git(work, "add", "NOTES")
    git(work, "commit", "-q", "-m", f"Notes; closes {notes}")
    git(work, "tag", "v1")
    ok(work, "journal", "add", "tagged v1")
    short = steady(ok(work, "status", "--short")).splitlines()
    assert short[2:5] == [
        f"Open       1 thread: {tag} Tag the release (1/1)",
        "Not true   nothing known false now",
        "Not shared origin: 2 changes not sent yet, the oldest made just now (git continuity sync origin)",
    ]
    assert len(short) == 6
