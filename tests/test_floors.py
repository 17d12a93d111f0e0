"""The dependency floors in pyproject.toml are true (#35): .ci/run installs the lowest versions
they allow (uv's lowest-direct resolution) and runs a smoke set of the suite against them, with
GIT_CONTINUITY_FLOORS=1; there each dependency must be exactly at its floor, and in any other
run within its range."""

from __future__ import annotations

import importlib.metadata
import os
import re
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def declared() -> dict[str, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Each runtime dependency: (its floor, the version it must stay below)."""
    found = {}
    for line in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]:
        name, low, high = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([\d.]+),<([\d.]+)", line).groups()  # type: ignore[union-attr]
        found[name] = (_version(low), _version(high))
    return found


def test_every_dependency_is_installed_within_its_range_and_at_its_floor_in_the_lowest_run() -> None:
    floors = os.environ.get("GIT_CONTINUITY_FLOORS") == "1"
    wrong = []
    for name, (low, high) in declared().items():
        have = _version(importlib.metadata.version(name))
        padded = have + (0,) * (len(low) - len(have))
        if not low <= padded < high or (floors and padded[: len(low)] != low):
            wrong.append(f"{name} {importlib.metadata.version(name)} (declared >={low}, <{high})")
    assert wrong == []


def test_python_is_one_the_project_declares() -> None:
    import sys

    needed = tomllib.loads(PYPROJECT.read_text())["project"]["requires-python"]
    assert needed == ">=3.11" and sys.version_info >= (3, 11)
