"""The one assessment of a stream at a moment: every reader renders a view, none re-derives.

``assess`` turns a snapshot (plus the work tree, the time and the policy) into an immutable
``View``: each claim's derived state with where its evidence came from (``origin``), each
thread's standing with its checks. Status, orient, handoff, progress, thread list and show,
check and the gates, and the MCP tools all read the same view, so two of them can never
disagree about a claim or a thread; a label such as "re-derived now" is chosen in one place
(``view/labels.py``: ``freshness_text``, ``thread_standing``) from a field of the view.

Cheap parts (live local handles, a done thread's closing commit) are computed eagerly; costly
ones (``cmd:``, the network) only when ``dereference`` asks; each claim's freshness says whether
it was asked now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, Derived, Freshness, Handle, Observation, Thread, now, parse_handle, stamp

if TYPE_CHECKING:  # render imports this module for the labels: a write pays for none of these
    from git_continuity.plugins.values import Progress
    from git_continuity.plugins.verify import Assessed
    from git_continuity.store.attempts import Waiting
    from git_continuity.store.policy import Policy
    from git_continuity.syncing.look import Look, Reach

Origin = Literal["now", "recorded", "reported", "none"]
Standing = Literal["open", "holds", "undone", "parked", "cancelled"]
# What a view dereferenced now: live local handles always; "all" also the costly ones (cmd:,
# and the network with online); "bearing" what a brief rests on (every handle but cmd:, and
# not the checks of done threads).
Dereference = Literal["live", "bearing", "all"]

# The checks that say a done thread still holds, re-derived on every read: cheap, local, and
# about what the work produced. (clean: is about the work tree now, not about the work; cmd:
# and the network are costly: a done thread shows their evidence "verified at <commit>".)
HOLDING_SCHEMES = frozenset({"file", "commit", "reachable", "tag", "pushed"})
PARKED = frozenset({"watching", "blocked", "waiting"})


@dataclass(frozen=True)
class ThreadView:
    thread: Thread
    checks: tuple[Assessed, ...]
    standing: Standing
    undone: str | None = None  # why a done thread no longer holds
    waiting: Waiting | None = None  # an open thread whose checks wait on someone else
    withdrawn: tuple[Claim, ...] = ()  # checks retracted while it was open, with their reasons

    @property
    def gates(self) -> bool:
        """Whether it holds a stop or a closing: open, or done but no longer holding."""
        return self.standing in ("open", "undone")

    @property
    def verified(self) -> int:
        return sum(1 for a in self.checks if a.derived.state == "verified")

    def tally(self) -> str:
        return f"{self.verified} of {len(self.checks)} checks verified"


@dataclass(frozen=True)
class View:
    snap: store.Snapshot
    at: datetime
    policy: Policy
    claims: tuple[Assessed, ...]  # oldest first
    threads: tuple[ThreadView, ...]  # oldest first
    online: bool
    # Why this clone has no closure gate (its git hooks are missing), when the stream has
    # threads: said by status, orient and doctor (gate_presence.missing).
    gate_missing: str | None = None

    def thread(self, thread_id: str) -> ThreadView:
        return next(tv for tv in self.threads if tv.thread.id == thread_id)

    @property
    def undone(self) -> list[ThreadView]:
        return [tv for tv in self.threads if tv.standing == "undone"]

    @property
    def open(self) -> list[ThreadView]:
        return [tv for tv in self.threads if tv.standing == "open"]

    def loose(self) -> list[Assessed]:
        """Claims that stand on their own: not a check of a thread still being worked on
        (those are shown with their thread). A done thread's checks count: it must hold."""
        working = {tv.thread.id for tv in self.threads if tv.thread.status != "done"}
        return [a for a in self.claims if a.claim.thread not in working]


def _bearing(claim: Claim, threads: dict[str, Thread]) -> bool:
    """What a brief rests on: every claim with a handle but cmd: ones (a test suite may take
    longer than a session start waits) and the checks of threads already done."""
    from git_continuity.plugins import verify

    if not claim.handle or verify.scheme_of(claim) == "cmd":
        return False
    owner = threads.get(claim.thread or "")
    return owner is None or str(owner.status) not in ("done", "cancelled")


