"""Plain git hooks for people without the pre-commit framework."""

from __future__ import annotations

import sys
from pathlib import Path

from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Repo

HOOKS = ("pre-commit", "commit-msg", "post-commit", "pre-push", "post-rewrite")
MARK = "# git-continuity hook:"
CHAINED = ".pre-continuity"


def _templates() -> Path:
    # Wheels carry hooks/ inside the package (pyproject force-include); a source checkout or an
    # editable install reads the top-level hooks/ folder.
    packaged = Path(__file__).resolve().parents[1] / "hooks"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "hooks"


def _ours(path: Path) -> bool:
    try:
        return MARK in path.read_text(errors="replace")
    except OSError:
        return False


def install(repo: Repo, *, force: bool = False) -> int:
    folder = git.hooks_dir(repo)
    where = folder.resolve()
    inside = (
        repo.work_dir is not None
        and where.is_relative_to(repo.work_dir.resolve())
        and not where.is_relative_to(repo.common_dir.resolve())  # .git/hooks is not a tracked file
    )
    if inside and not force:
        raise UserError(
            f"core.hooksPath is {folder}, inside the work tree: the hooks (which name this machine's Python)\n"
            "would become files to commit for everyone. Use the pre-commit framework's hooks\n"
            "(.pre-commit-hooks.yaml), or install them there anyway with: git continuity hooks install --force"
        )
    for name in HOOKS:  # every refusal before anything is written
        target, chained = folder / name, folder / (name + CHAINED)
        if target.exists() and not _ours(target) and chained.exists():
            raise UserError(f"{target} is not ours and {chained} exists too; move one of them away first")
    folder.mkdir(parents=True, exist_ok=True)
    for name in HOOKS:
        target = folder / name
        chained = folder / (name + CHAINED)
        note = ""
        if target.exists() and not _ours(target):
            target.rename(chained)
            note = f"  (chains to your earlier hook, kept as {chained.name})"
        text = (_templates() / name).read_text().replace("@PYTHON@", sys.executable)
        target.write_text(text)
        target.chmod(0o755)
        print(f"installed {target}{note}")
    print("Commits that claim to close a thread are now checked; uninstall with: git continuity hooks uninstall")
    return 0


def uninstall(repo: Repo) -> int:
    folder = git.hooks_dir(repo)
    removed = 0
    for name in HOOKS:
        target = folder / name
        chained = folder / (name + CHAINED)
        if target.exists() and _ours(target):
            target.unlink()
            removed += 1
            if chained.exists():
                chained.rename(target)
                print(f"removed {target}; restored your earlier hook")
            else:
                print(f"removed {target}")
    if not removed:
        print(f"No git-continuity hooks in {folder}.")
    return 0
