"""packetedit: one change spliced into the text of ``packet.yaml``, kept only where libyaml
proves it holds exactly the change, and then byte for byte what ruamel.yaml's round trip
writes; a person's comments stay where they were; where the proof fails, None (the caller
takes the round trip)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import made_id, ok

from git_continuity.model import Blocker, Objective, to_json
from git_continuity.store import packetedit, packetfile
from git_continuity.store.packetfile import Edit

ADA = "Ada Agent <ada@example.com>"  # the tests' git identity (conftest.FIXED_ENV)


def round_trip(text: str, edit: Edit) -> str:
    """What the caller writes when the splice is not used: ruamel.yaml's round trip."""
    doc, _ = packetfile.parse(text)
    edit.on_doc(doc)
    return packetfile.dump(doc).decode()


def values(text: str) -> Any:
    """The packet's plain values as the tool reads them (ruamel.yaml, validated)."""
    return packetfile.plain(packetfile.parse(text)[0])


def changed(text: str, edit: Edit) -> Any:
    """The values of ``text`` with ``edit`` made on them."""
    found = values(text)
    edit.on_values(found)
    return found


def comment_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


# -- 1. a packet the tool wrote: the splice is the round trip, byte for byte ----------------

NEXT = 'fix: the "parser" - it\'s ünïcode ✓'
B1 = to_json(Blocker("b-k7m2qx", "- leading dash: see #12", "2026-11-30T10:00:00.125Z", ADA))
B2 = to_json(
    Blocker(
        "b-p3rt9w", "two lines:\nthe second says yes", "2026-11-30T10:05:00Z", "Bo <bo@example.com>", thread="t-abcdef"
    )
)
OBJECTIVE = to_json(
    Objective("Ship v2 — “now”", "users: 'locked out'\nsince Monday # really", "2026-11-30T10:10:00Z", ADA)
)

WRITTEN = """\
# git-continuity packet: the person-edited part of this stream's state.
# Edit it with `git continuity edit`; the commands change it too. Comments are kept.

# What this line of work is for: git continuity objective set TEXT --why TEXT
objective:
  text: Ship v2 — “now”
  why: "users: 'locked out'\\nsince Monday # really"
  set_at: '2026-11-30T10:10:00Z'
  set_by: Ada Agent <ada@example.com>
# The first thing the next session should do: git continuity next TEXT
next_action:
# What stops progress: git continuity blocker add TEXT, then blocker done ID
blockers:
  - id: b-k7m2qx
    text: '- leading dash: see #12'
    added_at: '2026-11-30T10:00:00.125Z'
    added_by: Ada Agent <ada@example.com>
  - id: b-p3rt9w
    text: "two lines:\\nthe second says yes"
    added_at: '2026-11-30T10:05:00Z'
    added_by: Bo <bo@example.com>
    thread: t-abcdef
"""


def test_each_command_edit_of_a_tool_written_packet_is_spliced_as_the_round_trip_writes_it() -> None:
    text = packetfile.TEMPLATE
    for edit in (
        Edit("next_action", NEXT),
        Edit("blockers", B1, append=True),  # into ``blockers: []``
        Edit("blockers", B2, append=True),
        Edit("objective", OBJECTIVE),
        Edit("next_action", None),
    ):
        expected = round_trip(text, edit)
        assert edit.on_text(text) == expected, edit
        text = expected
    assert text == WRITTEN
    assert values(text) == {"objective": OBJECTIVE, "next_action": None, "blockers": [B1, B2]}


YES = to_json(Blocker("b-yyyyyy", "yes", "2026-11-30T11:00:00Z", ADA))
OTHER_OBJECTIVE = to_json(Objective("Ship v3", "later", "2026-11-30T12:00:00Z", ADA))

