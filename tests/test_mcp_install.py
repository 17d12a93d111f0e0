"""agent install claude|codex --mcp registers git continuity mcp; uninstall gives back the
exact bytes."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from conftest import BIN, cont

IN_TOP = 'cd "$(git rev-parse --show-toplevel)" && exec sh {}/hooks/git-continuity-hook mcp --repo .'


def test_claude_gets_an_mcp_json_that_uninstall_removes(repo: Path) -> None:
    done = cont(repo, "agent", "install", "claude", "--mcp")
    assert done.code == 0, done.err
    assert (
        ".mcp.json: the git-continuity MCP server (.claude/hooks/git-continuity-hook mcp: the git-continuity beside "
        "the hooks' git-continuity-hook)\n"
    ) in done.out
    # What a team commits names no path of this machine: the launcher, by the project's path at run time.
    assert json.loads((repo / ".mcp.json").read_text()) == {
        "mcpServers": {
            "git-continuity": {
                "command": "sh",
                "args": [
                    "${CLAUDE_PROJECT_DIR:-.}/.claude/hooks/git-continuity-hook",
                    "mcp",
                    "--repo",
                    "${CLAUDE_PROJECT_DIR:-.}",
                ],
            }
        }
    }
    assert str(BIN) not in (repo / ".mcp.json").read_text()
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
    assert servers["git-continuity"]["args"][1:] == ["mcp", "--repo", "${CLAUDE_PROJECT_DIR:-.}"]
    assert cont(repo, "agent", "uninstall", "claude").code == 0
    assert (repo / ".mcp.json").read_bytes() == text.encode()


@pytest.mark.parametrize("text", [None, "", 'model = "o3"\n', 'model = "o3"', '[mcp_servers.other]\ncommand = "x"\n'])
def test_codex_gets_an_mcp_servers_table_and_the_file_comes_back(repo: Path, text: str | None) -> None:
    config = repo / ".codex" / "config.toml"
    if text is not None:
        config.parent.mkdir()
        config.write_bytes(text.encode())
    done = cont(repo, "agent", "install", "codex", "--mcp")
    assert done.code == 0, done.err
    assert (
        ".codex/config.toml: the git-continuity MCP server (.codex/hooks/git-continuity-hook mcp: the git-continuity "
        "beside the hooks' git-continuity-hook)\n"
    ) in done.out
    parsed = tomllib.loads(config.read_text())
    assert parsed["mcp_servers"]["git-continuity"] == {
        "command": "sh",
        "args": [
            "-c",
            'cd "$(git rev-parse --show-toplevel)" && exec sh .codex/hooks/git-continuity-hook mcp --repo .',
        ],
    }
    assert cont(repo, "agent", "uninstall", "codex").code == 0
    if text is None:
        assert not config.parent.exists()
    else:
        assert config.read_bytes() == text.encode()


def test_without_mcp_nothing_is_registered(repo: Path) -> None:
    assert cont(repo, "agent", "install", "claude").code == 0
    assert not (repo / ".mcp.json").exists()


def test_gemini_gets_mcp_servers_in_its_settings_and_loses_them_again(repo: Path) -> None:
    settings = repo / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(b'{\n  "theme": "GitHub"\n}\n')
    done = cont(repo, "agent", "install", "gemini", "--mcp")
    assert done.code == 0, done.err
    assert json.loads(settings.read_text())["mcpServers"] == {
        "git-continuity": {
            "command": "sh",
            "args": [
                "-c",
                'cd "$(git rev-parse --show-toplevel)" && exec sh .gemini/hooks/git-continuity-hook mcp --repo .',
            ],
        }
    }
    assert cont(repo, "agent", "uninstall", "gemini").code == 0
    assert settings.read_bytes() == b'{\n  "theme": "GitHub"\n}\n'
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_install_mcp_refuses_without_the_sdk_and_says_how_to_add_it(repo: Path, tmp_path: Path) -> None:
    # This Python without the MCP SDK: an import hook that finds no "mcp" (as if the extra was never installed).
    blocker = tmp_path / "no-mcp"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n"
        "class NoMCP:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'mcp' or name.startswith('mcp.'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, NoMCP())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    done = subprocess.run(
        [sys.executable, "-m", "git_continuity", "agent", "install", "claude", "--mcp"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )
    source = Path(__file__).resolve().parents[1]
    # The advice follows how this copy was installed (PEP 610): editable, or from the folder.
    how = json.loads(importlib.metadata.distribution("git-continuity").read_text("direct_url.json") or "{}")
    editable = "-e " if how.get("dir_info", {}).get("editable") else ""
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "git-continuity: error: the MCP server needs the MCP SDK, which is not installed beside this git-continuity "
        f"({sys.executable}); nothing was written. Install it with: {sys.executable} -m pip install {editable}"
        f"'{source}[mcp]'\n"
    )
    assert not (repo / ".claude").exists() and not (repo / ".mcp.json").exists()
    served = subprocess.run(
        [sys.executable, "-m", "git_continuity", "mcp", "--repo", str(repo)],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert (served.returncode, served.stderr) == (
        2,
        f"git-continuity: error: git continuity mcp needs the MCP SDK: {sys.executable} -m pip install {editable}"
        f"'{source}[mcp]'\n",
    )


def test_a_codex_config_that_is_not_toml_is_named_and_left_alone(repo: Path) -> None:
    config = repo / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3\n')
    done = cont(repo, "agent", "install", "codex", "--mcp")
    assert (done.code, done.out) == (2, "")
    assert done.err == (
        "git-continuity: error: .codex/config.toml: not valid TOML (Illegal character '\\n' (at line 1, column 12)); "
        "mend it, then run this again; nothing was written\n"
    )
    assert config.read_text() == 'model = "o3\n'
    assert sorted(p.name for p in config.parent.iterdir()) == ["config.toml"]
