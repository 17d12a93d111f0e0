"""The helper: a process per user and repository that has imported what commands need, and
forks a copy of itself to run each command it is handed (helper.py says which, and when).

It listens on ``helper.sock`` in the repository's ``continuity`` folder, answers only its own
user (the socket's peer credentials), and steps down when a client's fingerprint is not its
own (an upgrade, another installation), when idle for GIT_CONTINUITY_HELPER_IDLE seconds, or
when its socket is no longer the one it made (removed, replaced, the repository deleted).

A command's copy takes the client's standard input, output and error, folder, environment,
umask and arguments, says its pid, runs ``cli.main`` exactly as the client would have, and
answers with the exit code. The helper itself never reads the repository, and imports but
calls nothing, so no cache of one command is seen by the next.
"""

from __future__ import annotations

import array
import importlib
import io
import marshal
import os
import select
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any

from git_continuity import helper

IDLE_ENV = "GIT_CONTINUITY_HELPER_IDLE"
IDLE_SECONDS = 300.0
TICK = 2.0  # how often an idle helper checks that its socket is still its own
MOST = 64 << 20  # the longest request taken (arguments and environment)


def serve(folder: str) -> None:
    os.chdir(folder)
    _warm()
    own = helper.fingerprint(sys.path).encode("utf-8", "surrogateescape")
    try:
        idle = float(os.environ.get(IDLE_ENV, IDLE_SECONDS))
    except ValueError:
        idle = IDLE_SECONDS
    listener = _listen()
    if listener is None:
        return
    mine = _identity()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the copies are reaped by the kernel
    try:
        if _answer(listener, own, idle, mine) != "fingerprint" and _still(mine):
            os.unlink(helper.SOCKET)  # (stepping down for another version, it was removed already)
    finally:
        listener.close()


def _answer(listener: socket.socket, own: bytes, idle: float, mine: tuple[int, int, int] | None) -> str:
    """Take requests until idle, or no longer the helper; why it stopped."""
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([listener], [], [], TICK)
        if not ready:
            if time.monotonic() - last > idle:
                return "idle"
            if not _still(mine):
                return "replaced"
            continue
        connection, _ = listener.accept()
        last = time.monotonic()
        with connection:
            if _take(listener, connection, own) == "fingerprint":
                return "fingerprint"


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


def _take(listener: socket.socket, connection: socket.socket, own: bytes) -> str | None:
    """Read one request and fork its command; the reason it was refused, if it was."""
    connection.settimeout(5)
    fds: list[int] = []
    try:
        peer = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        if struct.unpack("3i", peer)[1] != os.getuid():
            return "user"
        theirs, data, fds = _receive(connection)
        if theirs != own:
            os.unlink(helper.SOCKET)  # the client starts the helper of its own installation
            connection.sendall(b"refused fingerprint\n")
            return "fingerprint"
        request = marshal.loads(data)
        if len(fds) != 3 or not isinstance(request, dict):
            connection.sendall(b"refused request\n")
            return "request"
        if os.fork() == 0:
            listener.close()  # else a client could reach a helper that was killed meanwhile
            _child(connection, fds, request)
    except (OSError, ValueError, EOFError, TypeError, struct.error):
        return "request"
    finally:
        for fd in fds:
            os.close(fd)
    return None


def _receive(connection: socket.socket) -> tuple[bytes, bytes, list[int]]:
    """The fingerprint, the request and the descriptors passed with them."""
    data, ancillary, _, _ = connection.recvmsg(1 << 16, socket.CMSG_SPACE(3 * array.array("i").itemsize))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            received = array.array("i")
            received.frombytes(payload[: len(payload) - len(payload) % received.itemsize])
            fds.extend(received)
    if len(data) < 8:
        raise ValueError("short request")
    sizes = struct.unpack("!II", data[:8])
    if sum(sizes) > MOST:
        raise ValueError("request too long")
    body = bytearray(data[8:])
    while len(body) < sum(sizes):
        more = connection.recv(min(1 << 20, sum(sizes) - len(body)))
        if not more:
            raise ValueError("short request")
        body += more
    return bytes(body[: sizes[0]]), bytes(body[sizes[0] :]), fds


def _child(connection: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
    """The copy that runs one command as the client's process would have; it never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        connection.settimeout(None)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        fds.clear()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(int(request["umask"]))
        _streams(request["streams"])
        argv = [str(arg) for arg in request["argv"]]
        sys.argv = ["git-continuity", *argv]
        connection.sendall(f"started {os.getpid()}\n".encode())
    except BaseException:  # nothing ran yet: the client runs the command itself
        os._exit(1)
    try:
        from git_continuity.cli import main

        code = main(argv)
    except SystemExit as leaving:
        code = leaving.code if isinstance(leaving.code, int) else (0 if leaving.code is None else 1)
        if not isinstance(leaving.code, int) and leaving.code is not None:
            print(leaving.code, file=sys.stderr)
    except BaseException:  # as the interpreter would show it
        traceback.print_exc()
        code = 1
    code = _finish(code)
    try:
        connection.sendall(f"exit {code}\n".encode())
    finally:
        os._exit(code)


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


def _finish(code: int) -> int:
    """Flush as the interpreter does on leaving: output that cannot be written makes 120."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            if code == 0:
                code = 120
    return code
