"""doctor --fix on a malformed packet.yaml (#35): the packet is put back on its last good
version by a new state commit, and the broken text is kept in the quarantine for a person;
it is not sent to ``edit``, which an agent without a terminal cannot run."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cont, git, write_state

PACKET = ".continuity/packet.yaml"
BROKEN = "objective: [unclosed\nnext_action: ship it\n"


def test_doctor_fix_puts_a_malformed_packet_back_on_its_last_good_version(repo: Path) -> None:
    assert cont(repo, "init").code == 0
    assert cont(repo, "next", "Write the release notes").code == 0
    good = git(repo, "show", f"refs/continuity/main:{PACKET}")
    bad_commit = write_state(repo, {PACKET: BROKEN}, "hand edit of the packet")
    assert cont(repo, "status").code == 2

    found = json.loads(cont(repo, "doctor", "--json").out)["findings"]
    packet = [f for f in found if f["problem"].startswith(PACKET)]
    good_commit = git(repo, "rev-parse", "--short=7", f"{bad_commit}~1")
    assert [(f["fix"], f["repair"]) for f in packet] == [
        (
            f"git continuity doctor --fix puts back its last good version (of {good_commit}), keeping the broken"
            " text in .continuity/quarantine/packet.yaml",
            "put back",
        )
    ]
    fixed = cont(repo, "doctor", "--fix")
    assert fixed.out.splitlines()[0] == (
        f"repaired  refs/continuity/main ({git(repo, 'rev-parse', '--short=7', 'refs/continuity/main')}):"
        f" {PACKET} put back on its version of {good_commit}; the broken text kept in"
        " .continuity/quarantine/packet.yaml"
    )
    assert git(repo, "show", f"refs/continuity/main:{PACKET}") == good
    assert git(repo, "show", "refs/continuity/main:.continuity/quarantine/packet.yaml") + "\n" == BROKEN
    assert git(repo, "rev-parse", "refs/continuity/main~1") == bad_commit  # on top: nothing rewritten
    status = json.loads(cont(repo, "status", "--json").out)
    assert status["next_action"] == "Write the release notes"
    shown = cont(repo, "quarantine", "show", "packet.yaml")
    assert (shown.code, shown.out) == (
        0,
        f".continuity/quarantine/packet.yaml (was {PACKET}):\n{BROKEN}",
    )
