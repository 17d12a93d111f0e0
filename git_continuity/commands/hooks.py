"""Plain git hooks for people without the pre-commit framework (hooks/install.py writes them)."""

from __future__ import annotations

from git_continuity.hooks import install as githooks
from git_continuity.repo import Repo


def install(repo: Repo, *, force: bool = False) -> int:
    done = githooks.install(repo, force=force)
    for line in done.lines:
        print(line)
    if done.husky:
        listed = ", ".join(str(path) for path in done.husky)
        print(
            f"husky runs this clone's hooks: added git-continuity's line to {listed}.\n"
            "Commit them, so every clone's husky runs git-continuity's hooks (a clone without them skips the line)."
        )
    print(
        "Commits in a donor, archive or preservation place are now refused, and commits that claim to close a"
        " thread checked; uninstall with: git continuity hooks uninstall"
    )
    return 0


def uninstall(repo: Repo) -> int:
    done = githooks.uninstall(repo)
    for line in done.lines:
        print(line)
    for path in done.husky:
        print(githooks.dropped(path))
    if not done.lines and not done.husky:
        print(f"No git-continuity hooks in {githooks.folder(repo)}.")
    return 0
