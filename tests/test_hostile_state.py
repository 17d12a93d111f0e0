"""State written by a hostile or careless teammate (issue 10): YAML that expands without
end, files too big to read, text that drives the reader's terminal, text too long to show.
Each must answer at once, exit 2 where it is malformed, and reach no screen raw."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, cont, git, write_state
from test_bad_input import BOMB, NO_ALIASES, everything

from git_continuity.display import UNSAFE

PACKET = ".continuity/packet.yaml"


@pytest.fixture
def started(repo: Path) -> Path:
    assert cont(repo, "init").code == 0
    return repo


# -- YAML that expands without end; files over their size limit -----------------------------


def test_a_nested_alias_packet_answers_at_once(remote_and_clone: tuple[Path, Path], tmp_path: Path) -> None:
    _, work = remote_and_clone
    assert cont(work, "init").code == 0
    assert cont(work, "push").code == 0
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(remote_and_clone[0]), str(teammate))
    assert cont(teammate, "pull").code == 0
    # The hostile teammate commits the packet by hand and pushes it past git-continuity.
    write_state(work, {PACKET: BOMB})
    git(work, "push", "-q", "origin", "refs/continuity/main")
    problem = f"{PACKET} line 1: {NO_ALIASES}"

    started_at = time.monotonic()
    ran = cont(work, "status")
    assert (ran.code, ran.err) == (2, "")
    assert ran.out.endswith(f"Problems (this state is malformed; nothing will be written on top of it)\n  {problem}\n")
    before = everything(work)
    ran = cont(work, "journal", "add", "more")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err.startswith(
        f"git-continuity: error: the state on refs/continuity/main is malformed; nothing was written:\n  {problem}\n"
    )
    assert everything(work) == before

    # Every teammate's pull: refused, quickly, and the local state is left as it was.
    tip = git(teammate, "rev-parse", "refs/continuity/main")
    ran = cont(teammate, "pull")
    assert (ran.code, ran.out) == (2, "")
    commit = git(teammate, "rev-parse", "--short", "refs/continuity-remotes/origin/main")
    assert ran.err.startswith(
        "git-continuity: error: the state fetched from origin is malformed; nothing was merged,"
        f" the local state is untouched:\n  origin's main ({commit}): {problem}\n"
    )
    assert git(teammate, "rev-parse", "refs/continuity/main") == tip
    assert time.monotonic() - started_at < 10  # three runs; the old code took ~10 s for each


@pytest.mark.parametrize(
    ("policy", "problem"),
    [
        ("closing_keywords: &k [closes]\nclosing_checks: *k\n", f" line 1: {NO_ALIASES}"),
        ("closing_checks: " + "[" * 25 + "]" * 25 + "\n", " line 1: nested deeper than 20 levels"),
        ("# " + "x" * 70_000 + "\n", ": 70,003 bytes, over the limit of 65,536 bytes for this file: it was not read"),
        (b"closing_keywords: [clos\xe9s]\n", " line 1: byte offset 23 is not UTF-8 (0xe9)"),
    ],
)
def test_a_policy_file_that_cannot_be_read_safely(started: Path, policy: str | bytes, problem: str) -> None:
    path = started / ".continuity.yaml"
    path.write_bytes(policy.encode() if isinstance(policy, str) else policy)
    before = everything(started)
    ran = cont(started, "claim", "list")
    assert (ran.code, ran.out, ran.err) == (2, "", f"git-continuity: error: {path}{problem}\n")
    assert everything(started) == before
    read = cont(started, "status")  # a read goes on with the defaults, saying which file and line
    assert read.code == 0 and f"  {path}{problem}; read with the built-in defaults here" in read.out


ENTRY = ".continuity/journal/2026-11-30/20261130T100000.000000Z-j-222222.json"


def entry(text: str) -> str:
    """A journal entry as a teammate's tool might write it."""
    data = {"at": "2026-11-30T10:00:00.000Z", "by": "Mallory <m@example.com>", "host": "far", "id": "j-222222"}
    return json.dumps({**data, "text": text}, indent=2) + "\n"


def test_an_entry_over_the_size_limit_is_not_read(started: Path) -> None:
    big = entry("x" * 1_100_000)
    write_state(started, {ENTRY: big})
    problem = f"{ENTRY}: {len(big):,} bytes, over the limit of 1,048,576 bytes for this file: it was not read"
    ran = cont(started, "status")
    assert (ran.code, ran.err) == (2, "")
    assert ran.out.endswith(f"Problems (this state is malformed; nothing will be written on top of it)\n  {problem}\n")
    assert "xxxxxxxxxx" not in ran.out
    ran = cont(started, "journal", "--json")
    assert ran.code == 2
    assert (json.loads(ran.out)["entries"], json.loads(ran.out)["problems"]) == ([], [problem])


def test_an_entry_over_the_size_limit_is_not_written(started: Path, inproc: Callable[..., Ran]) -> None:
    before = everything(started)
    ran = inproc(started, "journal", "add", "x" * 1_100_000)  # in process: argv holds 128 KiB at most
    assert (ran.code, ran.out) == (2, "")
    assert re.fullmatch(
        r"git-continuity: error: refusing to write \.continuity/journal/\d{4}-\d\d-\d\d/\d{8}T\d{6}\.\d{6}Z-j-\w{6}"
        r"\.json: 1,100,\d{3} bytes, over the limit of 1,048,576 bytes for this file\n",
        ran.err,
    ), ran.err
    assert everything(started) == before