def assess(
    snap: store.Snapshot,
    *,
    at: datetime | None = None,
    policy: Policy | None = None,
    dereference: Dereference = "live",
    online: bool = False,
    thread_ids: Iterable[str] | None = None,
    claim_ids: Iterable[str] | None = None,
    with_waiting: bool = True,
    timeout: float | None = None,
    progress: Progress | None = None,
    look: Look | None = None,
    heard: Mapping[str, datetime] | None = None,
) -> View:
    """The view of ``snap`` now. ``thread_ids`` narrows it to those threads and their checks
    (thread show, a commit's gate), ``claim_ids`` to those claims (claim show, verify IDS);
    ``with_waiting`` derives whether open threads wait on someone else (reads evidence
    history; status and the brief show it). ``timeout`` and ``progress`` are a dereference's
    (verify). ``look`` is the fresh look taken just before (syncing.look): its network answers
    are taken as dereferenced now, and what rests on a remote it did not reach is shown as
    recorded, with its age. ``heard`` are the remotes a look still under way hears from, taken
    as fetched then (plugins/values.py Repository._heard)."""
    from git_continuity.store import policy as policies

    at = at or now()
    rules = policy if policy is not None else policies.load(snap.repo.work_dir)
    threads = store.read_threads(snap)
    wanted = set(thread_ids) if thread_ids is not None else None
    chosen = sorted((t for t in threads.values() if wanted is None or t.id in wanted), key=lambda t: (t.added_at, t.id))
    every = store.read_claims(snap)
    # Withdrawn checks are no claims any more: shown with their thread, never assessed.
    withdrawn: dict[str, list[Claim]] = {}
    for c in every.values():
        if c.withdrawn is not None:
            withdrawn.setdefault(c.thread or "", []).append(c)
    if withdrawn:
        every = {i: c for i, c in every.items() if c.withdrawn is None}
    if claim_ids is not None:
        named = [every[i] for i in dict.fromkeys(claim_ids) if i in every]
        claims = sorted(named, key=lambda c: (c.added_at, c.id))
        if wanted is None:
            chosen = [t for t in chosen if any(c.thread == t.id for c in claims)]
    else:
        claims = sorted(
            (c for c in every.values() if wanted is None or c.thread in wanted), key=lambda c: (c.added_at, c.id)
        )
    with git.kept_once(snap.repo):  # what the history was asked, written once at the end
        done = {t.id: t for t in chosen if t.status == "done"}
        branches = _Branches(snap.repo)
        homes = branches.homes(done.values())
        given = look.observed if look is not None else None
        asked = _Asked(at, rules, dereference, online, timeout, progress, given, heard)
        assessed = []
        for home in dict.fromkeys([*homes.values(), None]):  # each done thread's own branch, then HEAD
            group = [c for c in claims if homes.get(c.thread or "") == home]
            assessed += _dereferenced(snap, group, threads, asked, home) if group or home is None else []
        assessed.sort(key=lambda a: (a.claim.added_at, a.claim.id))
        _set_freshness(snap, assessed, look)
        if done:
            assessed = [_as_closed(snap, a, done[a.claim.thread]) if a.claim.thread in done else a for a in assessed]
        checks: dict[str, list[Assessed]] = {t.id: [] for t in chosen}
        for a in assessed:
            if a.claim.thread in checks:
                checks[a.claim.thread].append(a)
        views = tuple(_thread_view(snap, t, checks[t.id], branches, with_waiting) for t in chosen)
    if withdrawn:
        by_age = {k: tuple(sorted(v, key=lambda c: (c.added_at, c.id))) for k, v in withdrawn.items()}
        views = tuple(replace(tv, withdrawn=by_age.get(tv.thread.id, ())) for tv in views)
    from git_continuity.clone import gate_presence

    gate = gate_presence.missing(snap.repo) if threads else None
    return View(snap, at, rules, tuple(assessed), views, online, gate)


@dataclass(frozen=True)
class _Asked:
    """How a view dereferences (assess's arguments)."""

    at: datetime
    rules: Policy
    dereference: Dereference
    online: bool
    timeout: float | None
    progress: Progress | None
    given: Mapping[str, Observation] | None  # the fresh look's network answers (verify.assess)
    heard: Mapping[str, datetime] | None  # the remotes a look under way hears from (Repository._heard)


