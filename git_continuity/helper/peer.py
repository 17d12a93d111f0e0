"""What a helper and its client must share for a command to run in the helper exactly as in
the client: the fingerprint (the client says it, and it names the socket, so each kind of
client has a helper of its own) and the confinement, which the helper reads itself, from
``/proc``, for the process at the other end of the socket.

Standard library only, and cheap: the client computes the fingerprint at every command.
"""

from __future__ import annotations

import os
import sys
import zlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# The environment read once, when a process starts (the dynamic loader, the C library's locale
# and time zone, Python's own settings) or that changes what git and libgit2 do: a command must
# not run in a helper that started with other values. Not in it: GIT_CONTINUITY_*, ours, read
# by each command from its own environment (a session's id must not need a helper of its own),
# and GIT_EXEC_PATH, which git sets when it runs `git continuity` (where git's own commands
# are, as PATH says where the others are; the command's git gets it from the client).
NAMES = ("LANG", "LANGUAGE", "TZ")
PREFIXES = ("LD_", "LC_", "PYTHON", "GIT_")
UNSHARED = ("GIT_CONTINUITY_", "GIT_EXEC_PATH")
# The lines of /proc/<pid>/status that confine a process: who it is (every uid and gid, the
# supplementary groups), what it may do (capabilities, no-new-privileges, seccomp) and where
# it may run.
STATUS = (
    "Uid",
    "Gid",
    "Groups",
    "NoNewPrivs",
    "Seccomp",
    "Seccomp_filters",
    "CapInh",
    "CapPrm",
    "CapEff",
    "CapBnd",
    "CapAmb",
    "Cpus_allowed_list",
    "Mems_allowed_list",
)
SPACES = ("mnt", "pid", "net", "user", "uts", "ipc", "cgroup", "time")


def fingerprint(paths: Sequence[str]) -> str:
    """The code (the Python, its settings, this package's files with their sizes and times,
    the folders modules are found in with their times: installing or upgrading a package
    changes its folder's), the environment read at a process's start (NAMES, PREFIXES), the
    umask, and the confinement (confinement("self"))."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = [sys.executable, sys.version, package, repr(sys.flags), repr(sorted(sys._xoptions.items()))]
    parts += [sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()]
    parts += sorted(
        f"{key}={value}"
        for key, value in os.environ.items()
        if key in NAMES or (key.startswith(PREFIXES) and not key.startswith(UNSHARED))
    )
    mask = os.umask(0o22)
    os.umask(mask)
    parts.append(f"umask={mask:o}")
    parts += confinement("self")
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


def name_of(fingerprint: str) -> str:
    """The socket's name for a fingerprint (as chg names its server by its settings): each
    kind of client finds its own helper. Two that share a name are told apart by the helper,
    which compares the whole fingerprint."""
    data = fingerprint.encode("utf-8", "surrogateescape")
    return f"helper-{zlib.crc32(data):08x}{zlib.adler32(data):08x}.sock"


def confinement(pid: str) -> list[str]:
    """What confines process ``pid`` ("self" for this one), read from /proc as the kernel
    keeps it: its program, namespaces, root, ids and groups, capabilities, no-new-privileges
    and seccomp, security label, cgroup, resource limits, niceness and CPUs. A command must not
    run in a helper confined otherwise than its client. What cannot be read is marked so (a
    mark never equals a value read)."""
    proc = f"/proc/{pid}"
    found = [_read(os.readlink, f"{proc}/exe")]
    found += [_read(os.readlink, f"{proc}/ns/{space}") for space in SPACES]
    try:
        root = os.stat(f"{proc}/root")
        found.append(f"root {root.st_dev}:{root.st_ino}")
    except OSError:
        found.append("?root")
    status = _read(_text, f"{proc}/status")
    lines = dict(line.partition(":")[::2] for line in status.splitlines())
    found += [f"{key}:{lines.get(key, '').strip()}" for key in STATUS]
    found += [_read(_text, f"{proc}/{name}") for name in ("cgroup", "attr/current", "limits")]
    stat = _read(_text, f"{proc}/stat").rpartition(")")[2].split()
    found.append(f"nice={stat[16] if len(stat) > 16 else '?'}")
    return found


def _text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as file:
        return file.read()


def _read(reader: object, path: str) -> str:
    try:
        return str(reader(path))  # type: ignore[operator]
    except OSError:
        return "?" + path.split("/", 3)[3]  # what could not be read: equal only to the same unread
