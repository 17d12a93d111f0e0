"""A guided tour: real repositories and a real bare remote in a temporary folder, real
commands, their real output."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from git_continuity.errors import UserError

HOSTS = {"work": "desk", "mate": "mate-pc", "laptop": "laptop"}


class Tour:
    """Runs each step for real, prints it as a user would type it, and stops the tour when a
    step does not exit as the story expects."""

    def __init__(self, root: Path) -> None:
        self.root = root
        config = root / "gitconfig"
        config.write_text(
            "[user]\n\tname = Demo Agent\n\temail = agent@demo.invalid\n"
            "[init]\n\tdefaultBranch = main\n"
            "[advice]\n\tdetachedHead = false\n\tpushUpdateRejected = false\n"
        )
        # The user's own git config is left out so that signing, hooks or aliases there
        # cannot change the story; nothing outside this folder is written.
        self.env = {
            **os.environ,
            "GIT_CONFIG_GLOBAL": str(config),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_EDITOR": "true",
            # git-continuity-hook of the same installation, as an agent's hook would find it.
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
        for name in (
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_CONTINUITY_STREAM",
            "GIT_CONTINUITY_SESSION",
            "GIT_CONTINUITY_AGENT",
            "GIT_CONTINUITY_BRIEF_TOKENS",
            # The story's author is the demo's agent, whoever runs it.
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "GIT_COMMITTER_DATE",
        ):
            self.env.pop(name, None)

    def say(self, text: str) -> None:
        print(f"\n{text}", flush=True)

    def run(
        self,
        where: str,
        *args: str,
        expect: int = 0,
        show: bool = True,
        elide: tuple[str, str] | None = None,
    ) -> str:
        """Run one step. ``elide`` is (pattern, what): output lines matching the pattern are
        left out of what is printed, and one line says how many and what they were."""
        argv = list(args)
        if argv[:2] == ["git", "continuity"]:
            # The same installation that runs this demo, whatever is first on PATH.
            argv = [sys.executable, "-m", "git_continuity", *argv[2:]]
        cwd = self.root / where
        # Each clone stands for a machine of its own, named so in what it writes.
        env = {**self.env, "GIT_CONTINUITY_HOST": HOSTS.get(where, "desk")}
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        output = (done.stdout + done.stderr).rstrip()
        if show:
            print(f"  {'' if where == '.' else where}$ {shlex.join(args)}", flush=True)
            lines = output.splitlines()
            if elide:
                pattern, what = elide
                left = [i for i, line in enumerate(lines) if re.match(pattern, line)]
                if left:
                    lines = [line for i, line in enumerate(lines) if i not in left]
                    lines.insert(left[0], f"[{len(left)} lines left out: {what}]")
            if lines:
                print("\n".join(f"    {line}" for line in lines), flush=True)
        if done.returncode != expect:
            raise UserError(
                f"demo step `{shlex.join(args)}` in {cwd} exited {done.returncode}, expected {expect}:\n{output}"
            )
        return done.stdout


def demo(*, keep: bool) -> int:
    if shutil.which("git") is None:
        raise UserError("git is not on PATH; install git first")
    root = Path(tempfile.mkdtemp(prefix="git-continuity-demo-"))
    try:
        tour(Tour(root))
    finally:
        if keep:
            print(f"\nThe demo folder is kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def tour(t: Tour) -> None:
    """The chapters, in order; each builds on the repositories the one before left."""
    from git_continuity.commands.demo_forge import forges  # its stand-in server is not loaded otherwise

    truth(t)
    closure(t)
    travel(t)
    sessions(t)
    forges(t)
    stop(t)
    t.say("Next steps in your own repository: git continuity init, then git continuity -h.")


def truth(t: Tour) -> None:
    """A session's push is rejected; a fresh session sees the truth, not the stored prose."""
    t.say(
        f"git-continuity demo, in a throwaway folder {t.root}\n"
        "A bare repository, origin.git, stands in for the server; 'work' is the agent's clone, 'mate' a\n"
        "teammate's. Both hold app.py, already pushed."
    )
    t.run(".", "git", "init", "-q", "--bare", "origin.git", show=False)
    t.run(".", "git", "clone", "-q", "origin.git", "work", show=False)
    (t.root / "work" / "app.py").write_text("def login():\n    return redirect('/login')\n")
    t.run("work", "git", "add", "app.py", show=False)
    t.run("work", "git", "commit", "-q", "-m", "Initial app", show=False)
    t.run("work", "git", "push", "-q", "origin", "main", show=False)
    t.run(".", "git", "clone", "-q", "origin.git", "mate", show=False)

    t.say("Session 1. The agent starts keeping state. It lives on refs/continuity/main, not on a branch:")
    t.run("work", "git", "continuity", "init")
    t.run(
        "work",
        "git",
        "continuity",
        "objective",
        "set",
        "Fix the login loop",
        "--why",
        "users bounce back to /login after signing in",
    )
    t.run("work", "git", "continuity", "next", "push the fix, then tag v1.2")
    t.run("work", "git", "continuity", "journal", "add", "reproduced the loop with an expired session cookie")

    t.say("It commits a fix to app.py. Meanwhile the teammate pushes release notes, so the agent's push\nis rejected:")
    (t.root / "work" / "app.py").write_text("def login():\n    return redirect(next_url())\n")
    t.run("work", "git", "commit", "-q", "-am", "Fix the login loop")
    (t.root / "mate" / "NOTES").write_text("release notes\n")
    t.run("mate", "git", "add", "NOTES")
    t.run("mate", "git", "commit", "-q", "-m", "Add release notes")
    t.run("mate", "git", "push", "-q", "origin", "main")
    t.run("work", "git", "push", "-q", "origin", "main", expect=1)

    t.say(
        "The agent records what it believes as claims, each with a handle that re-derives it (revisions\n"
        "are resolved to full ids now, so HEAD cannot drift). The tool checks each handle at once: the\n"
        "push claim is already contradicted, and the claim without a handle is prose, never trusted:"
    )
    t.run("work", "git", "continuity", "claim", "add", "the fix is pushed", "--check", "pushed:HEAD@origin/main")
    t.run("work", "git", "continuity", "claim", "add", "the reviewers are happy")

    t.say(
        "Session 2: a fresh process that knows nothing. status derives every claim's state now,\n"
        "from the actual refs, not from what session 1 wrote:"
    )
    t.run("work", "git", "continuity", "status")

    t.say("It acts on the truth: rebase on the release notes, push, and prove it against the remote itself:")
    t.run("work", "git", "pull", "-q", "--rebase", "origin", "main")
    t.run("work", "git", "push", "-q", "origin", "main")
    added = t.run(
        "work", "git", "continuity", "claim", "add", "the rebased fix is pushed", "--check", "pushed:HEAD@origin/main"
    )
    t.run("work", "git", "continuity", "verify", added.split()[2].rstrip(":"), "--online")
    t.run(
        "work", "git", "continuity", "journal", "add", "rebased on the teammate's release notes and pushed; v1.2 to tag"
    )

    t.say("Every change of state is one commit on refs/continuity/main; branches were never touched:")
    t.run("work", "git", "continuity", "log", "-n", "3")
    t.run("work", "git", "status", "--short", "--branch")


