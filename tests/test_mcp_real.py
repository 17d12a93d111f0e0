"""The real Claude Code calls the MCP server's tools, registered by agent install --mcp, its
model imitated on loopback (model_imitation.py): what a tool answered reaches the model, and
what it wrote is on the state ref."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_harness import binary, bounded, claude_env, codex, gemini, gemini_env, setup_codex, trust_codex_hooks
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


def test_gemini_cli_calls_claim_add_through_the_mcp_server_agent_install_registered(repo: Path, tmp_path: Path) -> None:
    for args in (("init", "--local"), ("objective", "set", "ship the login fix", "--why", "users are locked out")):
        assert cont(repo, *args).code == 0
    done = cont(repo, "agent", "install", "gemini", "--mcp")
    assert done.code == 0, done.err
    head = git(repo, "rev-parse", "HEAD")
    call = Tool("mcp_git-continuity_claim_add", {"text": "HEAD exists", "check": "commit:HEAD"})
    with Imitation("gemini", Turns([Reply("", call), Reply("Recorded.")])) as model:
        ran = gemini(repo, gemini_env(tmp_path / "agent-home", model), "Record that HEAD exists.")
    assert (ran.code, ran.out) == (0, "Recorded.\n"), ran
    first, answered = model.conversation()
    names = [f["name"] for t in first["tools"] for f in t.get("functionDeclarations", [])]
    assert "mcp_git-continuity_orient" in names and "mcp_git-continuity_claim_add" in names
    (response,) = [p["functionResponse"] for p in answered["contents"][-1]["parts"] if "functionResponse" in p]
    (claim,) = json.loads(cont(repo, "status", "--json").out)["claims"]
    assert f"Recorded claim {claim['id']}: HEAD exists" in json.dumps(response)
    assert (claim["text"], claim["handle"], claim["state"]) == ("HEAD exists", f"commit:{head}", "verified")


def test_codex_gets_the_brief_from_session_start_while_the_mcp_server_is_late(repo: Path, tmp_path: Path) -> None:
    for args in (("init", "--local"), ("objective", "set", "ship the login fix", "--why", "users are locked out")):
        assert cont(repo, *args).code == 0
    done = cont(repo, "agent", "install", "codex", "--mcp")
    assert done.code == 0, done.err
    # The server takes its time to start (a cold disk, a slow import); Codex sends its first
    # request without waiting for it, so "orient first" cannot go through MCP on turn 1: the
    # SessionStart hook puts the brief there.
    config = repo / ".codex" / "config.toml"
    config.write_text(config.read_text().replace('"cd ', '"sleep 5; cd '))
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("openai", Turns([Reply("Oriented.")])) as model:
        env = setup_codex(repo, home, model)
        trust_codex_hooks(repo, env)
        ran = codex(repo, env, "What is the objective?")
    assert (ran.code, ran.out) == (0, "Oriented.\n"), ran
    (first,) = model.conversation()
    developer = [
        "\n".join(p["text"] for p in item["content"] if "text" in p)
        for item in first["input"]
        if item.get("type") == "message" and item.get("role") == "developer"
    ]
    (brief,) = [t for t in developer if t.startswith("# git-continuity brief: stream main\n")]
    assert "ship the login fix" in brief
