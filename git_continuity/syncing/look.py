"""The fresh look at a session's start (orient, the SessionStart brief, the MCP orient tool):
what lives outside this clone is asked again, within a bound, before the brief is built.

Every remote of this repository and of each sibling found here is listed at once, each in a
``git ls-remote`` of its own (the user's git, through ``transport``: one round trip, no object).
Only a remote where something moved is then fetched, as ``git fetch`` would: its branches into
the remote-tracking refs and its tags (one that differs here is left as it is, and named); for
this repository also the state refs, into a staging area. A remote where nothing moved costs its
listing alone (a fetch that brings nothing still reads every ref here, 10,000 tags among them).
The state refs listed or fetched are then checked by ``fetching.settle`` and moved into the
state's tracking refs as ``sync`` would, and the stream's own remote's state is taken in where
this clone syncs with it. Meanwhile each network handle is asked again (conditional
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
    failed: str | None  # None: reached now (listed, and fetched where something moved); else why not
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
    fetched: bool = False  # a remote's refs were fetched (something had moved there)

    @property
    def moved_nothing(self) -> bool:
        """Whether this clone is as it was before the look: every remote reached, nothing
        fetched, no state taken in, no network handle asked. A view made while it waited holds."""
        return all(r.reached for r in self.reaches) and not (
            self.fetched or self.changed_state or self.observed or self.unanswered
        )

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


def _state_patterns(repo: Repo, remote: str) -> list[str]:
    """The remote's state refs: streams, notes and lanes, in either layout."""
    try:
        layout = layout_of(repo, remote)
    except UserError:
        return []  # a bad setting is named by sync, which uses it
    return [f"{constants.STATE_PREFIX}*", f"{constants.NOTES_REF}*", layout.branch_glob, *layout.lane_globs]


def _refspecs(repo: Repo, remote: str) -> list[str]:
    """What ``git fetch REMOTE`` would fetch (the remote's configured refspecs: its branches into
    the remote-tracking refs, as the user set it up), and its tags, never forced over ours."""
    configured = git.config_values(repo, f"remote.{remote}.fetch")
    return [*(configured or [f"+refs/heads/*:refs/remotes/{remote}/*"]), "refs/tags/*:refs/tags/*"]


def _listed(repo: Repo, remote: str, with_state: bool) -> list[str]:
    """The refs a remote's listing is asked for: what its refspecs take and its state refs, as
    patterns of ``git ls-remote`` (which keeps a ref whose name ends as one does: the look
    matches them again). Git then leaves out what nothing takes (GitHub lists thousands of
    refs/pull/*: reading them was 3 ms of a session start). Every ref where a refspec names a
    short name, which git expands as it fetches."""
    specs = [spec.removeprefix("+") for spec in _refspecs(repo, remote) if not spec.startswith("^")]
    sources = [spec.partition(":")[0] for spec in specs]
    if not all(source.startswith("refs/") for source in sources):
        return []
    return [*sources, *(_state_patterns(repo, remote) if with_state else [])]


@dataclass
class _Started:
    repository: str
    repo: Repo
    listing: transport.Started
    with_state: bool

    @property
    def remote(self) -> str:
        return self.listing.remote

    def refspecs(self) -> list[str]:
        state = _state_patterns(self.repo, self.remote) if self.with_state else []
        return _refspecs(self.repo, self.remote) + [f"+{p}:{STAGING}{self.remote}/{p}" for p in state]


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

    @property
    def remotes(self) -> list[str]:
        """The remotes of this repository being looked at."""
        return [s.remote for s in self.started if s.repository == ""]

    @property
    def listed(self) -> bool:
        """Whether every remote's listing has ended already (``finish`` waits for none)."""
        return all(s.listing.process.poll() is not None for s in self.started)


