"""Every command of the command line, declared once: its words, its options and the function
it calls, in one place. cli/main.py builds parsers from this table and dispatches generically;
a test checks that every option's dest is a keyword of the function the command names.

To add a command: write its function in commands/ (the repository first, then keywords), add
a row naming it here, and add its words to ORDER; tests/test_cli.py checks the rest.

The rows, from the parts others are made of up: planning (``--after``, ``--priority``,
``ready``, ``cancel``, ``claim``), the thread command, places and siblings, the commands on a
stream's state (``STATE``), and the rest (``AROUND``: the repository, sessions and the world
around it); ``COMMANDS`` puts them all in the order the help lists them.
"""

from __future__ import annotations

import argparse

from git_continuity.cli.spec import (
    HANDLES,
    JSON,
    ONLINE,
    REMOTE,
    WROTE,
    AfterDashes,
    Command,
    Latest,
    Offered,
    Once,
    opt,
)
from git_continuity.constants import PLACE_ROLES as ROLES

# -- planning ----------------------------------------------------------------------------------

AFTER = opt(
    "--after",
    action="append",
    metavar="ID",
    help="a thread that must be done before this one is ready (repeatable)",
)
PRIORITY = opt("--priority", metavar="0..4", help="its place in the ready queue: 0 first, 4 last (default 2)")

READY = Command(
    "ready",
    "the open threads to take up now (every --after thread done, no blocker holding them), by priority then age",
    "  git continuity ready\n  git continuity ready --json | jq -r '.ready[0].id'",
    "git_continuity.commands.ready:ready",
    (JSON,),
    served=True,
)

CANCEL = Command(
    "cancel",
    "end a thread unfinished: shown as cancelled, never gates a stop, never counted as done",
    '  git continuity thread cancel t-k7m2qx --why "the old login page is being removed"',
    "git_continuity.commands.thread_cancel:cancel",
    (
        WROTE,
        opt("thread_id", metavar="id", help="the thread, e.g. t-k7m2qx (thread list shows the ids)"),
        opt("--why", required=True, help="why the work is dropped (the next session reads it)"),
    ),
)

CLAIM = Command(
    "claim",
    "record that this session is on a thread; refused while another session holds it",
    "  git continuity thread claim t-k7m2qx\n  git continuity thread claim t-k7m2qx --steal",
    "git_continuity.commands.thread_claim:claim",
    (
        WROTE,
        opt("thread_id", metavar="id", help="the thread, e.g. t-k7m2qx (ready lists the ones to take up)"),
        opt("--steal", action="store_true", help="take it over from the session that holds it (recorded)"),
    ),
    epilog="A claim ends when its session's handoff is recorded. Two clones claiming one thread at"
    "\nonce: the merge keeps one, and the other is told at its next sync.",
)


# -- threads -----------------------------------------------------------------------------------

BUDGET = opt(
    "--budget",
    metavar="attempts=N,sessions=N,time=8h",
    help="what it may spend before the stop-loss blocks it (reopening starts the count again)",
)

