"""The helper: a process per user, repository and kind of client (helper_peer's fingerprint)
that has imported what commands need, and forks a copy of itself to run each command it is
handed (helper/door.py says which, and when).

It takes the repository's ``continuity`` folder only where git would (helper_place), holds a
lock there so that one helper serves each fingerprint, and, once warmed, listens on the socket
that fingerprint names. It answers only its own user, reads the confinement of the process at the
other end itself (SO_PEERCRED, then /proc/<pid>) and refuses one confined otherwise, or a
fingerprint not its own, without stepping down: each kind of client keeps its own helper.

Nothing waits unboundedly: one ``select`` loop takes every connection, reads each request as
it arrives, drops one that did not arrive whole within HANDSHAKE seconds, and holds at most
PER_CLIENT connections of one process and MOST_PENDING in all. It leaves when idle for
GIT_CONTINUITY_HELPER_IDLE seconds, or when its socket is no longer the one it made (removed,
replaced, the repository deleted); it removes only that socket, checked by its inode.

A command's copy (helper_copy) becomes the client's process and returns to the top of the
program, where ``run`` runs the command. The helper waits for it and tells the client its exit
status. The helper itself never reads the repository, and imports but calls nothing, so no
cache of one command is seen by the next.
"""

from __future__ import annotations

import fcntl
import gc
import importlib
import marshal
import math
import os
import select
import signal
import socket
import struct
import sys
import time
from dataclasses import dataclass, field

from git_continuity.helper import door as helper
from git_continuity.helper import forked as helper_copy
from git_continuity.helper import peer as helper_peer
from git_continuity.helper import place as helper_place
from git_continuity.helper import spare as helper_spare
from git_continuity.trust import sshsig

IDLE_ENV = "GIT_CONTINUITY_HELPER_IDLE"
IDLE_SECONDS = 300.0
TICK = 2.0  # how often an idle helper checks that its socket is still its own
SPARE_AFTER = 0.01  # seconds of quiet before a spare is forked (helper_spare), once the last command ended
SPARES = 2  # spares kept by a helper whose commands came closer together than a spare is made
MOST = 64 << 20  # the longest request taken (arguments and environment)
PER_CLIENT = 4  # connections of one process being read at once; more are closed
MOST_PENDING = 64  # connections being read at once, of all processes
Taken = helper_copy.Taken
run = helper_copy.run


@dataclass
class Pending:
    """A connection whose request is still arriving."""

    connection: socket.socket
    pid: int
    deadline: float
    data: bytearray = field(default_factory=bytearray)


def serve(folder: str, starter: str | None = None) -> Taken | None:
    """Answer commands until it is time to leave (None); in a command's copy, the command.
    ``starter`` is the socket's name as the client that started this helper has it: its mark
    goes once this helper listens or gives up, even where this helper's name differs (a client
    run with interpreter options of its own), so that no command waits for it in vain."""
    fd = helper_place.open_folder(folder)
    if fd is None:
        return None
    os.fchdir(fd)
    own = helper_peer.fingerprint(sys.path)
    name = helper_peer.name_of(own)
    if starter is not None and starter != name:
        helper_place.arrived(starter)
    lock = _lock(name)
    if lock is None:  # another helper of this fingerprint holds it
        os.close(fd)
        return None
    listener = _bind() if lock >= 0 else None
    if listener is not None:
        # Warmed before it is found: the client that started it ran its command at once, and
        # those that came while it warms wait for it (helper/door.py), none longer than STARTING.
        _warm()
        # What the warming made lives as long as the helper: the collector leaves it be, in each
        # command's copy too (whose interpreter exit, a collection, took twice as long without).
        gc.freeze()
        listener = _place(listener, fd, name)
    helper_place.arrived(name)
    os.close(fd)
    if listener is None:
        helper_place.failed(folder, name)
        if lock >= 0:
            os.close(lock)
        return None
    helper_place.listened(folder, name)
    me, mine = os.getpid(), _identity(name)
    wake, woken = os.pipe()
    os.set_blocking(woken, False)
    signal.set_wakeup_fd(woken)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)  # wakes select through the pipe
    running: dict[int, socket.socket] = {}
    pending: dict[int, Pending] = {}
    spares: list[helper_spare.Spare] = []
    helper_copy.CLOSE[:] = [lock, wake, woken]
    try:
        return _answer(listener, own.encode("utf-8", "surrogateescape"), name, mine, wake, running, pending, spares)
    finally:
        if os.getpid() == me:
            if _identity(name) == mine:
                os.unlink(name)
            listener.close()
            for each in pending.values():
                each.connection.close()
            for spare in spares:  # it ends on its own once its pair is closed
                spare.channel.close()
            while running:  # tell the clients still waiting how their commands end
                _reap(running, block=True)
            os.close(lock)


