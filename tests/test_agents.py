"""`agent install claude|codex` and the hooks it installs, run exactly as the agents run them:
the command from the settings file through a shell, in the project, with the agent's
environment and the JSON it writes on stdin (shapes from Claude Code's sdk.d.ts and Codex's
hook schemas), checking exit codes, stdout and stderr."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN, SHELL, Ran, commit, git, shell_found, shell_missing
from hypothesis import given, settings
from hypothesis import strategies as st

from git_continuity.agents import jsonedit
from git_continuity.agents import settings as agent_settings
from git_continuity.agents import table as agents

ID = r"[2-9a-hjkmnp-z]{6}"
ME = "Ada Agent <ada@example.com>"
CONVERSATION = "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"  # Claude Code's session_id is a UUID

SETTINGS = """\
{
  "permissions": {
    "allow": ["Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": "echo 'Run the linters before you push.'"}]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "npx prettier --check ."}]
      }
    ]
  },
  "env": {"GREETING": "grüß dich"}
}
"""

INSTALLED_TEMPLATE = """\
{
  "permissions": {
    "allow": ["Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [{"type": "command", "command": "echo 'Run the linters before you push.'"}]
      },
      {
        "matcher": "startup|resume|clear|compact",
        "hooks": [
          {
            "type": "command",
            "command": COMMAND_session-start,
            "timeout": 60
          }
        ]
      }
    ],
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "npx prettier --check ."}]
      }
    ],
    "PreCompact": [
      {
        "hooks": [
          {
            "type": "command",
            "command": COMMAND_pre-compact,
            "timeout": 60
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": COMMAND_stop,
            "timeout": 600
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": COMMAND_session-end,
            "timeout": 60
          }
        ]
      }
    ],
    "PostToolUseFailure": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": COMMAND_post-tool-use,
            "timeout": 10
          }
        ]
      }
    ]
  },
  "env": {"GREETING": "grüß dich"}
}
"""


HOOK = str(BIN / "git-continuity-hook")  # what install finds on the tests' PATH and records


def hook_command(target: agents.Target, action: str) -> str:
    hook = next(h for h in target.hooks if h.action == action)
    return agents.installed_command(target, hook)


def with_commands(template: str, target: agents.Target) -> str:
    return re.sub(
        r"COMMAND_([a-z-]+)", lambda m: json.dumps(hook_command(target, m.group(1)), ensure_ascii=False), template
    )


INSTALLED = with_commands(INSTALLED_TEMPLATE, agents.CLAUDE)


def cont(cwd: Path, *args: str) -> Ran:
    done = subprocess.run(
        ["git", "continuity", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CONTINUITY_HOST": "laptop"},
    )
    return Ran(done.returncode, done.stdout, done.stderr)


def ok(cwd: Path, *args: str) -> Ran:
    done = cont(cwd, *args)
    assert done.code == 0, (args, done.out, done.err)
    return done


def made(out: str, prefix: str) -> str:
    found = re.search(rf"\b{prefix}-{ID}\b", out)
    assert found, out
    return found.group(0)


def steady(text: str) -> str:
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "TIME UTC", text)
    return re.sub(r"(changed|started) (just now|\d+ \w+ ago)", r"\1 AGO", text)


# What each agent reads back from a command hook's stdout, per event: Claude Code's
# SyncHookJSONOutput (sdk.d.ts) and Codex's generated *.command.output schemas. A key outside
# these is ignored at best, and makes Codex reject the whole answer at worst.
CLAUDE_KEYS = {
    "continue",
    "suppressOutput",
    "stopReason",
    "decision",
    "systemMessage",
    "terminalSequence",
    "reason",
    "hookSpecificOutput",
}
CODEX_COMMON = {"continue", "stopReason", "suppressOutput", "systemMessage"}
CODEX_KEYS = {
    "SessionStart": CODEX_COMMON | {"hookSpecificOutput"},
    "PreCompact": CODEX_COMMON,
    "Stop": CODEX_COMMON | {"decision", "reason"},
    "SessionEnd": CODEX_COMMON,
}


def answers_as_the_agent_reads(agent: str, event: str, document: dict[str, Any]) -> None:
    allowed = CLAUDE_KEYS if agent == "claude" else CODEX_KEYS[event]
    assert set(document) <= allowed, (agent, event, document)
    if "decision" in document:
        assert document["decision"] == "block" and isinstance(document["reason"], str) and document["reason"]
    if "hookSpecificOutput" in document:
        specific = document["hookSpecificOutput"]
        assert set(specific) == {"hookEventName", "additionalContext"} and specific["hookEventName"] == event
        assert isinstance(specific["additionalContext"], str)
        # Both agents cut injected context near 10,000 characters; the default budget stays under.
        assert len(specific["additionalContext"]) < 10_000


class Agent:
    """Runs a project's hooks the way the agent does: every command whose matcher fits the
    event, through ``sh -c`` in the project folder, the event's JSON on stdin."""

    def __init__(self, project: Path, settings_file: str, env: dict[str, str]) -> None:
        self.project = project
        self.settings_file = settings_file
        self.env = env
        self.agent = "claude" if settings_file.startswith(".claude") else "codex"

    def commands(self, event: str, subject: str | None) -> list[str]:
        settings = json.loads((self.project / self.settings_file).read_text())
        found = []
        for group in settings.get("hooks", {}).get(event, []):
            matcher = group.get("matcher")
            if matcher in (None, "", "*") or (subject is not None and re.fullmatch(matcher, subject)):
                found += [h["command"] for h in group["hooks"] if h["type"] == "command"]
        return found

    def fire(self, event: str, payload: dict[str, Any], subject: str | None = None) -> list[Ran]:
        runs = []
        for command in self.commands(event, subject):
            done = subprocess.run(
                ["sh", "-c", command],
                cwd=self.project,
                input=json.dumps({**payload, "hook_event_name": event}),
                capture_output=True,
                text=True,
                env=self.env,
            )
            runs.append(Ran(done.returncode, done.stdout, done.stderr))
        return runs

    def ours(self, event: str, payload: dict[str, Any], subject: str | None = None) -> dict[str, Any]:
        """Fire the event; the git-continuity hook must exit 0 with one JSON document on
        stdout and nothing on stderr but its systemMessage (the Stop gate letting go says it
        there too, for a headless run)."""
        runs = self.fire(event, payload, subject)
        mine = [r for r, c in zip(runs, self.commands(event, subject), strict=True) if "git-continuity-hook" in c]
        assert len(mine) == 1
        (done,) = mine
        document: dict[str, Any] = json.loads(done.out)
        assert (done.code, done.err) in ((0, ""), (0, f"{document.get('systemMessage')}\n")), done
        assert done.out == json.dumps(document, ensure_ascii=False) + "\n"
        answers_as_the_agent_reads(self.agent, event, document)
        return document


