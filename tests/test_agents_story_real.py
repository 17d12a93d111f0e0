"""A long-horizon story with the real Claude Code binary (#33): three repositories (a CLI, the
API it calls, a downstream consumer) with bare remotes, two machines of one person (two clones,
each with its own HOME and key) and a teammate (her own HOME and key), the loopback forge;
five sessions: one that sets the work up, one compacted, one killed, one started in a donor
worktree, one back on the first machine; and between them the remotes and the forge change.

Before each session from the second on, the truth is computed from the remotes, the clones and
the forge themselves (git and the forge's own state, never git-continuity), and the brief the
SessionStart hook gave Claude Code is scored against it fact by fact: right, wrong (stated
otherwise than it is) or missing. The story's tally is printed (pytest -s shows it) and every
fact must be right.

Marked ``agents``: one story, lean, for CI time."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from agent_harness import binary, bounded, claude_env
from forge_fakes import FakeGitHub
from model_imitation import Imitation, Reply, Tool, Turns, texts

pytestmark = pytest.mark.agents

SUMMARY_REQUEST = "Your task is to create a detailed summary of the conversation so far"


@dataclass
class Person:
    """A machine of one person, or a teammate: a HOME of their own (git identity, signing key,
    trust store, witness), a host name of their own."""

    home: Path
    env: dict[str, str]

    def run(self, cwd: Path, *argv: str) -> str:
        done = subprocess.run(argv, cwd=cwd, env=self.env, capture_output=True, text=True)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        return done.stdout.strip()

    def git(self, cwd: Path, *args: str) -> str:
        return self.run(cwd, "git", *args)

    def cont(self, cwd: Path, *args: str) -> str:
        return self.run(cwd, "git", "continuity", *args)

    def at_a_terminal(self, cwd: Path, *args: str) -> str:
        """``git continuity ARGS`` as this person runs it at a terminal (trusting a key is theirs)."""
        import pty

        pid, fd = pty.fork()
        if pid == 0:
            try:
                os.chdir(cwd)
                os.execvpe("git", ["git", "continuity", *args], self.env)
            finally:
                os._exit(127)
        shown = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        os.close(fd)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, shown
        return shown.decode()

    def key(self) -> str:
        return " ".join((self.home / ".config/git-continuity/signing_ed25519.pub").read_text().split()[:2])


def person(tmp: Path, name: str, email: str, host: str, forge: str) -> Person:
    home = tmp / f"home-{host}"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f"[user]\n\tname = {name}\n\temail = {email}\n[init]\n\tdefaultBranch = main\n"
        '[protocol "file"]\n\tallow = always\n'
    )
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
        "GIT_CONTINUITY_HOST": host,
        "GITHUB_API_URL": forge,
    }
    return Person(home, env)


# -- scoring ------------------------------------------------------------------------------------


def section(brief: str, title: str) -> list[str]:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=\n\n|\Z)", brief, re.S | re.M)
    return found.group(1).splitlines() if found else []


DO_NOT = "Do not act on these: not true now"
VERIFIED = "Verified now"
UNCONFIRMED = "Not confirmed: check before relying on these"
UNSHARED = "Not yet shared: only in this clone"

Verdict = str  # right, wrong or missing
Fact = tuple[str, Callable[[str], Verdict]]


def claim(cid: str, true_now: bool) -> Callable[[str], Verdict]:
    """A claim whose truth was derived now: under "Verified now" when true, "Do not act" when
    false; the other one (or "is verified" among the unconfirmed, for a false one) is wrong."""

    def judge(brief: str) -> Verdict:
        do_not = any(cid in line for line in section(brief, DO_NOT))
        verified = any(cid in line for line in section(brief, VERIFIED))
        said_verified = any(cid in line and " is verified" in line for line in section(brief, UNCONFIRMED))
        if true_now:
            return "right" if verified else "wrong" if do_not else "missing"
        return "right" if do_not else "wrong" if verified or said_verified else "missing"

    return judge


def not_now(cid: str, note: str) -> Callable[[str], Verdict]:
    """A claim that cannot be re-derived now (its evidence is earlier, or not approved here):
    among the unconfirmed with ``note``; under "Verified now", or without the note, is wrong."""

    def judge(brief: str) -> Verdict:
        if any(cid in line for line in section(brief, VERIFIED)):
            return "wrong"
        lines = [line for line in section(brief, UNCONFIRMED) if cid in line]
        return "right" if lines and note in lines[0] else "wrong" if lines else "missing"

    return judge


def contains(text: str) -> Callable[[str], Verdict]:
    return lambda brief: "right" if text in brief else "missing"


def absent(text: str) -> Callable[[str], Verdict]:
    return lambda brief: "wrong" if text in brief else "right"


def unshared(line: str | None) -> Callable[[str], Verdict]:
    """The home branch's commits not on its upstream: that line, or none when there are none."""

    def judge(brief: str) -> Verdict:
        said = [x for x in section(brief, UNSHARED) if " not on origin/main" in x]
        if line is None:
            return "wrong" if said else "right"
        return "right" if said == [line] else "wrong" if said else "missing"

    return judge


