"""The command line's front door: a command runs in this repository's helper process when
one can take it, else here, in this process.

Most of a command's time is starting up: Python, then importing pygit2 and the command's
modules (70 to 90 ms of a 110 ms write). The helper (helper_server.py) has done that once: it
listens on ``.git/continuity/helper.sock``, and for each command forks a copy of itself that
takes this process's standard input, output and error (passed over the socket), its folder,
environment, umask and arguments, runs the same ``cli.main`` and answers with its exit code.

The helper is used only where it cannot change what a command does:
  - the command is one that reads or writes the state (SERVED); a hook, an editor, a push or
    pull, the demo, the MCP server always run here;
  - this process has no controlling terminal (an agent's tool call, a script, CI): a command
    at a terminal runs here, so that whatever asks on the terminal (ssh, a credential
    prompt) still can;
  - the helper was started from the same installation (the fingerprint: this package's files,
    their sizes and times, the Python and its path); otherwise it steps down and the command
    runs here;
  - GIT_CONTINUITY_HELPER is not 0/off/no/false (the off switch).
When none answers, the command runs here and a helper is started for the next one; it leaves
by itself once idle for GIT_CONTINUITY_HELPER_IDLE seconds (300), or once its socket or
repository is gone.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing's own costs a few ms, and this is every command's first step
if TYPE_CHECKING:
    import socket
    from collections.abc import Sequence
    from typing import BinaryIO

# Not in constants.py: this module is every command's first step, and imports nothing of ours.
HELPER_ENV = "GIT_CONTINUITY_HELPER"
OFF = ("0", "off", "no", "false")
SOCKET = "helper.sock"
SERVED = frozenset(
    {
        "status",
        "objective",
        "next",
        "blocker",
        "claim",
        "thread",
        "check",
        "verify",
        "journal",
        "show",
        "orient",
        "handoff",
        "place",
        "log",
        "progress",
    }
)


def main() -> int:
    """The console script `git-continuity`."""
    argv = sys.argv[1:]
    done = through_helper(argv)
    if done is not None:
        return done
    from git_continuity.cli import main as run

    return run(argv)


def through_helper(argv: Sequence[str]) -> int | None:
    """The exit code of the command as the helper ran it; None where it ran nothing (the
    command is then to run here)."""
    if _command(argv) not in SERVED or os.environ.get(HELPER_ENV, "").lower() in OFF:
        return None
    if not sys.platform.startswith("linux"):  # it asks the kernel who is at the socket's other end
        return None
    if _has_terminal():
        return None
    folder = continuity_folder()
    if folder is None:
        return None
    return _ask(folder, list(argv))


def _command(argv: Sequence[str]) -> str | None:
    """The command word, after the options the top level takes (--stream takes a value)."""
    words = iter(argv)
    for word in words:
        if word == "--stream":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _has_terminal() -> bool:
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def continuity_folder() -> str | None:
    """The repository's ``continuity`` folder (in its common git folder, so every worktree of
    it shares one helper), found as git would from the current folder; None outside a
    repository, where GIT_DIR chooses it, or where no command made the folder yet. Only the
    helper's address: what the command reads is found again, by the command itself."""
    if "GIT_DIR" in os.environ:
        return None
    try:
        here = os.getcwd()
    except OSError:
        return None
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            git = dot
            break
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as file:
                    line = file.readline().strip()
            except (OSError, UnicodeError):
                return None
            if not line.startswith("gitdir: "):
                return None
            git = os.path.join(here, line[len("gitdir: ") :])
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    try:
        with open(os.path.join(git, "commondir"), encoding="utf-8") as file:
            git = os.path.join(git, file.readline().strip())
    except FileNotFoundError:
        pass
    except (OSError, UnicodeError):
        return None
    folder = os.path.normpath(os.path.join(git, "continuity"))
    return folder if os.path.isdir(folder) else None


def fingerprint(paths: Sequence[str]) -> str:
    """What the helper and its client must share for a command to run in the helper as it
    would in the client: the same code (the Python, its settings, this package's files with
    their sizes and times, the folders modules are found in with their times: installing or
    upgrading a package changes its folder's), and the same confinement (_confinement)."""
    package = os.path.dirname(os.path.abspath(__file__))
    parts = [sys.executable, sys.version, package, repr(sys.flags), repr(sorted(sys._xoptions.items()))]
    parts += [sys.getfilesystemencoding(), sys.getfilesystemencodeerrors(), *_confinement()]
    parts += sorted(f"{key}={value}" for key, value in os.environ.items() if key.startswith("PYTHON"))
    for path in paths:
        try:
            parts.append(f"{path}:{os.stat(path or '.').st_mtime_ns}")
        except OSError:
            parts.append(path)
    files = []
    folders = [package]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    stat = entry.stat()
                    files.append(f"{entry.path}:{stat.st_size}:{stat.st_mtime_ns}")
                elif entry.name != "__pycache__" and entry.is_dir():
                    folders.append(entry.path)
    return "\n".join(parts + sorted(files))


