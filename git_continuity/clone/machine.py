"""The machine as the limit: whether a failure says the machine ran out (memory, disk, time),
and what this machine has, so a handoff can say it and a brief on another machine can say
whether that one is larger.

Standard library only (a leaf): the stop-loss and the handoff read it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# What a failure says when the machine, not the code, was the limit: the kernel's OOM killer
# (signal 9, a shell's exit 137, "Killed"), an allocation or a write that found nothing left,
# a container killed for its memory, a command stopped at its time budget's wall.
_SIGNS = (
    ("memory", re.compile(r"\bexit (?:-9|137)\b|\bsignal 9\b|\bSIGKILL\b")),
    ("memory", re.compile(r"(?m)\bKilled\s*$|\bKilled (?:process|signal)\b")),
    ("memory", re.compile(r"Cannot allocate memory|Out of memory|out of memory|MemoryError|\bOOMKilled\b|\bENOMEM\b")),
    ("disk", re.compile(r"No space left on device|\bENOSPC\b|Disk quota exceeded")),
    ("time", re.compile(r"\btimed out after \d")),
)


def exhaustion(observed: str) -> str | None:
    """What the machine ran out of, when the observation says so: memory, disk or time."""
    for kind, sign in _SIGNS:
        if sign.search(observed):
            return kind
    return None


def _memory() -> int | None:
    """Bytes of memory a process here may use: the machine's, or its container's limit when
    lower (cgroup v2, then v1): a 3.8 GiB container on a 16 GiB laptop has 3.8."""
    try:
        found: int | None = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        found = None
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and (found is None or int(text) < found):
            found = int(text)
    return found


def here(path: Path | str = ".") -> dict[str, Any]:
    """This machine now: memory (bytes), free disk where ``path`` is (bytes), CPUs usable."""
    try:
        stat = os.statvfs(path)
        free: int | None = stat.f_bavail * stat.f_frsize
    except OSError:
        free = None
    try:
        cpus: int | None = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    found = {"memory": _memory(), "disk_free": free, "cpus": cpus}
    return {k: v for k, v in found.items() if v is not None}


def size(n: int) -> str:
    """Bytes for people: ``3.8 GiB``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.1f} TiB"  # unreachable: GiB is the last unit


def text(found: dict[str, Any]) -> str:
    """``3.8 GiB memory, 2 CPUs, 12.0 GiB free disk``."""
    parts = []
    if "memory" in found:
        parts.append(f"{size(found['memory'])} memory")
    if "cpus" in found:
        parts.append(f"{found['cpus']} CPU{'s' if found['cpus'] != 1 else ''}")
    if "disk_free" in found:
        parts.append(f"{size(found['disk_free'])} free disk")
    return ", ".join(parts) or "unknown"


def larger(here_now: dict[str, Any], there: dict[str, Any]) -> str:
    """Whether this machine is larger than ``there`` (what a handoff recorded), in words."""
    keys = [k for k in ("memory", "cpus") if k in here_now and k in there]
    if not keys:
        return "cannot tell whether it is larger"
    if all(here_now[k] > there[k] for k in keys):
        return "larger"
    if all(here_now[k] >= there[k] for k in keys):
        return "not smaller"
    return "not larger"


def brief_line(host: str, there: dict[str, Any], here_host: str, path: Path | str) -> str | None:
    """What a brief on another machine says of the last handoff's machine; None on the same host."""
    if host == here_host or not there:
        return None
    now = here(path)
    said = f"this one, {here_host}, has {text(now)}: {larger(now, there)}"
    return f"Machine: the last handoff was on {host} ({text(there)}); {said}."