THREAD = Command(
    "thread",
    "open pieces of work with acceptance checks; done only when every check verifies now",
    '  git continuity thread add "Ship the login fix" --check pushed:HEAD@origin/main '
    "--check 'cmd:python -m pytest -q'\n"
    "  git continuity thread list\n"
    "  git continuity thread close t-k7m2qx",
    subcommands=(
        Command(
            "add",
            "open a thread; each --check becomes one of its acceptance checks",
            '  git continuity thread add "Ship the login fix" --check pushed:HEAD@origin/main '
            "--check 'cmd:python -m pytest -q'",
            "git_continuity.commands.thread:add",
            (
                WROTE,
                opt("title", help="what the piece of work is, in a few words"),
                opt(
                    "--check",
                    dest="checks",
                    action="append",
                    default=[],
                    metavar="HANDLE",
                    help="an acceptance check (repeatable)",
                ),
                BUDGET,
                AFTER,
                PRIORITY,
            ),
            epilog="Revisions in checks resolve to full ids now (HEAD is the commit you are on), so a check"
            "\nabout a commit is added once that commit exists; more later: claim add … --thread ID.",
        ),
        Command(
            "set",
            "park or reopen a thread, or change its --after and --priority; done comes only from close",
            "  git continuity thread set t-k7m2qx waiting\n"
            "  git continuity thread set t-k7m2qx open --budget attempts=3   # after a stop-loss\n"
            "  git continuity thread set t-k7m2qx --after t-m3p9qa --priority 1",
            "git_continuity.commands.thread:set_status",
            (
                WROTE,
                opt("thread_id", metavar="id", help="the thread, e.g. t-k7m2qx (thread list shows the ids)"),
                # done is accepted only to be refused with the way to close (thread close).
                opt(
                    "status",
                    nargs="?",
                    choices=Offered(("open", "watching", "blocked", "waiting"), "done"),
                    help="its status now (default: unchanged)",
                ),
                BUDGET,
                AFTER,
                opt(
                    "--no-after",
                    action="append",
                    metavar="ID",
                    help="no longer wait for this thread (repeatable)",
                ),
                PRIORITY,
            ),
        ),
        CANCEL,
        CLAIM,
        Command(
            "close",
            "close a thread if every check verifies now; exit 1 listing what does not",
            "  git continuity thread close t-k7m2qx\n"
            '  git continuity thread close t-k7m2qx --accept-withdrawn "the tag moved to the next release"',
            "git_continuity.commands.thread:close",
            (
                WROTE,
                opt("thread_id", metavar="id", help="the thread, e.g. t-k7m2qx (thread list shows the ids)"),
                ONLINE,
                opt(
                    "--accept-withdrawn",
                    dest="accept_withdrawn",
                    metavar="WHY",
                    help="close although checks were withdrawn while it was open, saying why (recorded, "
                    "shown as done with N withdrawn checks)",
                ),
            ),
            epilog="A check withdrawn while the thread was open (claim retract) stays on it with its reason;"
            "\nthe thread then closes only with --accept-withdrawn, and never with no check verified.",
        ),
        Command(
            "reopen",
            "reopen a done thread (one that no longer holds, or was closed too early)",
            "  git continuity thread reopen t-k7m2qx",
            "git_continuity.commands.thread:reopen",
            (
                WROTE,
                opt("thread_id", metavar="id", help="the thread, e.g. t-k7m2qx (thread list shows the ids)"),
            ),
        ),
        Command(
            "list",
            "every thread with its status and how many of its checks verify now",
            "  git continuity thread list\n  git continuity thread list --status open --json",
            "git_continuity.commands.thread:list_threads",
            (
                opt(
                    "--status",
                    dest="statuses",
                    action="append",
                    choices=["open", "watching", "blocked", "waiting", "done", "cancelled"],
                    metavar="STATUS",
                    help="only threads with this status: open, watching, blocked, waiting, done or cancelled"
                    " (repeatable)",
                ),
                JSON,
            ),
        ),
        Command(
            "show",
            "one thread: its status, when it was opened and closed, and each check's state now",
            "  git continuity thread show t-k7m2qx\n  git continuity thread show t-k7m2qx --json",
            "git_continuity.commands.thread:show",
            (opt("thread_id", metavar="id", help="the thread, e.g. t-k7m2qx (thread list shows the ids)"), JSON),
        ),
    ),
    served=True,
)


# -- places and siblings -----------------------------------------------------------------------

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


# -- a stream's state --------------------------------------------------------------------------

