"""The tour's short story: a push that was rejected, seen as contradicted by a fresh session;
a false close refused at the commit being made; a teammate, with a home and a key of her own,
trusting the team's list at her terminal and taking the state in."""

from __future__ import annotations

from git_continuity.commands.demo import Tour, made

LOOP = 'def login(session):\n    return "/login"\n'
FIXED = (
    'def next_url(session):\n    return session.get("next", "/")\n\n\n'
    + "def login(session):\n    return next_url(session)\n"
)
TIDY = 'def login(session):\n    return session.get("next", "/")\n'
WHY = "users bounce back to /login"
BRIEF = 260  # tokens: the brief without the parts that the story does not need
TEST = 'from app import login\n\nassert login({"next": "/cart"}) == "/cart", "signing in leads back to /login"\n'


def story(t: Tour) -> None:
    t.print(f"git-continuity demo: the short story, in a throwaway folder {t.root}")
    t.print(
        "Every command below really runs; what follows it is its real output. origin.git is a bare\n"
        "repository standing in for the server; work/ is the agent's clone, mate/ a teammate's (her own\n"
        "home, her own key)."
    )
    t.quiet(".", "git", "init", "-q", "--bare", "origin.git")
    t.quiet(".", "git", "clone", "-q", "origin.git", "work")
    t.write("work", "app.py", LOOP)
    t.write("work", "README", "The app.\n")
    t.quiet("work", "git", "add", "app.py", "README")
    t.quiet("work", "git", "commit", "-q", "-m", "Initial app")
    t.quiet("work", "git", "push", "-q", "origin", "main")
    t.quiet(".", "git", "clone", "-q", "origin.git", "mate")
    rejected(t)
    refused(t)
    taken_in(t)
    t.say(
        "That is the short story. git continuity demo --full tells the whole tour (sync, handoffs, agent\n"
        "hooks, CI and PRs, progress and stop-loss, places, siblings, repair); --chapter NAME tells one\n"
        "(demo -h lists them)."
    )


def rejected(t: Tour) -> None:
    t.say(
        "Session 1. The agent keeps the state of its line of work (a stream, `main` by default) on a ref\n"
        "of its own, never on a branch; the packet, that current state, starts with the objective:"
    )
    t.run(
        "work",
        "git",
        "continuity",
        "init",
        "--no-fetch-refspecs",
        elide=(r"(Next:|  git continuity |$)", "the commands to run next"),
    )
    t.run("work", "git", "continuity", "objective", "set", "Fix the login loop", "--why", WHY)
    t.say("Every state commit is signed. The agent's key goes on the team's list, committed with the code:")
    t.run("work", "git", "continuity", "trust", "team", "join", elide=(r"(Commit and push|  git add)", "how"))
    t.run("work", "git", "add", ".continuity.yaml")
    t.run("work", "git", "commit", "-q", "-m", "Join the signers")
    t.say("It commits a fix. Meanwhile the teammate pushes release notes, so the agent's push is rejected:")
    t.write("work", "app.py", FIXED)
    t.run("work", "git", "commit", "-q", "-am", "Fix the login loop")
    t.write("mate", "README", "The app.\n\n1.2: the login loop is fixed.\n")
    t.run("mate", "git", "commit", "-q", "-am", "Add release notes")
    t.run("mate", "git", "push", "-q")
    t.run("work", "git", "push", "-q", expect=1)
    t.say(
        "Not reading the error, the agent records a claim: a statement plus a handle, an address that\n"
        "re-derives it (here: this commit is on origin/main). Checking a handle is a dereference; the\n"
        "tool does one at once, so this claim is contradicted from the start. One without a handle is\n"
        "prose: shown, never trusted."
    )
    t.run("work", "git", "continuity", "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main")
    t.run("work", "git", "continuity", "claim", "add", "the reviewers are happy")

    t.say(
        f"Session 2, after a context reset, knows nothing. It starts with orient (a brief, cut here to {BRIEF}\n"
        "tokens), which re-derives every claim from the real refs now and leads with what is not true:"
    )
    brief = t.run("work", "git", "continuity", "orient", "--max-tokens", str(BRIEF))
    stale = made(brief, "c")
    t.say(
        "It acts on the truth: rebase, push, claim it again, and retract the old claim so that no later\n"
        "brief repeats it (the journal keeps what it said, and why):"
    )
    t.run("work", "git", "pull", "-q", "--rebase")
    t.run("work", "git", "push", "-q")
    added = t.run(
        "work", "git", "continuity", "claim", "add", "the rebased fix is pushed", "--check", "pushed:HEAD@origin/main"
    )
    t.run("work", "git", "continuity", "claim", "retract", stale, "--why", f"rejected; {made(added, 'c')} replaces it")


