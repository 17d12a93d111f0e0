"""The tour's chapter on planning: threads that wait for others, the ready queue by priority,
and two agents on two clones claiming work so that neither takes up what the other holds."""

from __future__ import annotations

from git_continuity.commands.demo import Tour, made
from git_continuity.commands.demo.story import world


def planning(t: Tour) -> None:
    world(t)
    t.say(
        "Chapter planning. Threads say what they wait for (--after) and how urgent they are (--priority,\n"
        "0 first); ready is the queue of open threads whose --after threads are done, by priority then age:"
    )
    write = made(t.run("work", "git", "continuity", "thread", "add", "Write the migration", "--check", "tag:v2"), "t")
    t.run("work", "git", "continuity", "thread", "add", "Run the migration", "--after", write, "--priority", "1")
    login = made(t.run("work", "git", "continuity", "thread", "add", "Fix the session timeout", "--priority", "0"), "t")
    t.run("work", "git", "continuity", "ready")
    t.say(
        "Two agents share the work, one on each clone. The first claims the most urgent thread and syncs;\n"
        "the second, after its own sync, sees who holds it, and is refused when it tries to take it too:"
    )
    t.run("work", "git", "continuity", "thread", "claim", login)
    t.quiet("work", "git", "continuity", "sync")
    t.quiet("mate", "git", "continuity", "sync")
    t.run("mate", "git", "continuity", "ready")
    t.run("mate", "git", "continuity", "thread", "claim", login, expect=2)
    t.run("mate", "git", "continuity", "thread", "claim", write)
    t.say(
        "A claim ends with its session's handoff; --steal takes one over, and says whose it was. A thread\n"
        "dropped without being finished is cancelled, with why: it never gates a stop, nor counts as done."
    )
