"""The planning rows of the command table: the ready queue, a thread's --after and --priority,
cancelling a thread and claiming one (the rules are in store/planning.py)."""

from __future__ import annotations

from git_continuity.cli.spec import JSON, WROTE, Command, opt

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