def claude_payload(work: Path, **extra: Any) -> dict[str, Any]:
    """BaseHookInput of @anthropic-ai/claude-agent-sdk's sdk.d.ts, plus the event's fields."""
    return {
        "session_id": CONVERSATION,
        "transcript_path": f"/home/ada/.claude/projects/-work/{CONVERSATION}.jsonl",
        "cwd": str(work),
        "permission_mode": "default",
        **extra,
    }


@pytest.fixture
def project(remote_and_clone: tuple[Path, Path]) -> Path:
    """A clone with state: an objective, a claim that is not true, and an open thread."""
    _, work = remote_and_clone
    ok(work, "init")
    ok(work, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    ok(work, "next", "tag v1.2 and push it")
    return work


# One session of the real hook commands, told in order: each step stands on the state the last left.
def test_claude_code_runs_the_installed_hooks(project: Path) -> None:  # noqa: PLR0915
    work = project
    fix = commit(work, "Fix the login loop", {"app.py": "fixed\n"})
    untrue = made(ok(work, "claim", "add", "v1.2 is tagged", "--check", "tag:v1.2").out, "c")
    thread = made(ok(work, "thread", "add", "Release v1.2", "--check", "tag:v1.2=HEAD").out, "t")
    check = json.loads(ok(work, "status", "--json").out)["threads"][0]["checks"][0]["id"]
    (work / ".claude").mkdir()
    (work / ".claude" / "settings.json").write_text(SETTINGS)

    # -- install: merged in, the rest of the file byte for byte; twice is once -----------------
    installed = ok(work, "agent", "install", "claude")
    assert installed.out == (
        ".claude/settings.json: SessionStart runs git-continuity-hook agent claude session-start "
        "(matcher startup|resume|clear|compact)\n"
        ".claude/settings.json: PreCompact runs git-continuity-hook agent claude pre-compact\n"
        ".claude/settings.json: Stop runs git-continuity-hook agent claude stop\n"
        ".claude/settings.json: SessionEnd runs git-continuity-hook agent claude session-end\n"
        ".claude/settings.json: PostToolUseFailure runs git-continuity-hook agent claude post-tool-use "
        "(matcher Bash)\n"
        ".claude/hooks/git-continuity-hook: the launcher the hooks run; commit it with the settings\n"
        "Claude Code now runs orient at session start (also after /clear, a resume or a compaction), handoff "
        "before a compaction and at session end, the closure gate when it would stop, and a notice when a "
        "failing command is run a third time with the same result.\n"
        f"On this machine the hooks run {HOOK} (recorded in .git/continuity/agents/hook-program), else "
        "git-continuity-hook from PATH; remove them with: git continuity agent uninstall claude\n" + shell_found()
    )
    assert (work / ".claude" / "settings.json").read_text() == INSTALLED
    again = ok(work, "agent", "install", "claude")
    assert again.out.splitlines()[:4] == [
        f".claude/settings.json: {event} already runs git-continuity (left as it is)"
        for event in ("SessionStart", "PreCompact", "Stop", "SessionEnd")
    ]
    assert (work / ".claude" / "settings.json").read_text() == INSTALLED

    # Claude Code's environment for a hook: its own, plus CLAUDE_PROJECT_DIR.
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(work), "GIT_CONTINUITY_HOST": "laptop"}
    claude = Agent(work, ".claude/settings.json", env)

    # -- SessionStart (startup): both hooks run; ours puts the brief into the context ---------
    runs = claude.fire("SessionStart", claude_payload(work, source="startup"), subject="startup")
    assert runs[0] == Ran(0, "Run the linters before you push.\n", "")
    started = json.loads((work / ".git" / "continuity" / "session.json").read_text())
    assert (started["agent"], started["agent_session"]) == ("claude-code", CONVERSATION)
    session = started["id"]
    context = json.loads(runs[1].out)
    assert list(context) == ["hookSpecificOutput"]
    assert context["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    state = git(work, "rev-parse", "--short=7", "refs/continuity/main")
    assert steady(context["hookSpecificOutput"]["additionalContext"]) == (
        "# git-continuity brief: stream main\n"
        f"State refs/continuity/main at {state}, changed AGO. "
        "Claims: 2 contradicted (2 re-derived now).\n"
        f"Session {session} (claude-code) started now on laptop; end it with: git continuity handoff\n"
        "Fresh look: fetched now from origin.\n"
        "Warning: No closure gate here: this clone's git hooks are not installed, so a commit that closes a thread "
        "is not checked (git continuity hooks install).\n"
        "\n"
        "## Do not act on these: not true now\n"
        f'- **{untrue}** "v1.2 is tagged" (tag:v1.2) is contradicted: tag v1.2 does not exist here\n'
        "\n"
        "## Not yet shared: only in this clone\n"
        f"- main: 1 commit not on origin/main ({fix[:7]} Fix the login loop): git push\n"
        "- 5 state changes never sent to origin: git continuity push origin\n"
        "- 1 file not committed: .claude/\n"
        "\n"
        "## Objective\n"
        "Ship 1.2\n"
        "- why: release is due Friday\n"
        f"- set TIME UTC by {ME}\n"
        "\n"
        "## Next action\n"
        "tag v1.2 and push it\n"
        "\n"
        "## Blockers\n"
        "- none\n"
        "\n"
        "## Open threads\n"
        f"- {thread} [open] Release v1.2: 0 of 1 checks verified now\n"
        f"  - contradicted {check} tag:v1.2={fix[:12]}…: tag v1.2 does not exist here\n"
        "\n"
        "## Work tree\n"
        f'- on branch main at {fix[:7]} "Fix the login loop"\n'
        "- uncommitted: 1 untracked: .claude/\n"
        "\n"
        "## Since the last session\n"
        "- no earlier handoff on this stream: nothing to compare with\n"
    )
    # A SessionStart whose source the matcher does not name runs nothing of ours.
    assert claude.commands("SessionStart", "fork") == []

    # -- Stop: the gate blocks with the reason, and cannot loop forever ------------------------
    stop = claude_payload(work, stop_hook_active=False, last_assistant_message="Released 1.2.")
    reason = (
        "git-continuity: you may not stop yet: an open thread is finished only when its checks verify now.\n"
        f"Not done: 1 open thread ({thread}) not verified now.\n"
        "\n"
        f'{thread} "Release v1.2": 1 of 1 checks is not verified now\n'
        f"  contradicted  {check}  tag:v1.2=HEAD\n"
        f"                tag:v1.2={fix[:12]}…\n"
        "                tag v1.2 does not exist here\n"
        "\n"
        "Make these checks pass, or park a thread that is not finished with: "
        "git continuity thread set ID waiting|watching|blocked\n"
        "If it is honestly not finished, record why (git continuity journal add TEXT) and park it."
    )
    (work / "CHANGES.txt").write_text("1.2\n")  # the session changed something: its stop is held
    assert claude.ours("Stop", stop) == {"decision": "block", "reason": reason}
    # Claude Code continues; the next stops arrive with stop_hook_active.
    stop["stop_hook_active"] = True
    assert claude.ours("Stop", stop) == {"decision": "block", "reason": reason}
    assert claude.ours("Stop", stop) == {"decision": "block", "reason": reason}
    # It lets go through one last block, whose reason the model says in its answer to the person.
    assert claude.ours("Stop", stop) == {
        "decision": "block",
        "reason": f"git-continuity: you may stop now, but {thread} did not verify (you were told 3 times in a row), "
        f'so what you said was done is not. Begin your answer to the user with: "Not done: {thread} did not verify '
        '(git continuity check --closing shows why)." Then stop.',
    }
    assert claude.ours("Stop", stop) == {
        "systemMessage": f"git-continuity: the agent stopped although {thread} did not verify "
        "(it was told 3 times in a row); git continuity check --closing shows why."
    }
    # A new turn starts over: blocked again.
    stop["stop_hook_active"] = False
    assert claude.ours("Stop", stop) == {"decision": "block", "reason": reason}

    # The agent does the work: the gate passes and says to close it; closing is the agent's act.
    git(work, "tag", "v1.2")
    assert claude.ours("Stop", stop) == {
        "systemMessage": f"git-continuity: {thread} verifies now; close it with: git continuity thread close {thread}"
    }
    ok(work, "thread", "close", thread)
    threads = json.loads(ok(work, "status", "--json").out)["threads"]
    assert [(t["id"], t["status"]) for t in threads] == [(thread, "done")]

    # -- PreCompact: a handoff; then SessionStart (compact) orients a new session on it ---------
    # Claude Code does not read PreCompact's stdout as JSON: it is extra instructions for the summary.
    (said,) = claude.fire("PreCompact", claude_payload(work, trigger="auto", custom_instructions=None))
    handoffs = git(work, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/handoffs/").split()
    (path,) = handoffs
    handoff = json.loads(git(work, "show", f"refs/continuity/main:{path}"))
    assert said == Ran(
        0,
        f"git-continuity recorded handoff {handoff['id']} before this compaction (session {session}). "
        f'Keep in the summary, word for word: the handoff id {handoff["id"]}; the objective "Ship 1.2". '
        "After the compaction git-continuity puts a fresh brief into the context: where it and this summary "
        "differ, the brief is right.\n",
        "",
    )
    assert (handoff["session"], handoff["agent"], handoff["agent_session"]) == (session, "claude-code", CONVERSATION)
    assert handoff["did"]["threads"] == [{"id": thread, "title": "Release v1.2", "was": "open", "now": "done"}]

    compacted = claude.ours("SessionStart", claude_payload(work, source="compact"), subject="compact")
    brief = compacted["hookSpecificOutput"]["additionalContext"]
    after = json.loads((work / ".git" / "continuity" / "session.json").read_text())
    assert after["id"] != session and after["ended_at"] is None
    assert steady(brief).endswith(
        f"\n## Since the last session: handoff {handoff['id']}, TIME UTC by Ada Agent on laptop "
        f"(claude-code, session {session})\n"
        "- nothing changed: no commits, refs, claim states or journal entries\n"
        "\n"
        "## Journal (latest 2 of 2)\n"
        f"- TIME UTC Ada Agent on laptop (claude-code, session {session}): Session {session} handed off "
        f"({handoff['id']}): {thread} open → done. Not pushed: main +1 (not on origin/main). Next: tag v1.2 and "
        "push it\n"
        f"- TIME UTC Ada Agent on laptop (claude-code, session {session}): Stop gate let go: session {session} "
        f"ended with {thread} unverified, after 3 blocks in a row; what it said was done is not (git continuity "
        "check --closing shows why)\n"
    )

    # -- SessionEnd: the last handoff -----------------------------------------------------------
    # The session since the compaction changed nothing: it ends without a handoff.
    assert claude.ours("SessionEnd", claude_payload(work, reason="prompt_input_exit")) == {}
    quiet = json.loads((work / ".git" / "continuity" / "session.json").read_text())
    assert (quiet["id"], quiet["handoff"]) == (after["id"], None) and quiet["ended_at"] is not None
    # The next one writes a journal entry: that is worth a handoff.
    claude.ours("SessionStart", claude_payload(work, source="startup"), subject="startup")
    last = json.loads((work / ".git" / "continuity" / "session.json").read_text())["id"]
    ok(work, "journal", "add", "tried the staging deploy; it needs the new key")
    ended = claude.ours("SessionEnd", claude_payload(work, reason="prompt_input_exit"))
    assert re.fullmatch(
        rf"git-continuity: handoff h-{ID} recorded at the end of the session \(session {last}\)",
        ended["systemMessage"],
    )
    journal = json.loads(ok(work, "journal", "--json").out)["entries"]
    assert [(e.get("session"), e.get("agent")) for e in journal if e.get("handoff")] == [
        (session, "claude-code"),
        (last, "claude-code"),
    ]

    # -- uninstall: exactly what install added goes ------------------------------------------
    removed = ok(work, "agent", "uninstall", "claude")
    assert removed.out == (
        ".claude/settings.json: removed 5 git-continuity hooks\n.claude/hooks/git-continuity-hook: removed\n"
    )
    assert (work / ".claude" / "settings.json").read_text() == SETTINGS
    assert not (work / ".git" / "continuity" / "agents" / "claude.json").exists()


def test_the_hooks_stay_out_of_the_way_where_there_is_nothing_to_do(tmp_path: Path, repo: Path) -> None:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(tmp_path)}
    for action in ("session-start", "pre-compact", "stop", "session-end"):
        for where in (tmp_path, repo):  # not a repository; a repository that keeps no state
            done = subprocess.run(
                ["git-continuity-hook", "agent", "claude", action],
                cwd=where,
                input=json.dumps(claude_payload(where, stop_hook_active=False)),
                capture_output=True,
                text=True,
                env=env,
            )
            if action == "session-start" and where == repo:
                context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
                assert context.splitlines()[1].startswith("No continuity state for stream 'main' in this clone")
            else:  # Claude Code's PreCompact stdout is instructions for the summary: none
                nothing = "" if action == "pre-compact" else "{}\n"
                assert (done.returncode, done.stdout, done.stderr) == (0, nothing, ""), (action, where)
    # Input that is not JSON: said on stderr, and the hook still answers.
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "stop"],
        cwd=repo,
        input="not json",
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        "{}\n",
        "git-continuity: the hook input is not JSON; going on without it\n",
    )
    usage = subprocess.run(["git-continuity-hook", "agent", "cursor", "stop"], capture_output=True, text=True)
    assert (usage.returncode, usage.stdout) == (2, "")
    assert usage.stderr == (
        "usage: git-continuity-hook agent {claude,codex,gemini} "
        "{session-start,pre-compact,stop,session-end,post-tool-use}\n"
    )


