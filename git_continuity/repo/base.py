"""The repository itself: the object ids, the open repository and where its parts live,
who is writing (identity, config) and the remotes."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NewType

import pygit2

from git_continuity.constants import hostname
from git_continuity.errors import UserError

if TYPE_CHECKING:
    from git_continuity.repo.kept import Kept
    from git_continuity.repo.reach import Answers, Since

Oid = NewType("Oid", str)  # a full hexadecimal object id


class RefMoved(Exception):
    """A compare-and-swap lost: the ref was not at the expected commit."""


@dataclass
class Repo:
    """An open repository (it owns the libgit2 handle) and where its parts live."""

    git: pygit2.Repository
    common_dir: Path  # the .git folder shared by every worktree
    work_dir: Path | None  # None in a bare repository
    _ancestors: dict[Oid, frozenset[bytes]] = field(default_factory=dict)
    # Ancestry answered from the last answer (reach.py): the answers kept, the commits
    # between two tips this process walked, the commits read for first questions by tip,
    # and how many commits its walks read.
    _reach: Answers | None = None
    _kept_at_end: int = 0  # reach.kept_once: the answers are written when the outermost ends
    _since: dict[bytes, Since | None] = field(default_factory=dict)
    _near: dict[str, int] = field(default_factory=dict)
    walked: int = 0
    _remotes: list[str] | None = None
    # What commits' trees hold (history.path_in_commit): kept by commit id, so never stale.
    _tree_paths: Kept[tuple[str, str], bool] | None = None
    # Ids found to be commits (history._kind): an id's type never changes.
    _commits: Kept[str, bool] | None = None
    # How a state or notes commit is signed (signing.arm): the commit's bytes in, the
    # signature out, or None when signing is off for this repository. None here: not
    # decided yet, and then no such commit is written (repo.signed.Unarmed).
    signer: Callable[[bytes], str | None] | None = None
    validity: object = None  # the store's validity cache, shared by the snapshots of a process

    @property
    def local_dir(self) -> Path:
        """``.git/continuity/``: caches and the trust store, never synced."""
        return self.common_dir / "continuity"


def worktree_git_dir(repo: Repo) -> Path:
    """This work tree's own git folder: the common one for the main checkout,
    ``.git/worktrees/<name>/`` for a linked worktree (where its HEAD and index live)."""
    return Path(repo.git.path)


def reread_environment() -> None:
    """Have libgit2 find the global, XDG and system config again from the environment as it
    is now (it reads HOME and XDG_CONFIG_HOME once, when loaded): for a process whose
    environment changed since, as the helper's copy of itself for a command."""
    from pygit2.enums import ConfigLevel, Option
    from pygit2.options import option

    for level in (ConfigLevel.GLOBAL, ConfigLevel.XDG, ConfigLevel.SYSTEM, ConfigLevel.PROGRAMDATA):
        option(Option.SET_SEARCH_PATH, level, None)


def open_repo(start: str | Path | None = None) -> Repo:
    """Open the repository git would use here, with the work tree git would use (GIT_DIR and
    GIT_WORK_TREE as hooks and dotfile managers set them, core.worktree, a ``.git`` file)."""
    where = Path(start) if start is not None else Path.cwd()
    git_dir = os.environ.get("GIT_DIR") if start is None else None
    path = git_dir or pygit2.discover_repository(str(where))
    if not path:
        raise UserError(
            f"not a git repository: {where}\nRun git continuity inside a repository (or create one with git init)."
        )
    try:
        # Opened from where we are, not from the git folder found: libgit2 then takes the work
        # tree from a .git file (--separate-git-dir) instead of the git folder's parent.
        git = pygit2.Repository(path if git_dir else str(where))
        if start is None:
            _place_work_tree(git, from_env=git_dir is not None)
    except pygit2.GitError as error:
        if "sha256" in str(error):
            raise UserError(f"{path} uses SHA-256 object ids, which git-continuity does not support yet.") from None
        if "refstorage" in str(error).lower():
            raise UserError(
                f"{path} keeps its refs in the reftable format (extensions.refStorage=reftable, git 2.45 and later),"
                " which git-continuity does not support yet: libgit2, which it reads refs with, knows only git's"
                " files format. Convert it with git refs migrate --ref-format=files (git 2.46 and later), or clone"
                " it again with --ref-format=files."
            ) from None
        raise UserError(f"cannot open the repository at {path}: {error}") from None
    here = Path(git.path)
    common = here / "commondir"
    common_dir = (here / common.read_text().strip()).resolve() if common.exists() else here
    work_dir = Path(git.workdir) if git.workdir else None
    return Repo(git, common_dir.resolve(), work_dir)


def _place_work_tree(git: pygit2.Repository, *, from_env: bool) -> None:
    """The work tree as git reads it: GIT_WORK_TREE; else core.worktree (libgit2 reads it);
    else, where GIT_DIR names the git folder, the current folder (git's rule; libgit2 would
    guess the git folder's parent)."""
    given = os.environ.get("GIT_WORK_TREE")
    if given:
        git.workdir = str(Path(given).resolve())
        return
    if not from_env or git.is_bare:
        return
    try:
        configured = git.config["core.worktree"]
    except KeyError:
        configured = None
    if not configured:
        git.workdir = str(Path.cwd().resolve())