def closure(t: Tour) -> None:
    """ "Done" means verified: a thread closes only when every check verifies now."""
    t.say(
        "Session 3: 'done' means verified. The agent commits a test, installs the hooks, and opens a\n"
        "thread whose acceptance checks are the release tag on HEAD, HEAD pushed, and the test suite:"
    )
    (t.root / "work" / "test_app.py").write_text(
        "import unittest\n\n\nclass Login(unittest.TestCase):\n"
        "    def test_no_loop(self):\n        self.assertTrue(True)\n"
    )
    t.run("work", "git", "add", "test_app.py")
    t.run("work", "git", "commit", "-q", "-m", "Add the login test")
    t.run("work", "git", "continuity", "hooks", "install", elide=(r"installed ", "'installed …', one per hook"))
    out = t.run(
        "work",
        "git",
        "continuity",
        "thread",
        "add",
        "Release v1.2",
        "--check",
        "tag:v1.2=HEAD",
        "--check",
        "pushed:HEAD@origin/main",
        "--check",
        "cmd:python3 -m unittest -q",
    )
    thread = out.split()[1]

    t.say(
        "Nothing is verified yet, so the commit-msg hook refuses a commit that says it closes the thread\n"
        "(git continuity thread close and git continuity check --closing refuse it the same way):"
    )
    t.run("work", "git", "commit", "-q", "--allow-empty", "-m", f"Release v1.2; closes {thread}", expect=1)

    t.say(
        "The agent does the real work: tags, pushes, and approves the test command on this machine\n"
        "(a cmd: check never runs before its exact command is approved here):"
    )
    t.run("work", "git", "tag", "v1.2")
    t.run("work", "git", "push", "-q", "origin", "main", "v1.2")
    t.run("work", "git", "continuity", "trust", "allow", "python3 -m unittest -q")
    t.run("work", "git", "commit", "-q", "--allow-empty", "-m", f"Release v1.2; closes {thread}")

    t.say("Every commit made while the stream is active carries a provenance note that travels with it:")
    t.run("work", "git", "continuity", "show", "HEAD")