def test_a_handoff_hook_without_an_objective_says_so_and_lets_compaction_go_on(repo: Path) -> None:
    ok(repo, "init")
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "pre-compact"],
        cwd=repo,
        input=json.dumps(claude_payload(repo, trigger="manual", custom_instructions="keep the plan")),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "git-continuity could not record a handoff before this compaction: handoff needs an objective: "
        "the next session must know what this work is for, and there is none.\n"
    )


# -- bad settings files ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            '{\n  "hooks": {\n    "Stop": [\n  }\n}\n',
            ".claude/settings.json line 4 column 3: not valid JSON: Expecting value",
        ),
        ('{\n  "model": "opus",\n  "model": "sonnet"\n}\n', ".claude/settings.json line 3: duplicate key 'model'"),
        ("[]\n", ".claude/settings.json line 1: expected a JSON object at the top"),
        ('{\n  "hooks": []\n}\n', '.claude/settings.json line 2: "hooks" is not an object of events'),
        (
            '{\n  "hooks": {\n    "Stop": {"hooks": []}\n  }\n}\n',
            '.claude/settings.json line 3: "hooks.Stop" is not a list of matcher groups',
        ),
        (
            '{"hooks": {"Stop": [\n  "echo"\n]}}\n',
            '.claude/settings.json line 2: "hooks.Stop[0]" is not an object',
        ),
        (
            '{"hooks": {"Stop": [{\n  "hooks": "echo"\n}]}}\n',
            '.claude/settings.json line 2: "hooks.Stop[0].hooks" is not a list',
        ),
    ],
)
def test_a_settings_file_that_is_not_what_claude_code_reads_is_refused(repo: Path, text: str, said: str) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(text)
    for action in ("install", "uninstall"):
        refused = cont(repo, "agent", action, "claude")
        assert (refused.code, refused.out) == (2, "")
        assert refused.err == f"git-continuity: error: {said}; nothing was written\n"
        assert (repo / ".claude" / "settings.json").read_text() == text
    assert not (repo / ".git" / "continuity" / "agents").exists()


