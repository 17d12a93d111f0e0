"""The layers of docs/ARCHITECTURE.md, kept by a test rather than by memory.

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
    found = {name for _, name in _imports(PACKAGE / "cli" / "main.py")}
    assert "git_continuity.errors" in {_ours(n) for n in found}, found


DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"


def _section(title: str) -> str:
    return DOC.read_text().split(f"\n{title}\n", 1)[1].split("\n#", 1)[0]


def _table(title: str) -> list[list[str]]:
    """The rows of the first table under a heading, as cells (the header and rule left out)."""
    rows = [line for line in _section(title).splitlines() if line.startswith("| ")]
    return [[c.strip() for c in row.split("|")[1:-1]] for row in rows[2:]]


def _listed(cell: str) -> list[str]:
    """The folders and modules a cell names (`cli/`, `api.py`), as module names."""
    return [
        "git_continuity." + n.removesuffix("/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for n in re.findall(r"`([^`]+)`", cell)
    ]


def _layers() -> dict[str, int]:
    """folder or top-level module -> its layer (0 = the top row of the page's table)."""
    return {name: height for height, row in enumerate(_table("## Layers")) for name in _listed(row[0])}


def _layer_of(module: str, layers: dict[str, int]) -> int | None:
    name = module
    while name not in layers and name.count(".") > 1:
        name = name.rsplit(".", 1)[0]
    return layers.get(name)


def test_every_module_sits_in_a_layer_and_every_layer_is_there() -> None:
    layers = _layers()
    assert [m for m in _modules() if m != "git_continuity" and _layer_of(m, layers) is None] == []
    folders = {"git_continuity." + p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert [name for name in layers if name not in _modules() and name not in folders] == []


def test_every_folder_says_what_lives_there_and_what_it_may_import() -> None:
    folders = [p for p in sorted(PACKAGE.iterdir()) if (p / "__init__.py").is_file()]
    said = {p.name: ast.get_docstring(ast.parse((p / "__init__.py").read_text())) or "" for p in folders}
    assert [name for name, doc in said.items() if len(doc) < 80] == []
    new = {"agents", "cli", "clone", "doctor", "gate", "helper", "hooks", "mcp", "plugins", "render", "sessions"}
    assert [name for name in sorted(new | {"trust", "view"}) if "May import" not in said[name]] == []


def _exceptions() -> set[tuple[str, str]]:
    return {(_listed(row[0])[0], _listed(row[1])[0]) for row in _table("### Exceptions")}


def test_no_import_goes_up_a_layer_but_the_listed_exceptions() -> None:
    layers, paths, allowed = _layers(), _modules(), _exceptions()
    found, used = set(), set()
    for module, path in paths.items():
        here = _layer_of(module, layers)
        for line, name in _imports(path):
            target = _ours(name)
            if target is None or here is None or (_layer_of(target, layers) or 0) >= here:
                continue
            if (module, target) in allowed:
                used.add((module, target))
            else:
                found.add(f"{path.relative_to(PACKAGE.parent)}:{line}: imports {target}, a layer above")
    assert sorted(found) == []
    assert used == allowed  # an exception no longer needed goes from the page


def _names_on_the_page() -> list[str]:
    """Every path (``a/b.py``, ``cli/``) and dotted name of ours the page writes in backticks."""
    return [
        n
        for n in re.findall(r"`([^`\s]+)`", DOC.read_text())
        if re.fullmatch(r"[\w./]+", n) and ("/" in n or n.endswith(".py") or n.startswith("git_continuity."))
    ]


def test_every_path_and_name_on_the_page_exists() -> None:
    missing = []
    for name in _names_on_the_page():
        if name.startswith("git_continuity."):
            module = name.partition(":")[0]
            if _ours(module) != module:
                missing.append(name)
            continue
        if not ((PACKAGE / name).exists() or (PACKAGE.parent / name).exists()):
            missing.append(name)
    assert missing == []
    assert len(_names_on_the_page()) > 60  # the reader sees the page's names


# The modules that start another program, and what each starts. git itself is started only
# through gitcli.py (and syncing/transport.py, for the network); repo/ reads the repository with
# pygit2. A module that starts a program gets a row here saying which.
STARTS_PROGRAMS = {
    "git_continuity.gitcli": "git, for all but the network",
    "git_continuity.syncing.transport": "git, for the network",
    "git_continuity.plugins.tokens": "gh auth token",
    "git_continuity.helper.door": "the helper process (this Python)",
    "git_continuity.doctor.setup": "the Python the git hooks recorded",
    "git_continuity.verifiers.cmd": "a cmd: handle's approved command",
    "git_continuity.commands.ci": "the command `ci run` records",
    "git_continuity.commands.edit": "the user's editor",
    "git_continuity.commands.demo": "the tour's steps, as a user types them",
    "git_continuity.trust.signing": "ssh-keygen or the user's gpg.program, signing a state commit",
    "git_continuity.agents.probe": "each agent hook's command, on a no-op event",
    "git_continuity.agents.shell": "the shell the agent gives its model, asked whether it finds git-continuity",
    "git_continuity.trust.signatures": "ssh-keygen -Y verify (or git's gpg.program), checking a state signature",
}
GIT_DOORS = {"git_continuity.gitcli", "git_continuity.syncing.transport"}
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


@pytest.mark.parametrize(
    ("command", "document"),
    [("status", "git_continuity.view.document"), ("progress", "git_continuity.view.progress")],
)
def test_a_reader_renders_the_views_document_and_asks_nothing_else(command: str, document: str) -> None:
    """#37: status and progress take the view's document and render it; the plumbing they may
    name besides is the model's wording of times, the repository's type, the errors and a file
    written whole."""
    rooms = ("git_continuity.view", "git_continuity.render")
    allowed = {m for m in _modules() if m.startswith(rooms)}
    allowed |= {"git_continuity.model", "git_continuity.repo", "git_continuity.errors", "git_continuity.atomic"}
    module = f"git_continuity.commands.{command}"
    assert _violations(f"{command} renders the view", allowed, [module]) == []
    assert document in {_ours(n) for _, n in _imports(_modules()[module])}
