"""Parse the command line and dispatch; nothing else lives here."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from git_continuity import __version__
from git_continuity.constants import env_stream
from git_continuity.errors import UserError

DESCRIPTION = """\
Keep the working state of long, multi-session work inside the repository: the objective,
the next action, blockers, a journal, and claims whose handles re-derive them. The state
lives on refs/continuity/<stream>; your branches, index and work tree are never touched.

A new session starts with `git continuity orient` and ends with `git continuity handoff`;
every claim's state is derived now (verified, contradicted, unknown, unchecked, stale or
prose), never read from stored prose. `git continuity agent install claude|codex` wires
both into a coding agent's hooks.

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


# --stream is accepted after the command too (git continuity status --stream b); SUPPRESS
# keeps a subcommand from resetting what was given before it.
_STREAM = argparse.ArgumentParser(add_help=False)
_STREAM.add_argument("--stream", default=argparse.SUPPRESS, help="which line of work (default: main)")


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str, example: str
) -> argparse.ArgumentParser:
    return sub.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog="example:\n" + example,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_STREAM],
    )


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON for programs (schema in schema/)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="git continuity",
        description=DESCRIPTION,
        epilog=HANDLES + "\nstart here:\n  git continuity demo      a guided tour in a throwaway repository",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"git-continuity {__version__}")
    parser.add_argument(
        "--stream",
        default=env_stream(),
        help="which line of work (default: $GIT_CONTINUITY_STREAM or main)",
    )
    sub = parser.add_subparsers(dest="command", metavar="<command>")

    p = _command(
        sub,
        "init",
        "start keeping state for a stream on refs/continuity/<stream> (or take the remote's in)",
        "  git continuity init\n  git continuity init --fetch-refspecs   # a plain git fetch brings the state too\n"
        "  git continuity --stream agent-b init --local",
    )
    refspecs = p.add_mutually_exclusive_group()
    refspecs.add_argument(
        "--fetch-refspecs",
        action="store_true",
        default=None,
        help="add +refs/continuity/*:refs/continuity-remotes/<remote>/* to the remote's fetch refspecs",
    )
    refspecs.add_argument(
        "--no-fetch-refspecs", dest="fetch_refspecs", action="store_false", help="do not add them, nor offer to"
    )
    p.add_argument("--remote", help="the remote to look at (default: the branch's upstream remote, else origin)")
    p.add_argument("--local", action="store_true", help="do not ask the remote whether it already has state")

    p = _command(
        sub,
        "status",
        "show the state as it is now, every claim dereferenced",
        "  git continuity status\n  git continuity status --json | jq '.claims[] | select(.state != \"verified\")'",
    )
    _json_flag(p)

    p = _command(
        sub,
        "objective",
        "set the objective or read how it changed",
        '  git continuity objective set "Ship the login fix" --why "users are locked out"\n'
        "  git continuity objective log",
    )
    osub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        osub,
        "set",
        "set what this line of work is for, and why",
        '  git continuity objective set "Ship the login fix" --why "users are locked out since 2.3"',
    )
    q.add_argument("text")
    q.add_argument("--why", required=True, help="why the objective is this now (kept in the objective log)")
    q = _command(
        osub, "log", "every objective this stream had: old, new, why, when, who", "  git continuity objective log"
    )
    _json_flag(q)

    p = _command(
        sub,
        "next",
        "set the next action (print it when no text is given)",
        '  git continuity next "rebase on origin/main and push again"',
    )
    p.add_argument("text", nargs="?")

    p = _command(
        sub,
        "blocker",
        "record what stops progress, and when it is gone",
        '  git continuity blocker add "CI runner is offline"\n  git continuity blocker done b-k7m2qx',
    )
    bsub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(bsub, "add", "record a blocker", '  git continuity blocker add "waiting for the API key"')
    q.add_argument("text")
    q = _command(bsub, "done", "mark a blocker as gone", "  git continuity blocker done b-k7m2qx")
    q.add_argument("id")

    p = _command(
        sub,
        "claim",
        "record statements with handles that re-derive them",
        '  git continuity claim add "the fix is pushed" --check pushed:HEAD@origin/main\n'
        "  git continuity claim list --state contradicted",
    )
    csub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        csub,
        "add",
        "record a claim; without --check it is prose, shown but never trusted",
        '  git continuity claim add "v1.2 is tagged" --check tag:v1.2\n'
        '  git continuity claim add "config moved" --check file:conf/app.toml@HEAD',
    )
    q.epilog = (q.epilog or "") + "\n\n" + HANDLES
    q.add_argument("text")
    q.add_argument("--check", metavar="HANDLE", help="how to re-derive it, e.g. pushed:HEAD@origin/main")
    q.add_argument("--thread", metavar="ID", help="make it one of this thread's acceptance checks")
    q = _command(
        csub,
        "retract",
        "withdraw a claim that no longer matters; the journal keeps what it said and why",
        '  git continuity claim retract c-k7m2qx --why "superseded by the rebased fix (c-5qh5qd)"',
    )
    q.add_argument("id")
    q.add_argument("--why", required=True, help="why it is withdrawn (kept in the journal)")
    q = _command(csub, "list", "every claim with its state now", "  git continuity claim list --json")
    q.add_argument(
        "--state",
        action="append",
        choices=["verified", "contradicted", "unknown", "unchecked", "stale", "prose"],
        help="only claims in this state (repeatable)",
    )
    _json_flag(q)

    p = _command(
        sub,
        "thread",
        "open pieces of work with acceptance checks; done only when every check verifies now",
        '  git continuity thread add "Ship the login fix" --check pushed:HEAD@origin/main '
        "--check 'cmd:python -m pytest -q'\n"
        "  git continuity thread close t-k7m2qx",
    )
    tsub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        tsub,
        "add",
        "open a thread; each --check becomes one of its acceptance checks",
        '  git continuity thread add "Ship the login fix" --check pushed:HEAD@origin/main '
        "--check 'cmd:python -m pytest -q'",
    )
    q.epilog = (q.epilog or "") + (
        "\n\nRevisions in checks resolve to full ids now (HEAD is the commit you are on), so a check"
        "\nabout a commit is added once that commit exists; more later: claim add … --thread ID."
    )
    q.add_argument("title")
    q.add_argument("--check", action="append", metavar="HANDLE", help="an acceptance check (repeatable)")
    q = _command(
        tsub,
        "set",
        "park or reopen a thread (open, watching, blocked, waiting); done comes only from close",
        "  git continuity thread set t-k7m2qx waiting",
    )
    q.add_argument("id")
    q.add_argument("status", choices=["open", "watching", "blocked", "waiting", "done"])
    q = _command(
        tsub,
        "close",
        "close a thread if every check verifies now; exit 1 listing what does not",
        "  git continuity thread close t-k7m2qx",
    )
    q.add_argument("id")
    q.add_argument("--online", action="store_true", help="ask remotes and services themselves")

    p = _command(
        sub,
        "check",
        "the gate: the state is well-formed; with --closing, every open thread verifies now (exit 1 if not)",
        "  git continuity check --closing          # what an agent's stop hook runs\n"
        "  git continuity check --closing --json",
    )
    p.add_argument("--closing", action="store_true", help="every open thread's checks must verify now")
    p.add_argument("--online", action="store_true", help="ask remotes and services themselves")
    _json_flag(p)

    p = _command(
        sub,
        "verify",
        "dereference claims now and record the evidence; exit 1 unless all verify",
        "  git continuity verify\n  git continuity verify c-k7m2qx --online",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="claims to verify (default: all)")
    p.add_argument(
        "--online",
        action="store_true",
        help="ask remotes themselves, not remote-tracking refs, and ask forges and CI servers",
    )
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="per network request (default 10)")
    _json_flag(p)

    p = _command(
        sub,
        "ci",
        "run a command on the committed tree and record the result on the commit's note",
        "  git continuity ci run -- pytest -q\n"
        "  git continuity ci run --name lint -- ruff check .\n"
        '  git continuity claim add "tests pass" --check ci:HEAD',
    )
    cisub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        cisub,
        "run",
        "run COMMAND (no shell) in the work tree's top folder; record success or failure on HEAD",
        "  git continuity ci run -- pytest -q\n  git continuity ci run -- sh -c 'make && make test'",
    )
    q.add_argument("--name", help="what the result is called (default: the command); ci:HEAD#NAME checks it alone")
    q.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the command and its arguments")

    p = _command(
        sub,
        "journal",
        "append to the journal, or read it",
        '  git continuity journal add "tried X: fails on Y, switching to Z"\n  git continuity journal -n 20',
    )
    p.add_argument("-n", type=int, dest="count", default=20, help="how many of the latest entries (default 20)")
    p.add_argument("--all", action="store_true", help="every entry")
    _json_flag(p)
    jsub = p.add_subparsers(dest="action", metavar="<action>")
    q = _command(
        jsub,
        "add",
        "append an entry: what was done, learned, tried",
        '  git continuity journal add "login test passes locally; CI not run yet"',
    )
    q.add_argument("text")

    p = _command(
        sub,
        "show",
        "what the continuity notes say about a commit: why it exists, what was verified on it",
        "  git continuity show HEAD\n  git log --notes=continuity   # the same notes in git's own log",
    )
    p.add_argument("rev", nargs="?", default="HEAD")
    _json_flag(p)

    p = _command(
        sub,
        "hooks",
        "install or remove plain git hooks (closure guard, provenance notes, push guard, rewrites)",
        "  git continuity hooks install\n  git continuity hooks uninstall",
    )
    hsub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        hsub,
        "install",
        "install the hooks (respects core.hooksPath; chains to existing hooks)",
        "  git continuity hooks install",
    )
    q.add_argument("--force", action="store_true", help="install even into a hooks folder inside the work tree")
    _command(hsub, "uninstall", "remove the hooks and restore what they chained to", "  git continuity hooks uninstall")

    p = _command(
        sub,
        "trust",
        "approve exact commands that cmd: checks may run on this machine",
        "  git continuity trust allow 'python -m pytest -q'\n  git continuity trust list",
    )
    rsub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        rsub,
        "allow",
        "approve one exact command here (never synced)",
        "  git continuity trust allow 'python -m pytest -q'",
    )
    q.add_argument("command_text", metavar="COMMAND")
    q = _command(rsub, "revoke", "withdraw an approval", "  git continuity trust revoke 'python -m pytest -q'")
    q.add_argument("command_text", metavar="COMMAND")
    q = _command(rsub, "list", "the commands approved here", "  git continuity trust list --json")
    _json_flag(q)

    p = _command(
        sub,
        "orient",
        "start a session: every load-bearing claim dereferenced, then a brief with what is true now on top",
        "  git continuity orient                      # the first call of a session\n"
        "  git continuity orient --max-tokens 2000    # cut by priority: truth first, history last\n"
        "  git continuity orient --json",
    )
    p.epilog = (p.epilog or "") + (
        "\n\nThe brief puts first what must not be acted on (contradicted or stale claims, with what was\n"
        "observed), then the objective, next action, blockers, open threads, verified and unconfirmed\n"
        "claims, the work tree, what changed since the last handoff, and the journal. Tokens are\n"
        "estimated as UTF-8 bytes / 3, rounded up. It starts this work tree's session (or continues\n"
        "the open one); GIT_CONTINUITY_SESSION and GIT_CONTINUITY_AGENT override it.\n"
        "Exit 1 when this clone has no state for the stream (the brief says how to fetch it), 2 when\n"
        "the state is malformed (the brief names each problem)."
    )
    p.add_argument("--max-tokens", type=int, metavar="N", help="keep the brief under N tokens, by priority")
    p.add_argument("--online", action="store_true", help="ask remotes and services themselves")
    _json_flag(p)

    p = _command(
        sub,
        "handoff",
        "end the session: record a handoff packet and a session entry in the journal",
        "  git continuity handoff\n"
        '  git continuity handoff --note "the flaky test is test_login_redirect; do not retry it"',
    )
    p.epilog = (p.epilog or "") + (
        "\n\nThe packet: the objective (and its latest change, with why), what this session did (commits\n"
        "on each branch it touched, claims added, threads moved), the work tree (branch, HEAD,\n"
        "uncommitted changes, stashes), open threads, blockers and the next action. It needs an\n"
        "objective (exit 2 otherwise). The next session reads it with git continuity orient."
    )
    p.add_argument("--note", metavar="TEXT", help="words for the next session, kept in the journal entry")
    _json_flag(p)

    p = _command(
        sub,
        "agent",
        "wire orient, handoff and the closure gate into a coding agent's hooks",
        "  git continuity agent install claude     # .claude/settings.json\n"
        "  git continuity agent install codex      # .codex/hooks.json and an AGENTS.md block\n"
        "  git continuity agent uninstall claude",
    )
    asub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(
        asub,
        "install",
        "merge the hooks into the agent's project configuration (idempotent; the rest is kept as it is)",
        "  git continuity agent install claude",
    )
    q.add_argument("agent", choices=["claude", "codex"])
    q = _command(asub, "uninstall", "remove exactly what install added", "  git continuity agent uninstall codex")
    q.add_argument("agent", choices=["claude", "codex"])

    p = _command(sub, "log", "the history of the state ref: one line per change", "  git continuity log -n 10")
    p.add_argument("-n", type=int, dest="count", help="how many changes (default: all)")
    _json_flag(p)

    _command(
        sub,
        "edit",
        "edit the packet (objective, next action, blockers) in $EDITOR; validated before it is kept",
        "  GIT_EDITOR=nano git continuity edit",
    )

    for name, summary, example in (
        (
            "pull",
            "fetch every stream's state and the commit notes from a remote and merge them in",
            "  git continuity pull\n  git continuity pull upstream",
        ),
        (
            "push",
            "publish every stream's state and the commit notes (merging first if the remote moved)",
            "  git continuity push",
        ),
        ("sync", "pull, then push: both sides end with the same state", "  git continuity sync"),
    ):
        p = _command(sub, name, summary, example)
        p.add_argument(
            "remote", nargs="?", metavar="REMOTE", help="default: the current branch's upstream remote, else origin"
        )

    p = _command(
        sub,
        "conflict",
        "values a merge of two clones' state did not keep: list them, dismiss them once looked at",
        "  git continuity conflict list\n  git continuity conflict dismiss x-k7m2qx",
    )
    xsub = p.add_subparsers(dest="action", metavar="<action>", required=True)
    q = _command(xsub, "list", "every conflict with the value kept and the other one", "  git continuity conflict list")
    _json_flag(q)
    q = _command(
        xsub, "dismiss", "delete conflict records once looked at", "  git continuity conflict dismiss x-k7m2qx"
    )
    q.add_argument("ids", nargs="+", metavar="ID")

    p = _command(
        sub, "plugins", "list verifier plugins, their versions and handle schemes", "  git continuity plugins --json"
    )
    _json_flag(p)

    p = _command(
        sub,
        "demo",
        "a guided tour in a throwaway repository with a real bare remote",
        "  git continuity demo\n  git continuity demo --keep   # leave the folder to explore",
    )
    p.add_argument("--keep", action="store_true", help="keep the demo folder and print where it is")
    return parser


