"""push, pull and sync: parse, call the sync engine (syncing/), say what it did."""

from __future__ import annotations

from git_continuity import tracking
from git_continuity.errors import UserError
from git_continuity.repo import Repo
from git_continuity.syncing import pulling, pushing


def pull(repo: Repo, *, remote: str | None) -> int:
    name = tracking.pick_remote(repo, remote)
    fetched, lines = pulling.pull_from(repo, name)
    if not fetched.streams and fetched.notes is None:
        print(f"{name} has no continuity state yet: nothing to pull.")
        if pushing.local_streams(repo):
            print(f"Publish this clone's with: git continuity push {name}")
        return 0
    print(f"From {name}:\n" + "\n".join(lines))
    return 0


def push(repo: Repo, *, remote: str | None) -> int:
    name = tracking.pick_remote(repo, remote)
    if not pushing.local_streams(repo):
        raise UserError(
            f"no continuity state here to push.\nStart with git continuity init (or git continuity pull {name})."
        )
    pushing.require_sendable(repo, name)
    lines = pushing.publish(repo, name, pushing.last_fetched(repo, name))
    print(f"To {name}:\n" + "\n".join(lines))
    return 0


def sync(repo: Repo, *, remote: str | None) -> int:
    name = tracking.pick_remote(repo, remote)
    pushing.require_sendable(repo, name)
    fetched, lines = pulling.pull_from(repo, name)
    if not fetched.streams and fetched.notes is None:
        print(f"{name} has no continuity state yet.")
    else:
        print(f"From {name}:\n" + "\n".join(lines))
    if not pushing.local_streams(repo):
        print("No continuity state here to push (git continuity init starts one).")
        return 0
    print(f"To {name}:\n" + "\n".join(pushing.publish(repo, name, fetched)))
    return 0
