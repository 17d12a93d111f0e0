"""git continuity help [COMMAND]: the help git continuity COMMAND -h prints."""

from __future__ import annotations

import argparse

from git_continuity.errors import UserError


def show_help(*, words: list[str]) -> int:
    """Print the help of the command ``words`` name (the top level's when none)."""
    from git_continuity import cli

    parser = cli.build_parser(eager=False)
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
