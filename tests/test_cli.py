"""The command line as one table: every command dispatches to a function whose keywords are
its options, every command function is reachable, only the chosen command's parser is built,
and the cheap calls stay cheap."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import Ran

from git_continuity import commands
from git_continuity.cli import main as cli
from git_continuity.cli.spec import WROTE_DEST, Command
from git_continuity.cli.table import COMMANDS

Run = Callable[..., Ran]
Leaf = tuple[tuple[str, ...], Command, tuple[str, ...]]


def subparsers(parser: argparse.ArgumentParser) -> list[argparse._SubParsersAction[argparse.ArgumentParser]]:
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[Leaf]:
    """Every parser that runs a command: (its words, the table's row, the dests it passes on)."""
    leaf = parser.get_default(cli.LEAF)
    if leaf is not None:
        yield (path, *leaf)
    for action in subparsers(parser):
        for name, sub in action.choices.items():  # every parser built, the hidden ones too
            yield from leaves(sub, (*path, name))


ALL_LEAVES = list(leaves(cli.build_parser()))


def target(command: Command) -> Callable[..., int]:
    assert command.target is not None
    module, _, name = command.target.partition(":")
    function = getattr(importlib.import_module(module), name)
    assert callable(function), command.target
    return function  # type: ignore[no-any-return]


@pytest.mark.parametrize(("path", "command", "dests"), ALL_LEAVES, ids=[" ".join(leaf[0]) for leaf in ALL_LEAVES])
def test_every_command_dispatches_to_a_function_taking_its_options(
    path: tuple[str, ...], command: Command, dests: tuple[str, ...]
) -> None:
    params = list(inspect.signature(target(command)).parameters.values())
    if command.repo:
        assert params[0].name == "repo" and params[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        params = params[1:]
    given = [d for d in dests if d != WROTE_DEST]  # a write's --json is the door's (render/wrote.py)
    assert sorted(p.name for p in params) == sorted([*given, *(["stream"] if command.stream else [])])
    assert all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in params)


WRITES = (
    "objective set",
    "blocker add",
    "blocker done",
    "claim add",
    "claim retract",
    "thread add",
    "thread set",
    "thread cancel",
    "thread claim",
    "thread close",
    "thread reopen",
    "journal add",
    "place set",
    "place clear",
)


def test_the_writes_answer_json_with_what_they_wrote() -> None:
    """Every write that makes an entry or changes one offers --json (render/wrote.py); the readers
    have --json of their own (cli_spec.JSON), and no command has both."""
    writes = [" ".join(path) for path, _, dests in ALL_LEAVES if WROTE_DEST in dests]
    assert writes == list(WRITES)
    assert not [path for path, _, dests in ALL_LEAVES if WROTE_DEST in dests and "as_json" in dests]


def test_the_leaves_are_the_tables_commands() -> None:
    assert [" ".join(path) for path, _, _ in ALL_LEAVES] == [
        "init",
        "status",
        "objective set",
        "objective log",
        "next",
        "blocker add",
        "blocker done",
        "blocker list",
        "claim add",
        "claim retract",
        "claim show",
        "claim list",
        "thread add",
        "thread set",
        "thread cancel",
        "thread claim",
        "thread close",
        "thread reopen",
        "thread list",
        "thread show",
        "ready",
        "check",
        "verify",
        "progress",
        "ci run",
        "journal",
        "journal add",
        "show",
        "hooks install",
        "hooks uninstall",
        "trust allow",
        "trust revoke",
        "trust list",
        "trust signer add",
        "trust signer list",
        "trust signer remove",
        "trust team",
        "trust team join",
        "trust team accept",
        "orient",
        "handoff",
        "place set",
        "place list",
        "place clear",
        "repo add",
        "repo set-path",
        "repo list",
        "repo remove",
        "agent install",
        "agent uninstall",
        "agent status",
        "mcp",
        "log",
        "edit",
        "pull",
        "push",
        "sync",
        "doctor",
        "conflict list",
        "conflict dismiss",
        "quarantine list",
        "quarantine show",
        "quarantine restore",
        "quarantine drop",
        "plugins",
        "demo",
        "uninstall",
        "help",
        "hook-impl",
    ]


def command_functions() -> Iterator[str]:
    """Every public function of commands/ that returns an exit status."""
    for info in pkgutil.iter_modules(commands.__path__):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        for name, value in vars(module).items():
            public = inspect.isfunction(value) and value.__module__ == module.__name__ and not name.startswith("_")
            if public and inspect.signature(value).return_annotation in ("int", int):
                yield f"{module.__name__}:{name}"


def test_every_command_function_is_reachable_from_a_command() -> None:
    found = set(command_functions())
    assert "git_continuity.commands.status:status" in found
    assert found - {command.target for _, command, _ in ALL_LEAVES} == set()


def test_only_the_chosen_commands_parser_is_built() -> None:
    parser = cli.build_parser(eager=False)
    top = subparsers(parser)[0]
    assert list(dict.keys(top.choices)) == []
    args = parser.parse_args(["thread", "close", "t-k7m2qx", "--online"])
    assert list(dict.keys(top.choices)) == ["thread"]
    assert list(dict.keys(subparsers(top.choices["thread"])[0].choices)) == ["close"]
    command, dests = getattr(args, cli.LEAF)
    assert (command.target, dests, args.thread_id, args.online) == (
        "git_continuity.commands.thread:close",
        ("wrote_json", "thread_id", "online", "accept_withdrawn"),
        "t-k7m2qx",
        True,
    )


def test_the_help_lists_every_command_with_its_summary_and_hides_hook_impl(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per command
    with pytest.raises(SystemExit) as done:
        cli.main(["-h"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    listing = out.split("  <command>\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert listing == [f"    {c.name:<14} {c.summary}" for c in COMMANDS if c.name != "hook-impl"]
    assert len(listing) == 34 and "hook-impl" not in out


def test_an_unknown_command_names_every_command_but_the_hidden_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["bogus"])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "git continuity: error: argument <command>: invalid choice: 'bogus' (choose from 'init', 'status', "
        "'objective', 'next', 'blocker', 'claim', 'thread', 'ready', 'check', 'verify', 'progress', 'ci', 'journal', "
        "'show', 'hooks', 'trust', 'orient', 'handoff', 'place', 'repo', 'agent', 'mcp', 'log', 'edit', 'pull', "
        "'push', 'sync', 'doctor', 'conflict', 'quarantine', 'plugins', 'demo', 'uninstall', 'help')"
    )


# -- the hooks enter the same main ----------------------------------------------------------

WELL_FORMED = "The state is well-formed; every done thread still holds.\n"


def test_hook_impl_runs_a_hook(inproc: Run, repo: Path) -> None:
    assert inproc(repo, "init").code == 0
    ran = inproc(repo, "hook-impl", "state")
    assert (ran.code, ran.out, ran.err) == (0, WELL_FORMED, "")


def test_hook_main_is_hook_impl(
    inproc: Run, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert inproc(repo, "init").code == 0
    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["git-continuity-hook", "state"])
    assert cli.hook_main() == 0
    assert capsys.readouterr().out == WELL_FORMED


# -- what a cheap call imports --------------------------------------------------------------

PROBE = """\
import json, runpy, sys
sys.argv = ["git-continuity", *json.loads(sys.argv[1])]
try:
    runpy.run_module("git_continuity", run_name="__main__", alter_sys=True)
except SystemExit as done:
    code = done.code
print(json.dumps([code, sorted(sys.modules)]))
"""
HEAVY = {"pygit2", "jsonschema"}


def imported(tmp_path: Path, *args: str) -> tuple[int, set[str]]:
    """`python -m git_continuity ARGS` in a fresh process: its exit status and every module it imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, set(modules)


@pytest.mark.parametrize(
    "args",
    [["--version"], ["-h"], ["thread", "-h"], ["hook-impl", "commit-msg", "MSG"]],
    ids=" ".join,
)
def test_cheap_calls_import_neither_pygit2_nor_jsonschema(args: list[str], tmp_path: Path) -> None:
    (tmp_path / "MSG").write_text("Fix the login loop\n")  # names no thread: closes nothing
    code, modules = imported(tmp_path, *args)
    assert (code, {m.split(".")[0] for m in modules} & HEAVY) == (0, set())


def test_version_imports_only_the_command_line(tmp_path: Path) -> None:
    code, modules = imported(tmp_path, "--version")
    assert (code, sorted(m for m in modules if m.startswith("git_continuity"))) == (
        0,
        [
            "git_continuity",
            "git_continuity.cli",
            "git_continuity.cli.main",
            "git_continuity.cli.spec",
            "git_continuity.cli.table",
            "git_continuity.constants",
            "git_continuity.display",  # main's output is cleaned (standard library only)
            "git_continuity.errors",
        ],
    )
    # Each of these costs more than the parser: dataclasses brings inspect, shutil bz2 and lzma.
    assert {"dataclasses", "inspect", "shutil"} & modules == set()


def test_importing_the_cli_imports_neither_pygit2_nor_jsonschema() -> None:
    probe = "import json, sys, git_continuity.cli.main; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = {m.split(".")[0] for m in json.loads(done.stdout)}
    assert ("git_continuity" in modules, modules & HEAVY) == (True, set())
