"""The fresh look at a session's start (orient, the SessionStart brief, the MCP orient tool):
what lives outside this clone is asked again, within a bound, before the brief is built.

Every remote of this repository and of each sibling found here is fetched at once, each in a
``git fetch`` of its own (the user's git, through ``transport``): its branches into the
remote-tracking refs and its tags (one that differs here is left as it is, and named); for this
repository also the state refs, into a staging area that ``fetching.settle`` checks and moves
into the state's tracking refs as ``sync`` would, then the stream's own remote's state is taken
in where this clone syncs with it. Meanwhile each network handle is asked again (conditional
requests: a repeat costs little). At the bound a fetch still running is ended with all it
started and a handle still unanswered keeps its last evidence: the look says what it could not
reach, and the view shows the claims that rest on it as recorded, with their age, never as
re-derived now.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from git_continuity import constants
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.model import Handle, Observation, now
from git_continuity.repo import Repo
from git_continuity.syncing import tracking, transport
from git_continuity.syncing.layout import layout_of

BOUND = 1.0  # seconds the look waits in all (docs/concepts.md: Sessions)
ENV_BOUND = "GIT_CONTINUITY_FRESH_LOOK"
CONFIG_BOUND = "continuity.freshLook"
STAGING = "refs/continuity-look/"  # <remote>/<the remote's ref name>: the state as the look fetched it
MOST_REMOTES = 8  # remotes of one repository looked at (the first by name)
WORKERS = 16  # network handles asked at once


@dataclass(frozen=True)
class Reach:
    """One remote of one repository, as the look found it."""

    repository: str  # "" for this repository, else the sibling's name
    remote: str
    url: str | None
    failed: str | None  # None: fetched now; else why not (git's words, or the bound)
    known: datetime | None  # when this clone last heard from it before (the age of what it holds)
    clobbered: tuple[str, ...] = ()  # tags that differ here from the remote's, left as they are

    @property
    def reached(self) -> bool:
        return self.failed is None


@dataclass(frozen=True)
class Look:
    """What the fresh look found: each remote reached or not, each network handle's answer."""

    bound: float
    took: float
    reaches: tuple[Reach, ...]
    observed: Mapping[str, Observation]  # network handles answered now, by the handle's text
    unanswered: Mapping[str, str]  # network handles asked and not answered: why, by the handle's text
    state: tuple[str, ...] = ()  # what taking the remote's state in did, or why it was not taken in
    changed_state: bool = False  # the local state ref moved (a take-in)

    def reach(self, repository: str, remote: str) -> Reach | None:
        """How the look found ``remote`` of ``repository`` (None: not looked at)."""
        return next((r for r in self.reaches if r.repository == repository and r.remote == remote), None)


def bound_of(repo: Repo) -> float:
    """How long the look may take: GIT_CONTINUITY_FRESH_LOOK, else continuity.freshLook, else a
    second; 0 turns it off. A value that is not a number of seconds is refused, naming it."""
    said, where = os.environ.get(ENV_BOUND), ENV_BOUND
    if said is None:
        said, where = git.config_value(repo, CONFIG_BOUND), f"git config {CONFIG_BOUND}"
    if said is None or not said.strip():
        return BOUND
    try:
        seconds = float(said)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 60:
        raise UserError(f"{where} is {said!r}: give the seconds the fresh look may take, 0 to 60 (0 turns it off)")
    return seconds


def _state_refspecs(repo: Repo, remote: str) -> list[str]:
    """The remote's state refs (streams, notes and lanes, in either layout) into the staging area."""
    try:
        layout = layout_of(repo, remote)
    except UserError:
        return []  # a bad setting is named by sync, which uses it
    patterns = [f"{constants.STATE_PREFIX}*", f"{constants.NOTES_REF}*", layout.branch_glob, *layout.lane_globs]
    return [f"+{p}:{STAGING}{remote}/{p}" for p in patterns]


def _refspecs(repo: Repo, remote: str) -> list[str]:
    """What ``git fetch REMOTE`` would fetch (the remote's configured refspecs: its branches into
    the remote-tracking refs, as the user set it up), and its tags, never forced over ours."""
    configured = git.config_values(repo, f"remote.{remote}.fetch")
    return [*(configured or [f"+refs/heads/*:refs/remotes/{remote}/*"]), "refs/tags/*:refs/tags/*"]


@dataclass
class _Started:
    repository: str
    repo: Repo
    fetch: transport.Started


@dataclass
class _Asking:
    """Network handles asked in daemon threads: one still waiting at the bound is left behind,
    and the process does not wait for it when it ends (a pool's threads it would join)."""

    answers: dict[str, Observation | BaseException] = field(default_factory=dict)
    texts: list[str] = field(default_factory=list)
    done: threading.Condition = field(default_factory=threading.Condition)


@dataclass
class Pending:
    """A look under way: its fetches running, its network handles being asked. The caller does
    what needs no remote meanwhile, then ``finish`` waits for the rest until the bound."""

    repo: Repo
    siblings: Mapping[str, Repo]
    bound: float
    began: float
    started: list[_Started]
    asking: _Asking


