"""How much of a large brief each real agent passes on to its model at session start, and that
the brief the hook gives is fitted under it: cut by priority, whole, saying at its end what it
left out and which command shows it. A state of 200 claims, 50 threads and 100 journal
entries makes a brief of about 26,700 bytes.

Measured with the pinned binaries: Claude Code 2.1.197 passes on 10,000 characters of
additionalContext (9,950 passed, 10,035 did not) and replaces a longer one by a 2 KB preview and
the path of a file; Codex 0.171.0 passes on 2,500 of its tokens (bytes / 4 of the hook's JSON
output) and cuts a longer one in the middle.

Marked ``agents``."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from agent_harness import claude, claude_env, codex, setup_codex, trust_codex_hooks
from model_imitation import Imitation, Reply, Turns, texts

from git_continuity import repo as git
from git_continuity import store
from git_continuity.agents import table as agents
from git_continuity.model import Claim, JournalEntry, Thread, now, stamp

pytestmark = pytest.mark.agents

ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"


def code(i: int) -> str:
    out = ""
    for _ in range(6):
        out, i = ALPHABET[i % len(ALPHABET)] + out, i // len(ALPHABET)
    return out


def cont(work: Path, *args: str) -> str:
    done = subprocess.run(["git", "continuity", *args], cwd=work, capture_output=True, text=True)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def large(repo: Path) -> Path:
    """200 claims (a fifth contradicted, a fifth prose), 50 open threads, 100 journal entries."""
    cont(repo, "init")
    cont(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "first"], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    moment, files = now(), dict[str, bytes | None]()
    for t in range(50):
        thread = Thread(
            f"t-{code(t)}", f"Thread {t}: make release step {t} pass on CI", "open", stamp(moment), "Ada", "laptop"
        )
        files[store.thread_path(thread.id)] = store.entry_bytes(thread)
    for i in range(200):
        handle = f"tag:v9.{i}" if i % 5 == 0 else None if i % 5 == 4 else f"commit:{head}"
        text = f"claim {i}: build step {i} was checked on the release branch"
        claim = Claim(
            f"c-{code(i)}", text, stamp(moment), "Ada", "laptop", handle, thread=f"t-{code(i)}" if i < 50 else None
        )
        files[store.claim_path(claim.id)] = store.entry_bytes(claim)
    for i in range(100):
        at = moment - timedelta(minutes=100 - i)
        entry = JournalEntry(
            f"j-{code(i)}",
            f"entry {i}: tried release step {i} again; the signing key failed",
            stamp(at),
            "Ada",
            "desktop",
        )
        files[store.journal_path(entry, at)] = store.entry_bytes(entry)
    store.update(git.open_repo(repo), "main", lambda s: store.Change("a large state", files))
    assert len(cont(repo, "orient").encode()) > 25_000
    return repo


FOOTER = re.compile(
    r"\nLeft out to stay under (\d+) tokens \(1 token ≈ 3 bytes\): [^\n]+\. See: git continuity [^\n]+\.\n?$"
)


def fitted(brief: str, agent: str) -> None:
    """The whole brief, under the agent's size, ending with what it left out and where to see it."""
    assert brief.startswith("# git-continuity brief: stream main\n")
    found = FOOTER.search(brief)
    second = brief.split("\n")[1]
    # Where the model's shell does not find the tool (agents/shell.py), that line's room is taken off.
    note = (len(second.encode()) + 3) // 3 if second.startswith("In the shell you run commands in") else 0
    assert found and int(found.group(1)) == agents.TARGETS[agent].brief_tokens - note, brief[-600:]
    assert "git continuity status" in found.group(0) and "git continuity journal" in found.group(0)
    assert 0.85 * agents.TARGETS[agent].brief_tokens * 3 < len(brief.encode()) <= agents.TARGETS[agent].brief_tokens * 3
    assert "## Do not act on these" in brief  # the truth comes first, whole


