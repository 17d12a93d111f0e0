"""git's own hooks, as ``git continuity hooks install`` writes them and ``uninstall`` (and
``git continuity uninstall``) removes them: in the folder git runs hooks from, chaining to a
hook that was there (kept as ``<hook>.pre-continuity``); or, where husky runs the hooks
(``core.hooksPath=.husky/_``), through husky's own scripts.

husky 9 points core.hooksPath at ``.husky/_`` (git-ignored), where every hook is a copy of
one script that runs the team's ``.husky/<hook>`` found by the hook's own name: a hook renamed
there to chain it finds no script and does nothing. So under husky the hooks go to the git
folder's own ``hooks/`` (which git no longer runs by itself), and each ``.husky/<hook>`` gets
one line that runs this clone's hook when it is installed: no machine path in a file the
team commits, and a clone without git-continuity skips the line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from git_continuity import repo as git
from git_continuity.clone.gate_presence import HOOK_MARK, HUSKY_MARK, husky
from git_continuity.errors import UserError
from git_continuity.repo import Repo

HOOKS = ("commit-msg", "post-commit", "pre-push", "post-rewrite")
# Hooks an earlier version installed: an install takes ours out (the place guard is commit-msg's
# now: git reads the index again after a pre-commit hook, 3 ms of a commit of git/git's checkout),
# and an uninstall still removes them.
FORMER = ("pre-commit",)
CHAINED = ".pre-continuity"
# The line in .husky/<hook> (sh -e runs the file): an `if`, so that a clone without the hook
# installed goes on (a failed test as the last command would fail the whole script).
HUSKY_LINE = (
    HUSKY_MARK + " runs this clone's hook where git continuity hooks install put it; skipped where it did not\n"
    'h="$(git rev-parse --git-common-dir)/hooks/{hook}"; if [ -x "$h" ]; then "$h" "$@"; fi\n'
)


def _templates() -> Path:
    # Wheels carry hooks/ inside the package as hook_scripts/ (pyproject force-include); a
    # source checkout or an editable install reads the top-level hooks/ folder.
    packaged = Path(__file__).resolve().parents[1] / "hook_scripts"
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "hooks"


def ours(path: Path) -> bool:
    try:
        return HOOK_MARK in path.read_text(errors="replace")
    except OSError:
        return False


def folder(repo: Repo) -> Path:
    """Where this clone's hook files are: git's hooks folder, or under husky the git folder's
    own ``hooks/`` that the lines in ``.husky/<hook>`` run."""
    return repo.common_dir / "hooks" if husky(repo) is not None else git.hooks_dir(repo)


@dataclass(frozen=True)
class Done:
    """What an install or a removal did, a line each, and where husky's scripts were changed."""

    lines: list[str]
    husky: list[Path]


def install(repo: Repo, *, force: bool = False) -> Done:
    """Write the hooks (chaining to any that were there); under husky, add the line to each
    ``.husky/<hook>``. Every refusal comes before anything is written."""
    team = husky(repo)
    where = folder(repo)
    if team is None:
        _refuse_in_work_tree(repo, where, force)
    for name in HOOKS:
        target, chained = where / name, where / (name + CHAINED)
        if target.exists() and not ours(target) and chained.exists():
            raise UserError(f"{target} is not ours and {chained} exists too; move one of them away first")
    where.mkdir(parents=True, exist_ok=True)
    lines = [_write_hook(where, name) for name in HOOKS] + _remove(where, FORMER, former=True)
    changed = [path for name in HOOKS if (path := _add_husky_line(team, name))] if team else []
    lines += [dropped(path) for name in FORMER if (path := _drop_husky_line(team, name))] if team else []
    return Done(lines, changed)


def dropped(script: Path) -> str:
    """What taking git-continuity's line out of a husky script did."""
    gone = "" if script.exists() else " and the file, now empty"
    return f"removed git-continuity's line from {script}{gone} (a file the team commits: commit it)"


def _refuse_in_work_tree(repo: Repo, where: Path, force: bool) -> None:
    inside = (
        repo.work_dir is not None
        and where.resolve().is_relative_to(repo.work_dir.resolve())
        and not where.resolve().is_relative_to(repo.common_dir.resolve())  # .git/hooks is not a tracked file
    )
    if inside and not force:
        raise UserError(
            f"core.hooksPath is {where}, inside the work tree: the hooks (which name this machine's Python)\n"
            "would become files to commit for everyone. Use the pre-commit framework's hooks\n"
            "(.pre-commit-hooks.yaml), or install them there anyway with: git continuity hooks install --force"
        )


def _write_hook(where: Path, name: str) -> str:
    target, chained = where / name, where / (name + CHAINED)
    note = ""
    if target.exists() and not ours(target):
        target.rename(chained)
        note = f"  (chains to your earlier hook, kept as {chained.name})"
    package = str(Path(__file__).resolve().parents[1])
    text = (_templates() / name).read_text().replace("@PYTHON@", sys.executable).replace("@PACKAGE@", package)
    target.write_text(text)
    target.chmod(0o755)
    return f"installed {target}{note}"


def _add_husky_line(team: Path, name: str) -> Path | None:
    """Add the line to ``.husky/<hook>`` (made when the team has none); the file when changed."""
    script = team / name
    try:
        text = script.read_text()
    except FileNotFoundError:
        text = ""
    if HUSKY_MARK in text:
        return None
    script.write_text(text + ("\n" if text and not text.endswith("\n") else "") + HUSKY_LINE.format(hook=name))
    return script


def uninstall(repo: Repo) -> Done:
    """Remove the hooks, putting back the ones they chained to, and the lines in husky's
    scripts (a script left with nothing but that line goes too)."""
    where = folder(repo)
    lines = _remove(where, FORMER + HOOKS)
    team = husky(repo)
    changed = [path for name in FORMER + HOOKS if (path := _drop_husky_line(team, name))] if team else []
    return Done(lines, changed)


def _remove(where: Path, names: tuple[str, ...], *, former: bool = False) -> list[str]:
    """Remove these hooks where they are ours, putting back the ones they chained to;
    ``former``: an earlier version's hooks (FORMER), only as its install wrote them (a copy made
    by hand of the template, its interpreter not filled in, is the user's to keep), said so."""
    lines: list[str] = []
    for name in names:
        target, chained = where / name, where / (name + CHAINED)
        if not (target.exists() and ours(target)) or (former and "@PYTHON@" in target.read_text()):
            continue
        target.unlink()
        why = " (an earlier version's place guard: the commit-msg hook's now)" if former else ""
        if chained.exists():
            chained.rename(target)
            lines.append(f"removed {target}{why}; restored your earlier hook")
        else:
            lines.append(f"removed {target}{why}")
    return lines


def _drop_husky_line(team: Path, name: str) -> Path | None:
    script = team / name
    try:
        text = script.read_text()
    except OSError:
        return None
    line = HUSKY_LINE.format(hook=name)
    if line not in text:
        return None
    left = text.replace(line, "")
    if left.strip():
        script.write_text(left)
    else:
        script.unlink()
    return script