def refused(t: Tour) -> None:
    t.say(
        "'Done' means verified. The agent installs the git hooks and opens a thread, a piece of work\n"
        "that is done only when its acceptance checks verify; here, a regression test must be in the tree."
    )
    t.run("work", "git", "continuity", "hooks", "install", elide=(r"installed ", "'installed …', one per hook"))
    opened = t.run(
        "work", "git", "continuity", "thread", "add", "The login loop is fixed", "--check", "file:test_login.py"
    )
    thread = made(opened, "t")
    t.say(
        "It commits a tidy-up whose message says it closes the thread, without writing the test. The\n"
        "commit-msg hook judges the commit being made and refuses it: no commit, nothing marked done."
    )
    t.write("work", "app.py", TIDY)
    t.run("work", "git", "commit", "-q", "-am", f"Tidy login(); closes {thread}", expect=1)
    t.run("work", "git", "log", "--oneline", "-1")
    t.say(
        "It writes the test and makes the same commit with it. The check verifies in the commit being\n"
        "made, so the commit goes through; the close is recorded once the commit exists, naming it, with\n"
        "the evidence (the record of each dereference):"
    )
    t.write("work", "test_login.py", TEST)
    t.run("work", "git", "add", "test_login.py")
    t.run("work", "git", "commit", "-q", "-am", f"Tidy login(); closes {thread}")
    t.run("work", "git", "continuity", "thread", "show", thread)


def taken_in(t: Tour) -> None:
    t.say("The agent pushes its branch, then the state, which git push does not carry:")
    t.run("work", "git", "push", "-q")
    t.run("work", "git", "continuity", "push")
    t.say(
        "Session 3, on the teammate's machine. She trusts the keys on the team's list once she has looked\n"
        "at them: a person's act, at her terminal (an agent's call is refused). One step, then pull:"
    )
    t.run("mate", "git", "pull", "-q")
    t.run("mate", "git", "continuity", "trust", "team", elide=(r"Not accepted|1 key is", "not trusted yet"))
    t.run("mate", "git", "continuity", "trust", "team", "accept", terminal=True, head=2)
    t.run("mate", "git", "continuity", "pull")
    t.say("status derives the state here: the thread done, the claims checked again, the retracted one in the journal:")
    t.run(
        "mate",
        "git",
        "continuity",
        "status",
        elide=(r"(Objective|  why|  set|Next|Blockers|  none|Warnings|  no closure|$)", "the rest"),
    )


def world(t: Tour) -> None:
    """What the short story leaves (origin.git; work/, the agent's clone, with state and the git
    hooks; mate/, a teammate's clone with the state), built without a word when a chapter is
    told alone."""
    if (t.root / "work" / ".git").exists():
        team(t)  # after the short story, the agent's person trusts the teammate's key too
        return
    t.say(
        "The setting, built quietly (the short story shows it step by step): origin.git, a bare\n"
        "repository standing in for the server; work/, the agent's clone, keeping state with the git\n"
        "hooks installed; mate/, a teammate's clone that has taken the state in."
    )
    t.quiet(".", "git", "init", "-q", "--bare", "origin.git")
    t.quiet(".", "git", "clone", "-q", "origin.git", "work")
    t.write("work", "app.py", FIXED)
    t.write("work", "test_login.py", TEST)
    t.quiet("work", "git", "add", "app.py", "test_login.py")
    t.quiet("work", "git", "commit", "-q", "-m", "Fix the login loop")
    t.quiet("work", "git", "push", "-q", "origin", "main")
    t.quiet("work", "git", "continuity", "init", "--no-fetch-refspecs")
    t.quiet("work", "git", "continuity", "hooks", "install")
    t.quiet("work", "git", "continuity", "objective", "set", "Fix the login loop", "--why", WHY)
    t.quiet("work", "git", "continuity", "push")
    t.quiet("work", "git", "continuity", "trust", "team", "join")
    t.quiet("work", "git", "add", ".continuity.yaml")
    t.quiet("work", "git", "commit", "-q", "-m", "Join the signers")
    t.quiet("work", "git", "push", "-q", "origin", "main")
    t.quiet(".", "git", "clone", "-q", "origin.git", "mate")
    team(t)
    t.quiet("mate", "git", "continuity", "pull")


def team(t: Tour) -> None:
    """Each of the two trusts the other's key: the teammate accepts the list and puts her own key
    on it, the agent's person accepts it in turn (each at their terminal), told without a word."""
    if t.teamed:
        return
    t.teamed = True
    t.quiet("mate", "git", "pull", "-q")
    t.run("mate", "git", "continuity", "trust", "team", "accept", show=False, terminal=True)
    t.quiet("mate", "git", "continuity", "trust", "team", "join")
    t.quiet("mate", "git", "commit", "-q", "-m", "Mate joins the signers", ".continuity.yaml")
    t.quiet("mate", "git", "push", "-q")
    t.quiet("work", "git", "pull", "-q")
    t.run("work", "git", "continuity", "trust", "team", "accept", show=False, terminal=True)
