"""The README and docs/ kept true by a test: the README stays a page that starts, every link
between the pages reaches a file, and every command example parses with the real command line.

An example meant to fail ends with ``# fails`` and is left out of the parse."""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import re
import shlex
from pathlib import Path

import pytest

from git_continuity.cli.main import LEAF, build_parser
from git_continuity.cli.table import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^\s*```")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def prose(text: str) -> str:
    """The page without its fenced blocks and code spans, where a bracket is not a link."""
    kept: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return CODE_SPAN.sub("", "\n".join(kept))


def sh_lines(text: str) -> list[str]:
    """Each command of the page's ```sh blocks (a line continued with a backslash joined), and
    each `$ ` line of its other blocks, a session as typed."""
    commands: list[str] = []
    fence: str | None = None
    pending = ""
    for line in text.split("\n"):
        if fence is None:
            fence = line.strip()[3:] if FENCE.match(line) else None
        elif FENCE.match(line):
            fence = None
        elif fence != "sh":
            commands += [line.strip()] if line.lstrip().startswith("$ ") else []
        elif line.rstrip().endswith("\\"):
            pending += line.strip()[:-1]
        else:
            commands.append(pending + line.strip())
            pending = ""
    return [c for c in commands if c]


def examples(page: Path) -> list[str]:
    found = []
    for line in sh_lines(page.read_text()):
        line = line.removeprefix("$ ")
        if line.startswith("git continuity ") and not line.endswith("# fails"):
            found.append(line)
    return found


@functools.cache
def parser() -> argparse.ArgumentParser:
    return build_parser(eager=True)


def parse_error(line: str) -> str | None:
    """Why the real command line refuses ``line`` (None when it parses to a command to run)."""
    argv = shlex.split(line, comments=True)[2:]
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
            args, extra = parser().parse_known_args(argv)
    except SystemExit as exit:
        return None if exit.code == 0 else said.getvalue().strip()  # -h and --version exit 0
    if extra:
        return f"unrecognized arguments: {' '.join(extra)}"
    if not hasattr(args, LEAF):
        return "names a command that only holds actions, and no action"
    return None


def test_the_readme_is_a_page_that_starts() -> None:
    lines = (ROOT / "README.md").read_text().count("\n")
    assert lines < 250, f"README.md has {lines} lines; the rest belongs in docs/"


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_relative_link_reaches_a_file(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        if "#" in target:
            broken.append(f"{target}: links to a file, never to an anchor that a new heading breaks")
        elif not (page.parent / target).resolve().is_file():
            broken.append(f"{target}: no such file")
    assert broken == [], f"{_name(page)}: {broken}"


def test_the_pages_hold_links_and_command_examples() -> None:
    # The checks below would pass on pages they cannot read: they must find what they check.
    assert len(LINK.findall(prose((ROOT / "README.md").read_text()))) >= 15
    counts = {_name(page): len(examples(page)) for page in PAGES}
    assert counts["README.md"] >= 15
    assert sum(counts.values()) >= 80
    assert "git continuity thread add \"consumer renders the new output\" --check '@api:pushed:HEAD@origin/main' " in (
        " ".join(examples(ROOT / "docs" / "how-to" / "places.md"))
    )


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_command_example_parses(page: Path) -> None:
    refused = {line: error for line in examples(page) if (error := parse_error(line)) is not None}
    assert refused == {}, f"{_name(page)}: examples the command line refuses"


def test_a_refused_example_is_caught() -> None:
    assert parse_error("git continuity doctor [--fix]") == "unrecognized arguments: [--fix]"
    assert "invalid choice: 'close'" in str(parse_error("git continuity close t-k7m2qx"))
    assert parse_error("git continuity thread") == "names a command that only holds actions, and no action"
    assert parse_error("git continuity thread close t-k7m2qx   # exit 1, listing each check") is None


def test_the_reference_names_every_command() -> None:
    reference = (ROOT / "docs" / "reference.md").read_text()
    missing = [c.name for c in COMMANDS if not c.hidden and f"| `{c.name}" not in reference]
    assert missing == []
