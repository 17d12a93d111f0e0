"""Remotes as the state sees them: which remote, where its state is kept here, how far apart.

A remote's state is fetched into tracking refs outside ``refs/heads`` and ``refs/remotes``,
so ``git branch -a`` stays as it was:

    refs/continuity-remotes/<remote>/<stream>   the remote's refs/continuity/<stream>
    refs/notes/continuity-remotes/<remote>      the remote's refs/notes/continuity
    refs/continuity-remote-lanes/<remote>/<clone>/<stream>   a clone's lane for a stream
    refs/notes/continuity-remote-lanes/<remote>/<clone>      a clone's lane for the notes

Everything here reads local refs and config only, except ``remote_state_hint`` (and
``explain_missing``, which the command layer calls), which asks the remote once, on the
error path of a clone that has no state at all.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from git_continuity import atomic
from git_continuity import repo as git
from git_continuity.constants import NOTES_TRACKING_PREFIX, STATE_PREFIX, TRACKING_PREFIX
from git_continuity.errors import NoState, UserError
from git_continuity.model import ago, parse_stamp, stamp
from git_continuity.repo import Oid, Repo
from git_continuity.syncing import transport

HINT_TIMEOUT = 10.0  # seconds: the no-state error path asks the remote, briefly

Relation = Literal["same", "ahead", "behind", "diverged"]


def tracking_ref(remote: str, stream: str) -> str:
    return f"{TRACKING_PREFIX}{remote}/{stream}"


def notes_tracking_ref(remote: str) -> str:
    return f"{NOTES_TRACKING_PREFIX}{remote}"


LANE_TRACKING_PREFIX = "refs/continuity-remote-lanes/"
NOTES_LANE_TRACKING_PREFIX = "refs/notes/continuity-remote-lanes/"


def lane_tracking_ref(remote: str, clone: str, stream: str) -> str:
    """Where a clone's lane on a remote is kept here; stream "" is the notes' lane."""
    if not stream:
        return f"{NOTES_LANE_TRACKING_PREFIX}{remote}/{clone}"
    return f"{LANE_TRACKING_PREFIX}{remote}/{clone}/{stream}"


def tracked_lanes(repo: Repo, remote: str) -> dict[tuple[str, str], Oid]:
    """(clone, stream) -> commit of each lane on the remote as last fetched here ("" : the notes')."""
    found: dict[tuple[str, str], Oid] = {}
    for prefix, parts in ((f"{LANE_TRACKING_PREFIX}{remote}/", 2), (f"{NOTES_LANE_TRACKING_PREFIX}{remote}/", 1)):
        for name in git.list_refs(repo, prefix):
            rest = name[len(prefix) :].split("/")
            target = git.ref_target(repo, name)
            if len(rest) == parts and target is not None:  # a deeper name belongs to remote "<remote>/x"
                found[(rest[0], rest[1] if parts == 2 else "")] = target
    return found


def fetch_refspecs(repo: Repo, remote: str) -> list[str]:
    """What ``init --fetch-refspecs`` adds to ``remote.<name>.fetch``, for the transport the
    remote's config chooses: the streams (and, with the refs transport, every clone's lane)
    into the tracking refs. With branches, the notes' and the lanes' branches are left out
    (negative refspecs, git 2.29): they would land beside the streams' tracking refs.

    Globs only: a glob refspec is harmless when the remote has no state, whereas a
    configured exact refspec for refs/notes/continuity makes every plain ``git fetch`` fail
    ("couldn't find remote ref") until the remote has notes. Notes move with pull/sync.
    """
    from git_continuity.syncing import layout as remote_layout

    try:
        layout = remote_layout.layout_of(repo, remote)
    except UserError:
        layout = None  # a bad setting is named by the command that uses it
    if layout is None or layout.transport == "refs":
        return [
            f"+{STATE_PREFIX}*:{TRACKING_PREFIX}{remote}/*",
            f"+{remote_layout.LANES_PREFIX}*:{LANE_TRACKING_PREFIX}{remote}/*",
        ]
    prefix = f"refs/heads/{layout.prefix}"
    return [
        f"+{prefix}*:{TRACKING_PREFIX}{remote}/*",
        f"^{prefix}{remote_layout.NOTES_BRANCH}",
        f"^{prefix}{remote_layout.LANES_BRANCH}/*",
    ]


def missing_fetch_refspecs(repo: Repo, remote: str) -> list[str]:
    have = git.config_values(repo, f"remote.{remote}.fetch")
    return [spec for spec in fetch_refspecs(repo, remote) if spec not in have]


def has_fetch_refspec(repo: Repo, remote: str) -> bool:
    return not missing_fetch_refspecs(repo, remote)


def add_fetch_refspec(repo: Repo, remote: str) -> list[str]:
    """Add the state's fetch refspecs to the remote (never a push refspec: with one, a plain
    ``git push`` pushes only that and no longer the user's branch); the ones added."""
    added = missing_fetch_refspecs(repo, remote)
    for spec in added:
        git.add_local_config(repo, f"remote.{remote}.fetch", spec)
    return added


def default_remote(repo: Repo) -> str | None:
    """The current branch's upstream remote, else ``origin``, else the only remote."""
    names = git.remote_names(repo)
    branch = git.current_branch(repo)
    if branch:
        upstream = git.config_values(repo, f"branch.{branch}.remote")
        if upstream and upstream[-1] in names:
            return upstream[-1]
    if "origin" in names:
        return "origin"
    return names[0] if len(names) == 1 else None


def pick_remote(repo: Repo, given: str | None) -> str:
    """The remote to sync with: the one named, or the default; a UserError saying how to
    add one otherwise."""
    names = git.remote_names(repo)
    if given is not None:
        if given in names:
            return given
        known = ", ".join(names) or "none"
        if not given.strip():
            raise UserError(
                f"the remote's name is empty ({given!r}): name a remote (remotes: {known}) or none for the default"
            )
        if "://" in given or given.startswith(("/", ".", "~")) or re.match(r"^[^/]+@[^/]+:", given):
            # A URL or a path: the state's tracking refs are named after a remote, so it needs one.
            raise UserError(
                f"{given!r} is a URL or a path; give the name of a remote (remotes: {known}).\n"
                f"Add one with: git remote add NAME {given}, then run this again with NAME"
            )
        raise UserError(
            f"no remote named {given!r} here (remotes: {known}).\n"
            f"Add it with: git remote add {given if not given.startswith('-') else 'NAME'} URL"
        )
    found = default_remote(repo)
    if found is None:
        if not names:
            raise UserError("this repository has no remote to sync with.\nAdd one with: git remote add origin URL")
        raise UserError(
            f"no remote named origin and the current branch has no upstream; name one of: {', '.join(names)}\n"
            f"e.g. git continuity sync {names[0]}"
        )
    return found


def tracked_streams(repo: Repo, remote: str) -> dict[str, Oid]:
    """stream -> commit of the remote's state as last fetched here."""
    prefix = f"{TRACKING_PREFIX}{remote}/"
    found = {}
    for name in git.list_refs(repo, prefix):
        stream = name[len(prefix) :]
        target = git.ref_target(repo, name)
        if "/" not in stream and target is not None:  # a deeper name belongs to remote "<remote>/x"
            found[stream] = target
    return found


@dataclass(frozen=True)
class Standing:
    """How the local state of a stream stands against one remote's, as of the last fetch."""

    remote: str
    tracking_ref: str
    commit: Oid
    relation: Relation
    ahead: int  # state commits here that the remote lacks
    behind: int  # state commits there that are not here
    refused: str = ""  # why a pull would refuse what is there: "untrusted", "unsigned", "bad" or ""


def standings(repo: Repo, stream: str, local: Oid) -> list[Standing]:
    """One per remote whose state of this stream was fetched here; no network."""
    found = []
    for remote in git.remote_names(repo):
        ref = tracking_ref(remote, stream)
        theirs = git.ref_target(repo, ref)
        if theirs is None:
            continue
        lanes = [oid for (_, s), oid in tracked_lanes(repo, remote).items() if s == stream]
        try:
            ahead, behind = (0, 0) if theirs == local else git.ahead_behind(repo, local, theirs)
            if ahead and lanes:  # a change on a clone's lane has reached the remote
                ahead = git.commits_since(repo, local, [theirs, *lanes], show=0, count_up_to=ahead)[1]
        except git.HistoryCut:
            continue  # a cut history is a problem of the state, which the caller reports

        relation: Relation = (
            "same" if not ahead and not behind else "ahead" if not behind else "behind" if not ahead else "diverged"
        )
        found.append(Standing(remote, ref, theirs, relation, ahead, behind, _refused(repo, theirs, local, behind)))
    return found


def _refused(repo: Repo, theirs: Oid, local: Oid, behind: int) -> str:
    """Why a pull would refuse the remote's changes (its first commit not signed by a key
    trusted here), or "": a pull that is refused again is no way on (#26). Unsigned and
    untrusted commits are told apart without running ssh-keygen; trusted ones are cached."""
    from git_continuity.trust import signatures, signing

    if not behind or not signing.enabled(repo):
        return ""
    try:
        new = git.commit_ids_since(repo, theirs, local)
    except git.HistoryCut:
        return ""
    return next((v.kind for v in signatures.judge(repo, new) if v.kind != signatures.GOOD), "")


OUTBOX_COUNT = 1000  # state changes counted per remote before "1000 or more" (status stays quick)


@dataclass(frozen=True)
class Outbox:
    """The state changes of a stream that have not reached one remote, as far as this clone
    knows (its tracking refs, the shared one's and the lanes': moved by every fetch and push,
    never by the network here). A change on a lane has reached the remote."""

    remote: str
    changes: int  # at most OUTBOX_COUNT (then: that many or more)
    since: datetime | None  # when the oldest of them was made; None when there are none
    never: bool  # the remote has never had this stream's state, as far as this clone knows


def outbox(repo: Repo, stream: str, local: Oid) -> list[Outbox]:
    """One per remote of this repository: how many changes have not reached it, and since
    when. Writes never need the network; this says what is waiting for it."""
    found = []
    for remote in git.remote_names(repo):
        theirs = git.ref_target(repo, tracking_ref(remote, stream))
        lanes = [oid for (_, s), oid in tracked_lanes(repo, remote).items() if s == stream]
        hidden = [oid for oid in [theirs, *lanes] if oid is not None]
        if local in hidden:
            found.append(Outbox(remote, 0, None, False))
            continue
        try:
            total, oldest = git.counted_since(repo, local, hidden, count_up_to=OUTBOX_COUNT)
        except (git.HistoryCut, KeyError):  # a missing parent (KeyError: pygit2's NotFoundError is one)
            continue  # a cut history is a problem of the state, which the caller reports
        found.append(Outbox(remote, total, oldest, not hidden))
    return found


def outbox_text(box: Outbox, at: datetime) -> str | None:
    """The status line of one remote's outbox, or None when nothing is waiting."""
    if not box.changes or box.since is None:
        return None
    count = f"{box.changes}{' or more' if box.changes >= OUTBOX_COUNT else ''} change{'s' if box.changes != 1 else ''}"
    where = "never sent there" if box.never else "not sent yet"
    return f"{box.remote}: {count} {where}, the oldest made {ago(box.since, at)} (git continuity sync {box.remote})"


def outbox_json(box: Outbox) -> dict[str, object]:
    return {
        "remote": box.remote,
        "changes": box.changes,
        "since": stamp(box.since) if box.since else None,
        "never_sent": box.never,
    }


def explain_missing(error: NoState) -> str:
    """A missing state's whole message: the store's (how to start one), or, when a remote
    has the state, how to take it in. Never let a clone that lacks the state ref look like it
    has an empty state (git-bug #1301, tbd #135 in FIELD-NOTES). The command layer calls
    this; the store never asks the network."""
    on_remote, said = remote_state_hint(error.repo, error.stream)
    if on_remote:
        return f"{error.missing}\n{said}"
    return f"{error}\n{said}" if said else str(error)


def remote_state_hint(repo: Repo, stream: str) -> tuple[bool, str | None]:
    """For a clone with no state of this stream: whether a remote has it (and what to say).

    Fetched tracking refs answer first; otherwise the default remote is asked once (this is
    the error path: without it, a fresh clone would look like it has no state at all).
    """
    for remote in git.remote_names(repo):
        if git.ref_target(repo, tracking_ref(remote, stream)) is not None:
            return True, (
                f"{remote} has state for stream '{stream}' (fetched into {tracking_ref(remote, stream)}), "
                f"not yet taken in here.\nTake it with: git continuity pull {remote}"
            )
    default = default_remote(repo)
    if default is None:
        return False, None
    remote = default
    from git_continuity.syncing import layout as remote_layout

    try:
        layout = remote_layout.layout_of(repo, remote)
    except UserError:
        layout = None  # a bad setting is named by the command that uses it
    patterns = [f"{STATE_PREFIX}*", *([layout.branch_glob, *layout.lane_globs] if layout else [])]
    try:
        refs = transport.list_refs(repo, remote, patterns, HINT_TIMEOUT)
    except transport.TransportError as error:
        return False, f"(Could not ask {remote} whether it has state: {error})"
    lanes = [layout.parse_lane(name) for name in refs] if layout else []  # a clone's lane holds state too
    names = [
        name[len(STATE_PREFIX) :] if name.startswith(STATE_PREFIX) else layout and layout.parse_branch(name)
        for name in refs
    ] + [lane.stream for lane in lanes if lane]
    streams = sorted({n for n in names if n and n != "notes"})
    if stream in streams:
        return True, (
            f"{remote} has state for stream '{stream}' that this clone has never fetched.\n"
            f"Take it with: git continuity pull {remote}"
        )
    if streams:
        return False, f"{remote} has state for other streams: {', '.join(streams)} (git continuity pull {remote})"
    hint = elsewhere(repo, remote, stream)
    return hint is not None, hint


def elsewhere(repo: Repo, remote: str, stream: str) -> str | None:
    """Where a fresh clone's remote-tracking branches hold state this clone's settings do not
    look for (branches under another prefix, or the branch transport not set here): what to
    set. A state branch is one whose tip holds the state's format file."""
    found = [
        name.removeprefix(f"refs/remotes/{remote}/")
        for name in git.list_refs(repo, f"refs/remotes/{remote}/")
        if not name.endswith("/HEAD")
        and (tip := git.ref_target(repo, name)) is not None
        and git.has_commit(repo, tip)
        and git.path_in_commit(repo, tip, ".continuity/format")
    ]
    if not found:
        return None
    mine = [name for name in found if name.endswith(f"/{stream}") or name.endswith(f"-{stream}")]
    prefix = mine[0][: -len(stream)] if mine else "PREFIX"
    return (
        f"{remote} has continuity state on the branch{'es' if len(found) > 1 else ''} {', '.join(sorted(found))}, where"
        " this clone's settings do not look; nothing was taken in. Take it in with:\n"
        f"  git config continuity.{remote}.transport branches\n"
        f"  git config continuity.branchPrefix {prefix}\n  git continuity pull {remote}"
    )


# -- when this clone last heard from each remote ----------------------------------------------
# A fetch that brings nothing new leaves no reflog entry, so the fresh look (syncing.look)
# keeps when it reached each remote: a remote-tracking ref read after it is "fetched just now".


def _looked_file(repo: Repo) -> Path:
    return repo.local_dir / "looked.json"


def _looked_kept(repo: Repo) -> tuple[dict[str, str], str | None]:
    """The remotes' times as kept, and the last look's; nothing where the file cannot be read."""
    try:
        data = json.loads(_looked_file(repo).read_text())
        return {str(k): str(v) for k, v in dict(data.get("remotes", {})).items()}, data.get("last")
    except (OSError, ValueError, TypeError, AttributeError):
        return {}, None


def looked(repo: Repo) -> dict[str, datetime]:
    """remote -> when the fresh look last fetched it here."""
    try:
        return {name: parse_stamp(when) for name, when in _looked_kept(repo)[0].items()}
    except ValueError:
        return {}


def remember_look(repo: Repo, remotes: Sequence[str], at: datetime) -> None:
    """Keep that the fresh look at ``at`` fetched ``remotes`` (a file that cannot be written
    only loses the word "just now"), and when that look was, whatever it reached."""
    kept = {name: stamp(when) for name, when in looked(repo).items()}
    kept.update(dict.fromkeys(remotes, stamp(at)))
    made = {"last": stamp(at), "remotes": dict(sorted(kept.items()))}
    with contextlib.suppress(OSError):
        atomic.write(_looked_file(repo), json.dumps(made, indent=2) + "\n")


def reached_last_time(repo: Repo, remotes: Sequence[str]) -> bool:
    """Whether the last fresh look here reached each of these remotes."""
    kept, last = _looked_kept(repo)
    return last is not None and all(kept.get(remote) == last for remote in remotes)


def last_heard(repo: Repo, remote: str) -> datetime | None:
    """When this clone last heard from ``remote``: the fresh look's fetch, or the latest move of
    one of its remote-tracking refs or its state's tracking ref (a fetch or a push), or the clone."""
    found = [when for when in [looked(repo).get(remote)] if when is not None]
    names = [
        *git.list_refs(repo, f"refs/remotes/{remote}/")[:50],
        *git.list_refs(repo, f"{TRACKING_PREFIX}{remote}/")[:10],
    ]
    found += [moved[0] for name in names if (moved := git.ref_last_move(repo, name)) is not None]
    return max(found) if found else git.cloned_at(repo)
