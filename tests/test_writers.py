"""What the write commands write matches ``schema/`` without being checked on each write.

store.update no longer runs jsonschema over entries this package made (its dataclasses are
the schemas' own code): these tests are what keeps that honest. Every writer runs with the
per-write check off, then the whole state is validated from a cold cache; and a write
command is seen not to import jsonschema at all, while one that takes a person's text
(``edit``) still does.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import commit, git

from git_continuity import repo as gitrepo
from git_continuity import store
from git_continuity.constants import ENV_CHECK_JSON


def run(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "continuity", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode in (0, 1), f"{args}: {done.returncode}\n{done.stdout}{done.stderr}"
    return done.stdout


def an_id(kind: str, text: str) -> str:
    found = re.search(rf"\b{kind}-[2-9a-hjkmnp-z]{{6}}\b", text)
    assert found, text
    return found.group(0)


def kinds_in(repo: Path) -> set[str]:
    listed = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main")
    return {line.split("/")[1] for line in listed.splitlines()}


def test_every_writer_writes_what_its_schema_allows(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_CHECK_JSON)
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "s-writer")
    monkeypatch.setenv("GIT_CONTINUITY_AGENT", "claude-code")
    run(repo, "init")
    run(repo, "objective", "set", "Ship the writers", "--why", "no schema check on each write")
    run(repo, "next", "look at the state")
    blocker = an_id("b", run(repo, "blocker", "add", "waiting for a review"))
    run(repo, "blocker", "done", blocker)
    run(repo, "journal", "add", "wrote every kind of entry")
    run(repo, "claim", "add", "prose only")
    gone = an_id("c", run(repo, "claim", "add", "the first commit exists", "--check", "commit:HEAD"))
    run(repo, "claim", "retract", gone, "--why", "said twice")
    done = an_id("t", run(repo, "thread", "add", "README is there", "--check", "file:README"))
    run(repo, "claim", "add", "the readme is on main", "--check", "reachable:HEAD@main", "--thread", done)
    run(repo, "thread", "close", done)
    failing = an_id("t", run(repo, "thread", "add", "a file that is not there", "--check", "file:NOPE"))
    run(repo, "thread", "close", failing)  # refused: records an attempt
    run(repo, "thread", "set", failing, "waiting")
    run(repo, "verify")
    run(repo, "place", "set", "main", "home", "--why", "the work happens here")
    commit(repo, "second")
    run(repo, "handoff")
    assert kinds_in(repo) >= {
        "format",
        "packet.yaml",
        "objective",
        "claims",
        "threads",
        "journal",
        "evidence",
        "attempts",
        "places",
        "handoffs",
    }
    shutil.rmtree(repo / ".git" / "continuity" / "cache")  # every entry is validated again
    snap = store.snapshot(gitrepo.open_repo(repo), "main")
    assert store.all_problems(snap) == []


def test_a_writer_that_breaks_the_schema_would_be_seen(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above can fail: an entry the schema refuses, written by the same path."""
    monkeypatch.delenv(ENV_CHECK_JSON)
    run(repo, "init")
    r = gitrepo.open_repo(repo)
    bad = b'{"id": "j-aaaaaa", "text": "", "at": "now", "by": "Ada", "host": "h"}\n'
    path = ".continuity/journal/2026-11-30/20261130T100000.000000Z-j-aaaaaa.json"
    store.update(r, "main", lambda s: store.Change("bad entry", {path: bad}))
    shutil.rmtree(repo / ".git" / "continuity" / "cache")
    fresh = gitrepo.open_repo(repo)  # a read of its own (a process keeps what it knew good)
    assert store.all_problems(store.snapshot(fresh, "main")) == [
        f"{path} line 1: at: 'now' is not in the expected form (a UTC time such as 2026-12-01T14:05:00Z)",
        f"{path} line 1: text: '' should be non-empty",
    ]


