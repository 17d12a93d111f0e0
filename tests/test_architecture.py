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


def test_constants_and_errors_import_nothing_of_ours() -> None:
    assert _violations("a leaf module", set(), ["git_continuity.constants", "git_continuity.errors"]) == []


def test_the_model_imports_only_constants_and_errors() -> None:
    allowed = {"git_continuity.constants", "git_continuity.errors"}
    assert _violations("model.py is pure data", allowed, ["git_continuity.model"]) == []


def test_the_repository_door_stands_on_the_leaves_only() -> None:
    """repo/ is what everything else stands on: it may not reach up into sessions or state
    (gitcli, the door for running git, imports nothing of ours)."""
    door = [m for m in _modules() if m == "git_continuity.repo" or m.startswith("git_continuity.repo.")]
    allowed = {"git_continuity.constants", "git_continuity.errors", "git_continuity.atomic", "git_continuity.gitcli"}
    allowed |= set(door)
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


# The modules that start another program, and what each starts. git itself is started only
# through gitcli.py (and transport.py, for the network); repo/ reads the repository with
# pygit2. A module that starts a program gets a row here saying which.
STARTS_PROGRAMS = {
    "git_continuity.gitcli": "git, for all but the network",
    "git_continuity.transport": "git, for the network",
    "git_continuity.tokens": "gh auth token",
    "git_continuity.helper": "the helper process (this Python)",
    "git_continuity.health_setup": "the Python the git hooks recorded",
    "git_continuity.verifiers.cmd": "a cmd: handle's approved command",
    "git_continuity.commands.ci": "the command `ci run` records",
    "git_continuity.commands.edit": "the user's editor",
    "git_continuity.commands.demo": "the tour's steps, as a user types them",
    "git_continuity.signing": "ssh-keygen or the user's gpg.program, signing a state commit",
    "git_continuity.agent_probe": "each agent hook's command, on a no-op event",
    "git_continuity.agent_shell": "the shell the agent gives its model, asked whether it finds git-continuity",
    "git_continuity.signatures": "ssh-keygen -Y verify (or git's gpg.program), checking a state commit's signature",
}
GIT_DOORS = {"git_continuity.gitcli", "git_continuity.transport"}
STARTERS = re.compile(r"os\.(exec|spawn|posix_spawn|system$|popen$)|asyncio\.create_subprocess")


def _starts_programs(path: Path) -> bool:
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in ("subprocess", "pty") for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("subprocess", "pty"):
            return True
        if isinstance(node, ast.Call) and STARTERS.match(ast.unparse(node.func)):
            return True
    return False


def _git_argv(path: Path) -> Iterator[int]:
    """Lines where a program's argument list names git: a list or tuple that starts with "git"
    (a comparison such as ``argv[:2] == ["git", "continuity"]`` starts nothing)."""
    tree = ast.parse(path.read_text(), str(path))
    compared = {id(n) for c in ast.walk(tree) if isinstance(c, ast.Compare) for n in [c.left, *c.comparators]}
    for node in ast.walk(tree):
        if isinstance(node, (ast.List, ast.Tuple)) and id(node) not in compared and node.elts:
            first = node.elts[0]
            if isinstance(first, ast.Constant) and first.value == "git":
                yield node.lineno


def test_only_the_listed_modules_start_programs() -> None:
    assert {m for m, p in _modules().items() if _starts_programs(p)} == set(STARTS_PROGRAMS)


def test_only_gitcli_and_transport_start_git() -> None:
    paths = _modules()
    found = [
        f"{paths[m].relative_to(PACKAGE.parent)}:{line}: runs git; go through gitcli.run"
        for m in paths
        if m not in GIT_DOORS
        for line in _git_argv(paths[m])
    ]
    assert found == []
    assert list(_git_argv(paths["git_continuity.gitcli"])) != []  # the reader sees a real one


def test_gitcli_imports_nothing_of_ours() -> None:
    assert _violations("the git door", set(), ["git_continuity.gitcli"]) == []


# Imports that break the groups of docs/ARCHITECTURE.md today, each with what would end it.
# A new one is not added here: the module moves to the group it belongs to, or the page gets
# a new group, argued for.
ALLOWED_FOR_NOW = {
    ("git_continuity.guards", "git_continuity.agent_hooks"): (
        "hook_impl dispatches the agents' hooks too; that dispatch belongs with hook_entry"
    ),
}


def _groups() -> dict[str, tuple[str, str, int]]:
    """table name -> (floor, group, the group's height in its floor: 0 = the bottom one), read
    from the page's groups table, where each floor's groups are listed from the top down."""
    section = DOC.read_text().split("### Groups inside a floor", 1)[1].split("\n## ", 1)[0]
    listed: dict[str, list[tuple[str, list[str]]]] = {}
    for row in section.splitlines():
        cells = [c.strip() for c in row.split("|")[1:-1]]
        if len(cells) == 4 and "`" in cells[2]:
            listed.setdefault(cells[0], []).append((cells[1], re.findall(r"`([^`]+)`", cells[2])))
    found = {}
    for floor, groups in listed.items():
        for height, (group, names) in enumerate(reversed(groups)):
            for name in names:
                found[name.removesuffix("*.py").removesuffix("/").removesuffix(".py").replace("/", ".")] = (
                    floor,
                    group,
                    height,
                )
    return found


def _entry(module: str, names: dict[str, tuple[str, str, int]]) -> str | None:
    """The table entry naming a module (itself, or the package it is in)."""
    name = module.removeprefix("git_continuity.")
    while name not in names and "." in name:
        name = name.rsplit(".", 1)[0]
    name = name.rstrip(".")
    return name if name in names else None


def test_every_module_of_a_grouped_floor_is_in_one_of_its_groups() -> None:
    floors, groups = _floors(), _groups()
    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| ") and "`" in line.split("|")[2]]
    named = {height: row.split("|")[1].strip() for height, row in enumerate(reversed(rows))}
    placed = {
        m: named.get(_floor_of(m, floors) or -1) for m in _modules() if m != "git_continuity"
    }  # module -> its floor's name
    grouped = {floor for floor, _, _ in groups.values()}
    assert [m for m, floor in placed.items() if floor in grouped and _entry(m, groups) is None] == []
    # a module grouped under one floor and placed on another by the floors table
    assert [m for m, floor in placed.items() if (e := _entry(m, groups)) and groups[e][0] != floor] == []


def test_a_module_imports_from_its_own_floor_only_the_groups_below_its_own() -> None:
    floors, groups, paths = _floors(), _groups(), _modules()
    found, used = [], set()
    for module, path in paths.items():
        here = _entry(module, groups)
        if module == "git_continuity" or here is None:
            continue
        for line, name in _imports(path):
            target = _ours(name)
            there = _entry(target, groups) if target is not None else None
            if there is None or there == here or _floor_of(target or "", floors) != _floor_of(module, floors):
                continue
            if groups[there][2] >= groups[here][2]:
                if (module, target) in ALLOWED_FOR_NOW:
                    used.add((module, target))
                    continue
                found.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {here} ({groups[here][1]}) imports {there} "
                    f"({groups[there][1]}), not a group below its own"
                )
    assert sorted(set(found)) == []
    assert used == set(ALLOWED_FOR_NOW)  # an entry no longer needed goes


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
