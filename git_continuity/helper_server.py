"""The helper: a process per user and repository that has imported what commands need, and
forks a copy of itself to run each command it is handed (helper.py says which, and when).

It listens on ``helper.sock`` in the repository's ``continuity`` folder, answers only its own
user (the socket's peer credentials), and steps down when a client's fingerprint is not its
own (an upgrade, another installation, other Python settings, another confinement), when
idle for GIT_CONTINUITY_HELPER_IDLE seconds, or when its socket is no longer the one it made
(removed, replaced, the repository deleted).

A command's copy takes the client's standard input, output and error, folder, environment,
umask and ignored signals, says its pid, waits for the client's go, and returns to the top
of the program (``serve`` returns the command there, ``run`` runs it), so that it ends as a
command in its own process ends: the interpreter's own exit, flush and traceback. The helper
waits for it and tells the client its exit status. A copy whose client is gone (killed) is
killed too. The helper itself never reads the repository, and imports but calls nothing, so
no cache of one command is seen by the next.
"""

from __future__ import annotations

import array
import gc
import importlib
import io
import marshal
import math
import os
import select
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

from git_continuity import helper

IDLE_ENV = "GIT_CONTINUITY_HELPER_IDLE"
IDLE_SECONDS = 300.0
TICK = 2.0  # how often an idle helper checks that its socket is still its own
MOST = 64 << 20  # the longest request taken (arguments and environment)
Taken = list[str]  # in a command's copy: the arguments it is to run


def serve(folder: str) -> Taken | None:
    """Answer commands until it is time to leave (None); in a command's copy, the command."""
    os.chdir(folder)
    _warm()
    # What the warming made lives as long as the helper: the collector leaves it be, in each
    # command's copy too (whose interpreter exit, a collection, took twice as long without).
    gc.freeze()
    own = helper.fingerprint(sys.path).encode("utf-8", "surrogateescape")
    try:
        idle = float(os.environ.get(IDLE_ENV, IDLE_SECONDS))
    except ValueError:
        idle = IDLE_SECONDS
    if not math.isfinite(idle) or idle <= 0:
        idle = IDLE_SECONDS
    listener = _listen()
    if listener is None:
        return None
    me, mine = os.getpid(), _identity()
    wake, woken = os.pipe()
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(woken)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # wakes select through the pipe
    running: dict[int, socket.socket] = {}
    try:
        return _answer(listener, own, idle, mine, wake, running)
    finally:
        if os.getpid() == me:
            if _still(mine):
                os.unlink(helper.SOCKET)
            listener.close()
            while running:  # tell the clients still waiting how their commands end
                _reap(running, block=True)


def run(argv: Taken) -> None:
    """Run the command in this copy, at the top of the program: it ends as in its own process."""
    from git_continuity.cli import main

    raise SystemExit(main(argv))


def _warm() -> None:
    """Import what the served commands import: the command line, pygit2, each command."""
    from git_continuity import cli_table
    from git_continuity import repo as _repo  # noqa: F401  (pygit2)

    importlib.import_module("git_continuity.cli")
    commands = [c for c in cli_table.COMMANDS if c.name in helper.SERVED]
    while commands:
        command = commands.pop()
        commands.extend(command.subcommands)
        if command.target:
            importlib.import_module(command.target.partition(":")[0])


def _listen() -> socket.socket | None:
    """Listen on the socket, made under another name and linked into place, so that of two
    helpers started at once only one takes it (None: another did)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    partial = f".helper.{os.getpid()}.sock"
    os.umask(0o077)
    listener.bind(partial)
    listener.listen(16)
    try:
        os.link(partial, helper.SOCKET)
    except OSError:
        listener.close()
        return None
    finally:
        os.unlink(partial)
    return listener


def _identity() -> tuple[int, int, int] | None:
    """The socket file's device, inode and change time (an inode alone is soon reused)."""
    try:
        found = os.stat(helper.SOCKET)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_ctime_ns


def _still(mine: tuple[int, int, int] | None) -> bool:
    return mine is not None and _identity() == mine


def _answer(
    listener: socket.socket,
    own: bytes,
    idle: float,
    mine: tuple[int, int, int] | None,
    wake: int,
    running: dict[int, socket.socket],
) -> Taken | None:
    last = time.monotonic()
    while True:
        ready = select.select([listener.fileno(), wake], [], [], TICK)[0]
        if wake in ready:
            os.read(wake, 512)
            _reap(running, block=False)
        if listener.fileno() in ready:
            connection, _ = listener.accept()
            last = time.monotonic()
            taken = _take(listener, connection, own, wake, running)
            if isinstance(taken, list):
                return taken  # in the command's copy
            if taken == "fingerprint":
                return None
        elif not ready and not running and (time.monotonic() - last > idle or not _still(mine)):
            return None


