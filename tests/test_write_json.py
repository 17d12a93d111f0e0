"""A write's --json (render/wrote.py): the state commits it made, the id it made or was given, and
what it said, as an agent reads them; run as agents run the tool (a process each, no
terminal, so the helper serves them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Ran, cont, git


def state(repo: Path) -> str:
    return git(repo, "rev-parse", "refs/continuity/main")


def document(ran: Ran, code: int = 0) -> Any:
    assert (ran.code, ran.err) == (code, ""), ran
    return json.loads(ran.out)


def test_a_new_entry_is_named_with_its_commit(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    made = document(cont(repo, "journal", "add", "tried the fast path", "--json"))
    entry = made["id"]
    assert made == {
        "stream": "main",
        "id": entry,
        "commits": [
            {
                "stream": "main",
                "commit": state(repo),
                "subject": f"journal add {entry}: tried the fast path",
                "id": entry,
            }
        ],
        "said": [f"Journal entry {entry} recorded."],
    }
    shown = json.loads(cont(repo, "journal", "--json").out)["entries"]
    assert [e["id"] for e in shown] == [entry]


def test_a_thread_made_then_set_twice_then_refused_closing(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    opened = document(cont(repo, "thread", "add", "Ship it", "--check", "tag:v9", "--json"))
    thread = opened["id"]
    assert opened["commits"][0]["subject"] == f"thread add {thread}: Ship it"
    assert opened["said"] == [f"Thread {thread} opened: Ship it", "  check tag:v9"]
    parked = document(cont(repo, "thread", "set", thread, "watching", "--json"))
    assert parked == {
        "stream": "main",
        "id": thread,
        "commits": [
            {"stream": "main", "commit": state(repo), "subject": f"thread set {thread} watching: Ship it", "id": thread}
        ],
        "said": [f"Thread {thread} is watching."],
    }
    before = state(repo)
    again = document(cont(repo, "thread", "set", thread, "watching", "--json"))
    assert (again, state(repo)) == (
        {"stream": "main", "id": thread, "commits": [], "said": [f"Thread {thread} is watching."]},
        before,
    )
    refused = document(cont(repo, "thread", "close", thread, "--json"), code=1)
    (check,) = [c for c in json.loads(cont(repo, "claim", "list", "--json").out)["claims"]]
    assert refused == {
        "stream": "main",
        "id": thread,
        "commits": [
            {
                "stream": "main",
                "commit": state(repo),
                "subject": f"verify: checks of {thread} (evidence of costly checks)",
                "id": None,
            }
        ],
        "said": [
            f'Thread {thread} "Ship it" cannot close: 1 of 1 checks is not verified now.',
            f"  contradicted  {check['id']}  tag:v9",
            "                tag v9 does not exist here",
        ],
    }
    assert json.loads(cont(repo, "thread", "show", thread, "--json").out)["thread"]["status"] == "watching"


def test_a_refused_write_prints_no_document_and_writes_nothing(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    before = state(repo)
    ran = cont(repo, "claim", "retract", "c-222222", "--why", "gone", "--json")
    assert (ran.code, ran.out, ran.err, state(repo)) == (
        2,
        "",
        "git-continuity: error: no claim 'c-222222' in stream 'main' (git continuity claim list shows the ids)\n",
        before,
    )


def test_what_it_said_stays_exact_in_json_and_drives_no_terminal(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    ran = cont(repo, "blocker", "add", "waiting \x1b[31mred\x1b[0m \u202ekey", "--json")
    assert ran.code == 0 and "\x1b" not in ran.out and "\u202e" not in ran.out
    made = json.loads(ran.out)
    assert made["said"] == [
        f"Blocker {made['id']}: waiting \x1b[31mred\x1b[0m \u202ekey",
        f"  (git continuity blocker done {made['id']} when it is gone)",
    ]
