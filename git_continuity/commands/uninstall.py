"""``git continuity uninstall [--state] [--json]``: take out of this clone what git-continuity
put there (doctor/uninstall.py), and say what stays and why."""

from __future__ import annotations

from git_continuity.display import clean
from git_continuity.doctor import uninstall as uninstalling
from git_continuity.render import text as render
from git_continuity.repo import Repo


def uninstall(repo: Repo, *, state: bool = False, as_json: bool = False) -> int:
    report = uninstalling.uninstall(repo, state=state)
    code = 1 if report.failed else 0
    if as_json:
        render.emit_json("uninstall", {"removed": report.removed, "kept": report.kept, "failed": report.failed})
        return code
    print("Removed:" if report.removed else "Nothing of git-continuity's was left here to remove.")
    for item in report.removed:
        print(f"  {clean(item['where'])}: {clean(item['what'])}")
    if report.failed:
        print("Not removed (the rest was):")
        for item in report.failed:
            print(f"  {item['area']}: {clean(item['why'])}")
    print("Kept:")
    for item in report.kept:
        print(f"  {clean(item['where'])}: {clean(item['why'])}")
    return code
