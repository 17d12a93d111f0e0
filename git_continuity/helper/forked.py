"""A command's copy of the helper: it becomes the client's process for one command.

It takes the client's folder, environment, umask and ignored signals, says its pid, waits for
the client's go with the client's standard input, output and error, says it runs, and
returns to the top of the program (helper_server.serve returns the command there, ``run``
runs it), so that it ends as a command in its own process ends: the interpreter's own exit,
flush and traceback.

No thread watches the client: the socket is set to signal the copy (SIGIO, which ends the
command as a Ctrl-C does) when the client's end closes, so a killed client takes its command
with it. Just before it ends, the copy says the exit code it ends with on its own end of the
socket, so the client learns it even when the helper is gone.
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import gc
import io
import os
import select
import signal
import socket
import sys
from typing import Any, NoReturn

from git_continuity.constants import ENV_CALLER
from git_continuity.helper import door as helper

Taken = list[str]  # in a command's copy: the arguments it is to run
GO_WAIT = 10.0  # seconds a copy waits for its client's go (the client waits HANDSHAKE at most)
CLOSE: list[int] = []  # the helper's own descriptors (its lock, its wake-up pipe), closed in each copy
_client: list[socket.socket] = []  # the connection a running command's copy reports on


def become(connection: socket.socket, request: dict[str, Any]) -> Taken:
    """Become the client's process for one command; the command, once the client said go.
    Anything wrong before that, and the copy leaves having run nothing (the client runs the
    command itself)."""
    try:
        for fd in CLOSE:
            os.close(fd)
        connection.setblocking(True)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for name in helper.FORWARDED:  # as the client has them
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGIO, _client_gone)
        for signum in request["ignored"]:
            signal.signal(signum, signal.SIG_IGN)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ[ENV_CALLER] = str(int(request.get("caller") or 0) or "")  # never the client's own word
        os.umask(int(request["umask"]))
        from git_continuity import repo as git

        git.reread_environment()
        argv = [str(arg) for arg in request["argv"]]
        sys.argv = ["git-continuity", *argv]
        connection.settimeout(GO_WAIT)
        connection.sendall(f"started {os.getpid()}\n".encode())
        fds = _streams_of(connection)
        if not fds:
            os._exit(0)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _streams(request["streams"])
        _die_with_client(connection, True)
        if select.select([connection], [], [], 0)[0]:  # it closed before the signal was set
            os._exit(1)
        connection.settimeout(None)
        connection.sendall(b"running\n")
    except BaseException:  # nothing ran: the client runs the command itself
        os._exit(1)
    _client[:] = [connection]
    return argv


def run(argv: Taken) -> NoReturn:
    """Run the command in this copy, at the top of the program: it ends as in its own process,
    having said its exit code to the client."""
    from git_continuity.cli.main import main

    # One command, then os._exit: nothing it makes outlives it, so the cycle collector would
    # only walk its values over and over (a brief of 1,000 claims spent 10 to 20 ms there).
    gc.disable()
    try:
        code: object = main(argv)
    except SystemExit as stop:  # argparse's errors and --help
        code = stop.code
    except KeyboardInterrupt:
        raise  # it ends killed by SIGINT: the helper says so
    except BaseException:
        _report(1, "raising")  # a traceback is still to be written, then exit 1
        raise
    _end(code)


def _end(code: object) -> NoReturn:
    """End as the interpreter ends at exit (SystemExit's code, the exit functions, the streams
    flushed), but without its teardown: freeing all that this copy inherited from the helper
    takes 10 ms and more, while the client, and the agent reading the command's output until
    its end, wait. The streams are closed, then the code is said, then the process leaves."""
    import atexit

    if isinstance(code, str):
        print(code, file=sys.stderr)
    number = 0 if code is None else code if isinstance(code, int) else 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if not stream.closed:  # as the interpreter flushes them: `| head` closed stderr (cli.main)
                stream.flush()
        except (OSError, ValueError):
            number = number or 120  # as Python exits when it cannot flush standard output
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.close(fd)
    _report(number)
    os._exit(number)


def _report(number: int, word: str = "ran") -> None:
    """Say the exit code the copy ends with: ``ran`` once its streams are closed (the client
    may end at once), ``raising`` when a traceback is still to be written."""
    for connection in _client:
        _die_with_client(connection, False)  # the command is over; its last flush is not cut short
        try:  # noqa: SIM105
            connection.sendall(f"{word} {number}\n".encode())
        except OSError:
            pass


def _client_gone(_signum: int, _frame: object) -> None:
    """The client died (its end of the connection closed: SIGIO): the command ends as a Ctrl-C
    ends it, so that what it started in a session of its own (a command check) is ended too,
    which a death by the signal itself would leave running."""
    raise KeyboardInterrupt


def _die_with_client(connection: socket.socket, on: bool) -> None:
    """The client sends nothing after its go: its end closes when it dies, which signals this
    process (SIGIO) and ends it (_client_gone), as a command in its own process dies with the
    client."""
    fd = connection.fileno()
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    if on:
        fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_ASYNC if on else flags & ~os.O_ASYNC)


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
