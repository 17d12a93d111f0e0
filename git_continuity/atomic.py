"""One way to write a local file (under ``.git/continuity/`` or the user's cache): whole or
not at all.

The content goes to a temporary file of its own in the same folder, which then replaces the
target (``os.replace`` is atomic within one file system): a reader sees the old file or the
new one, never a half-written one. Each write has its own temporary name, so writers racing
on one file (two hooks, a hook and a command) never truncate or move each other's temporary
file; the last to replace wins. Standard library only (``os``, ``contextlib``; not even
``pathlib``): the hooks' cheap path and the loop notice import it (``tempfile`` would add
several milliseconds).
"""

from __future__ import annotations

import contextlib
import os

# O_EXCL: a name some other writer holds is never opened, only drawn again.
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


def write(path: os.PathLike[str] | str, data: str | bytes) -> None:
    """Replace path's content with data (text is written as UTF-8), creating its folder."""
    raw = data.encode() if isinstance(data, str) else data
    folder, name = os.path.split(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    while True:
        partial = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(partial, _FLAGS, 0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(raw)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise


def keep(path: os.PathLike[str] | str, data: str | bytes) -> None:
    """Replace path's content with data unless it holds exactly that already: a file rewritten
    on every session start with the same content (most often) costs a read, not a write (ext4
    starts writing out a file that replaces another at once)."""
    raw = data.encode() if isinstance(data, str) else data
    try:
        with open(path, "rb") as kept:
            if kept.read(len(raw) + 1) == raw:
                return
    except OSError:
        pass
    write(path, raw)
