"""A guided tour: real repositories and a real bare remote in a temporary folder, real
commands, their real output. The chapters are told by demo_*.py."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from git_continuity.errors import UserError

# The chapters, in the order --full tells them: (name, "module:function" that tells it). The
# command table's help lists them with what each shows.
CHAPTERS = (
    ("story", "git_continuity.commands.demo.story:story"),
    ("sync", "git_continuity.commands.demo.sync:sync"),
    ("agents", "git_continuity.commands.demo.agents:agents"),
    ("ci", "git_continuity.commands.demo.forge:forges"),
    ("handoff", "git_continuity.commands.demo.sync:handoff"),
    ("progress", "git_continuity.commands.demo.progress:progress"),
    ("planning", "git_continuity.commands.demo.planning:planning"),
    ("places", "git_continuity.commands.demo.places:places"),
    ("siblings", "git_continuity.commands.demo.siblings:siblings"),
    ("doctor", "git_continuity.commands.demo.doctor:doctor"),
)
NAMES = tuple(name for name, _ in CHAPTERS)

HOSTS = {"work": "desk", "mate": "mate-pc", "laptop": "laptop"}
# `git continuity` as its script runs it (helper/door.py), in this demo's own Python.
DOOR = "import sys; from git_continuity.helper.door import main; sys.exit(main())"
# The teammate is a person of her own: her clones (mate/, and mate-state/ beside it) run in a
# home of hers, with her git identity and the signing key git-continuity makes for her.
TEAMMATE = ("mate", "mate-state")
# What a person types bare; anything else is quoted, in double quotes where the shell would
# read them as written (no $, `, \, " or !), as a person would.
BARE = re.compile(r"[\w@%+=:,./-]+")
DOUBLE_SAFE = re.compile(r'[^$`\\"!]*')


def typed(args: tuple[str, ...] | list[str]) -> str:
    """A command line as a person would type it (not shlex.join's '"'"' re-quoting)."""
    words = []
    for arg in args:
        if BARE.fullmatch(arg):
            words.append(arg)
        elif DOUBLE_SAFE.fullmatch(arg):
            words.append(f'"{arg}"')
        else:
            words.append(shlex.quote(arg))
    return " ".join(words)


def pretty(value: Any, pad: str = "") -> list[str]:
    """JSON indented; a text holding line breaks is broken after each \\n it holds, so that an
    agent hook's answer reads as the agent gets it (the value itself is unchanged)."""
    if isinstance(value, dict) and value:
        lines = ["{"]
        for n, (key, item) in enumerate(value.items()):
            inner = pretty(item, pad + "  ")
            lines += [f"{pad}  {json.dumps(key)}: {inner[0]}", *inner[1:]]
            lines[-1] += "," if n < len(value) - 1 else ""
        return [*lines, pad + "}"]
    if isinstance(value, list) and value:
        lines = ["["]
        for n, item in enumerate(value):
            inner = pretty(item, pad + "  ")
            lines += [f"{pad}  {inner[0]}", *inner[1:]]
            lines[-1] += "," if n < len(value) - 1 else ""
        return [*lines, pad + "]"]
    if isinstance(value, str) and "\n" in value.rstrip("\n"):
        parts = [json.dumps(part, ensure_ascii=False)[1:-1] for part in value.split("\n")]
        ends = [f"{part}\\n" for part in parts[:-1]] + [parts[-1]]
        return [f'"{ends[0]}', *(f"{pad}   {end}" for end in ends[1:-1]), f'{pad}   {ends[-1]}"']
    return [json.dumps(value, ensure_ascii=False)]


class Tour:
    """Runs each step for real, prints it as a user would type it, and stops the tour when a
    step does not exit as the story expects."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lines = 0
        self.teamed = False  # whether the two people trust each other's keys yet (story.team)
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
            # The story's signing key, trusted signers and witness (trust/signing.py) are its own.
            "XDG_CONFIG_HOME": str(root / "config"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CACHE_HOME": str(root / "cache"),
        }
        mate = root / "mate-home"
        mate.mkdir()
        (mate / "gitconfig").write_text(config.read_text().replace("Demo Agent", "Mate").replace("agent@", "mate@"))
        self.mate = {
            "GIT_CONFIG_GLOBAL": str(mate / "gitconfig"),
            "XDG_CONFIG_HOME": str(mate / "config"),
            "XDG_STATE_HOME": str(mate / "state"),
            "XDG_CACHE_HOME": str(mate / "cache"),
        }
        for name in (
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_INDEX_FILE",
            "GIT_CONTINUITY_STREAM",
            "GIT_CONTINUITY_SESSION",
            "GIT_CONTINUITY_AGENT",
            "GIT_CONTINUITY_BRIEF_TOKENS",
            "GIT_CONTINUITY_ALLOW_PLACE",
            "NO_COLOR",
            # The story's author is the demo's agent, whoever runs it.
            "GIT_AUTHOR_NAME",
            "GIT_AUTHOR_EMAIL",
            "GIT_AUTHOR_DATE",
            "GIT_COMMITTER_NAME",
            "GIT_COMMITTER_EMAIL",
            "GIT_COMMITTER_DATE",
        ):
            self.env.pop(name, None)

    def print(self, text: str) -> None:
        from git_continuity import display

        text = display.fold(text, display.Showing.width)  # a terminal's width; a pipe is not folded
        print(text, flush=True)
        self.lines += text.count("\n") + 1

    def say(self, text: str) -> None:
        self.print(f"\n{text}")

    def write(self, where: str, name: str, text: str) -> None:
        """A file the story's people write, as their editor would."""
        (self.root / where / name).write_text(text)

    def run(
        self,
        where: str,
        *args: str,
        expect: int = 0,
        show: bool = True,
        elide: tuple[str, str] | None = None,
        stdin: str | None = None,
        as_json: bool = False,
        head: int | str | None = None,
        terminal: bool = False,
    ) -> str:
        """Run one step. ``elide`` is (pattern, what): output lines matching the pattern are
        left out of what is printed, and one line says how many and what they were; ``head``
        prints the first lines only (that many, or up to the first that matches it), and one
        line says how many more there were. ``stdin``
        is fed to the command (shown as `echo '…' |`); ``as_json`` prints a JSON answer
        indented; ``terminal``: run at a terminal of its own (a pseudo-terminal), as a person
        runs what only a person may (trusting the team's keys)."""
        argv = list(args)
        if argv[:2] == ["git", "continuity"]:
            # The same installation that runs this demo, whatever is first on PATH, through
            # the same front door as `git continuity` (the repository's helper serves it).
            argv = [sys.executable, "-c", DOOR, *argv[2:]]
        cwd = self.root / where
        # Each clone stands for a machine of its own, named so in what it writes.
        env = {**self.env, "GIT_CONTINUITY_HOST": HOSTS.get(where.split("/")[0], "desk")}
        if where.split("/")[0] in TEAMMATE:
            env.update(self.mate)
        if terminal:
            code, stdout = at_a_terminal(argv, cwd, env)
            stderr = ""
        else:
            code, stdout, stderr = _step(argv, cwd, env, stdin)
        output = (stdout + stderr).rstrip()
        if show:
            line = typed(args) if stdin is None else f"echo {shlex.quote(stdin)} | {typed(args)}"
            self.print(f"  {'' if where == '.' else where}$ {line}")
            lines = output.splitlines()
            if as_json and stdout.strip():
                lines = pretty(json.loads(stdout)) + stderr.rstrip().splitlines()
            if elide:
                pattern, what = elide
                left = [i for i, line in enumerate(lines) if re.match(pattern, line)]
                if left:
                    lines = [line for i, line in enumerate(lines) if i not in left]
                    lines.insert(left[0], f"[{len(left)} lines left out: {what}]")
            if isinstance(head, str):
                head = next((n + 1 for n, line in enumerate(lines) if re.search(head, line)), len(lines))
            if head is not None and len(lines) > head + 1:
                lines = [*lines[:head], f"[{len(lines) - head} more lines]"]
            if lines:
                self.print("\n".join(f"    {line}" for line in lines))
        if code != expect:
            raise UserError(f"demo step `{typed(args)}` in {cwd} exited {code}, expected {expect}:\n{output}")
        return stdout

    def quiet(self, where: str, *args: str) -> str:
        return self.run(where, *args, show=False)


def _step(argv: list[str], cwd: Path, env: dict[str, str], stdin: str | None) -> tuple[int, str, str]:
    """One step, away from the terminal the demo may run at, as an agent's tool call runs (the
    helper serves only a command with no terminal: one at a terminal may prompt); Ctrl-C
    reaches it as the terminal's own would have. Its exit code, output and error."""
    import signal

    fed = subprocess.PIPE if stdin is not None else None
    with subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=fed,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as step:
        try:
            stdout, stderr = step.communicate(stdin)
        except KeyboardInterrupt:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(step.pid, signal.SIGINT)
            try:
                step.wait(timeout=5)
            except subprocess.TimeoutExpired:
                step.kill()
            raise
    return step.returncode, stdout, stderr


def at_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run argv with a pseudo-terminal as its controlling terminal and its stdin and outputs;
    its exit code and what it showed."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: a session of its own, the terminal its controlling one
        try:
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    shown = b""
    while select.select([fd], [], [], 60)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other side closed: the command ended
            break
        if not chunk:
            break
        shown += chunk
    os.close(fd)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return code, shown.decode(errors="replace").replace("\r\n", "\n").rstrip()


def made(output: str, prefix: str) -> str:
    """The first id with ``prefix`` (c, t, x…) that a command's output names."""
    found = re.search(rf"\b{prefix}-[0-9a-z]{{6}}\b", output)
    if not found:
        raise UserError(f"demo: expected an id {prefix}-… in:\n{output}")
    return found[0]


def demo(*, keep: bool, full: bool, chapter: str | None) -> int:
    if chapter is not None and chapter not in NAMES:
        raise UserError(
            f"demo: no chapter {chapter!r}; the chapters are {', '.join(NAMES)} "
            "(git continuity demo -h says what each shows)"
        )
    if shutil.which("git") is None:
        raise UserError("git is not on PATH; install git first")
    chosen = [target for name, target in CHAPTERS if full or name == (chapter or "story")]
    root = Path(tempfile.mkdtemp(prefix="git-continuity-demo-"))
    try:
        t = Tour(root)
        for target in chosen:
            module, _, name = target.partition(":")
            tell: Callable[[Tour], None] = getattr(importlib.import_module(module), name)
            tell(t)
        if full:
            t.say("That is the whole tour. In your own repository: git continuity init, then git continuity help.")
    finally:
        if keep:
            print(f"\nThe demo folder is kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0
