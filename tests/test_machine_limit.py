"""The stop-loss knows the machine is the limit: failures that say the machine ran out are one
fingerprint, the second such attempt on a thread stops it with that note, and the handoff
records the machine so a brief elsewhere says whether that one is larger (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import approve, cont

from git_continuity.clone import machine
from git_continuity.store import attempts

Run = Any


@pytest.mark.parametrize(
    ("observed", "what"),
    [
        ("exit -9 in 212.4s in /w: the command was killed by signal 9", "memory"),
        ("exit 137 in 3.0s in /w; output:\ncc1plus", "memory"),
        ("exit 2 in 80.1s; output:\nmake: *** [all] Killed", "memory"),
        ("exit 1; output:\ng++: fatal error: Killed signal terminated program cc1plus", "memory"),
        ("exit 1; output:\nfatal: Cannot allocate memory", "memory"),
        ("exit 1; output:\n  State: Terminated  Reason: OOMKilled", "memory"),
        ("exit 1; output:\nwrite error: No space left on device", "disk"),
        ("timed out after 600s in /w; output:\n[ 41%] Building CXX", "time"),
        ("exit 1 in 0.2s; output:\nFAILED tests/test_x.py::test_y - assert 1 == 2", None),
    ],
)
def test_what_says_the_machine_ran_out(observed: str, what: str | None) -> None:
    assert machine.exhaustion(observed) == what


def test_two_runs_out_of_memory_are_one_fingerprint() -> None:
    first = attempts.fingerprint("cmd:make", "contradicted", "exit 137 in 212s; output:\n[ 41%] Building foo.o\nKilled")
    again = attempts.fingerprint("cmd:make", "contradicted", "exit -9 in 95s; output:\n[ 12%] Building bar.o")
    other = attempts.fingerprint("cmd:make", "contradicted", "exit 2 in 95s; output:\nfoo.c:3: error: x undeclared")
    assert first == again != other


def test_the_second_attempt_that_runs_the_machine_out_stops_the_thread(repo: Path) -> None:
    command = "echo '[ 41%] Building CXX object'; echo Killed; exit 137"
    assert cont(repo, "init").code == 0
    assert cont(repo, "objective", "set", "Build it", "--why", "release").code == 0
    tid = cont(repo, "thread", "add", "Build the engine", "--check", f"cmd:{command}").out.split()[1]
    approve(repo, command)
    first = cont(repo, "verify")
    assert first.code == 1 and "Stop-loss" not in first.out  # once is not yet the machine's fault
    again = cont(repo, "verify")
    assert again.code == 1
    assert (
        f'Stop-loss: {tid} "Build the engine" is now blocked: the machine is the limit: it ran out of memory'
        " again; change the shape of the work (less at once: fewer jobs, smaller batches, less data) or move"
        " it to a bigger machine instead of another retry.\n"
        f"  Stop retrying it as it is; reopen it with the new shape: git continuity thread set {tid} open\n"
    ) in again.out
    shown = json.loads(cont(repo, "thread", "show", tid, "--json").out)["thread"]
    assert shown["status"] == "blocked"
    assert shown["blocked"]["spent"] == ["resource exhaustion 2 of 2"]
    assert shown["blocked"]["note"].startswith("the machine is the limit: it ran out of memory again")
    progress = json.loads(cont(repo, "progress", tid, "--json").out)["threads"][0]
    prints = [c["fingerprint"] for a in progress["attempts"] for c in a["failing"]]
    assert len(prints) == 2 and prints[0] == prints[1]  # one failure, twice
    assert "stop-loss" in cont(repo, "status").out and "the machine is the limit" in cont(repo, "status").out


def test_the_handoff_records_the_machine_and_a_brief_elsewhere_compares(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cont(repo, "init").code == 0
    assert cont(repo, "objective", "set", "Build it", "--why", "release").code == 0
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "small-laptop")
    assert "Machine: " not in cont(repo, "orient").out  # nothing to compare with yet
    command = "echo 'fatal: Cannot allocate memory'; exit 1"
    assert cont(repo, "thread", "add", "Build the engine", "--check", f"cmd:{command}").code == 0
    approve(repo, command)
    assert [cont(repo, "verify").code for _ in range(2)] == [1, 1]  # the machine is the limit: blocked
    handed = json.loads(cont(repo, "handoff", "--json").out)["handoff"]
    here = machine.here(repo)
    assert set(handed["machine"]) == {"memory", "disk_free", "cpus"}
    assert (handed["machine"]["memory"], handed["machine"]["cpus"]) == (here["memory"], here["cpus"])
    monkeypatch.setenv("GIT_CONTINUITY_HOST", "big-server")
    brief = cont(repo, "orient").out
    (said,) = [line for line in brief.splitlines() if line.startswith("Machine: ")]
    # free disk moves between two readings: the line is checked around it
    assert said.startswith(
        f"Machine: the last handoff was on small-laptop ({machine.text(handed['machine'])}); this one, big-server,"
        f" has {machine.size(here['memory'])} memory, {here['cpus']} CPU"
    )
    assert said.endswith(" free disk: not smaller.")
    assert machine.larger({"memory": 16 << 30, "cpus": 8}, {"memory": 4 << 30, "cpus": 2}) == "larger"
    assert machine.larger({"memory": 4 << 30, "cpus": 8}, {"memory": 16 << 30, "cpus": 2}) == "not larger"