def claude_context(model: Imitation) -> str:
    (first,) = [b for b in model.conversation() if b.get("tools")][:1]
    (said,) = [t for t in texts(first["messages"]) if "SessionStart hook additional context: " in t]
    # Claude Code 2.1.197 sends the hook's context and then, in the same text, its agent list.
    return said.split("SessionStart hook additional context: ", 1)[1].split("\n\n\nAvailable agent types", 1)[0]


@pytest.mark.parametrize("tokens", [None, "100000"], ids=["fitted", "whole"])
def test_claude_code_gets_the_fitted_brief_whole(large: Path, tmp_path: Path, tokens: str | None) -> None:
    cont(large, "agent", "install", "claude")
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", Turns([], rest=Reply("ok"))) as model:
        env = claude_env(home, model) | ({"GIT_CONTINUITY_BRIEF_TOKENS": tokens} if tokens else {})
        ran = claude(large, home, model, "-p", "Where are we?", env=env)
    assert (ran.code, ran.out) == (0, "ok\n"), ran
    said = claude_context(model)
    if tokens is None:
        fitted(said, "claude")
    else:  # the whole brief: Claude Code keeps it in a file and shows the model 2 KB of it
        assert re.match(r"<persisted-output>\nOutput too large \(2\d\.\dKB\)\. Full output saved to: /", said), said[
            :300
        ]
        assert "Preview (first 2KB):\n# git-continuity brief: stream main\n" in said
        assert "Left out" not in said


def codex_context(model: Imitation) -> str:
    first = model.conversation()[0]
    (said,) = [t for t in texts(first["input"]) if "# git-continuity brief: stream main" in t]
    return said


@pytest.mark.parametrize("tokens", [None, "100000"], ids=["fitted", "whole"])
def test_codex_gets_the_fitted_brief_whole(large: Path, tmp_path: Path, tokens: str | None) -> None:
    cont(large, "agent", "install", "codex")
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("openai", Turns([], rest=Reply("ok"))) as model:
        env = setup_codex(large, home, model) | ({"GIT_CONTINUITY_BRIEF_TOKENS": tokens} if tokens else {})
        trust_codex_hooks(large, env)
        ran = codex(large, env, "Where are we?")
    assert (ran.code, ran.out) == (0, "ok\n"), ran
    said = codex_context(model)
    if tokens is None:
        fitted(said, "codex")
    else:  # the whole brief: Codex keeps its head and tail and cuts the middle
        assert re.match(r"Warning: truncated output \(original token count: \d+\)\n", said), said[:300]
        assert re.search(r"…\d+ tokens truncated…", said)


def test_a_resumed_claude_conversation_is_told_its_new_brief_supersedes_the_earlier(repo: Path, tmp_path: Path) -> None:
    for args in (("init",), ("objective", "set", "Ship 1.2", "--why", "release is due Friday")):
        assert subprocess.run(["git", "continuity", *args], cwd=repo, capture_output=True).returncode == 0
    assert (
        subprocess.run(["git", "continuity", "agent", "install", "claude"], cwd=repo, capture_output=True).returncode
        == 0
    )
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", Turns([], rest=Reply("Looked."), wanted=lambda b: bool(b.get("tools")))) as model:
        ran = claude(repo, home, model, "-p", "What is open?")
        assert (ran.code, ran.out) == (0, "Looked.\n"), ran
        (first,) = [b for b in model.conversation() if b.get("tools")]
        conversation = json.loads(first["metadata"]["user_id"])["session_id"]
        ran = claude(repo, home, model, "-p", "--resume", conversation, "And now?")
        assert (ran.code, ran.out) == (0, "Looked.\n"), ran
        resumed = [b for b in model.conversation() if b.get("tools")][-1]
    briefs = [
        t.split("SessionStart hook additional context: ", 1)[1].split("\n", 1)[0]
        for t in texts(resumed["messages"])
        if "SessionStart hook additional context: " in t
    ]
    # The earlier brief is still in the conversation; the new one's first line says which is right.
    assert briefs[0] == "# git-continuity brief: stream main"
    assert re.fullmatch(
        r"# git-continuity brief: stream main \(supersedes the brief of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC earlier in "
        r"this conversation: where they differ, this is right\)",
        briefs[-1],
    ), briefs
    assert len(briefs) == 2
