"""Lock files of refs, and who holds them.

git and libgit2 take ``<ref>.lock`` beside a loose ref while they move it. A writer killed at
that moment (kill -9, a power cut) leaves the lock behind, and every later write of the ref
fails; retrying never helps (issue 10). So each of our writers records itself while it holds
a lock: ``.git/continuity/locks/<ref>.json`` (pid, host, when), written once the lock is
taken and removed once it is let go; the lock holder is the only writer of its record.

A lock is then judged. Its writer is gone when the record names a process of this machine
that no longer runs, or, with no record of its own (git's own writers keep none, and hold a
ref's lock for a moment), when the lock is older than any write takes (``STALE_AFTER``).
A process of another machine (a shared file system) cannot be asked: it counts as running.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from git_continuity import atomic
from git_continuity.repo.base import Repo

STALE_AFTER = 30.0  # seconds: no write of one ref holds its lock this long
SLACK = 2.0  # a record written this long before its lock's time is an older lock's


@dataclass(frozen=True)
class Lock:
    """One ref's lock file as found, and what is known of its writer."""

    ref: str
    path: Path
    age: float  # seconds since the lock file was made
    pid: int | None  # the writer's, when it recorded itself
    host: str | None
    gone: bool  # the writer no longer runs: the lock can be removed

    def describe(self) -> str:
        """The lock file, how old it is and who left it, in one line."""
        age = _age(self.age)
        if self.pid is None:
            gone = f" (no write holds a lock {_age(STALE_AFTER)}): its writer is gone" if self.gone else ""
            return f"{self.path}, {age} old, with no record of its writer{gone}"
        if self.gone:
            return f"{self.path}, {age} old, left by process {self.pid} on {self.host}, which no longer runs"
        if self.host != socket.gethostname():
            return f"{self.path}, {age} old, held by process {self.pid} on {self.host} (another machine)"
        return f"{self.path}, {age} old, held by process {self.pid} on {self.host}, which is still running"


def _age(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def lock_path(repo: Repo, refname: str) -> Path:
    return repo.common_dir / f"{refname}.lock"


def record_path(repo: Repo, refname: str) -> Path:
    return repo.local_dir / "locks" / f"{refname}.json"


@contextlib.contextmanager
def holding(repo: Repo, refname: str) -> Iterator[None]:
    """Record this process as the writer of refname's lock (just taken) until the block ends."""
    record = record_path(repo, refname)
    data = {"pid": os.getpid(), "host": socket.gethostname(), "at": time.time()}
    with contextlib.suppress(OSError):  # a record that cannot be written only costs a judgement by age
        atomic.write(record, json.dumps(data) + "\n")
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            record.unlink()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    except OSError:
        return True
    return True


def judge(repo: Repo, refname: str) -> Lock | None:
    """The lock of refname, if there is one, and whether its writer is gone."""
    path = lock_path(repo, refname)
    try:
        made = path.stat().st_mtime
    except OSError:
        return None
    age = max(0.0, time.time() - made)
    try:
        data = json.loads(record_path(repo, refname).read_text())
        pid, host, at = int(data["pid"]), str(data["host"]), float(data["at"])
    except (OSError, ValueError, KeyError, TypeError):
        pid, host, at = 0, "", 0.0
    if not pid or at < made - SLACK:
        return Lock(refname, path, age, None, None, age > STALE_AFTER)
    gone = host == socket.gethostname() and not _running(pid)
    return Lock(refname, path, age, pid, host, gone)


def every_lock(repo: Repo, prefixes: tuple[str, ...]) -> list[Lock]:
    """The locks of every ref under the prefixes (e.g. ``refs/continuity/``), or of the ref
    a prefix names itself."""
    found = []
    for prefix in prefixes:
        base = repo.common_dir / prefix
        candidates = list(base.rglob("*.lock")) if base.is_dir() else []
        candidates += [p for p in [repo.common_dir / f"{prefix.rstrip('/')}.lock"] if p.is_file()]
        for path in sorted(set(candidates)):
            refname = path.relative_to(repo.common_dir).as_posix().removesuffix(".lock")
            lock = judge(repo, refname)
            if lock is not None:
                found.append(lock)
    return found


def clear(repo: Repo, lock: Lock) -> None:
    """Remove a lock whose writer is gone, and its record."""
    with contextlib.suppress(FileNotFoundError):
        lock.path.unlink()
    with contextlib.suppress(FileNotFoundError):
        record_path(repo, lock.ref).unlink()
