"""The commands on where work happens (places), as rows of the command table."""

from __future__ import annotations

from git_continuity.cli_spec import JSON, Command, opt
from git_continuity.constants import PLACE_ROLES as ROLES

PLACE_EPILOG = """\
roles:
  home          where work happens (one per stream)
  donor         copy from it, commit nothing (the hooks refuse commits there)
  archive       read it for history, commit nothing (the hooks refuse commits there)
  preservation  never moves (the hooks refuse commits there and pushes that move the branch)
  cleanroom     for reproducing from a clean tree
WHERE is a worktree's name (git worktree list; the main checkout is named by its folder) or a
branch (NAME, or refs/heads/NAME when a worktree has the same name). Roles are synced with the
state; where each worktree lives stays on this machine (.git/continuity/places.json).
To commit or push past a guard on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git commit ...
(or git -c continuity.allowPlace=true commit ...)."""

WHERE = opt("where", metavar="WHERE", help="a worktree's name, or a branch (NAME or refs/heads/NAME)")

PLACES: tuple[Command, ...] = (
    Command(
        "place",
        "say which branches and worktrees are the home, donors, archives, preservation or cleanrooms",
        '  git continuity place set cli home --why "the implementation lives here"\n'
        '  git continuity place set cli-old donor --why "the old parser: copy parts, never commit"\n'
        "  git continuity place list",
        subcommands=(
            Command(
                "set",
                "give a branch or worktree a role",
                '  git continuity place set refs/heads/preserve/2026-11 preservation --why "the state we shipped"',
                "git_continuity.commands.place:set_place",
                (
                    WHERE,
                    opt("role", choices=ROLES, metavar="ROLE", help=f"one of {', '.join(ROLES)}"),
                    opt("--why", required=True, help="why it has this role (the next session reads it)"),
                ),
                epilog=PLACE_EPILOG,
            ),
            Command(
                "list",
                "every place, whether it is found here, and which one you are in",
                "  git continuity place list\n  git continuity place list --json",
                "git_continuity.commands.place:list_places",
                (JSON,),
            ),
            Command(
                "clear",
                "take a branch's or worktree's role away",
                "  git continuity place clear cli-old",
                "git_continuity.commands.place:clear_place",
                (WHERE,),
            ),
        ),
        epilog=PLACE_EPILOG,
    ),
)
