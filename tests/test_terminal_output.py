"""Output people read: long and multi-line text keeps its indentation when folded, long text
is cut with a marker (stored whole; --full shows it), short ids (-v whole), colour on a
terminal only, and one progress line once network verification takes over a second."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Ran, git, on_a_pty
from forge_fakes import FakeGitHub

Run = Callable[..., Ran]


def ok(run: Run, where: Path, *args: str) -> Ran:
    ran = run(where, *args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


@pytest.fixture
def started(repo: Path, inproc: Run) -> Path:
    ok(inproc, repo, "init")
    return repo


def section(out: str, title: str) -> list[str]:
    """The lines of a status section, its title included, up to the blank line after it."""
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith(title))
    end = next((n for n in range(at, len(lines)) if not lines[n]), len(lines))
    return lines[at:end]


# -- folding ----------------------------------------------------------------------------------


def test_multi_line_and_long_text_keeps_its_indentation(started: Path, inproc: Run) -> None:
    ok(inproc, started, "next", "rebase first:\n  - on origin/main\n    then push")
    ran = ok(inproc, started, "status")
    # status hangs its later lines under its first character, each keeping its indentation
    # (#26: at column 0 a line of it could pass for the tool's); next shows it as it is.
    assert section(ran.out, "Next") == [
        "Next       rebase first:",
        "             - on origin/main",
        "               then push",
    ]
    said = "tried the cache fix; the login loop still happens when the session cookie expires mid-request"
    ok(inproc, started, "journal", "add", said)
    assert f"  {said}\n" in ok(inproc, started, "status").out  # a pipe is never folded
    journal = section(on_a_terminal(started, "status", env={"COLUMNS": "60"}), "Journal")
    at = journal[1][:23]  # "  2026-12-01 10:00:00  "
    assert journal[1:] == [
        f"{at}tried the cache fix; the login loop",
        " " * len(at) + "still happens when the session cookie",
        " " * len(at) + "expires mid-request",
    ]
    assert ok(inproc, started, "next").out == "rebase first:\n  - on origin/main\n    then push\n"


# -- long text: stored whole, shown cut, --full whole -------------------------------------------


def test_a_long_next_action_is_kept_whole_and_shown_cut(started: Path, inproc: Run) -> None:
    text = "x" * 120_000
    set_it = ok(inproc, started, "next", text)
    marker = "… [119,000 more characters: git continuity next --full shows it whole]"
    assert set_it.out == f"Next action: {'x' * 1000}{marker}\n"
    assert json.loads(ok(inproc, started, "next", "--json").out)["next_action"] == text
    assert ok(inproc, started, "next").out == f"{'x' * 1000}{marker}\n"
    assert ok(inproc, started, "next", "--full").out == text + "\n"
    status = ok(inproc, started, "status").out
    assert (
        f"Next       {'x' * 1000}… [119,000 more characters: git continuity status --full shows it whole]\n" in status
    )
    assert f"Next       {text}\n" in ok(inproc, started, "status", "--full").out
    assert f"Next       {text}\n" in ok(inproc, started, "--full", "status").out


# -- ids --------------------------------------------------------------------------------------


def test_ids_are_short_for_people_and_whole_with_v_and_in_json(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    ok(inproc, started, "claim", "add", "the commit exists", "--check", "commit:HEAD")
    assert f"    commit:{head[:12]}…\n" in ok(inproc, started, "status").out
    assert f"    commit:{head}\n" in ok(inproc, started, "status", "-v").out
    assert f"    commit:{head}\n" in ok(inproc, started, "--verbose", "status").out
    assert json.loads(ok(inproc, started, "status", "--json").out)["claims"][0]["handle"] == f"commit:{head}"


# -- colour -----------------------------------------------------------------------------------


def on_a_terminal(where: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """``git continuity ARGS`` with a pseudo-terminal as stdout and stderr (200 columns)."""
    return on_a_pty(where, list(args), {"COLUMNS": "200", **(env or {})}, 30)


GREEN = "\x1b[32mverified\x1b[0m"


def test_colour_on_a_terminal_only(started: Path, inproc: Run) -> None:
    ok(inproc, started, "claim", "add", "the commit exists", "--check", "commit:HEAD")
    ok(inproc, started, "journal", "add", "a teammate's \x1b[31mred\x1b[0m entry")
    shown = on_a_terminal(started, "status")
    assert f"  {GREEN}  c-" in shown
    assert "\x1b[33mWarnings\x1b[0m" in shown
    assert "a teammate's \\x1b[31mred\\x1b[0m entry" in shown  # text from state still cannot colour
    # A coloured state takes its visible width only: the handle's line stands under the id.
    ok(inproc, started, "claim", "add", "two", "--check", "commit:HEAD")
    lines = on_a_terminal(started, "status").splitlines()
    at = next(n for n, line in enumerate(lines) if line.endswith("  two"))
    under_id = lines[at].index("  c-") + 2 - len(GREEN) + len("verified")  # the id's column as seen
    assert lines[at + 1].startswith(" " * under_id + "commit:"), lines[at + 1]
    for off in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        plain = on_a_terminal(started, "status", env=off)
        assert "\x1b[3" not in plain and "  verified  c-" in plain
    piped = subprocess.run(["git", "continuity", "status"], cwd=started, capture_output=True, text=True)
    assert "\x1b" not in piped.stdout and "  verified  c-" in piped.stdout


# -- progress ---------------------------------------------------------------------------------


@pytest.fixture
def slow_github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.delenv("GH_TOKEN", raising=False)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield fake


def test_one_progress_line_once_network_verification_takes_a_second(
    started: Path, inproc: Run, slow_github: FakeGitHub
) -> None:
    slow_github.add_pull("octo", "app", 1)
    ok(inproc, started, "claim", "add", "PR 1 open", "--check", "github:pr/octo/app#1=open")
    quick = on_a_terminal(started, "verify", "--online")
    assert "asking" not in quick and "verified" in quick  # answered within the second: no line
    slow_github.delay = 1.5
    shown = on_a_terminal(started, "verify", "--online")
    assert "\rasking 0/1 network claims\r" in shown
    piped = subprocess.run(["git", "continuity", "verify", "--online"], cwd=started, capture_output=True, text=True)
    assert (piped.returncode, piped.stderr) == (0, "")
    assert "asking" not in piped.stdout
