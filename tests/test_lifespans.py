"""Lifespans for prose (issue 15): `journal add --kind decision|finding|note`; an entry fades
once its kind's lifespan passed (policy `lifespans`: decisions never, findings after 30 days,
notes after 7); `journal` and `orient` show live entries and count the faded ones, `journal
--all` shows every entry, faded ones marked; nothing is deleted. Entries written before kinds
existed count as notes.

Entries get their time from the clock when written (model.now; there is no override), so the
old ones here are written with git plumbing, dated in the past, as another clone would have
written them days ago."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import conftest
import pytest
from conftest import Ran, git

from git_continuity.cli import table
from git_continuity.model import JOURNAL_KINDS, shown
from git_continuity.store.lifespans import faded
from git_continuity.store.policy import LIFESPANS

Run = Callable[..., Ran]
ME = "Ada Agent <ada@example.com>"
HINT = "git continuity journal --all"


@pytest.fixture
def gc(inproc: Run) -> conftest.Cli:
    return conftest.Cli(inproc)


@pytest.fixture
def started(gc: conftest.Cli, repo: Path) -> Path:
    gc.ok(repo, "init")
    gc.ok(repo, "objective", "set", "Keep what matters", "--why", "old notes crowd the brief")
    return repo


def old_entry(days: float, n: int, text: str, kind: str | None = None) -> tuple[str, str, dict[str, object]]:
    """A journal entry written ``days`` ago: (path, id, JSON), as journal add lays it out."""
    moment = datetime.now(timezone.utc) - timedelta(days=days)
    entry_id = f"j-{'abcdefghjk'[n] * 2}2222"
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    name = moment.strftime("%Y%m%dT%H%M%S.%fZ") + f"-{entry_id}.json"
    data: dict[str, object] = {"id": entry_id, "text": text, "at": stamp, "by": ME, "host": "laptop"}
    if kind is not None:
        data["kind"] = kind
    return f".continuity/journal/{stamp[:10]}/{name}", entry_id, data


def write_old(repo: Path, entries: list[tuple[str, str, dict[str, object]]]) -> None:
    conftest.write_state(repo, {path: json.dumps(data, indent=2) + "\n" for path, _, data in entries})


def journal_files(repo: Path) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/journal/").split()


def block(data: dict[str, object], mark: str = "") -> str:
    return f"{shown(str(data['at']))} UTC  {data['id']}  {ME} on laptop{mark}\n  {data['text']}\n\n"


# -- the rule -----------------------------------------------------------------------------------


def test_an_entry_fades_once_its_kinds_lifespan_passed() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
    assert not faded("decision", "2020-01-01T00:00:00.000Z", LIFESPANS, now)
    assert faded("finding", "2026-10-31T11:59:00.000Z", LIFESPANS, now)
    assert not faded("finding", "2026-11-01T12:01:00.000Z", LIFESPANS, now)
    assert faded("note", "2026-11-24T11:59:00.000Z", LIFESPANS, now)
    assert faded(None, "2026-11-24T11:59:00.000Z", LIFESPANS, now)  # written before kinds: a note
    assert not faded(None, "2026-11-24T12:01:00.000Z", LIFESPANS, now)
    assert not faded("note", "2026-12-09T00:00:00.000Z", LIFESPANS, now)  # a clock ahead: still live
    # The command line's choices are the model's kinds (the parser imports no model).
    (journal,) = [c for c in table.STATE if c.name == "journal"]
    (add,) = journal.subcommands
    (kind,) = [o for o in add.options if isinstance(o, tuple) and o[0] == ("--kind",)]
    assert tuple(kind.settings["choices"]) == JOURNAL_KINDS == tuple(LIFESPANS)


# -- journal and orient ---------------------------------------------------------------------------


def test_journal_and_orient_show_live_entries_and_count_the_faded_ones(gc: conftest.Cli, started: Path) -> None:
    decision = old_entry(100, 1, "tokens live in the keyring, never in files", "decision")
    old_finding = old_entry(40, 2, "the cache key ignored the locale", "finding")
    finding = old_entry(10, 3, "the login loop comes from the refresh timer", "finding")
    old_note = old_entry(8, 4, "tried bumping the timeout: no change", "note")
    legacy = old_entry(9, 5, "debugging the proxy, day 2")  # written before kinds existed
    note = old_entry(1, 6, "the flaky test passes with --runs 50")
    write_old(started, [decision, old_finding, finding, old_note, legacy, note])
    added = gc.ok(started, "journal", "add", "--kind", "decision", "ship behind a flag first")
    assert added.startswith("Journal entry j-") and added.endswith(" recorded as a decision (it never fades).\n")
    assert gc.ok(started, "journal", "add", "--kind", "finding", "retries hide the race").endswith(
        " recorded as a finding (it fades after 30d).\n"
    )
    before = journal_files(started)
    assert len(before) == 8

    listed = json.loads(gc.ok(started, "journal", "--json"))
    assert (listed["total"], listed["faded"]) == (8, 3)
    new_decision, new_finding = listed["entries"][-2:]
    live = [decision[1], finding[1], note[1], new_decision["id"], new_finding["id"]]
    assert [e["id"] for e in listed["entries"]] == live
    assert [e.get("kind") for e in listed["entries"]] == ["decision", "finding", None, "decision", "finding"]
    assert not any("faded" in e for e in listed["entries"])

    text = gc.ok(started, "journal")
    assert text.startswith(f"(3 faded entries left out: {HINT})\n\n")
    assert text.split("\n\n", 1)[1].startswith(
        block(decision[2], "  [decision]") + block(finding[2], "  [finding]") + block(note[2])
    )
    assert f"  {new_decision['id']}  " in text and "  [decision]\n  ship behind a flag first\n" in text

    everything = gc.ok(started, "journal", "--all")
    assert "left out" not in everything
    assert everything.startswith(
        block(decision[2], "  [decision]")
        + block(old_finding[2], "  [finding, faded]")
        + block(finding[2], "  [finding]")
        + block(legacy[2], "  [faded]")
        + block(old_note[2], "  [faded]")
        + block(note[2])
    )
    shown_all = json.loads(gc.ok(started, "journal", "--all", "--json"))
    assert [e["id"] for e in shown_all["entries"] if e.get("faded")] == [old_finding[1], legacy[1], old_note[1]]
    assert (shown_all["total"], shown_all["faded"]) == (8, 3)
    latest = gc.ok(started, "journal", "-n", "2")
    assert latest.startswith(f"(latest 2 of 5; --all shows every entry)\n\n(3 faded entries left out: {HINT})\n\n")

    # orient prefers the live entries and says how many faded.
    brief = gc.ok(started, "orient")
    journal = brief.split("## Journal ")[1].splitlines()
    assert journal[:2] == ["(latest 5 of 5)", f"3 faded entries left out: {HINT}"]
    assert journal[2].endswith(" (finding): retries hide the race")
    assert journal[3].endswith(" (decision): ship behind a flag first")
    assert journal[4:] == [
        f"- {shown(str(note[2]['at']))} UTC Ada Agent on laptop: {note[2]['text']}",
        f"- {shown(str(finding[2]['at']))} UTC Ada Agent on laptop (finding): {finding[2]['text']}",
        f"- {shown(str(decision[2]['at']))} UTC Ada Agent on laptop (decision): {decision[2]['text']}",
    ]
    oriented = json.loads(gc.ok(started, "orient", "--json"))
    assert (oriented["journal_total"], oriented["journal_faded"]) == (8, 3)
    assert [e["id"] for e in oriented["journal"]] == live[::-1]  # newest first, as the brief lists them

    # Nothing is deleted: fading is derived when read.
    assert journal_files(started) == before


def test_the_policy_sets_the_lifespans(gc: conftest.Cli, started: Path) -> None:
    finding = old_entry(40, 1, "the cache key ignored the locale", "finding")
    note = old_entry(2, 2, "tried bumping the timeout: no change")
    write_old(started, [finding, note])
    (started / ".continuity.yaml").write_text("lifespans:\n  finding: never\n  note: 1d\n")
    listed = json.loads(gc.ok(started, "journal", "--json"))
    assert ([e["id"] for e in listed["entries"]], listed["faded"]) == ([finding[1]], 1)
    assert gc.ok(started, "journal", "add", "--kind", "note", "a note").endswith(" recorded.\n")
    (started / ".continuity.yaml").write_text("lifespans: {decision: 12h}\n")
    assert gc.ok(started, "journal", "add", "--kind", "decision", "x").endswith(
        " recorded as a decision (it fades after 12h).\n"
    )
    # With every kind set to never, nothing fades.
    (started / ".continuity.yaml").write_text("lifespans: {decision: never, finding: never, note: never}\n")
    assert json.loads(gc.ok(started, "journal", "--json"))["faded"] == 0


@pytest.mark.parametrize(
    ("policy", "said"),
    [
        (
            "lifespans:\n  note: 7 days\n",
            "line 2: lifespans.note: '7 days' is not in the expected form (give a duration such as 12h, 7d or 30d, "
            "at most 99999 of a unit, or never)",
        ),
        (
            "stalled: {attempts: 3}\nlifespans: {finding: 0d}\n",
            "line 2: lifespans.finding: '0d' is not in the expected form (give a duration such as 12h, 7d or 30d, "
            "at most 99999 of a unit, or never)",
        ),
        (
            "lifespans:\n  idea: 3d\n",
            "line 2: lifespans.idea: unknown key 'idea' (the kinds are decision, finding, note)",
        ),
    ],
)
def test_a_bad_lifespan_is_exit_2_naming_file_key_and_line(
    gc: conftest.Cli, started: Path, policy: str, said: str
) -> None:
    (started / ".continuity.yaml").write_text(policy)
    before = conftest.state_refs(started)
    # orient reads on with the defaults, naming the line (tests/test_policy_reads.py)
    assert (
        f"Warning: {started / '.continuity.yaml'} {said}; read with the built-in defaults"
        in gc.run(started, "orient").out
    )
    for args in (("journal",), ("journal", "add", "x")):
        refused = gc.run(started, *args)
        assert (refused.code, refused.out, refused.err) == (
            2,
            "",
            f"git-continuity: error: {started / '.continuity.yaml'} {said}\n",
        ), args
    assert conftest.state_refs(started) == before


def test_a_kind_outside_the_list_is_exit_2_naming_the_kinds(gc: conftest.Cli, started: Path) -> None:
    before = conftest.state_refs(started)
    refused = conftest.cont(started, "journal", "add", "--kind", "idea", "tried X")
    assert refused.code == 2 and refused.out == ""
    assert refused.err.endswith(
        "git continuity journal add: error: argument --kind: invalid choice: 'idea' "
        "(choose from 'decision', 'finding', 'note')\n"
    )
    assert conftest.state_refs(started) == before
