"""Which session is current (session.resolve): one agent session keeps one session id across
streams and commands; the stream a session started on keeps its baseline and its end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from test_sessions import made, ok

from git_continuity.clone import session


def hook(repo: Path, action: str, conversation: str) -> dict[str, Any]:
    """An agent's hook for one conversation, as Claude Code runs it (no GIT_CONTINUITY_SESSION)."""
    env = {k: v for k, v in os.environ.items() if k != "GIT_CONTINUITY_SESSION"}
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", action],
        cwd=repo,
        input=json.dumps({"session_id": conversation, "cwd": str(repo)}),
        capture_output=True,
        text=True,
        env={**env, "GIT_CONTINUITY_HOST": "laptop"},
    )
    assert (done.returncode, done.stderr) == (0, ""), done
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_one_agent_session_keeps_one_session_id_across_streams_and_commands(repo: Path) -> None:
    for stream in ("main", "b"):
        ok(repo, "--stream", stream, "init")
        ok(repo, "--stream", stream, "objective", "set", f"Ship {stream}", "--why", "users wait")
    hook(repo, "session-start", "conversation-1")
    started = json.loads((repo / ".git" / "continuity" / "session.json").read_text())
    session = started["id"]
    assert (started["stream"], started["agent_session"]) == ("main", "conversation-1")

    # The session started for main; the agent works on stream b too, in the same session.
    entry = made(ok(repo, "--stream", "b", "journal", "add", "worked on b").out, "j")
    journal = json.loads(ok(repo, "--stream", "b", "journal", "--json").out)["entries"]
    assert [(e["id"], e.get("session")) for e in journal] == [(entry, session)]
    brief = json.loads(ok(repo, "--stream", "b", "orient", "--json").out)
    assert (brief["session"]["id"], brief["session"]["continued"], brief["warnings"]) == (session, True, [])
    handoff = json.loads(ok(repo, "--stream", "b", "handoff", "--json").out)["handoff"]
    assert (handoff["session"], handoff["agent_session"]) == (session, "conversation-1")
    assert handoff["baseline"] == {"kind": "none"}  # its start was on main: nothing on b to diff with

    # The rule (clone/session.py): a handoff on another stream than the session's own leaves it open;
    # the handoff on its own stream, at the agent's session end, ends it.
    assert json.loads((repo / ".git" / "continuity" / "session.json").read_text())["ended_at"] is None
    said = hook(repo, "session-end", "conversation-1")["systemMessage"]
    assert said.endswith(f" recorded at the end of the session (session {session})"), said
    ended = json.loads((repo / ".git" / "continuity" / "session.json").read_text())
    assert (ended["id"], ended["handoff"] is not None) == (session, True)
    assert ended["handoff"] in said


def test_which_session_is_current_is_one_rule(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    git_dir = repo / ".git"
    monkeypatch.delenv("GIT_CONTINUITY_SESSION", raising=False)
    monkeypatch.delenv("GIT_CONTINUITY_AGENT", raising=False)
    assert session.resolve(git_dir) == session.Current(None, None, None, None)

    opened = session.Session("s-222222", "2026-11-30T10:00:00.000Z", "laptop", "a", "codex", "conversation-1")
    session.save(git_dir, opened)
    mine = session.Current("s-222222", "codex", opened, None, git_dir)
    # The stream written to does not enter into it; a command the agent runs names no conversation.
    assert session.resolve(git_dir) == mine
    assert session.resolve(git_dir, agent_session="conversation-1") == mine
    # Another conversation of the agent: the open session is not this one.
    assert session.resolve(git_dir, agent_session="conversation-2") == session.Current(None, None, None, opened)
    monkeypatch.setenv("GIT_CONTINUITY_AGENT", "claude-code")
    assert session.resolve(git_dir) == mine._replace(agent="claude-code")
    # The environment names a session: it is current, the open one only when it is that one.
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "nightly-42")
    assert session.resolve(git_dir) == session.Current("nightly-42", "claude-code", None, opened)
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", "s-222222")
    assert session.resolve(git_dir) == mine._replace(agent="claude-code")
    assert session.current(git_dir) == ("s-222222", "claude-code")

    # A command the agent runs in another work tree of the clone (git -C) names its conversation in
    # its environment: it is that conversation's session, wherever it started (#33).
    monkeypatch.delenv("GIT_CONTINUITY_SESSION")
    git(repo, "worktree", "add", "-q", "-b", "other", str(repo.parent / "other"))
    other = git_dir / "worktrees" / "other"
    stale = session.Session("s-333333", "2026-11-30T09:00:00.000Z", "laptop", "a", "codex", "conversation-0")
    session.save(other, stale)  # a session the other work tree still holds, of another conversation
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "conversation-1")
    assert session.resolve(other) == mine._replace(agent="claude-code")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "conversation-9")  # a conversation with no session here
    assert session.resolve(other) == session.Current(None, "claude-code", None, stale)
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    assert session.resolve(other) == session.Current("s-333333", "claude-code", stale, None, other)

    # An ended session is no one's.
    session.save(git_dir, opened._replace(ended_at="2026-11-30T11:00:00.000Z", handoff="h-222222"))
    assert session.resolve(git_dir) == session.Current(None, "claude-code", None, None)
