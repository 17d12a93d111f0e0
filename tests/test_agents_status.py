"""`git continuity agent status`: which agents have the hooks here, whether each hook's command
would run (and, for Codex, whether it is trusted, read from config.toml as Codex stores it),
and when each last ran (the local hook log). The real Codex's own view of the same hashes is
checked in test_agents_real.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BIN, cont

from git_continuity import __version__
from git_continuity.agents import codex_trust as agent_trust
from git_continuity.agents import probe as agent_probe

HOOK = str(BIN / "git-continuity-hook")
SHELL = os.environ.get("SHELL") or "/bin/bash"
READY = f"answered ready: git-continuity-hook {__version__} at {HOOK} (Python {sys.version.split()[0]})"


def ok(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", "continuity", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def test_a_settings_file_that_is_not_json_is_named_not_called_not_installed(repo: Path, codex_home: Path) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text("{not json")
    assert ok(repo, "agent", "status").splitlines()[0] == (
        "claude: .claude/settings.json is not readable as JSON (Expecting property name enclosed in double quotes: "
        "line 1 column 2 (char 1)), so no hook in it can run; mend it, then check again"
    )


def test_nothing_installed_says_how_to_install(repo: Path, codex_home: Path) -> None:
    log = repo / ".git" / "continuity" / "agent-hooks.log"
    assert ok(repo, "agent", "status") == (
        "claude: not installed here (git continuity agent install claude)\n"
        "codex: not installed here (git continuity agent install codex)\n"
        "gemini: not installed here (git continuity agent install gemini)\n"
        f"(each hook run adds a line to {log})\n"
    )
    assert json.loads(ok(repo, "agent", "status", "--json")) == {
        "agents": [
            {"agent": "claude", "settings": ".claude/settings.json", "installed": False, "hooks": []},
            {
                "agent": "codex",
                "settings": ".codex/hooks.json",
                "installed": False,
                "hooks": [],
                "project_trusted": None,
                "config": str(codex_home / "config.toml"),
            },
            {"agent": "gemini", "settings": ".gemini/settings.json", "installed": False, "hooks": []},
        ],
        "log": str(log),
    }


def test_status_says_what_runs_what_is_trusted_and_when_each_last_ran(repo: Path, codex_home: Path) -> None:
    assert cont(repo, "init").code == 0
    ok(repo, "agent", "install", "claude")
    ok(repo, "agent", "install", "codex")
    hooks_json = repo / ".codex" / "hooks.json"
    installed = json.loads(hooks_json.read_text())["hooks"]

    def trusted(event: str) -> str:
        (group,) = [g for g in installed[event] if "git-continuity-hook" in g["hooks"][0]["command"]]
        return agent_trust.codex_hash(event, group.get("matcher"), group["hooks"][0])

    # Codex's config as /hooks leaves it: two trusted, one trusted before its definition changed.
    state = {"session_start": trusted("SessionStart"), "stop": trusted("Stop"), "pre_compact": "sha256:" + "0" * 64}
    (codex_home / "config.toml").write_text(
        f'[projects.{json.dumps(str(repo))}]\ntrust_level = "trusted"\n'
        + "".join(
            f'\n[hooks.state.{json.dumps(f"{hooks_json}:{key}:0:0")}]\ntrusted_hash = "{value}"\n'
            for key, value in state.items()
        )
    )
    # One hook ran (its line in the log); the command of another was changed by hand.
    start = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "session-start"],
        cwd=repo,
        input=json.dumps({"session_id": "s", "cwd": str(repo)}),
        capture_output=True,
        text=True,
    )
    assert start.returncode == 0
    settings = repo / ".claude" / "settings.json"
    text = json.loads(settings.read_text())
    stop = text["hooks"]["Stop"][0]["hooks"][0]
    expected = stop["command"]
    stop["command"] = "nice " + stop["command"]
    settings.write_text(json.dumps(text, indent=2) + "\n")
    out = subprocess.run([str(BIN / "git-continuity"), "agent", "status"], cwd=repo, capture_output=True, text=True)
    (ran,) = [line for line in (repo / ".git" / "continuity" / "agent-hooks.log").read_text().splitlines()]
    at = ran.split(" ")[0].replace("T", " ").rstrip("Z")
    assert ran.split(" ", 1)[1] == "claude session-start context"
    assert (out.returncode, out.stderr) == (0, "")
    assert out.stdout == (
        "claude: 5 hooks in .claude/settings.json\n"
        f"  SessionStart        {READY}; last ran {at} UTC and put context in\n"
        f"  PreCompact          {READY}; never ran here\n"
        f"  Stop                {READY}; this entry's command was changed by hand (agent install writes: {expected}); "
        "never ran here\n"
        f"  SessionEnd          {READY}; never ran here\n"
        f"  PostToolUseFailure  {READY}; never ran here\n"
        "  claude is not on this PATH: nothing runs these hooks here until it is "
        "(npm install -g @anthropic-ai/claude-code)\n"
        f"  the model's shell ({SHELL} -c 'command -v git-continuity') finds {BIN / 'git-continuity'}\n"
        f"codex: 5 hooks in .codex/hooks.json, each {READY}\n"
        "  SessionStart  trusted; never ran here\n"
        "  PreCompact    changed since it was trusted (open /hooks in Codex and trust it again); never ran here\n"
        "  Stop          trusted; never ran here\n"
        "  SessionEnd    not trusted yet (open /hooks in Codex and trust it); never ran here\n"
        "  PostToolUse   not trusted yet (open /hooks in Codex and trust it); never ran here\n"
        "  codex is not on this PATH: nothing runs these hooks here until it is (npm install -g @openai/codex)\n"
        f"  the model's shell ({SHELL} -lc 'command -v git-continuity') does not find git-continuity: the brief tells "
        f"the model to run {BIN / 'git-continuity'}\n"
        "gemini: not installed here (git continuity agent install gemini)\n"
        f"(each hook run adds a line to {repo / '.git' / 'continuity' / 'agent-hooks.log'})\n"
    )
    document = json.loads(ok(repo, "agent", "status", "--json"))
    codex = document["agents"][1]
    assert codex["project_trusted"] is True
    assert [(h["event"], h["trust"]) for h in codex["hooks"]] == [
        ("SessionStart", "trusted"),
        ("PreCompact", "modified"),
        ("Stop", "trusted"),
        ("SessionEnd", "untrusted"),
        ("PostToolUse", "untrusted"),
    ]

    # The tool recorded here is gone and none is on PATH: each hook's launcher says so, as the
    # agent would be told.
    gone = "/nowhere/git-continuity-hook"
    (repo / ".git" / "continuity" / "agents" / "hook-program").write_text(gone + "\n")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [str(BIN / "git-continuity"), "agent", "status", "--json"], cwd=repo, capture_output=True, text=True, env=env
    )
    claude = json.loads(out.stdout)["agents"][0]
    said = f"git-continuity-hook is neither at {gone} nor on PATH, so "
    fix = "; install git-continuity where this agent finds it (or run: git continuity agent install claude)"
    assert [(h["event"], h["runs"], h["program"], h["why"]) for h in claude["hooks"]] == [
        (
            "SessionStart",
            False,
            None,
            said + "this session gets no continuity brief, no closure gate and no handoff" + fix,
        ),
        ("PreCompact", False, None, said + "no handoff was recorded before this compaction" + fix),
        (
            "Stop",
            False,
            None,
            said + "the closure gate did not run" + fix + f"; this entry's command was changed by "
            f"hand (agent install writes: {expected})",
        ),
        ("SessionEnd", False, None, said + "no handoff was recorded at the end of this session" + fix),
        ("PostToolUseFailure", False, None, said + "nothing notices a failing command retried in a loop" + fix),
    ]


def test_installed_hooks_is_what_doctor_reads(repo: Path, codex_home: Path) -> None:
    ok(repo, "agent", "install", "claude")
    found = agent_probe.installed_hooks(repo, common_dir=repo / ".git")
    assert [(c.agent, c.event, c.action, c.position, c.runs, c.program, c.trust, c.why) for c in found] == [
        ("claude", event, action, (0, 0), True, HOOK, None, READY)
        for event, action in (
            ("SessionStart", "session-start"),
            ("PreCompact", "pre-compact"),
            ("Stop", "stop"),
            ("SessionEnd", "session-end"),
            ("PostToolUseFailure", "post-tool-use"),
        )
    ]


def test_a_hook_recorded_at_a_path_holding_a_space_runs_from_there(
    repo: Path, codex_home: Path, tmp_path: Path
) -> None:
    spaced = tmp_path / "my tools"
    spaced.mkdir()
    hook = spaced / "git-continuity-hook"
    hook.write_bytes((BIN / "git-continuity-hook").read_bytes())
    hook.chmod(0o755)
    ok(repo, "agent", "install", "claude")
    (repo / ".git" / "continuity" / "agents" / "hook-program").write_text(f"{hook}\n")
    events = ("SessionStart", "PreCompact", "Stop", "SessionEnd", "PostToolUseFailure")
    assert [(c.event, c.program) for c in agent_probe.installed_hooks(repo, common_dir=repo / ".git")] == [
        (event, str(hook)) for event in events
    ]


def test_install_and_status_name_a_shell_that_cannot_start_and_an_agent_not_on_path(
    repo: Path, codex_home: Path
) -> None:
    env = {**os.environ, "SHELL": "/nowhere/bash", "PATH": f"{BIN}:/usr/bin:/bin"}
    out = ok(repo, "agent", "install", "codex", env=env)
    assert out.endswith(
        "warning: the model's shell (/nowhere/bash -lc 'command -v git-continuity') cannot be started: "
        "[Errno 2] No such file or directory: '/nowhere/bash'\n"
    )
    status = ok(repo, "agent", "status", env=env).splitlines()
    assert "  codex is not on this PATH: nothing runs these hooks here until it is (npm install -g @openai/codex)" in (
        status
    )
    assert (
        "  the model's shell (/nowhere/bash -lc 'command -v git-continuity') cannot be started: "
        "[Errno 2] No such file or directory: '/nowhere/bash'"
    ) in status
