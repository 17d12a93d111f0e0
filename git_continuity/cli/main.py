"""Parse the command line and dispatch; nothing else lives here.

The commands are declared once, in cli_table.COMMANDS. A parser is built only for the
command being run (the top level knows every command's name and summary, enough for its
help), and the function the command names is imported only then: imports and parsers are
most of a hook's or of status's time.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence

from git_continuity import __version__, display
from git_continuity.cli.spec import DESCRIPTION, EPILOG, JSON, WROTE_DEST, Command, Opt
from git_continuity.cli.table import COMMANDS
from git_continuity.constants import env_stream
from git_continuity.errors import NoState, UserError

# Where the parsed namespace keeps the command that runs and the dests of its own options
# (a parent's options, journal's -n under journal add, are not the leaf's).
LEAF = "_leaf"
# And the parser of a command that only holds actions, given none: its help lists them.
GROUP = "_group"
# And the parser of the innermost command named: its usage is the one a bad argument needs.
PARSER = "_parser"


def _columns() -> int:
    """shutil.get_terminal_size().columns, without importing shutil: argparse's formatter
    imports it to learn the width, and it brings bz2, lzma and more (a few ms of every call,
    the hooks' cheap path included), though only a help text needs the width."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0 and sys.__stdout__ is not None:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, told the width as argparse would find it (the terminal's, less 2)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)

    def _split_lines(self, text: str, width: int) -> list[str]:
        # An option's help folds at a word, never inside one: argparse's textwrap would break
        # refs/continuity-remotes/… at its hyphen and a long word anywhere.
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # Descriptions and epilogs keep their lines (examples, tables), but one wider than
        # the terminal folds at a word, never inside one (display.fold).
        return display.fold(super()._fill_text(text, width, indent), width + len(indent))


class _Parsers(dict[str, argparse.ArgumentParser]):
    """A subcommand's name -> its parser, built on first lookup. Iterating lists only the
    commands that are not hidden: argparse names them in an "invalid choice" error."""

    def __init__(self, commands: Sequence[Command], build: Callable[[Command], argparse.ArgumentParser]) -> None:
        super().__init__()
        self._commands = {c.name: c for c in commands}
        self._build = build

    def __missing__(self, name: str) -> argparse.ArgumentParser:
        parser = self[name] = self._build(self._commands[name])
        return parser

    def __contains__(self, name: object) -> bool:
        return name in self._commands

    def __iter__(self) -> Iterator[str]:
        return iter([name for name, command in self._commands.items() if not command.hidden])


def _add(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, option: Opt) -> argparse.Action:
    return parser.add_argument(*option.names, **option.settings)


def command_parser(command: Command, prog: str, eager: bool = False) -> argparse.ArgumentParser:
    """The parser of one command, its subcommands' parsers built lazily unless ``eager``."""
    summary = command.summary
    parser = argparse.ArgumentParser(
        prog=prog,
        description=summary[0].upper() + summary[1:] + ".",
        epilog="example:\n" + command.example + (f"\n\n{command.epilog}" if command.epilog else ""),
        formatter_class=Formatter,
    )
    if _uses_stream(command):
        # --stream is accepted after the command too (git continuity status --stream b); SUPPRESS
        # keeps a subcommand from resetting what was given before it.
        parser.add_argument(
            "--stream", default=argparse.SUPPRESS, help="which line of work (default: $GIT_CONTINUITY_STREAM or main)"
        )
    if _shows_text(command):
        _add_showing(parser, argparse.SUPPRESS)
    dests: list[str] = []
    for option in command.options:
        if isinstance(option, Opt):
            dests.append(_add(parser, option).dest)
        else:
            group = parser.add_mutually_exclusive_group()
            dests += [_add(group, each).dest for each in option]
    parser.set_defaults(**{PARSER: parser})
    if command.target is not None:
        parser.set_defaults(**{LEAF: (command, tuple(dict.fromkeys(dests)))})
    if command.subcommands:
        if command.target is None:
            parser.set_defaults(**{GROUP: parser})
        _lazy(parser.add_subparsers(dest="action", metavar="<action>"), command.subcommands, eager)
    return parser