GUARDED = """\
# git-continuity packet: the person-edited part of this stream's state.
# Edit it with `git continuity edit`; the commands change it too. Comments are kept.

# What this line of work is for: git continuity objective set TEXT --why TEXT
objective:
  text: Ship v3
  why: later
  set_at: '2026-11-30T12:00:00Z'
  set_by: Ada Agent <ada@example.com>
# The first thing the next session should do: git continuity next TEXT
next_action:
# What stops progress: git continuity blocker add TEXT, then blocker done ID
blockers:
  - id: b-yyyyyy
    text: yes
    added_at: '2026-11-30T11:00:00Z'
    added_by: Ada Agent <ada@example.com>
  - id: b-k7m2qx
    text: '- leading dash: see #12'
    added_at: '2026-11-30T10:00:00.125Z'
    added_by: Ada Agent <ada@example.com>
"""


def test_where_libyaml_reads_the_lines_otherwise_the_splice_is_refused_and_the_round_trip_used() -> None:
    """ruamel.yaml (YAML 1.2) writes the string ``yes`` bare, which libyaml (YAML 1.1) reads
    as true: that splice is not proven. A value line holding ``#`` is not replaced either."""
    text = packetfile.TEMPLATE
    for edit, spliced in (
        (Edit("next_action", "yes"), False),  # libyaml: True
        (Edit("next_action", "# not a comment"), True),
        (Edit("next_action", None), False),  # the line replaced holds a '#'
        (Edit("blockers", YES, append=True), False),  # libyaml: text True
        (Edit("blockers", B1, append=True), True),  # the bare yes is read alike before and after
        (Edit("objective", OBJECTIVE), True),
        (Edit("objective", OTHER_OBJECTIVE), False),  # the lines replaced hold a '#'
    ):
        expected = round_trip(text, edit)
        assert edit.on_text(text) == (expected if spliced else None), edit
        text = expected
    assert text == GUARDED
    assert values(text) == {"objective": OTHER_OBJECTIVE, "next_action": None, "blockers": [YES, B1]}


# -- 2. a person's comments are kept byte for byte ------------------------------------------

PERSON = """\
# git-continuity packet: the person-edited part of this stream's state.
# Edit it with `git continuity edit`; the commands change it too. Comments are kept.

# What this line of work is for: git continuity objective set TEXT --why TEXT
objective:
# mine: ask Bo before changing the next action
# The first thing the next session should do: git continuity next TEXT
next_action: push the fix
# What stops progress: git continuity blocker add TEXT, then blocker done ID
blockers:
  - id: b-k7m2qx
    text: '- leading dash: see #12'
    added_at: '2026-11-30T10:00:00.125Z'
    added_by: Ada Agent <ada@example.com>
  # between: the review is booked for Monday
  - id: b-yyyyyy
    text: waiting on review
    added_at: '2026-11-30T11:00:00Z'
    added_by: Ada Agent <ada@example.com>

# end of the packet: keep this last
"""

PERSON_AFTER = """\
# git-continuity packet: the person-edited part of this stream's state.
# Edit it with `git continuity edit`; the commands change it too. Comments are kept.

# What this line of work is for: git continuity objective set TEXT --why TEXT
objective:
  text: Ship v3
  why: later
  set_at: '2026-11-30T12:00:00Z'
  set_by: Ada Agent <ada@example.com>
# mine: ask Bo before changing the next action
# The first thing the next session should do: git continuity next TEXT
next_action: "fix: the \\"parser\\" - it's ünïcode ✓"
# What stops progress: git continuity blocker add TEXT, then blocker done ID
blockers:
  - id: b-k7m2qx
    text: '- leading dash: see #12'
    added_at: '2026-11-30T10:00:00.125Z'
    added_by: Ada Agent <ada@example.com>
  # between: the review is booked for Monday
  - id: b-yyyyyy
    text: waiting on review
    added_at: '2026-11-30T11:00:00Z'
    added_by: Ada Agent <ada@example.com>
  - id: b-p3rt9w
    text: "two lines:\\nthe second says yes"
    added_at: '2026-11-30T10:05:00Z'
    added_by: Bo <bo@example.com>
    thread: t-abcdef

# end of the packet: keep this last
"""