def test_install_creates_what_is_missing_and_uninstall_takes_it_all_back(repo: Path) -> None:
    ok(repo, "agent", "install", "claude")
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings == {"hooks": {h.event: [agents.group(agents.CLAUDE, h)] for h in agents.CLAUDE.hooks}}
    assert ok(repo, "agent", "uninstall", "claude").out == (
        ".claude/settings.json: removed (install had created it)\n.claude/hooks/git-continuity-hook: removed\n"
    )
    assert not (repo / ".claude").exists()
    assert ok(repo, "agent", "uninstall", "claude").out == ".claude/settings.json: no git-continuity hooks to remove\n"

    # An empty "hooks" the person had stays; so does the folder with their other files.
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text("{}\n")
    (repo / ".claude" / "settings.json").write_text('{\n  "hooks": {}\n}\n')
    ok(repo, "agent", "install", "claude")
    ok(repo, "agent", "uninstall", "claude")
    assert (repo / ".claude" / "settings.json").read_text() == '{\n  "hooks": {}\n}\n'
    assert (repo / ".claude" / "settings.local.json").read_text() == "{}\n"

    # Installed from another clone (no local record): what is left empty goes.
    ok(repo, "agent", "install", "claude")
    (repo / ".git" / "continuity" / "agents" / "claude.json").unlink()
    ok(repo, "agent", "uninstall", "claude")
    assert not (repo / ".claude" / "settings.json").exists()


