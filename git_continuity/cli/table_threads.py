"""The thread rows of the command table: add, set, cancel, claim, close, reopen, list, show."""

from __future__ import annotations

from git_continuity.cli.spec import JSON, ONLINE, WROTE, Command, Offered, opt
from git_continuity.cli.table_plan import AFTER, CANCEL, CLAIM, PRIORITY

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
