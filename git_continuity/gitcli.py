"""The one door for running git as a program, apart from the network (syncing/transport.py) and the
object work (repo/, through pygit2).

The hooks ask git itself (write-tree, rev-parse, log, config) where loading pygit2 would cost
more than the answer; git's own status reads a work tree libgit2 cannot; `git var` applies
git's order of editor settings. Standard library only: the hooks' cheap path imports it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # not imported on the hooks' cheap path (collections, 1 ms)
    from collections.abc import Mapping


def run(
    *args: str, cwd: Path | None = None, git_dir: Path | None = None, check: bool = False
) -> subprocess.CompletedProcess[str]:
    """`git [--git-dir=GIT_DIR] ARGS` in ``cwd`` (this process's folder when None), its output
    captured as text. The caller reads the exit code, unless ``check`` raises
    CalledProcessError for one that is not 0."""
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    return subprocess.run(["git", *where, *args], cwd=cwd, capture_output=True, text=True, check=check)


def hash_object(data: bytes, path: str, *, cwd: Path, env: Mapping[str, str | None]) -> str:
    """`git hash-object -w --stdin --path PATH` in ``cwd``: the blob ``git add`` makes of ``data``
    as the file at ``path`` (its filters and end-of-line settings), written. OSError where git
    made none. ``env`` as ``start`` takes it."""
    return _ran("hash-object", "-w", "--stdin", "--path", path, cwd=cwd, env=env, data=data).decode("ascii").strip()


def work_tree_tree(index: Path, *, cwd: Path, env: Mapping[str, str | None]) -> str:
    """The tree ``git add -A`` then ``git write-tree`` make in ``cwd``, into a copy of ``index``
    (written unsplit, so that no shared index is left in the git folder): ``index`` itself is
    never written. A file outside a sparse checkout's set that is there is taken as it is
    (``--sparse``); a path no index may hold (``.GIT/x``) and a repository with no commit yet
    are left out, as libgit2's reading leaves them (``--ignore-errors``: git says 1 then, having
    added the rest). OSError where git made none. ``env`` as ``start`` takes it."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="git-continuity-index-") as folder:
        copy = Path(folder) / "index"
        if index.exists():
            shutil.copyfile(index, copy)
        into = {**env, "GIT_INDEX_FILE": str(copy)}  # each writes the index it reads: unsplit
        _ran("-c", "core.splitIndex=false", "add", "-A", "--sparse", "--ignore-errors", cwd=cwd, env=into, fine=(0, 1))
        return _ran("-c", "core.splitIndex=false", "write-tree", cwd=cwd, env=into).decode("ascii").strip()


def start(*args: str, cwd: Path, env: Mapping[str, str | None] | None = None) -> subprocess.Popen[bytes]:
    """`git ARGS` in ``cwd``, started and left to run: its output, as bytes, is read once the
    caller wants it (``communicate``); what it says on stderr goes nowhere. ``env``: changes to
    this process's environment for git (None as a value: that variable left out)."""
    return subprocess.Popen(
        ["git", *args],
        cwd=cwd,
        env=_environment(env) if env else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _ran(
    *args: str, cwd: Path, env: Mapping[str, str | None], data: bytes | None = None, fine: tuple[int, ...] = (0,)
) -> bytes:
    """What `git ARGS` printed, given ``data`` on its standard input; OSError naming the command
    and what git said where it exited with a code not in ``fine``."""
    done = subprocess.run(["git", *args], cwd=cwd, env=_environment(env), input=data, capture_output=True)
    if done.returncode not in fine:
        raise OSError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _environment(env: Mapping[str, str | None]) -> dict[str, str]:
    """This process's environment with ``env``'s changes (None: that variable left out)."""
    return {k: v for k, v in {**os.environ, **env}.items() if v is not None}
