"""The in-session loop notice: ``git-continuity-hook agent <claude|codex> post-tool-use``.

After a shell command fails, the hook fingerprints the command and what it answered
(normalized as an attempt's observation is: clone/noise.py), counts that fingerprint in the
session's record, and from the ``NOTICE_AT``-th time on tells the agent, as additional
context, that running it again will not change the result and it should change its approach.

- Claude Code runs it on ``PostToolUseFailure`` (matcher ``Bash``), whose ``error`` holds the
  exit code and the output (``"Exit code 2\\n…"``); a successful call runs nothing.
- Gemini CLI runs it on ``AfterTool`` (matcher ``run_shell_command``) after every call; the
  result the model reads (``tool_response.llmContent``) holds ``Output: …`` and ``Exit Code: N``.
- Codex runs it on ``PostToolUse`` (matcher ``Bash``) after every call: its ``tool_response``
  is the output alone, and the exit code is read from the session's transcript (the
  ``item_completed`` line of that call id, written before the hook runs). A call whose exit
  code cannot be found there is not counted.

It runs after every tool call, so it costs what a Python start costs and little more
(benchmarks/posttooluse_bench.py): no repository door, no pathlib, the git directory found by
walking up (hook_log.common_dir), the normalizer and the cleaner imported only for a failure,
and the record a small JSON file per agent session under ``.git/continuity/tool-calls/``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import time

from git_continuity import atomic
from git_continuity.agents import hook_log

TYPE_CHECKING = False  # typing itself costs this path milliseconds; mypy reads the name as true
if TYPE_CHECKING:
    from typing import Any

NOTICE_AT = 3  # the same failure this many times in one session: say so
KEPT = 500  # fingerprints kept per session (the oldest go first)
TRANSCRIPT_TAIL = 256 * 1024  # bytes of a Codex transcript searched for a call's exit code
STALE = 2 * 86400  # seconds after which another session's record is removed
QUOTED = 200  # characters of the output quoted back
EVENT = {"claude": "PostToolUseFailure", "codex": "PostToolUse", "gemini": "AfterTool"}
SHELL = {"claude": "Bash", "codex": "Bash", "gemini": "run_shell_command"}  # the shell tool's name
# Its run_shell_command result: "<untrusted_context>\nOutput: …\nExit Code: 2\nProcess Group PGID: …".
_GEMINI_RESULT = re.compile(r"^Output: (.*?)\nExit Code: (\d+)$", re.M | re.S)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")


def _input() -> dict[str, Any]:
    try:
        data = json.loads(sys.stdin.read() or "{}")
    except (ValueError, OSError, AttributeError):
        return {}
    return data if isinstance(data, dict) else {}


def _exit_code(transcript: str, call: str) -> int | None:
    """The exit code Codex recorded for tool call ``call`` in the tail of its transcript."""
    try:
        with open(transcript, "rb") as lines:
            lines.seek(max(0, os.fstat(lines.fileno()).st_size - TRANSCRIPT_TAIL))
            tail = lines.read()
    except (OSError, TypeError, ValueError):
        return None
    needle = json.dumps(call).encode()
    for line in reversed(tail.splitlines()):
        if needle in line and b'"exit_code"' in line:
            try:
                item = json.loads(line)["payload"]["item"]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(item, dict) and item.get("id") == call and isinstance(item.get("exit_code"), int):
                code: int = item["exit_code"]
                return code
    return None


def failure(agent: str, data: dict[str, Any]) -> tuple[str, str] | None:
    """(command, what it answered) of a failed shell command; None for anything else."""
    given = data.get("tool_input")
    command = given.get("command") if isinstance(given, dict) else None
    if data.get("tool_name") != SHELL[agent] or not isinstance(command, str):
        return None
    if agent == "gemini":
        response = data.get("tool_response")
        said = response.get("llmContent") if isinstance(response, dict) else None
        found = _GEMINI_RESULT.search(said) if isinstance(said, str) else None
        if found is None or found.group(2) == "0":
            return None
        return command, f"Exit code {found.group(2)}\n{found.group(1)}"
    if agent == "claude":
        error = data.get("error")
        if data.get("is_interrupt") or not isinstance(error, str):
            return None
        return command, error
    code = _exit_code(str(data.get("transcript_path") or ""), str(data.get("tool_use_id") or ""))
    if not code:
        return None
    response = data.get("tool_response")
    return command, f"Exit code {code}\n{response if isinstance(response, str) else json.dumps(response)}"


def fingerprint(command: str, result: str) -> str:
    """16 hex digits naming one failure of one command: CRC-32 of each, normalized (it only
    tells one session's failures apart, and zlib costs this path less than hashlib's OpenSSL)."""
    import zlib

    from git_continuity.clone.noise import normalize

    return f"{zlib.crc32(normalize(command).encode()):08x}{zlib.crc32(normalize(result).encode()):08x}"


def count(git_dir: str, agent: str, session: str, seen_print: str) -> int:
    """Count one more of fingerprint ``seen_print`` in the session's record; how many now."""
    folder = os.path.join(git_dir, "continuity", "tool-calls")
    record = os.path.join(folder, f"{agent}-{_UNSAFE_NAME.sub('_', session)[:80]}.json")
    counts: dict[str, int] = {}
    try:
        with open(record, encoding="utf-8") as kept:
            found = json.load(kept)
        counts = found if isinstance(found, dict) else {}
    except FileNotFoundError:
        _prune(folder)
    except (OSError, ValueError):
        pass
    seen = (counts.pop(seen_print, 0) if isinstance(counts.get(seen_print, 0), int) else 0) + 1
    counts[seen_print] = seen  # the latest last: the oldest go first when the record is full
    with contextlib.suppress(OSError):
        atomic.write(record, json.dumps(dict(list(counts.items())[-KEPT:])).encode())
    return seen