def start(repo: Repo, *, siblings: Mapping[str, Repo], bound: float) -> Pending:
    """Start looking now: list every remote of ``repo`` and of each sibling at once; nothing is
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
    """Wait for a look until its bound (each listing, then a fetch of each remote where
    something moved), then settle the state it found (no network)."""
    repo, bound = pending.repo, pending.bound
    deadline = pending.began + bound
    ended = _fetch_moved(pending.started, transport.finish_all([s.listing for s in pending.started], deadline, bound))
    fetched = any(fetch is not None for _, _, fetch in ended)
    ended = _fetched(ended, deadline, bound)
    observed, unanswered = _answers(pending.asking, deadline, bound)
    reaches = tuple(_reach(s, done) for s, done, _ in ended)
    here = [r.remote for r in reaches if r.repository == "" and r.reached]
    tracking.remember_look(repo, here, now())
    for name, there in pending.siblings.items():
        tracking.remember_look(there, [r.remote for r in reaches if r.repository == name and r.reached], now())
    listed = {s.remote: done.listed for s, done, fetch in ended if s.repository == "" and fetch is None}
    said, moved = _settle_state(repo, here, listed)
    for name in git.list_refs(repo, STAGING):  # a fetch ended at the bound may have left some
        git.delete_ref(repo, name)
    took = time.monotonic() - pending.began
    return Look(bound, took, reaches, observed, unanswered, tuple(said), moved, fetched)


_Ended = tuple[_Started, transport.Fetched, transport.Started | None]  # a remote, its listing or fetch, the fetch


def _fetch_moved(started: list[_Started], listed: list[transport.Fetched]) -> list[_Ended]:
    """Start a fetch of each remote whose listing shows something that is not here yet."""
    ended: list[_Ended] = []
    for s, done in zip(started, listed, strict=True):
        fetch = None
        if done.failed is None and _moved(s, done.listed):
            try:
                fetch = transport.start_fetch(s.repo, s.remote, s.refspecs())
            except OSError as error:  # git itself could not start: said as that remote not reached
                done = transport.Fetched(s.remote, f"git fetch could not start: {error}")
        ended.append((s, done, fetch))
    return ended


def _fetched(ended: list[_Ended], deadline: float, bound: float) -> list[_Ended]:
    """Each remote with its fetch's end in place of its listing's, where it was fetched."""
    fetches = [fetch for _, _, fetch in ended if fetch is not None]
    done = iter(transport.finish_all(fetches, deadline, bound))
    return [(s, next(done) if fetch is not None else listed, fetch) for s, listed, fetch in ended]


def _moved(started: _Started, listed: Mapping[str, str]) -> bool:
    """Whether a fetch would bring anything: a branch or tag of the remote that is not here as
    it is there, or a state ref whose commit is not here. Where that cannot be told (a refspec
    of short names, which git expands as it fetches; a ref here that cannot be read), the
    fetch is left to tell."""
    repo = started.repo
    specs = _refspecs(repo, started.remote)
    if any(not p.startswith("refs/") for spec in specs for p in spec.lstrip("+^").split(":") if p):
        return True
    states = _state_patterns(repo, started.remote) if started.with_state else []
    state = _any_of(states)
    # Only what a refspec takes or a state pattern names can differ: one question of each
    # listed name (GitHub lists thousands of refs/pull/* that nothing takes). Not UTF-8: none here.
    sources = [spec.removeprefix("+").partition(":")[0] for spec in specs if not spec.startswith("^")]
    taken = _any_of([*sources, *states])
    named = [(name, oid) for name, oid in listed.items() if taken(name) and "\ufffd" not in name]
    tags = git.tag_targets(repo) if any(name.startswith(git.TAGS) for name, _ in named) else {}
    into = _destination(specs)
    try:
        return any(_differs(repo, into, state, tags, name, oid) for name, oid in named)
    except UserError:
        return True


def _differs(
    repo: Repo,
    into: Callable[[str], str | None],
    state: Callable[[str], bool],
    tags: Mapping[str, str],
    name: str,
    oid: str,
) -> bool:
    """Whether the remote's ``name`` at ``oid`` is not here as a fetch would leave it."""
    if name.startswith(git.TAGS):
        return tags.get(name) != oid
    here = into(name)
    if here is not None and git.ref_target(repo, here) != oid:
        return True
    return state(name) and not git.has_object(repo, git.Oid(oid))


