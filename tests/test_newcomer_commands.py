"""The commands a newcomer reaches for: thread list and show, blocker list, claim show,
next --json, help and the manual page, and what -h offers."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, git, state_refs

from git_continuity import __version__
from git_continuity.cli import main as cli
from git_continuity.cli import manpage
from git_continuity.model import shown

Run = Callable[..., Ran]
HOST = socket.gethostname()
ME = "Ada Agent <ada@example.com>"
ROOT = Path(__file__).resolve().parent.parent


def ok(run: Run, where: Path, *args: str) -> Ran:
    ran = run(where, *args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def said(ran: Ran, word: int = 1) -> str:
    """The id in the first line of what a command said ("Thread t-xxxxxx opened: …")."""
    return ran.out.split()[word].rstrip(":")


@pytest.fixture
def started(repo: Path, inproc: Run) -> Path:
    ok(inproc, repo, "init")
    return repo


def help_of(words: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        cli.main([*words, "-h"])
    assert done.value.code == 0
    return capsys.readouterr().out


# -- thread list, thread show ---------------------------------------------------------------


def test_thread_list(started: Path, inproc: Run) -> None:
    assert ok(inproc, started, "thread", "list").out == 'No threads: git continuity thread add "…" --check HANDLE\n'
    ship = said(ok(inproc, started, "thread", "add", "Ship the fix", "--check", "tag:v1"))
    docs = said(ok(inproc, started, "thread", "add", "Write the docs"))
    ok(inproc, started, "thread", "set", docs, "waiting")
    tip = state_refs(started)
    assert ok(inproc, started, "thread", "list").out == (
        f"  open       {ship}  Ship the fix  (0 of 1 checks verified)\n"
        f"  waiting    {docs}  Write the docs  (0 of 0 checks verified)\n"
    )
    assert ok(inproc, started, "thread", "list", "--status", "waiting").out == (
        f"  waiting    {docs}  Write the docs  (0 of 0 checks verified)\n"
    )
    assert ok(inproc, started, "thread", "list", "--status", "done").out == "No done threads.\n"
    listed = json.loads(ok(inproc, started, "thread", "list", "--status", "open", "--json").out)
    (thread,) = listed["threads"]
    (check,) = thread["checks"]
    assert listed == {
        "stream": "main",
        "threads": [
            {
                "id": ship,
                "title": "Ship the fix",
                "status": "open",
                "standing": "open",
                "undone": None,
                "added_at": thread["added_at"],
                "closed_at": None,
                "priority": 2,
                "checks": [
                    {
                        "id": check["id"],
                        "text": "tag:v1",
                        "handle": "tag:v1",
                        "written": None,
                        "thread": ship,
                        "state": "contradicted",
                        "observed": "tag v1 does not exist here",
                        "checked_at": check["checked_at"],
                        "origin": "now",
                        "freshness": {"kind": "now", "text": "re-derived now"},
                        "added_at": thread["added_at"],
                        "added_by": ME,
                    }
                ],
            }
        ],
        "problems": [],
    }
    assert state_refs(started) == tip  # reading writes nothing


def test_thread_show(started: Path, inproc: Run) -> None:
    ship = said(ok(inproc, started, "thread", "add", "Ship the fix", "--check", "tag:v1"))
    shown_json = json.loads(ok(inproc, started, "thread", "show", ship, "--json").out)
    thread = shown_json["thread"]
    (check,) = thread["checks"]
    assert shown_json == {
        "stream": "main",
        "thread": {
            "id": ship,
            "title": "Ship the fix",
            "status": "open",
            "standing": "open",
            "undone": None,
            "added_at": thread["added_at"],
            "added_by": ME,
            "host": HOST,
            "closed_at": None,
            "priority": 2,
            "checks": [{**check, "state": "contradicted", "observed": "tag v1 does not exist here"}],
        },
        "problems": [],
    }
    opened = f"{shown(thread['added_at'])} UTC (just now) by {ME} on {HOST}"
    assert ok(inproc, started, "thread", "show", ship).out == (
        f"Thread {ship}  Ship the fix\n"
        "  status  open\n"
        f"  opened  {opened}\n"
        "Checks (0 of 1 checks verified now)\n"
        f"  contradicted  {check['id']}  tag:v1\n"
        "                tag v1 does not exist here\n"
    )
    bare = said(ok(inproc, started, "thread", "add", "Write the docs"))
    assert ok(inproc, started, "thread", "show", bare).out.splitlines()[-1] == (
        "Checks: none yet, so it cannot close until one verifies "
        f"(git continuity claim add TEXT --check HANDLE --thread {bare})"
    )
    missing = inproc(started, "thread", "show", "t-222222")
    assert (missing.code, missing.out, missing.err) == (
        2,
        "",
        f"git-continuity: error: no thread 't-222222' in stream 'main' (threads: {', '.join(sorted([ship, bare]))})\n",
    )


# -- blocker list ---------------------------------------------------------------------------


def test_blocker_list(started: Path, inproc: Run) -> None:
    assert ok(inproc, started, "blocker", "list").out == (
        'No blockers: git continuity blocker add "…" records what stops progress.\n'
    )
    runner = said(ok(inproc, started, "blocker", "add", "CI runner is offline"))
    key = said(ok(inproc, started, "blocker", "add", "waiting for the API key"))
    ok(inproc, started, "blocker", "done", runner)
    listed = json.loads(ok(inproc, started, "blocker", "list", "--json").out)
    first, second = listed["blockers"]
    assert listed == {
        "stream": "main",
        "blockers": [
            {
                "id": key,
                "text": "waiting for the API key",
                "added_at": first["added_at"],
                "added_by": ME,
                "done_at": None,
            },
            {
                "id": runner,
                "text": "CI runner is offline",
                "added_at": second["added_at"],
                "added_by": ME,
                "done_at": second["done_at"],
            },
        ],
    }
    assert ok(inproc, started, "blocker", "list").out == (
        f"  open  {key}  waiting for the API key  (added {shown(first['added_at'])} UTC by {ME})\n"
        f"  done  {runner}  CI runner is offline  (done {shown(second['done_at'])} UTC)\n"
    )


# -- claim show -----------------------------------------------------------------------------


def test_claim_show(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    claim = said(ok(inproc, started, "claim", "add", "the first commit exists", "--check", "commit:HEAD"), 2)
    ok(inproc, started, "verify", claim)
    ok(inproc, started, "verify", claim)
    document = json.loads(ok(inproc, started, "claim", "show", claim, "--json").out)
    found, evidence = document["claim"], document["evidence"]
    observed = f"commit {head[:7]} exists here"
    assert document == {
        "stream": "main",
        "claim": {
            "id": claim,
            "text": "the first commit exists",
            "handle": f"commit:{head}",
            "written": "commit:HEAD",
            "thread": None,
            "state": "verified",
            "observed": observed,
            "checked_at": found["checked_at"],
            "origin": "now",
            "freshness": {"kind": "now", "text": "re-derived now"},
            "added_at": found["added_at"],
            "added_by": ME,
            "host": HOST,
        },
        "evidence": [
            {
                "id": e["id"],
                "claim": claim,
                "handle": f"commit:{head}",
                "result": "verified",
                "observed": observed,
                "verifier": "git",
                "verifier_version": __version__,
                "checked_at": e["checked_at"],
                "host": HOST,
                "depends_on": {},
                "clone": json.loads((started / ".git" / "continuity" / "clone.json").read_text())["id"],
            }
            for e in evidence
        ],
        "problems": [],
    }
    assert len(evidence) == 2 and evidence[0]["checked_at"] < evidence[1]["checked_at"]
    by = f"{ME} on {HOST}"
    assert ok(inproc, started, "claim", "show", claim).out == (
        f"Claim {claim}  the first commit exists\n"
        f"  handle  commit:{head[:12]}…  (as written: commit:HEAD)\n"
        f"  added   {shown(found['added_at'])} UTC (just now) by {by}\n"
        f"  now     verified: {observed}\n"
        "Evidence (2 recorded, oldest first)\n"
        + "".join(
            f"  {shown(e['checked_at'])} UTC  verified: {observed}\n    by git {__version__} on {HOST}\n"
            for e in evidence
        )
    )
    prose = said(ok(inproc, started, "claim", "add", "the docs are clear"), 2)
    assert ok(inproc, started, "claim", "show", prose).out.splitlines()[1:] == [
        "  handle  none: prose, shown but never trusted",
        f"  added   {shown(json.loads(ok(inproc, started, 'claim', 'show', prose, '--json').out)['claim']['added_at'])}"
        f" UTC (just now) by {by}",
        "  now     prose: no handle: shown, never trusted",
        "Evidence: none recorded",
    ]
    thread = said(ok(inproc, started, "thread", "add", "Tag it", "--check", "tag:v1"))
    (check,) = json.loads(ok(inproc, started, "thread", "show", thread, "--json").out)["thread"]["checks"]
    assert ok(inproc, started, "claim", "show", check["id"]).out.splitlines()[1:4] == [
        "  handle  tag:v1",
        f"  thread  {thread} (one of its acceptance checks)",
        f"  added   {shown(check['added_at'])} UTC (just now) by {by}",
    ]
    missing = inproc(started, "claim", "show", "c-222222")
    assert (missing.code, missing.err) == (
        2,
        "git-continuity: error: no claim 'c-222222' in stream 'main' (git continuity claim list shows the ids)\n",
    )


def test_a_retracted_claim_says_when_and_why(started: Path, inproc: Run) -> None:
    claim = said(ok(inproc, started, "claim", "add", "v9 is tagged", "--check", "tag:v9"), 2)
    ok(inproc, started, "claim", "retract", claim, "--why", "no v9 after all: 1.0 comes first")
    (entry,) = json.loads(ok(inproc, started, "journal", "--json").out)["entries"]
    why = f"claim {claim} was retracted at {shown(entry['at'])} UTC: no v9 after all: 1.0 comes first\n"
    for args in (["claim", "retract", claim, "--why", "twice"], ["verify", claim], ["claim", "show", claim]):
        ran = inproc(started, *args)
        assert (ran.code, ran.out, ran.err) == (2, "", f"git-continuity: error: {why}"), args
    both = inproc(started, "verify", claim, "c-222222")
    assert (both.code, both.err) == (
        2,
        "git-continuity: error: no claim c-222222 in stream 'main' (git continuity claim list shows the ids)\n" + why,
    )


# -- next --json ----------------------------------------------------------------------------


def test_next_json(started: Path, inproc: Run) -> None:
    assert json.loads(ok(inproc, started, "next", "--json").out) == {"stream": "main", "next_action": None}
    assert json.loads(ok(inproc, started, "next", "rebase and push", "--json").out) == {
        "stream": "main",
        "next_action": "rebase and push",
    }
    tip = state_refs(started)
    assert (
        ok(inproc, started, "next", "--json").out == '{\n  "stream": "main",\n  "next_action": "rebase and push"\n}\n'
    )
    assert state_refs(started) == tip


# -- what -h offers -------------------------------------------------------------------------


def test_a_command_given_no_action_lists_its_actions(
    inproc: Run, repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    listing = help_of(["thread"], capsys)
    assert listing.splitlines()[:10] == [
        "usage: git continuity thread [-h] [--stream STREAM] <action> ...",
        "",
        "Open pieces of work with acceptance checks; done only when every check verifies now.",
        "",
        "positional arguments:",
        "  <action>",
        "    add            open a thread; each --check becomes one of its acceptance checks",
        "    set            park or reopen a thread, or change its --after and --priority; done comes only from close",
        "    cancel         end a thread unfinished: shown as cancelled, never gates a stop, never counted as done",
        "    claim          record that this session is on a thread; refused while another session holds it",
    ]
    for group in ("thread", "claim", "blocker", "trust"):
        ran = inproc(repo, group)
        assert (ran.code, ran.out, ran.err) == (2, help_of([group], capsys), "")


def test_thread_set_does_not_offer_done_but_says_how_to_close(
    started: Path, inproc: Run, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert help_of(["thread", "set"], capsys).splitlines()[0] == (
        "usage: git continuity thread set [-h] [--stream STREAM] [--json] [--budget attempts=N,sessions=N,time=8h] "
        "[--after ID] [--no-after ID] [--priority 0..4] id [{open,watching,blocked,waiting}]"
    )
    thread = said(ok(inproc, started, "thread", "add", "Ship the fix"))
    done = inproc(started, "thread", "set", thread, "done")
    assert (done.code, done.err) == (
        2,
        f"git-continuity: error: a thread becomes done only through its checks: git continuity thread close {thread}\n",
    )
    with pytest.raises(SystemExit) as bad:
        cli.main(["thread", "set", thread, "finished"])
    assert bad.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "git continuity thread set: error: argument status: invalid choice: 'finished' "
        "(choose from 'open', 'watching', 'blocked', 'waiting')"
    )


def parsers(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(words, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name in action.choices:  # not the hidden hook-impl
                found += parsers(action.choices[name], (*words, name))
    return found


ALL = parsers(cli.build_parser())


@pytest.mark.parametrize("words", ["trust", "plugins", "hooks", "demo", "help", "pull", "show", "ci"])
def test_stream_is_not_offered_where_it_means_nothing(words: str) -> None:
    for path, parser in ALL:
        if path[:1] == (words,):
            assert "--stream" not in parser._option_string_actions, path


def test_stream_is_still_offered_where_it_is_used() -> None:
    offered = {" ".join(path) for path, parser in ALL if "--stream" in parser._option_string_actions}
    assert {"", "status", "thread", "thread list", "claim show", "blocker", "journal add", "next"} <= offered


def test_every_positional_argument_is_described() -> None:
    for path, parser in ALL:
        for action in parser._actions:
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
                assert action.help, (path, action.dest)


# -- help -----------------------------------------------------------------------------------


@pytest.mark.parametrize("words", [[], ["thread"], ["thread", "close"], ["claim", "show"], ["help"]], ids=" ".join)
def test_help_prints_what_dash_h_prints(words: list[str], repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    run = [sys.executable, "-m", "git_continuity"]
    helped = subprocess.run([*run, "help", *words], cwd=repo, capture_output=True, text=True)
    dashed = subprocess.run([*run, *words, "-h"], cwd=repo, capture_output=True, text=True)
    assert (helped.returncode, helped.stdout, helped.stderr) == (0, dashed.stdout, "")
    assert helped.stdout.startswith(f"usage: git continuity{''.join(' ' + w for w in words)} [-h]")


def test_help_of_what_is_not_a_command(repo: Path, inproc: Run) -> None:
    for args, error in (
        (["bogus"], "no command 'bogus' (commands: init, status, objective, next, blocker, claim, thread, ready, "),
        (
            ["thread", "bogus"],
            "git continuity thread has no action 'bogus' (actions: add, set, cancel, claim, close, reopen, list, show)",
        ),
        (["status", "now"], "git continuity status has no actions: git continuity help status shows its help"),
    ):
        ran = inproc(repo, "help", *args)
        assert (ran.code, ran.out) == (2, "") and ran.err.startswith(f"git-continuity: error: {error}"), ran


def test_help_imports_neither_pygit2_nor_jsonschema(tmp_path: Path) -> None:
    from test_cli import HEAVY, imported

    code, modules = imported(tmp_path, "help", "thread", "close")
    assert (code, {m.split(".")[0] for m in modules} & HEAVY) == (0, set())


# -- the manual page ------------------------------------------------------------------------


def test_the_manual_page_has_every_commands_help() -> None:
    page = manpage.render()
    assert page.startswith('.TH GIT\\-CONTINUITY 1 "" "git\\-continuity ' + __version__.replace("-", "\\-"))
    sections = [line for line in page.splitlines() if line.startswith(".SS ")]
    assert sections == [f".SS git continuity {' '.join(path)}" for path, _ in ALL[1:]]
    assert ".SS git continuity thread show" in sections and ".SS git continuity hook-impl" not in sections


def test_git_help_finds_the_manual_page_a_pip_install_puts_next_to_the_command(repo: Path, tmp_path: Path) -> None:
    """The wheel, built and installed as pip does; then the real git and man, as a person runs them."""
    if shutil.which("man") is None:
        missing = "man is not installed here: apt-get install man-db"
        if os.environ.get("CI") == "true":  # as the agent tests do: under CI a missing tool fails
            pytest.fail(missing)
        pytest.skip(missing)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path, ROOT],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    inside = f"git_continuity-{__version__}.data/data/share/man/man1/git-continuity.1"
    assert zipfile.ZipFile(wheel).read(inside).decode() == manpage.render()
    # A fresh environment of its own (pip install --prefix would uninstall this one's copy first).
    prefix = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", prefix], check=True)
    python = prefix / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index", wheel]
    subprocess.run([str(arg) for arg in pip], check=True, capture_output=True)
    env = {**os.environ, "PATH": f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}", "MANPAGER": "cat"}
    env["MANWIDTH"] = "80"
    env.pop("MANPATH", None)  # man then looks next to each folder on PATH
    page = subprocess.run(
        ["man", "-l", prefix / "share/man/man1/git-continuity.1"], env=env, capture_output=True, text=True, check=True
    )
    assert page.stdout.splitlines()[:3] == [
        "GIT-CONTINUITY(1)                 Git Manual                 GIT-CONTINUITY(1)",
        "",
        "NAME",
    ]
    for args in (["help", "continuity"], ["continuity", "--help"]):
        ran = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, page.stdout, ""), args
