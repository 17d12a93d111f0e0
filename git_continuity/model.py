"""Pure data: claims, handles, evidence, journal entries, the packet, and derived states.

Nothing here touches a repository, so every rule can be tested on plain values.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections.abc import Container, Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Literal

from git_continuity.constants import ID_ALPHABET, ID_CHARS, SIBLING_RE, THREAD_ID
from git_continuity.errors import UserError

if TYPE_CHECKING:  # typeshed's name for "an instance of any dataclass"
    from _typeshed import DataclassInstance

State = Literal["verified", "contradicted", "unknown", "unchecked", "stale", "prose"]
Result = Literal["verified", "contradicted", "unknown"]
STATES: tuple[State, ...] = ("verified", "contradicted", "unknown", "unchecked", "stale", "prose")

# A writer re-draws an id already taken in the state it writes to (constants.ID_ALPHABET).
ID_PREFIXES = {
    "claim": "c",
    "blocker": "b",
    "journal": "j",
    "evidence": "e",
    "objective": "o",
    "thread": "t",
    "session": "s",
    "handoff": "h",
    "conflict": "x",
    "attempt": "a",
}
ThreadStatus = Literal["open", "watching", "blocked", "waiting", "done", "cancelled"]
THREAD_STATUSES: tuple[ThreadStatus, ...] = ("open", "watching", "blocked", "waiting", "done", "cancelled")
STATUS_WIDTH = max(len(s) for s in THREAD_STATUSES)  # the status column of status and thread list
SCHEME_RE = re.compile(r"^[a-z][a-z0-9-]*$")


def new_id(kind: str, taken: Container[str] = ()) -> str:
    """A fresh short id such as ``c-k7m2qx`` that is not in ``taken``."""
    prefix = ID_PREFIXES[kind]
    while True:
        candidate = prefix + "-" + "".join(secrets.choice(ID_ALPHABET) for _ in range(6))
        if candidate not in taken:
            return candidate


def now() -> datetime:
    return datetime.now(timezone.utc)


@functools.lru_cache(maxsize=64)  # a status stamps one moment on each of 100,000 claims
def stamp(moment: datetime) -> str:
    """ISO 8601 in UTC to the millisecond, as stored: ``2026-11-30T10:15:02.123Z`` (entries
    made in one second still sort in the order they were made)."""
    utc = moment.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_stamp(text: str) -> datetime:
    """A stored time; the fraction is optional (people edit packet.yaml by hand)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def shown(text: str) -> str:
    """A stored time for people: ``2026-11-30 10:15:02``."""
    return text[:19].replace("T", " ")


def sortable_name(moment: datetime, entry_id: str) -> str:
    """A file name that sorts by time, to the microsecond: ``20261130T101502.123456Z-j-k7m2qx``."""
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ") + "-" + entry_id


def ago(moment: datetime, reference: datetime) -> str:
    """'just now', '5 minutes ago', '3 days ago': for people, never stored."""
    seconds = int((reference - moment).total_seconds())
    if seconds < 0:
        return "in the future (check the clocks)"
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"


@dataclass(frozen=True, repr=False)
class Handle:
    """An address plus an expectation: ``scheme:body``, e.g. ``tag:v1.2=9c1e…``; scoped to a
    sibling repository, ``@scope:scheme:body`` (dereferenced there: store/siblings.py)."""

    scheme: str
    body: str
    scope: str | None = None

    @property
    def text(self) -> str:
        return f"{'@' + self.scope + ':' if self.scope else ''}{self.scheme}:{self.body}"

    def __repr__(self) -> str:  # as before scopes, for a handle without one (GIT_CONTINUITY_TRACE shows it)
        scope = f", scope={self.scope!r}" if self.scope else ""
        return f"Handle(scheme={self.scheme!r}, body={self.body!r}{scope})"

    @property
    def unscoped(self) -> Handle:
        """The handle as the sibling's verifier sees it: the same address, no scope."""
        return Handle(self.scheme, self.body)


@functools.cache  # a Handle is frozen; a read of 1,000 claims parses each handle four times
def parse_handle(text: str) -> Handle:
    """``scheme:body``, or ``@NAME:scheme:body`` for a handle scoped to sibling NAME (one
    sibling: a scope inside a scope is refused)."""
    scope, whole = None, text
    if text.startswith("@"):
        name, sep, rest = text[1:].partition(":")
        if not sep or not SIBLING_RE.match(name) or rest.startswith("@"):
            raise UserError(
                f"handle {text!r} is not of the form @SIBLING:scheme:address, e.g. @api:pushed:HEAD@origin/main\n"
                "(a sibling's name: lower-case letters, digits, '-' and '_'; one sibling per handle; "
                "git continuity repo list names them)"
            )
        scope, text = name, rest
    scheme, sep, body = text.partition(":")
    if not sep or not SCHEME_RE.match(scheme):
        hint = "(git continuity plugins lists the schemes this machine knows)"
        if sep and SCHEME_RE.match(scheme.lower()):
            hint = f"(schemes are lower case: did you mean {scheme.lower()}:{body}?)"
        if scope is not None:
            raise UserError(
                f"handle {whole!r} names sibling {scope!r} but no handle of the form scheme:address after it, "
                f"e.g. @{scope}:pushed:HEAD@origin/main\n{hint}"
            )
        raise UserError(f"handle {text!r} is not of the form scheme:address, e.g. commit:HEAD or tag:v1.2\n{hint}")
    return Handle(scheme, body, scope)


