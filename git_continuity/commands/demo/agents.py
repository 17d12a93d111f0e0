"""The tour's chapter on a coding agent's hooks: what Claude Code gets at session start, and
the closure gate it meets when it would stop with a thread still open."""

from __future__ import annotations

import json

from git_continuity.commands.demo import Tour, made
from git_continuity.commands.demo.story import world


def hook_input(t: Tour, where: str, **fields: object) -> str:
    """What Claude Code writes on a hook's stdin (the fields the hooks read)."""
    return json.dumps({"session_id": "demo", "cwd": str(t.root / where), **fields})


def agents(t: Tour) -> None:
    world(t)
    t.say(
        "Chapter agents. agent install wires the routine into Claude Code's hooks, for every clone (the\n"
        "settings and the small launcher they run are committed): orient at session start, a handoff\n"
        "before each compaction and at the end, and the closure gate when the agent would stop."
    )
    t.run(
        "work",
        "git",
        "continuity",
        "agent",
        "install",
        "claude",
        elide=(r"\.claude/settings\.json: ", "'.claude/settings.json: … runs …', one per hook"),
    )
    t.run("work", "git", "add", ".claude")  # the settings and the launcher they run
    t.run("work", "git", "commit", "-q", "-m", "Claude Code runs git-continuity's hooks")
    opened = t.run("work", "git", "continuity", "thread", "add", "Release 1.2 is tagged", "--check", "tag:v1.2=HEAD")
    thread = made(opened, "t")
    t.say(
        "At session start Claude Code runs the hook with a JSON object on stdin; the brief in its answer\n"
        "reaches the model as context. (JSON answers are shown indented here, a text broken after each \\n.)"
    )
    t.run(
        "work",
        "git-continuity-hook",
        "agent",
        "claude",
        "session-start",
        stdin=hook_input(t, "work", hook_event_name="SessionStart", source="startup"),
        as_json=True,
    )
    t.say(
        "The agent starts on the release notes. When it would stop with the release thread still open,\n"
        "the Stop hook answers with the reason it may not stop yet, which Claude Code gives back to the\n"
        "model (a session that changed nothing, one that only answered a question, may stop):"
    )
    t.run("work", "touch", "CHANGES.txt")
    stop = hook_input(t, "work", hook_event_name="Stop", stop_hook_active=False)
    t.run("work", "git-continuity-hook", "agent", "claude", "stop", stdin=stop, as_json=True)
    t.say(
        "The agent does the work: it tags the release and pushes. Now the gate lets it stop, and says\n"
        "the thread verifies; closing it is the agent's own act, never the gate's:"
    )
    t.run("work", "git", "tag", "v1.2")
    t.run("work", "git", "push", "-q", "origin", "main", "v1.2")
    t.run("work", "git-continuity-hook", "agent", "claude", "stop", stdin=stop, as_json=True)
    t.run("work", "git", "continuity", "thread", "close", thread)
    t.run("work", "git", "continuity", "thread", "show", thread)
