"""git continuity mcp, driven by the MCP SDK's own client over stdio, on real repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import BIN, NOT_APPROVED, approve, at_a_terminal, cont, flat, git, state_refs
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import FileUrl

from git_continuity.store import schema

Session = Callable[[ClientSession], Awaitable[Any]]


def serve(cwd: Path, work: Session, *args: str, roots: list[Path] | None = None, errlog: Path | None = None) -> Any:
    """Start `git-continuity mcp ARGS` in ``cwd``, connect the SDK's client (sharing ``roots``
    as MCP roots when given), run ``work`` on the session and return what it returns."""

    async def listed(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(path.as_uri())) for path in roots or []])

    async def main() -> Any:
        params = StdioServerParameters(
            command=str(BIN / "git-continuity"), args=["mcp", *args], cwd=cwd, env=dict(os.environ)
        )
        callback = listed if roots is not None else None
        with open(errlog or os.devnull, "w") as log, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the SDK warns that roots are deprecated in its newest protocol
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write, list_roots_callback=callback) as session,
            ):
                await session.initialize()
                return await work(session)

    return anyio.run(main)


def call(cwd: Path, name: str, arguments: dict[str, Any] | None = None, *args: str, **kw: Any) -> types.CallToolResult:
    async def work(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool(name, arguments or {})

    result: types.CallToolResult = serve(cwd, work, *args, **kw)
    return result


def text(result: types.CallToolResult) -> str:
    (content,) = result.content
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.fixture
def started(repo: Path) -> Path:
    assert cont(repo, "init", "--local").code == 0
    assert cont(repo, "objective", "set", "ship the login fix", "--why", "users are locked out").code == 0
    return repo


def test_tools_list_names_every_tool_with_its_arguments(started: Path) -> None:
    async def work(session: ClientSession) -> list[types.Tool]:
        return (await session.list_tools()).tools

    tools = serve(started, work, "--repo", str(started))
    assert [t.name for t in tools] == [
        "orient",
        "status",
        "claim_add",
        "claim_retract",
        "verify",
        "thread_add",
        "ready",
        "thread_claim",
        "thread_cancel",
        "thread_set",
        "thread_close",
        "thread_list",
        "progress",
        "journal_add",
        "next",
        "blocker_add",
        "blocker_done",
        "handoff",
        "check",
    ]
    by_name = {t.name: t for t in tools}
    assert by_name["claim_add"].input_schema["required"] == ["text"]
    assert by_name["status"].description == "The whole state now, every claim re-derived from its handle."


def calls(cwd: Path, steps: list[tuple[str, dict[str, Any]]], *args: str, **kw: Any) -> list[types.CallToolResult]:
    """Several calls, one after the other, in one session with one server."""

    async def work(session: ClientSession) -> list[types.CallToolResult]:
        return [await session.call_tool(name, arguments) for name, arguments in steps]

    results: list[types.CallToolResult] = serve(cwd, work, *args, **kw)
    return results


def ok(result: types.CallToolResult, schema_name: str | None = None) -> str:
    """The text of a call that succeeded; its document checked against its schema."""
    assert not result.is_error, text(result)
    if schema_name is None:
        assert result.structured_content is None
    else:
        assert result.structured_content is not None
        schema.check_output(schema_name, result.structured_content)
    return text(result)


def state(repo: Path) -> dict[str, Any]:
    done = cont(repo, "status", "--json")
    document: dict[str, Any] = json.loads(done.out)
    return document


def test_each_tool_runs_its_command_and_answers_with_its_json(started: Path) -> None:
    head = git(started, "rev-parse", "HEAD")
    first = calls(
        started,
        [
            ("orient", {}),
            ("claim_add", {"text": "the first commit exists", "check": "commit:HEAD"}),
            ("thread_add", {"title": "ship it", "check": "file:README"}),
            ("journal_add", {"text": "tried the quick fix: it breaks login"}),
            ("next", {"text": "rebase on main"}),
            ("next", {}),
            ("blocker_add", {"text": "CI is offline"}),
        ],
        "--repo",
        str(started),
    )
    orient, claim, thread, journal, next_set, next_read, blocker = first
    assert ok(orient, "orient").startswith("# git-continuity brief: stream main\n")
    document = state(started)
    c, check = document["claims"]
    assert (c["text"], check["thread"]) == ("the first commit exists", document["threads"][0]["id"])
    (t,) = document["threads"]
    (b,) = document["blockers"]
    assert ok(claim) == (
        f"Recorded claim {c['id']}: the first commit exists\n  handle  commit:{head[:12]}…  (as written: commit:HEAD)\n"
        f"  now     verified: commit {head[:7]} exists here"
    )
    assert ok(thread).startswith(f"Thread {t['id']} opened: ship it\n  check file:README\n")
    assert ok(journal) == f"Journal entry {document['journal'][0]['id']} recorded."
    assert ok(next_set, "next") == "next: rebase on main"
    assert next_set.structured_content == {"stream": "main", "next_action": "rebase on main"}
    assert next_read.structured_content == {"stream": "main", "next_action": "rebase on main"}
    assert ok(blocker) == f"Blocker {b['id']}: CI is offline\n  (git continuity blocker done {b['id']} when it is gone)"
    assert document["journal"][0]["text"] == "tried the quick fix: it breaks login"

    second = calls(
        started,
        [
            ("status", {}),
            ("verify", {"claim": c["id"]}),
            ("thread_list", {"status": "open"}),
            ("progress", {"thread": t["id"]}),
            ("thread_set", {"thread": t["id"], "status": "waiting"}),
            ("thread_set", {"thread": t["id"], "status": "open"}),
            ("thread_close", {"thread": t["id"]}),
            ("check", {}),
            ("blocker_done", {"blocker": b["id"]}),
            ("claim_retract", {"claim": c["id"], "why": "not needed"}),
            ("handoff", {"note": "done for today"}),
        ],
        "--repo",
        str(started),
    )
    status, verified, listed, progressed, parked, reopened, closed, checked, unblocked, retracted, handoff = second
    assert ok(status, "status") == (
        "stream main: objective ship the login fix; claims: 2 verified; 1 open threads; 1 blockers;"
        " next: rebase on main"
    )
    assert ok(verified, "verify") == f"{c['id']} verified: commit {head[:7]} exists here"
    assert ok(listed, "thread-list") == f"{t['id']} open: ship it"
    assert ok(progressed, "progress") == f"{t['id']} open: 0 attempts, not stalled"
    assert ok(parked) == f"Thread {t['id']} is waiting."
    assert ok(reopened) == f"Thread {t['id']} is open."
    assert ok(closed) == (
        f'Thread {t["id"]} "ship it" is done: every check verified now; the evidence is recorded.\n'
        f"  verified  {check['id']}  file:README\n            README exists in HEAD ({head[:7]})"
    )
    assert ok(checked, "check") == "No open threads: none waits to be closed."
    assert ok(unblocked) == f"Blocker {b['id']} is done."
    assert ok(retracted) == f"Claim {c['id']} retracted; the journal keeps what it said and why."
    assert ok(handoff, "handoff-output").startswith("# Handoff h-")
    after = state(started)
    assert [x["id"] for x in after["claims"]] == [x["id"] for x in document["claims"] if x["id"] != c["id"]]
    assert [x["status"] for x in after["threads"]] == ["done"]
    assert after["blockers"] == []


def test_one_vocabulary_of_arguments_each_described_in_one_line(started: Path) -> None:
    async def work(session: ClientSession) -> list[types.Tool]:
        return (await session.list_tools()).tools

    seen: dict[str, dict[str, Any]] = {}
    for tool in serve(started, work, "--repo", str(started)):
        for name, shape in tool.input_schema["properties"].items():
            said = shape["description"]
            assert said and "\n" not in said, (tool.name, name)
            if name in ("text", "title", "note"):
                continue
            # The same name means the same thing everywhere (a list where a tool takes several).
            plain = shape.get("anyOf", [shape])[0]
            assert (
                seen.setdefault(name, {k: v for k, v in plain.items() if k != "description"})
                == {k: v for k, v in plain.items() if k != "description"}
                or name == "status"
            ), (tool.name, name)
    assert {"thread", "check", "claim", "blocker"} <= set(seen)
    assert not {"id", "ids", "checks"} & set(seen)


def test_a_refusal_is_a_tool_error_with_the_commands_words(started: Path) -> None:
    made = cont(started, "thread", "add", "Release v1.2", "--check", "tag:v1.2").out
    thread = made.split()[1]
    closing, checking = calls(started, [("thread_close", {"thread": thread}), ("check", {})], "--repo", str(started))
    said = cont(started, "thread", "close", thread)
    assert said.code == 1
    assert closing.is_error and text(closing) == said.out.strip()
    assert checking.is_error and text(checking).startswith("Not done: 1 open thread")


def test_a_state_rewritten_with_plumbing_is_a_tool_error_that_leaves_the_fixes_to_the_user(started: Path) -> None:
    forged = git(started, "commit-tree", "refs/continuity/main^{tree}", "-p", "refs/continuity/main", "-m", "done")
    git(started, "update-ref", "refs/continuity/main", forged)
    (oriented,) = calls(started, [("orient", {})], "--repo", str(started))
    assert oriented.is_error and oriented.structured_content is None
    said = text(oriented)
    assert said.startswith("the state on refs/continuity/main is not what was written here; nothing was read:\n")
    # Nor is an agent told it anywhere else; a person, at a terminal, is.
    assert "doctor --accept" not in said and "doctor --accept" not in cont(started, "status").err
    assert "git continuity doctor --accept" in flat(at_a_terminal(started, "status").out)
    assert "continuity.sign" not in said  # nor the setting that turns the checks off
    assert said.endswith(
        "What to accept or put back is the user's decision (git continuity doctor shows them the state and the"
        " fixes): do not accept, restore or rewrite the state yourself."
    )


def test_text_from_the_state_is_escaped_as_on_the_command_line(started: Path) -> None:
    assert cont(started, "next", "ring \x07 the \x1b[31mbell").code == 0
    (read,) = calls(started, [("next", {})], "--repo", str(started))
    assert text(read) == "next: ring \\x07 the \\x1b[31mbell"
    assert read.structured_content == {"stream": "main", "next_action": "ring \\x07 the \\x1b[31mbell"}
    assert cont(started, "next").out == "ring \\x07 the \\x1b[31mbell\n"


def refused(result: types.CallToolResult) -> str:
    assert result.is_error and result.structured_content is None
    return text(result)


def test_bad_input_is_a_tool_error_with_the_reason_nothing_written_and_the_server_goes_on(started: Path) -> None:
    before = state_refs(started)

    async def work(session: ClientSession) -> list[Any]:
        answers: list[Any] = []
        try:
            await session.call_tool("claim_delete", {})
        except MCPError as error:
            answers.append(error.error.message)
        calls: list[tuple[str, dict[str, Any]]] = [
            ("claim_add", {}),
            ("claim_add", {"text": 42}),
            ("claim_add", {"text": "x", "force": True}),
            ("claim_add", {"text": "pushed", "check": "pushed:HEAD"}),
            ("claim_retract", {"claim": "c-zzzzzz", "why": "gone"}),
            ("thread_set", {"thread": "t-zzzzzz", "status": "finished"}),
            ("status", {}),
        ]
        for name, arguments in calls:
            answers.append(await session.call_tool(name, arguments))
        return answers

    unknown, missing, typed, extra, handle, no_claim, bad_status, alive = serve(started, work, "--repo", str(started))
    assert unknown == (
        "unknown tool 'claim_delete' (tools: orient, status, claim_add, claim_retract, verify, thread_add, "
        "ready, thread_claim, thread_cancel, thread_set, thread_close, thread_list, progress, journal_add, next, "
        "blocker_add, blocker_done, handoff, check)"
    )
    assert refused(missing) == "claim_add: bad arguments:\n  arguments: 'text' is a required property"
    assert refused(typed) == "claim_add: bad arguments:\n  text: 42 is not of type 'string'"
    assert refused(extra) == (
        "claim_add: bad arguments:\n  arguments: Additional properties are not allowed ('force' was unexpected)"
    )
    assert refused(handle) == cont(started, "claim", "add", "pushed", "--check", "pushed:HEAD").err.removeprefix(
        "git-continuity: error: "
    ).rstrip("\n")
    assert refused(no_claim) == ("no claim 'c-zzzzzz' in stream 'main' (git continuity claim list shows the ids)")
    assert refused(bad_status) == (
        "thread_set: bad arguments:\n  status: 'finished' is not one of ['open', 'watching', 'blocked', 'waiting']"
    )
    ok(alive, "status")
    assert state_refs(started) == before


def test_the_repository_comes_from_the_roots_or_repo_never_from_where_the_server_runs(
    started: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    git(other, "commit", "-q", "--allow-empty", "-m", "first")
    assert cont(other, "init", "--local").code == 0
    assert cont(other, "objective", "set", "the other work", "--why", "a test").code == 0
    plain = tmp_path / "plain"
    plain.mkdir()

    def objective(result: types.CallToolResult) -> str:
        ok(result, "status")
        assert result.structured_content is not None
        said: str = result.structured_content["objective"]["text"]
        return said

    assert objective(call(other, "status", roots=[started])) == "ship the login fix"
    assert objective(call(other, "status", {}, "--repo", str(started), roots=[other])) == "ship the login fix"
    assert refused(call(other, "status")) == (
        "the client shares no roots (MCP roots), so which repository is unknown: start the server with --repo PATH"
    )
    assert refused(call(other, "status", roots=[plain])) == (
        f"not a git repository: none of the client's roots is in one ({plain})"
    )
    assert refused(call(other, "status", roots=[started, other])) == (
        f"the client's roots lie in 2 repositories ({started}, {other}): start the server with --repo PATH to say which"
    )
    # A --repo that is no repository stops the server at once: test_contract_edges.


def test_the_tool_list_fits_its_budget_as_the_benchmark_measures_it() -> None:
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parents[1] / "benchmarks" / "mcp_tools_size.py")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("tools/list: 19 tools, ")
    assert int(first.split(", ")[1].removesuffix(" bytes")) <= 4 * 1500


def test_a_cmd_check_runs_only_once_approved_here(started: Path) -> None:
    command = "touch ran"
    assert cont(started, "claim", "add", "tests pass", "--check", f"cmd:{command}").code == 0
    (claim,) = state(started)["claims"]
    (untrusted,) = calls(started, [("verify", {})], "--repo", str(started))
    assert ok(untrusted, "verify") == (f"{claim['id']} unknown: {NOT_APPROVED}\n(exit 1)")
    assert not (started / "ran").exists()
    approve(started, command)
    (trusted,) = calls(started, [("verify", {})], "--repo", str(started))
    assert ok(trusted, "verify").startswith(f"{claim['id']} verified: exit 0 in ")  # then its time and tree
    assert (started / "ran").exists()


def test_concurrent_calls_all_land(started: Path) -> None:
    async def work(session: ClientSession) -> list[types.CallToolResult]:
        results: list[types.CallToolResult] = []

        async def one(n: int) -> None:
            results.append(await session.call_tool("claim_add", {"text": f"claim {n}"}))

        async with anyio.create_task_group() as group:
            for n in range(8):
                group.start_soon(one, n)
        return results

    results = serve(started, work, "--repo", str(started))
    assert [r.is_error for r in results] == [False] * 8
    assert sorted(c["text"] for c in state(started)["claims"]) == [f"claim {n}" for n in range(8)]


def test_a_client_that_closes_stdin_mid_call_leaves_a_whole_state(started: Path) -> None:
    command = "sleep 1"
    assert cont(started, "claim", "add", "slow", "--check", f"cmd:{command}").code == 0
    approve(started, command)
    before = git(started, "rev-parse", "refs/continuity/main")
    server = subprocess.Popen(
        [str(BIN / "git-continuity"), "mcp", "--repo", str(started)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None
    for message in [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "verify", "arguments": {}}},
    ]:
        server.stdin.write(json.dumps(message) + "\n")
    server.stdin.flush()
    time.sleep(0.5)
    server.stdin.close()
    server.wait(timeout=60)
    assert server.stdout is not None and server.stderr is not None
    out, err = server.stdout.read(), server.stderr.read()
    assert (server.returncode, "Traceback" in err) == (0, False), err
    after = git(started, "rev-parse", "refs/continuity/main")
    assert cont(started, "check").code == 0
    # The call under way finishes its write whole (a thread is not stopped half-way); its
    # answer has no one to go to. The state is one commit further and well-formed.
    assert out.count("\n") == 1 and '"id":2' not in out
    assert git(started, "rev-parse", f"{after}^") == before
    assert git(started, "log", "-1", "--format=%s", after) == "verify: 1 claim (1 verified)"