@dataclass(frozen=True)
class Observation:
    """What one dereference of a handle found, as a verifier reports it."""

    result: Result
    observed: str
    verifier: str
    version: str
    # What the result depended on, e.g. {"refs/remotes/origin/main": "<oid>"}; when any of
    # these moves, recorded evidence turns stale.
    depends_on: Mapping[str, str] = field(default_factory=dict)
    # Not decided by us: what it waits on someone else for ("review", "CI"), e.g. a PR open
    # and awaiting review, a pipeline still running. Retrying cannot change it.
    waiting: str | None = None


@dataclass
class Objective:
    text: str
    why: str
    set_at: str
    set_by: str


@dataclass
class Blocker:
    id: str
    text: str
    added_at: str
    added_by: str
    done_at: str | None = None
    thread: str | None = None  # the thread it holds back (planning.held_by); None: the stream


@dataclass
class Packet:
    """The person-edited part of the state (``packet.yaml``)."""

    objective: Objective | None
    next_action: str | None
    blockers: list[Blocker]

    def open_blockers(self) -> list[Blocker]:
        return [b for b in self.blockers if b.done_at is None]


@dataclass
class Claim:
    id: str
    text: str
    added_at: str
    added_by: str
    host: str
    handle: str | None = None  # None: prose, shown but never trusted
    written: str | None = None  # the handle as typed, when resolving changed it
    thread: str | None = None
    session: str | None = None  # the session that wrote it (clone/session.py), and its agent
    agent: str | None = None
    # A thread's check retracted while the thread is open: it stays on the thread, shown with
    # its reason (why, at, by, session), and the thread closes only with --accept-withdrawn.
    withdrawn: dict[str, Any] | None = None


@dataclass
class Thread:
    """An open piece of work. Its acceptance checks are the claims whose ``thread`` is its id."""

    id: str
    title: str
    status: ThreadStatus
    added_at: str
    added_by: str
    host: str
    closed_at: str | None = None  # set when closed through a verified gate
    closed_by: str | None = None  # the commit whose message closed it (the post-commit hook)
    closed_on: str | None = None  # the branch checked out where it was closed: where its work is
    session: str | None = None
    agent: str | None = None
    budget: dict[str, Any] | None = None  # attempts, sessions, time (attempts.Budget)
    budget_from: str | None = None  # attempts from then on count against it (set on reopening)
    blocked: dict[str, Any] | None = None  # set by the stop-loss: reason, at, spent, attempts, evidence
    # Closed although checks were withdrawn (thread close --accept-withdrawn): why, at, by,
    # session and the withdrawn checks' ids; shown as "done with N withdrawn checks".
    accepted_withdrawn: dict[str, Any] | None = None
    after: list[str] | None = None  # threads that must be done before this one is ready (store/planning.py)
    priority: int | None = None  # 0 (highest) to 4; None: the default, 2
    cancelled: dict[str, Any] | None = None  # thread cancel: why, at, by, host, session


@dataclass
class Evidence:
    id: str
    claim: str
    handle: str
    result: Result
    observed: str
    verifier: str
    verifier_version: str
    checked_at: str
    host: str
    depends_on: dict[str, str] = field(default_factory=dict)
    session: str | None = None
    agent: str | None = None
    waiting: str | None = None  # what the observation waited on someone else for (Observation.waiting)
    clone: str | None = None  # the clone that derived it (siblings.clone_id); None: written before clones had ids


def reported_elsewhere(evidence: Evidence, clone: str | None, host: str) -> str | None:
    """What to say of evidence another clone derived ("reported by host-b (session s-…), not
    re-derived here"), or None when this clone derived it. Evidence written before clones had
    ids says only its host."""
    if (evidence.clone == clone) if evidence.clone is not None else evidence.host == host:
        return None
    who = f"another clone on {evidence.host}" if evidence.host == host else evidence.host
    return f"reported by {who}{f' (session {evidence.session})' if evidence.session else ''}"


# What a journal entry is, and so how long it stays live (policy ``lifespans``): a decision
# lasts the project's life, a finding a month, a note (the default) a week.
JOURNAL_KINDS = ("decision", "finding", "note")


@dataclass
class JournalEntry:
    id: str
    text: str
    at: str
    by: str
    host: str
    session: str | None = None
    agent: str | None = None
    handoff: str | None = None  # set on the entry a handoff writes: the handoff it summarizes
    kind: str | None = None  # decision or finding; None is a note (entries written before kinds, too)


