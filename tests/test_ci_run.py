"""`git continuity ci run -- COMMAND`: a local CI result recorded on the commit's note, and
the ci: handle that checks it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Run, commit, cont, git


def note_records(repo: Path, rev: str = "HEAD") -> list[dict[str, object]]:
    text = git(repo, "notes", "--ref=continuity", "show", rev, check=False)
    return [r for r in map(json.loads, text.splitlines()) if r.get("kind") == "ci"]


def claims(repo: Path) -> list[tuple[str, str, str]]:
    ran = cont(repo, "status", "--json")
    return [(c["text"], c["state"], c["observed"]) for c in json.loads(ran.out)["claims"]]


def test_a_recorded_result_verifies_the_commit_and_the_newest_one_decides(repo: Path, inproc: Run) -> None:
    sha = git(repo, "rev-parse", "HEAD")
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    assert inproc(repo, "init").code == 0
    assert inproc(repo, "claim", "add", "tests pass", "--check", "ci:HEAD").code == 0
    assert claims(repo) == [
        (
            "tests pass",
            "unknown",
            f"no CI result recorded on {sha[:7]} (git continuity ci run -- COMMAND records one; "
            "a clone gets them with the notes ref)",
        )
    ]

    ran = cont(repo, "ci", "run", "--", "sh", "-c", "echo testing; exit 0")
    assert (ran.code, ran.err) == (0, "")
    assert ran.out == (
        f"ci run: sh -c 'echo testing; exit 0'  (on {sha[:7]})\n"
        "testing\n"
        f"Recorded on {sha[:7]}: `sh -c 'echo testing; exit 0'` passed.\n"
        f"  handle  ci:{sha}   (claim add TEXT --check ci:HEAD)\n"
    )
    (record,) = note_records(repo)
    # git-appraise reads the same fields: timestamp (Unix seconds as a string), status, agent.
    assert set(record) == {
        "kind",
        "timestamp",
        "status",
        "agent",
        "at",
        "by",
        "command",
        "name",
        "exit",
        "tree",
        "seconds",
    }
    assert {k: record[k] for k in ("kind", "status", "command", "name", "exit", "tree", "by")} == {
        "kind": "ci",
        "status": "success",
        "command": "sh -c 'echo testing; exit 0'",
        "name": "sh -c 'echo testing; exit 0'",
        "exit": 0,
        "tree": tree,
        "by": "Ada Agent <ada@example.com>",
    }
    assert str(record["timestamp"]).isdigit() and str(record["agent"]).startswith("git-continuity 0.1.0 on ")
    assert claims(repo) == [
        ("tests pass", "verified", f"`sh -c 'echo testing; exit 0'` passed (exit 0) just now on {sha[:7]}")
    ]

    # A second command fails: the commit's CI is no longer green.
    ran = cont(repo, "ci", "run", "--name", "lint", "--", "sh", "-c", "exit 3")
    assert ran.code == 1
    assert ran.out.splitlines()[-2:] == [
        f"Recorded on {sha[:7]}: `lint` failed (exit 3).",
        f"  handle  ci:{sha}#lint   (claim add TEXT --check ci:HEAD#lint)",
    ]
    assert claims(repo)[0][1:] == ("contradicted", f"`lint` failed (exit 3) just now on {sha[:7]}")
    assert cont(repo, "claim", "add", "lint passes", "--check", "ci:HEAD#lint").code == 0
    # Fixed: the newest result of each command decides.
    assert cont(repo, "ci", "run", "--name", "lint", "--", "true").code == 0
    assert claims(repo) == [
        (
            "tests pass",
            "verified",
            f"`lint` passed (exit 0) just now; `sh -c 'echo testing; exit 0'` passed (exit 0) just now on {sha[:7]}",
        ),
        ("lint passes", "verified", f"`lint` passed (exit 0) just now on {sha[:7]}"),
    ]
    assert "ci" in git(repo, "log", "-1", "--notes=continuity", "--format=%N")


def test_nothing_runs_or_is_recorded_on_a_dirty_tree_or_a_missing_command(repo: Path) -> None:
    (repo / "README").write_text("changed\n")
    ran = cont(repo, "ci", "run", "--", "touch", "ran")
    assert ran.code == 2
    assert ran.err == (
        "git-continuity: error: the work tree has uncommitted changes (README), "
        "so a result would vouch for no commit.\n"
        "Commit or stash them, then run git continuity ci run again.\n"
    )
    assert not (repo / "ran").exists()
    git(repo, "checkout", "README")
    ran = cont(repo, "ci", "run", "--", "no-such-command-here")
    assert (ran.code, ran.err) == (
        2,
        "git-continuity: error: command 'no-such-command-here' not found (nothing recorded)\n",
    )
    ran = cont(repo, "ci", "run")
    assert ran.code == 2 and "ci run needs a command after --" in ran.err
    assert git(repo, "notes", "--ref=continuity", "list") == ""


def test_a_result_carried_to_a_rewritten_commit_does_not_count(repo: Path) -> None:
    git(repo, "config", "notes.rewriteRef", "refs/notes/continuity")
    assert cont(repo, "init").code == 0
    assert cont(repo, "ci", "run", "--", "true").code == 0
    (repo / "README").write_text("amended\n")
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit")
    amended = git(repo, "rev-parse", "HEAD")
    assert len(note_records(repo)) == 1  # git copied the note onto the amended commit
    assert cont(repo, "claim", "add", "tests pass", "--check", "ci:HEAD").code == 0
    assert claims(repo) == [
        (
            "tests pass",
            "unknown",
            f"`true` passed (exit 0) just now, but on another tree than {amended[:7]}'s "
            "(the note followed a rewrite): run it again",
        )
    ]


def test_results_travel_to_a_clone_with_the_notes(repo: Path, tmp_path: Path) -> None:
    sha = commit(repo, "second", {"app.py": "print('hi')\n"})
    assert cont(repo, "init").code == 0
    assert cont(repo, "ci", "run", "--", "true").code == 0
    assert cont(repo, "claim", "add", "tests pass", "--check", "ci:HEAD").code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    git(
        clone,
        "fetch",
        "-q",
        "origin",
        "refs/notes/continuity:refs/notes/continuity",
        "refs/continuity/main:refs/continuity/main",
    )
    assert claims(clone) == [("tests pass", "verified", f"`true` passed (exit 0) just now on {sha[:7]}")]
