"""The command line's front door: a command runs in this repository's helper process when
one can take it, else here, in this process.

Most of a command's time is starting up: Python, then importing pygit2 and the command's
modules (70 to 90 ms of a 110 ms write). The helper (helper/server.py) has done that once: it
listens on ``.git/continuity/helper-<fingerprint>.sock``, and for each command forks a copy
of itself that takes this process's standard input, output and error (passed over the
socket), its folder, environment, umask and arguments, runs the same ``cli.main`` and answers
with its exit code.

The helper is used only where it cannot change what a command does:
  - the command is one that reads or writes the state (SERVED, the rows of the command table
    marked ``served``), or a coding agent's hook; git's hooks, an editor, the demo (whose
    steps come through this door as any script's), the MCP server always run here. Sync,
    push and pull are served: a fleet's agents sync in loops, and the network goes through
    the user's own git with the client's environment either way;
  - this process has no controlling terminal (an agent's tool call, a script, CI): a command
    at a terminal runs here, so that whatever asks on the terminal (ssh, a credential
    prompt) still can;
  - the repository is this user's, as git requires (helper_place: nothing in a folder git
    would refuse is touched);
  - the helper was started by a client alike (the fingerprint, helper_peer: the installation,
    the Python and its settings, the environment read at start, the umask, the confinement),
    which names its socket, so that each kind of client has a helper of its own; the helper
    checks the confinement again itself, from /proc, and refuses a client it cannot serve
    alike (the command then runs here);
  - the helper answers in time (HANDSHAKE): one stopped, swamped or gone is passed by;
  - GIT_CONTINUITY_HELPER is not 0/off/no/false (the off switch).
When none listens, the command runs here and a helper is started for the next one; commands
that come while it warms (a fleet starting at once) wait for it, at most STARTING seconds,
rather than each importing everything at once. It leaves by itself once idle for
GIT_CONTINUITY_HELPER_IDLE seconds (300), or once its socket or repository is gone.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal without its enums; typeshed has no stub
import os
import sys

TYPE_CHECKING = False  # typing's own costs a few ms, and this is every command's first step
if TYPE_CHECKING:
    from _socket import socket
    from collections.abc import Sequence
    from typing import NoReturn

# The client speaks to the helper through the C modules under ``socket`` and ``signal``: those
# build their constants as enums at import, which would cost every command a few ms (enum is
# not imported otherwise).

# Not in constants.py: this module is every command's first step, and imports nothing of ours.
HELPER_ENV = "GIT_CONTINUITY_HELPER"
OFF = ("0", "off", "no", "false")
# The commands the helper runs: the rows of the command table marked served (tests/test_helper.py
# checks the two agree); spelled out here, since reading the table would cost every command.
SERVED = frozenset(
    {
        "status",
        "ready",
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
        "pull",
        "push",
        "sync",
    }
)


def main() -> int:
    """The console script `git-continuity`."""
    argv = sys.argv[1:]
    done = through_helper(argv)
    if done is not None:
        leave(done)
    from git_continuity.cli.main import main as run

    return run(argv)


def leave(code: int) -> NoReturn:
    """End this client with the code of the command the helper ran: its streams flushed, then
    at once. It made nothing to tear down, and Python's own exit costs every command 4 ms."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = code or 120  # as Python exits when it cannot flush standard output
    os._exit(code)


def through_helper(argv: Sequence[str]) -> int | None:
    """The exit code of the command as the helper ran it; None where it ran nothing (the
    command is then to run here)."""
    if not served(argv) or os.environ.get(HELPER_ENV, "").lower() in OFF:
        return None
    if not sys.platform.startswith("linux"):  # it asks the kernel who is at the socket's other end
        return None
    if _has_terminal():
        return None
    from git_continuity.helper import place as helper_place

    folder = helper_place.continuity_folder()
    if folder is None:
        return None
    return _ask(folder, list(argv))


def served(argv: Sequence[str]) -> bool:
    """Whether the helper may run this command: a served one, or a coding agent's hook (never
    one of git's, which git runs with its own GIT_DIR, index and locks held)."""
    word = _command(argv)
    if word == "hook-impl":
        return len(argv) == 4 and argv[0] == word and argv[1] == "agent"
    return word in SERVED


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


