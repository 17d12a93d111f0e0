"""Writers to one stream take turns (issue 10): a lock held around the read-build-swap of
one change.

The compare-and-swap alone keeps every change (a writer that lost re-reads and tries
again), but it is not fair: a writer whose change takes longer to build (the packet,
parsed and dumped through ruamel.yaml) loses to quicker ones again and again, and four busy
writers starved ``next`` for over a minute. Holding ``.git/continuity/writers/<stream>``
while a change is built and swapped makes them wait in turn instead; the compare-and-swap
still guards against anything that does not take the lock (another tool, git itself).

The lock is ``flock``: the kernel drops it when its holder exits, killed or not, so a dead
writer never leaves it behind. A writer that cannot get it within ``WAIT`` seconds (a
holder stopped or hung inside a long check) goes on without it, as before. Where ``fcntl`` does not
exist (Windows) there is no lock, only the compare-and-swap.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from git_continuity.repo import Repo

WAIT = 20.0  # seconds a writer waits for its turn before going on without it


@contextlib.contextmanager
def turn(repo: Repo, stream: str) -> Iterator[None]:
    """Hold this stream's writer lock for the duration (or go on without it, see above)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    path = repo.local_dir / "writers" / stream
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield  # a folder that cannot be written: the compare-and-swap alone
        return
    try:
        _take(fcntl, fd, WAIT)
        yield
    finally:
        os.close(fd)  # releases the lock


def _take(fcntl: Any, fd: int, wait: float) -> bool:
    """Whether the lock on fd was taken within ``wait`` seconds.

    A blocking ``flock`` wakes a waiter the moment the lock is free; polling would let a
    writer that comes back at once take it again and again. The blocking call runs in a
    thread of its own so that the wait can end: left behind, it takes the lock on a file
    already closed, which the kernel drops as soon as the call returns."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    import threading

    taken = threading.Event()

    def block() -> None:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
            taken.set()

    threading.Thread(target=block, name="git-continuity-writer-turn", daemon=True).start()
    return taken.wait(wait)