def _shows_text(command: Command) -> bool:
    """Whether the command reads out state, for people or (--json) for programs: --full and -v
    mean something there (before any command, they are accepted everywhere)."""
    return command.target is not None and JSON in command.options


def _add_showing(parser: argparse.ArgumentParser, default: object) -> None:
    # Accepted before the command too (git continuity -v status); SUPPRESS after it, as --stream.
    parser.add_argument("--full", action="store_true", default=default, help="show long text whole, uncut")
    parser.add_argument("-v", "--verbose", action="store_true", default=default, help="show object ids whole")


def _showing(args: argparse.Namespace) -> contextlib.AbstractContextManager[None]:
    """How this run shows text: --full, -v, and on a terminal its width and colour."""
    out = sys.stdout.raw if isinstance(sys.stdout, display.CleanStream) else sys.stdout
    colour = display.wants_colour(out)
    width = _columns() if _is_terminal(out) else None  # a pipe or a file is never folded
    return display.showing(full=args.full, verbose=args.verbose, width=width, colour=colour)


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def _uses_stream(command: Command) -> bool:
    """Whether --stream means something here: the command, or one of its actions, is given it."""
    return (command.target is not None and command.stream) or any(_uses_stream(sub) for sub in command.subcommands)


def _lazy(sub: argparse._SubParsersAction[argparse.ArgumentParser], commands: Sequence[Command], eager: bool) -> None:
    """Subcommands as argparse's add_parser makes them, except that each one's parser is built
    when it is chosen (or asked for its help); ``eager`` builds them all now."""
    parsers = _Parsers(commands, lambda command: command_parser(command, f"{sub._prog_prefix} {command.name}", eager))
    sub.choices = sub._name_parser_map = parsers
    for command in commands:
        if not command.hidden:
            sub._choices_actions.append(sub._ChoicesPseudoAction(command.name, (), command.summary))
        if eager:
            parsers[command.name]  # built now


def build_parser(*, eager: bool = True) -> argparse.ArgumentParser:
    """The whole command line; ``eager=False`` leaves each command's parser to be built when
    it is chosen (what main does)."""
    parser = argparse.ArgumentParser(
        prog="git continuity",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=Formatter,
    )
    parser.add_argument("--version", action="version", version=f"git-continuity {__version__}")
    parser.add_argument(
        "--stream",
        default=env_stream(),
        help="which line of work (default: $GIT_CONTINUITY_STREAM or main)",
    )
    _add_showing(parser, False)
    _lazy(parser.add_subparsers(dest="command", metavar="<command>"), COMMANDS, eager)
    return parser


_BUILT: list[argparse.ArgumentParser] = []  # the whole command line, built by the helper once (warm)


def warm() -> None:
    """Build the whole command line now (the helper does, once): each command's copy then
    parses without building it, 3 ms of a write. Its one default read from the environment,
    --stream's, each command sets again from its own (main). One parse compiles the patterns
    argparse compiles on first use."""
    _BUILT[:] = [build_parser(eager=True)]
    _BUILT[0].parse_known_args(["journal", "add", "text"])


def show_help(*, words: list[str]) -> int:
    """git continuity help [COMMAND…]: print the help of the command ``words`` name (the top
    level's when none), as ``git continuity COMMAND -h`` does."""
    parser = build_parser(eager=False)
    for index, word in enumerate(words):
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        said = " ".join(["git continuity", *words[:index]])
        if not actions:
            raise UserError(f"{said} has no actions: git continuity help {' '.join(words[:index])} shows its help")
        if word not in actions[0].choices:
            known = ", ".join(actions[0].choices)
            if index == 0:
                raise UserError(f"no command {word!r} (commands: {known})")
            raise UserError(f"{said} has no action {word!r} (actions: {known})")
        parser = actions[0].choices[word]
    parser.print_help()
    return 0


