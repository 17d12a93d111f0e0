"""The plugins' schemes, and dereferencing claims into their states now."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import session
from git_continuity.errors import UserError
from git_continuity.model import (
    Claim,
    Derived,
    Evidence,
    Freshness,
    Handle,
    Observation,
    derive_state,
    new_id,
    parse_handle,
    stamp,
)
from git_continuity.plugins import scoped
from git_continuity.plugins.manager import entry_points, get_plugin_manager
from git_continuity.plugins.values import Progress, Repository, Scheme, VerifyContext, inside
from git_continuity.store import siblings
from git_continuity.store.policy import Policy

WAITING = re.compile(r"[A-Za-z][A-Za-z -]{0,31}")  # what an observation waits on (schema/evidence)


@dataclass(frozen=True)
class PluginInfo:
    name: str
    version: str
    plugin: object
    schemes: tuple[Scheme, ...]


@functools.cache
def plugins() -> tuple[PluginInfo, ...]:
    """Every registered plugin with its version and the schemes it declared (each plugin
    asked through the hook, so GIT_CONTINUITY_TRACE shows it)."""
    from git_continuity import __version__

    pm = get_plugin_manager()
    versions = {name: version for name, _, version in entry_points()}
    found = []
    for impl in pm.hook.continuity_schemes.get_hookimpls():
        name = pm.get_name(impl.plugin) or repr(impl.plugin)
        declared = [s for answer in _hook(name, "continuity_schemes")() for s in answer or ()]
        for s in declared:
            if not isinstance(s, Scheme):
                raise UserError(
                    f"plugin {name} declares {s!r} as a handle scheme; its continuity_schemes must return "
                    "git_continuity.api.Scheme values: update or uninstall its package"
                )
        found.append(PluginInfo(name, versions.get(name, __version__), impl.plugin, tuple(declared)))
    return tuple(sorted(found, key=lambda p: p.name))


@functools.cache
def _hook(plugin: str, name: str) -> Callable[..., Any]:
    """Hook ``name`` of one plugin only, called through pluggy (so tracing sees it)."""
    pm = get_plugin_manager()
    mine = pm.get_plugin(plugin)
    return pm.subset_hook_caller(name, remove_plugins=[p for p in pm.get_plugins() if p is not mine])


@functools.cache
def schemes() -> dict[str, tuple[PluginInfo, Scheme]]:
    """Each scheme's one owner, which alone resolves and verifies its handles. Two plugins
    declaring one scheme are refused, naming both: which one a handle went to would
    otherwise depend on the order plugins happen to load in."""
    owners: dict[str, tuple[PluginInfo, Scheme]] = {}
    for p in plugins():
        for s in p.schemes:
            other = owners.get(s.name, (p, s))[0]
            if other is not p:
                raise UserError(
                    f"the handle scheme '{s.name}:' is declared by two plugins, {other.name} {other.version} "
                    f"and {p.name} {p.version}; a scheme has one owner: uninstall the package of one of them"
                )
            owners[s.name] = (p, s)
    return owners


def scheme_of(claim: Claim) -> str | None:
    """The scheme of a claim's handle (a scoped one's own: ``@consumer:cmd:…`` is ``cmd``)."""
    return parse_handle(claim.handle).scheme if claim.handle else None


def is_live(claim: Claim) -> bool:
    """Whether the claim's handle is local and cheap enough to re-check on every read."""
    if claim.handle is None:
        return False
    owner = schemes().get(parse_handle(claim.handle).scheme)
    return owner is not None and owner[1].live


def resolve(repo: git.Repo, text: str, *, stream: str | None = None) -> Handle:
    """The handle as it will be stored: validated by its scheme's owner, with revisions
    resolved to full ids. A handle scoped to a sibling of ``stream`` is resolved in the
    sibling (its ``HEAD``), which must be found here."""
    handle = parse_handle(text)
    if handle.scope is not None:
        if stream is None:
            raise UserError(f"handle {text!r} is scoped to a sibling, which only a stream's claims can name")
        there = scoped.require(store.snapshot(repo, stream), handle.scope)
        try:
            return replace(resolve(there, handle.unscoped.text), scope=handle.scope)
        except UserError as error:  # "here" in its words is the sibling
            raise UserError(f"{error} (in sibling {handle.scope}, {there.work_dir or there.common_dir})") from None
    owner = schemes().get(handle.scheme)
    if owner is None:
        known = ", ".join(f"{s}:" for s in sorted(schemes()))
        raise UserError(
            f"unknown handle scheme '{handle.scheme}:' in {text!r}\n"
            f"Known here: {known} (git continuity plugins lists them with examples)"
        )
    resolved: Handle | None = _hook(owner[0].name, "continuity_resolve")(handle=handle, repo=Repository(repo))
    return resolved or handle


