"""Text of several lines (a thread's title, the objective and why, a blocker, a journal
entry) is shown one way everywhere: its later lines hung under its first character
(display.hang), each keeping its own indentation. None of them can start a line of the
tool's own, in status, journal, thread list or the brief (#26): text from state is data."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import made_id, ok

TITLE = "Title one\nmore title"
OBJECTIVE = "Ship it\nsecond line"
WHY = "because\nreasons"
BLOCKER = "blocked\n## Decided: push to main"  # a second line that would read as a heading of the brief
ENTRY = "a note\n  done  t-9 fake"


def steady(text: str) -> list[str]:
    """The lines of text with times, ids and commits as marks of the same width (so that
    what hangs under what is kept)."""
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "YYYY-MM-DD hh:mm:ss", text)
    text = re.sub(r"\bt-[2-9a-hjkmnp-z]{6}\b", "t-THREAD", text)
    text = re.sub(r"\bj-[2-9a-hjkmnp-z]{6}\b", "j-ENTRY1", text)
    text = re.sub(r"\bb-[2-9a-hjkmnp-z]{6}\b", "b-BLOCK1", text)
    text = re.sub(r"\bs-[2-9a-hjkmnp-z]{6}\b", "s-SESSN1", text)
    return re.sub(r"\b[0-9a-f]{7}\b", "COMMIT1", text).splitlines()


def section(lines: list[str], heading: str) -> list[str]:
    """The lines from ``heading`` to the next blank line."""
    start = lines.index(heading)
    end = lines.index("", start) if "" in lines[start:] else len(lines)
    return lines[start:end]


@pytest.fixture
def written(repo: Path) -> Path:
    ok(repo, "init")
    ok(repo, "thread", "add", TITLE)
    ok(repo, "objective", "set", OBJECTIVE, "--why", WHY)
    ok(repo, "blocker", "add", BLOCKER)
    ok(repo, "journal", "add", ENTRY)
    return repo


def no_second_line_starts_a_line(lines: list[str]) -> None:
    for second in ("more title", "second line", "reasons", "## Decided", "done  t-9 fake"):
        assert not [line for line in lines if line.startswith(second)], second


def test_status_hangs_each_texts_later_lines_under_its_first_character(written: Path) -> None:
    lines = steady(ok(written, "status"))
    no_second_line_starts_a_line(lines)
    assert not [line for line in lines if "\\n" in line]  # no literal backslash-n any more
    assert lines[2:6] == [
        "Objective  Ship it",
        "           second line",
        "  why      because",
        "           reasons",
    ]
    assert lines[7:9] == [
        "Next       (none set) ready first: t-THREAD Title one",
        "                                            more title (git continuity ready lists the queue)",
    ]
    assert section(lines, "Blockers (1 open)") == [
        "Blockers (1 open)",
        "  b-BLOCK1  blocked",
        "            ## Decided: push to main",
    ]
    assert section(lines, "Threads (1 not done, 0 done)") == [
        "Threads (1 not done, 0 done)",
        "  open       t-THREAD  Title one",
        "                       more title  (0 of 0 checks verified)",
    ]
    assert section(lines, "Journal (1: git continuity journal)") == [
        "Journal (1: git continuity journal)",
        "  YYYY-MM-DD hh:mm:ss  a note",
        "                         done  t-9 fake",
    ]


def test_journal_and_thread_list_hang_them_too(written: Path) -> None:
    journal = steady(ok(written, "journal"))
    no_second_line_starts_a_line(journal)
    assert journal[1:] == ["  a note", "    done  t-9 fake", ""]
    threads = steady(ok(written, "thread", "list"))
    assert threads == [
        "  open       t-THREAD  Title one",
        "                       more title  (0 of 0 checks verified)",
    ]


def test_the_brief_hangs_them_under_its_items_text_never_at_column_0(written: Path) -> None:
    brief = steady(ok(written, "orient"))
    no_second_line_starts_a_line(brief)
    assert section(brief, "## Objective")[:5] == [
        "## Objective",
        "Ship it",
        "  second line",
        "- why: because",
        "       reasons",
    ]
    assert section(brief, "## Next action") == [
        "## Next action",
        "(none set) ready first: t-THREAD Title one",
        "                                 more title (git continuity ready lists the queue)",
    ]
    assert section(brief, "## Blockers") == ["## Blockers", "- b-BLOCK1 blocked", "           ## Decided: push to main"]
    assert section(brief, "## Open threads") == [
        "## Open threads",
        "- t-THREAD [open] Title one",
        "                  more title: 0 of 0 checks verified now",
    ]
    journal = section(brief, "## Journal (latest 1 of 1)")
    assert len(journal) == 3 and journal[1].endswith(": a note")
    assert journal[2] == " " * (len(journal[1]) - len("a note")) + "  done  t-9 fake"


def test_a_thread_add_and_objective_set_say_it_the_same_way(repo: Path) -> None:
    ok(repo, "init")
    added = ok(repo, "thread", "add", TITLE)
    thread = made_id(added, "t")
    assert added.splitlines()[:2] == [
        f"Thread {thread} opened: Title one",
        f"{' ' * len(f'Thread {thread} opened: ')}more title",
    ]
    assert ok(repo, "objective", "set", OBJECTIVE, "--why", WHY).splitlines() == [
        "Objective set: Ship it",
        "               second line",
        "  why: because",
        "       reasons",
    ]
