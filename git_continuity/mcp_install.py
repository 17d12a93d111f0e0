"""``agent install claude|codex --mcp``: register `git continuity mcp` in the agent's project
configuration (Claude Code: ``.mcp.json``; Codex: ``mcp_servers`` in ``.codex/config.toml``)
and take it out again, giving back the file's exact bytes.

What install did (the file it created, the member or block it added) is remembered in
``.git/continuity/agents/mcp-<agent>.json``, beside the hooks' record, so uninstall undoes
exactly that and nothing of the user's."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from git_continuity import atomic, jsonedit
from git_continuity.errors import UserError
from git_continuity.repo import Repo

NAME = "git-continuity"
FILES = {"claude": ".mcp.json", "codex": ".codex/config.toml"}
# Claude Code expands ${VAR:-default} in .mcp.json; Codex starts the server in the project.
REPO_ARG = {"claude": "${CLAUDE_PROJECT_DIR:-.}", "codex": "."}


def _program() -> str:
    """The git-continuity to run: the one on PATH, else the one beside this Python."""
    found = shutil.which("git-continuity")
    if found:
        return str(Path(found).absolute())
    beside = Path(sys.executable).parent / "git-continuity"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else "git-continuity"


def _requirement() -> str:
    """The SDK as this copy's metadata requires it for its ``mcp`` extra."""
    from importlib import metadata

    try:
        required = metadata.distribution("git-continuity").requires or []
    except metadata.PackageNotFoundError:
        required = []
    for line in required:
        spec, _, marker = line.partition(";")
        if "extra" in marker and "mcp" in marker.split("==")[-1] and spec.strip().startswith("mcp"):
            return spec.strip().replace(" ", "")
    return "mcp"


def install_advice() -> str:
    """How to add the MCP SDK to this copy, the way this copy was installed (PEP 610's
    direct_url.json: an editable checkout, a folder, a wheel file, a git URL), else the SDK
    itself into this Python: never a bare index name, which this project has not published."""
    from importlib import metadata
    from urllib.parse import unquote, urlparse

    python = sys.executable
    if "/pipx/venvs/" in sys.prefix.replace("\\", "/"):
        return f"pipx inject git-continuity '{_requirement()}'"
    try:
        text = metadata.distribution("git-continuity").read_text("direct_url.json")
        direct: dict[str, Any] = json.loads(text) if text else {}
    except (metadata.PackageNotFoundError, ValueError):
        direct = {}
    url = str(direct.get("url") or "")
    if url.startswith("file://") and "vcs_info" not in direct:
        path = unquote(urlparse(url).path)
        editable = "-e " if (direct.get("dir_info") or {}).get("editable") else ""
        if path.endswith(".whl"):
            return f"{python} -m pip install 'git-continuity[mcp] @ {url}'"
        return f"{python} -m pip install {editable}'{path}[mcp]'"
    vcs = direct.get("vcs_info")
    if url and isinstance(vcs, dict):
        at = f"@{vcs['commit_id']}" if vcs.get("commit_id") else ""
        return f"{python} -m pip install 'git-continuity[mcp] @ {vcs.get('vcs', 'git')}+{url}{at}'"
    return f"{python} -m pip install '{_requirement()}'"


def check_sdk() -> None:
    """Refuse, with the way to install it, when the MCP SDK is not importable here."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise UserError(
            "the MCP server needs the MCP SDK, which is not installed beside this git-continuity "
            f"({sys.executable}); nothing was written. Install it with: {install_advice()}"
        )


def _record_path(repo: Repo, agent: str) -> Path:
    return repo.local_dir / "agents" / f"mcp-{agent}.json"


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; nothing was written") from None


def _toml_block(program: str, agent: str) -> str:
    args = json.dumps(["mcp", "--repo", REPO_ARG[agent]])
    return f"\n[mcp_servers.{NAME}]\ncommand = {json.dumps(program)}\nargs = {args}\n"


def _json_install(text: str | None, where: str, server: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The .mcp.json text with our server added, and what was created; None when it is there."""
    text = "{}\n" if text is None else text
    try:
        value, top = jsonedit.parse(text, where)
        if not isinstance(value, dict):
            raise jsonedit.JSONEditError(f"{where}: the top level is not an object")
        unit = jsonedit.indent_unit(text, top)
        servers = top.get("mcpServers")
        if servers is None:
            return jsonedit.insert_member(text, top, "mcpServers", {NAME: server}, unit), ["mcpServers"]
        if not isinstance(value["mcpServers"], dict):
            raise jsonedit.JSONEditError(f"{where}: mcpServers is not an object")
        if NAME in value["mcpServers"]:
            return None
        return jsonedit.insert_member(text, servers, NAME, server, unit), [NAME]
    except jsonedit.JSONEditError as error:
        raise UserError(f"{error}; nothing was written") from None


def install(repo: Repo, top: Path, agent: str) -> None:
    """Register the server for ``agent`` in the project at ``top``; print what was done."""
    where = FILES[agent]
    path = top / where
    old = _read(path)
    program = _program()
    if agent == "claude":
        server = {"command": program, "args": ["mcp", "--repo", REPO_ARG[agent]]}
        merged = _json_install(old, where, server)
        if merged is None:
            print(f"{where}: the {NAME} MCP server is registered already (left as it is)")
            return
        new, created = merged
    else:
        if old is not None and f"[mcp_servers.{NAME}]" in old:
            print(f"{where}: the {NAME} MCP server is registered already (left as it is)")
            return
        block = _toml_block(program, agent)
        # A blank line before our table, none at the top of a new file.
        block = ("" if old.endswith("\n") else "\n") + block if old else block.lstrip("\n")
        new, created = (old or "") + block, [block]
    made_dir = not path.parent.exists()
    atomic.write(path, new)
    record = {"existed": old is not None, "created": created, "dir": made_dir}
    atomic.write(_record_path(repo, agent), json.dumps(record, indent=2) + "\n")
    print(f"{where}: the {NAME} MCP server ({program} mcp --repo {REPO_ARG[agent]})")


def uninstall(repo: Repo, top: Path, agent: str) -> None:
    """Take out what install added; the file comes back as it was, byte for byte."""
    record_path = _record_path(repo, agent)
    try:
        record: dict[str, Any] = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return
    where = FILES[agent]
    path = top / where
    text = _read(path)
    if text is not None:
        if agent == "claude":
            text = _json_uninstall(text, where, record["created"])
        else:
            (block,) = record["created"]
            at = text.rfind(block)
            if at >= 0:
                text = text[:at] + text[at + len(block) :]
        if not record["existed"] and text.strip() in ("", "{}"):
            path.unlink()
            if record.get("dir"):
                with contextlib.suppress(OSError):  # only when empty: the hooks may live there too
                    path.parent.rmdir()
            print(f"{where}: removed (install had created it)")
        else:
            atomic.write(path, text)
            print(f"{where}: removed the {NAME} MCP server")
    record_path.unlink(missing_ok=True)


def _json_uninstall(text: str, where: str, created: list[str]) -> str:
    try:
        value, top = jsonedit.parse(text, where)
    except jsonedit.JSONEditError as error:
        raise UserError(f"{error}; nothing was written") from None
    servers = top.get("mcpServers")
    if not isinstance(value, dict) or servers is None or NAME not in servers.keys:
        return text
    if created == ["mcpServers"] and servers.keys == [NAME]:
        return jsonedit.remove(text, top, top.keys.index("mcpServers"))
    return jsonedit.remove(text, servers, servers.keys.index(NAME))
