"""A close judged at commit-msg and recorded at post-commit, once the commit exists.

commit-msg judges the threads a message closes against the tree git is about to commit, but
that commit does not exist yet, and may never: a signature that fails, a hook after it, an
interrupted editor. So commit-msg writes no state. It leaves what it judged, the threads, the
tree and the evidence, in ``<git dir>/continuity/closing.json`` (this work tree's own git
folder, so two worktrees committing at once keep theirs apart), and post-commit records the
close, naming the commit (``closed_by``), only when HEAD is the commit that was judged:

- HEAD's tree is the judged tree;
- HEAD's message closes the same threads (read with the keywords commit-msg used);
- it was made by the same ``git`` process, where that can be told (Linux's /proc), and the
  hand-off is at most ``MAX_AGE`` old.

Anything else means the hand-off is stale (its commit failed, or it was made with
``--no-verify`` after one that failed): it is dropped and nothing is recorded. Every
commit-msg run drops the one before it, and post-commit always takes it away.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from git_continuity import atomic, model, store
from git_continuity import repo as git
from git_continuity.constants import CLOSING_FILE
from git_continuity.errors import UserError
from git_continuity.gate import closure
from git_continuity.model import Evidence, Thread, now, parse_stamp, stamp, to_json
from git_continuity.repo import Repo

MAX_AGE = timedelta(minutes=15)  # a signing prompt may wait on a person; a stale file must not


def path(git_dir: Path) -> Path:
    return git_dir / CLOSING_FILE


def drop(git_dir: Path) -> None:
    with contextlib.suppress(OSError):
        path(git_dir).unlink()


def git_process() -> int | None:
    """The id of the ``git`` process that runs this hook: the nearest ancestor named git
    (the plain hook execs Python, so it is the parent; the pre-commit framework puts its own
    process between). None where /proc cannot tell."""
    pid = os.getppid()
    for _ in range(4):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        name, _, rest = stat.partition("(")[2].rpartition(")")
        if name == "git":
            return pid
        pid = int(rest.split()[1])
        if pid <= 1:
            return None
    return None


def leave(
    git_dir: Path,
    *,
    stream: str,
    tree: str,
    keywords: Sequence[str],
    verdicts: Sequence[closure.Verdict],
    evidence: Sequence[Evidence],
) -> None:
    """What commit-msg judged, for the post-commit of the same commit."""
    data = {
        "stream": stream,
        "tree": tree,
        "threads": [v.thread.id for v in verdicts],
        "keywords": list(keywords),
        "evidence": [to_json(e) for e in evidence],
        "at": stamp(now()),
        "git": git_process(),
    }
    target = path(git_dir)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic.write(target, json.dumps(data, sort_keys=True) + "\n")


def take(git_dir: Path) -> dict[str, Any] | None:
    """The hand-off, removed; None when there is none or it cannot be read."""
    found = path(git_dir)
    try:
        data = json.loads(found.read_text())
    except (OSError, ValueError):
        data = None
    drop(git_dir)
    return data if isinstance(data, dict) else None


def applies(data: dict[str, Any], *, stream: str, tree: str, message: str) -> bool:
    """Whether the hand-off was judged for this commit (the module's rules)."""
    try:
        fresh = now() - parse_stamp(str(data["at"])) <= MAX_AGE
        closes = model.closing_ids(message, [str(k) for k in data["keywords"]])
        same_git = data.get("git") is None or data["git"] == git_process()
        return bool(
            fresh
            and same_git
            and data["stream"] == stream
            and data["tree"] == tree
            and sorted(closes) == sorted(data["threads"])
        )
    except (KeyError, TypeError, ValueError):
        return False


def record(repo: Repo, stream: str, data: dict[str, Any], commit: str) -> list[Thread]:
    """Close the hand-off's threads, naming ``commit``, with the evidence judged at
    commit-msg: one state commit. Threads already done (another writer closed them since)
    are left as they are. Returns the threads closed."""
    evidence = [Evidence(**e) for e in data["evidence"]]
    closed: list[Thread] = []
    branch = git.current_branch(repo)  # the branch the commit was made on: where the work is

    def make(snap: store.Snapshot) -> store.Change:
        threads = store.read_threads(snap)
        closed[:] = []
        files: dict[str, bytes | None] = {}
        for thread_id in data["threads"]:
            thread = threads.get(thread_id)
            if thread is None or thread.status == "done":
                continue
            done = replace(thread, status="done", closed_at=stamp(now()), closed_by=commit, closed_on=branch)
            files[store.thread_path(done.id)] = store.entry_bytes(done)
            closed.append(done)
        if closed:
            for e in evidence:
                files[store.evidence_path(e, parse_stamp(e.checked_at))] = store.entry_bytes(e)
        message = "thread close " + ", ".join(f"{t.id}: {t.title}" for t in closed)
        message += f"\n\nclosed by commit {commit}; every check verified on its tree; evidence recorded"
        return store.Change(message, files)

    store.update(repo, stream, make)
    return closed


def after_commit(repo: Repo, git_dir: Path, stream: str, commit: str, tree: str, message: str) -> bool:
    """The post-commit hook's part: record the close commit-msg judged for this commit, if it
    did (saying so on stderr); whether anything was recorded."""
    handed = take(git_dir)
    if handed is None or not applies(handed, stream=stream, tree=tree, message=message):
        return False
    try:
        closed = record(repo, stream, handed, commit)
    except UserError as error:
        ids = " ".join(handed["threads"])
        print(f"git-continuity: the commit is made, but closing {ids} was not recorded: {error}", file=sys.stderr)
        print(f"Close it with: git continuity thread close {ids}", file=sys.stderr)
        return False
    for t in closed:
        print(f'git-continuity: {t.id} "{t.title}": every check verified now; the thread is done.', file=sys.stderr)
    return bool(closed)
