"""``git continuity uninstall``: take out of this clone what git-continuity put there, and say
what stays and why.

Taken out: git's hooks (husky's lines too), what ``agent install`` wrote (as ``agent
uninstall`` does), the local config it added (fetch refspecs, ``continuity.*``), the copies of
remotes' state it fetched (tracking refs) and ``.git/continuity/`` (caches, the trust store,
the helper's socket, sessions). The state itself (``refs/continuity/*``, the commit notes)
only with ``--state``: it is the work's record, and a remote's copy is never touched.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from git_continuity import constants
from git_continuity import repo as git
from git_continuity.agents import files as agent_files
from git_continuity.agents import table as agents
from git_continuity.errors import UserError
from git_continuity.hooks import install as githooks
from git_continuity.repo import Repo
from git_continuity.syncing import tracking

COPIES = ("refs/continuity-", "refs/notes/continuity-")  # tracking refs, remote lanes, a hook's scratch copy


@dataclass
class Report:
    """What was taken out, what stays (and why), and what could not be taken out."""

    removed: list[dict[str, str]] = field(default_factory=list)  # area, where, what
    kept: list[dict[str, str]] = field(default_factory=list)  # area, where, why
    failed: list[dict[str, str]] = field(default_factory=list)  # area, where, why

    def took(self, area: str, where: str, what: str) -> None:
        self.removed.append({"area": area, "where": where, "what": what})

    def stays(self, area: str, where: str, why: str) -> None:
        self.kept.append({"area": area, "where": where, "why": why})


def uninstall(repo: Repo, *, state: bool) -> Report:
    """Take everything out, each part on its own: one that fails is named, and the rest goes."""
    report = Report()
    for area, part in (
        ("hooks", _hooks),
        ("agent", _agents),
        ("config", _config),
        ("refs", _copies),
        ("state", _state if state else _state_stays),
        ("local", _local),
    ):
        try:
            part(repo, report)
        except (UserError, OSError) as error:
            report.failed.append({"area": area, "where": str(repo.common_dir), "why": str(error)})
    _user_level(report, state)
    return report


def _hooks(repo: Repo, report: Report) -> None:
    done = githooks.uninstall(repo)
    for line in done.lines:  # "removed PATH" or "removed PATH; restored your earlier hook"
        where, _, rest = line.removeprefix("removed ").partition("; ")
        report.took("hooks", where, "removed" + (f"; {rest}" if rest else ""))
    for path in done.husky:
        report.took("hooks", str(path), "git-continuity's line taken out (a file the team commits: commit it)")


def _agents(repo: Repo, report: Report) -> None:
    if repo.work_dir is None:
        return
    for name, target in agents.TARGETS.items():
        if agent_files.read_record(repo, name) is not None:
            for line in agent_files.remove(repo, name):  # "FILE: what was done"
                where, _, what = line.partition(": ")
                report.took("agent", str(repo.work_dir / where), what)
        elif "git-continuity" in (_text(repo.work_dir / target.settings) or ""):
            report.stays(
                "agent",
                str(repo.work_dir / target.settings),
                "holds git-continuity's hooks that another clone's install wrote (a file the team commits):"
                f" git continuity agent uninstall {name} takes them out",
            )


def _text(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _config(repo: Repo, report: Report) -> None:
    for remote in git.remote_names(repo):
        key = f"remote.{remote}.fetch"
        ours = set(tracking.fetch_refspecs(repo, remote))
        for spec in git.config_values(repo, key):
            if spec in ours or spec.lstrip("+").partition(":")[2].startswith(COPIES):
                git.remove_local_config(repo, key, spec)
                report.took("config", key, spec)
    for key in git.local_config_names(repo, "continuity."):
        git.remove_local_config(repo, key, None)
        report.took("config", key, "removed")


def _copies(repo: Repo, report: Report) -> None:
    for prefix in COPIES:
        for name in git.list_refs(repo, prefix):
            git.delete_ref(repo, name)
            report.took("refs", name, "a copy of a remote's state, fetched (the remote keeps its own)")


def _state_refs(repo: Repo) -> list[str]:
    """The streams' refs and the commit notes' (not a remote's copies, nor another tool's notes)."""
    notes = [n for n in git.list_refs(repo, constants.NOTES_REF) if n == constants.NOTES_REF]
    return [*git.list_refs(repo, constants.STATE_PREFIX), *notes]


def _state(repo: Repo, report: Report) -> None:
    from git_continuity.trust import witness

    for name in _state_refs(repo):
        git.delete_ref(repo, name)
        report.took("state", name, "removed (--state); a remote's copy is untouched")
    seen = witness.folder(repo)
    if seen.exists():
        shutil.rmtree(seen)
        report.took("state", str(seen), "the newest state seen here (the witness), removed with the state")


def _state_stays(repo: Repo, report: Report) -> None:
    for name in _state_refs(repo):
        report.stays("state", name, "the work's record, kept unless asked: git continuity uninstall --state removes it")


def _local(repo: Repo, report: Report) -> None:
    folders = [repo.local_dir, *(repo.common_dir / "worktrees" / name / "continuity" for name in _worktrees(repo))]
    for folder in folders:
        if folder.exists():
            shutil.rmtree(folder)
            report.took("local", str(folder), "caches, the trust store, sessions, the helper's socket")


def _worktrees(repo: Repo) -> list[str]:
    try:
        return sorted(p.name for p in (repo.common_dir / "worktrees").iterdir() if p.is_dir())
    except OSError:
        return []


def _user_level(report: Report, state: bool) -> None:
    """What lives outside this clone: the user's, for every repository."""
    from git_continuity.trust import signers, witness

    report.stays(
        "user",
        str(signers.config_folder()),
        "your signing key and the keys you trust, for every repository (remove it yourself once no repository needs"
        " them)",
    )
    if not state:
        report.stays("user", str(witness.state_folder()), "the newest state seen, kept while the state is")
    report.stays("user", "git-continuity", "the program itself: pip uninstall git-continuity (or pipx uninstall)")
