"""The MCP server's tools: each one a row naming the command it runs, as the command line
does (cli_table), so a tool call goes through the same function, the same defaults and the
same refusals as `git continuity <words>`. No MCP type is imported here; mcp/server.py
speaks the protocol.

A tool whose command has --json answers with that command's JSON document (valid against
schema/<name>.schema.json) and a short text; one whose command only writes answers with the
lines the command printed. The descriptions are what a model pays for on every turn: one
line each, saying when to reach for the tool (benchmarks/mcp_tools_size.py counts them)."""

from __future__ import annotations

import importlib
import io
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from git_continuity.cli.spec import WROTE_DEST, Command
from git_continuity.errors import UserError
from git_continuity.repo import Repo

STATUSES = ["open", "watching", "blocked", "waiting", "done", "cancelled"]


def _text(said: str) -> dict[str, Any]:
    return {"type": "string", "description": said}


def _one_or_more(item: dict[str, Any], said: str) -> dict[str, Any]:
    """One value or a list of them (a model writes either); a string is taken as a list of one."""
    return {"anyOf": [item, {"type": "array", "items": item}], "description": said}


# One vocabulary across the tools: each argument has one name and one meaning everywhere (a
# thread's id is always ``thread``, a handle always ``check``), described in one line.
_THREAD = _text("thread id")
_CHECK = _text("handle, e.g. pushed:HEAD@origin/main, file:PATH, cmd:COMMAND")
_TEXT = _text("the text")