STATE: tuple[Command, ...] = (
    Command(
        "init",
        "start keeping state for a stream on refs/continuity/<stream> (or take the remote's in)",
        "  git continuity init\n  git continuity init --fetch-refspecs   # a plain git fetch brings the state too\n"
        "  git continuity --stream agent-b init --local",
        "git_continuity.commands.init:init",
        (
            (
                opt(
                    "--fetch-refspecs",
                    action="store_true",
                    default=None,
                    help="add the state's refspec to the remote's fetch refspecs, so a plain git fetch brings"
                    " the state too (git config --get-all remote.<remote>.fetch shows it)",
                ),
                opt(
                    "--no-fetch-refspecs",
                    dest="fetch_refspecs",
                    action="store_false",
                    help="do not add them, nor offer to",
                ),
            ),
            opt("--remote", help="the remote to look at (default: the branch's upstream remote, else origin)"),
            opt("--local", action="store_true", help="do not ask the remote whether it already has state"),
        ),
    ),
    Command(
        "status",
        "show the state as it is now, every claim dereferenced",
        "  git continuity status\n  git continuity status -s\n"
        "  git continuity status --json | jq '.claims[] | select(.state != \"verified\")'",
        "git_continuity.commands.status:status",
        (
            JSON,
            opt(
                "-s",
                "--short",
                action="store_true",
                help="about ten lines: the open threads, what is not true now, what is not shared yet",
            ),
        ),
        served=True,
    ),
    Command(
        "objective",
        "set the objective or read how it changed",
        '  git continuity objective set "Ship the login fix" --why "users are locked out"\n'
        "  git continuity objective log",
        subcommands=(
            Command(
                "set",
                "set what this line of work is for, and why",
                '  git continuity objective set "Ship the login fix" --why "users are locked out since 2.3"',
                "git_continuity.commands.objective:set_objective",
                (
                    WROTE,
                    opt("text", help="what this line of work is for"),
                    opt("--why", required=True, help="why the objective is this now (kept in the objective log)"),
                ),
            ),
            Command(
                "log",
                "every objective this stream had: old, new, why, when, who",
                "  git continuity objective log",
                "git_continuity.commands.objective:objective_log",
                (JSON,),
            ),
        ),
        served=True,
    ),
    Command(
        "next",
        "set the next action (print it when no text is given; none set: the first ready thread)",
        '  git continuity next "rebase on origin/main and push again"\n  git continuity next --json\n'
        "  git continuity next --clear",
        "git_continuity.commands.next:next_action",
        (
            opt("text", nargs="?", help="the first thing the next session should do (none: print it)"),
            opt("--clear", action="store_true", help="remove the next action (ready then says what comes first)"),
            JSON,
        ),
        served=True,
    ),
    READY,
    Command(
        "blocker",
        "record what stops progress, and when it is gone",
        '  git continuity blocker add "CI runner is offline"\n  git continuity blocker done b-k7m2qx\n'
        "  git continuity blocker list",
        subcommands=(
            Command(
                "add",
                "record a blocker",
                '  git continuity blocker add "waiting for the API key"\n'
                '  git continuity blocker add "needs the staging database" --thread t-k7m2qx',
                "git_continuity.commands.blocker:add",
                (
                    WROTE,
                    opt("text", help="what stops progress"),
                    opt("--thread", metavar="ID", help="the thread it holds out of the ready queue (default: none)"),
                ),
            ),
            Command(
                "done",
                "mark a blocker as gone",
                "  git continuity blocker done b-k7m2qx",
                "git_continuity.commands.blocker:done",
                (
                    WROTE,
                    opt("blocker_id", metavar="id", help="the blocker, e.g. b-k7m2qx (blocker list shows the ids)"),
                ),
            ),
            Command(
                "list",
                "every blocker: the open ones first, then the done ones",
                "  git continuity blocker list\n  git continuity blocker list --json",
                "git_continuity.commands.blocker:list_blockers",
                (JSON,),
            ),
        ),
        served=True,
    ),
    Command(
        "claim",
        "record statements with handles that re-derive them",
        '  git continuity claim add "the fix is pushed" --check pushed:HEAD@origin/main\n'
        "  git continuity claim list --state contradicted\n"
        "  git continuity claim show c-k7m2qx",
        subcommands=(
            Command(
                "add",
                "record a claim; without --check it is prose, shown but never trusted",
                '  git continuity claim add "v1.2 is tagged" --check tag:v1.2\n'
                '  git continuity claim add "config moved" --check file:conf/app.toml@HEAD',
                "git_continuity.commands.claim:add",
                (
                    WROTE,
                    opt("text", help="the statement, as the next session should read it"),
                    opt(
                        "--check",
                        action=Once,
                        metavar="HANDLE",
                        help="how to re-derive it, e.g. pushed:HEAD@origin/main; one per claim"
                        " (a thread takes several: thread add TITLE --check A --check B)",
                    ),
                    opt("--thread", metavar="ID", help="make it one of this thread's acceptance checks"),
                ),
                epilog=HANDLES,
            ),
            Command(
                "retract",
                "withdraw a claim that no longer matters; the journal keeps what it said and why",
                '  git continuity claim retract c-k7m2qx --why "superseded by the rebased fix (c-5qh5qd)"',
                "git_continuity.commands.claim:retract",
                (
                    WROTE,
                    opt("claim_id", metavar="id", help="the claim, e.g. c-k7m2qx (claim list shows the ids)"),
                    opt("--why", required=True, help="why it is withdrawn (kept in the journal)"),
                ),
            ),
            Command(
                "show",
                "one claim: what it says, its state now, and every piece of evidence recorded for it",
                "  git continuity claim show c-k7m2qx\n  git continuity claim show c-k7m2qx --json",
                "git_continuity.commands.claim:show",
                (opt("claim_id", metavar="id", help="the claim, e.g. c-k7m2qx (claim list shows the ids)"), JSON),
            ),
            Command(
                "list",
                "every claim with its state now",
                "  git continuity claim list --json",
                "git_continuity.commands.claim:list_claims",
                (
                    opt(
                        "--state",
                        dest="states",
                        action="append",
                        choices=["verified", "contradicted", "unknown", "unchecked", "stale", "prose"],
                        metavar="STATE",
                        help="only claims in this state: verified, contradicted, unknown, unchecked, stale or prose"
                        " (repeatable)",
                    ),
                    JSON,
                ),
            ),
        ),
        served=True,
    ),
    THREAD,
    Command(
        "check",
        "the gate: the state is well-formed; with --closing, every open thread verifies now (exit 1 if not); "
        "it writes nothing",
        "  git continuity check --closing          # what an agent's stop hook runs\n"
        "  git continuity check --closing --json",
        "git_continuity.commands.check:check",
        (opt("--closing", action="store_true", help="every open thread's checks must verify now"), ONLINE, JSON),
        served=True,
    ),
    Command(
        "verify",
        "dereference claims now and record the evidence; exit 1 unless all verify",
        "  git continuity verify\n  git continuity verify c-k7m2qx --online",
        "git_continuity.commands.verify:verify_claims",
        (
            opt("ids", nargs="*", metavar="ID", help="claims to verify (default: all)"),
            opt(
                "--online",
                action="store_true",
                help="ask remotes themselves, not remote-tracking refs, and ask forges and CI servers",
            ),
            opt("--timeout", type=float, metavar="SECONDS", help="per network request (default 10)"),
            JSON,
        ),
        served=True,
    ),
    Command(
        "progress",
        "per thread: attempts over time, when what it fails changed, budget spent, stalled or not",
        "  git continuity progress\n  git continuity progress t-k7m2qx --json\n"
        "  git continuity progress --html progress.html",
        "git_continuity.commands.progress:progress",
        (
            opt("thread_id", nargs="?", metavar="THREAD", help="one thread (default: every thread not done)"),
            (JSON, opt("--html", metavar="FILE", help="write one self-contained HTML page: threads along time")),
        ),
        epilog="An attempt is one dereference of a thread's checks that ended not verified (verify,\n"
        "check --closing, an agent's Stop gate, a refused thread close). A thread makes progress when\n"
        "what it fails changes; it is stalled when that stayed the same for N attempts over M sessions\n"
        "(.continuity.yaml stalled: {attempts: 3, sessions: 2}).",
        served=True,
    ),
    Command(
        "journal",
        "append to the journal, or read it",
        '  git continuity journal add "tried X: fails on Y, switching to Z"\n  git continuity journal -n 20',
        "git_continuity.commands.journal:show",
        (
            opt(
                "-n",
                type=int,
                dest="count",
                default=20,
                action=Latest,
                help="how many of the latest live entries (default 20; faded ones are left out and counted)",
            ),
            opt(
                "--all",
                dest="count",
                action="store_const",
                const=None,
                help="every entry, those whose lifespan passed too (marked faded)",
            ),
            JSON,
        ),
        subcommands=(
            Command(
                "add",
                "append an entry: what was done, learned, tried",
                '  git continuity journal add "login test passes locally; CI not run yet"\n'
                '  git continuity journal add --kind decision "tokens live in the keyring, never in files"',
                "git_continuity.commands.journal:add",
                (
                    WROTE,
                    opt("text", help="the entry: what was done, learned or tried"),
                    opt(
                        "--kind",
                        choices=("decision", "finding", "note"),  # model.JOURNAL_KINDS (the parser imports no model)
                        default="note",
                        help="how long it stays live (policy lifespans): decision never fades, finding after 30 "
                        "days, note after 7 (default note)",
                    ),
                ),
            ),
        ),
        served=True,
    ),
    Command(
        "log",
        "the history of the state ref: one line per change",
        "  git continuity log -n 10",
        "git_continuity.commands.log:log",
        (opt("-n", type=int, dest="count", help="how many changes (default: all)"), JSON),
        served=True,
    ),
    Command(
        "edit",
        "edit the packet (objective, next action, blockers) in $EDITOR; validated before it is kept",
        "  GIT_EDITOR=nano git continuity edit",
        "git_continuity.commands.edit:edit",
        (opt("--discard", action="store_true", help="drop the edit kept from an earlier refused attempt"),),
    ),
    Command(
        "conflict",
        "values a merge of two clones' state did not keep: list them, dismiss them once looked at",
        "  git continuity conflict list\n  git continuity conflict dismiss x-k7m2qx",
        subcommands=(
            Command(
                "list",
                "every conflict with the value kept and the other one",
                "  git continuity conflict list",
                "git_continuity.commands.conflict:list_conflicts",
                (JSON,),
            ),
            Command(
                "dismiss",
                "delete conflict records once looked at",
                "  git continuity conflict dismiss x-k7m2qx",
                "git_continuity.commands.conflict:dismiss",
                (opt("ids", nargs="+", metavar="ID", help="the conflicts, e.g. x-k7m2qx (conflict list shows them)"),),
            ),
        ),
    ),
)


