from __future__ import annotations

import sys

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.repo import Repo
from git_continuity.store import packetfile
from git_continuity.syncing import layout as remote_layout
from git_continuity.syncing import pulling, tracking, transport
from git_continuity.trust import signers, signing


def init(
    repo: Repo,
    *,
    stream: str,
    fetch_refspecs: bool | None = None,
    remote: str | None = None,
    local: bool = False,
) -> int:
    """Create the state ref for a stream, or take the remote's in when it already has one
    (two clones that both start one would make unrelated histories); safe to run again."""
    ref = store.ref_name(stream)
    name = tracking.pick_remote(repo, remote) if remote is not None else tracking.default_remote(repo)
    cannot = signing.unattended(repo)
    if cannot:  # said at once, not at an agent's first write
        print(f"git-continuity: warning: {cannot}", file=sys.stderr)
    existing = store.snapshot(repo, stream)
    if existing.commit is not None:
        print(f"Stream '{stream}' already has state: {ref} at {existing.commit[:7]}.")
        _offer_refspecs(repo, name, fetch_refspecs)
        return 0
    if name is not None and not local and _take_remote_state(repo, name, stream):
        _offer_refspecs(repo, name, fetch_refspecs)
        return 0 if store.snapshot(repo, stream).commit is not None else 1
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
    _offer_refspecs(repo, name, fetch_refspecs)
    return 0


def _take_remote_state(repo: Repo, remote: str, stream: str) -> bool:
    """Pull instead of starting when the remote has this stream; True if it did."""
    layout = remote_layout.layout_of(repo, remote)
    wanted = [f"{constants.STATE_PREFIX}{stream}", f"refs/heads/{layout.prefix}{stream}"]
    try:
        found = transport.list_refs(repo, remote, [*wanted, *layout.lane_globs], tracking.HINT_TIMEOUT)
    except transport.TransportError as error:
        print(
            f"Could not ask {remote} whether it already has state ({error});\n"
            "starting here. If it has, git continuity sync merges both histories, losing nothing.\n"
        )
        return False
    on_lanes = any((lane := layout.parse_lane(name)) and lane.stream == stream for name in found)
    if not (set(wanted) & set(found) or on_lanes):  # a clone's lane holds state too
        return False
    _, lines = pulling.pull_from(repo, remote, layout)
    said = "\n".join(f"  {name}: {what}" for name, what, _ in lines)
    if store.snapshot(repo, stream).commit is None:
        accept = signers.persons_act("Once checked, the list is accepted", "git continuity trust team accept")
        print(
            f"{remote} already has state for stream '{stream}', signed by keys not trusted here: nothing was taken"
            f" in, and no unrelated history was started.\nFrom {remote}:\n{said}\n\n"
            f"git continuity trust team shows the team's keys. {accept}; then git continuity pull takes the state in."
        )
        return True
    print(
        f"{remote} already has state for stream '{stream}': took it in instead of starting an unrelated history.\n"
        f"From {remote}:\n{said}\n\nNext:\n  git continuity status"
    )
    return True


def _offer_refspecs(repo: Repo, remote: str | None, wanted: bool | None) -> None:
    """Offer, never ask: agents run without a terminal, so the offer is a flag to pass and
    the command it stands for, printed."""
    if remote is None or wanted is False:
        return
    specs = tracking.fetch_refspecs(repo, remote)
    if wanted:
        added = tracking.add_fetch_refspec(repo, remote)
        print(
            ("\nAdded" if added else "\nAlready there:") + f" {' '.join(added or specs)} in remote.{remote}.fetch.\n"
            f"A plain git fetch now brings {remote}'s state into {constants.TRACKING_PREFIX}{remote}/, and status\n"
            f"says how it stands. No push refspec: git push still pushes your branch; git continuity push\n"
            "publishes the state (and sync does both ways)."
        )
    elif not tracking.has_fetch_refspec(repo, remote):
        same = "; ".join(f"git config --add remote.{remote}.fetch '{spec}'" for spec in specs)
        print(
            f"\nA plain git fetch does not bring the state. To make it, run:\n"
            f"  git continuity init --fetch-refspecs\n"
            f"(the same as: {same})"
        )