def _idle() -> float:
    try:
        idle = float(os.environ.get(IDLE_ENV, IDLE_SECONDS))
    except ValueError:
        return IDLE_SECONDS
    return idle if math.isfinite(idle) and idle > 0 else IDLE_SECONDS


# Imported before any command, beside each command's own module: what status, check and the
# agents' hooks import on the way (the verifiers, the brief, the Stop gate). None reads the
# environment when imported: the copy takes the client's.
WARM = (
    "git_continuity.cli.main",
    "git_continuity.hooks.guards",
    "git_continuity.agents.hooks",
    "git_continuity.agents.briefed",
    "git_continuity.agents.shell",
    "git_continuity.gate.stop",
    "git_continuity.clone.gate_presence",
    "git_continuity.api",
    "git_continuity.plugins.forge",
    *(f"git_continuity.verifiers.{name}" for name in ("cmd", "git", "ci", "github", "gitlab", "gitea", "buildbot")),
    "_strptime",
    *sshsig.MODULES,  # Ed25519 signatures made and checked with no ssh-keygen process (trust/sshsig.py)
)


def _warm() -> None:
    """Import what the served commands import: the command line, pygit2, each command, the
    agents' hooks."""
    from git_continuity import repo as _repo  # noqa: F401  (pygit2)
    from git_continuity.cli import table as cli_table

    for module in WARM:
        importlib.import_module(module)
    from git_continuity.plugins import manager as plugin_manager

    # Registering the verifiers costs a command 5 ms: made here when every plugin installed is
    # one of ours (what is installed is in the fingerprint; another's plugin might read the
    # environment when imported, and so is imported by each command, as in its own process).
    if all(reference.startswith("git_continuity.") for _, reference, _ in plugin_manager.entry_points()):
        plugin_manager.loaded()
    from git_continuity import store
    from git_continuity.store import schema

    # A fleet's writers each meet the entries the others wrote, and its syncs the states they
    # fetch: each copy would otherwise import jsonschema and build a validator to check them.
    schema.warm((*store.STORED, "policy"))
    schema.digest(store.STORED)  # what names the validity cache: its schemas read, once
    # A write's first uses of what it always uses, made once here: the packet's round trip
    # through ruamel.yaml and a change spliced into its text, proven by libyaml (each imports
    # more on first use), a signature (sshsig.warm), and the whole command line (cli.warm).
    from git_continuity.cli import main as cli
    from git_continuity.store import packetedit, packetfile

    packetfile.dump(packetfile.parse(packetfile.TEMPLATE, validate=False)[0])
    packetedit.warm()  # loaded here, libyaml proves every packet's splice, however small
    packetfile.Edit("next_action", "text").on_text(packetfile.TEMPLATE)
    sshsig.warm()
    cli.warm()
    commands = [c for c in cli_table.COMMANDS if c.served]
    while commands:
        command = commands.pop()
        commands.extend(command.subcommands)
        if command.target:
            importlib.import_module(command.target.partition(":")[0])


