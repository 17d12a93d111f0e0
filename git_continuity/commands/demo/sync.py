"""The tour's chapters on travelling state: two clones changing it at once (sync), and a
session handing off to the next on another machine (handoff)."""

from __future__ import annotations

from git_continuity.commands.demo import Tour, made
from git_continuity.commands.demo.story import world


def sync(t: Tour) -> None:
    """Changes made on two clones at once merge field by field."""
    world(t)
    t.say(
        "Chapter sync. Both clones change the state at once, neither seeing the other: each sets the\n"
        "next action (one value) and writes in the journal (entries, each one kept):"
    )
    t.run("work", "git", "continuity", "next", "announce 1.2 on the mailing list")
    t.run("work", "git", "continuity", "journal", "add", "1.2 is out")
    t.run("mate", "git", "continuity", "next", "write the release notes for 1.2")
    t.run("mate", "git", "continuity", "journal", "add", "drafting the release notes")
    t.say(
        "Both sync (pull, then push). The merge goes field by field: both journal entries are kept; the\n"
        "next action, changed on both sides, keeps the later change and records the other as a conflict:"
    )
    t.run("work", "git", "continuity", "sync")
    t.run("mate", "git", "continuity", "sync")
    t.run("work", "git", "continuity", "pull")
    listed = t.run("work", "git", "continuity", "conflict", "list")
    t.run("work", "git", "continuity", "journal", "-n", "2")
    t.say("Once looked at, the conflict is dismissed; the dismissal syncs like any change:")
    t.run("work", "git", "continuity", "conflict", "dismiss", made(listed, "x"))
    t.run("work", "git", "continuity", "sync")


def handoff(t: Tour) -> None:
    """A session hands off; the next, on a fresh clone elsewhere, orients on what is true now."""
    world(t)
    t.say(
        "Chapter handoff. A session starts with orient (here its first lines), which opens a session\n"
        "that every entry written from then on names. The work moves on to a new objective (the old\n"
        "one and why it changed are kept), on a branch, with a thread for the release:"
    )
    t.run("work", "git", "continuity", "orient", head=3)
    t.run("work", "git", "continuity", "objective", "set", "Ship 1.3: stay signed in", "--why", "1.2 is out; users ask")
    t.run("work", "git", "continuity", "next", "finish the remember-me cookie on branch remember-me")
    t.run("work", "git", "switch", "-q", "-c", "remember-me")
    t.write("work", "remember.py", "def remember(user):\n    return cookie(user, days=30)\n")
    t.run("work", "git", "add", "remember.py")
    t.run("work", "git", "commit", "-q", "-m", "Remember the user for 30 days")
    t.run("work", "git", "continuity", "thread", "add", "Release 1.3", "--check", "tag:v1.3")
    t.say(
        "The context window fills up while forget() is half written. The handoff writes what the next\n"
        "session needs (the objective and why, what this session did, the work tree, open threads, the\n"
        "next action) on the state ref; with the agent hooks installed, Claude Code runs it before compacting:"
    )
    t.write("work", "remember.py", (t.root / "work" / "remember.py").read_text() + "\n\ndef forget(user):\n    ...\n")
    t.run("work", "git", "continuity", "handoff", "--note", "forget() is a stub; the cookie must be HttpOnly")
    t.run("work", "git", "push", "-q", "origin", "remember-me")
    t.run("work", "git", "continuity", "push")
    t.say(
        "The next session is on a laptop, in a fresh clone. A plain clone does not fetch the state, and\n"
        "orient says so (exit 1) rather than show an empty state as if it were the truth:"
    )
    t.run(".", "git", "clone", "-q", "origin.git", "laptop")
    t.run("laptop", "git", "continuity", "orient", expect=1)
    t.run("laptop", "git", "continuity", "pull")
    t.say(
        "It switches to the branch the next action names and orients again: the open thread, the work\n"
        "tree (the desk's uncommitted forget() did not travel), and what moved since the handoff:"
    )
    t.run("laptop", "git", "switch", "-q", "remember-me")
    t.run("laptop", "git", "continuity", "orient")