HANDSHAKE = 3.0  # seconds for a helper to take a command; a helper stopped or swamped is passed by
# The signals passed on to the command: those a terminal, a kill or a timeout sends.
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


LATE = 2.0  # seconds to wait for the helper's word on an exit its copy said is raising (a helper stopped)


def _ask(folder: str, argv: list[str]) -> int | None:
    from git_continuity.helper import peer as helper_peer
    from git_continuity.helper import place as helper_place

    fd = helper_place.open_folder(folder)
    if fd is None:
        return None
    try:
        own = helper_peer.fingerprint(sys.path[1:])  # sys.path[0] is the console script's folder
        name = helper_peer.name_of(own)
        there = helper_place.socket_state(fd, name)
        if there == "none":
            if not helper_place.may_start(folder, name):
                return None
            if helper_place.first_to_start(fd, name):  # the command runs here, while it warms
                _start(folder, name)
                return None
            # Another command started one: waiting for it costs less than each command of a
            # fleet starting at once importing everything itself.
            there = _arriving(fd, name)
        if there != "socket":  # a file, a link, another's: left alone, and the command runs here
            return None
        connection = _connect(fd, folder, name)
    finally:
        os.close(fd)
    if connection is None:
        return None
    try:
        return _hand_over(connection, own, argv)
    finally:
        connection.close()


def _arriving(fd: int, name: str) -> str:
    """What is at the socket's name once the helper on its way listens, gives up, or has taken
    STARTING seconds ("none" then)."""
    import time

    from git_continuity.helper import place as helper_place

    deadline = time.monotonic() + helper_place.STARTING
    while True:
        there = helper_place.socket_state(fd, name)
        if there != "none" or time.monotonic() > deadline or not helper_place.on_its_way(fd, name):
            return there
        time.sleep(0.005)


def _connect(fd: int, folder: str, name: str) -> socket | None:
    """A connection to the helper listening at ``name`` in the folder (reached from the folder
    itself: a socket's path may hold only 107 bytes), if it is this user's and not stopped;
    a helper is started when what is there is a socket nobody listens on."""
    import _socket
    import struct

    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    connection.settimeout(HANDSHAKE)  # a full listen queue is refused at once, not waited on
    back = os.open(".", os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fchdir(fd)
        connection.connect(name)
    except ConnectionRefusedError:  # its helper was killed; the next one replaces the socket
        connection.close()
        _start(folder, name)
        return None
    except OSError:
        connection.close()
        return None
    finally:
        os.fchdir(back)
        os.close(back)
    try:
        pid, uid, _ = struct.unpack("3i", connection.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12))
        # Only a helper of this user's gets this process's streams and environment; one that is
        # stopped (kill -STOP) would hold the command until it is continued: passed by at once.
        if uid == os.geteuid() and not _stopped(pid):
            return connection
    except (OSError, struct.error):
        pass
    connection.close()
    return None


def _stopped(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            state = file.read().rpartition(b")")[2].split()[:1]
    except OSError:
        return True
    return state in ([b"T"], [b"t"], [b"Z"], [])


def _hand_over(connection: socket, own: str, argv: list[str]) -> int | None:
    """Send the command; once a copy of the helper took it, give it this process's standard
    streams and end as it ends. None where nothing ran (the command is then to run here)."""
    import _socket
    import marshal
    import struct
    import time

    deadline = time.monotonic() + HANDSHAKE
    lines = _Lines(connection)
    try:
        mask = os.umask(0o22)
        os.umask(mask)
        streams = [(s.encoding, s.errors or "strict") for s in (sys.stdin, sys.stdout, sys.stderr)]
        # Signals this process ignores (nohup, a shell's background job): so does the command.
        ignored = [int(s) for s in _signal.valid_signals() if _signal.getsignal(s) == _signal.SIG_IGN]
        # The fingerprint first and plain, so that a helper of any version can read it.
        mine = own.encode("utf-8", "surrogateescape")
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": mask}
        body = marshal.dumps({**request, "streams": streams, "ignored": ignored})
        connection.sendall(struct.pack("!II", len(mine), len(body)) + mine + body)
        word, value = lines.next(deadline - time.monotonic())
        if word != "started":  # refused (another fingerprint, another confinement), or no answer
            return None
        pid = int(value)
        # The command runs once this is sent with this process's standard streams, and only
        # then: a client that gave up waiting (and runs it itself) sends nothing, and no stream
        # of its is left with a helper that does not answer.
        fds = [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))]
        if connection.sendmsg([b"go\n"], fds) != 3:
            return None
        # The copy says it runs the command as soon as it has the streams; it said it started a
        # moment ago, so this is waited for as long as it takes.
        word, _ = lines.next(None)
        if word != "running":
            return None  # it ended before running anything (it waited too long for the go)
    except (OSError, ValueError, AttributeError, UnicodeError):
        return None  # nothing ran: the command runs here
    # From here on the command is running: whatever happens, it is not run again here.
    return _wait(lines, pid)


