"""The floors of docs/ARCHITECTURE.md, kept by a test rather than by memory.

Each rule reads the package's own source with ``ast`` (no import runs), so a violation is
named by module and line. The rules on pygit2, on commands/ and on the hooks' cheap path are
in test_layers.py; the verifiers' imports in test_plugins.py.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "git_continuity"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, module) for every import in the file, relative imports made absolute."""
    tree = ast.parse(path.read_text(), str(path))
    here = _module_name(path).split(".")
    package = here if path.name == "__init__.py" else here[:-1]
    for node in _walk_runtime(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            for alias in node.names:  # `from git_continuity import store` names a module
                yield node.lineno, f"{base}.{alias.name}"


def _walk_runtime(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node that runs: an ``if TYPE_CHECKING:`` block is for the type checker only."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in {"TYPE_CHECKING", "typing.TYPE_CHECKING"}:
            yield from (n for child in node.orelse for n in [child, *_walk_runtime(child)])
            continue
        yield node
        yield from _walk_runtime(node)


def _ours(name: str) -> str | None:
    """The module of ours an import names, or None (the standard library, a dependency)."""
    if name != "git_continuity" and not name.startswith("git_continuity."):
        return None
    modules = _modules()
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules and name != "git_continuity" else None


def _violations(rule: str, allowed: set[str] | None, modules: list[str]) -> list[str]:
    found = []
    paths = _modules()
    for module in modules:
        for line, name in _imports(paths[module]):
            target = _ours(name)
            if target is not None and allowed is not None and target not in allowed:
                found.append(f"{paths[module].relative_to(PACKAGE.parent)}:{line}: {rule}: imports {target}")
    return sorted(set(found))


def test_no_module_is_over_400_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE.parent)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_constants_and_errors_import_nothing_of_ours() -> None:
    assert _violations("a leaf module", set(), ["git_continuity.constants", "git_continuity.errors"]) == []


def test_the_model_imports_only_constants_and_errors() -> None:
    allowed = {"git_continuity.constants", "git_continuity.errors"}
    assert _violations("model.py is pure data", allowed, ["git_continuity.model"]) == []


def test_the_repository_door_stands_on_the_leaves_only() -> None:
    """repo/ is what everything else stands on: it may not reach up into sessions or state."""
    door = [m for m in _modules() if m == "git_continuity.repo" or m.startswith("git_continuity.repo.")]
    allowed = {"git_continuity.constants", "git_continuity.errors", "git_continuity.atomic", *door}
    assert _violations("the repository door", allowed, door) == []


@pytest.mark.parametrize("module", sorted(_modules()))
def test_every_module_imports_only_what_exists(module: str) -> None:
    """An import of ours that names nothing (a module renamed in a split) fails here first."""
    paths = _modules()
    for line, name in _imports(paths[module]):
        if name.startswith("git_continuity.") and _ours(name) is None:
            head = name.rsplit(".", 1)[0]
            # `from git_continuity.x import name`: name is an attribute of module x
            assert _ours(head) is not None or head == "git_continuity", f"{paths[module]}:{line}: {name}"


def test_these_rules_read_real_imports() -> None:
    """The reader above must see what Python sees: a known import is found."""
    found = {name for _, name in _imports(PACKAGE / "cli.py")}
    assert "git_continuity.errors" in {_ours(n) for n in found}, found


DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"


def _floors() -> dict[str, int]:
    """module -> its floor's height (0 = leaves), read from the floors table of the page."""
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| ") and "`" in line.split("|")[2]]
    heights: dict[str, int] = {}
    for height, row in enumerate(reversed(rows)):
        for name in re.findall(r"`([^`]+)`", row.split("|")[2]):
            heights[name.removesuffix("*.py").removesuffix("/").removesuffix(".py").replace("/", ".")] = height
    return heights


def _floor_of(module: str, floors: dict[str, int]) -> int | None:
    name = module.removeprefix("git_continuity.")
    while name not in floors and "." in name:
        name = name.rsplit(".", 1)[0]
    return floors.get(name.rstrip("."))


def test_every_module_has_a_floor_on_the_architecture_page() -> None:
    floors = _floors()
    assert [m for m in _modules() if m != "git_continuity" and _floor_of(m, floors) is None] == []


def test_no_module_imports_from_a_floor_above_its_own() -> None:
    floors, paths = _floors(), _modules()
    found = sorted(
        {
            f"{paths[module].relative_to(PACKAGE.parent)}:{line}: imports {target} from a floor above"
            for module in paths
            if module != "git_continuity"
            for line, name in _imports(paths[module])
            if (target := _ours(name)) is not None
            and (_floor_of(target, floors) or 0) > (_floor_of(module, floors) or 0)
        }
    )
    assert found == []


def _command_of(module: str) -> str | None:
    """The command a module belongs to: ``git_continuity.commands.<name>`` (a module, or a
    package such as the demo tour's chapters), or None below the commands floor."""
    parts = module.split(".")
    return ".".join(parts[:3]) if parts[:2] == ["git_continuity", "commands"] and len(parts) > 2 else None


def test_no_command_imports_another_command() -> None:
    """Commands are thin: what two of them share lives in a service below (syncing/, which
    init and doctor call; retractions, which claim and verify read)."""
    paths = _modules()
    found = sorted(
        {
            f"{paths[module].relative_to(PACKAGE.parent)}:{line}: imports {target}"
            for module in paths
            if (mine := _command_of(module)) is not None
            for line, name in _imports(paths[module])
            if (target := _ours(name)) is not None and (theirs := _command_of(target)) is not None and theirs != mine
        }
    )
    assert found == []