def test_a_bare_repository_has_nowhere_to_install(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    refused = cont(tmp_path / "bare.git", "agent", "install", "codex")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: a bare repository has no work tree for an agent to run in; run this in a clone\n"
    )


# -- Codex ----------------------------------------------------------------------------------

CODEX_HOOKS = """\
{
  "hooks": {
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "python3 .codex/hooks/lint.py",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
"""


def codex_payload(work: Path, event: str, **extra: Any) -> dict[str, Any]:
    """The fields Codex's generated hook input schemas require (codex-rs/hooks/schema)."""
    return {
        "session_id": "0199a213-81c0-7800-8aa1-bbab2a035a53",
        "turn_id": "turn-1",
        "transcript_path": None,
        "cwd": str(work),
        "hook_event_name": event,
        "model": "gpt-5-codex",
        "permission_mode": "default",
        **extra,
    }


def test_codex_gets_its_hooks_and_an_agents_md_block_and_loses_them_again(project: Path) -> None:
    work = project
    (work / ".codex").mkdir()
    (work / ".codex" / "hooks.json").write_text(CODEX_HOOKS)
    (work / "AGENTS.md").write_text("# Agents\n\nRun `make check` before you commit.\n")

    installed = ok(work, "agent", "install", "codex")
    assert installed.out == (
        ".codex/hooks.json: SessionStart runs git-continuity-hook agent codex session-start\n"
        ".codex/hooks.json: PreCompact runs git-continuity-hook agent codex pre-compact\n"
        ".codex/hooks.json: Stop runs git-continuity-hook agent codex stop\n"
        ".codex/hooks.json: SessionEnd runs git-continuity-hook agent codex session-end\n"
        ".codex/hooks.json: PostToolUse runs git-continuity-hook agent codex post-tool-use (matcher Bash)\n"
        ".codex/hooks/git-continuity-hook: the launcher the hooks run; commit it with the settings\n"
        "AGENTS.md: the continuity routine, between git-continuity markers\n"
        "Codex runs a project's hooks only once the project is trusted (Codex asks when it first opens the folder)\n"
        "and each hook is trusted: open /hooks in Codex and trust these 5, listed under .codex/hooks.json:\n"
        "  SessionStart  git-continuity-hook agent codex session-start\n"
        "  PreCompact    git-continuity-hook agent codex pre-compact\n"
        "  Stop          git-continuity-hook agent codex stop\n"
        "  SessionEnd    git-continuity-hook agent codex session-end\n"
        "  PostToolUse   git-continuity-hook agent codex post-tool-use\n"
        "Codex keeps each trust as a hash of the hook's definition in ~/.codex/config.toml ([hooks.state]): "
        "a changed hook needs trusting again.\n"
        f"On this machine the hooks run {HOOK} (recorded in .git/continuity/agents/hook-program), else "
        "git-continuity-hook from PATH; remove them with: git continuity agent uninstall codex\n" + shell_missing()
    )
    hooks = json.loads((work / ".codex" / "hooks.json").read_text())
    assert hooks == {
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "python3 .codex/hooks/lint.py", "timeout": 30}]},
                {"hooks": [{"type": "command", "command": hook_command(agents.CODEX, "stop"), "timeout": 600}]},
            ],
            "SessionStart": [
                {
                    "hooks": [
                        {"type": "command", "command": hook_command(agents.CODEX, "session-start"), "timeout": 60}
                    ],
                }
            ],
            "PreCompact": [
                {"hooks": [{"type": "command", "command": hook_command(agents.CODEX, "pre-compact"), "timeout": 60}]}
            ],
            "SessionEnd": [
                {"hooks": [{"type": "command", "command": hook_command(agents.CODEX, "session-end"), "timeout": 3}]}
            ],
            "PostToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": hook_command(agents.CODEX, "post-tool-use"), "timeout": 10}
                    ],
                }
            ],
        }
    }
    assert (work / "AGENTS.md").read_text() == (
        "# Agents\n\nRun `make check` before you commit.\n\n" + agents.BEGIN + "\n" + agents.ROUTINE + agents.END + "\n"
    )
    twice = ok(work, "agent", "install", "codex")
    assert "AGENTS.md: the continuity routine is there already\n" in twice.out
    assert (work / "AGENTS.md").read_text().count(agents.BEGIN) == 1

    # Codex runs them with its own JSON; the answers are the ones its output schemas accept.
    codex = Agent(work, ".codex/hooks.json", {**os.environ, "GIT_CONTINUITY_HOST": "laptop"})
    context = codex.ours("SessionStart", codex_payload(work, "SessionStart", source="startup"), subject="startup")
    assert context["hookSpecificOutput"]["additionalContext"].startswith("# git-continuity brief: stream main\n")
    assert json.loads((work / ".git" / "continuity" / "session.json").read_text())["agent"] == "codex"
    # Every source Codex sends gets the brief: after an automatic compaction, and in a fork.
    for source in ("startup", "resume", "clear", "compact", "fork"):
        assert codex.commands("SessionStart", source) == [hook_command(agents.CODEX, "session-start")]
    thread = made(ok(work, "thread", "add", "Ship it", "--check", "tag:v1").out, "t")
    stop = codex_payload(work, "Stop", stop_hook_active=False, last_assistant_message=None)
    blocked = codex.ours("Stop", stop)
    assert (
        blocked["decision"] == "block" and f"Not done: 1 open thread ({thread}) not verified now." in blocked["reason"]
    )
    said = codex.ours("PreCompact", codex_payload(work, "PreCompact", trigger="manual"))
    assert re.fullmatch(
        rf"git-continuity: handoff h-{ID} recorded before the compaction \(session s-{ID}\)", said["systemMessage"]
    )

    removed = ok(work, "agent", "uninstall", "codex")
    assert removed.out == (
        ".codex/hooks.json: removed 5 git-continuity hooks\n.codex/hooks/git-continuity-hook: removed\n"
        "AGENTS.md: removed the continuity routine\n"
    )
    assert (work / ".codex" / "hooks.json").read_text() == CODEX_HOOKS
    assert (work / "AGENTS.md").read_text() == "# Agents\n\nRun `make check` before you commit.\n"


