"""``git continuity edit`` loses nothing (issue 10): an emptied buffer aborts, bytes that are
not UTF-8 are named and can be dropped, a save says what changed, and removing the
objective is entered in the objective log."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, git
from test_bad_input import everything

Run = Callable[..., Ran]


@pytest.fixture
def filled(repo: Path, inproc: Run) -> Path:
    """A packet with an objective, a next action and one open blocker."""
    for args in (
        ("init",),
        ("objective", "set", "Ship the login fix", "--why", "users are locked out"),
        ("next", "push the fix"),
        ("blocker", "add", "waiting on review"),
    ):
        assert inproc(repo, *args).code == 0
    return repo


@pytest.fixture
def kept(repo: Path) -> Path:
    return (repo / ".git" / "continuity" / "edit" / "main.packet.yaml").resolve()


def use_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes, name: str = "editor.sh") -> None:
    """An editor that replaces the file it is given with ``content``."""
    source = tmp_path / f"{name}.content"
    source.write_bytes(content)
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\nset -e\ncp '{source}' \"$1\"\n")
    script.chmod(0o755)
    monkeypatch.setenv("GIT_EDITOR", str(script))


def stored(repo: Path) -> tuple[object, ...]:
    """The state and the repository, without git-continuity's local folder (edit keeps its file there)."""
    return everything(repo)[:3]


def packet(repo: Path) -> str:
    return git(repo, "show", "refs/continuity/main:.continuity/packet.yaml") + "\n"


@pytest.mark.parametrize("buffer", [b"", b"\n\n", b"# nothing here\n\n# at all\n"])
def test_an_emptied_buffer_aborts_and_writes_nothing(
    filled: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch, buffer: bytes
) -> None:
    before = stored(filled)
    use_editor(monkeypatch, tmp_path, buffer)
    ran = inproc(filled, "edit")
    assert (ran.code, ran.out) == (1, "")
    assert ran.err == (
        "git-continuity: error: the edited packet is empty (nothing but comments and blank lines): "
        "nothing was written.\n"
        "To clear a value, keep its key and leave it empty (objective:, next_action:, blockers: []).\n"
    )
    assert stored(filled) == before
    assert not kept.exists()  # nothing worth keeping: the next edit starts from the packet
    assert inproc(filled, "next").out == "push the fix\n"


def test_bytes_that_are_not_utf8_are_named_and_can_be_dropped(
    filled: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = stored(filled)
    use_editor(monkeypatch, tmp_path, b"objective:\nnext_action: caf\xe9\nblockers: []\n")
    refusal = (
        f"git-continuity: error: {kept} line 2: byte offset 27 is not UTF-8 (0xe9).\n"
        "Nothing was written. Fix it and run git continuity edit again, or drop it: git continuity edit --discard\n"
    )
    ran = inproc(filled, "edit")
    assert (ran.code, ran.out, ran.err) == (2, "", refusal)
    assert stored(filled) == before
    assert kept.read_bytes() == b"objective:\nnext_action: caf\xe9\nblockers: []\n"

    # The next edit resumes the kept file; an editor that leaves it as it is meets the same refusal.
    monkeypatch.setenv("GIT_EDITOR", "true")
    ran = inproc(filled, "edit")
    resuming = f"Resuming your earlier edit kept in {kept} (git continuity edit --discard drops it).\n"
    assert (ran.code, ran.out, ran.err) == (2, resuming, refusal)
    assert stored(filled) == before

    ran = inproc(filled, "edit", "--discard")
    assert (ran.code, ran.out, ran.err) == (0, f"Dropped the edit kept in {kept}.\n", "")
    assert not kept.exists()
    assert stored(filled) == before
    assert inproc(filled, "edit", "--discard").out == "No kept edit to drop.\n"
    assert inproc(filled, "edit").out == "No changes.\n"


def test_a_save_says_what_changed_and_a_removed_objective_is_logged(
    filled: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = packet(filled)
    blocker = json.loads(inproc(filled, "status", "--json").out)["blockers"][0]["id"]
    set_at = json.loads(inproc(filled, "objective", "log", "--json").out)["changes"][0]["at"]
    new = (
        re.sub(r"\nobjective:\n(  .*\n)+", "\nobjective:\n", old)  # its four keys gone
        .replace("next_action: push the fix", "next_action: tag the release")
        .replace("text: waiting on review", "text: waiting on CI")
    )
    use_editor(monkeypatch, tmp_path, new.encode())
    ran = inproc(filled, "edit")
    assert (ran.code, ran.err) == (0, "")
    assert ran.out == (
        "Packet updated:\n"
        '  next_action: "push the fix" → "tag the release"\n'
        f'  blockers.{blocker}.text: "waiting on review" → "waiting on CI"\n'
        '  objective.text: "Ship the login fix" → (none)\n'
        '  objective.why: "users are locked out" → (none)\n'
        f'  objective.set_at: "{set_at}" → (none)\n'
        '  objective.set_by: "Ada Agent <ada@example.com>" → (none)\n'
    )
    assert packet(filled) == new and not kept.exists()

    log = json.loads(inproc(filled, "objective", "log", "--json").out)
    assert log["current"] is None
    assert [(c["old"], c["new"], c["why"]) for c in log["changes"]] == [
        (None, "Ship the login fix", "users are locked out"),
        ("Ship the login fix", None, "removed by hand with git continuity edit"),
    ]
    text = inproc(filled, "objective", "log").out
    assert text.startswith(
        f"{log['changes'][1]['at'][:19].replace('T', ' ')} UTC  Ada Agent <ada@example.com>\n"
        "  now: (removed)\n  was: Ship the login fix\n  why: removed by hand with git continuity edit\n\n"
    )


def test_a_save_of_comments_only_says_so(
    filled: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new = "# reviewed on Monday\n" + packet(filled)
    use_editor(monkeypatch, tmp_path, new.encode())
    ran = inproc(filled, "edit")
    assert (ran.code, ran.out, ran.err) == (0, "Packet updated: comments or layout only, no value changed.\n", "")
    assert packet(filled) == new