def travel(t: Tour) -> None:
    """The state follows the work to another clone, and changes made on both sides at once sync."""
    t.say(
        "Session 4, on the teammate's machine. The agent pushes its branch and publishes its state. A\n"
        "git pull does not bring the state; git continuity pull does, with the commits' provenance notes:"
    )
    t.run("work", "git", "push", "-q", "origin", "main")
    t.run("work", "git", "continuity", "push")
    t.run("mate", "git", "pull", "-q", "origin", "main")
    t.run("mate", "git", "continuity", "pull")
    t.run("mate", "git", "log", "--notes=continuity", "-1", "--format=%h %s%n%N")

    t.say("Both now work at once, neither seeing the other: each sets the next action and writes the journal:")
    t.run("work", "git", "continuity", "next", "announce v1.2 on the mailing list")
    t.run("work", "git", "continuity", "journal", "add", "v1.2 is out")
    t.run("mate", "git", "continuity", "next", "write the release notes for v1.2")
    t.run("mate", "git", "continuity", "journal", "add", "drafting the release notes")

    t.say(
        "Both sync. The merge is field by field: both journal entries are kept; the next action, changed\n"
        "on both sides, keeps the later change and records the other value as a conflict to look at:"
    )
    t.run("work", "git", "continuity", "sync")
    t.run("mate", "git", "continuity", "sync")
    t.run("work", "git", "continuity", "pull")
    listed = t.run("work", "git", "continuity", "conflict", "list")
    t.run("work", "git", "continuity", "journal", "-n", "2")

    t.say("Once looked at, the conflict is dismissed; the dismissal syncs like any change:")
    t.run("work", "git", "continuity", "conflict", "dismiss", listed.split()[0])
    t.run("work", "git", "continuity", "sync")


def sessions(t: Tour) -> None:
    """A session hands off; the next, on another machine's clone, orients on what is true now."""
    t.say(
        "Session 5 starts as every session should, with orient: every claim re-derived, what must not be\n"
        "acted on first (session 1's 'the fix is pushed' named a commit the rebase replaced), then the\n"
        "objective, threads and the rest, here cut to 400 tokens. It also starts a session, whose id\n"
        "every entry written from now on carries:"
    )
    t.run("work", "git", "continuity", "orient", "--max-tokens", "400")

    t.say("v1.2 is out, so the agent sets a new objective (the old one and why it changed are kept):")
    t.run("work", "git", "continuity", "objective", "set", "Ship 1.3: stay signed in", "--why", "1.2 is out; users ask")
    t.run("work", "git", "continuity", "next", "finish the remember-me cookie on branch remember-me")

    t.say(
        "It wires the same routine into Claude Code, for every clone (the settings are committed):\n"
        "orient at session start, a handoff before each compaction, the closure gate when it would stop."
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
    t.run("work", "git", "add", ".claude/settings.json")
    t.run("work", "git", "commit", "-q", "-m", "Claude Code runs git-continuity's hooks")

    t.say(
        "It works on a branch, opens a thread for the release (its check names the tag the work will\n"
        "make), and its context window fills up while forget() is half written:"
    )
    t.run("work", "git", "switch", "-q", "-c", "remember-me")
    (t.root / "work" / "app.py").write_text(
        "def login():\n    return redirect(next_url())\n\n\ndef remember(user):\n    return cookie(user, days=30)\n"
    )
    t.run("work", "git", "commit", "-q", "-am", "Remember the user for 30 days")
    t.run("work", "git", "continuity", "thread", "add", "Release 1.3", "--check", "tag:v1.3")
    (t.root / "work" / "app.py").write_text(
        (t.root / "work" / "app.py").read_text() + "\n\ndef forget(user):\n    ...\n"
    )

    t.say(
        "Handoff: the objective and why it changed, what this session did, the work tree, open threads,\n"
        "blockers and the next action, as one file on the state ref and a session entry in the journal.\n"
        "(With the hooks installed, Claude Code runs this itself before compacting.) Then it pushes both\n"
        "branches and the state; the half-written forget() stays uncommitted on this machine:"
    )
    t.run("work", "git", "continuity", "handoff", "--note", "forget() is a stub; the cookie must be HttpOnly")
    t.run("work", "git", "push", "-q", "origin", "main", "remember-me")
    t.run("work", "git", "continuity", "push")

    t.say(
        "Session 6, on a laptop: a fresh clone. A plain clone does not fetch refs/continuity/*, and orient\n"
        "says so (exit 1) rather than show an empty state as if it were the truth:"
    )
    t.run(".", "git", "clone", "-q", "origin.git", "laptop")
    t.run("laptop", "git", "continuity", "orient", expect=1)
    t.run("laptop", "git", "continuity", "pull")

    t.say(
        "The agent switches to the branch the next action names (git makes it from origin/remember-me)\n"
        "and orients again: what must not be acted on, the open thread, the work tree (the desk's\n"
        "uncommitted forget() did not travel), and since the handoff, what moved:"
    )
    t.run("laptop", "git", "switch", "-q", "remember-me")
    t.run("laptop", "git", "continuity", "orient")


def stop(t: Tour) -> None:
    """The closure gate, as a coding agent's Stop hook meets it."""
    t.say(
        "When the agent tries to stop with release 1.3 still open, Claude Code runs the Stop hook from\n"
        "the committed settings, and the answer tells it why it may not stop yet:"
    )
    answer = json.dumps({"session_id": "demo", "cwd": str(t.root / "laptop"), "stop_hook_active": False})
    t.run("laptop", "sh", "-c", f"echo {shlex.quote(answer)} | git-continuity-hook agent claude stop")
