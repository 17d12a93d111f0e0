"""A malformed .continuity.yaml: reads go on with the built-in defaults and say which file and
line is wrong; the writes and gates that depend on the policy refuse as before (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cont, state_refs

TAIL = (
    "; read with the built-in defaults here, and what depends on the policy"
    " (thread close, check --closing, the commit gate) refuses until it is fixed"
)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "closing_keywords: [closes\nstalled: {attempts: 3}\n",
            "line 2: not valid YAML: expected ',' or ']', but got ':'",
        ),
        ("stalled: {attempts: many}\n", "line 1: stalled.attempts: 'many' is not of type 'integer'"),
        (
            # a duration past any date (it crashed every read, and the agents' hooks with them)
            "lifespans:\n  note: 99999999999999999999d\n",
            "line 2: lifespans.note: '99999999999999999999d' is not in the expected form (give a duration such"
            " as 12h, 7d or 30d, at most 99999 of a unit, or never)",
        ),
    ],
    ids=["yaml", "schema", "huge"],
)
def test_reads_go_on_with_defaults_and_name_the_line(repo: Path, text: str, said: str) -> None:
    assert cont(repo, "init").code == 0
    assert cont(repo, "thread", "add", "Ship it", "--check", "tag:v1").code == 0
    (repo / ".continuity.yaml").write_text(text)
    warning = f"{repo / '.continuity.yaml'} {said}{TAIL}"
    status = cont(repo, "status")
    assert (status.code, status.err) == (0, "")
    assert f"Warnings\n  {warning}\n" in status.out
    assert json.loads(cont(repo, "status", "--json").out)["warnings"][0] == warning
    brief = cont(repo, "orient")
    assert brief.code == 0 and f"Warning: {warning}\n" in brief.out
    # what depends on the policy refuses, naming it, and writes nothing
    before = state_refs(repo)
    for args in (("check", "--closing"), ("journal", "add", "x")):
        ran = cont(repo, *args)
        assert (ran.code, ran.out, ran.err) == (2, "", f"git-continuity: error: {repo / '.continuity.yaml'} {said}\n")
    assert state_refs(repo) == before


def test_thread_add_refuses_a_malformed_policy_before_writing(repo: Path) -> None:
    """thread add reads the policy to say whether a check already holds: a malformed file is
    refused first, naming file and line, and no thread is written (it was written, then refused)."""
    assert cont(repo, "init").code == 0
    (repo / ".continuity.yaml").write_text("stalled: {attempts: many}\n")
    before = state_refs(repo)
    ran = cont(repo, "thread", "add", "Ship it", "--check", "tag:v1")
    assert (ran.code, ran.out, ran.err) == (
        2,
        "",
        f"git-continuity: error: {repo / '.continuity.yaml'} line 1: stalled.attempts: 'many' is not of type"
        " 'integer'\n",
    )
    assert state_refs(repo) == before
