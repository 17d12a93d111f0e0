"""The commands on where work happens (places) and the repositories a stream spans (siblings),
as rows of the command table."""

from __future__ import annotations

from git_continuity.cli.spec import JSON, WROTE, Command, opt
from git_continuity.constants import PLACE_ROLES as ROLES

PLACE_EPILOG = """\
roles:
  home          where work happens (one per stream)
  donor         copy from it, commit nothing (the hooks refuse commits there)
  archive       read it for history, commit nothing (the hooks refuse commits there)
  preservation  never moves (the hooks refuse commits there and pushes that move the branch)
  cleanroom     for reproducing from a clean tree
WHERE is a worktree's name here (git worktree list; the main checkout is named by its folder)
or a branch (NAME, or refs/heads/NAME when a worktree has the same name). A worktree is
recorded as the checkout of its branch: on every clone, the checkout on that branch, whatever
its folder is called (a detached one by its name). Roles are synced with the state.
To commit or push past a guard on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git commit ...
(or git -c continuity.allowPlace=true commit ...)."""

REPO_EPILOG = """\
A sibling is another repository the stream spans. Its name and URL are synced with the state;
its folder is local to each machine (.git/continuity/siblings.json): on another machine,
point at it with repo set-path NAME PATH. A check scoped to it, @NAME:scheme:address (e.g.
@api:pushed:HEAD@origin/main, @consumer:cmd:make check), is dereferenced in that repository;
a cmd: there runs only once approved there (git -C PATH continuity trust allow 'COMMAND'). A
sibling not found here leaves its checks unknown. Names: lower-case letters, digits, - and _."""

NAME_RULE = "up to 32 lower-case letters, digits, '-' and '_', starting with a letter or digit"
NAME = opt("name", metavar="NAME", help=f"the sibling's name, as scoped checks name it (@NAME:...): {NAME_RULE}")
WHERE = opt("where", metavar="WHERE", help="a worktree's name, or a branch (NAME or refs/heads/NAME)")

PLACES: tuple[Command, ...] = (
    Command(
        "place",
        "say which branches and checkouts are the home, donors, archives, preservation or cleanrooms",
        '  git continuity place set cli home --why "the implementation lives here"\n'
        '  git continuity place set cli-old donor --why "the old parser: copy parts, never commit"\n'
        "  git continuity place list",
        subcommands=(
            Command(
                "set",
                "give a branch or checkout a role",
                '  git continuity place set refs/heads/preserve/2026-11 preservation --why "the state we shipped"',
                "git_continuity.commands.place:set_place",
                (
                    WROTE,
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
                "take a branch's or checkout's role away",
                "  git continuity place clear cli-old",
                "git_continuity.commands.place:clear_place",
                (
                    WROTE,
                    WHERE,
                ),
            ),
        ),
        epilog=PLACE_EPILOG,
        served=True,
    ),
    Command(
        "repo",
        "name the other repositories the stream spans (siblings), where checks can be scoped",
        "  git continuity repo add api ../api\n"
        "  git continuity claim add \"the API change is pushed\" --check '@api:pushed:HEAD@origin/main'\n"
        "  git continuity repo list",
        subcommands=(
            Command(
                "add",
                "list a sibling repository (its name and URL synced, its folder kept on this machine)",
                "  git continuity repo add consumer ../consumer --url https://example.com/org/consumer.git",
                "git_continuity.commands.repo:add",
                (
                    NAME,
                    opt("path", metavar="PATH", help="the sibling's folder on this machine (its top folder)"),
                    opt("--url", help="where to clone it from, synced with the state (default: its origin's URL)"),
                ),
                epilog=REPO_EPILOG,
            ),
            Command(
                "set-path",
                "say where a sibling lives on this machine",
                "  git continuity repo set-path api ~/src/api",
                "git_continuity.commands.repo:set_path",
                (NAME, opt("path", metavar="PATH", help="the sibling's folder on this machine")),
                epilog=REPO_EPILOG,
            ),
            Command(
                "list",
                "every sibling, whether it is found here, and its folder here",
                "  git continuity repo list\n  git continuity repo list --json",
                "git_continuity.commands.repo:list_siblings",
                (JSON,),
            ),
            Command(
                "remove",
                "take a sibling out of the stream",
                "  git continuity repo remove api",
                "git_continuity.commands.repo:remove",
                (NAME,),
            ),
        ),
        epilog=REPO_EPILOG,
    ),
)