def _dereferenced(
    snap: store.Snapshot,
    claims: list[Claim],
    threads: dict[str, Thread],
    asked: _Asked,
    head: tuple[str, git.Oid] | None,
) -> list[Assessed]:
    """These claims' states now, ``head`` standing for HEAD (a done thread's own branch)."""
    from git_continuity.plugins import verify

    at, rules, online = asked.at, asked.rules, asked.online
    if asked.dereference == "bearing":
        heavy: list[Claim] = []
        light: list[Claim] = []
        for c in claims:
            (heavy if _bearing(c, threads) else light).append(c)
        bearing = verify.Asking(
            dereference_all=True, online=online, reuse_fresh=True, head=head, given=asked.given, heard=asked.heard
        )
        return verify.assess(snap, heavy, at=at, policy=rules, asking=bearing) + verify.assess(
            snap, light, at=at, policy=rules, asking=verify.Asking(head=head, heard=asked.heard)
        )
    every = verify.Asking(
        dereference_all=asked.dereference == "all",
        online=online,
        timeout=asked.timeout,
        progress=asked.progress,
        head=head,
        heard=asked.heard,
    )
    return verify.assess(snap, claims, at=at, policy=rules, asking=every)


def _set_freshness(snap: store.Snapshot, assessed: Sequence[Assessed], look: Look | None) -> None:
    """Where how fresh a claim's state is takes more than where its evidence came from: a
    ``cmd:`` not approved here (whatever its last result says, it cannot be re-derived here),
    a network handle the look asked and got no answer from, and a check that reads a remote's
    refs where the look did not reach that remote."""

    approved: dict[str | None, set[str]] = {}
    for a in assessed:
        text = a.claim.handle
        # Cheap first: only a cmd:, a scoped handle, or one the look's reach may tell about is parsed
        # (a status of 100,000 claims parses none here).
        if not text or not (text.startswith(("cmd:", "@")) or (look is not None and _may_rest_on_look(text, look))):
            continue
        handle = parse_handle(text)
        if handle.scheme == "cmd":
            if handle.scope not in approved:
                approved[handle.scope] = _approved(snap, handle.scope)
            if handle.body not in approved[handle.scope]:
                a.freshness = Freshness("unapproved", a.derived.checked_at, elsewhere=a.derived.elsewhere)
            continue
        if look is None:
            continue
        if a.observation is None and handle.text in look.unanswered and a.derived.checked_at:
            a.freshness = Freshness("recorded", a.derived.checked_at, look.unanswered[handle.text])
        elif a.observation is not None and (reach := _unreached(snap.repo, handle, a, look)) is not None:
            since = stamp(reach.known) if reach.known else None
            a.freshness = Freshness("recorded", since, f"{reach.remote} {reach.failed}")


def _may_rest_on_look(text: str, look: Look) -> bool:
    """Whether a handle may read a remote the look did not reach, or be one it got no answer for."""
    return text in look.unanswered or (
        any(not r.reached for r in look.reaches) and (text.startswith("pushed:") or "refs/remotes/" in text)
    )


def _approved(snap: store.Snapshot, scope: str | None) -> set[str]:
    """The commands approved in the repository a scope names (this one: None); none where it is
    not found here or its trust store cannot be read (the check says why when it is run)."""
    from git_continuity.errors import UserError
    from git_continuity.plugins import scoped
    from git_continuity.trust import approvals as trust

    there = snap.repo if scope is None else scoped.locate(snap, [scope])[scope].repo
    try:
        return set(trust.approved(there)) if there is not None else set()
    except UserError:
        return set()


def _unreached(repo: git.Repo, handle: Handle, a: Assessed, look: Look) -> Reach | None:
    """The remote a live check read the refs of (a ``pushed:`` check's, or one its observation
    depended on) when the look did not reach it."""
    repository = handle.scope or ""
    reads = [k.removeprefix("refs/remotes/") for k in (a.observation.depends_on if a.observation else {})]
    if handle.scheme == "pushed":
        reads.append(handle.body.rpartition("@")[2])
    for reach in look.reaches:
        if (
            reach.repository == repository
            and not reach.reached
            and any(r.startswith(reach.remote + "/") for r in reads)
        ):
            return reach
    return None


