from __future__ import annotations

from git_continuity import render, trust
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.model import now, stamp
from git_continuity.repo import Repo


def allow(repo: Repo, *, command: str) -> int:
    """Approve one exact command for cmd: checks on this machine."""
    command = command.strip()
    if not command:
        raise UserError("trust allow needs the exact command, e.g. git continuity trust allow 'python -m pytest -q'")
    entries = trust.approved(repo)
    if command in entries:
        print(f"Already approved here: {command}")
        return 0
    entries[command] = {"command": command, "approved_at": stamp(now()), "by": git.identity(repo)}
    trust.save(repo, entries)
    print(
        f"Approved on this machine: {command}\n  (kept in {trust.path(repo)}, never synced)\n"
        "Claims that check it show their last result until git continuity verify runs it."
    )
    return 0


def revoke(repo: Repo, *, command: str) -> int:
    entries = trust.approved(repo)
    if command not in entries:
        raise UserError(f"not approved here: {command!r} (git continuity trust list shows what is)")
    del entries[command]
    trust.save(repo, entries)
    print(f"No longer approved: {command}")
    return 0


def list_trusted(repo: Repo, *, as_json: bool) -> int:
    entries = sorted(trust.approved(repo).values(), key=lambda e: e["command"])
    if as_json:
        render.emit_json(
            "trust-list",
            {"commands": [{"command": e["command"], "approved_at": e["approved_at"], "by": e["by"]} for e in entries]},
        )
    elif not entries:
        print(
            "No command is approved on this machine. "
            "cmd: checks stay unknown until: git continuity trust allow 'COMMAND'"
        )
    else:
        for e in entries:
            print(f"{e['command']}\n  approved {e['approved_at']} by {e['by']}")
    return 0