def test_a_persons_comments_stay_where_they_were() -> None:
    """A comment before next_action, one between two blockers, one at the end of the file
    (which stays after the blocker added, as the round trip keeps it)."""
    text = PERSON
    for edit in (
        Edit("blockers", B2, append=True),
        Edit("next_action", NEXT),
        Edit("objective", OTHER_OBJECTIVE),
    ):
        spliced = edit.on_text(text)
        assert spliced == round_trip(text, edit), edit
        assert spliced is not None
        text = spliced
    assert text == PERSON_AFTER
    assert comment_lines(text) == comment_lines(PERSON)


def test_a_comment_after_the_last_blocker_stays_after_the_one_added() -> None:
    text = """\
objective:
next_action: go
blockers:
  - id: b-k7m2qx
    text: one
    added_at: '2026-11-30T10:00:00Z'
    added_by: Ada
    # about b-k7m2qx, at the end of the list
# at the end
# of the file
"""
    edit = Edit("blockers", B2, append=True)
    assert (
        edit.on_text(text)
        == round_trip(text, edit)
        == (
            "objective:\n"
            "next_action: go\n"
            "blockers:\n"
            "  - id: b-k7m2qx\n"
            "    text: one\n"
            "    added_at: '2026-11-30T10:00:00Z'\n"
            "    added_by: Ada\n"
            "  - id: b-p3rt9w\n"
            '    text: "two lines:\\nthe second says yes"\n'
            "    added_at: '2026-11-30T10:05:00Z'\n"
            "    added_by: Bo <bo@example.com>\n"
            "    thread: t-abcdef\n"
            "    # about b-k7m2qx, at the end of the list\n"
            "# at the end\n"
            "# of the file\n"
        )
    )


def test_blank_lines_between_blockers_stay() -> None:
    """A blank line between two blockers, an item after it: the splice is proven, and is
    what the round trip writes."""
    text = """\
objective:
next_action: go
blockers:
  - id: b-k7m2qx
    text: one
    added_at: '2026-11-30T10:00:00Z'
    added_by: Ada

  - id: b-yyyyyy
    text: two
    added_at: '2026-11-30T11:00:00Z'
    added_by: Ada
"""
    edit = Edit("blockers", B2, append=True)
    spliced = edit.on_text(text)
    expected = text + (
        "  - id: b-p3rt9w\n"
        '    text: "two lines:\\nthe second says yes"\n'
        "    added_at: '2026-11-30T10:05:00Z'\n"
        "    added_by: Bo <bo@example.com>\n"
        "    thread: t-abcdef\n"
    )
    assert round_trip(text, edit) == expected
    if spliced is not None:
        assert values(spliced) == changed(text, edit)
        assert spliced == expected


# -- 3. where the splice must refuse: the round trip is used --------------------------------

