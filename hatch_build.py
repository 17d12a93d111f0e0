"""Build hook: the wheel carries the manual page git-continuity(1), made from the command
line's parsers at build time (git_continuity/manpage.py), into share/man/man1. pip puts it
next to the bin folder, where man finds it for `git help continuity` and `git continuity --help`."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class ManPage(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        sys.path.insert(0, self.root)  # the command line needs only the standard library
        try:
            from git_continuity.cli import manpage

            text = manpage.render()
        finally:
            sys.path.remove(self.root)
        self._folder = tempfile.mkdtemp(prefix="git-continuity-man-")
        page = Path(self._folder) / "git-continuity.1"
        page.write_text(text, encoding="utf-8")
        build_data["shared_data"][str(page)] = "share/man/man1/git-continuity.1"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if getattr(self, "_folder", None):
            shutil.rmtree(self._folder, ignore_errors=True)