# Runs `python -m git_continuity ARGS` and prints which of WATCHED it imported, on the way
# out (atexit runs after the SystemExit that ends every command).
PROBE = """\
import atexit, json, runpy, sys
watched = json.loads(sys.argv[1])
sys.argv = ["git_continuity", *sys.argv[2:]]
atexit.register(lambda: print(json.dumps([m for m in watched if m in sys.modules]), file=sys.stderr))
runpy.run_module("git_continuity", run_name="__main__", alter_sys=True)
"""
# What a write does not need (issue 13: imports are most of a write's time): jsonschema (the
# entries come from the schemas' own dataclasses), a process runner or an HTTP client (no
# handle here is run or asked over the network), and the judging of threads (closing them,
# the stop-loss, attempts).
WATCHED = (
    "jsonschema",
    "subprocess",
    "http.client",
    "urllib.request",
    "git_continuity.plugins.http",
    "git_continuity.gate.closure",
    "git_continuity.view.stoploss",
    "git_continuity.store.attempts",
)


def imported(repo: Path, *args: str, watched: tuple[str, ...] = WATCHED) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(watched), *args], cwd=repo, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stderr.splitlines()[-1])  # type: ignore[no-any-return]


def test_write_commands_import_only_what_a_write_needs(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV_CHECK_JSON)
    run(repo, "init")
    thread = an_id("t", run(repo, "thread", "add", "a thread", "--check", "commit:HEAD"))
    writes = [
        ("claim", "add", "the commit exists", "--check", "commit:HEAD"),
        ("claim", "add", "a check of the thread", "--check", "file:README", "--thread", thread),
        ("thread", "add", "another thread", "--check", "file:README"),
        ("journal", "add", "an entry"),
        ("blocker", "add", "a blocker"),
        ("next", "the next action"),
        ("objective", "set", "an objective", "--why", "a reason"),
    ]
    assert {w: imported(repo, *w) for w in writes} == {w: [] for w in writes}
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/^next_action:.*/next_action: edited by hand/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("GIT_EDITOR", str(editor))
    assert "jsonschema" in imported(repo, "edit")  # what a person wrote is checked
    assert run(repo, "next") == "edited by hand\n"


def test_a_new_id_is_never_one_the_state_holds(repo: Path) -> None:
    # claim add and thread add ask the tree for each candidate id instead of listing the
    # folder: an id with a file there, or made earlier in the same change, is taken.
    run(repo, "init")
    claim = an_id("c", run(repo, "claim", "add", "the commit exists", "--check", "commit:HEAD"))
    thread = an_id("t", run(repo, "thread", "add", "a thread"))
    snap = store.snapshot(gitrepo.open_repo(repo), "main")
    claims, threads = store.Taken(snap, store.claim_path), store.Taken(snap, store.thread_path)
    assert (claim in claims, thread in threads, thread in claims, claim in threads) == (True, True, False, False)
    assert "c-222222" not in claims
    claims.add("c-222222")
    assert ("c-222222" in claims, "c-222222" in threads) == (True, False)


def test_a_policy_is_parsed_and_checked_once_for_each_content(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # .continuity.yaml is a person's text: checked against its schema, but once per content
    # (kept under the user's cache folder), not by every write that reads it.
    monkeypatch.delenv(ENV_CHECK_JSON)
    run(repo, "init")
    policy = repo / ".continuity.yaml"
    policy.write_text("lifespans: {finding: 3d}\n")
    parsers = ("jsonschema", "ruamel.yaml")
    add = ("journal", "add", "a finding", "--kind", "finding")
    assert imported(repo, *add, watched=parsers) == ["jsonschema", "ruamel.yaml"]
    assert imported(repo, *add, watched=parsers) == []
    assert imported(repo, "claim", "add", "the commit exists", "--check", "commit:HEAD", watched=parsers) == []
    assert run(repo, *add).endswith(" recorded as a finding (it fades after 3d).\n")
    policy.write_text("lifespans: {finding: 5d}\n")  # an edited policy is read again
    assert run(repo, *add).endswith(" recorded as a finding (it fades after 5d).\n")
    policy.write_text("lifespans: {finding: soon}\n")
    done = subprocess.run(["git", "continuity", *add], cwd=repo, capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"git-continuity: error: {policy} line 1: lifespans.finding: 'soon' is not in the expected form"
        " (give a duration such as 12h, 7d or 30d, at most 99999 of a unit, or never)\n",
    )
    policy.write_text("lifespans: {finding: 3d}\n")
    assert imported(repo, *add, watched=parsers) == []
