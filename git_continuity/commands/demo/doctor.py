"""The tour's chapter on repair: a teammate pushes a malformed state past every check, with
plain git; pull refuses it, doctor names it and repairs it by a new commit, and push mends the
remote as a fast-forward."""

from __future__ import annotations

from git_continuity.commands.demo import Tour
from git_continuity.commands.demo.story import world

BAD = '{"id": "c-222222", "text": "the fix is pushed",\n<<<<<<< HEAD\n'


def doctor(t: Tour) -> None:
    world(t)
    t.quiet("mate", "git", "continuity", "pull")
    # The teammate's git signs her commits (with the key git-continuity made for her).
    for key, value in (("gpg.format", "ssh"), ("commit.gpgSign", "true")):
        t.quiet("mate", "git", "config", key, value)
    signing = t.root / "mate-home" / "config" / "git-continuity" / "signing_ed25519"
    t.quiet("mate", "git", "config", "user.signingKey", str(signing))
    t.say(
        "Chapter doctor. The teammate edits the state by hand with plain git, past every check: a claim\n"
        "file left with a conflict marker, committed (signed) on a checkout of the state ref and pushed:"
    )
    t.run("mate", "git", "worktree", "add", "-q", "--detach", "../mate-state", "refs/continuity/main")
    t.quiet("mate-state", "mkdir", "-p", ".continuity/claims")
    t.write("mate-state", ".continuity/claims/c-222222.json", BAD)
    t.run("mate-state", "git", "add", ".continuity/claims/c-222222.json")
    t.run("mate-state", "git", "commit", "-q", "-m", "Hand edit")
    t.run("mate-state", "git", "push", "-q", "origin", "HEAD:refs/continuity/main")
    t.say("The agent's pull refuses to take it in (exit 2), naming the file and how to repair it:")
    t.run("work", "git", "continuity", "pull", expect=2)
    t.say(
        "doctor reads everything around the state (refs, notes, locks, refspecs, hooks, trust, policy)\n"
        "and prints each problem with its fix; --fix moves the bad file into a quarantine folder by a new\n"
        "state commit on top of origin's (nothing deleted, no force push), and push mends the remote:"
    )
    t.run("work", "git", "continuity", "doctor", expect=1)
    t.run("work", "git", "continuity", "doctor", "--fix", expect=1)
    t.run("work", "git", "continuity", "push")
    t.run("work", "git", "continuity", "doctor")
    t.say("The teammate's next pull is a fast-forward again:")
    t.run("mate", "git", "continuity", "pull")
