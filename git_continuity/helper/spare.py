"""A copy of the helper forked ahead of the next command, while the helper is idle, and handed
that command in place of a fork made then.

A copy made by fork shares the helper's memory until it writes it; each page it writes is
copied on that first write. A session start writes 4,000 pages of what it inherited (Python's
reference counts are writes), 6 ms of a session start on a history of git/git's size, and
the fork itself is another. The spare makes the helper's writable memory its own at once
(``madvise(MADV_POPULATE_WRITE)``, Linux 5.14, one call a mapping) before any command is
known, then waits; the helper hands it the next command's connection and request down a
socket pair, and it becomes that command's process as a fork would have (helper_copy.become).

The spare has run nothing of a command: what it holds is what the helper holds. It ends when
the helper's end of the pair closes (the helper left, or was killed).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
from dataclasses import dataclass

MOST_MAPPING = 64 << 20  # a writable mapping larger than this is left alone (a reservation, not used memory)
POPULATE_WRITE = 23  # MADV_POPULATE_WRITE (linux/mman.h)
PR_SET_PDEATHSIG = 1  # linux/prctl.h
HEADER = struct.Struct("!I")
READY = b"r"
RESERVE = 8 << 20  # bytes of small objects' memory made ready for a spare's command (reserve)
OBJECT = 200  # bytes of each object made: a size Python's own allocator serves (up to 512)
STRIDE = 1_000  # one object kept of so many (240 KB): at least one in each arena (256 KB to 1 MB)
_kept: list[bytes] = []  # in a spare: what keeps the reserve's arenas mapped


@dataclass
class Spare:
    pid: int
    channel: socket.socket  # the helper's end of the pair
    ready: bool = False  # it said its memory is its own: a command handed now does not wait for that


def fork(keep_closed: list[socket.socket]) -> Spare | socket.socket:
    """Fork a spare: in the helper, the Spare; in the spare, its end of the pair (the helper's
    sockets in ``keep_closed`` closed there: its listener, and its end of every other spare's
    pair, which would keep that spare waiting once the helper closed its own)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    helper = os.getpid()
    pid = os.fork()
    if pid == 0:
        _die_with(helper)
        signal.set_wakeup_fd(-1)
        for each in (ours, *keep_closed):
            each.close()
        return theirs
    theirs.close()
    return Spare(pid, ours)


def _die_with(helper: int | None) -> None:
    """Be killed with the helper (PR_SET_PDEATHSIG) while a spare: it never outlives it, even
    for the moment its pair takes to close. None: no more (a command, once handed, runs to
    its end whatever becomes of the helper, as a fork's does)."""
    with contextlib.suppress(ImportError, OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL if helper else 0, 0, 0, 0)
    if helper is not None and os.getppid() != helper:  # it died before that was set
        os._exit(0)


def hand(spare: Spare, connection: socket.socket, request: bytes) -> bool:
    """Give the spare a command (its connection and its marshalled request); False where the
    spare could not take it (gone, and the command is forked as before). Its pair is closed
    either way: the helper holds the only copy of its end (fork), so a spare that is still
    there ends. It is not killed: its pid may be another process's by now."""
    data = HEADER.pack(len(request)) + request
    try:
        sent = socket.send_fds(spare.channel, [data], [connection.fileno()])
    except OSError:
        spare.channel.close()
        return False
    try:
        if sent < len(data):  # the rest of a long request (the spare may have read all and gone on)
            spare.channel.sendall(data[sent:])
    except OSError:
        pass  # it holds the connection: having run nothing, it ends, and the helper tells the client
    finally:
        spare.channel.close()
    return True


def ready(spare: Spare) -> bool:
    """Read the spare's word that it is ready (the helper's select saw its end readable);
    False where it is gone instead (its end of the pair is then closed)."""
    try:
        spare.ready = spare.channel.recv(1) == READY
    except OSError:
        spare.ready = False
    if not spare.ready:
        spare.channel.close()
    return spare.ready


def wait(channel: socket.socket) -> tuple[socket.socket, bytes] | None:
    """In the spare: make its memory its own, say it is ready, then wait for its command
    (None: the helper closed the pair without one)."""
    populate()
    _kept[:] = reserve()
    try:
        channel.sendall(READY)
        data, fds, _, _ = socket.recv_fds(channel, 1 << 16, 1)
        while len(data) >= HEADER.size and len(data) < HEADER.size + HEADER.unpack_from(data)[0]:
            more = channel.recv(1 << 20)
            if not more:
                break
            data += more
    except OSError:
        return None
    finally:
        channel.close()
    if len(fds) != 1 or len(data) < HEADER.size or len(data) != HEADER.size + HEADER.unpack_from(data)[0]:
        for fd in fds:
            os.close(fd)
        return None
    _die_with(None)
    return socket.socket(fileno=fds[0]), data[HEADER.size :]


def reserve() -> list[bytes]:
    """Memory for the command's new objects, its pages written now: Python gives small objects
    memory in arenas it maps as it needs them, and each page of a new arena costs a fault on
    its first write (a session start on git/git's shape: a thousand, 4 ms in a virtual machine).
    RESERVE bytes of objects are made, then freed but for one every STRIDE, which keeps their
    arenas mapped: their free pools serve the command's objects before any new arena."""
    made = [bytes(OBJECT) for _ in range(RESERVE // (OBJECT + 40))]
    return made[::STRIDE]


def populate() -> None:
    """Copy every page of the process's private writable memory now, as the kernel does on a
    first write (nothing where the kernel cannot: older than 5.14, or not Linux)."""
    try:
        import ctypes

        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (ImportError, OSError, AttributeError):
        return
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                if fields[1] != "rw-p" or (len(fields) > 5 and fields[5].startswith("[v")):
                    continue  # [vvar], [vdso], [vsyscall]: the kernel's
                low, high = (int(end, 16) for end in fields[0].split("-"))
                if high - low <= MOST_MAPPING and madvise(low, high - low, POPULATE_WRITE) != 0:
                    return  # not known to this kernel: the first writes copy the pages, as after a fork
    except OSError:
        return
