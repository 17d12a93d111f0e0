"""The shape of the command table (cli_state, cli_table): a command's words, its options, the
function it calls; and the text of the top-level help."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NamedTuple

DESCRIPTION = """\
Keep the working state of long, multi-session work inside the repository: the objective,
the next action, blockers, a journal, and claims whose handles re-derive them. The state
lives on refs/continuity/<stream>; your branches, index and work tree are never touched.

A new session starts with `git continuity orient` and ends with `git continuity handoff`;
every claim's state is derived now (verified, contradicted, unknown, unchecked, stale or
prose), never read from stored prose. `git continuity agent install claude|codex|gemini`
wires both into a coding agent's hooks.

Exit status: 0 success, 1 a check failed, 2 bad input or malformed state (nothing written).
"""

HANDLES = """\
handles (revisions are resolved to full ids when the claim is recorded):
  commit:<rev>                       the commit exists here
  ref:<refname>=<rev>                the ref points exactly at rev
  reachable:<rev>@<ref>              rev is the ref's commit or an ancestor of it
  pushed:<rev>@<remote>/<branch>     rev is on the remote's branch (--online asks the remote)
  tag:<name>[=<rev>]                 the tag exists (and points at rev)
  file:<path>[@<rev>]                the path exists in rev's tree (HEAD now without rev)
  clean:                             the work tree has no uncommitted changes
  cmd:<command>                      the command exits 0 (runs only once approved: trust allow)
  ci:<rev>[#<name>]                  `git continuity ci run` recorded a pass on rev's tree
  @<sibling>:<handle>                the handle, dereferenced in a sibling repository (repo add)
network handles (asked by verify --online; status shows their last evidence):
  github:pr/<owner>/<repo>#<n>[=open|merged|closed]
  github:checks/<owner>/<repo>@<rev>     every check run and commit status succeeded
  gitlab:mr/<project>!<iid>[=opened|merged|closed|locked]
  gitlab:pipeline/<project>@<rev>        the newest pipeline of rev on each ref succeeded
  gitea:pr/<host>/<owner>/<repo>#<n>[=open|merged|closed]   (forgejo: the same)
  gitea:status/<host>/<owner>/<repo>@<rev>                  every commit status succeeded
  buildbot:<url>[#<builder>]@<rev>       the newest build of rev succeeded
  (git continuity plugins lists every scheme installed here)
"""

EPILOG = HANDLES + "\nstart here:\n  git continuity demo      a guided tour in a throwaway repository"


# Named tuples rather than dataclasses: importing dataclasses (and inspect with it) would cost
# `--version` and the hooks' cheap path more than all the rest of the command line.
class Opt(NamedTuple):
    """One add_argument call; its dest is the keyword the command's function takes."""

    names: tuple[str, ...]
    settings: dict[str, Any]


def opt(*names: str, **settings: Any) -> Opt:
    return Opt(names, settings)


class Command(NamedTuple):
    """One (sub)command. ``target`` is the "module:function" it calls; a command without one
    only holds subcommands, which are then required. The function takes the repository
    first when ``repo`` is set, ``stream=`` when ``stream`` is set, and every option's dest
    as a keyword. A tuple inside ``options`` is a group of mutually exclusive options."""

    name: str
    summary: str
    example: str
    target: str | None = None
    options: tuple[Opt | tuple[Opt, ...], ...] = ()
    subcommands: tuple[Command, ...] = ()
    repo: bool = True
    stream: bool = True
    epilog: str = ""  # after the example
    hidden: bool = False  # not in the help, nor among the choices an error lists
    served: bool = False  # the repository's helper process may run it (helper/door.py), actions and all


class AfterDashes(argparse.Action):
    """`ci run -- COMMAND`: the command and its arguments, without the `--` that ends the
    options (argparse keeps it in a REMAINDER)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        argv = list(values or [])
        setattr(namespace, self.dest, argv[1:] if argv[:1] == ["--"] else argv)


class Once(argparse.Action):
    """An option that may be given once: a second value is refused rather than silently
    taking the first one's place (`claim add --check A --check B` kept only B)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(f"{option_string} may be given once here; see -h")
        setattr(namespace, self.dest, values)


class Latest(argparse.Action):
    """`journal -n N`, unless --all was given (--all wins wherever it stands; only it sets
    the count to None, since -n defaults to 20)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest) is not None:
            setattr(namespace, self.dest, values)


class Offered(tuple[str, ...]):
    """Choices argparse offers in usage, help and errors, and one more it accepts without
    offering it: ``thread set t-… done`` reaches the command, which says how to close."""

    def __new__(cls, offered: tuple[str, ...], accepted: str) -> Offered:
        made = super().__new__(cls, offered)
        made.accepted = accepted
        return made

    accepted: str

    def __contains__(self, value: object) -> bool:
        return value == self.accepted or super().__contains__(value)


JSON = opt(
    "--json",
    dest="as_json",
    action="store_true",
    help="print JSON for programs (its JSON Schema is in the package: git_continuity/schema/)",
)
# A write's --json: what it wrote (the state commits, the id it made) and what it said, in
# one document (schema/write.schema.json); cli._run gives it, the command never sees it.
WROTE_DEST = "wrote_json"
WROTE = opt(
    "--json",
    dest=WROTE_DEST,
    action="store_true",
    help="print what was written as JSON for programs (git_continuity/schema/write.schema.json)",
)
ONLINE = opt("--online", action="store_true", help="ask remotes and services themselves")
REMOTE = opt("remote", nargs="?", metavar="REMOTE", help="default: the current branch's upstream remote, else origin")