class _Lines:
    """The lines the helper and its copy send, each read within a time (None: no limit);
    ("", "") at the end of the connection or when the time is up."""

    def __init__(self, connection: socket) -> None:
        self.connection = connection
        self.data = b""

    def next(self, seconds: float | None) -> tuple[str, str]:
        while b"\n" not in self.data:
            if seconds is not None and seconds <= 0:
                return "", ""
            self.connection.settimeout(seconds)
            try:
                more = self.connection.recv(4096)
            except TimeoutError:
                return "", ""
            if not more:
                return "", ""
            self.data += more
        line, _, self.data = self.data.partition(b"\n")
        word, _, value = line.decode().partition(" ")
        return word, value


def _start(folder: str, name: str) -> None:
    """Start a helper for this repository, in a session of its own, for the next command;
    it keeps none of this process's open files (a lock, a pipe someone waits on). Not while
    the last one that could not listen here is recent (helper_place.may_start)."""
    import subprocess

    from git_continuity.helper import place as helper_place

    if not helper_place.may_start(folder, name):
        return
    code = (
        "import sys; del sys.path[0]; from git_continuity.helper import server as helper_server; "
        "taken = helper_server.serve(*sys.argv[1:]); taken is None or helper_server.run(taken)"
    )
    try:  # noqa: SIM105
        subprocess.Popen(
            [sys.executable, "-c", code, folder, name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        pass


def _wait(lines: _Lines, pid: int) -> int:
    """Pass on the signals this process gets to the one running the command, and end as it
    ended: with its exit code, or killed by the same signal. The copy says the code it ends
    with once its streams are closed (``ran``: taken at once, not waiting the few ms its
    teardown takes); where it is still writing a traceback (``raising``) or says nothing, the
    helper's word on how it ended is waited for, and the copy's code taken when the helper is
    gone (killed) or says nothing in time (stopped)."""

    received: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        received.append(signum)
        try:  # noqa: SIM105
            os.kill(pid, signum)
        except OSError:
            pass

    for name in FORWARDED:
        signum = getattr(_signal, name)
        if _signal.getsignal(signum) != _signal.SIG_IGN:
            _signal.signal(signum, forward)
    code = ran = None
    try:
        while code is None:
            word, value = lines.next(None if ran is None else LATE)
            if word in ("exit", "ran"):  # ran: its streams are closed, nothing more comes of it
                code = int(value)
            elif word == "raising":
                ran = int(value)
            elif not word:
                break
    except (OSError, ValueError, UnicodeError):
        pass
    if code is None:
        code = ran
    died = -code if code is not None and code < 0 else (received[-1] if code is None and received else None)
    if died is not None:  # as the command died, so does this process
        if died not in (_signal.SIGKILL, _signal.SIGSTOP):
            _signal.signal(died, _signal.SIG_DFL)
        os.kill(os.getpid(), died)
        return 128 + died
    if code is not None:
        return code
    print(
        "git-continuity: error: the command's process and the helper that ran it were both killed before "
        "the command ended; what it did is unknown (git continuity status shows the state). "
        f"{HELPER_ENV}=0 runs commands in their own process",
        file=sys.stderr,
    )
    return 1