def _lock(name: str) -> int | None:
    """The lock that makes this the one helper of its fingerprint here, held while it lives:
    None when another holds it, -1 when it cannot be made (a read-only folder)."""
    try:
        fd = os.open(name.replace(".sock", ".lock"), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        return -1
    return fd


def _bind() -> socket.socket | None:
    """A socket listening under a name of its own (None: no socket can be made here)."""
    os.umask(0o077)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(_partial())
        listener.listen(128)
    except OSError:
        listener.close()
        return None
    return listener


def _partial() -> str:
    return f".helper.{os.getpid()}.sock"


def _place(listener: socket.socket, folder: int, name: str) -> socket.socket | None:
    """Move the listening socket to its name. What is at the name already is replaced only if
    it is a socket of this user's (left by a helper that was killed: the lock says none
    lives); a file, a link or another's is left alone (None)."""
    try:
        if helper_place.socket_state(folder, name) == "other":
            raise OSError(f"{name} is not a socket of this user's")
        os.rename(_partial(), name)
    except OSError:
        os.unlink(_partial())
        listener.close()
        return None
    listener.setblocking(False)
    return listener


def _identity(name: str) -> tuple[int, int, int] | None:
    """The socket file's device, inode and change time (an inode alone is soon reused)."""
    try:
        found = os.lstat(name)
    except OSError:
        return None
    return found.st_dev, found.st_ino, found.st_ctime_ns


def _answer(
    listener: socket.socket,
    own: bytes,
    name: str,
    mine: tuple[int, int, int] | None,
    wake: int,
    running: dict[int, socket.socket],
    pending: dict[int, Pending],
    spares: list[helper_spare.Spare],
) -> Taken | None:
    idle, confined = _idle(), helper_peer.confinement("self")
    last = time.monotonic()
    making = True  # spares: none more once one ended before it was ready (it would again)
    wanted, served = 1, 0  # spares kept (two once a command came with none ready), commands served
    while True:
        now = time.monotonic()
        # One spare at a time, once the commands are over: its making takes a core.
        more = making and not running and not pending and len(spares) < wanted and all(s.ready for s in spares)
        if more and now - last >= SPARE_AFTER:
            made = helper_spare.fork([listener, *(s.channel for s in spares)])
            if not isinstance(made, helper_spare.Spare):  # in the spare, once handed a command
                return _spare(made)
            spares.append(made)
            more = False
        soonest = min((each.deadline for each in pending.values()), default=now + TICK)
        if more:
            soonest = min(soonest, last + SPARE_AFTER)
        readers: list[socket.socket | int] = [listener, wake, *(each.connection for each in pending.values())]
        readers += [spare.channel for spare in spares]  # a word that it is ready, or that it is gone
        ready = select.select(readers, [], [], max(0, soonest - now))[0]
        now = time.monotonic()
        if wake in ready:
            os.read(wake, 512)
            _reap(running, block=False)
        making = _heard(spares, ready) and making
        if listener in ready:
            last = now
            _accept(listener, pending, now)
        for connection in ready:
            if isinstance(connection, socket.socket) and connection.fileno() in pending:
                each = pending[connection.fileno()]
                request = _read(each)
                if request is None:
                    continue
                del pending[connection.fileno()]
                # Commands closer together than a spare is made: keep two from now on.
                wanted = SPARES if served and not any(s.ready for s in spares) else wanted
                served += 1
                taken = _take(each, request, own, confined, listener, running, pending, spares)
                if taken is not None:
                    return taken  # in the command's copy
                last = now
        for key, each in list(pending.items()):
            if each.deadline <= now:  # it did not send its request in time
                del pending[key]
                each.connection.close()
        quiet = not ready and not running and not pending
        if quiet and (now - last > idle or _identity(name) != mine):
            return None


def _heard(spares: list[helper_spare.Spare], ready: list[socket.socket | int]) -> bool:
    """Take what the spares whose end is readable said: a spare ready now is kept; one that
    ended is dropped. False where one ended before it was ready (it would again: no more)."""
    making = True
    for spare in [s for s in spares if s.channel in ready]:
        if spare.ready:  # a ready spare says nothing more: it ended (its pid is not kept)
            spare.channel.close()
        elif helper_spare.ready(spare):
            continue
        else:
            making = False
        spares.remove(spare)
    return making


def _spare(channel: socket.socket) -> Taken:
    """In a spare: the command it is handed, as a fork would have taken it (it leaves when the
    helper closes the pair without one). The helper's lock and wake-up pipe are closed while
    it waits: a helper that left must not be kept from its successor by its spare."""
    for fd in helper_copy.CLOSE:
        os.close(fd)
    helper_copy.CLOSE.clear()
    handed = helper_spare.wait(channel)
    if handed is None:
        os._exit(0)
    connection, body = handed
    try:
        asked = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        os._exit(1)  # the client, told nothing, runs the command itself
    return helper_copy.become(connection, asked)


def _accept(listener: socket.socket, pending: dict[int, Pending], now: float) -> None:
    """Take every connection waiting; keep those of this user's, within the bounds."""
    while True:
        try:
            connection, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return
        try:
            pid, uid, _ = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        except (OSError, struct.error):
            connection.close()
            continue
        theirs = sum(1 for each in pending.values() if each.pid == pid)
        if uid != os.geteuid() or pid <= 0 or theirs >= PER_CLIENT or len(pending) >= MOST_PENDING:
            connection.close()
            continue
        connection.setblocking(False)
        pending[connection.fileno()] = Pending(connection, pid, now + helper.HANDSHAKE)


def _read(each: Pending) -> tuple[bytes, bytes] | None:
    """What arrived of the request; the fingerprint and the request once it is whole. A
    connection that ended, or announced more than MOST, is closed (its deadline is now)."""
    try:
        more = each.connection.recv(1 << 20)
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:
        more = b""
    each.data += more
    sizes = struct.unpack("!II", each.data[:8]) if len(each.data) >= 8 else None
    if not more or (sizes is not None and sum(sizes) > MOST):
        each.deadline = 0.0
        return None
    if sizes is None or len(each.data) < 8 + sum(sizes):
        return None
    return bytes(each.data[8 : 8 + sizes[0]]), bytes(each.data[8 + sizes[0] :])


def _take(
    each: Pending,
    request: tuple[bytes, bytes],
    own: bytes,
    confined: list[str],
    listener: socket.socket,
    running: dict[int, socket.socket],
    pending: dict[int, Pending],
    spares: list[helper_spare.Spare],
) -> Taken | None:
    """Fork the request's command: in the copy, the command to run. A client of another
    fingerprint or confinement is refused, and the helper goes on serving its own."""
    connection = each.connection
    theirs, body = request
    refused = None
    if theirs != own:
        refused = "fingerprint"
    elif helper_peer.confinement(str(each.pid)) != confined:
        refused = "confinement"
    try:
        asked = marshal.loads(body) if refused is None else None
    except (ValueError, EOFError, TypeError):
        asked = None
    if refused is None and not isinstance(asked, dict):
        refused = "request"
    if refused is not None or not isinstance(asked, dict):
        _say(connection, f"refused {refused}\n")
        connection.close()
        return None
    asked["caller"] = each.pid  # the kernel's word for who asked (SO_PEERCRED), for session.caller_pid
    spare = next((s for s in spares if s.ready), None)
    if spare is not None:
        spares.remove(spare)
        if helper_spare.hand(spare, connection, marshal.dumps(asked)):
            running[spare.pid] = connection
            return None
    pid = os.fork()
    if pid == 0:
        signal.set_wakeup_fd(-1)
        others = (listener, *running.values(), *(e.connection for e in pending.values()), *(s.channel for s in spares))
        for other in others:
            other.close()  # a client reaching a killed helper is refused, not left waiting
        return helper_copy.become(connection, asked)
    running[pid] = connection
    return None


def _say(connection: socket.socket, line: str) -> None:
    try:  # noqa: SIM105
        connection.send(line.encode())
    except OSError:
        pass


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
                _say(connection, f"exit {os.waitstatus_to_exitcode(status)}\n")
        if block:
            return