def _run(args: argparse.Namespace) -> int:
    """Import the function the command names, and call it with the repository (opened here),
    the stream and the command's own options as keywords."""
    command, dests = getattr(args, LEAF)
    module, _, name = command.target.partition(":")
    function = getattr(importlib.import_module(module), name)
    options = {dest: getattr(args, dest) for dest in dests}
    wrote_json = options.pop(WROTE_DEST, False)
    if command.stream:
        options["stream"] = args.stream
    if not command.repo:
        done: int = function(**options)
        return done
    from git_continuity import repo as git

    _here()
    repo = git.open_repo()
    if wrote_json:
        from git_continuity.render import wrote

        named = next((v for k, v in options.items() if k.endswith("_id") and isinstance(v, str)), None)
        return wrote.reported(args.stream, named, lambda: int(function(repo, **options)))
    done = function(repo, **options)
    return done


def _here() -> None:
    """Refuse to look for the repository from a folder that was removed under this process
    (a shell left in it): every path would be relative to nothing."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise UserError(
            "the current folder no longer exists (removed or moved away); change to a folder that does and run it again"
        ) from None


def failed_os(error: OSError) -> str:
    """What the system refused, for the one-line message: the file (or files) and the OS's
    reason; libgit2's errors name their file in their text already."""
    if error.strerror and error.filename is not None:
        files = f"{error.filename!s} -> {error.filename2!s}" if error.filename2 is not None else str(error.filename)
        return f"{files}: {error.strerror}"
    return error.strerror or str(error) or type(error).__name__


def explained(error: UserError) -> str:
    """The message of a failure. A missing state also says whether a remote has it: asked
    here, at the top, since that may reach the network (tracking.explain_missing)."""
    if isinstance(error, NoState):
        from git_continuity.syncing import tracking

        return tracking.explain_missing(error)
    return str(error)


def _not_utf8(argv: Sequence[str]) -> str | None:
    """Why an argument cannot be taken, when one holds bytes that are not UTF-8 (Python keeps
    them as lone surrogates, which no file of the state could hold)."""
    for n, arg in enumerate(argv, 1):
        for i, char in enumerate(arg):
            if "\udc80" <= char <= "\udcff":
                return (
                    f"argument {n} is not UTF-8 (byte 0x{ord(char) - 0xDC00:02x} at character {i + 1}); "
                    "nothing was written. Give the text in UTF-8."
                )
    return None


def _nowhere() -> None:
    """What is still buffered for standard output goes nowhere: the last flush (the
    interpreter's, or the helper's copy's) would fail again, and exit 120 where a command in
    its own process ends 0."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno() if sys.__stdout__ else 1)


def _output_lost(error: display.OutputError) -> int:
    """Say once that the output could not be written."""
    _nowhere()
    with contextlib.suppress(OSError, display.OutputError):
        print(f"git-continuity: error: cannot write the output: {error}", file=sys.stderr)
    return 2


@display.cleaning
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    refused = _not_utf8(argv)
    if refused:
        print(f"git-continuity: error: {refused}", file=sys.stderr)
        return 2
    parser = _BUILT[0] if _BUILT else build_parser(eager=False)
    if _BUILT:
        parser.set_defaults(stream=env_stream())
    args, extra = parser.parse_known_args(argv)
    if extra:  # said with the usage of the command they were given to, not the top level's
        getattr(args, PARSER, parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not hasattr(args, LEAF):
        # No command, or a command that only holds actions and was given none: its help lists them.
        getattr(args, GROUP, parser).print_help()
        return 2
    try:
        with _showing(args):
            done = _run(args)
        sys.stdout.flush()  # here, so that a write that fails is answered like any other failure
        return done
    except display.OutputError as error:
        return _output_lost(error)
    except UserError as error:
        print(f"git-continuity: error: {explained(error)}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        with contextlib.suppress(OSError, display.OutputError):
            print("git-continuity: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `git continuity log | head`: the reader left; not an error worth a traceback.
        _nowhere()
        sys.stderr.close()
        return 0
    except OSError as error:
        # The machine refused (a read-only file system, a full disk, a file's permissions):
        # said in one line naming the file; the state was written whole or not at all.
        with contextlib.suppress(OSError, display.OutputError):
            print(f"git-continuity: error: {failed_os(error)}", file=sys.stderr)
        return 2


def hook_main() -> int:
    """git-continuity-hook HOOK [ARGS...]: the hooks' entry point, the same main."""
    return main(["hook-impl", *sys.argv[1:]])