def _reap(running: dict[int, socket.socket], *, block: bool) -> None:
    """Tell each client whose command ended how it ended (a negative code: killed by that signal)."""
    while running:
        try:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            running.clear()
            return
        if pid == 0:
            return
        connection = running.pop(pid, None)
        if connection is not None:
            with connection:
                try:  # noqa: SIM105
                    connection.sendall(f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass
        if block:
            return


def _take(
    listener: socket.socket, connection: socket.socket, own: bytes, wake: int, running: dict[int, socket.socket]
) -> Taken | str | None:
    """Read one request and fork its command: in the copy, the command to run; in the
    helper, the reason it was refused, if it was."""
    connection.settimeout(5)
    try:
        peer = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", peer)[1] != os.getuid():
            connection.close()
            return "user"
        theirs, data = _receive(connection)
        if theirs != own:
            os.unlink(helper.SOCKET)  # the client starts the helper of its own installation
            connection.sendall(b"refused fingerprint\n")
            connection.close()
            return "fingerprint"
        request = marshal.loads(data)
        if not isinstance(request, dict):
            connection.close()
            return "request"
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            for other in (listener, *running.values()):  # a client reaching a killed helper is refused
                other.close()
            os.close(wake)
            return _child(connection, request)
        running[pid] = connection
    except (OSError, ValueError, EOFError, TypeError, struct.error):
        connection.close()
        return "request"
    return None


def _receive(connection: socket.socket) -> tuple[bytes, bytes]:
    """The fingerprint and the request."""
    data = b""
    while len(data) < 8:
        more = connection.recv(8 - len(data))
        if not more:
            raise ValueError("short request")
        data += more
    sizes = struct.unpack("!II", data)
    if sum(sizes) > MOST:
        raise ValueError("request too long")
    body = bytearray()
    while len(body) < sum(sizes):
        more = connection.recv(min(1 << 20, sum(sizes) - len(body)))
        if not more:
            raise ValueError("short request")
        body += more
    return bytes(body[: sizes[0]]), bytes(body[sizes[0] :])


def _streams_of(connection: socket.socket) -> list[int]:
    """The client's go, and the standard streams it passes with it (none: no go)."""
    data, ancillary, _, _ = connection.recvmsg(3, socket.CMSG_SPACE(3 * array.array("i").itemsize))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            received = array.array("i")
            received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
            fds.extend(received)
    if data != b"go\n" or len(fds) != 3:
        return []
    return fds


def _child(connection: socket.socket, request: dict[str, Any]) -> Taken:
    """Become the client's process for one command; the command, once the client said go.
    Anything wrong before that, and the copy leaves having run nothing (the client runs the
    command itself)."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for name in helper.FORWARDED:  # as the client has them
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for signum in request["ignored"]:
            signal.signal(signum, signal.SIG_IGN)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(int(request["umask"]))
        from git_continuity import repo as git

        git.reread_environment()
        argv = [str(arg) for arg in request["argv"]]
        sys.argv = ["git-continuity", *argv]
        connection.sendall(f"started {os.getpid()}\n".encode())
        fds = _streams_of(connection)
        if not fds:
            os._exit(0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _streams(request["streams"])
    except BaseException:  # nothing ran: the client runs the command itself
        os._exit(1)
    connection.settimeout(None)
    threading.Thread(target=_die_with_client, args=(connection,), daemon=True).start()
    return argv


def _die_with_client(connection: socket.socket) -> None:
    """The client sends nothing more: its end closes when it dies, and so does the command."""
    try:
        while connection.recv(4096):
            pass
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


def _streams(kinds: list[list[str]]) -> None:
    """Standard input, output and error as Python made them in the client (encoding, error
    handler), on the client's descriptors; the process keeps them open to its end."""
    (in_encoding, in_errors), (out_encoding, out_errors), (err_encoding, err_errors) = kinds
    raw_in, raw_out, raw_err = (open(fd, mode, closefd=False) for fd, mode in ((0, "rb"), (1, "wb"), (2, "wb")))  # noqa: SIM115
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(raw_in, in_encoding, in_errors, newline="\n")  # type: ignore[misc]
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(  # type: ignore[misc]
        raw_out, out_encoding, out_errors, newline="\n", line_buffering=os.isatty(1)
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(  # type: ignore[misc]
        raw_err, err_encoding, err_errors, newline="\n", line_buffering=True
    )
