"""``git continuity mcp``: a stdio MCP server whose tools are the commands (mcp_tools.TOOLS).

The repository is the one named by --repo, else the one the client's roots (MCP roots) lie
in; never the folder the server happened to be started in. Each call opens it anew, runs in
a thread of its own (so calls overlap; the store's compare-and-swap keeps concurrent writes
whole) and answers a refusal as a tool error carrying the command line's message."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from git_continuity import __version__
from git_continuity.errors import UserError
from git_continuity.gate.stop import for_agent
from git_continuity.repo import Repo
from git_continuity.store.integrity import Refused

INSTRUCTIONS = "Call orient first; record facts with claim_add and a handle; call check before saying done."


def _sdk() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError:
        from git_continuity.agents import mcp_install

        raise UserError(f"git continuity mcp needs the MCP SDK: {mcp_install.install_advice()}") from None


def _open(path: Path) -> Repo:
    from git_continuity import repo as git

    return git.open_repo(path)


def from_roots(uris: list[str]) -> Repo:
    """The one repository the client's roots lie in; refused when none or several do."""
    folders = [Path(unquote(urlparse(uri).path)) for uri in uris if urlparse(uri).scheme == "file"]
    if not folders:
        raise UserError(
            f"the client's roots name no local folder ({', '.join(uris) or 'none'}): start the server with --repo PATH"
        )
    found: dict[Path, Repo] = {}
    for folder in folders:
        try:
            repo = _open(folder)
        except UserError:
            continue
        found.setdefault(repo.work_dir or repo.common_dir, repo)
    if not found:
        raise UserError(f"not a git repository: none of the client's roots is in one ({', '.join(map(str, folders))})")
    if len(found) > 1:
        raise UserError(
            f"the client's roots lie in {len(found)} repositories ({', '.join(map(str, found))}): "
            "start the server with --repo PATH to say which"
        )
    return next(iter(found.values()))


def serve(*, stream: str, repo: str | None) -> int:
    """Serve MCP on stdin and stdout until the client closes stdin."""
    _sdk()
    import anyio

    fixed = Path(repo).resolve() if repo else None
    if fixed is not None:
        # Refused now (exit 2), not at a client's first tool call: a server that starts and
        # says nothing looks like one that works.
        if not fixed.is_dir():
            raise UserError(f"--repo {repo}: no such folder; name the repository's folder (or leave --repo out)")
        _open(fixed)
    anyio.run(functools.partial(_serve, stream, fixed))
    return 0


async def _serve(stream: str, fixed: Path | None) -> None:
    import anyio
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPError

    from git_continuity.cli import main as cli
    from git_continuity.display import clean, clean_strings  # text from state, escaped as on the CLI
    from git_continuity.mcp import tools as mcp_tools

    listed = types.ListToolsResult(
        tools=[
            types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema())
            for tool in mcp_tools.TOOLS
        ]
    )

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> Any:
        return listed

    async def repository(ctx: ServerRequestContext[Any]) -> Repo:
        if fixed is not None:
            return _open(fixed)
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.roots is None:
            raise UserError(
                "the client shares no roots (MCP roots), so which repository is unknown: "
                "start the server with --repo PATH"
            )
        roots = await ctx.session.send_request(types.ListRootsRequest(), types.ListRootsResult)
        return from_roots([str(root.uri) for root in roots.roots])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> Any:
        tool = mcp_tools.BY_NAME.get(params.name)
        if tool is None:
            known = ", ".join(mcp_tools.BY_NAME)
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r} (tools: {known})")
        arguments = dict(params.arguments or {})
        try:
            mcp_tools.check_arguments(tool, arguments)
            repo = await repository(ctx)
            run = functools.partial(mcp_tools.call, repo, stream, tool, arguments)
            answer = await anyio.to_thread.run_sync(run)
        except UserError as error:
            message = await anyio.to_thread.run_sync(cli.explained, error)
            if isinstance(error, Refused):  # the fixes are the user's: an agent is told who decides
                message = for_agent(message)
            return types.CallToolResult(content=[types.TextContent(type="text", text=clean(message))], is_error=True)
        # A refusal (thread_close of a thread that does not verify, check with work open) is a
        # tool error carrying what the command said; a read's exit 1 (a claim contradicted) is an answer.
        refused = answer.code != 0 and tool.refuses
        document = None if answer.document is None else clean_strings(answer.document)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=clean(answer.text))],
            structured_content=document,
            is_error=refused,
        )

    server: Server[Any] = Server(
        "git-continuity",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
