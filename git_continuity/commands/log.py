from __future__ import annotations

import sys
from itertools import islice

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import cut
from git_continuity.errors import UserError
from git_continuity.model import shown, stamp
from git_continuity.render import text as render
from git_continuity.repo import Repo


def log(repo: Repo, *, stream: str, count: int | None, as_json: bool) -> int:
    """The history of the state ref, newest first: one commit per change of state."""
    if count is not None and count < 1:
        raise UserError("-n takes a whole number of changes, 1 or more")
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    assert snap.commit is not None
    # A count past any history's length is all of it (islice takes no more than sys.maxsize).
    commits = list(
        islice(git.first_parent_log(repo, snap.commit), None if count is None or count >= sys.maxsize else count)
    )
    last = commits[-1]
    broken = (
        f"{snap.ref}: its history is cut: commit {last.oid[:7]} names a parent {last.parents[0][:7]} that is missing"
        " here (git continuity doctor says how to repair it)"
        if (count is None or len(commits) < count) and last.parents and not git.has_commit(repo, last.parents[0])
        else None
    )
    if as_json:
        render.emit_json(
            "log",
            {
                "stream": stream,
                "ref": snap.ref,
                "commits": [
                    {
                        "commit": c.oid,
                        "at": stamp(c.time),
                        "by": c.author,
                        "summary": c.message.splitlines()[0] if c.message else "",
                        "message": c.message,
                        **session.parse_trailers(c.message),
                    }
                    for c in commits
                ],
            },
        )
        if broken:
            print(f"git-continuity: {broken}", file=sys.stderr)
        return 2 if broken else 0
    for c in commits:
        summary = c.message.splitlines()[0] if c.message else ""
        t = session.parse_trailers(c.message)
        who = render.where(c.author.split(" <")[0], t.get("host"), t.get("agent"), t.get("session"))
        print(f"{c.oid[:7]}  {shown(stamp(c.time))}  {who}  {cut(summary, 'git continuity log --json')}")
    if broken:
        print(f"problem: {broken}")
    return 2 if broken else 0