def _run(args: argparse.Namespace) -> int:
    """Import only the command that runs (imports are most of a hook's or status's time)."""
    command, action = args.command, getattr(args, "action", None)
    if command == "demo":
        from git_continuity.commands import demo

        return demo.demo(keep=args.keep)
    if command == "plugins":
        from git_continuity.commands import plugins

        return plugins.plugins(as_json=args.json)

    from git_continuity import repo as git

    repo, stream = git.open_repo(), args.stream
    if command == "init":
        from git_continuity.commands import init

        return init.init(repo, stream=stream, fetch_refspecs=args.fetch_refspecs, remote=args.remote, local=args.local)
    if command in ("pull", "push", "sync"):
        from git_continuity.commands import sync

        run = {"pull": sync.pull, "push": sync.push, "sync": sync.sync}[command]
        return run(repo, remote=args.remote)
    if command == "conflict":
        from git_continuity.commands import conflict

        if args.action == "list":
            return conflict.list_conflicts(repo, stream=stream, as_json=args.json)
        return conflict.dismiss(repo, stream=stream, ids=args.ids)
    if command == "status":
        from git_continuity.commands import status

        return status.status(repo, stream=stream, as_json=args.json)
    if command == "objective":
        from git_continuity.commands import objective

        if action == "set":
            return objective.set_objective(repo, stream=stream, text=args.text, why=args.why)
        return objective.objective_log(repo, stream=stream, as_json=args.json)
    if command == "next":
        from git_continuity.commands import next as next_

        return next_.next_action(repo, stream=stream, text=args.text)
    if command == "blocker":
        from git_continuity.commands import blocker

        if action == "add":
            return blocker.add(repo, stream=stream, text=args.text)
        return blocker.done(repo, stream=stream, blocker_id=args.id)
    if command == "claim":
        from git_continuity.commands import claim

        if action == "add":
            return claim.add(repo, stream=stream, text=args.text, check=args.check, thread=args.thread)
        if action == "retract":
            return claim.retract(repo, stream=stream, claim_id=args.id, why=args.why)
        return claim.list_claims(repo, stream=stream, as_json=args.json, states=args.state)
    if command == "thread":
        from git_continuity.commands import thread

        if action == "add":
            return thread.add(repo, stream=stream, title=args.title, checks=args.check or [])
        if action == "set":
            return thread.set_status(repo, stream=stream, thread_id=args.id, status=args.status)
        return thread.close(repo, stream=stream, thread_id=args.id, online=args.online)
    if command == "verify":
        from git_continuity.commands import verify

        return verify.verify_claims(
            repo, stream=stream, ids=args.ids, online=args.online, as_json=args.json, timeout=args.timeout
        )
    if command == "ci":
        from git_continuity.commands import ci

        argv = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
        return ci.run(repo, command=argv, name=args.name)
    if command == "check":
        from git_continuity.commands import check

        return check.check(repo, stream=stream, closing=args.closing, online=args.online, as_json=args.json)
    if command == "journal":
        from git_continuity.commands import journal

        if action == "add":
            return journal.add(repo, stream=stream, text=args.text)
        return journal.show(repo, stream=stream, count=None if args.all else args.count, as_json=args.json)
    if command == "orient":
        from git_continuity.commands import orient

        return orient.orient(repo, stream=stream, as_json=args.json, max_tokens=args.max_tokens, online=args.online)
    if command == "handoff":
        from git_continuity.commands import handoff

        return handoff.handoff(repo, stream=stream, note=args.note, as_json=args.json)
    if command == "agent":
        from git_continuity.commands import agent

        if action == "install":
            return agent.install(repo, agent=args.agent)
        return agent.uninstall(repo, agent=args.agent)
    if command == "log":
        from git_continuity.commands import log

        return log.log(repo, stream=stream, count=args.count, as_json=args.json)
    if command == "show":
        from git_continuity.commands import show

        return show.show(repo, rev=args.rev, as_json=args.json)
    if command == "edit":
        from git_continuity.commands import edit

        return edit.edit(repo, stream=stream)
    if command == "hooks":
        from git_continuity.commands import hooks

        return hooks.install(repo, force=args.force) if action == "install" else hooks.uninstall(repo)
    if command == "trust":
        from git_continuity.commands import trust

        if action == "allow":
            return trust.allow(repo, command=args.command_text)
        if action == "revoke":
            return trust.revoke(repo, command=args.command_text)
        return trust.list_trusted(repo, as_json=args.json)
    raise AssertionError(f"no dispatch for {command}")  # every command build_parser() makes has a branch above


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return _run(args)
    except UserError as error:
        print(f"git-continuity: error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `git continuity log | head`: the reader left; not an error worth a traceback.
        sys.stderr.close()
        return 0
