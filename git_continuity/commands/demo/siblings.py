"""The tour's chapter on siblings: one thread whose checks live in three repositories, each
dereferenced in its own, closing only when all hold."""

from __future__ import annotations

from git_continuity.commands.demo import Tour, made
from git_continuity.commands.demo.story import world


def siblings(t: Tour) -> None:
    world(t)
    for name in ("api", "consumer"):
        t.quiet(".", "git", "init", "-q", "--bare", f"{name}.git")
        t.quiet(".", "git", "clone", "-q", f"{name}.git", name)
        t.quiet(name, "git", "commit", "-q", "--allow-empty", "-m", "first")
        t.quiet(name, "git", "push", "-q", "origin", "HEAD:main")
    t.write("consumer", "check.sh", "grep -q token ../api/field.txt\n")
    t.say(
        "Chapter siblings. The work spans repositories: the API (api/) and a consumer of it\n"
        "(consumer/), each with its own remote. They join the stream as siblings (the name is synced;\n"
        "the folder is this machine's own), and a check scoped with @NAME: runs in that repository:"
    )
    t.run("work", "git", "continuity", "repo", "add", "api", "../api")
    t.run("work", "git", "continuity", "repo", "add", "consumer", "../consumer")
    t.say("The API gets the field (committed, not pushed yet), and the thread names what must hold:")
    t.write("api", "field.txt", "token\n")
    t.run("api", "git", "add", "field.txt")
    t.run("api", "git", "commit", "-q", "-m", "Add the token field")
    added = t.run(
        "work",
        "git",
        "continuity",
        "thread",
        "add",
        "The consumer shows the token field",
        "--check",
        "@api:pushed:HEAD@origin/main",
        "--check",
        "file:docs/token.md",
        "--check",
        "@consumer:cmd:sh check.sh",
    )
    thread = made(added, "t")
    t.say("Closing now is refused: each check is dereferenced in its own repository, and none holds:")
    t.run("work", "git", "continuity", "thread", "close", thread, expect=1)
    t.say("The API pushes; the docs land here; the consumer's check is approved there, where it runs:")
    t.run("api", "git", "push", "-q", "origin", "HEAD:main")
    (t.root / "work" / "docs").mkdir(exist_ok=True)
    t.write("work", "docs/token.md", "The token field.\n")
    t.run("work", "git", "add", "docs/token.md")
    t.run("work", "git", "commit", "-q", "-m", "Document the token field")
    t.run("consumer", "git", "continuity", "trust", "allow", "sh check.sh", terminal=True)
    t.say("Now all three hold, each where it lives, and the thread closes:")
    t.run("work", "git", "continuity", "thread", "close", thread)