def _given(key: str) -> str | None:
    """A value given on git's command line for this run (``git -c key=value continuity …``,
    which git hands on in GIT_CONFIG_PARAMETERS, and GIT_CONFIG_COUNT/KEY_n/VALUE_n): the
    highest level of git's config, which libgit2 does not read. The last one given wins."""
    wanted = _config_key(key)
    found = None
    words: list[str] = []
    given = os.environ.get("GIT_CONFIG_PARAMETERS")
    if given:  # shlex only then: importing it cost every hook a few ms
        import shlex

        try:
            words = shlex.split(given)
        except ValueError:
            words = []
    for word in words:  # 'user.name'='Ada' reads as user.name=Ada; an older git wrote 'user.name=Ada'
        name, _, value = word.partition("=")
        if _config_key(name) == wanted:
            found = value
    try:
        count = int(os.environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    for n in range(count):
        if _config_key(os.environ.get(f"GIT_CONFIG_KEY_{n}", "")) == wanted:
            found = os.environ.get(f"GIT_CONFIG_VALUE_{n}", "")
    return found


def _config_key(key: str) -> str:
    """A key as git compares them: its section and name in any case, a subsection exactly."""
    section, _, rest = key.partition(".")
    middle, _, name = rest.rpartition(".")
    return f"{section.lower()}.{middle}.{name.lower()}" if middle else f"{section.lower()}.{name.lower()}"


def _config(repo: Repo, key: str) -> str | None:
    """A config value as git would read it: what ``git -c`` gave first (_given). git reads
    $GIT_CONFIG_GLOBAL instead of ~/.gitconfig when it is set; libgit2 does not know that
    variable, so the repository's own levels are asked first and then that file."""
    given = _given(key)
    if given is not None:
        return given or None
    global_file = os.environ.get("GIT_CONFIG_GLOBAL")
    try:
        if not global_file:
            value = repo.git.config[key]
            return str(value) if value else None
        for entry in repo.git.config:
            if entry.name == key and entry.level >= pygit2.enums.ConfigLevel.LOCAL and entry.value:
                return str(entry.value)
        if Path(global_file).is_file():
            value = pygit2.Config(global_file)[key]
            return str(value) if value else None
    except (KeyError, pygit2.GitError):
        return None
    return None


def _ident(repo: Repo) -> tuple[str, str]:
    """Who is writing, as git would say for an author: GIT_AUTHOR_* first, then config,
    then the login and host (state must never fail to write because user.email is unset:
    hooks run in fresh CI clones)."""
    user = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
    name = os.environ.get("GIT_AUTHOR_NAME") or _config(repo, "user.name") or user
    email = os.environ.get("GIT_AUTHOR_EMAIL") or _config(repo, "user.email") or f"{user}@{hostname()}"
    return name, email


def config_value(repo: Repo, key: str) -> str | None:
    return _config(repo, key)


def user_config_value(repo: Repo, key: str) -> str | None:
    """A config value from the user's own config only (global, XDG, system), never the
    repository's: what decides trust must not be settable by anything holding ``.git``."""
    global_file = os.environ.get("GIT_CONFIG_GLOBAL")
    try:
        if global_file:
            value = pygit2.Config(global_file)[key] if Path(global_file).is_file() else None
            return str(value) if value else None
        found = None
        for entry in repo.git.config:
            # git reads a key's section and name in any case (user.signingKey is user.signingkey).
            if entry.name.lower() == key.lower() and entry.level < pygit2.enums.ConfigLevel.LOCAL and entry.value:
                found = str(entry.value)
        return found
    except (KeyError, pygit2.GitError):
        return None


def identity(repo: Repo) -> str:
    """``Name <email>``, recorded as who made each entry."""
    name, email = _ident(repo)
    return f"{name} <{email}>"


def _signature(repo: Repo) -> pygit2.Signature:
    name, email = _ident(repo)
    return pygit2.Signature(name, email)


def config_values(repo: Repo, key: str) -> list[str]:
    """Every value of a (multi-valued) config key, as git reads it."""
    try:
        return [str(v) for v in repo.git.config.get_multivar(key) if v is not None]
    except (KeyError, pygit2.GitError):
        return []


def add_local_config(repo: Repo, key: str, value: str) -> None:
    """Append a value to a multi-valued key in the repository's own config file
    (``git config --add``), never in the user's global one."""
    config = pygit2.Config(str(repo.common_dir / "config"))
    config.set_multivar(key, "^$", value)


def remove_local_config(repo: Repo, key: str, value: str | None) -> None:
    """Remove a value of a key from the repository's own config file (every value: None),
    never from the user's global one."""
    import re

    config = pygit2.Config(str(repo.common_dir / "config"))
    try:
        config.delete_multivar(key, "^" + re.escape(value) + "$" if value is not None else ".*")
    except (KeyError, pygit2.GitError):
        return


def local_config_names(repo: Repo, prefix: str) -> list[str]:
    """The keys of the repository's own config file that start with prefix (lower case, as
    libgit2 lists them), each once."""
    config = pygit2.Config(str(repo.common_dir / "config"))
    return sorted({entry.name for entry in config if entry.name.startswith(prefix)})


def remote_names(repo: Repo) -> list[str]:
    if repo._remotes is None:
        repo._remotes = sorted(name for name in repo.git.remotes.names() if name)
    return repo._remotes


def remote_url(repo: Repo, remote: str) -> str | None:
    try:
        url = repo.git.remotes[remote].url
    except (KeyError, pygit2.GitError):
        return None
    return str(url) if url else None


def hooks_dir(repo: Repo) -> Path:
    """Where git runs hooks from: core.hooksPath when set (relative to the work tree), else
    the common git folder's hooks/."""
    configured = config_value(repo, "core.hooksPath")
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else (repo.work_dir or repo.common_dir) / path
    return repo.common_dir / "hooks"
