"""No dead code in the package, as vulture finds it (#37): what it cannot see used is named in
tests/vulture_whitelist.py with who uses it, and nothing else is let through."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHITELIST = "tests/vulture_whitelist.py"


def vulture(*paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "vulture", *paths, "--min-confidence", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


def test_vulture_finds_nothing_unused_in_the_package() -> None:
    found = vulture("git_continuity", WHITELIST)
    assert (found.returncode, found.stdout, found.stderr) == (0, "", "")


def test_every_name_in_the_whitelist_is_one_vulture_would_report() -> None:
    """A whitelist entry whose name is used again (or gone) would hide the next dead name of
    that spelling: each must be one that vulture reports without the whitelist."""
    tree = ast.parse((ROOT / WHITELIST).read_text())
    listed = {
        node.value.attr for node in tree.body if isinstance(node, ast.Expr) and isinstance(node.value, ast.Attribute)
    }
    reported = set(re.findall(r"unused \w+ '([^']+)'", vulture("git_continuity").stdout))
    assert listed - reported == set()
