"""Text folds at word boundaries to the terminal's width (80 when it cannot be told): every help
text, the demo, claim show, the manual page; a thread's checks fold under their own column
(issue 27)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import cont, on_a_pty

from git_continuity import display
from git_continuity.cli import main as cli
from git_continuity.cli import manpage

Run = Any  # the inproc fixture's runner
ALL_HELP = list(manpage._parsers(cli.build_parser(eager=True)))


def help_text(words: tuple[str, ...], columns: int, capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        cli.main([*words, "-h"])
    return capsys.readouterr().out


def words_of(text: str) -> list[str]:
    """The words of a text, whatever its line breaks (a command's folded ` \\` left out)."""
    return [w for w in text.split() if w != "\\"]


@pytest.mark.parametrize("columns", [80, 120])
def test_every_help_text_fits_the_terminal_and_breaks_no_word(
    columns: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(ALL_HELP) > 60  # every command and action, the top level too
    for words in ALL_HELP:
        folded = help_text(words, columns, capsys, monkeypatch)
        wide = [line for line in folded.splitlines() if len(line) > columns]
        assert wide == [], (words, wide)
        # nothing lost or cut inside a word: the same words as on a terminal too wide to fold
        assert words_of(folded) == words_of(help_text(words, 1000, capsys, monkeypatch)), words


def test_a_folded_example_still_pastes_as_one_command() -> None:
    line = (
        '  git continuity thread add "Ship the login fix" --check pushed:HEAD@origin/main'
        " --check 'cmd:python -m pytest -q'   # one thread, two checks"
    )
    assert display.fold(line, 60).splitlines() == [
        '  git continuity thread add "Ship the login fix" --check \\',
        "      pushed:HEAD@origin/main --check \\",
        "      'cmd:python -m pytest -q'  # one thread, two checks",
    ]
    table = "  pushed:<rev>@<remote>/<branch>     rev is on the remote's branch (--online asks the remote)"
    assert display.fold(table, 66).splitlines() == [
        "  pushed:<rev>@<remote>/<branch>     rev is on the remote's branch",
        "                                     (--online asks the remote)",
    ]
    prose = "Revisions in checks resolve to full ids now, so a check\nabout a commit is added once that commit exists."
    assert display.fold(prose, 40).splitlines() == [
        "Revisions in checks resolve to full ids",
        "now, so a check about a commit is added",
        "once that commit exists.",
    ]
    assert display.fold("a-very-long-word-that-cannot-fold-anywhere at all", 20).splitlines() == [
        "a-very-long-word-that-cannot-fold-anywhere",
        "at all",
    ]


def test_the_manual_page_fits_80_columns(tmp_path: Path) -> None:
    page = tmp_path / "git-continuity.1"
    page.write_text(manpage.render())
    shown = subprocess.run(
        ["man", "-l", str(page)],
        capture_output=True,
        text=True,
        env={**os.environ, "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"},
        check=True,
    ).stdout
    assert len(shown.splitlines()) > 500
    assert [line for line in shown.splitlines() if len(line) > 80] == []


def on_a_terminal(where: Path, columns: int, *args: str) -> str:
    """``git continuity ARGS`` on a pseudo-terminal ``columns`` wide (no colour): what it showed."""
    return on_a_pty(where, list(args), {"COLUMNS": str(columns), "NO_COLOR": "1"}, 120)


@pytest.mark.parametrize("columns", [80, 120])
def test_the_demo_fits_the_terminal(columns: int, tmp_path: Path) -> None:
    shown = on_a_terminal(tmp_path, columns, "demo")
    lines = shown.splitlines()
    assert len(lines) > 100 and "git continuity" in shown
    # a line wider than the terminal is one word that cannot fold (none in the demo today)
    assert [line for line in lines if len(line) > columns and len(line.split()) > 1] == []
    folded = [line for line in lines if line.endswith(" \\")]
    assert all(re.search(r"\$ git |^\s+\S", line) for line in folded)


def test_a_threads_checks_fold_under_their_own_column(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    words = " ".join(["word"] * 30)
    thread = cont(repo, "thread", "add", "Ship it").out.split()[1]
    assert cont(repo, "claim", "add", words, "--check", "file:no-such-file", "--thread", thread).code == 0
    assert cont(repo, "claim", "add", words, "--check", "commit:HEAD").code == 0
    shown = on_a_terminal(repo, 60, "status")
    block = shown.split("Threads (1 not done, 0 done)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    claims = shown.split("Claims (", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert [line for line in block + claims if len(line) > 60] == []
    # a check's text folds under its text, its handle and observation under its id: as a
    # claim of its own does, four columns deeper
    text, under = 6 + len("contradicted  c-xxxxxx  "), 6 + len("contradicted  ")
    assert block[1].startswith("      contradicted  c-") and block[1][text:].startswith("word word")
    folded = [n for n, line in enumerate(block[2:], 2) if line.startswith(" " * text + "word")]
    assert folded == list(range(2, 2 + len(folded))) and len(folded) >= 3
    assert block[2 + len(folded)] == " " * under + "file:no-such-file"
    assert block[3 + len(folded)].startswith(" " * under + "no-such-file is not in HEAD")
    assert claims[0].startswith("  verified  c-") and claims[1].startswith(" " * len("  verified  c-xxxxxx  ") + "word")
