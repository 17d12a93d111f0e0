"""The work tree: its uncommitted changes, the tree it holds right now, and the stash."""

from __future__ import annotations

import enum
import functools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from git_continuity.repo.base import Oid, Repo
from git_continuity.repo.refs import list_refs


def changed_tracked_paths(repo: Repo) -> list[str]:
    """Tracked paths with staged or unstaged changes (untracked files left out), as git status
    counts them: a sparse set's rest not deleted, a split index read."""
    found = changes(repo)
    return [] if found is None else sorted({*found.staged, *found.unstaged, *found.conflicted})


def readable(path: str) -> str:
    """A file's name as it is shown and recorded: a byte that is not UTF-8 (kept by git and
    libgit2 as a lone surrogate, which no output or state file can hold) written as ``\xe9``."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def worktree_tree(repo: Repo, counted: Changes | None = None) -> Oid | None:
    """The tree the work tree holds right now, uncommitted and untracked (not ignored) files
    included; None in a bare repository. Evidence from a command records it, so the
    evidence turns stale when the files change. ``counted``: git status's count of this moment
    (changes), where the caller has one: a work tree it finds clean holds HEAD's tree, which is
    read in place of the index (2 ms of a session start on git/git's checkout).

    Built in the in-memory copy of the index and then discarded: the index file on disk is
    never written.
    """
    if repo.work_dir is None:
        return None
    if counted == CLEAN and (head := _head_tree_counted_whole(repo)) is not None:
        return head
    try:
        index = repo.git.index
        index.read(False)  # as it is on disk, where git status reads it
    except pygit2.GitError:  # an index libgit2 cannot read: core.splitIndex's "unsupported mandatory extension"
        from git_continuity import gitcli  # the same tree, made by git into a copy of the index

        return Oid(gitcli.work_tree_tree(Path(repo.git.path) / "index", cwd=repo.work_dir, env=_git_env(repo)))
    for wait in WAITS:
        try:
            return _read_tree(repo, index)
        except (pygit2.GitError, OSError):
            # The work tree changed as it was read (libgit2: "error reading file for hashing"; a
            # conflict resolved meanwhile; a file that kept changing is _add's): an agent's tool
            # writing while `verify` runs made its check unknown. Read again a moment later.
            time.sleep(wait)
    return _read_tree(repo, index)


WAITS = (0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1, 0.1)  # seconds between reads of a changing work tree
REPLACE = "refs/replace/"


def _head_tree_counted_whole(repo: Repo) -> Oid | None:
    """HEAD's tree, where a count as a brief makes it (changes) that found nothing staged,
    changed or new said all that ``git add -A`` would take: the index is then HEAD's tree, and the
    work tree the index. Not where the count is of another index than the one ``git add -A``
    takes (GIT_INDEX_FILE: a commit's own), or a submodule's new commit can be hidden from it by
    the user's settings (``ignore = all``, which ``git add -A`` does not heed); nor on an unborn
    branch, nor where git status compared with a commit ``git replace`` stands in for (libgit2
    reads the one replaced). None: the index is read."""
    if "GIT_INDEX_FILE" in os.environ or (not os.environ.get("GIT_NO_REPLACE_OBJECTS") and list_refs(repo, REPLACE)):
        return None
    try:
        tree = repo.git.head.peel(pygit2.Commit).tree
        if ".gitmodules" in tree or "diff.ignoreSubmodules" in repo.git.config:
            return None
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return Oid(str(tree.id))


def _read_tree(repo: Repo, index: pygit2.Index) -> Oid:
    """The index with what git status finds changed in the work tree put in, as ``git add -A``
    then ``git write-tree`` make it: a file changed or new (and not ignored) added, one gone
    removed. Only those files are read: adding the whole work tree again (index.add_all) was
    half of a Stop hook's time on a checkout of git/git's 4,800 files. A file outside a sparse
    checkout's set that is there and changed is taken as it is, where ``git add -A`` leaves it:
    what ran on this work tree saw it."""
    assert repo.work_dir is not None
    changed = _changed_paths(repo)
    try:
        for path, how in changed:
            here = repo.work_dir / path
            if how is _Change.CONFLICTED and (not os.path.lexists(here) or _folder(here)):
                _resolve_as_gone(repo, index, path)
            elif how is _Change.GONE:
                index.remove(path)
            elif path.endswith("/"):  # a repository of its own in the work tree
                _add_nested(repo, index, path.rstrip("/"))
            else:
                _add(repo, index, path)
        return Oid(str(index.write_tree()))
    finally:
        if changed:
            index.read(True)  # the copy in memory as the file on disk: nothing put in is kept


def _add(repo: Repo, index: pygit2.Index, path: str) -> None:
    """The file as it is now; a name no index may hold (``.GIT/x``, ``GIT~1/x``: git add -A
    fails on it) is left out, as libgit2's own status leaves it. A file that grew or shrank as
    libgit2 read it ("failed to read file into stream": a log a running tool appends to) is
    read again, and then taken as one read of it finds it."""
    for wait in READ_AGAIN:
        try:
            index.add(path)
            return
        except pygit2.GitError as error:
            if str(error).startswith("invalid path"):
                return
            if not str(error).startswith("failed to read file"):
                raise
        time.sleep(wait)
    index.add(_as_read_once(repo, path))


READ_AGAIN = (0.0, 0.001, 0.002)  # seconds before libgit2 reads again a file that changed as it read it


def _as_read_once(repo: Repo, path: str) -> pygit2.IndexEntry:
    """The file as one read of it finds it, made a blob as ``git add`` makes one (its filters
    and end-of-line settings: git hash-object --path)."""
    from git_continuity import gitcli

    assert repo.work_dir is not None
    here = repo.work_dir / path
    executable = os.lstat(here).st_mode & 0o111
    blob = gitcli.hash_object(here.read_bytes(), path, cwd=repo.work_dir, env=_git_env(repo))
    mode = pygit2.enums.FileMode.BLOB_EXECUTABLE if executable else pygit2.enums.FileMode.BLOB
    return pygit2.IndexEntry(path, pygit2.Oid(hex=blob), mode)


def _resolve_as_gone(repo: Repo, index: pygit2.Index, path: str) -> None:
    """A path in conflict that is gone, or a folder now: its files are listed on their own, but a
    repository there, which git status does not list, is taken at its HEAD commit."""
    assert repo.work_dir is not None
    if index.conflicts is None or path not in index.conflicts:
        raise OSError(f"{path} is no longer in conflict: the index changed as it was read")
    del index.conflicts[path]
    if os.path.lexists(repo.work_dir / path / ".git"):
        _add_nested(repo, index, path)


class _Change(enum.Enum):
    """What ``git add -A`` does with a path git status lists."""

    CHANGED = "read it again"
    GONE = "remove it"
    CONFLICTED = "resolve it as it is now"


# Every file, each untracked one on its own (a repository inside the work tree as its folder),
# and a submodule's new commit whatever the user's settings hide (git add -A takes it).
STATUS_ALL = (
    *("--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"),
    "--ignore-submodules=dirty",
)


def _changed_paths(repo: Repo) -> list[tuple[str, _Change]]:
    """What git status lists (its own stat cache, fsmonitor and untracked cache, two threads
    for the work tree's 4,800 stats on git/git's checkout, a sparse checkout's rest not gone);
    libgit2's status where git cannot answer (not there, or refusing the repository)."""
    from git_continuity import gitcli

    assert repo.work_dir is not None
    try:  # the index git status compares with is the one libgit2 opened (.git's), not a commit's own
        process = gitcli.start(*STATUS_ALL, cwd=repo.work_dir, env={**_git_env(repo), "GIT_INDEX_FILE": None})
    except OSError:
        return _changed_by_libgit2(repo)
    out = process.communicate()[0]
    if process.returncode != 0:
        return _changed_by_libgit2(repo)
    found = []
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        if len(entry) < 4:
            continue
        xy, path = entry[:2], entry[3:]
        if "U" in xy or xy in ("AA", "DD"):
            found.append((path, _Change.CONFLICTED))
        elif xy[1] == "D":
            found.append((path, _Change.GONE))
        elif xy[1] != " ":  # changed, of another type, new, or added with intent to add
            found.append((path, _Change.CHANGED))
    return found


def _changed_by_libgit2(repo: Repo) -> list[tuple[str, _Change]]:
    found = []
    for path, flag in repo.git.status(untracked_files="all").items():
        if flag & pygit2.GIT_STATUS_CONFLICTED:
            found.append((path, _Change.CONFLICTED))
        elif flag & pygit2.GIT_STATUS_WT_DELETED:
            found.append((path, _Change.GONE))
        elif flag & CHANGED:
            found.append((path, _Change.CHANGED))
    return found


CHANGED = pygit2.GIT_STATUS_WT_NEW | pygit2.GIT_STATUS_WT_MODIFIED | pygit2.GIT_STATUS_WT_TYPECHANGE


def _folder(here: Path) -> bool:
    return here.is_dir() and not here.is_symlink()


def _add_nested(repo: Repo, index: pygit2.Index, path: str) -> None:
    """A repository inside the work tree, as ``git add -A`` takes it: its HEAD commit (one
    with no commit yet is left out, as git leaves it); a folder whose .git is no repository
    (a clone cut short) file by file, as git takes it."""
    assert repo.work_dir is not None
    here = repo.work_dir / path
    try:
        found = pygit2.Repository(str(here), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, KeyError, ValueError):
        for folder, folders, files in os.walk(here):
            folders[:] = [f for f in folders if f != ".git"]
            named = (os.path.relpath(os.path.join(folder, f), repo.work_dir) for f in files)
            for name in named:
                if not repo.git.path_is_ignored(name):
                    index.add(name)
        return
    try:
        head = found.head.peel(pygit2.Commit).id
    except (pygit2.GitError, KeyError, ValueError):
        return
    index.add(pygit2.IndexEntry(path, head, pygit2.enums.FileMode.COMMIT))


@dataclass(frozen=True)
class Changes:
    """Uncommitted changes, as git status counts them."""

    staged: list[str]
    unstaged: list[str]
    untracked: list[str]
    conflicted: list[str]


CLEAN = Changes([], [], [], [])


STAGED = (
    pygit2.GIT_STATUS_INDEX_NEW
    | pygit2.GIT_STATUS_INDEX_MODIFIED
    | pygit2.GIT_STATUS_INDEX_DELETED
    | pygit2.GIT_STATUS_INDEX_RENAMED
    | pygit2.GIT_STATUS_INDEX_TYPECHANGE
)


UNSTAGED = (
    pygit2.GIT_STATUS_WT_MODIFIED
    | pygit2.GIT_STATUS_WT_DELETED
    | pygit2.GIT_STATUS_WT_RENAMED
    | pygit2.GIT_STATUS_WT_TYPECHANGE
)


def changes(repo: Repo) -> Changes | None:
    """The work tree's uncommitted changes as git status counts them (the index git commits
    from, a temporary one included; a sparse checkout's files outside its set not counted as
    deleted, as libgit2 would); None in a bare repository."""
    return changes_started(repo, alongside=False)()


def _changes_by_libgit2(repo: Repo) -> Changes:
    """What libgit2 counts, where git itself could not answer."""
    staged, unstaged, untracked, conflicted = [], [], [], []
    for found, flag in sorted(repo.git.status(untracked_files="normal", ignored=False).items()):
        name = readable(found)
        if flag & pygit2.GIT_STATUS_CONFLICTED:
            conflicted.append(name)
            continue
        if flag & STAGED:
            staged.append(name)
        if flag & UNSTAGED:
            unstaged.append(name)
        if flag & pygit2.GIT_STATUS_WT_NEW:
            untracked.append(name)
    return Changes(staged, unstaged, untracked, conflicted)


def _git_env(repo: Repo) -> dict[str, str | None]:
    """What git is told of the repository where the environment named it: a relative GIT_DIR or
    GIT_WORK_TREE read from the work tree's top would be another repository, or none."""
    if "GIT_DIR" not in os.environ and "GIT_WORK_TREE" not in os.environ:
        return {}
    return {"GIT_DIR": str(Path(repo.git.path).resolve()), "GIT_WORK_TREE": str(repo.work_dir)}


# As a tool in the background asks (git status --help): the user's index is never rewritten,
# nor its lock taken while their own git command may want it.
STATUS = ("--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=normal")
# git status stats the work tree's files in threads, one a core (core.preloadIndex): on two cores, alongside a brief,
# they took the core the brief works on (a session start on git/git's checkout, 4 ms); git's one thread is done first.
ONE_THREAD = ("-c", "core.preloadIndex=false")


def changes_started(repo: Repo, *, alongside: bool = True) -> Callable[[], Changes | None]:
    """changes(repo), asked of git in the background from now on: what it returns waits for
    the answer. A brief does its own work meanwhile (``alongside``: git then stats the files in
    one thread), while git counts (20 ms on a checkout of git/git's 4,800 files) as git counts:
    its fsmonitor and untracked cache where the user turned them on, a sparse checkout as git
    status sees it. Where git cannot answer (a relative GIT_DIR from elsewhere), libgit2 counts."""
    from git_continuity import gitcli

    if repo.work_dir is None:
        return lambda: None
    try:
        process = gitcli.start(*(ONE_THREAD if alongside else ()), *STATUS, cwd=repo.work_dir, env=_git_env(repo))
    except OSError:
        return lambda: _changes_by_libgit2(repo)

    @functools.cache
    def answer() -> Changes | None:
        out = process.communicate()[0]
        # Bytes as git wrote them: a name that is not UTF-8 kept, a carriage return in one kept.
        return _parsed(out.decode("utf-8", "surrogateescape")) if process.returncode == 0 else _changes_by_libgit2(repo)

    return answer


def _parsed(out: str) -> Changes:
    """``git status --porcelain=v1 -z``'s answer."""
    staged, unstaged, untracked, conflicted = [], [], [], []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        x, y, name = entry[0], entry[1], readable(entry[3:])
        if x in "RC" or y in "RC":
            next(entries, None)  # a rename's source path follows (in the work tree's column: intent to add)
        if "U" in (x, y) or (x, y) in (("A", "A"), ("D", "D")):
            conflicted.append(name)
        elif (x, y) == ("?", "?"):
            untracked.append(name)
        else:
            if x != " ":
                staged.append(name)
            if y != " ":
                unstaged.append(name)
    return Changes(sorted(staged), sorted(unstaged), sorted(untracked), sorted(conflicted))


def stashes(repo: Repo) -> list[tuple[Oid, str]]:
    """The stash list, newest first: (commit, message)."""
    try:
        return [(Oid(str(s.commit_id)), s.message or "") for s in repo.git.listall_stashes()]
    except pygit2.GitError:
        return []


def worktrees(repo: Repo) -> dict[str, Path]:
    """Every checkout of this clone by name: the linked worktrees by the name git gave each
    (``.git/worktrees/<name>/``), and the main checkout by its folder's name."""
    found: dict[str, Path] = {}
    if repo.common_dir.name == ".git":
        found[repo.common_dir.parent.name] = repo.common_dir.parent
    for name in repo.git.list_worktrees():
        try:
            found[name] = Path(repo.git.lookup_worktree(name).path)
        except pygit2.GitError:
            continue
    return found


def worktree_name(repo: Repo) -> str | None:
    """The name of the checkout this repository was opened in (None: a bare repository)."""
    here = Path(repo.git.path).resolve()
    if here.parent.name == "worktrees" and here.parent.parent == repo.common_dir:
        return here.name
    return repo.work_dir.resolve().name if repo.work_dir is not None else None