# -- text that drives the terminal; text too long to show -----------------------------------

# A title sequence, colours, a right-to-left override, a carriage return, a C1 CSI.
EVIL = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m\u202eevil\rover\x9b2J"
SHOWN = "\\x1b]0;pwned\\x07\\x1b[31mred\\x1b[0m\\u202eevil\\x0dover\\x9b2J"


def test_text_from_state_cannot_drive_the_terminal(started: Path) -> None:
    args: tuple[str, ...]
    for args in (
        ("objective", "set", f"ship {EVIL}", "--why", f"why {EVIL}"),
        ("next", f"next {EVIL}"),
        ("blocker", "add", f"blocker {EVIL}"),
        ("claim", "add", f"claim {EVIL}"),
        ("thread", "add", f"thread {EVIL}", "--check", "commit:HEAD"),
        ("journal", "add", f"entry {EVIL}"),
    ):
        ran = cont(started, *args)
        assert ran.code == 0, ran
        assert not UNSAFE.search(ran.out + ran.err), ran  # the confirmation echoes the text
    shown: dict[str, str] = {}
    for args in (
        ("status",),
        ("journal",),
        ("log",),
        ("claim", "list"),
        ("objective", "log"),
        ("thread", "close", "t-"),
        ("orient",),
        ("handoff",),
    ):
        if args[0] == "thread":  # a refusal names the thread's checks on stderr
            thread = json.loads(cont(started, "status", "--json").out)["threads"][0]["id"]
            args = ("thread", "close", thread)
        ran = cont(started, *args)
        assert not UNSAFE.search(ran.out + ran.err), (args, ran)
        shown[" ".join(args[:2])] = ran.out + ran.err
        # log shows each change's first line: a carriage return ends it (str.splitlines).
        assert (SHOWN.split("\\x0d")[0] if args == ("log",) else SHOWN) in ran.out + ran.err, (args, ran)
    assert f"Objective  ship {SHOWN}\n  why      why {SHOWN}\n" in shown["status"]
    assert re.search(
        f"\nJournal \\(1: git continuity journal\\)\n  [-0-9: ]+  entry {re.escape(SHOWN)}\n", shown["status"]
    )
    assert f"\n  entry {SHOWN}\n" in shown["journal"]
    assert f"\n  now: ship {SHOWN}\n  was: (none)\n  why: why {SHOWN}\n" in shown["objective log"]

    # Programs get the text exactly as stored, and the JSON itself holds nothing raw.
    ran = cont(started, "journal", "--json")
    assert not UNSAFE.search(ran.out)
    assert json.loads(ran.out)["entries"][0]["text"] == f"entry {EVIL}"  # then the handoff's

    # An agent reads the brief inside the hook's JSON: cleaned there too.
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "session-start"],
        input=json.dumps({"cwd": str(started), "session_id": "agent-1"}),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and not UNSAFE.search(done.stdout + done.stderr)
    brief = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"\n- why: why {SHOWN}\n" in brief and not UNSAFE.search(brief)


def test_long_text_is_cut_with_a_marker(started: Path) -> None:
    text = "y" * 1500
    for args in (("journal", "add", text), ("claim", "add", text)):
        assert cont(started, *args).code == 0
    marker = "… [500 more characters: git continuity {} shows it whole]"
    status = cont(started, "status").out
    assert re.search(f"\n  prose  c-\\w{{6}}  y{{1000}}{re.escape(marker.format('claim list --full'))}\n", status)
    assert re.search(f"\n  [-0-9: ]+  y{{1000}}{re.escape(marker.format('journal --full'))}\n", status)
    assert f"\n  {'y' * 1000}{marker.format('journal --full')}\n" in cont(started, "journal").out
    assert f"  {'y' * 1000}{marker.format('claim list --full')}\n" in cont(started, "claim", "list").out
    assert [e["text"] for e in json.loads(cont(started, "journal", "--json").out)["entries"]] == [text]


def test_text_that_drives_a_terminal_reaches_git_log_escaped_and_the_entry_whole(started: Path) -> None:
    """The state commit's subject names the entry's text, so `git log` of the state ref showed a
    title-setting sequence raw; the entry itself keeps every character."""
    text = "a\rb\x1b]0;title\x07c \u202ekey"
    made = cont(started, "journal", "add", text)
    assert made.code == 0, made
    entry = made.out.split()[2]
    logged = git(started, "log", "-1", "--format=%B", "refs/continuity/main")
    assert logged.splitlines()[0] == f"journal add {entry}: a\\x0db\\x1b]0;title\\x07c \\u202ekey"
    assert not UNSAFE.search(logged)
    reflog = git(started, "reflog", "-1", "--format=%gs", "refs/continuity/main")
    assert not UNSAFE.search(reflog)
    (shown,) = [e for e in json.loads(cont(started, "journal", "--json").out)["entries"] if e["id"] == entry]
    assert shown["text"] == text
