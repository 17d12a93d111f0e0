"""The real Gemini CLI (0.61.0) after ``git continuity agent install gemini``, driven against a
loopback imitation of the Gemini API (streamGenerateContent over server-sent events): every
assertion is on what the binary sent the model, or on the state the hooks left.

Marked ``agents``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from agent_harness import gate_reason, gemini, gemini_env
from conftest import BIN, cont, git
from model_imitation import Imitation, Reply, Tool, Turns

pytestmark = pytest.mark.agents

ID = r"[2-9a-hjkmnp-z]{6}"


def ok(cwd: Path, *args: str) -> str:
    done = cont(cwd, *args)
    assert done.code == 0, (args, done.out, done.err)
    return done.out


def handoffs(work: Path) -> list[dict[str, Any]]:
    names = git(work, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    return [json.loads(git(work, "show", f"refs/continuity/main:{name}")) for name in names]


def user_texts(body: dict[str, Any]) -> list[str]:
    """Each text part of the user turns of a generateContent request."""
    return [
        part["text"]
        for turn in body["contents"]
        if turn.get("role") == "user"
        for part in turn["parts"]
        if "text" in part
    ]


@pytest.fixture
def project(repo: Path) -> tuple[Path, str]:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    found = re.search(rf"t-{ID}", ok(repo, "thread", "add", "Release v1.2", "--check", "tag:v1.2"))
    assert found
    return repo, found.group(0)


def test_gemini_cli_gets_the_brief_is_held_after_its_turn_and_hands_off(
    project: tuple[Path, str], tmp_path: Path
) -> None:
    work, thread = project
    check = json.loads(ok(work, "status", "--json"))["threads"][0]["checks"][0]["id"]
    ok(work, "agent", "install", "gemini")
    home = tmp_path / "agent-home"
    closing = f"git tag v1.2 && {BIN / 'git-continuity'} thread close {thread}"
    script = Turns(
        [
            Reply("", Tool("run_shell_command", {"command": "echo 'v1.2: the login fix' > CHANGES.txt"})),
            Reply("Released."),
            Reply("", Tool("run_shell_command", {"command": closing})),
            Reply("Tagged."),
        ]
    )
    with Imitation("gemini", script) as model:
        ran = gemini(work, gemini_env(home, model), "Release 1.2.")
    # Gemini CLI prints each turn's answer as it comes, the one the gate held too.
    assert (ran.code, ran.out) == (0, "Released.\nTagged.\n"), ran
    first, _, blocked, tagged = model.conversation()

    # SessionStart: the brief comes before the prompt, in <hook_context>.
    (prompt,) = [t for t in user_texts(first) if t.endswith("Release 1.2.")]
    assert prompt.startswith("<hook_context># git-continuity brief: stream main\n")
    assert prompt.endswith("</hook_context>\n\nRelease 1.2.")
    assert f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n" in prompt

    # AfterAgent: the gate's reason is the next prompt.
    assert user_texts(blocked)[-1] == gate_reason(thread, check)
    # The scripted tool call tagged v1.2 and closed the thread; the gate let go.
    assert any("functionResponse" in part for part in tagged["contents"][-1]["parts"])
    status = json.loads(ok(work, "status", "--json"))
    assert [(t["id"], t["status"]) for t in status["threads"]] == [(thread, "done")]
    # SessionEnd: a handoff, and Gemini CLI shows its systemMessage on stderr.
    (handoff,) = handoffs(work)
    assert (handoff["agent"], handoff["did"]["threads"]) == (
        "gemini-cli",
        [{"id": thread, "title": "Release v1.2", "was": "open", "now": "done"}],
    )
    assert (
        f"git-continuity: handoff {handoff['id']} recorded at the end of the session (session {handoff['session']})"
        in ran.err
    )
    log = (work / ".git" / "continuity" / "agent-hooks.log").read_text().splitlines()
    assert [line.split(" ", 1)[1] for line in log][:4] == [
        "gemini session-start context",
        "gemini post-tool-use nothing",
        "gemini stop block",
        "gemini post-tool-use nothing",
    ]


# Another process each time (Gemini CLI refuses $(…) in a command, so no temporary folder here).
FAILING = 'echo "make: *** [image] Error 137 (OOMKilled) in process $$" >&2; exit 2'


def test_gemini_cli_is_told_to_change_its_approach_after_the_third_same_failure(repo: Path, tmp_path: Path) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship the image", "--why", "the release needs it")
    ok(repo, "agent", "install", "gemini")
    build = Reply("", Tool("run_shell_command", {"command": FAILING}))
    with Imitation("gemini", Turns([build, build, build, Reply("I will change the approach.")])) as model:
        ran = gemini(repo, gemini_env(tmp_path / "agent-home", model), "Build the image.")
    assert (ran.code, ran.out) == (0, "I will change the approach.\n"), ran
    *earlier, last = model.conversation()
    assert all("this command failed" not in json.dumps(b) for b in earlier)
    (response,) = [p["functionResponse"] for p in last["contents"][-1]["parts"] if "functionResponse" in p]
    # Appended to the third failure's result, as Gemini CLI puts it (escaping < > & itself).
    output = response["response"]["output"]
    notice = output.split("\n</untrusted_context>\n\n", 1)[1]
    assert re.fullmatch(
        re.escape(
            "<hook_context>git-continuity: this is the 3rd time in this session that this command failed with the "
            'same result:\n  $ echo "make: *** [image] Error 137 (OOMKilled) in process $$" &gt;&2; exit 2\n'
            "  make: *** [image] Error 137 (OOMKilled) in process PID\n"
            "Running it again will not change that. Change your approach: find the cause first (read the error, the "
            "code, the logs), or try a different command or plan. If it cannot be done now, record why (git "
            "continuity journal add TEXT), park the thread, and stop.</hook_context>"
        ).replace("PID", r"\d+"),
        notice,
    ), notice
    assert git(repo, "status", "--porcelain") == "?? .gemini/"
