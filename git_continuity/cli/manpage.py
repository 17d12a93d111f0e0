"""The manual page git-continuity(1), made from the command line's own parsers: what
`git help continuity` and `git continuity --help` show once installed (the wheel carries it
into share/man/man1, where man looks next to the bin folder on PATH; see hatch_build.py).

    python -m git_continuity.cli.manpage > git-continuity.1
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Iterator

from git_continuity import __version__
from git_continuity.cli import main as cli
from git_continuity.cli.spec import DESCRIPTION

WIDTH = 72  # man indents by 7: the help fits 80 columns, whatever the terminal building it


def _parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield words
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name in action.choices:  # the hidden command (hook-impl) is not listed
                yield from _parsers(action.choices[name], (*words, name))


def _help(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> str:
    for word in words:
        (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    parser.formatter_class = functools.partial(cli.Formatter, width=WIDTH)
    return parser.format_help()


def _verbatim(text: str) -> str:
    """Text shown as it is: backslashes and minus signs escaped, no line read as a request,
    and ASCII only (man shows the page in any locale; an ellipsis has no glyph in ASCII)."""
    text = text.rstrip("\n").replace("\\", "\\e").replace("-", "\\-").replace("…", "...")
    lines = "".join(c if c.isascii() else f"\\[u{ord(c):04X}]" for c in text).splitlines()
    return ".nf\n" + "\n".join(f"\\&{line}" if line[:1] in (".", "'") else line for line in lines) + "\n.fi\n"


def render() -> str:
    parser = cli.build_parser(eager=True)
    summary = DESCRIPTION.split(":", 1)[0].lower()
    out = [
        f'.TH GIT\\-CONTINUITY 1 "" "git\\-continuity {__version__}" "Git Manual"\n',
        ".SH NAME\n",
        f"git\\-continuity \\- {summary.replace('-', chr(92) + '-')}\n",
        ".SH SYNOPSIS\n",
        _verbatim("git continuity [--stream STREAM] <command> [<args>]\ngit continuity help [COMMAND]"),
        ".SH DESCRIPTION\n",
        _verbatim(_help(parser, ())),
        ".SH COMMANDS\n",
    ]
    for words in list(_parsers(parser))[1:]:
        out += [f".SS git continuity {' '.join(words)}\n", _verbatim(_help(parser, words))]
    return "".join(out)


if __name__ == "__main__":
    print(render(), end="")