def test_codex_install_in_a_bare_project_creates_and_removes_everything(repo: Path) -> None:
    ok(repo, "agent", "install", "codex")
    assert (repo / "AGENTS.md").read_text() == agents.BEGIN + "\n" + agents.ROUTINE + agents.END + "\n"
    ok(repo, "agent", "uninstall", "codex")
    assert not (repo / "AGENTS.md").exists() and not (repo / ".codex").exists()
    assert git(repo, "status", "--porcelain") == ""


# -- the text splicing under it all ---------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    base=st.dictionaries(st.text(min_size=1, max_size=6).filter(lambda k: k != "hooks"), json_values, max_size=4),
    hooks=st.one_of(
        st.none(),
        st.dictionaries(st.sampled_from(["Stop", "PostToolUse", "SessionStart"]), st.just([]), max_size=2),
    ),
    indent=st.sampled_from([None, 2, 4, "\t"]),
)
def test_install_then_uninstall_gives_back_the_same_bytes(base: dict[str, Any], hooks: Any, indent: Any) -> None:
    document = dict(base) if hooks is None else {**base, "hooks": hooks}
    text = json.dumps(document, indent=indent, ensure_ascii=False) + "\n"
    merged = agent_settings.install(agents.CLAUDE, text, "settings.json")
    value, _ = jsonedit.parse(merged.text, "settings.json")
    for hook in agents.CLAUDE.hooks:  # everything of ours is in, and only that was added
        assert agents.group(agents.CLAUDE, hook) in value["hooks"][hook.event]
    assert {k: v for k, v in value.items() if k != "hooks"} == base
    back, removed = agent_settings.uninstall(agents.CLAUDE, merged.text, "settings.json", merged.created)
    assert (back, removed) == (text, len(agents.CLAUDE.hooks))