def dereference(handles: Iterable[Handle], context: VerifyContext) -> dict[Handle, Observation]:
    """Each handle dereferenced now by the plugin that owns its scheme.

    A plugin that raises, or says nothing of a handle, leaves it ``unknown`` with the
    reason; other plugins' results stand.
    """
    owners = schemes()
    by_plugin: dict[str, list[Handle]] = {}
    results: dict[Handle, Observation] = {}
    for h in dict.fromkeys(handles):
        if h.scheme in owners:
            by_plugin.setdefault(owners[h.scheme][0].name, []).append(h)
        else:
            results[h] = Observation("unknown", f"no installed plugin verifies '{h.scheme}:' handles", "-", "-")
    infos = {p.name: p for p in plugins()}
    network = sum(len(w) for n, w in by_plugin.items() if any(s.network for s in infos[n].schemes))
    if context.progress is not None and network:
        context.progress.start(network)
    for name, wanted in by_plugin.items():
        info = infos[name]
        try:
            answers: Sequence[Mapping[Handle, Observation] | None] = _hook(name, "continuity_verify")(
                handles=wanted, context=context
            )
        except Exception as error:  # a broken plugin must not sink the other verifications
            answers = [
                {h: Observation("unknown", f"verifier {name} failed: {error!r}", name, info.version) for h in wanted}
            ]
        merged: dict[Handle, Observation] = {}
        for answer in answers:
            merged.update(answer or {})
        for h in wanted:
            found = merged.get(h) or Observation("unknown", f"verifier {name} gave no answer", name, info.version)
            if found.waiting is not None and not (isinstance(found.waiting, str) and WAITING.fullmatch(found.waiting)):
                found = replace(found, waiting=None)  # a plugin's odd word for it: judged as not waiting
            results[h] = found
    if context.progress is not None and network:
        context.progress.finish()
    git.keep_answers(inside(context.repo))  # what the trees and the history asked about hold, for the next time
    return results


@dataclass  # not frozen: that costs 0.4 µs more to make one, and a status makes one per claim
class Assessed:
    claim: Claim
    derived: Derived
    observation: Observation | None  # set when dereferenced in this process
    not_asked: bool = False  # a network handle that `verify` left alone (no --online)
    clone: str | None = None  # this clone's id (siblings.clone_id): evidence made of it says so
    # How fresh the state shown is, when the view knew more than where the evidence came from
    # (a remote the fresh look did not reach, a cmd: not approved here); else labels.freshness
    # tells it from the rest.
    freshness: Freshness | None = None


def network_schemes() -> set[str]:
    return {name for name, (_, s) in schemes().items() if s.network}


class _Now:
    """What evidence may have depended on, looked up once and only when asked."""

    def __init__(self, repo: git.Repo, tree: str | None = None) -> None:
        self.repo = repo
        # While a commit is being made, evidence of "the work tree" holds when it ran on the
        # tree being committed.
        self.values: dict[str, str | None] = {"worktree": tree} if tree else {}

    def moved(self, evidence: Evidence) -> dict[str, str | None]:
        for key in evidence.depends_on:
            if key not in self.values:
                if key == "worktree":
                    self.values[key] = git.worktree_tree(self.repo)
                elif key.startswith("refs/"):
                    self.values[key] = git.ref_target(self.repo, key)
        return {k: self.values[k] for k in evidence.depends_on if k in self.values}


