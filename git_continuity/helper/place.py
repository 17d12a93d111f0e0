"""Where a repository's helper listens, found and opened under the same refusals as git's:
only in a repository this user owns (git's ``safe.directory`` rule: the work tree, ``.git``
and the git folder owned by the user), and only in a ``continuity`` folder that is a folder
of this user's, not a link out of the repository. A helper that cannot listen there is
remembered for a while (``failed`` and ``may_start``), so that commands stop starting one.

Standard library only: the client runs this at every command.
"""

from __future__ import annotations

import os
import stat
import time

BACKOFF = 30.0  # seconds after a helper could not listen; doubled at each failure, up to MOST_BACKOFF
MOST_BACKOFF = 3600.0


def continuity_folder() -> str | None:
    """The repository's ``continuity`` folder (in its common git folder, so every worktree of
    it shares one helper), found as git would from the current folder; None outside a
    repository, where GIT_DIR chooses it, where git would refuse the repository as not this
    user's, or where no command made the folder yet. Only the helper's address: what the
    command reads is found again, by the command itself."""
    if "GIT_DIR" in os.environ or "GIT_WORK_TREE" in os.environ:
        return None
    try:
        here = os.getcwd()
    except OSError:
        return None
    while True:
        dot = os.path.join(here, ".git")
        if os.path.isdir(dot):
            git = dot
            break
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as file:
                    line = file.readline().strip()
            except (OSError, UnicodeError):
                return None
            if not line.startswith("gitdir: "):
                return None
            if not _mine(dot):
                return None
            git = os.path.join(here, line[len("gitdir: ") :])
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    if not (_mine(here) and _mine(git)):
        return None  # git refuses it ("dubious ownership"); so does the helper, before touching it
    try:
        with open(os.path.join(git, "commondir"), encoding="utf-8") as file:
            git = os.path.join(git, file.readline().strip())
    except FileNotFoundError:
        pass
    except (OSError, UnicodeError):
        return None
    if not _mine(git):
        return None
    folder = os.path.normpath(os.path.join(git, "continuity"))
    return folder if os.path.isdir(folder) else None


def _mine(path: str) -> bool:
    """Owned by this user, as git checks it (the path itself, a link not followed)."""
    try:
        return os.lstat(path).st_uid == os.geteuid()
    except OSError:
        return False


def open_folder(folder: str) -> int | None:
    """The folder opened (a descriptor), if it is a folder of this user's and not a link."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
    except OSError:
        found = None
    if found is None or found.st_uid != os.geteuid():
        os.close(fd)
        return None
    return fd


def socket_state(folder: int, name: str) -> str:
    """What is at the socket's name in the folder: "none", "socket" (one of this user's), or
    "other" (a file, a link, another's: left alone, and no helper is started there)."""
    try:
        found = os.lstat(name, dir_fd=folder)
    except FileNotFoundError:
        return "none"
    except OSError:
        return "other"
    return "socket" if stat.S_ISSOCK(found.st_mode) and found.st_uid == os.geteuid() else "other"


STARTING = 3.0  # seconds a helper may take to listen; a client waits for one on its way that long


def first_to_start(folder: int, name: str) -> bool:
    """Whether this client is the one to start the helper at ``name``: none is on its way (no
    mark younger than STARTING beside the socket's name), and this one made the mark. The
    helper removes it once it listens or cannot; every other client waits for that. Only an
    empty file of this user's counts as a mark, and is ever removed: anything else at its name
    is left alone, and the command starts a helper as if there were no mark."""
    mark = _mark(name)
    for _ in range(2):
        try:
            os.close(os.open(mark, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder))
            return True
        except FileExistsError:
            pass
        except OSError:
            return True  # no mark can be made here: start one, as without the mark
        age = _mark_age(folder, name)
        if age is None:
            return not _gone(folder, mark)  # another's file: left alone; or the mark was just taken away
        if 0 <= age < STARTING:
            return False
        try:  # noqa: SIM105
            os.unlink(mark, dir_fd=folder)  # left by a helper that died while warming
        except OSError:
            pass
    return True


def on_its_way(folder: int, name: str) -> bool:
    """Whether a helper started for ``name`` is still warming (its mark is there, and recent)."""
    age = _mark_age(folder, name)
    return age is not None and 0 <= age < STARTING  # one made in the future: a clock set back, or not ours


def arrived(name: str) -> None:
    """Remove the mark of a helper on its way (in the current folder): it listens now, or it
    could not."""
    if _mark_age(None, name) is not None:
        try:  # noqa: SIM105
            os.unlink(_mark(name))
        except OSError:
            pass


def _mark(name: str) -> str:
    return name.replace(".sock", ".starting")


def _mark_age(folder: int | None, name: str) -> float | None:
    """Seconds since the mark at ``name`` was made (in ``folder``, or the current folder);
    None where there is none, or where what is there is not an empty file of this user's."""
    try:
        found = os.lstat(_mark(name), dir_fd=folder)
    except OSError:
        return None
    if not stat.S_ISREG(found.st_mode) or found.st_uid != os.geteuid() or found.st_size:
        return None
    return time.time() - found.st_mtime


def _gone(folder: int, path: str) -> bool:
    try:
        os.lstat(path, dir_fd=folder)
    except FileNotFoundError:
        return True
    except OSError:
        pass
    return False


def _marker(folder: str, name: str) -> str:
    from git_continuity.helper import peer as helper_peer

    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    key = helper_peer.name_of(f"{os.path.realpath(folder)}\n{name}").removesuffix(".sock")
    return os.path.join(cache, "git-continuity", "helper", f"{key}.failed")


def may_start(folder: str, name: str) -> bool:
    """Whether to start a helper: not while the last one that could not listen here is recent."""
    marker = _marker(folder, name)
    try:
        made = os.stat(marker).st_mtime
        with open(marker, encoding="utf-8") as file:
            failures = int(file.read().strip() or 1)
    except (OSError, ValueError):
        return True
    wait: float = min(BACKOFF * 2.0 ** max(failures - 1, 0), MOST_BACKOFF)
    return time.time() - made >= wait


def failed(folder: str, name: str) -> None:
    """Remember that a helper could not listen here (a read-only folder, a file system
    without Unix sockets, something else at the socket's name)."""
    from git_continuity import atomic

    marker = _marker(folder, name)
    try:
        with open(marker, encoding="utf-8") as file:
            failures = int(file.read().strip() or 0)
    except (OSError, ValueError):
        failures = 0
    try:  # noqa: SIM105
        atomic.write(marker, f"{failures + 1}\n")
    except OSError:
        pass


def listened(folder: str, name: str) -> None:
    """Forget earlier failures: a helper listens here now."""
    try:  # noqa: SIM105
        os.unlink(_marker(folder, name))
    except OSError:
        pass
