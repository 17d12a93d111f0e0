"""The moves an agent makes to get past "done", made by the real Claude Code binary (against a
loopback imitation of its model API) after ``git continuity agent install claude``: withdraw
the failing check and close; close by a commit and undo it; say "done" until the gate lets go.
Every assertion is on what the binary sent the model, or on the state the hooks left.

Marked ``agents``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import claude
from conftest import BIN, git, made_id, ok
from model_imitation import Imitation, Reply, Tool, Turns

pytestmark = pytest.mark.agents

ID = r"[2-9a-hjkmnp-z]{6}"
GC = str(BIN / "git-continuity")


def said_last(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    blocks = [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]
    return "\n".join(blocks)


def bash(command: str) -> Tool:
    return Tool("Bash", {"command": command, "description": "run it"})


def feedback(conversation: list[dict[str, Any]]) -> list[str]:
    """Each Stop hook feedback the model was sent, in order."""
    return [
        said_last(b).removeprefix("Stop hook feedback:\n") for b in conversation if "Stop hook feedback" in said_last(b)
    ]


def run(work: Path, tmp_path: Path, replies: list[Reply]) -> tuple[list[dict[str, Any]], str]:
    home = tmp_path / "agent-home"
    home.mkdir(exist_ok=True)
    with Imitation("anthropic", Turns(replies, wanted=lambda body: bool(body.get("tools")))) as model:
        ran = claude(work, home, model, "-p", "Release 1.0.")
    assert ran.code == 0, ran
    return [b for b in model.conversation() if b.get("tools")], ran.out


@pytest.fixture
def work(repo: Path) -> Path:
    ok(repo, "init")
    ok(repo, "objective", "set", "Release 1.0", "--why", "customers wait for it")
    ok(repo, "hooks", "install")
    ok(repo, "agent", "install", "claude")
    return repo


def test_claude_withdraws_the_failing_check_and_must_say_so_to_close(work: Path, tmp_path: Path) -> None:
    (work / "a.txt").write_text("a\n")
    git(work, "add", "a.txt")
    git(work, "commit", "-q", "-m", "a")
    tid = made_id(ok(work, "thread", "add", "Release", "--check", "file:a.txt", "--check", "tag:v1"), "t")
    checks = json.loads(ok(work, "thread", "show", tid, "--json"))["thread"]["checks"]
    tag = next(c["id"] for c in checks if c["handle"] == "tag:v1")
    conversation, out = run(
        work,
        tmp_path,
        [
            Reply("Dropping the tag check.", bash(f"{GC} claim retract {tag} --why x; {GC} thread close {tid}")),
            Reply("Done."),
            Reply("Closing it.", bash(f'{GC} thread close {tid} --accept-withdrawn "the release job tags it"')),
            Reply("Done."),
            Reply("Closed without the tag check: the release job tags it."),
        ],
    )
    assert out == "Closed without the tag check: the release job tags it.\n"
    withdrawn, accepted = feedback(conversation)
    assert f"({tag} tag:v1: x); it closes only with: git continuity thread close {tid} --accept-withdrawn" in withdrawn
    assert accepted == (
        f'git-continuity: {tid} "Release" closed with 1 withdrawn check: the release job tags it. Tell the user in '
        "your answer that this was closed without those checks and why, then stop."
    )
    thread = json.loads(ok(work, "thread", "show", tid, "--json"))["thread"]
    assert (thread["status"], thread["accepted_withdrawn"]["checks"]) == ("done", [tag])


def test_claude_closes_by_a_commit_then_undoes_it_and_the_gate_lets_go_loudly(work: Path, tmp_path: Path) -> None:
    tid = made_id(ok(work, "thread", "add", "Write the notes", "--check", "file:README"), "t")
    undo = f'git commit -q --allow-empty -m "Notes; closes {tid}" && git reset -q --hard HEAD~1'
    conversation, out = run(
        work,
        tmp_path,
        [Reply("Closing and tidying.", bash(undo)), Reply("Done."), Reply("Done."), Reply("Done."), Reply("Done.")],
    )
    assert out == "Done.\n"
    said = feedback(conversation)
    assert len(said) == 4  # three blocks, one that asks the model to tell the user, then the gate let go
    assert all(f'{tid} "Write the notes": it is done, but no longer holds: its closing commit' in s for s in said[:3])
    assert said[3].endswith(
        f'Begin your answer to the user with: "Not done: {tid} did not verify (git continuity check --closing shows'
        ' why)." Then stop.'
    )
    # The let-go is recorded, and the next brief leads with it.
    entries = json.loads(ok(work, "journal", "--json"))["entries"]
    (let_go,) = [e["text"] for e in entries if e["text"].startswith("Stop gate let go: session ")]
    assert f"ended with {tid} unverified, after 3 blocks in a row" in let_go
    brief = ok(work, "orient")
    assert f"## The last session stopped on unverified work\n- {let_go}\n" in brief
    assert "## Done, but no longer holds: reopen it or restore the work\n" in brief