def _any_of(patterns: Sequence[str]) -> Callable[[str], bool]:
    """Whether a ref name matches one of these patterns, git's refspec globs (a ``*`` matches
    anything, ``/`` too). Asked of each ref a remote lists (GitHub lists thousands of
    refs/pull/* that no refspec takes): one look at the names' starts answers most; no
    pattern is compiled (a regular expression cost a session start 2 ms)."""
    globs = [p.split("*") for p in patterns]
    starts = tuple(parts[0] for parts in globs)

    def matches(name: str) -> bool:
        return bool(starts) and name.startswith(starts) and any(_glob(parts, name) for parts in globs)

    return matches


def _glob(parts: list[str], name: str) -> bool:
    """Whether name is ``parts`` joined by stretches of anything (a pattern split at its stars)."""
    if len(parts) == 1:
        return name == parts[0]
    head, *middle, tail = parts
    if len(name) < len(head) + len(tail) or not (name.startswith(head) and name.endswith(tail)):
        return False
    at, end = len(head), len(name) - len(tail)
    for part in middle:
        at = name.find(part, at, end)
        if at < 0:
            return False
        at += len(part)
    return True


def _destination(specs: Sequence[str]) -> Callable[[str], str | None]:
    """The ref here that a fetch by these refspecs writes a remote's ref into (None: none, or a
    negative refspec leaves it out): the first refspec that takes it."""
    left_out = _any_of([spec[1:] for spec in (s.removeprefix("+") for s in specs) if spec.startswith("^")])
    taken = []
    for spec in specs:
        source, _, into = spec.removeprefix("+").partition(":")
        if into and not source.startswith("^"):
            taken.append((source, *source.partition("*"), into))

    def destination(name: str) -> str | None:
        if left_out(name):
            return None
        for source, head, star, tail, into in taken:
            if not star:
                if name == source:
                    return into
            elif name.startswith(head) and name.endswith(tail) and len(name) >= len(head) + len(tail):
                return into.replace("*", name[len(head) : len(name) - len(tail)], 1)
        return None

    return destination


def _start(repo: Repo, repository: str, *, with_state: bool) -> list[_Started]:
    found = []
    for remote in sorted(git.remote_names(repo))[:MOST_REMOTES]:
        try:
            listing = transport.start_listing(repo, remote, _listed(repo, remote, with_state))
            found.append(_Started(repository, repo, listing, with_state))
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
    repo, remote = started.repo, started.remote
    known = None if done.failed is None else tracking.last_heard(repo, remote)
    return Reach(started.repository, remote, git.remote_url(repo, remote), done.failed, known, done.clobbered)


def _state_refs(repo: Repo, remote: str, listed: Mapping[str, str] | None) -> dict[str, str]:
    """The remote's state refs, by its names: as listed (nothing was fetched), else as staged."""
    if listed is not None:
        state = _any_of(_state_patterns(repo, remote))
        return {name: oid for name, oid in listed.items() if state(name)}
    prefix = f"{STAGING}{remote}/"
    staged = {name: git.ref_target(repo, name) for name in git.list_refs(repo, prefix)}
    return {name[len(prefix) :]: str(oid) for name, oid in staged.items() if oid is not None}


def _settle_state(
    repo: Repo, remotes: Sequence[str], listed: Mapping[str, Mapping[str, str]]
) -> tuple[list[str], bool]:
    """Move each reached remote's state (from the staging area where it was fetched, else as
    listed: its commits are here) into its tracking refs, checked as sync checks it, and take
    the stream's own remote's state in where this clone syncs with it; what was done or
    refused, said in a line each (``finish`` empties the staging area)."""
    from git_continuity.syncing import fetching, pulling

    said: list[str] = []
    moved = False
    default = tracking.default_remote(repo)
    for remote in remotes:
        refs = _state_refs(repo, remote, listed.get(remote))
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