def _prune(folder: str) -> None:
    """Records of sessions idle for days go (one new session's first failure pays for it)."""
    old = time.time() - STALE
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith(".json") and entry.stat().st_mtime < old:
                os.unlink(entry.path)
    except OSError:
        pass


def _nth(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def notice(command: str, result: str, seen: int) -> str:
    """What the agent is told, its text cleaned as every text shown is (display.py)."""
    from git_continuity.display import clean

    lines = [line.strip() for line in result.strip().splitlines() if line.strip()]
    said = lines[-1] if lines else "(no output)"
    said = said if len(said) <= QUOTED else said[: QUOTED - 1] + "…"
    shown = command if len(command) <= QUOTED else command[: QUOTED - 1] + "…"
    return clean(
        f"git-continuity: this is the {_nth(seen)} time in this session that this command failed "
        f"with the same result:\n  $ {shown}\n  {said}\n"
        "Running it again will not change that. Change your approach: find the cause first (read the "
        "error, the code, the logs), or try a different command or plan. If it cannot be done now, record "
        "why (git continuity journal add TEXT), park the thread, and stop."
    )


def main(agent: str) -> int:
    data = _input()
    git_dir = hook_log.common_dir(str(data.get("cwd") or os.getcwd()))
    if git_dir is None:
        return 0
    failed = failure(agent, data)
    session = str(data.get("session_id") or "")
    seen = count(git_dir, agent, session, fingerprint(*failed)) if failed and session else 0
    if failed is None or seen < NOTICE_AT:
        hook_log.record(git_dir, agent, "post-tool-use", "nothing")
        return 0
    context = {"hookEventName": EVENT[agent], "additionalContext": notice(*failed, seen)}
    sys.stdout.write(json.dumps({"hookSpecificOutput": context}, ensure_ascii=False) + "\n")
    hook_log.record(git_dir, agent, "post-tool-use", "notice")
    return 0
