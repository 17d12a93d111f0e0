"""The real agent CLIs (Claude Code, Codex) after ``git continuity agent install``, each
driven against a loopback imitation of its model API: every assertion is on what the binary
sent the model, or on the state the hooks left.

Marked ``agents``: ``pytest -m "not agents"`` runs without them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_harness import claude, codex, codex_hooks, gate_reason, setup_codex, trust_codex_hooks
from conftest import BIN, cont, git
from model_imitation import Imitation, Reply, Tool, Turns, texts

pytestmark = pytest.mark.agents

ID = r"[2-9a-hjkmnp-z]{6}"


def ok(cwd: Path, *args: str) -> str:
    done = cont(cwd, *args)
    assert done.code == 0, (args, done.out, done.err)
    return done.out


def read(body: dict[str, Any], key: str) -> str:
    """Everything the model reads in one request's ``key`` (messages, input)."""
    return "\n".join(texts(body[key]))


def handoffs(work: Path) -> list[dict[str, Any]]:
    names = git(work, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    return [json.loads(git(work, "show", f"refs/continuity/main:{name}")) for name in names]


@pytest.fixture
def project(repo: Path) -> tuple[Path, str]:
    """A repository with an objective and an open thread whose check fails until v1.2 is tagged."""
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    found = re.search(rf"t-{ID}", ok(repo, "thread", "add", "Release v1.2", "--check", "tag:v1.2"))
    assert found
    return repo, found.group(0)


NOTES = "echo 'v1.2: the login fix' > CHANGES.txt"


def closing(thread: str) -> str:
    """The agent's deliberate close once the work is there (the gate itself closes nothing)."""
    return f"git tag v1.2 && {BIN / 'git-continuity'} thread close {thread}"


def claude_turns(thread: str) -> Turns:
    """The model writes the notes, says it is done, is told it is not, tags and closes the
    thread, and says so again."""
    return Turns(
        [
            Reply("Writing the notes.", Tool("Bash", {"command": NOTES, "description": "Notes"})),
            Reply("Released."),
            Reply("Tagging it.", Tool("Bash", {"command": closing(thread), "description": "Tag"})),
            Reply("Tagged."),
        ],
        wanted=lambda body: bool(body.get("tools")),  # the conversation, not a side request
    )


def said_last(body: dict[str, Any]) -> str:
    """The text of the last message of a Messages request (cache markers left out)."""
    content = body["messages"][-1]["content"]
    blocks = [content] if isinstance(content, str) else [b["text"] for b in content if b.get("type") == "text"]
    return "\n".join(blocks)


def check_id(work: Path) -> str:
    check: str = json.loads(ok(work, "status", "--json"))["threads"][0]["checks"][0]["id"]
    return check


def test_claude_code_gets_the_brief_is_held_at_stop_and_hands_off(project: tuple[Path, str], tmp_path: Path) -> None:
    work, thread = project
    check = check_id(work)
    ok(work, "agent", "install", "claude")
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", claude_turns(thread)) as model:
        ran = claude(work, home, model, "-p", "Release 1.2.")
    assert (ran.code, ran.out) == (0, "Tagged.\n"), ran
    first, _, blocked, tagged = model.conversation()
    conversation = json.loads(first["metadata"]["user_id"])["session_id"]

    # SessionStart (startup): the brief arrives as additional context, naming the open thread.
    brief = read(first, "messages")
    assert "SessionStart hook additional context: # git-continuity brief: stream main\n" in brief
    assert f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n" in brief

    # Stop: the model said it was done; the gate's reason comes back to it as feedback, once.
    assert said_last(blocked) == "Stop hook feedback:\n" + gate_reason(thread, check)
    assert [m["role"] for m in blocked["messages"][-2:]] == ["assistant", "user"]
    assert read(blocked, "messages").count("Stop hook feedback") == 1

    # The scripted tool call tagged v1.2 and closed the thread on the evidence; the gate let go.
    assert tagged["messages"][-1]["content"][0]["type"] == "tool_result"
    status = json.loads(ok(work, "status", "--json"))
    assert [(t["id"], t["status"]) for t in status["threads"]] == [(thread, "done")]

    # SessionEnd: a handoff for the session, with Claude Code's own conversation id.
    (handoff,) = handoffs(work)
    session = json.loads((work / ".git" / "continuity" / "session.json").read_text())
    assert (handoff["agent"], handoff["session"], handoff["agent_session"]) == (
        "claude-code",
        session["id"],
        conversation,
    )
    assert handoff["did"]["threads"] == [{"id": thread, "title": "Release v1.2", "was": "open", "now": "done"}]
    assert session["handoff"] == handoff["id"]


def codex_turns(thread: str) -> Turns:
    return Turns(
        [
            Reply("", Tool("exec_command", {"cmd": NOTES})),
            Reply("Released."),
            Reply("", Tool("exec_command", {"cmd": closing(thread)})),
            Reply("Tagged."),
        ]
    )


def input_texts(body: dict[str, Any], role: str) -> list[str]:
    """The text of each input message of a Responses request from ``role``."""
    return [
        "\n".join(part["text"] for part in item["content"] if "text" in part)
        for item in body["input"]
        if item.get("type") == "message" and item.get("role") == role
    ]


def test_codex_gets_the_brief_is_held_at_stop_and_hands_off(project: tuple[Path, str], tmp_path: Path) -> None:
    work, thread = project
    check = check_id(work)
    ok(work, "agent", "install", "codex")
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("openai", codex_turns(thread)) as model:
        env = setup_codex(work, home, model)
        trusted = trust_codex_hooks(work, env)
        ran = codex(work, env, "Release 1.2.")
    assert (ran.code, ran.out) == (0, "Tagged.\n"), ran
    assert [line for line in ran.err.splitlines() if "hooks.json" in line or line.startswith("hook:")] == [
        "hook: SessionStart",
        "hook: SessionStart Completed",
        "hook: PostToolUse",
        "hook: PostToolUse Completed",
        "hook: Stop",
        "hook: Stop Blocked",
        "hook: PostToolUse",
        "hook: PostToolUse Completed",
        "hook: Stop",
        "hook: Stop Completed",
    ]
    assert sorted(key.rsplit("/", 1)[-1] for key in trusted) == [
        "hooks.json:post_tool_use:0:0",
        "hooks.json:pre_compact:0:0",
        "hooks.json:session_end:0:0",
        "hooks.json:session_start:0:0",
        "hooks.json:stop:0:0",
    ]
    first, _, blocked, tagged = model.conversation()

    # AGENTS.md and the SessionStart brief both reach the model.
    assert any(text.startswith(f"# AGENTS.md instructions for {work}\n") for text in input_texts(first, "user"))
    (brief,) = [t for t in input_texts(first, "developer") if t.startswith("# git-continuity brief: stream main\n")]
    assert f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n" in brief

    # Stop: the reason comes back as a user message in <hook_prompt>, once.
    prompt = input_texts(blocked, "user")[-1]
    assert re.fullmatch(
        r'<hook_prompt hook_run_id="stop:\d+:[^"]+/\.codex/hooks\.json">(.*)</hook_prompt>', prompt, re.S
    )
    assert prompt.split(">", 1)[1].removesuffix("</hook_prompt>") == gate_reason(thread, check)
    assert sum("<hook_prompt" in t for t in input_texts(tagged, "user")) == 1

    # The scripted exec_command tagged v1.2 and closed the thread: the gate let go.
    assert tagged["input"][-1]["type"] == "function_call_output"
    status = json.loads(ok(work, "status", "--json"))
    assert [(t["id"], t["status"]) for t in status["threads"]] == [(thread, "done")]

    # SessionEnd: a handoff with Codex's own session id.
    (handoff,) = handoffs(work)
    session = json.loads((work / ".git" / "continuity" / "session.json").read_text())
    assert (handoff["agent"], handoff["session"], handoff["agent_session"]) == (
        "codex",
        session["id"],
        first["prompt_cache_key"],
    )
    assert handoff["did"]["threads"] == [{"id": thread, "title": "Release v1.2", "was": "open", "now": "done"}]


SUMMARY_REQUEST = "Your task is to create a detailed summary of the conversation so far"


def test_claude_code_compaction_keeps_the_ids_and_the_next_brief_names_the_handoff(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    work, thread = project
    ok(work, "agent", "install", "claude")
    home = tmp_path / "agent-home"
    home.mkdir()
    script = Turns(
        [
            Reply("I will park it.", Tool("Bash", {"command": f"git continuity thread set {thread} waiting"})),
            Reply("Parked."),
        ],
        wanted=lambda body: bool(body.get("tools")) and SUMMARY_REQUEST not in json.dumps(body["messages"][-1]),
        rest=Reply("<analysis>short</analysis>\n<summary>The release thread is parked.</summary>"),
    )
    with Imitation("anthropic", script) as model:
        assert claude(work, home, model, "-p", "Park the release.").out == "Parked.\n"
        compacted = claude(work, home, model, "-p", "--continue", "/compact")
        assert compacted.code == 0, compacted
        later = claude(work, home, model, "-p", "--continue", "Where are we?")
        assert later.code == 0, later
    summarize = [b for b in model.conversation() if SUMMARY_REQUEST in said_last(b)]
    assert len(summarize) == 1
    instructions = said_last(summarize[0]).split("Additional Instructions:\n", 1)[1].split("\n\nREMINDER:", 1)[0]

    # The /compact run changed nothing, so PreCompact recorded no handoff (one saying nothing would
    # bury the one that recorded the work); its plain-text answer names that one for the summary to keep.
    (handoff,) = handoffs(work)
    assert handoff["did"]["threads"] == [{"id": thread, "title": "Release v1.2", "was": "open", "now": "waiting"}]
    assert instructions == (
        f"Nothing changed since git-continuity's handoff {handoff['id']} (session {handoff['session']}), so none "
        "was recorded before this compaction. "
        "Keep in the summary, word for word: "
        f'the handoff id {handoff["id"]}; the objective "Ship 1.2"; the open thread {thread} "Release v1.2" (waiting). '
        "After the compaction git-continuity puts a fresh brief into the context: where it and this summary "
        "differ, the brief is right."
    )
    assert "systemMessage" not in read(summarize[0], "messages")  # no JSON of ours reaches it

    # The next brief names that handoff.
    resumed = next(b for b in model.conversation() if "Where are we?" in read(b, "messages"))
    assert f"## Since the last session: handoff {handoff['id']}," in read(resumed, "messages")


COMPACTION = "You are performing a CONTEXT CHECKPOINT COMPACTION."


def test_codex_automatic_compaction_records_a_handoff_and_the_brief_comes_back_naming_it(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    work, thread = project
    ok(work, "agent", "install", "codex")
    home = tmp_path / "agent-home"
    home.mkdir()
    # The first reply reports more tokens than the limit, so Codex compacts before going on.
    script = Turns(
        [
            Reply("", Tool("exec_command", {"cmd": "git tag v1.2"}), input_tokens=50_000),
            Reply("Summary: v1.2 is tagged."),
            Reply("", Tool("exec_command", {"cmd": f"{BIN / 'git-continuity'} thread close {thread}"})),
            Reply("Tagged."),
        ]
    )
    with Imitation("openai", script) as model:
        env = setup_codex(work, home, model, extra="model_auto_compact_token_limit = 2000\n")
        trust_codex_hooks(work, env)
        ran = codex(work, env, "Release 1.2.")
    assert (ran.code, ran.out) == (0, "Tagged.\n"), ran
    assert (
        "hook: PreCompact Completed\ncontext compacted\nhook: SessionStart\nhook: SessionStart Completed\n" in ran.err
    )
    first, compaction, after, _ = model.conversation()
    assert input_texts(compaction, "user")[-1].startswith(COMPACTION)
    assert "systemMessage" not in read(compaction, "input")

    # PreCompact recorded a handoff of the session so far; SessionEnd one more, of what came after.
    before, end = handoffs(work)
    assert before["did"]["threads"] == [] and end["did"]["threads"] == [
        {"id": thread, "title": "Release v1.2", "was": "open", "now": "done"}
    ]
    # After the compaction the brief comes back (SessionStart source "compact"), naming that handoff.
    (brief,) = [t for t in input_texts(after, "developer") if t.startswith("# git-continuity brief: stream main")]
    # The same conversation holds the first brief still: this one says it supersedes it.
    assert brief.split("\n", 1)[0].startswith("# git-continuity brief: stream main (supersedes the brief of ")
    assert f"## Since the last session: handoff {before['id']}," in brief
    assert f"- {thread} [open] Release v1.2: 1 of 1 checks verified now\n" in brief
    assert input_texts(first, "developer")[-1] != brief


def test_claude_code_sessions_that_change_nothing_leave_no_handoff(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    ok(repo, "agent", "install", "claude")
    home = tmp_path / "agent-home"
    home.mkdir()
    with Imitation("anthropic", Turns([], rest=Reply("Nothing to do."))) as model:
        for _ in range(2):
            ran = claude(repo, home, model, "-p", "Anything to do?")
            assert (ran.code, ran.out) == (0, "Nothing to do.\n"), ran
    assert len(model.conversation()) == 2
    assert handoffs(repo) == []
    ended = json.loads((repo / ".git" / "continuity" / "session.json").read_text())
    assert ended["ended_at"] is not None and ended["handoff"] is None


# A build that fails the same way each time, in a new temporary folder each time (the
# fingerprint leaves the folder out, as an attempt's does).
FAILING = 'd=$(mktemp -d); echo "building in $d" >&2; echo "make: *** [image] Error 137 (OOMKilled)" >&2; exit 2'


def loop_notice() -> str:
    return (
        "git-continuity: this is the 3rd time in this session that this command failed with the same result:\n"
        f"  $ {FAILING}\n"
        "  make: *** [image] Error 137 (OOMKilled)\n"
        "Running it again will not change that. Change your approach: find the cause first (read the error, the "
        "code, the logs), or try a different command or plan. If it cannot be done now, record why (git continuity "
        "journal add TEXT), park the thread, and stop."
    )


def test_claude_code_is_told_to_change_its_approach_after_the_third_same_failure(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship the image", "--why", "the release needs it")
    ok(repo, "agent", "install", "claude")
    home = tmp_path / "agent-home"
    home.mkdir()
    build = Reply("Building.", Tool("Bash", {"command": FAILING, "description": "Build the image"}))
    script = Turns([build, build, build, Reply("I will change the approach.")], wanted=lambda b: bool(b.get("tools")))
    with Imitation("anthropic", script) as model:
        ran = claude(repo, home, model, "-p", "Build the image.")
    assert (ran.code, ran.out) == (0, "I will change the approach.\n"), ran
    conversation = [b for b in model.conversation() if b.get("tools")]
    assert len(conversation) == 4
    second, third, fourth = (read(b, "messages") for b in conversation[1:])
    assert "git-continuity: this is the" not in second + third
    # After the third failure's tool result, in the same message: the notice, as Claude Code puts it.
    assert said_last(conversation[3]) == (
        f"<system-reminder>\nPostToolUseFailure:Bash hook additional context: {loop_notice()}\n</system-reminder>"
    )
    assert fourth.count("git-continuity: this is the") == 1
    log = (repo / ".git" / "continuity" / "agent-hooks.log").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in log if "post-tool-use" in line] == [
        "claude post-tool-use nothing",
        "claude post-tool-use nothing",
        "claude post-tool-use notice",
    ]


def test_codex_is_told_to_change_its_approach_after_the_third_same_failure(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship the image", "--why", "the release needs it")
    ok(repo, "agent", "install", "codex")
    home = tmp_path / "agent-home"
    home.mkdir()
    build = Reply("", Tool("exec_command", {"cmd": FAILING}))
    passing = Reply("", Tool("exec_command", {"cmd": "git status --short"}))
    script = Turns([build, passing, build, build, Reply("I will change the approach.")])
    with Imitation("openai", script) as model:
        env = setup_codex(repo, home, model)
        trust_codex_hooks(repo, env)
        ran = codex(repo, env, "Build the image.")
    assert (ran.code, ran.out) == (0, "I will change the approach.\n"), ran
    *earlier, last = model.conversation()
    assert len(earlier) == 4
    assert all("git-continuity: this is the" not in read(b, "input") for b in earlier)
    # A developer message after the third failure's call, beside its output.
    after = last["input"][max(i for i, item in enumerate(last["input"]) if item.get("type") == "function_call") + 1 :]
    assert sorted(item.get("role") or item["type"] for item in after) == ["developer", "function_call_output"], after
    (notice,) = [item for item in after if item.get("role") == "developer"]
    assert notice["content"] == [{"type": "input_text", "text": loop_notice()}]
    assert sum("git-continuity: this is the" in t for t in input_texts(last, "developer")) == 1
    log = (repo / ".git" / "continuity" / "agent-hooks.log").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in log if "post-tool-use" in line] == [
        "codex post-tool-use nothing",
        "codex post-tool-use nothing",
        "codex post-tool-use nothing",
        "codex post-tool-use notice",
    ]


def test_agent_status_reads_codex_trust_as_codex_itself_does(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "agent", "install", "codex")
    home = tmp_path / "agent-home"
    home.mkdir()
    events = ["SessionStart", "PreCompact", "Stop", "SessionEnd", "PostToolUse"]
    with Imitation("openai", Turns([])) as model:
        env = setup_codex(repo, home, model)

        def both() -> list[tuple[str, str, str]]:
            """(event, what Codex says, what agent status says) of each hook."""
            said = {h["key"].rsplit(":", 3)[1]: h["trustStatus"] for h in codex_hooks(repo, env)}
            done = subprocess.run(
                ["git", "continuity", "agent", "status", "--json"], cwd=repo, env=env, capture_output=True, text=True
            )
            assert done.returncode == 0, done
            status = json.loads(done.stdout)["agents"][1]
            assert status["project_trusted"] is True
            snake = {e: re.sub(r"(?<!^)(?=[A-Z])", "_", e).lower() for e in events}
            return [(h["event"], said[snake[h["event"]]], h["trust"]) for h in status["hooks"]]

        assert both() == [(event, "untrusted", "untrusted") for event in events]
        trust_codex_hooks(repo, env)
        assert both() == [(event, "trusted", "trusted") for event in events]
        # A changed definition (a longer timeout) is no longer trusted, for Codex as for status.
        hooks_json = repo / ".codex" / "hooks.json"
        hooks_json.write_text(hooks_json.read_text().replace('"timeout": 600', '"timeout": 900'))
        changed = [(e, "modified", "modified") if e == "Stop" else (e, "trusted", "trusted") for e in events]
        assert both() == changed