def test_the_hooks_run_the_tool_by_the_path_install_found_and_say_so_when_it_is_gone(
    repo: Path, tmp_path: Path
) -> None:
    import sys

    ok(repo, "init")
    ok(repo, "objective", "set", "Ship 1.2", "--why", "release is due Friday")
    # Installed beside a Python that is not on PATH (a virtual environment nobody activated).
    done = subprocess.run(
        [sys.executable, "-m", "git_continuity", "agent", "install", "claude"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": "/usr/bin:/bin"},
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.endswith(
        f"On this machine the hooks run {HOOK} (recorded in .git/continuity/agents/hook-program), else "
        "git-continuity-hook from PATH; remove them with: git continuity agent uninstall claude\n"
        f"warning: the model's shell ({SHELL} -c 'command -v git-continuity') does not find git-continuity: "
        f"the brief tells the model to run {BIN / 'git-continuity'}\n"
    )
    bare = {**os.environ, "PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(repo)}
    claude = Agent(repo, ".claude/settings.json", bare)
    started = claude.ours("SessionStart", claude_payload(repo, source="startup"), subject="startup")
    assert started["hookSpecificOutput"]["additionalContext"].startswith("# git-continuity brief: stream main\n")

    # Neither there nor on PATH: each hook says so where the agent shows it, instead of exit 127.
    # (As if the tool had moved since the install: the recorded path names nothing now.)
    gone = str(tmp_path / "gone" / "git-continuity-hook")
    (repo / ".git" / "continuity" / "agents" / "hook-program").write_text(gone + "\n")

    def said(what: str) -> str:
        return (
            f"git-continuity: git-continuity-hook is neither at {gone} nor on PATH, so {what}; install "
            "git-continuity where this agent finds it (or run: git continuity agent install claude)"
        )

    (start,) = claude.fire("SessionStart", claude_payload(repo, source="startup"), subject="startup")
    lost = said("this session gets no continuity brief, no closure gate and no handoff")
    assert (start.code, start.err) == (0, "")
    assert json.loads(start.out) == {
        "systemMessage": lost,
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": f"{lost}. Tell the user before anything else.",
        },
    }
    stop = claude_payload(repo, stop_hook_active=False)
    (held,) = claude.fire("Stop", stop)
    gate = said("the closure gate did not run")
    assert (held.code, held.err, json.loads(held.out)) == (
        0,
        "",
        {"decision": "block", "reason": f"{gate}. Tell the user, then stop."},
    )
    (released,) = claude.fire("Stop", {**stop, "stop_hook_active": True})
    assert (released.code, released.err, json.loads(released.out)) == (0, "", {"systemMessage": gate})
    (compact,) = claude.fire("PreCompact", claude_payload(repo, trigger="auto"))
    assert compact == Ran(0, f"Keep in the summary: {said('no handoff was recorded before this compaction')}.\n", "")
    (end,) = claude.fire("SessionEnd", claude_payload(repo, reason="other"))
    assert end == Ran(1, "", said("no handoff was recorded at the end of this session") + "\n")


@pytest.mark.parametrize("text", ["# Agents\n\nRun `make check`.", "# Agents\n", "# Agents\n\n", "", "x\r\n"])
def test_agents_md_comes_back_byte_for_byte(repo: Path, text: str) -> None:
    (repo / "AGENTS.md").write_bytes(text.encode())
    ok(repo, "agent", "install", "codex")
    assert agents.BEGIN in (repo / "AGENTS.md").read_text()
    ok(repo, "agent", "uninstall", "codex")
    assert (repo / "AGENTS.md").read_bytes() == text.encode()


@settings(max_examples=150, deadline=None)
@given(text=st.text(alphabet="ab \n\r#", max_size=12))
def test_the_agents_md_block_goes_as_it_came(text: str) -> None:
    new, changed = agents.instructions_install(text)
    assert changed
    assert agents.instructions_uninstall(new, final_newline=text == "" or text.endswith("\n")) == (text or None)


def test_install_over_an_older_install_makes_its_commands_find_the_tool_without_path(repo: Path) -> None:
    def older(hook: agents.Hook, timeout: int) -> dict[str, Any]:
        handler = {"type": "command", "command": agents.command(agents.CLAUDE, hook), "timeout": timeout}
        return ({"matcher": hook.matcher} if hook.matcher else {}) | {"hooks": [handler]}

    # Stop's timeout was raised by hand; it stays.
    timeouts = {h.event: 900 if h.event == "Stop" else h.timeout for h in agents.CLAUDE.hooks}
    (repo / ".claude").mkdir()
    before = {"hooks": {h.event: [older(h, timeouts[h.event])] for h in agents.CLAUDE.hooks}}
    (repo / ".claude" / "settings.json").write_text(json.dumps(before, indent=2) + "\n")
    out = ok(repo, "agent", "install", "claude").out
    assert out.splitlines()[: len(agents.CLAUDE.hooks)] == [
        f".claude/settings.json: {h.event} updated to run the launcher .claude/hooks/git-continuity-hook"
        for h in agents.CLAUDE.hooks
    ]
    after = json.loads((repo / ".claude" / "settings.json").read_text())
    expected = {h.event: [agents.group(agents.CLAUDE, h)] for h in agents.CLAUDE.hooks}
    expected["Stop"][0]["hooks"][0]["timeout"] = 900
    assert after == {"hooks": expected}
    again = ok(repo, "agent", "install", "claude").out
    assert again.splitlines()[: len(agents.CLAUDE.hooks)] == [
        f".claude/settings.json: {h.event} already runs git-continuity (left as it is)" for h in agents.CLAUDE.hooks
    ]