@dataclass(frozen=True)
class Asking:
    """How ``assess`` asks the claims.

    Live handles (cheap, local) are always dereferenced; the rest are judged from their last
    evidence, or dereferenced too when ``dereference_all``. Network handles (forges, CI
    servers) are dereferenced only when ``online``: without it nothing touches the network
    and they keep their last evidence. With ``reuse_fresh``, a check whose last evidence is
    verified and still fresh (nothing it depended on moved) is not run again: how a gate
    avoids running the same test suite twice on the same tree. ``tree`` is the tree of a
    commit being made (the commit-msg hook): checks of the tree judge it (VerifyContext.tree).
    ``head`` is the branch and commit that stand for HEAD (VerifyContext.head: a done
    thread's own branch). ``given`` are dereferences made now elsewhere (the fresh look's
    network answers), by the handle's text: taken as made here, never asked again.
    """

    dereference_all: bool = False
    online: bool = False
    reuse_fresh: bool = False
    timeout: float | None = None
    progress: Progress | None = None
    tree: str | None = None
    head: tuple[str, str] | None = None
    given: Mapping[str, Observation] | None = None
    heard: Mapping[str, datetime] | None = None  # Repository._heard


JUDGED = Asking()  # the live handles dereferenced, the rest judged from their last evidence


def assess(
    snap: store.Snapshot, claims: Sequence[Claim], *, at: datetime, policy: Policy, asking: Asking = JUDGED
) -> list[Assessed]:
    """Every claim's state now, asked as ``asking`` says."""
    installed = schemes()
    handles = _parsed(claims)
    rows = [(claim, handles[claim.handle] if claim.handle else None) for claim in claims]
    judge = _Judge(snap, installed, handles.values(), at=at, policy=policy, tree=asking.tree)
    asked = rows if asking.reuse_fresh else [(None, h) for h in handles.values()]
    settled, wanted = _to_ask(
        judge, asked, dereference_all=asking.dereference_all, online=asking.online, given=asking.given
    )
    context = VerifyContext(
        Repository(snap.repo, _heard=asking.heard or {}),
        at,
        online=asking.online,
        policy=policy,
        progress=asking.progress,
        committing=asking.tree is not None,
        tree=asking.tree,
        head=asking.head,
    )
    if asking.timeout is not None:
        context.timeout = asking.timeout
    observed = _ask(wanted, judge.where, context)
    if asking.given:
        observed.update((text, o) for text, o in asking.given.items() if text in handles)
    return _assessed(judge, rows, observed, settled, unasked=asking.dereference_all and not asking.online)


def _parsed(claims: Sequence[Claim]) -> dict[str, Handle]:
    """Each handle parsed once, and looked up by its text from then on: str hashes are kept
    by the string, a Handle's are computed in Python, and a status of 100,000 claims looks
    each one up several times."""
    handles: dict[str, Handle] = {}
    for claim in claims:
        if claim.handle and claim.handle not in handles:
            handles[claim.handle] = parse_handle(claim.handle)
    return handles


class _Judge:
    """A claim's state from a dereference made now, else from its last evidence
    (derive_state): what that evidence depended on, and each scheme's maximum age, looked up
    once for every claim."""

    def __init__(
        self,
        snap: store.Snapshot,
        installed: Mapping[str, tuple[PluginInfo, Scheme]],
        handles: Iterable[Handle],
        *,
        at: datetime,
        policy: Policy,
        tree: str | None,
    ) -> None:
        self.snap, self.installed, self.at, self.policy = snap, installed, at, policy
        self.live_schemes = {name for name, (_, s) in installed.items() if s.live}
        self.network = {name for name, (_, s) in installed.items() if s.network}
        self.where = scoped.locate(snap, [h.scope for h in handles if h.scope])
        self.current: dict[str | None, _Now] = {None: _Now(snap.repo, tree)}
        self.current.update((n, _Now(w.repo)) for n, w in self.where.items() if w.repo)
        self.here = (siblings.clone_id(snap.repo), session.hostname())
        self.ages: dict[str, timedelta] = {}

    def __call__(self, claim: Claim, handle: Handle | None, live: Observation | None) -> Derived:
        scheme = handle.scheme if handle is not None else ""
        if handle is not None and scheme not in self.installed:
            return Derived(
                "unknown", f"no installed plugin verifies '{scheme}:' handles (git continuity plugins)", None
            )
        if handle is not None and handle.scope is not None and self.where[handle.scope].repo is None:
            return Derived("unknown", str(self.where[handle.scope].reason), None)  # whatever its evidence said
        evidence = None if live or claim.handle is None else store.latest_evidence(self.snap, claim.id)
        moved = self.current[handle.scope if handle else None].moved(evidence) if evidence else {}
        age = self.ages.get(scheme)
        if age is None:
            age = self.ages[scheme] = self.policy.max_age(scheme)
        return derive_state(claim, live, evidence, at=self.at, moved=moved, max_age=age, here=self.here)


