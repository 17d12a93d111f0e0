"""git continuity quarantine: what doctor --fix moved aside is listed, read, put back once it
is well-formed, or dropped with a journal entry saying what (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cont, git, state_refs, write_state

BAD_CLAIM = ".continuity/claims/c-222222.json"
BAD_TEXT = '{"id": "c-222222", "text": 5}\n'
GOOD_CLAIM = (
    '{"added_at": "2026-11-30T10:00:00.000Z", "added_by": "Ada Agent <ada@example.com>", "host": "h",'
    ' "id": "c-333333", "text": "the fix is pushed"}\n'
)


@pytest.fixture
def quarantined(repo: Path) -> Path:
    """A state whose doctor --fix moved a malformed claim and a stray file aside."""
    assert cont(repo, "init").code == 0
    write_state(repo, {BAD_CLAIM: BAD_TEXT, ".continuity/journal/stray.txt": "x\n"})
    assert cont(repo, "doctor", "--fix").code == 0
    return repo


def test_list_and_show(quarantined: Path) -> None:
    listed = cont(quarantined, "quarantine", "list")
    assert (listed.code, listed.out) == (
        0,
        "Quarantine of stream 'main' (2 files, never read as state):\n"
        "  claims/c-222222.json  (was .continuity/claims/c-222222.json; 30 bytes)\n"
        "  journal/stray.txt  (was .continuity/journal/stray.txt; 2 bytes)\n"
        "Read one: git continuity quarantine show NAME; put it back: restore NAME; drop it: drop NAME (or --all)\n",
    )
    assert json.loads(cont(quarantined, "quarantine", "list", "--json").out) == {
        "stream": "main",
        "files": [
            {
                "name": "claims/c-222222.json",
                "path": ".continuity/quarantine/claims/c-222222.json",
                "was": ".continuity/claims/c-222222.json",
                "bytes": 30,
                "missing": False,
            },
            {
                "name": "journal/stray.txt",
                "path": ".continuity/quarantine/journal/stray.txt",
                "was": ".continuity/journal/stray.txt",
                "bytes": 2,
                "missing": False,
            },
        ],
    }
    shown = cont(quarantined, "quarantine", "show", "claims/c-222222.json")
    assert (shown.code, shown.out) == (
        0,
        ".continuity/quarantine/claims/c-222222.json (was .continuity/claims/c-222222.json):\n" + BAD_TEXT,
    )


def test_drop_records_what_it_dropped_in_the_journal_and_the_warning_goes(quarantined: Path) -> None:
    assert "in quarantine" in cont(quarantined, "status").out
    dropped = cont(quarantined, "quarantine", "drop", "--all")
    assert dropped.code == 0
    entry = dropped.out.split("journal entry ")[1].split()[0]
    assert dropped.out == (
        f"Dropped 2 files from the quarantine; journal entry {entry} says which:\n"
        "  claims/c-222222.json  (was .continuity/claims/c-222222.json)\n"
        "  journal/stray.txt  (was .continuity/journal/stray.txt)\n"
    )
    journal = json.loads(cont(quarantined, "journal", "--json").out)["entries"]
    (text,) = [e["text"] for e in journal if e["id"] == entry]
    assert text.startswith(
        "Dropped 2 files from the quarantine (moved aside by doctor --fix; the state history keeps them):\n"
        "- claims/c-222222.json (was .continuity/claims/c-222222.json; 30 bytes, sha1 "
    )
    assert cont(quarantined, "quarantine", "list").out == "The quarantine of stream 'main' is empty.\n"
    assert "in quarantine" not in cont(quarantined, "status").out
    assert "quarantine" not in cont(quarantined, "doctor").out


def test_restore_puts_back_only_what_is_well_formed(quarantined: Path) -> None:
    before = state_refs(quarantined)
    ran = cont(quarantined, "quarantine", "restore", "claims/c-222222.json")
    assert (ran.code, ran.out, ran.err) == (
        2,
        "",
        "git-continuity: error: .continuity/quarantine/claims/c-222222.json is still malformed ((top level):"
        " 'added_at' is missing; (top level): 'added_by' is missing; (top level): 'host' is missing);"
        " nothing was written.\n"
        "Read it with git continuity quarantine show claims/c-222222.json, and record what is worth keeping anew.\n",
    )
    assert state_refs(quarantined) == before
    stray = cont(quarantined, "quarantine", "restore", "journal/stray.txt")
    assert stray.code == 2 and state_refs(quarantined) == before
    # an entry that is well formed (written by a newer version, say) goes back and is read again
    write_state(quarantined, {".continuity/quarantine/claims/c-333333.json": GOOD_CLAIM})
    back = cont(quarantined, "quarantine", "restore", "claims/c-333333.json")
    assert (back.code, back.out) == (
        0,
        "Restored .continuity/claims/c-333333.json from the quarantine: it is well-formed and read as state again.\n",
    )
    claims = json.loads(cont(quarantined, "claim", "list", "--json").out)["claims"]
    assert [c["id"] for c in claims] == ["c-333333"]


def test_naming_what_is_not_there_is_refused_and_nothing_written(quarantined: Path) -> None:
    before = state_refs(quarantined)
    for action in ("show", "restore", "drop"):
        ran = cont(quarantined, "quarantine", action, "claims/c-999999.json")
        assert (ran.code, ran.out, ran.err) == (
            2,
            "",
            "git-continuity: error: no 'claims/c-999999.json' in the quarantine of stream 'main'"
            " (there: claims/c-222222.json, journal/stray.txt); nothing was written\n",
        )
    ran = cont(quarantined, "quarantine", "drop")
    assert (ran.code, ran.err) == (
        2,
        "git-continuity: error: name the files (git continuity quarantine list shows them), or give --all\n",
    )
    assert state_refs(quarantined) == before
    assert cont(quarantined, "quarantine", "drop", "--all").code == 0
    empty = cont(quarantined, "quarantine", "drop", "--all")
    assert (empty.code, empty.err) == (
        2,
        "git-continuity: error: the quarantine of stream 'main' is empty: nothing to do\n",
    )
    assert git(quarantined, "log", "-1", "--format=%s", "refs/continuity/main") == "quarantine drop: 2 files"