@dataclass
class ObjectiveChange:
    id: str
    old: str | None
    new: str | None  # None: the objective was removed (git continuity edit)
    why: str
    at: str
    by: str
    host: str | None = None
    session: str | None = None
    agent: str | None = None


def to_json(entry: DataclassInstance) -> dict[str, Any]:
    """A dataclass as stored: keys with a None value are left out."""
    return {k: v for k, v in asdict(entry).items() if v is not None}


@dataclass(frozen=True)
class Derived:
    """A claim's state right now, with what was observed and when."""

    state: State
    observed: str
    checked_at: str | None
    waiting: str | None = None  # from an observation that waits on someone else, while it applies
    # Set when the state rests on evidence another clone derived (reported_elsewhere): shown
    # as its report, and never enough to close anything here.
    elsewhere: str | None = None


# How fresh what a view shows of a claim is (view/assessed.py sets it, labels.freshness_text words it):
# "now", re-derived now; "recorded" here, not asked now; "reported" by another clone; "unapproved",
# a cmd: check not approved here (it cannot be re-derived here until a person approves it);
# "none", nothing to show.
@dataclass(frozen=True)
class Freshness:
    kind: str  # now, recorded, reported, unapproved or none
    since: str | None = None  # when what is shown was derived (recorded, reported, unapproved)
    why: str | None = None  # recorded: why it was not asked now; unapproved: who reported its last result
    elsewhere: str | None = None  # reported (and unapproved): who reported it


def derive_state(
    claim: Claim,
    live: Observation | None,
    evidence: Evidence | None,
    *,
    at: datetime,
    moved: Mapping[str, str | None],
    max_age: timedelta,
    here: tuple[str | None, str] | None = None,
) -> Derived:
    """The one rule that turns a claim, a live dereference and its last evidence into a state.

    ``live`` is a dereference made just now (local handles are cheap enough to re-check on
    every read). Otherwise the last evidence counts, unless it is older than ``max_age`` or
    something it depended on has moved since: ``moved`` maps each dependency to its value now.
    ``here`` is this clone's id and host: evidence another clone derived is shown as its
    report (``elsewhere``).
    """
    if claim.handle is None:
        return Derived("prose", "no handle: shown, never trusted", None)
    if live is not None:
        return Derived(live.result, live.observed, stamp(at), live.waiting)
    if evidence is not None and evidence.handle != claim.handle:
        evidence = None  # recorded for another handle (the claim was edited since): says nothing
    if evidence is None:
        return Derived("unchecked", "never dereferenced: run git continuity verify", None)
    found = _from_evidence(evidence, at=at, moved=moved, max_age=max_age)
    origin = reported_elsewhere(evidence, *here) if here is not None else None
    if origin is None:
        return found
    said = f"{origin} {ago(parse_stamp(evidence.checked_at), at)}, not re-derived here"
    return replace(found, observed=f"{said}: {found.observed}", elsewhere=origin)


def _from_evidence(evidence: Evidence, *, at: datetime, moved: Mapping[str, str | None], max_age: timedelta) -> Derived:
    checked = parse_stamp(evidence.checked_at)
    changed = [k for k, v in evidence.depends_on.items() if k in moved and moved[k] != v]
    if changed:
        return Derived(
            "stale",
            f"{', '.join(changed)} moved since it was {evidence.result} {ago(checked, at)}: {evidence.observed}",
            evidence.checked_at,
        )
    if at - checked > max_age:
        return Derived(
            "stale",
            f"too old to trust: it was {evidence.result} {ago(checked, at)}: {evidence.observed}",
            evidence.checked_at,
        )
    return Derived(evidence.result, evidence.observed, evidence.checked_at, evidence.waiting)


# A closing keyword right after one of these words claims nothing.
NEGATED = re.compile(r"\b(?:not|never|doesn't|don't|won't|didn't|cannot|can't)\s+$", re.IGNORECASE)


def closing_ids(message: str, keywords: Iterable[str]) -> list[str]:
    """Thread ids a commit message claims to close: a keyword, then the id ("closes t-k7m2qx")."""
    words = "|".join(re.escape(k) for k in keywords)
    text = "\n".join(line for line in message.splitlines() if not line.startswith("#"))
    pattern = re.compile(rf"\b(?:{words})\b[:\s]+((?:t-{ID_CHARS}{{6}}[,\s]*(?:and\s+)?)+)", re.IGNORECASE)
    found: list[str] = []
    for match in pattern.finditer(text):
        if NEGATED.search(text[max(0, match.start() - 16) : match.start()]):
            continue  # "does not close t-…", "never fixes t-…": a sentence about the thread, no claim
        found += [i for i in map(str.lower, THREAD_ID.findall(match.group(1))) if i not in found]
    return found