def _as_closed(snap: store.Snapshot, a: Assessed, thread: Thread) -> Assessed:
    """A done thread's costly check (cmd:, CI, a PR) shows the evidence it closed on,
    "verified at <commit>": a commit made since changes the tree it ran on, not the work it
    proved. It is re-run only by verify (a dereference now replaces it)."""
    from git_continuity.plugins import verify

    if a.observation is not None or a.derived.state != "stale" or a.derived.elsewhere or verify.is_live(a.claim):
        return a
    evidence = store.latest_evidence(snap, a.claim.id)
    if evidence is None or evidence.result != "verified" or evidence.handle != a.claim.handle:
        return a
    where = (
        f"at {thread.closed_by[:7]}" if thread.closed_by else f"when closed ({thread.closed_at or evidence.checked_at})"
    )
    derived = Derived("verified", f"verified {where}: {evidence.observed}", evidence.checked_at)
    return replace(a, derived=derived)


class _Branches:
    """Where a done thread is looked up: on the branch it was closed on (``closed_on``), and
    only where that fails on HEAD and then every other local branch. Each question is
    answered from the last answer and the commits since (repo/reach.py)."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        self.current = git.current_branch(repo)
        self._tips: dict[str, git.Oid | None] = {}
        self._every: tuple[git.Oid, ...] | None = None

    def tip(self, branch: str) -> git.Oid | None:
        if branch not in self._tips:
            target = git.ref_target(self.repo, f"refs/heads/{branch}")
            self._tips[branch] = git.peel_to_commit(self.repo, target) if target else None
        return self._tips[branch]

    def homes(self, done: Iterable[Thread]) -> dict[str, tuple[str, git.Oid]]:
        """Each done thread closed on another branch than the one checked out here, that
        branch being here: its name and tip (its checks of the tree judge that tip)."""
        found = {}
        for t in done:
            tip = self.tip(t.closed_on) if t.closed_on and t.closed_on != self.current else None
            if t.closed_on and tip is not None:
                found[t.id] = (t.closed_on, tip)
        return found

    def every(self) -> tuple[git.Oid, ...]:
        if self._every is None:
            tips = list(git.ref_tips(self.repo, ("refs/heads/",), 10_000).values())
            head = git.head_commit(self.repo)
            self._every = tuple(dict.fromkeys([*([head] if head else []), *tips]))
        return self._every

    def holding(self, commit: str, closed_on: str | None) -> bool:
        """Whether commit is on the branch it was closed on, else on HEAD or any branch."""
        if not git.has_commit(self.repo, git.Oid(commit)):
            return False
        first = self.tip(closed_on) if closed_on else None
        if first is not None and self._contains(first, commit):
            return True
        return any(self._contains(tip, commit) for tip in self.every() if tip != first)

    def _contains(self, tip: git.Oid, commit: str) -> bool:
        try:
            return git.contains(self.repo, tip, git.Oid(commit))
        except git.HistoryCut:  # not found there
            return False


def _thread_view(
    snap: store.Snapshot, t: Thread, checks: list[Assessed], branches: _Branches, with_waiting: bool
) -> ThreadView:
    status = str(t.status)
    if status == "cancelled":
        return ThreadView(t, tuple(checks), "cancelled")
    if status == "done":
        undone = _undone(snap, t, checks, branches)
        return ThreadView(t, tuple(checks), "undone" if undone else "holds", undone)
    waiting = None
    if with_waiting and checks:
        from git_continuity.view import stoploss

        waiting = stoploss.waiting_of(snap, checks)
    return ThreadView(t, tuple(checks), "parked" if status in PARKED else "open", waiting=waiting)


def _undone(snap: store.Snapshot, t: Thread, checks: Sequence[Assessed], branches: _Branches) -> str | None:
    """Why a done thread no longer holds, or None: its closing commit left every branch (a
    reset, an amend, a force-push), or a cheap check of what the work produced is
    contradicted now."""
    from git_continuity.plugins import verify

    if t.closed_by and not branches.holding(t.closed_by, t.closed_on):
        return f"its closing commit {t.closed_by[:7]} is on no branch here (reset, amended or rewritten away)"
    broken = [a for a in checks if a.derived.state == "contradicted" and verify.scheme_of(a.claim) in HOLDING_SCHEMES]
    if broken:
        first = broken[0]
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        return f"{first.claim.id} {first.claim.handle} is contradicted now{more}: {first.derived.observed}"
    return None