@dataclass(frozen=True)
class Tool:
    """One tool: the command words it runs, its description, its arguments (JSON Schema
    properties, each renamed to the function's keyword by ``keywords``), the keywords it
    always passes, the schema its JSON document follows (None: the command prints), whether
    an exit code other than 0 is a refusal (a tool error) rather than an answer, and the
    arguments that take one value or a list (``lists``: the function wants a list)."""

    name: str
    words: tuple[str, ...]
    description: str
    properties: dict[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    keywords: dict[str, str] = field(default_factory=dict)
    fixed: dict[str, Any] = field(default_factory=dict)
    schema: str | None = None
    refuses: bool = True
    lists: tuple[str, ...] = ()

    def input_schema(self) -> dict[str, Any]:
        shape: dict[str, Any] = {"type": "object", "properties": self.properties, "additionalProperties": False}
        if self.required:
            shape["required"] = list(self.required)
        return shape


TOOLS: tuple[Tool, ...] = (
    Tool(
        "orient",
        ("orient",),
        "Call first in a session: what is true now (contradicted claims first), objective, next action, open work.",
        {"max_tokens": {"type": "integer", "minimum": 1, "description": "size limit"}},
        schema="orient",
        refuses=False,
    ),
    Tool(
        "status",
        ("status",),
        "The whole state now, every claim re-derived from its handle.",
        schema="status",
        refuses=False,
    ),
    Tool(
        "claim_add",
        ("claim", "add"),
        "Record a fact with a handle that re-checks it.",
        {"text": _TEXT, "check": _CHECK, "thread": _text("thread it checks")},
        ("text",),
    ),
    Tool(
        "claim_retract",
        ("claim", "retract"),
        "Withdraw a claim that no longer matters; the journal keeps it and why.",
        {"claim": _text("claim id"), "why": _text("why")},
        ("claim", "why"),
        {"claim": "claim_id"},
    ),
    Tool(
        "verify",
        ("verify",),
        "Re-check claims now (all by default) and record the evidence.",
        {
            "claim": _one_or_more({"type": "string"}, "claim ids (default: all)"),
            "online": {"type": "boolean", "description": "ask forges and CI"},
        },
        keywords={"claim": "ids"},
        fixed={"timeout": None},
        schema="verify",
        refuses=False,
        lists=("claim",),
    ),
    Tool(
        "thread_add",
        ("thread", "add"),
        "Open a piece of work; each check must verify before it can close.",
        {"title": _TEXT, "check": _one_or_more({"type": "string"}, _CHECK["description"])},
        ("title",),
        {"check": "checks"},
        lists=("check",),
    ),
    Tool(
        "ready",
        ("ready",),
        "Open threads to take up now, by priority.",
        schema="ready",
    ),
    Tool(
        "thread_claim",
        ("thread", "claim"),
        "Claim a thread for this session.",
        {"thread": _THREAD, "steal": {"type": "boolean", "description": "take it from the session holding it"}},
        ("thread",),
        {"thread": "thread_id"},
    ),
    Tool(
        "thread_cancel",
        ("thread", "cancel"),
        "End a thread unfinished, saying why.",
        {"thread": _THREAD, "why": _text("why it ends unfinished")},
        ("thread", "why"),
        {"thread": "thread_id"},
    ),
    Tool(
        "thread_set",
        ("thread", "set"),
        "Park or reopen a thread; only thread_close makes it done.",
        {
            "thread": _THREAD,
            "status": {"enum": ["open", "watching", "blocked", "waiting"], "description": "new status"},
        },
        ("thread", "status"),
        {"thread": "thread_id"},
    ),
    Tool(
        "thread_close",
        ("thread", "close"),
        "Close a thread if every check verifies now, else say which do not.",
        {"thread": _THREAD},
        ("thread",),
        {"thread": "thread_id"},
        {"online": False},
    ),
    Tool(
        "thread_list",
        ("thread", "list"),
        "Threads with their status and checks verified now.",
        {"status": _one_or_more({"enum": STATUSES}, "filter")},
        keywords={"status": "statuses"},
        schema="thread-list",
        refuses=False,
        lists=("status",),
    ),
    Tool(
        "progress",
        ("progress",),
        "Is a thread getting anywhere: attempts, whether what fails changed, budget spent, stalled.",
        {"thread": _THREAD},
        keywords={"thread": "thread_id"},
        schema="progress",
        refuses=False,
    ),
    Tool(
        "journal_add",
        ("journal", "add"),
        "Note what was done, learned or tried (failed approaches too), for the next session.",
        {"text": _TEXT, "kind": {"enum": ["decision", "finding", "note"], "description": "default note"}},
        ("text",),
    ),
    Tool(
        "next",
        ("next",),
        "Set the first thing the next session should do; without text, read it.",
        {"text": _TEXT},
        schema="next",
    ),
    Tool("blocker_add", ("blocker", "add"), "Record what stops progress.", {"text": _TEXT}, ("text",)),
    Tool(
        "blocker_done",
        ("blocker", "done"),
        "Mark a blocker gone.",
        {"blocker": _text("blocker id")},
        ("blocker",),
        {"blocker": "blocker_id"},
    ),
    Tool(
        "handoff",
        ("handoff",),
        "End the session: record what it did and what is open for the next one.",
        {"note": _text("for the next session")},
        schema="handoff-output",
    ),
    Tool(
        "check",
        ("check",),
        "Before saying done: every open thread must verify now; closes those that do.",
        fixed={"closing": True, "online": False},
        schema="check",
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


@dataclass(frozen=True)
class Answer:
    """What a tool call gives back: a short text, the command's JSON document (None when the
    command only prints) and the command's exit code."""

    text: str
    document: dict[str, Any] | None
    code: int


class _Streams(io.TextIOBase):
    """sys.stdout while the server runs: what a command prints in a tool call's thread goes
    to that call's buffer; anything else to the stream it replaced. Calls run concurrently,
    each in a thread of its own, so contextlib.redirect_stdout (one global) would mix them."""

    def __init__(self, fallback: TextIO) -> None:
        self.fallback = fallback
        self.local = threading.local()

    def write(self, text: str) -> int:
        buffer: io.StringIO | None = getattr(self.local, "buffer", None)
        return (buffer or self.fallback).write(text)

    def flush(self) -> None:
        if getattr(self.local, "buffer", None) is None:
            self.fallback.flush()


_lock = threading.Lock()


def _captured(run: Callable[[], int]) -> tuple[int, str]:
    with _lock:
        streams = sys.stdout if isinstance(sys.stdout, _Streams) else None
        if streams is None:
            streams = sys.stdout = _Streams(sys.stdout)
    streams.local.buffer = io.StringIO()
    try:
        code = run()
        return code, streams.local.buffer.getvalue()
    finally:
        streams.local.buffer = None


def _command(words: tuple[str, ...]) -> Command:
    from git_continuity.cli.table import COMMANDS

    found: Command | None = None
    commands = COMMANDS
    for word in words:
        found = next(c for c in commands if c.name == word)
        commands = found.subcommands
    assert found is not None and found.target is not None
    return found


def _defaults(command: Command) -> dict[str, Any]:
    """The command's keywords as the command line gives them when no option is typed: its
    parser's own defaults, so a tool and the CLI cannot drift apart."""
    from git_continuity.cli import main as cli

    parser = cli.command_parser(command, "git continuity")
    _, dests = parser.get_default(cli.LEAF)
    # A positional of nargs="*" left out parses as [], not as its default (argparse's rule).
    many = {a.dest for a in parser._actions if not a.option_strings and a.nargs == "*" and a.default is None}
    # A write's --json is the command line's (render/wrote.py); a tool answers with the command's text.
    return {dest: [] if dest in many else parser.get_default(dest) for dest in dests if dest != WROTE_DEST}


def call(repo: Repo, stream: str, tool: Tool, arguments: dict[str, Any]) -> Answer:
    """Run the tool's command on ``repo`` with ``arguments`` (already checked against the
    tool's input schema). A refusal raises UserError, as on the command line."""
    if tool.name == "orient":
        from git_continuity.sessions import orient as orientation

        built = orientation.build(repo, stream=stream, max_tokens=arguments.get("max_tokens"), online=False)
        return Answer(built.text, built.document, built.code)
    if tool.name == "handoff":
        from git_continuity.sessions import handoff as handoffs

        made = handoffs.make(repo, stream=stream, note=arguments.get("note"))
        return Answer(made.text, made.document, 0)
    command = _command(tool.words)
    options = _defaults(command)
    options.update(tool.fixed)
    if tool.schema is not None:
        options["as_json"] = True
    for key, value in arguments.items():
        options[tool.keywords.get(key, key)] = [value] if key in tool.lists and isinstance(value, str) else value
    if command.stream:
        options["stream"] = stream
    module, _, name = (command.target or "").partition(":")
    function = getattr(importlib.import_module(module), name)
    if tool.schema is None:
        code, printed = _captured(lambda: int(function(repo, **options)))
        return Answer(printed.strip(), None, code)
    from git_continuity.render import text as render

    with render.taken() as documents:  # the command's own document, not its printed text
        code = int(function(repo, **options))
    (document,) = documents
    from git_continuity.mcp import summary as mcp_summary

    return Answer(mcp_summary.summary(tool.name, document, code), document, code)


def check_arguments(tool: Tool, arguments: dict[str, Any]) -> None:
    """Refuse arguments that do not match the tool's input schema, naming the argument."""
    from jsonschema import Draft202012Validator

    errors = sorted(Draft202012Validator(tool.input_schema()).iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        lines = [f"{'.'.join(str(p) for p in e.path) or 'arguments'}: {e.message}" for e in errors]
        raise UserError(f"{tool.name}: bad arguments:\n  " + "\n  ".join(lines))