REFUSED = {
    "a comment on the line of the value replaced": (
        "objective:\nnext_action: old  # ask Bo\nblockers: []\n",
        Edit("next_action", "new"),
        "objective:\nnext_action: new  # ask Bo\nblockers: []\n",  # ruamel keeps the comment's column
    ),
    "an indented comment inside the objective replaced": (
        "objective:\n  text: old\n  # hm\n  why: w\n  set_at: '2026-11-30T10:00:00Z'\n  set_by: Ada\n"
        "next_action:\nblockers: []\n",
        Edit("objective", OTHER_OBJECTIVE),
        "objective:\n  text: Ship v3\n  why: later\n  set_at: '2026-11-30T12:00:00Z'\n"
        "  set_by: Ada Agent <ada@example.com>\nnext_action:\nblockers: []\n",
    ),
    "a flow list that is not empty": (
        "objective:\nnext_action:\n"
        "blockers: [{id: b-k7m2qx, text: one, added_at: '2026-11-30T10:00:00Z', added_by: Ada}]\n",
        Edit("blockers", YES, append=True),
        "objective:\nnext_action:\n"
        "blockers: [{id: b-k7m2qx, text: one, added_at: '2026-11-30T10:00:00Z', added_by: Ada}, "
        "{id: b-yyyyyy, text: yes, added_at: '2026-11-30T11:00:00Z', added_by: Ada Agent <ada@example.com>}]\n",
    ),
    "an empty flow list with a comment": (
        "objective:\nnext_action:\nblockers: []  # none yet\n",
        Edit("blockers", YES, append=True),
        "objective:\nnext_action:\nblockers:     # none yet\n  - id: b-yyyyyy\n    text: yes\n"
        "    added_at: '2026-11-30T11:00:00Z'\n    added_by: Ada Agent <ada@example.com>\n",
    ),
    "Windows line ends": (
        "objective:\r\nnext_action: old\r\nblockers: []\r\n",
        Edit("next_action", "new"),
        "objective:\nnext_action: new\nblockers: []\n",
    ),
    "Windows line ends, appending": (
        "objective:\r\nnext_action: old\r\nblockers: []\r\n",
        Edit("blockers", B1, append=True),
        "objective:\nnext_action: old\nblockers:\n  - id: b-k7m2qx\n    text: '- leading dash: see #12'\n"
        "    added_at: '2026-11-30T10:00:00.125Z'\n    added_by: Ada Agent <ada@example.com>\n",
    ),
    "the key missing": (
        "objective:\nblockers: []\n",
        Edit("next_action", "new"),
        "objective:\nblockers: []\nnext_action: new\n",
    ),
    "the list's key missing": (
        "objective:\nnext_action: old\n",
        Edit("blockers", YES, append=True),
        "objective:\nnext_action: old\nblockers:\n  - id: b-yyyyyy\n    text: yes\n"
        "    added_at: '2026-11-30T11:00:00Z'\n    added_by: Ada Agent <ada@example.com>\n",
    ),
    "no newline at the end": (
        "objective:\nnext_action: old\nblockers: []",
        Edit("next_action", "new"),
        "objective:\nnext_action: new\nblockers: []\n",
    ),
    "a comment at column 0 between two blockers": (
        "objective:\nnext_action:\nblockers:\n  - id: b-k7m2qx\n    text: one\n    added_at: '2026-11-30T10:00:00Z'\n"
        "    added_by: Ada\n# between\n  - id: b-p3rt9w\n    text: two\n    added_at: '2026-11-30T10:00:00Z'\n"
        "    added_by: Ada\n",
        Edit("blockers", YES, append=True),
        "objective:\nnext_action:\nblockers:\n  - id: b-k7m2qx\n    text: one\n    added_at: '2026-11-30T10:00:00Z'\n"
        "    added_by: Ada\n# between\n  - id: b-p3rt9w\n    text: two\n    added_at: '2026-11-30T10:00:00Z'\n"
        "    added_by: Ada\n  - id: b-yyyyyy\n    text: yes\n    added_at: '2026-11-30T11:00:00Z'\n"
        "    added_by: Ada Agent <ada@example.com>\n",
    ),
    "a list written at column 0": (
        "objective:\nnext_action:\nblockers:\n- id: b-k7m2qx\n  text: one\n  added_at: '2026-11-30T10:00:00Z'\n"
        "  added_by: Ada\n",
        Edit("blockers", YES, append=True),
        "objective:\nnext_action:\nblockers:\n  - id: b-k7m2qx\n    text: one\n    added_at: '2026-11-30T10:00:00Z'\n"
        "    added_by: Ada\n  - id: b-yyyyyy\n    text: yes\n    added_at: '2026-11-30T11:00:00Z'\n"
        "    added_by: Ada Agent <ada@example.com>\n",
    ),
    "a value that libyaml reads as a boolean": (
        "objective:\nnext_action: old\nblockers: []\n",
        Edit("next_action", "yes"),
        "objective:\nnext_action: yes\nblockers: []\n",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_the_splice_refuses_what_it_cannot_prove(case: str) -> None:
    text, edit, expected = REFUSED[case]
    assert edit.on_text(text) is None
    assert round_trip(text, edit) == expected
    assert values(expected) == changed(text, edit)


def test_a_comment_at_column_0_inside_the_objective_replaced_is_not_spliced() -> None:
    """The lines of ``objective`` end at the first line not indented: a comment a person
    wrote at column 0 inside the mapping ends them early. The keys after that comment are
    left in the file after the new objective; libyaml lets the last of two equal keys win,
    so where they hold the new values (the same ``set_by``: the same person sets the
    objective again) the proof passes, and the text has ``set_by`` twice, which ruamel.yaml
    refuses: the packet would be malformed. The splice must refuse (the round trip drops the
    comment, as it does any comment inside the value replaced)."""
    text = """\
objective:
  text: Ship v2
  why: users wait
  set_at: '2026-11-30T10:10:00Z'
# who set it
  set_by: Ada Agent <ada@example.com>
next_action:
blockers: []
"""
    edit = Edit("objective", OTHER_OBJECTIVE)
    assert round_trip(text, edit) == (
        "objective:\n  text: Ship v3\n  why: later\n  set_at: '2026-11-30T12:00:00Z'\n"
        "  set_by: Ada Agent <ada@example.com>\nnext_action:\nblockers: []\n"
    )
    assert edit.on_text(text) is None


# Texts a person may have shaped, and edits the commands make: whatever the splice returns
# reads (with ruamel.yaml, as every reader does) exactly as the change made, and keeps every
# comment line in order.
SHAPED = [
    PERSON,
    packetfile.TEMPLATE,
    "---\nobjective:\nnext_action: go\nblockers: []\n...\n",
    "blockers:\n  - id: b-k7m2qx\n    text: one\n    added_at: '2026-11-30T10:00:00Z'\n    added_by: Ada\n\n"
    "  # trailing\n\nobjective:\n# under\nnext_action: first\n  second\n",
    "objective:\n  text: old\n  why: w\n  set_at: '2026-11-30T10:00:00Z'\n  set_by: Ada\n# after objective\n"
    "next_action: 'a # b'\nblockers:\n",
    "objective:\nnext_action: go\nblockers:\n  - id: b-k7m2qx\n    added_at: '2026-11-30T10:00:00Z'\n"
    "    added_by: Ada\n    text: |+\n      one\n\n# end\n",
    "objective:\n\n\nnext_action: go\n\n\nblockers: []\n\n\n",
]
EDITS = [
    Edit("next_action", NEXT),
    Edit("next_action", None),
    Edit("objective", OBJECTIVE),
    Edit("blockers", B2, append=True),
]


@pytest.mark.parametrize("edit", EDITS, ids=lambda e: f"{e.key}={str(e.value)[:12]}")
@pytest.mark.parametrize("text", SHAPED, ids=range(len(SHAPED)))
def test_what_is_spliced_reads_as_the_change_and_keeps_every_comment(text: str, edit: Edit) -> None:
    spliced = edit.on_text(text)
    if spliced is None:
        return
    assert values(spliced) == changed(text, edit)
    assert comment_lines(spliced) == comment_lines(text)


def test_a_shaped_packet_is_spliced_where_the_proof_holds() -> None:
    """Not every refusal: a document marker, blank lines and a multi-line plain value are
    no reason to refuse, and the splice keeps them where the round trip does not."""
    text = "---\nobjective:\n\nnext_action: first\n  second\n\nblockers: []\n...\n"
    assert Edit("next_action", "x").on_text(text) == "---\nobjective:\n\nnext_action: x\n\nblockers: []\n...\n"
    assert round_trip(text, Edit("next_action", "x")) == "objective:\n\nnext_action: x\n\nblockers: []\n"


# -- 5. the libyaml check is what guards the splice -----------------------------------------


def set_to(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(found: dict[str, Any]) -> None:
        found[key] = value

    return change


def test_replaced_keeps_only_what_the_change_proves() -> None:
    text = "objective:\nnext_action: old\nblockers: []\n"
    assert packetedit.replaced(text, "next_action", lambda _: "next_action: new\n", set_to("next_action", "new")) == (
        "objective:\nnext_action: new\nblockers: []\n"
    )
    assert (
        packetedit.replaced(text, "next_action", lambda _: "next_action: new\n", set_to("next_action", "other")) is None
    )
    assert packetedit.replaced(text, "next_action", lambda _: "next_action: new\n", set_to("objective", "new")) is None
    # Lines that break the document: libyaml cannot read them, nothing is proven.
    assert (
        packetedit.replaced(text, "next_action", lambda _: "next_action: [new\n", set_to("next_action", "[new")) is None
    )
    # Lines that hold more than the change (another key's value too).
    assert (
        packetedit.replaced(text, "next_action", lambda _: "next_action: new\nother: 1\n", set_to("next_action", "new"))
        is None
    )


def test_replaced_refuses_to_drop_a_comment_even_where_the_change_is_proven() -> None:
    text = "objective:\nnext_action: old  # note\nblockers: []\n"
    assert (
        packetedit.replaced(text, "next_action", lambda _: "next_action: new\n", set_to("next_action", "new")) is None
    )


def test_appended_keeps_only_what_the_change_proves() -> None:
    text = "objective:\nnext_action:\nblockers: []\n# end\n"
    item = "  - id: b-1\n    text: one\n"

    def append(value: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
        def change(found: dict[str, Any]) -> None:
            found["blockers"].append(value)

        return change

    assert packetedit.appended(text, "blockers", item, append({"id": "b-1", "text": "one"})) == (
        "objective:\nnext_action:\nblockers:\n  - id: b-1\n    text: one\n# end\n"
    )
    assert packetedit.appended(text, "blockers", item, append({"id": "b-1", "text": "two"})) is None
    assert packetedit.appended(text, "blockers", item, append({"id": "b-1"})) is None
    assert packetedit.appended(text, "blockers", item, set_to("blockers", [])) is None
    # A change that cannot be made on the values (no such key): not proven.
    assert packetedit.appended(text, "blockers", item, lambda found: found["missing"].append(1)) is None


def test_the_proof_is_libyamls_reading() -> None:
    """The lines are what libyaml reads, not what they look like: ``yes`` is not the string."""
    text = "objective:\nnext_action: old\nblockers: []\n"
    assert (
        packetedit.replaced(text, "next_action", lambda _: "next_action: yes\n", set_to("next_action", "yes")) is None
    )
    assert packetedit.replaced(text, "next_action", lambda _: "next_action: yes\n", set_to("next_action", True)) == (
        "objective:\nnext_action: yes\nblockers: []\n"
    )
    assert yaml.load("next_action: yes\n", Loader=yaml.CSafeLoader) == {"next_action": True}


# -- 4. through the command line, in a real repository -------------------------------------

TIME = re.compile(r"'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z'")


def raw_packet(repo: Path) -> str:
    """The packet on the state ref, byte for byte."""
    done = subprocess.run(
        ["git", "show", f"refs/continuity/main:{packetfile.PATH}"], cwd=repo, capture_output=True, check=True
    )
    return done.stdout.decode()


def stored(repo: Path) -> str:
    """The packet on the state ref, its times as 'TIME'."""
    return TIME.sub("'TIME'", raw_packet(repo))


def use_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: str) -> None:
    """An editor that writes ``content`` over the packet it is given."""
    source = tmp_path / "edited.yaml"
    source.write_bytes(content.encode())
    script = tmp_path / "editor.sh"
    script.write_text(f"#!/bin/sh\nset -e\ncp '{source}' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("GIT_EDITOR", str(script))


HEADER = """\
# git-continuity packet: the person-edited part of this stream's state.
# Edit it with `git continuity edit`; the commands change it too. Comments are kept.

# What this line of work is for: git continuity objective set TEXT --why TEXT
"""


def test_the_commands_write_the_packet_exactly(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "next", NEXT)
    first = made_id(ok(repo, "blocker", "add", "- leading dash: see #12"), "b")
    second = made_id(ok(repo, "blocker", "add", "two lines:\nthe second says yes"), "b")
    ok(repo, "objective", "set", "Ship v2: “now”", "--why", "users: 'locked out'")
    assert stored(repo) == HEADER + (
        "objective:\n"
        "  text: 'Ship v2: “now”'\n"
        "  why: \"users: 'locked out'\"\n"
        "  set_at: 'TIME'\n"
        "  set_by: Ada Agent <ada@example.com>\n"
        "# The first thing the next session should do: git continuity next TEXT\n"
        'next_action: "fix: the \\"parser\\" - it\'s ünïcode ✓"\n'
        "# What stops progress: git continuity blocker add TEXT, then blocker done ID\n"
        "blockers:\n"
        f"  - id: {first}\n"
        "    text: '- leading dash: see #12'\n"
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
        f"  - id: {second}\n"
        '    text: "two lines:\\nthe second says yes"\n'
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
    )
    ok(repo, "next", "--clear")
    assert stored(repo) == HEADER + (
        "objective:\n"
        "  text: 'Ship v2: “now”'\n"
        "  why: \"users: 'locked out'\"\n"
        "  set_at: 'TIME'\n"
        "  set_by: Ada Agent <ada@example.com>\n"
        "# The first thing the next session should do: git continuity next TEXT\n"
        "next_action:\n"
        "# What stops progress: git continuity blocker add TEXT, then blocker done ID\n"
        "blockers:\n"
        f"  - id: {first}\n"
        "    text: '- leading dash: see #12'\n"
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
        f"  - id: {second}\n"
        '    text: "two lines:\\nthe second says yes"\n'
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
    )


def test_comments_written_with_edit_survive_a_later_blocker_add(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(repo, "init")
    ok(repo, "next", "push the fix")
    first = made_id(ok(repo, "blocker", "add", "waiting on review"), "b")
    second = made_id(ok(repo, "blocker", "add", "waiting on CI"), "b")
    raw = raw_packet(repo)
    lines = raw.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line == f"  - id: {second}\n")
    lines.insert(at, "  # between: the review is booked for Monday\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("# The first thing"))
    lines.insert(at, "# mine: ask Bo before changing the next action\n")
    use_editor(monkeypatch, tmp_path, "".join(lines) + "\n# end of the packet: keep this last\n")
    assert ok(repo, "edit") == "Packet updated: comments or layout only, no value changed.\n"
    assert raw_packet(repo) != raw

    third = made_id(ok(repo, "blocker", "add", "waiting on Bo: yes"), "b")
    assert stored(repo) == HEADER + (
        "objective:\n"
        "# mine: ask Bo before changing the next action\n"
        "# The first thing the next session should do: git continuity next TEXT\n"
        "next_action: push the fix\n"
        "# What stops progress: git continuity blocker add TEXT, then blocker done ID\n"
        "blockers:\n"
        f"  - id: {first}\n"
        "    text: waiting on review\n"
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
        "  # between: the review is booked for Monday\n"
        f"  - id: {second}\n"
        "    text: waiting on CI\n"
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
        f"  - id: {third}\n"
        "    text: 'waiting on Bo: yes'\n"
        "    added_at: 'TIME'\n"
        "    added_by: Ada Agent <ada@example.com>\n"
        "\n"
        "# end of the packet: keep this last\n"
    )


def test_a_comment_on_the_next_action_line_is_kept_by_the_round_trip(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The splice refuses (the comment is in the line replaced): the command still keeps it."""
    ok(repo, "init")
    ok(repo, "next", "push the fix")
    raw = raw_packet(repo)
    use_editor(
        monkeypatch, tmp_path, raw.replace("next_action: push the fix\n", "next_action: push the fix  # ask Bo\n")
    )
    assert ok(repo, "edit") == "Packet updated: comments or layout only, no value changed.\n"
    ok(repo, "next", "ship it")
    assert stored(repo) == raw.replace("next_action: push the fix\n", "next_action: ship it       # ask Bo\n")


def test_objective_set_after_a_comment_at_column_0_inside_the_objective(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_process: None
) -> None:
    """The bug of test_a_comment_at_column_0_inside_the_objective_replaced_is_not_spliced as
    a person meets it (without GIT_CONTINUITY_CHECK_JSON, which the tests set and which
    refuses the write): the same person sets the objective again, and the packet written
    must still be one every reader can read."""
    monkeypatch.delenv("GIT_CONTINUITY_CHECK_JSON")
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship v2", "--why", "users wait")
    raw = raw_packet(repo)
    use_editor(monkeypatch, tmp_path, raw.replace("  set_by:", "# who set it\n  set_by:"))
    assert ok(repo, "edit") == "Packet updated: comments or layout only, no value changed.\n"
    ok(repo, "objective", "set", "Ship v3", "--why", "later")
    assert stored(repo) == HEADER + (
        "objective:\n"
        "  text: Ship v3\n"
        "  why: later\n"
        "  set_at: 'TIME'\n"
        "  set_by: Ada Agent <ada@example.com>\n"
        "# The first thing the next session should do: git continuity next TEXT\n"
        "next_action:\n"
        "# What stops progress: git continuity blocker add TEXT, then blocker done ID\n"
        "blockers: []\n"
    )


def test_lines_that_name_a_key_twice_are_not_spliced() -> None:
    # libyaml alone keeps the last of two equal keys, where ruamel refuses the file: the proof
    # refuses them itself, even where the values read alike.
    text = "objective:\nnext_action: old\nblockers: []\n"

    def change(data: dict[str, Any]) -> None:
        data["next_action"] = "new"

    assert packetedit.replaced(text, "next_action", lambda _: "next_action: new\n", change) == (
        "objective:\nnext_action: new\nblockers: []\n"
    )
    assert packetedit.replaced(text, "next_action", lambda _: "next_action: new\nnext_action: new\n", change) is None


def test_a_small_packet_is_not_spliced_where_loading_libyaml_would_cost_more() -> None:
    """In a process of its own, loading libyaml costs what ruamel's round trip of a small
    packet does: such a packet takes the round trip there; a large one is spliced."""
    code = (
        "import sys; from git_continuity.store import packetfile as p; "
        "big = p.TEMPLATE.replace('blockers: []', 'blockers:\\n' + ''.join("
        "f'  - id: b-{i:06d}\\n    text: waiting on review {i}\\n' for i in range(40))); "
        "print(p.Edit('next_action', 'x').on_text(p.TEMPLATE) is None, 'yaml' in sys.modules, "
        "p.Edit('next_action', 'x').on_text(big) is None, 'yaml' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "True False False True\n"


def test_a_quoted_value_that_goes_on_at_column_0_is_replaced_whole_or_not_at_all() -> None:
    """Where a value ends, libyaml's marks say, not the indentation: a quoted next action
    whose second line starts at column 0 with '#' is part of the value, not a comment after
    it (the splice left it behind as one)."""
    hashed = 'objective:\nnext_action: "rebase, then close\n#1234 and tell Ana"\n# after it\nblockers: []\n'
    edit = Edit("next_action", "push")
    assert edit.on_text(hashed) is None
    assert round_trip(hashed, edit) == 'objective:\nnext_action: "push"\n# after it\nblockers: []\n'
    plain = 'objective:\nnext_action: "rebase, then close\nand tell Ana"\n# after it\nblockers: []\n'
    assert (
        edit.on_text(plain) == round_trip(plain, edit) == 'objective:\nnext_action: "push"\n# after it\nblockers: []\n'
    )


@pytest.mark.parametrize(
    ("written", "rewritten"),
    [
        ('next_action: "old"\n', 'next_action: "push it"\n'),
        ("next_action: 'old'\n", "next_action: 'push it'\n"),
        ("next_action: |\n  old\n  lines\n", "next_action: |-\n  push it\n"),
        ("next_action: >\n  old\n", "next_action: >-\n  push it\n"),
        ("next_action: old\n", "next_action: push it\n"),
    ],
)
def test_a_replaced_text_is_written_as_the_one_it_replaces(written: str, rewritten: str) -> None:
    """ruamel's round trip keeps a replaced text's style (quoted, a block); so does the splice,
    so that the helper (which splices) and a process of its own write the same packet."""
    text = f"objective:\n{written}# after it\nblockers: []\n"
    edit = Edit("next_action", "push it")
    assert edit.on_text(text) == round_trip(text, edit) == f"objective:\n{rewritten}# after it\nblockers: []\n"
