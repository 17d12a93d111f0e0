"""The real Claude Code calls the MCP server's tools, registered by agent install --mcp, its
model imitated on loopback (model_imitation.py): what a tool answered reaches the model, and
what it wrote is on the state ref."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import binary, bounded, claude_env
from conftest import cont, git
from model_imitation import Imitation, Reply, Tool, Turns

pytestmark = pytest.mark.agents


def results(body: dict[str, Any]) -> list[str]:
    """The text of every tool result in one request's last message."""
    last = body["messages"][-1]["content"]
    found = [part["content"] for part in last if part.get("type") == "tool_result"]
    return [c if isinstance(c, str) else "".join(p["text"] for p in c if p.get("type") == "text") for c in found]


def test_claude_code_calls_orient_and_claim_add_through_the_mcp_server(repo: Path, tmp_path: Path) -> None:
    for args in (("init", "--local"), ("objective", "set", "ship the login fix", "--why", "users are locked out")):
        assert cont(repo, *args).code == 0
    assert cont(repo, "agent", "install", "claude", "--mcp").code == 0
    # Claude Code starts a project's .mcp.json servers once they are approved; this is that approval.
    (repo / ".claude" / "settings.local.json").write_text('{"enableAllProjectMcpServers": true}\n')
    head = git(repo, "rev-parse", "HEAD")
    home = tmp_path / "agent-home"
    home.mkdir()
    turns = Turns(
        [
            Reply("Orienting.", Tool("mcp__git-continuity__orient", {})),
            Reply(
                "Recording.", Tool("mcp__git-continuity__claim_add", {"text": "HEAD exists", "check": "commit:HEAD"})
            ),
            Reply("Recorded."),
        ],
        wanted=lambda body: bool(body.get("tools")),
    )
    with Imitation("anthropic", turns) as model:
        ran = bounded(
            [
                str(binary("claude")),
                "-p",
                "Orient, then record that HEAD exists.",
                "--allowedTools",
                "mcp__git-continuity",
            ],
            cwd=repo,
            # Wait for the MCP servers before the first request (else the tools come later, as
            # a WaitForMcpServers tool says), so the scripted first call finds orient.
            env={**claude_env(home, model), "MCP_CONNECTION_NONBLOCKING": "0"},
        )
    assert (ran.code, ran.out) == (0, "Recorded.\n"), ran
    first, oriented, recorded = [b for b in model.conversation() if b.get("tools")]
    names = [t["name"] for t in first["tools"]]
    assert "mcp__git-continuity__orient" in names and "mcp__git-continuity__claim_add" in names
    # Claude Code hands the model a tool's structured result rather than its text, when it has
    # one: orient's JSON document (orient.schema.json), not the brief's text, reaches the model.
    (brief,) = results(oriented)
    document = json.loads(brief)
    assert (document["stream"], document["state"]["ref"], document["objective"]["text"]) == (
        "main",
        "refs/continuity/main",
        "ship the login fix",
    )
    (said,) = results(recorded)
    (claim,) = json.loads(cont(repo, "status", "--json").out)["claims"]
    assert said.startswith(f"Recorded claim {claim['id']}: HEAD exists\n  handle  commit:{head[:12]}…")
    assert (claim["text"], claim["handle"], claim["state"]) == ("HEAD exists", f"commit:{head}", "verified")
