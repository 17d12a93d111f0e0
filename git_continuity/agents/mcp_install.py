"""``agent install claude|codex|gemini --mcp``: register `git continuity mcp` in the agent's
project configuration (Claude Code: ``.mcp.json``; Codex: ``mcp_servers`` in
``.codex/config.toml``; Gemini CLI: ``mcpServers`` in ``.gemini/settings.json``)
and take it out again, giving back the file's exact bytes.

What install did (the file it created, the member or block it added) is remembered in
``.git/continuity/agents/mcp-<agent>.json``, beside the hooks' record, so uninstall undoes
exactly that and nothing of the user's."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity.agents import jsonedit
from git_continuity.errors import UserError
from git_continuity.repo import Repo

NAME = "git-continuity"
FILES = {"claude": ".mcp.json", "codex": ".codex/config.toml", "gemini": ".gemini/settings.json"}


def server(agent: str) -> dict[str, Any]:
    """The registration: the hooks' launcher (launcher.sh) in its ``mcp`` mode, by a path the
    agent gives at run time, so the file a team commits names no path of one machine. Claude
    Code expands ${VAR:-default} in .mcp.json; Codex and Gemini CLI start the server in the
    session's folder, which may be below the top."""
    from git_continuity.agents.table import TARGETS, launcher

    where = launcher(TARGETS[agent])
    if agent == "claude":
        top = "${CLAUDE_PROJECT_DIR:-.}"
        return {"command": "sh", "args": [f"{top}/{where}", "mcp", "--repo", top]}
    return {"command": "sh", "args": ["-c", f'cd "$(git rev-parse --show-toplevel)" && exec sh {where} mcp --repo .']}


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

    try:
        missing = importlib.util.find_spec("mcp") is None  # found, not imported: the SDK is slow to import
    except ImportError:
        missing = True
    if missing:
        raise UserError(
            "the MCP server needs the MCP SDK, which is not installed beside this git-continuity "
            f"({sys.executable}); nothing was written. Install it with: {install_advice()}"
        )


def check(top: Path, agent: str) -> None:
    """Refuse, before anything is written, a file the registration could not be merged into."""
    where = FILES[agent]
    old = _read(top / where)
    if agent == "codex":
        _check_toml(old, where)
    else:
        _json_install(old, where, server(agent))


def _record_path(repo: Repo, agent: str) -> Path:
    return repo.local_dir / "agents" / f"mcp-{agent}.json"


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text; nothing was written") from None


def _toml_block(agent: str) -> str:
    entry = server(agent)
    args = json.dumps(entry["args"], ensure_ascii=False)
    return f"\n[mcp_servers.{NAME}]\ncommand = {json.dumps(entry['command'])}\nargs = {args}\n"


def _check_toml(text: str | None, where: str) -> None:
    """Refuse to append to a config.toml that is not TOML (Codex would not read either part)."""
    if text is not None:
        import tomllib

        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            said = f"{where}: not valid TOML ({error}); mend it, then run this again; nothing was written"
            raise UserError(said) from None


def _json_install(text: str | None, where: str, entry: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The .mcp.json text with our server added, and what was created; None when it is there."""
    text = "{}\n" if text is None else text
    try:
        value, top = jsonedit.parse(text, where)
        if not isinstance(value, dict):
            raise jsonedit.JSONEditError(f"{where}: the top level is not an object")
        unit = jsonedit.indent_unit(text, top)
        servers = top.get("mcpServers")
        if servers is None:
            return jsonedit.insert_member(text, top, "mcpServers", {NAME: entry}, unit), ["mcpServers"]
        if not isinstance(value["mcpServers"], dict):
            raise jsonedit.JSONEditError(f"{where}: mcpServers is not an object")
        if NAME in value["mcpServers"]:
            return None
        return jsonedit.insert_member(text, servers, NAME, entry, unit), [NAME]
    except jsonedit.JSONEditError as error:
        raise UserError(f"{error}; nothing was written") from None


def install(repo: Repo, top: Path, agent: str) -> None:
    """Register the server for ``agent`` in the project at ``top``; print what was done."""
    where = FILES[agent]
    path = top / where
    old = _read(path)
    if agent in ("claude", "gemini"):
        merged = _json_install(old, where, server(agent))
        if merged is None:
            print(f"{where}: the {NAME} MCP server is registered already (left as it is)")
            return
        new, created = merged
    else:
        _check_toml(old, where)
        if old is not None and f"[mcp_servers.{NAME}]" in old:
            print(f"{where}: the {NAME} MCP server is registered already (left as it is)")
            return
        block = _toml_block(agent)
        # A blank line before our table, none at the top of a new file.
        block = ("" if old.endswith("\n") else "\n") + block if old else block.lstrip("\n")
        new, created = (old or "") + block, [block]
    made_dir = not path.parent.exists()
    atomic.write(path, new)
    record = {"existed": old is not None, "created": created, "dir": made_dir}
    atomic.write(_record_path(repo, agent), json.dumps(record, indent=2) + "\n")
    from git_continuity.agents.table import TARGETS, launcher

    said = f"{launcher(TARGETS[agent])} mcp: the git-continuity beside the hooks' git-continuity-hook"
    print(f"{where}: the {NAME} MCP server ({said})")


def uninstall(repo: Repo, top: Path, agent: str) -> list[str]:
    """Take out what install added; the file comes back as it was, byte for byte. What was
    done, a line each."""
    record_path = _record_path(repo, agent)
    try:
        record: dict[str, Any] = json.loads(record_path.read_text())
    except (OSError, ValueError):
        return []
    where = FILES[agent]
    path = top / where
    text = _read(path)
    said = []
    if text is not None:
        if agent in ("claude", "gemini"):
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
            said.append(f"{where}: removed (install had created it)")
        else:
            atomic.write(path, text)
            said.append(f"{where}: removed the {NAME} MCP server")
    record_path.unlink(missing_ok=True)
    return said


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
