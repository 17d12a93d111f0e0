from __future__ import annotations

from typing import Any

from git_continuity import constants
from git_continuity import repo as git
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import notes as commit_notes


def _describe(record: dict[str, Any]) -> str:
    kind = record.get("kind")
    if kind == "provenance":
        parts = [f"stream {record.get('stream')}", f"state {str(record.get('state'))[:7]}"]
        if record.get("objective"):
            parts.append(f"objective {record['objective']}")
        if record.get("threads"):
            parts.append("threads " + ", ".join(record["threads"]))
        for key in ("session", "agent", "host", "at"):
            if record.get(key):
                parts.append(f"{key} {record[key]}")
        return "made while " + "; ".join(parts)
    if kind == "claim":
        return (
            f'named by claim {record.get("claim")} "{record.get("text")}" ({record.get("handle")}), {record.get("at")}'
        )
    if kind == "rewritten":
        return f"rewritten from {str(record.get('from'))[:7]} by {record.get('by')}"
    rest = ", ".join(f"{k} {v}" for k, v in sorted(record.items()) if k != "kind")
    return rest


def show(repo: Repo, *, rev: str, as_json: bool) -> int:
    """What the notes say about one commit: why it exists and what was verified on it."""
    commit = git.resolve_commit(repo, rev)
    records = commit_notes.records(repo, commit)
    info = git.commit_info(repo, commit)
    summary = info.message.splitlines()[0] if info.message else ""
    if as_json:
        render.emit_json(
            "show", {"commit": commit, "summary": summary, "notes_ref": constants.NOTES_REF, "records": records}
        )
        return 0
    print(f"commit {commit}  {summary}")
    if not records:
        print(
            f"  no continuity notes ({constants.NOTES_REF}); "
            "commits get one while a stream is active and the hooks are installed"
        )
    for record in records:
        print(f"  {str(record.get('kind')).ljust(10)}  {_describe(record)}")
    return 0
