from __future__ import annotations

import shlex
import subprocess
import time

from git_continuity import __version__
from git_continuity import repo as git
from git_continuity.constants import hostname
from git_continuity.errors import UserError
from git_continuity.model import now, stamp
from git_continuity.repo import Repo
from git_continuity.store import notes as commit_notes
from git_continuity.verifiers.ci import RUN_NAME


def run(repo: Repo, *, command: list[str], name: str | None) -> int:
    """Run a command on the committed tree and record its result as a note on HEAD.

    The result is recorded only when it can vouch for a commit: the work tree must have no
    changes to tracked files (untracked files are allowed: build output lives there).
    """
    if not command:
        raise UserError("ci run needs a command after --, e.g. git continuity ci run -- pytest -q")
    if name is not None and not RUN_NAME.fullmatch(name):
        raise UserError(f"--name {name!r} is not valid: letters, digits and . _ : + - (up to 64)")
    if repo.work_dir is None:
        raise UserError("ci run needs a work tree; this repository is bare")
    head = git.head_commit(repo)
    if head is None:
        raise UserError("HEAD has no commit yet; commit first, then run ci run")
    changed = git.changed_tracked_paths(repo)
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        raise UserError(
            f"the work tree has uncommitted changes ({shown}), so a result would vouch for no commit.\n"
            "Commit or stash them, then run git continuity ci run again."
        )
    text = shlex.join(command)
    tree = git.commit_info(repo, head).tree
    print(f"ci run: {text}  (on {head[:7]})", flush=True)
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=repo.work_dir)
    except FileNotFoundError:
        raise UserError(f"command {command[0]!r} not found (nothing recorded)") from None
    except PermissionError:
        raise UserError(f"command {command[0]!r} is not executable (nothing recorded)") from None
    elapsed = time.monotonic() - started
    moment = now()
    status = "success" if done.returncode == 0 else "failure"
    record = {
        "kind": "ci",
        # git-appraise's CI report fields: timestamp (Unix seconds, as a string), status,
        # agent; `url` is left out for a local run.
        "timestamp": str(int(moment.timestamp())),
        "status": status,
        "agent": f"git-continuity {__version__} on {hostname()}",
        "at": stamp(moment),
        "by": git.identity(repo),
        "command": text,
        "name": name or text,
        "exit": done.returncode,
        "tree": tree,
        "seconds": round(elapsed, 3),
    }
    commit_notes.add(repo, head, record)
    verdict = "passed" if status == "success" else f"failed (exit {done.returncode})"
    print(f"Recorded on {head[:7]}: `{name or text}` {verdict}.")
    hash_name = f"#{name}" if name else ""
    print(f"  handle  ci:{head}{hash_name}   (claim add TEXT --check ci:HEAD{hash_name})")
    return 0 if status == "success" else 1
