"""The commands that read and write a stream's state, as rows of the command table."""

from __future__ import annotations

from git_continuity.cli.spec import HANDLES, JSON, ONLINE, WROTE, Command, Latest, Once, opt
from git_continuity.cli.table_plan import READY
from git_continuity.cli.table_threads import THREAD

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
