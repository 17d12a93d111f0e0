"""The tour's chapter on forward progress and the stop-loss: the same failure in three
sessions, the budget spent, and what the next session is told first."""

from __future__ import annotations

import json

from git_continuity.commands.demo import Tour, made
from git_continuity.commands.demo.story import world

BUILD = "echo building the image; echo 'step 4/9: RUN make' >&2; echo 'error: libfoo.so.3 not found' >&2; exit 2\n"


def progress(t: Tour) -> None:
    world(t)
    t.say(
        "Chapter progress. A thread 'Docker build passes' checks that sh build.sh exits 0 (a cmd: check\n"
        "runs only once a person approves its exact command, at their terminal), with a budget: what the thread\n"
        "may spend, here 3 attempts over 3 sessions. An attempt is a check of the thread that ends not\n"
        "verified; what it observed is kept as a fingerprint, so that the same failure is seen as such."
    )
    t.write("work", "build.sh", BUILD)
    t.run("work", "git", "add", "build.sh")
    t.run("work", "git", "commit", "-q", "-m", "Build the image")
    t.run("work", "git", "continuity", "trust", "allow", "sh build.sh", terminal=True)
    opened = t.run(
        "work",
        "git",
        "continuity",
        "thread",
        "add",
        "Docker build passes",
        "--check",
        "cmd:sh build.sh",
        "--budget",
        "attempts=3,sessions=3",
    )
    thread = made(opened, "t")
    shown = json.loads(t.quiet("work", "git", "continuity", "thread", "show", thread, "--json"))
    check = shown["thread"]["checks"][0]["id"]
    said = {
        1: "Session 1 orients (the first lines shown), tries the build, and hands off:",
        2: "Session 2 does the same, and the build fails the same way:",
        3: "Session 3 again. Its attempt spends the budget, and the stop-loss blocks the thread:",
    }
    for n, text in said.items():
        t.say(text)
        t.run("work", "git", "continuity", "orient", head=r"^Session s-")
        t.run("work", "git", "continuity", "verify", check, expect=1)
        t.run("work", "git", "continuity", "handoff", "--note", f"try {n}: the build cannot find libfoo", head=1)
    t.say(
        "The next session's brief leads with it: no progress, the same observation each time, the\n"
        "budget spent, and the two ways on (change the approach, or leave it blocked and say why):"
    )
    t.run("work", "git", "continuity", "orient", head=r"made no progress")
    t.say("progress shows each thread's attempts over time, when what it fails changed, the budget spent:")
    t.run("work", "git", "continuity", "progress", thread)
