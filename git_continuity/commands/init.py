from __future__ import annotations

from git_continuity import packetfile, store
from git_continuity import repo as git
from git_continuity.repo import Repo


def init(repo: Repo, *, stream: str) -> int:
    """Create the state ref for a stream; safe to run again."""
    ref = store.ref_name(stream)
    existing = store.snapshot(repo, stream)
    if existing.commit is not None:
        print(f"Stream '{stream}' already has state: {ref} at {existing.commit[:7]}. Nothing to do.")
        return 0
    git.create_reflog(repo, ref)

    def make(snap: store.Snapshot) -> store.Change:
        if snap.commit is not None:  # another process initialized it meanwhile
            return store.Change("", {})
        return store.Change(
            f"init: start stream {stream}",
            {f"{store.ROOT}/format": f"{store.FORMAT}\n".encode(), packetfile.PATH: packetfile.TEMPLATE.encode()},
        )

    snap = store.update(repo, stream, make, create=True)
    print(
        f"Initialized stream '{stream}' on {ref} ({(snap.commit or '')[:7]}).\n"
        "Your branches, index and work tree were not touched.\n\n"
        "Next:\n"
        '  git continuity objective set "what this work is for" --why "why now"\n'
        '  git continuity claim add "the fix is pushed" --check pushed:HEAD@origin/main\n'
        "  git continuity status"
    )
    return 0