# -- the rest ----------------------------------------------------------------------------------

AROUND: tuple[Command, ...] = (
    Command(
        "ci",
        "run a command on the committed tree and record the result on the commit's note",
        "  git continuity ci run -- pytest -q\n"
        "  git continuity ci run --name lint -- ruff check .\n"
        '  git continuity claim add "tests pass" --check ci:HEAD',
        subcommands=(
            Command(
                "run",
                "run COMMAND (no shell) in the work tree's top folder; record success or failure on HEAD",
                "  git continuity ci run -- pytest -q\n  git continuity ci run -- sh -c 'make && make test'",
                "git_continuity.commands.ci:run",
                (
                    opt(
                        "--name", help="what the result is called (default: the command); ci:HEAD#NAME checks it alone"
                    ),
                    opt(
                        "command",
                        nargs=argparse.REMAINDER,
                        action=AfterDashes,
                        metavar="-- COMMAND",
                        help="the command and its arguments",
                    ),
                ),
                stream=False,
            ),
        ),
    ),
    Command(
        "show",
        "what the continuity notes say about a commit: why it exists, what was verified on it",
        "  git continuity show HEAD\n  git log --notes=continuity   # the same notes in git's own log",
        "git_continuity.commands.show:show",
        (opt("rev", nargs="?", default="HEAD", help="the commit (default: HEAD)"), JSON),
        stream=False,
        served=True,
    ),
    Command(
        "hooks",
        "install or remove plain git hooks (place and closure guards, provenance notes, push guard, rewrites)",
        "  git continuity hooks install\n  git continuity hooks uninstall",
        subcommands=(
            Command(
                "install",
                "install the hooks (respects core.hooksPath; chains to existing hooks)",
                "  git continuity hooks install",
                "git_continuity.commands.hooks:install",
                (opt("--force", action="store_true", help="install even into a hooks folder inside the work tree"),),
                stream=False,
            ),
            Command(
                "uninstall",
                "remove the hooks and restore what they chained to",
                "  git continuity hooks uninstall",
                "git_continuity.commands.hooks:uninstall",
                stream=False,
            ),
        ),
    ),
    Command(
        "trust",
        "approve exact commands that cmd: checks may run, and the keys and team whose state is trusted (at a terminal)",
        "  git continuity trust allow 'python -m pytest -q'\n  git continuity trust list",
        subcommands=(
            Command(
                "allow",
                "approve one exact command here (never synced)",
                "  git continuity trust allow 'python -m pytest -q'",
                "git_continuity.commands.trust:allow",
                (opt("command", metavar="COMMAND", help="the command exactly as the cmd: handle names it"),),
                stream=False,
            ),
            Command(
                "revoke",
                "withdraw an approval",
                "  git continuity trust revoke 'python -m pytest -q'",
                "git_continuity.commands.trust:revoke",
                (opt("command", metavar="COMMAND", help="the command exactly as it was approved (trust list)"),),
                stream=False,
            ),
            Command(
                "list",
                "the commands approved here",
                "  git continuity trust list --json",
                "git_continuity.commands.trust:list_trusted",
                (JSON,),
                stream=False,
            ),
            Command(
                "signer",
                "the keys whose signatures on state commits are trusted here (kept in your config folder)",
                "  git continuity trust signer list\n"
                "  git continuity trust signer add bea@example.com 'ssh-ed25519 AAAA…'",
                subcommands=(
                    Command(
                        "add",
                        "trust a teammate's SSH signing key for state commits read here",
                        "  git continuity trust signer add bea@example.com 'ssh-ed25519 AAAA…'\n"
                        "  git continuity trust signer add bea@example.com ~/bea.pub",
                        "git_continuity.commands.trust:signer_add",
                        (
                            opt("principal", metavar="EMAIL", help="who signs with it (as git names a signer)"),
                            opt("key", metavar="KEY", help="the public key ('ssh-ed25519 AAAA…') or its .pub file"),
                        ),
                        stream=False,
                    ),
                    Command(
                        "list",
                        "the trusted keys, yours marked",
                        "  git continuity trust signer list --json",
                        "git_continuity.commands.trust:signer_list",
                        (JSON,),
                        stream=False,
                    ),
                    Command(
                        "remove",
                        "stop trusting a key, or every key trusted for an e-mail address",
                        "  git continuity trust signer remove 'ssh-ed25519 AAAA…'\n"
                        "  git continuity trust signer remove bea@example.com",
                        "git_continuity.commands.trust:signer_remove",
                        (
                            opt(
                                "key",
                                metavar="KEY|EMAIL",
                                help="the public key as trust signer list shows it, or an e-mail",
                            ),
                        ),
                        stream=False,
                    ),
                ),
            ),
            Command(
                "team",
                "the team's signing keys, committed in .continuity.yaml (signers:): each key, trusted here or not",
                "  git continuity trust team\n  git continuity trust team join\n  git continuity trust team accept",
                "git_continuity.commands.trust:team_list",
                (JSON,),
                stream=False,
                subcommands=(
                    Command(
                        "join",
                        "put your signing key on the team's list in .continuity.yaml, for you to commit and push",
                        "  git continuity trust team join && git commit -m 'Join the signers' .continuity.yaml",
                        "git_continuity.commands.trust:team_join",
                        stream=False,
                    ),
                    Command(
                        "accept",
                        "trust every key on the team's list at HEAD (at a terminal), recording the version accepted",
                        "  git continuity trust team accept",
                        "git_continuity.commands.trust:team_accept",
                        stream=False,
                    ),
                ),
            ),
        ),
    ),
    Command(
        "orient",
        "start a session: every load-bearing claim dereferenced, then a brief with what is true now on top",
        "  git continuity orient                      # the first call of a session\n"
        "  git continuity orient --max-tokens 2000    # cut by priority: truth first, history last\n"
        "  git continuity orient --json",
        "git_continuity.commands.orient:orient",
        (
            opt("--max-tokens", type=int, metavar="N", help="keep the brief under N tokens, by priority"),
            ONLINE,
            JSON,
        ),
        epilog="The brief puts first what must not be acted on (contradicted or stale claims, with what was\n"
        "observed), then the objective, next action, blockers, open threads, verified and unconfirmed\n"
        "claims, the work tree, what changed since the last handoff, and the journal. Tokens are\n"
        "estimated as UTF-8 bytes / 3, rounded up. It starts this work tree's session (or continues\n"
        "the open one); GIT_CONTINUITY_SESSION and GIT_CONTINUITY_AGENT override it. First it lists\n"
        "every remote (git ls-remote), fetches those where something moved, and asks the forge again,\n"
        "within a second (continuity.freshLook, in seconds; 0 turns it off), and says what it could\n"
        "not reach.\n"
        "Exit 1 when this clone has no state for the stream (the brief says how to fetch it), 2 when\n"
        "the state is malformed (the brief names each problem).",
        served=True,
    ),
    Command(
        "handoff",
        "end the session: record a handoff packet and a session entry in the journal",
        "  git continuity handoff\n"
        '  git continuity handoff --note "the flaky test is test_login_redirect; do not retry it"',
        "git_continuity.commands.handoff:handoff",
        (opt("--note", metavar="TEXT", help="words for the next session, kept in the journal entry"), JSON),
        epilog="The packet: the objective (and its latest change, with why), what this session did (commits\n"
        "on each branch it touched, claims added, threads moved), the work tree (branch, HEAD,\n"
        "uncommitted changes, stashes), open threads, blockers and the next action. It needs an\n"
        "objective (exit 2 otherwise). The next session reads it with git continuity orient.",
        served=True,
    ),
    Command(
        "agent",
        "wire orient, handoff and the closure gate into a coding agent's hooks",
        "  git continuity agent install claude     # .claude/settings.json\n"
        "  git continuity agent install codex      # .codex/hooks.json and an AGENTS.md block\n"
        "  git continuity agent install gemini     # .gemini/settings.json\n"
        "  git continuity agent uninstall claude",
        subcommands=(
            Command(
                "install",
                "merge the hooks into the agent's project configuration (idempotent; the rest is kept as it is)",
                "  git continuity agent install claude\n  git continuity agent install codex --mcp",
                "git_continuity.commands.agent:install",
                (
                    opt("agent", choices=["claude", "codex", "gemini"], help="which coding agent"),
                    opt(
                        "--mcp",
                        action="store_true",
                        help="register git continuity mcp too (.mcp.json, .codex/config.toml, .gemini/settings.json)",
                    ),
                ),
                stream=False,
            ),
            Command(
                "uninstall",
                "remove exactly what install added",
                "  git continuity agent uninstall codex",
                "git_continuity.commands.agent:uninstall",
                (opt("agent", choices=["claude", "codex", "gemini"], help="which coding agent"),),
                stream=False,
            ),
            Command(
                "status",
                "which agents have the hooks here, whether each would run (and is trusted), when each last ran",
                "  git continuity agent status\n  git continuity agent status --json",
                "git_continuity.commands.agent:status",
                (JSON,),
                stream=False,
            ),
        ),
    ),
    Command(
        "uninstall",
        "take out of this clone what git-continuity put there; the state itself only with --state",
        "  git continuity uninstall\n  git continuity uninstall --state --json",
        "git_continuity.commands.uninstall:uninstall",
        (
            opt(
                "--state",
                action="store_true",
                help="remove the state too (refs/continuity/*, the commit notes); a remote's copy is never touched",
            ),
            JSON,
        ),
        stream=False,
        epilog="Removed: git's hooks (husky's lines too), what agent install wrote, the fetch refspecs and\n"
        "continuity.* settings of this clone's config, the fetched copies of remotes' state, .git/continuity/.\n"
        "Kept, and said: the state (unless --state), your keys, the program itself (pip uninstall).",
    ),
    Command(
        "mcp",
        "serve the commands as MCP tools on stdin and stdout, for agents that speak MCP",
        "  git continuity mcp                 # the repository the client's roots lie in\n"
        "  git continuity mcp --repo ~/src/app",
        "git_continuity.mcp.server:serve",
        (opt("--repo", metavar="PATH", help="the repository (default: the one the client's MCP roots lie in)"),),
        repo=False,
        epilog="Needs the MCP SDK (the mcp extra; agent install --mcp says how to add it to this copy).\n"
        "Register it with git continuity agent install claude|codex|gemini --mcp.",
    ),
    Command(
        "pull",
        "fetch every stream's state and the commit notes from a remote and merge them in",
        "  git continuity pull\n  git continuity pull upstream",
        "git_continuity.commands.sync:pull",
        (REMOTE, JSON),
        stream=False,
        served=True,
    ),
    Command(
        "push",
        "publish every stream's state and the commit notes (merging first if the remote moved)",
        "  git continuity push",
        "git_continuity.commands.sync:push",
        (REMOTE, JSON),
        stream=False,
        served=True,
    ),
    Command(
        "sync",
        "pull, then push: both sides end with the same state",
        "  git continuity sync",
        "git_continuity.commands.sync:sync",
        (REMOTE, JSON),
        stream=False,
        served=True,
    ),
    Command(
        "doctor",
        "read everything the state depends on; say what is wrong and how to repair it (exit 1 if anything)",
        "  git continuity doctor\n  git continuity doctor --fix   # then git continuity push, for a remote's state",
        "git_continuity.commands.doctor:doctor",
        (
            opt("--fix", action="store_true", help="repair what is safe: nothing is deleted, nothing forced"),
            opt(
                "--accept",
                metavar="COMMIT",
                help="take a refused state as it is at COMMIT, after a look (re-anchors the witness; journaled)",
            ),
            JSON,
        ),
        stream=False,
        epilog="Reads the state refs of every stream, the notes ref, the remote-tracking refs, lock files, the\n"
        "remotes' refspecs, the installed git hooks and the Python they run, the coding agents' hooks,\n"
        "the trust store and the policy file. --fix removes a lock whose writer is gone, puts a broken\n"
        "ref back on the last commit its reflog names, adds the state's fetch refspec, and moves\n"
        "malformed files into .continuity/quarantine/ by a new state commit (a remote's state too:\n"
        "git continuity push then repairs the remote as a fast-forward).",
    ),
    Command(
        "quarantine",
        "what doctor --fix moved aside: list it, read it, put it back once well-formed, or drop it",
        "  git continuity quarantine list\n  git continuity quarantine show claims/c-k7m2qx.json\n"
        "  git continuity quarantine drop --all",
        subcommands=(
            Command(
                "list",
                "the files in the quarantine, and where each was",
                "  git continuity quarantine list --json",
                "git_continuity.commands.quarantine:list_kept",
                (JSON,),
            ),
            Command(
                "show",
                "one file as it was moved aside",
                "  git continuity quarantine show claims/c-k7m2qx.json",
                "git_continuity.commands.quarantine:show",
                (opt("name", metavar="NAME", help="its name under quarantine/ (quarantine list names them)"),),
            ),
            Command(
                "restore",
                "put files back where they were, when they are well-formed entries again",
                "  git continuity quarantine restore claims/c-k7m2qx.json",
                "git_continuity.commands.quarantine:restore",
                (
                    opt(
                        "names", nargs="*", metavar="NAME", help="files under quarantine/ (quarantine list names them)"
                    ),
                    opt("--all", dest="every", action="store_true", help="every file in the quarantine"),
                ),
            ),
            Command(
                "drop",
                "remove files from the quarantine for good (the journal records what was dropped)",
                "  git continuity quarantine drop claims/c-k7m2qx.json\n  git continuity quarantine drop --all",
                "git_continuity.commands.quarantine:drop",
                (
                    opt(
                        "names", nargs="*", metavar="NAME", help="files under quarantine/ (quarantine list names them)"
                    ),
                    opt("--all", dest="every", action="store_true", help="every file in the quarantine"),
                ),
            ),
        ),
    ),
    Command(
        "plugins",
        "list verifier plugins, their versions and handle schemes",
        "  git continuity plugins --json",
        "git_continuity.commands.plugins:plugins",
        (JSON,),
        repo=False,
        stream=False,
    ),
    Command(
        "demo",
        "a guided tour in a throwaway repository with a real bare remote",
        "  git continuity demo                     # the short story\n"
        "  git continuity demo --full              # every chapter, in order\n"
        "  git continuity demo --chapter progress  # one chapter\n"
        "  git continuity demo --keep              # leave the folder to explore",
        "git_continuity.commands.demo:demo",
        (
            opt("--keep", action="store_true", help="keep the demo folder and print where it is"),
            (
                opt("--full", action="store_true", help="tell every chapter, in order"),
                opt("--chapter", metavar="NAME", help="tell one chapter (listed below)"),
            ),
        ),
        repo=False,
        stream=False,
        # The names are the tour's (commands/demo/__init__.py CHAPTERS); tests/test_demo.py checks they agree.
        epilog="chapters (--full tells them all, in this order):\n"
        "  story     the short story: a rejected push, a false close refused, a second clone\n"
        "  sync      two clones change the state at once; sync merges it field by field\n"
        "  agents    Claude Code's hooks: the brief at session start, the closure gate at Stop\n"
        "  ci        a CI result on the commit's note; a thread waiting on a PR's review, then merged\n"
        "  handoff   a session hands off; the next, on a fresh clone, orients on what is true\n"
        "  progress  the same failure in three sessions: no progress, the budget spent, the stop-loss\n"
        "  planning  --after, priorities and the ready queue; two agents claiming work on two clones\n"
        "  places    a donor worktree: orient names the home, and a commit there is refused\n"
        "  siblings  one thread with checks in three repositories, each dereferenced in its own\n"
        "  doctor    a malformed state pushed with plain git: pull refuses it, doctor repairs it",
    ),
    Command(
        "help",
        "print a command's help, as git continuity COMMAND -h does",
        "  git continuity help\n  git continuity help thread close",
        "git_continuity.cli.main:show_help",
        (opt("words", nargs="*", metavar="COMMAND", help="the command (and its action), e.g. thread close"),),
        repo=False,
        stream=False,
    ),
    Command(
        # What hooks/* and git-continuity-hook run: the same parser, error handler and exit
        # codes as every other command. The hooks read GIT_CONTINUITY_STREAM themselves.
        "hook-impl",
        "run one git hook or coding agent hook (what the installed hooks call)",
        "  git continuity hook-impl commit-msg .git/COMMIT_EDITMSG\n"
        "  git continuity hook-impl agent claude session-start",
        "git_continuity.hooks.guards:hook_impl",
        (
            opt("hook", metavar="HOOK"),
            opt("args", nargs=argparse.REMAINDER, metavar="ARGS"),
        ),
        repo=False,
        stream=False,
        hidden=True,
    ),
)

# The order the help lists them in (one string reads better here than 29).
ORDER = (  # noqa: SIM905
    "init status objective next blocker claim thread ready check verify progress ci journal show hooks trust orient"
    " handoff place repo agent mcp log edit pull push sync doctor conflict quarantine plugins demo uninstall help"
    " hook-impl"
).split()
COMMANDS: tuple[Command, ...] = tuple(sorted((*STATE, *PLACES, *AROUND), key=lambda c: ORDER.index(c.name)))