def _confinement() -> list[str]:
    """What confines this process: its namespaces (a mount made read-only, a container), its
    root, the no-new-privileges bit, seccomp filters and capabilities (a sandbox such as
    Landlock sets them), its security label, cgroup, resource limits, niceness and CPUs. A
    command must not run in a helper less confined than its client."""
    import resource

    found = []
    for space in ("mnt", "pid", "net", "user", "uts", "ipc", "cgroup"):
        try:
            found.append(os.readlink(f"/proc/self/ns/{space}"))
        except OSError:
            found.append(f"{space}:?")
    root = os.stat("/")
    found.append(f"root {root.st_dev}:{root.st_ino}")
    for name, keep in (("status", ("NoNewPrivs", "Seccomp", "Cap")), ("cgroup", ("",)), ("attr/current", ("",))):
        try:
            with open(f"/proc/self/{name}", encoding="utf-8", errors="replace") as file:
                found += [line.rstrip("\n") for line in file if line.startswith(keep)]
        except OSError:
            found.append(f"{name}:?")
    limits = sorted(name for name in dir(resource) if name.startswith("RLIMIT_"))
    found += [f"{name}={resource.getrlimit(getattr(resource, name))}" for name in limits]
    found.append(f"nice={os.getpriority(os.PRIO_PROCESS, 0)} cpus={sorted(os.sched_getaffinity(0))}")
    return found


HANDSHAKE = 3.0  # seconds for a helper to take a command; a helper stopped or swamped is passed by
# The signals passed on to the command: those a terminal, a kill or a timeout sends.
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _ask(folder: str, argv: list[str]) -> int | None:
    import array
    import marshal
    import signal
    import socket
    import struct

    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with connection:
        try:
            if not _connect(connection, folder):
                return None
            connection.settimeout(HANDSHAKE)
            mask = os.umask(0o22)
            os.umask(mask)
            streams = [(s.encoding, s.errors or "strict") for s in (sys.stdin, sys.stdout, sys.stderr)]
            # Signals this process ignores (nohup, a shell's background job): so does the command.
            ignored = [int(s) for s in signal.valid_signals() if signal.getsignal(s) == signal.SIG_IGN]
            # The fingerprint first and plain, so that a helper of any version can read it.
            # sys.path[0] is the console script's folder; the helper removes its own first.
            own = fingerprint(sys.path[1:]).encode("utf-8", "surrogateescape")
            request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": mask}
            body = marshal.dumps({**request, "streams": streams, "ignored": ignored})
            data = struct.pack("!II", len(own), len(body)) + own + body
            connection.sendall(data)
            answers = connection.makefile("rb")
            word, _, value = answers.readline().decode().partition(" ")
            if word != "started":
                if value.strip() == "fingerprint":  # it stepped down: start this one's
                    _start(folder)
                return None
            pid = int(value)
            # The command runs once this is sent with this process's standard streams, and
            # only then: a client that gave up waiting (and runs it itself) sends nothing, and
            # no stream of its is left with a helper that does not answer.
            streams_fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))]
            if connection.sendmsg([b"go\n"], streams_fds) != 3:
                return None
            connection.settimeout(None)
        except (OSError, ValueError, AttributeError, UnicodeError):
            return None  # nothing ran: the command runs here
        # From here on the command is running: whatever happens, it is not run again here.
        return _wait(answers, pid)


def _connect(connection: socket.socket, folder: str) -> bool:
    """Connect to the helper's socket, reached from its own folder (a socket's path may hold
    only 107 bytes); start a helper when none listens there."""
    import socket
    import struct

    back = os.open(".", os.O_RDONLY)
    try:
        os.chdir(folder)
        connection.connect(SOCKET)
        # Only a helper of this user's gets this process's streams and environment.
        peer = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        uid: int = struct.unpack("3i", peer)[1]
        return uid == os.getuid()
    except FileNotFoundError:
        _start(folder)
    except ConnectionRefusedError:  # its helper was killed: the socket is left over
        try:  # noqa: SIM105  (contextlib would cost this first step its import)
            os.unlink(SOCKET)
        except OSError:
            pass
        _start(folder)
    finally:
        os.fchdir(back)
        os.close(back)
    return False


def _start(folder: str) -> None:
    """Start a helper for this repository, in a session of its own, for the next command;
    it keeps none of this process's open files (a lock, a pipe someone waits on)."""
    import subprocess

    code = (
        "import sys; del sys.path[0]; from git_continuity import helper_server; "
        "taken = helper_server.serve(sys.argv[1]); taken is None or helper_server.run(taken)"
    )
    try:  # noqa: SIM105
        subprocess.Popen(
            [sys.executable, "-c", code, folder],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        pass


def _wait(answers: BinaryIO, pid: int) -> int:
    """Pass on the signals this process gets to the one running the command, and end as it
    ended: with its exit code, or killed by the same signal."""
    import signal

    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        try:  # noqa: SIM105
            os.kill(pid, signum)
        except OSError:
            pass

    for name in FORWARDED:
        signum = getattr(signal, name)
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, forward)
    try:
        word, _, value = answers.readline().decode().partition(" ")
        code = int(value) if word == "exit" else None
    except (OSError, ValueError, UnicodeError):
        code = None
    died = -code if code is not None and code < 0 else (received[-1] if code is None and received else None)
    if died is not None:  # as the command died, so does this process
        if died not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(died, signal.SIG_DFL)
        os.kill(os.getpid(), died)
        return 128 + died
    if code is not None:
        return code
    print(
        "git-continuity: error: the helper's process running this command ended without an exit code "
        f"(the helper was killed?); {HELPER_ENV}=0 runs commands in their own process",
        file=sys.stderr,
    )
    return 1
