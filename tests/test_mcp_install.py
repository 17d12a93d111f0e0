"""agent install claude|codex --mcp registers git continuity mcp; uninstall gives back the
exact bytes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import BIN, cont

PROGRAM = str(BIN / "git-continuity")


def test_claude_gets_an_mcp_json_that_uninstall_removes(repo: Path) -> None:
    done = cont(repo, "agent", "install", "claude", "--mcp")
    assert done.code == 0, done.err
    assert f".mcp.json: the git-continuity MCP server ({PROGRAM} mcp --repo ${{CLAUDE_PROJECT_DIR:-.}})" in done.out
    assert json.loads((repo / ".mcp.json").read_text()) == {
        "mcpServers": {"git-continuity": {"command": PROGRAM, "args": ["mcp", "--repo", "${CLAUDE_PROJECT_DIR:-.}"]}}
    }
    again = cont(repo, "agent", "install", "claude", "--mcp")
    assert ".mcp.json: the git-continuity MCP server is registered already (left as it is)" in again.out
    done = cont(repo, "agent", "uninstall", "claude")
    assert done.code == 0, done.err
    assert ".mcp.json: removed (install had created it)" in done.out
    assert not (repo / ".mcp.json").exists()


@pytest.mark.parametrize(
    "text",
    [
        '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n',
        '{"mcpServers": {"other": {"command": "x"}}}',
        '{\r\n\t"theme": "dark"\r\n}\r\n',
        "{}",
    ],
)
def test_an_mcp_json_of_the_users_comes_back_byte_for_byte(repo: Path, text: str) -> None:
    (repo / ".mcp.json").write_bytes(text.encode())
    assert cont(repo, "agent", "install", "claude", "--mcp").code == 0
    servers = json.loads((repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["git-continuity"]["args"] == ["mcp", "--repo", "${CLAUDE_PROJECT_DIR:-.}"]
    assert cont(repo, "agent", "uninstall", "claude").code == 0
    assert (repo / ".mcp.json").read_bytes() == text.encode()


@pytest.mark.skipif(sys.version_info < (3, 11), reason="reading the TOML back needs tomllib (3.11)")
@pytest.mark.parametrize("text", [None, "", 'model = "o3"\n', 'model = "o3"', '[mcp_servers.other]\ncommand = "x"\n'])
def test_codex_gets_an_mcp_servers_table_and_the_file_comes_back(repo: Path, text: str | None) -> None:
    config = repo / ".codex" / "config.toml"
    if text is not None:
        config.parent.mkdir()
        config.write_bytes(text.encode())
    done = cont(repo, "agent", "install", "codex", "--mcp")
    assert done.code == 0, done.err
    assert f".codex/config.toml: the git-continuity MCP server ({PROGRAM} mcp --repo .)" in done.out
    if sys.version_info >= (3, 11):  # the skipif above; mypy reads the package as 3.10
        import tomllib

        parsed = tomllib.loads(config.read_text())
        assert parsed["mcp_servers"]["git-continuity"] == {"command": PROGRAM, "args": ["mcp", "--repo", "."]}
    assert cont(repo, "agent", "uninstall", "codex").code == 0
    if text is None:
        assert not config.parent.exists()
    else:
        assert config.read_bytes() == text.encode()


def test_without_mcp_nothing_is_registered(repo: Path) -> None:
    assert cont(repo, "agent", "install", "claude").code == 0
    assert not (repo / ".mcp.json").exists()