@dataclass
class Tally:
    counts: dict[str, int] = field(default_factory=lambda: {"right": 0, "wrong": 0, "missing": 0})
    failed: list[str] = field(default_factory=list)

    def score(self, session: str, brief: str, facts: list[Fact]) -> None:
        for name, judge in facts:
            verdict = judge(brief)
            self.counts[verdict] += 1
            if verdict != "right":
                self.failed.append(f"{session}: {name}: {verdict}")


# -- the truth, from the remotes, the clones and the forge themselves ------------------------------


def on_remote(bare: Path, commit: str, branch: str = "main") -> bool:
    done = subprocess.run(
        ["git", f"--git-dir={bare}", "merge-base", "--is-ancestor", commit, branch], capture_output=True
    )
    return done.returncode == 0


def tag_on(bare: Path, tag: str) -> bool:
    return (
        subprocess.run(["git", f"--git-dir={bare}", "rev-parse", "-q", "--verify", f"refs/tags/{tag}"]).returncode == 0
    )


def in_head(work: Path, path: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"HEAD:{path}"], cwd=work, capture_output=True).returncode == 0


def ahead(work: Path, bare: Path) -> list[str]:
    """The commits of the clone's main that the remote's main lacks (newest first, short)."""
    theirs = subprocess.run(
        ["git", f"--git-dir={bare}", "rev-parse", "main"], capture_output=True, text=True
    ).stdout.strip()
    listed = subprocess.run(
        ["git", "log", "--format=%h %s", f"{theirs}..main"], cwd=work, capture_output=True, text=True
    ).stdout
    here = subprocess.run(["git", "cat-file", "-e", theirs], cwd=work, capture_output=True).returncode == 0
    return listed.splitlines() if here else []


def unshared_line(commits: list[str]) -> str | None:
    if not commits:
        return None
    n = len(commits)
    return f"- main: {n} commit{'s' if n != 1 else ''} not on origin/main ({'; '.join(commits)}): git push"


# -- Claude Code --------------------------------------------------------------------------------


def bash(command: str) -> Reply:
    return Reply("On it.", Tool("Bash", {"command": command, "description": "run it"}))


def session(who: Person, work: Path, replies: list[Reply], *args: str, prompt: str = "Go on.") -> tuple[str, str]:
    """One claude -p run: the brief its SessionStart hook gave, and what it printed."""
    script = Turns(
        replies,
        wanted=lambda b: bool(b.get("tools")) and SUMMARY_REQUEST not in json.dumps(b["messages"][-1]),
        rest=Reply("<summary>The work goes on.</summary>"),
    )
    with Imitation("anthropic", script) as model:
        env = {**claude_env(who.home, model), **{k: v for k, v in who.env.items() if k != "HOME"}}
        ran = bounded([str(binary("claude")), "-p", *args, prompt, "--allowedTools", "Bash"], cwd=work, env=env)
        assert ran.code == 0, ran
        return brief_of(model), ran.out


def brief_of(model: Imitation) -> str:
    bodies = [b for b in model.conversation() if b.get("tools")]
    said = [t for b in bodies[:1] for t in texts(b["messages"]) if "SessionStart hook additional context: " in t]
    if not said:
        return ""
    return said[-1].split("SessionStart hook additional context: ", 1)[1].split("\n\n\nAvailable agent types", 1)[0]


def _sleeping_under(root: int) -> bool:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if Path(entry.path, "cmdline").read_bytes() != b"sleep\x0060\x00":
                continue
            pid = int(entry.name)
            while pid > 1:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rpartition(") ")[2].split()[1])
                if pid == root:
                    return True
        except (OSError, ValueError, IndexError):
            continue
    return False