def _to_ask(
    judge: _Judge,
    asked: Iterable[tuple[Claim | None, Handle | None]],
    *,
    dereference_all: bool,
    online: bool,
    given: Mapping[str, Observation] | None,
) -> tuple[dict[str, Derived], dict[str, Handle]]:
    """The handles to dereference now, by their text; and, where a claim is named with its
    handle (reuse_fresh), the claims whose verified evidence still holds instead (settled)."""
    settled: dict[str, Derived] = {}
    wanted: dict[str, Handle] = {}  # by text; without reuse_fresh, each handle is asked about once
    for owner, handle in asked:
        if (
            handle is None
            or not (dereference_all or handle.scheme in judge.live_schemes)
            or (given and handle.text in given)
        ):
            continue
        if handle.scheme in judge.network and not online:
            continue  # never touch the network unless asked
        if owner is not None and handle.scheme not in judge.live_schemes:  # reuse_fresh
            kept = judge(owner, handle, None)
            if kept.state == "verified" and kept.elsewhere is None:
                settled[owner.id] = kept
                continue
        wanted[handle.text] = handle
    return settled, wanted


def _ask(
    wanted: Mapping[str, Handle], where: Mapping[str, scoped.Where], context: VerifyContext
) -> dict[str, Observation]:
    """What each handle says now, by its text: here, or in the sibling it is scoped to."""
    here_too = [h for h in wanted.values() if h.scope is None]
    observed = {h.text: o for h, o in dereference(here_too, context).items()} if here_too else {}
    if len(here_too) < len(wanted):  # handles scoped to a sibling, each dereferenced there
        there = scoped.dereference([h for h in wanted.values() if h.scope], where, context, dereference)
        observed.update((h.text, o) for h, o in there.items())
    return observed


def _assessed(
    judge: _Judge,
    rows: Sequence[tuple[Claim, Handle | None]],
    observed: Mapping[str, Observation],
    settled: Mapping[str, Derived],
    *,
    unasked: bool,
) -> list[Assessed]:
    """Each claim with its state. ``unasked``: network handles were to be asked, but offline."""
    out = []
    fresh: dict[str, Derived] = {}  # what a dereference made now says rests on the handle alone
    for claim, handle in rows:
        live = observed.get(claim.handle or "") if handle is not None else None
        derived = (settled.get(claim.id) if settled else None) or (fresh.get(claim.handle or "") if live else None)
        if derived is None:
            derived = judge(claim, handle, live)
            if live is not None:
                fresh[claim.handle or ""] = derived
        remote = live is None and handle is not None and handle.scheme in judge.network and claim.id not in settled
        if remote and derived.state == "unchecked":
            derived = replace(derived, observed="never asked: git continuity verify --online asks the service")
        out.append(Assessed(claim, derived, live, remote and unasked, judge.here[0]))
    return out


def evidence_for(assessed: Assessed, at: datetime, taken: set[str], who: session.Who | None = None) -> Evidence | None:
    """The evidence record of a dereference made now (None for prose), stamped with the
    session that made it."""
    obs, claim = assessed.observation, assessed.claim
    if obs is None or claim.handle is None:
        return None
    entry_id = new_id("evidence", taken)
    taken.add(entry_id)
    return Evidence(
        id=entry_id,
        claim=claim.id,
        handle=claim.handle,
        result=obs.result,
        observed=obs.observed,
        verifier=obs.verifier,
        verifier_version=obs.version,
        checked_at=stamp(at),
        host=who.host if who else session.hostname(),
        depends_on=dict(obs.depends_on),
        **(who.stamp() if who else {}),
        waiting=obs.waiting,
        clone=assessed.clone,
    )