def start(repo: Repo, *, siblings: Mapping[str, Repo], bound: float) -> Pending:
    """Start looking now: fetch every remote of ``repo`` and of each sibling at once; nothing is
    waited for here (``ask`` adds the network handles)."""
    began = time.monotonic()
    started = _start(repo, "", with_state=True) + [
        s for name, there in sorted(siblings.items()) for s in _start(there, name, with_state=False)
    ]
    return Pending(repo, siblings, bound, began, started, _Asking())


def ask(pending: Pending, network: Sequence[Handle], asking: Callable[[Handle, float], Observation]) -> None:
    """Ask each network handle again, by ``asking``, each in a thread of its own, under the look's bound."""
    pending.asking = _ask(network, asking, pending.bound)


def finish(pending: Pending) -> Look:
    """Wait for a look until its bound, then settle the state it fetched (no network)."""
    repo, bound = pending.repo, pending.bound
    deadline = pending.began + bound
    ended = zip(pending.started, transport.finish_all([s.fetch for s in pending.started], deadline, bound), strict=True)
    observed, unanswered = _answers(pending.asking, deadline, bound)
    reaches = tuple(_reach(s, done) for s, done in ended)
    here = [r.remote for r in reaches if r.repository == "" and r.reached]
    tracking.remember_look(repo, here, now())
    for name, there in pending.siblings.items():
        tracking.remember_look(there, [r.remote for r in reaches if r.repository == name and r.reached], now())
    said, moved = _settle_state(repo, here)
    for name in git.list_refs(repo, STAGING):  # a fetch ended at the bound may have left some
        git.delete_ref(repo, name)
    took = time.monotonic() - pending.began
    return Look(bound, took, reaches, observed, unanswered, tuple(said), moved)


def _start(repo: Repo, repository: str, *, with_state: bool) -> list[_Started]:
    found = []
    for remote in sorted(git.remote_names(repo))[:MOST_REMOTES]:
        specs = _refspecs(repo, remote) + (_state_refspecs(repo, remote) if with_state else [])
        try:
            found.append(_Started(repository, repo, transport.start_fetch(repo, remote, specs)))
        except OSError:  # git itself could not start: said as that remote not reached
            continue
    return found


def _ask(network: Sequence[Handle], ask: Callable[[Handle, float], Observation], bound: float) -> _Asking:
    asking = _Asking(texts=[h.text for h in dict.fromkeys(network)])
    turns = threading.Semaphore(WORKERS)

    def one(handle: Handle) -> None:
        with turns:
            try:
                found: Observation | BaseException = ask(handle, bound)
            except Exception as error:  # a plugin's failure is said as that handle unanswered
                found = error
        with asking.done:
            asking.answers[handle.text] = found
            asking.done.notify_all()

    for handle in dict.fromkeys(network):
        threading.Thread(target=one, args=(handle,), daemon=True).start()
    return asking


def _answers(asking: _Asking, deadline: float, bound: float) -> tuple[dict[str, Observation], dict[str, str]]:
    """Each network handle's answer by the deadline. One that could not be had (no answer, a
    timeout) is not an answer: the claim keeps its last evidence, said with why."""
    with asking.done:
        asking.done.wait_for(
            lambda: len(asking.answers) == len(asking.texts), timeout=max(0.0, deadline - time.monotonic())
        )
        answers = dict(asking.answers)
    observed: dict[str, Observation] = {}
    unanswered: dict[str, str] = {}
    for text in asking.texts:
        found = answers.get(text)
        if found is None:
            unanswered[text] = f"not answered within {bound:g} s"
        elif isinstance(found, BaseException):
            unanswered[text] = f"could not be asked: {found!r}"
        elif found.result == "unknown" and found.waiting is None:
            unanswered[text] = found.observed
        else:
            observed[text] = found
    return observed, unanswered


def _reach(started: _Started, done: transport.Fetched) -> Reach:
    repo, remote = started.repo, done.remote
    known = None if done.failed is None else tracking.last_heard(repo, remote)
    return Reach(started.repository, remote, git.remote_url(repo, remote), done.failed, known, done.clobbered)


def _settle_state(repo: Repo, remotes: Sequence[str]) -> tuple[list[str], bool]:
    """Move each reached remote's state from the staging area into its tracking refs, checked
    as sync checks it, and take the stream's own remote's state in where this clone syncs with
    it; what was done or refused, said in a line each (``finish`` empties the staging area)."""
    from git_continuity.syncing import fetching, pulling

    said: list[str] = []
    moved = False
    default = tracking.default_remote(repo)
    for remote in remotes:
        prefix = f"{STAGING}{remote}/"
        staged = {name: git.ref_target(repo, name) for name in git.list_refs(repo, prefix)}
        refs = {name[len(prefix) :]: str(oid) for name, oid in staged.items() if oid is not None}
        synced = bool(
            tracking.tracked_streams(repo, remote) or git.ref_target(repo, tracking.notes_tracking_ref(remote))
        )
        try:
            if refs or synced:
                fetched = fetching.settle(repo, remote, layout_of(repo, remote), refs)
                if remote == default and synced:
                    lines = pulling.take_in_fetched(repo, fetched)
                    took = [f"{n}: {w}" for n, w, _ in lines if not w.startswith(("up to date", "not "))]
                    moved = moved or any(": nothing taken in" not in line for line in took)
                    said += [f"{remote}'s state: {'; '.join(took)}"] if took else []
        except UserError as error:
            said.append(f"{remote}'s state was not taken in: {str(error).splitlines()[0].rstrip(':')}")
    return said, moved