# -- the story ----------------------------------------------------------------------------------


def test_a_long_horizon_story_is_told_true_at_every_session_start(tmp_path: Path) -> None:
    tally = Tally()
    with FakeGitHub() as forge:
        story(tmp_path, forge, tally)
    print(
        f"\nstory: {sum(tally.counts.values())} facts: {tally.counts['right']} right, {tally.counts['wrong']} wrong, "
        f"{tally.counts['missing']} missing"
    )
    assert tally.failed == [], tally.failed


# The story as a person reads it, in order: split, its steps would lose the state they share.
def story(tmp: Path, forge: FakeGitHub, tally: Tally) -> None:  # noqa: PLR0915
    remotes = tmp / "remotes"
    remotes.mkdir()
    bares = {name: remotes / f"{name}.git" for name in ("cli", "api", "consumer")}
    laptop = person(tmp, "Ada Agent", "ada@example.com", "laptop", forge.url)
    desktop = person(tmp, "Ada Agent", "ada@example.com", "desktop", forge.url)
    bea = person(tmp, "Bea Builder", "bea@example.com", "bea-laptop", forge.url)
    forge.add_pull("acme", "cli", 12, "open")

    # -- the three repositories, on the laptop -----------------------------------------------------
    machine = tmp / "laptop"
    machine.mkdir()
    files = {
        "cli": {"README": "cli\n", "conf/app.toml": "port = 80\n", "app.py": "loop\n"},
        "api": {"README": "api\n"},
        "consumer": {"README": "consumer\n", "check.sh": "test -f README\n"},
    }
    for name, bare in bares.items():
        laptop.git(remotes, "init", "-q", "--bare", str(bare))
        laptop.git(machine, "clone", "-q", str(bare), name)
        for path, text in files[name].items():
            (machine / name / path).parent.mkdir(parents=True, exist_ok=True)
            (machine / name / path).write_text(text)
        laptop.git(machine / name, "add", "-A")
        laptop.git(machine / name, "commit", "-q", "-m", f"{name}: first")
        laptop.git(machine / name, "push", "-q", "origin", "main")
    cli = machine / "cli"
    laptop.cont(cli, "init")
    laptop.cont(cli, "objective", "set", "Ship the login fix in 1.2", "--why", "users bounce back to /login")
    laptop.cont(cli, "repo", "add", "api", "../api")
    laptop.cont(cli, "repo", "add", "consumer", "../consumer")
    laptop.cont(cli, "agent", "install", "claude")
    laptop.git(cli, "add", ".claude")
    laptop.git(cli, "commit", "-q", "-m", "The agent's hooks")
    laptop.git(cli, "push", "-q", "origin", "main")
    laptop.git(cli, "branch", "old-parser")
    laptop.git(cli, "push", "-q", "origin", "old-parser")
    laptop.git(cli, "worktree", "add", "-q", "../cli-old", "old-parser")
    laptop.cont(cli, "place", "set", "cli", "home", "--why", "the implementation lives here")
    laptop.cont(cli, "place", "set", "cli-old", "donor", "--why", "the old parser: copy from it, commit nothing")
    laptop.cont(cli, "push")
    laptop.at_a_terminal(machine / "consumer", "trust", "allow", "sh check.sh")
    base = laptop.git(cli, "rev-parse", "HEAD")

    # -- session 1, laptop: the fix, pushed; claims; a blocker; work left unpushed -----------------
    claims = (
        'git continuity claim add "the fix is pushed" --check pushed:HEAD@origin/main'
        ' && git continuity claim add "PR #12 is open" --check github:pr/acme/cli#12=open'
        ' && git continuity claim add "api 2.0 is tagged" --check @api:tag:v2.0'
        ' && git continuity claim add "the config lives in conf/app.toml" --check file:conf/app.toml'
        ' && git continuity claim add "the consumer renders the new output" --check "@consumer:cmd:sh check.sh"'
        ' && git continuity blocker add "CI runner is offline"; git continuity verify --online; true'
    )
    session(
        laptop,
        cli,
        [
            bash('echo fixed > app.py && git commit -qam "Fix the login loop" && git push -q origin main'),
            bash(claims),
            bash(
                'git -C ../cli-old commit -q --allow-empty -m "old parser: a local fix" && '
                'git commit -q --allow-empty -m "WIP: parse the new flags"'
            ),
            Reply("Done for today."),
        ],
    )
    fix = laptop.git(cli, "rev-parse", "HEAD~1")
    listed = {c["text"]: c["id"] for c in json.loads(laptop.cont(cli, "claim", "list", "--json"))["claims"]}
    pushed, pr, tag = listed["the fix is pushed"], listed["PR #12 is open"], listed["api 2.0 is tagged"]
    config, renders = listed["the config lives in conf/app.toml"], listed["the consumer renders the new output"]
    laptop_parser = laptop.git(machine / "cli-old", "rev-parse", "HEAD")

    # -- between sessions: the PR is merged; Bea closes the blocker, tags the API, and the fix is
    # reset away on origin.
    forge.add_pull("acme", "cli", 12, "merged")
    teammate = tmp / "bea"
    teammate.mkdir()
    bea.git(teammate, "clone", "-q", str(bares["cli"]), "cli")
    bea.git(teammate, "clone", "-q", str(bares["api"]), "api")
    bea.cont(teammate / "cli", "init", "--stream", "bea")  # her key
    bea.at_a_terminal(teammate / "cli", "trust", "signer", "add", "ada@example.com", laptop.key())
    bea.cont(teammate / "cli", "pull")
    blocker = json.loads(bea.cont(teammate / "cli", "status", "--json"))["blockers"][0]["id"]
    bea.cont(teammate / "cli", "blocker", "done", blocker)
    bea.cont(teammate / "cli", "journal", "add", "the CI runner is back")
    bea.cont(teammate / "cli", "push")
    bea.git(teammate / "api", "tag", "v2.0")
    bea.git(teammate / "api", "push", "-q", "origin", "v2.0")
    bea.git(teammate / "cli", "push", "-q", "--force", "origin", f"{base}:main")
    laptop.at_a_terminal(cli, "trust", "signer", "add", "bea@example.com", bea.key())

    # -- session 2, laptop: compacted ----------------------------------------------------------------
    truth = [
        ("PR #12 merged since", claim(pr, forge.pulls[("acme", "cli", 12)]["state"] == "open")),
        ("the fix reset away on origin", claim(pushed, on_remote(bares["cli"], fix))),
        ("api v2.0 tagged on its remote", claim(tag, tag_on(bares["api"], "v2.0"))),
        ("the config at the home", claim(config, in_head(cli, "conf/app.toml"))),
        ("the consumer's check: verified earlier, not re-derived", not_now(renders, "[recorded here")),
        ("Bea closed the blocker", absent(f"- {blocker} CI runner is offline")),
        ("Bea's journal entry", contains("Bea Builder on bea-laptop: the CI runner is back")),
        ("the laptop's commits origin lacks", unshared(unshared_line(ahead(cli, bares["cli"])))),
    ]
    brief, _ = session(
        laptop,
        cli,
        [
            bash(
                'git continuity journal add "PR #12 was merged; the fix was reset away on origin: pushing it again"'
                " && git push -q origin main"
            ),
            Reply("Pushed again."),
        ],
    )
    tally.score("session 2", brief, truth)
    session(laptop, cli, [], "--continue", prompt="/compact")
    session(laptop, cli, [Reply("Still on it.")], "--continue", prompt="Where are we?")

    # -- between sessions: the desktop, a clone of its own, another key --------------------------------
    other = tmp / "desktop"
    other.mkdir()
    for name, bare in bares.items():
        desktop.git(other, "clone", "-q", str(bare), name)
    home = other / "cli"
    desktop.cont(home, "init", "--stream", "scratch")  # the desktop's key
    desktop.at_a_terminal(home, "trust", "signer", "add", "ada@example.com", laptop.key())
    desktop.at_a_terminal(home, "trust", "signer", "add", "bea@example.com", bea.key())
    laptop.at_a_terminal(cli, "trust", "signer", "add", "ada@example.com", desktop.key())
    desktop.cont(home, "pull")
    desktop.cont(home, "repo", "set-path", "api", "../api")
    desktop.cont(home, "repo", "set-path", "consumer", "../consumer")
    desktop.git(home, "worktree", "add", "-q", "../cli-old", "old-parser")
    desktop_parser = desktop.git(other / "cli-old", "rev-parse", "HEAD")
    handoffs = [e for e in json.loads(desktop.cont(home, "journal", "--json"))["entries"] if e.get("handoff")]

    # -- session 3, desktop: killed ------------------------------------------------------------------
    truth = [
        ("PR #12 merged", claim(pr, False)),
        ("the fix pushed again", claim(pushed, on_remote(bares["cli"], fix))),
        ("api v2.0 tagged", claim(tag, tag_on(bares["api"], "v2.0"))),
        ("the config at the home", claim(config, in_head(home, "conf/app.toml"))),
        ("the consumer's check is not approved here", not_now(renders, "[not approved here: it runs here only once")),
        ("the blocker stays closed", absent("CI runner is offline")),
        ("the last handoff named", contains(f"## Since the last session: handoff {handoffs[-1]['handoff']},")),
        (
            "old-parser differs between the clones",
            contains(
                f"- old-parser: laptop's is at {laptop_parser[:7]}, a commit this clone does not have (not pushed "
                f"from there); here at {desktop_parser[:7]}"
            ),
        ),
        ("no commits here that origin lacks", unshared(unshared_line(ahead(home, bares["cli"])))),
    ]
    scored = _brief_of_a_killed_session(desktop, home)
    tally.score("session 3", scored, truth)
    dead = json.loads((home / ".git/continuity/session.json").read_text())["id"]

    # -- between sessions: the config moves, at the desktop's home ----------------------------------
    desktop.git(home, "rm", "-q", "conf/app.toml")
    desktop.git(home, "commit", "-q", "-m", "Move the config into the package")
    desktop.git(home, "push", "-q", "origin", "main")

    # -- session 4, desktop, started in the donor worktree ---------------------------------------------
    truth = [
        ("the killed session reported", contains(f"Warning: The session {dead} (claude-code), started ")),
        (
            "claims judged at the home",
            contains(f"Claims are judged in the home, the checkout of branch main in {home}"),
        ),
        ("the config gone from the home", claim(config, in_head(home, "conf/app.toml"))),
        ("the fix on origin", claim(pushed, on_remote(bares["cli"], fix))),
        ("PR #12 merged", claim(pr, False)),
        ("api v2.0 tagged", claim(tag, tag_on(bares["api"], "v2.0"))),
    ]
    brief, _ = session(
        desktop,
        other / "cli-old",
        [bash(f'git -C {home} continuity journal add "the config moved into the package"'), Reply("Noted.")],
    )
    tally.score("session 4", brief, truth)
    entries = json.loads(desktop.cont(home, "journal", "--json"))["entries"]
    (moved,) = [e for e in entries if e["text"] == "the config moved into the package"]
    handoffs = [e for e in entries if e.get("handoff")]

    # -- session 5, laptop again -------------------------------------------------------------------
    truth = [
        ("PR #12 merged", claim(pr, False)),
        ("the fix on origin", claim(pushed, on_remote(bares["cli"], fix))),
        ("api v2.0 tagged", claim(tag, tag_on(bares["api"], "v2.0"))),
        ("the config at this home", claim(config, in_head(cli, "conf/app.toml"))),
        ("the consumer's check: verified earlier", not_now(renders, "[recorded here")),
        ("the desktop's journal entry", contains("Ada Agent on desktop (claude-code, session")),
        ("the desktop's handoff named", contains(f"## Since the last session: handoff {handoffs[-1]['handoff']},")),
        ("nothing here origin lacks", unshared(unshared_line(ahead(cli, bares["cli"])))),
    ]
    brief, _ = session(laptop, cli, [Reply("Caught up.")])
    tally.score("session 5", brief, truth)
    # What session 4 wrote with git -C in the home is its own, not the killed session's there.
    fourth = json.loads((home / ".git/worktrees/cli-old/continuity/session.json").read_text())["id"]
    assert (moved["session"], handoffs[-1]["session"]) == (fourth, fourth) and fourth != dead


def _brief_of_a_killed_session(who: Person, work: Path) -> str:
    """The brief a session that is then killed got: taken from the model's first request."""
    script = Turns([bash("sleep 60")], wanted=lambda b: bool(b.get("tools")))
    with Imitation("anthropic", script) as model:
        env = {**claude_env(who.home, model), **{k: v for k, v in who.env.items() if k != "HOME"}}
        child = subprocess.Popen(
            [str(binary("claude")), "-p", "Build it.", "--allowedTools", "Bash"],
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while not _sleeping_under(child.pid):
            assert time.monotonic() < deadline and child.poll() is None, "the session never reached its tool call"
            time.sleep(0.1)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        return brief_of(model)
