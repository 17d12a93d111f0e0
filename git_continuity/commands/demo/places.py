"""The tour's chapter on places: a donor worktree that orient names as such, pointing at the
home, and whose commits the hooks refuse."""

from __future__ import annotations

from git_continuity.commands.demo import Tour
from git_continuity.commands.demo.story import world


def places(t: Tour) -> None:
    world(t)
    t.say(
        "Chapter places. Long work leaves worktrees behind. The agent keeps the old parser in a linked\n"
        "worktree, work-old, to copy parts from. A place is a branch or a checkout with a role: the main\n"
        "checkout (named here by its folder, work) is the home, where work happens; work-old is a donor.\n"
        "A checkout's role is kept by the branch it has checked out, so every clone finds its own."
    )
    t.run("work", "git", "worktree", "add", "-q", "-b", "old-parser", "../work-old")
    t.run("work", "git", "continuity", "place", "set", "work", "home", "--why", "the implementation lives here")
    t.run(
        "work", "git", "continuity", "place", "set", "work-old", "donor", "--why", "the old parser: copy, never commit"
    )
    t.run("work", "git", "continuity", "place", "list")
    t.say("The roles travel with the state. On the teammate's clone, mate/, the home is mate's own\ncheckout of main:")
    t.run("work", "git", "continuity", "push", show=False)
    t.run("mate", "git", "continuity", "pull", show=False)
    t.run("mate", "git", "continuity", "place", "list", head=1)
    t.say("A later session starts in work-old by mistake. orient leads with where it is, and where work happens:")
    t.run("work-old", "git", "continuity", "orient", head=r"onor")
    t.say("The hooks refuse a commit there, naming the home and how to commit there on purpose:")
    t.write("work-old", "app.py", (t.root / "work-old" / "app.py").read_text() + "\n# parse the old way\n")
    t.run("work-old", "git", "commit", "-q", "-am", "Parse the old way", expect=1)
