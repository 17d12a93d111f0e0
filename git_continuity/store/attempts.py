"""Attempts, and the progress derived from them: pure data and rules, no repository.

An attempt is one dereference of a thread's checks that ended not verified (``verify``,
``check --closing``, an agent's Stop gate, a refused ``thread close``). Each check in it
carries a fingerprint of what was observed, normalized so that what varies between two runs
of the same failure (temporary paths, times, durations, object ids, process ids) does not
make them look different.

Progress is derived, never typed: a thread made progress when the set of (check,
fingerprint) it fails changed from one attempt to the next (a check that verifies leaves the
set). It is *stalled* when the set stayed the same for the last N attempts across at least M
sessions (policy ``stalled``). A *budget* (attempts, sessions, time) is what a thread may
spend before the stop-loss marks it blocked; it is counted from the attempts made since the
budget was set or the thread reopened (``budget_from``).

A thread is *waiting* when every check of it that does not verify waits on someone else (a
PR open and awaiting review, a pipeline still running: ``Observation.waiting``). Such a
dereference is no attempt: nothing stalls, no budget is spent, and the gate lets the agent
stop. One check that fails otherwise makes the thread fail, not wait.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from git_continuity.clone.machine import exhaustion
from git_continuity.clone.noise import normalize
from git_continuity.errors import UserError
from git_continuity.model import Derived, ago, parse_stamp, shown

STOP_LOSS = "stop-loss"
BUDGET_KEYS = ("attempts", "sessions", "time")
OBSERVED_KEPT = 600  # characters of an observation kept in an attempt (its tail: where failures say why)
QUOTE = 100  # characters of the observation quoted to people
EXHAUSTED = 2  # attempts on one thread that ran the machine out before the stop-loss blocks it
MACHINE_NOTE = (
    "the machine is the limit: it ran out of {what} again; change the shape of the work (less at once:"
    " fewer jobs, smaller batches, less data) or move it to a bigger machine instead of another retry"
)


def fingerprint(handle: str, result: str, observed: str) -> str:
    """16 hex digits naming one kind of observation of one handle. Every observation that
    says the machine ran out (machine.exhaustion) is one kind: an OOM kill after 3 minutes
    and one after 5 are the same failure, whatever else they printed."""
    ran_out = exhaustion(observed)
    seen = f"resource exhaustion: {ran_out}" if ran_out else normalize(observed)
    return hashlib.sha256(f"{handle}\0{result}\0{seen}".encode()).hexdigest()[:16]


def quote(observed: str) -> str:
    """The part of an observation to quote to people: its last non-empty line, short."""
    lines = [line.strip() for line in observed.strip().splitlines() if line.strip()]
    text = lines[-1] if lines else "(nothing observed)"
    return text if len(text) <= QUOTE else text[: QUOTE - 1] + "…"


def kept(observed: str) -> str:
    return observed if len(observed) <= OBSERVED_KEPT else "…" + observed[-(OBSERVED_KEPT - 1) :]


@dataclass(frozen=True)
class AttemptCheck:
    claim: str
    handle: str
    result: str  # the check's state then: verified, contradicted, unknown, unchecked, stale
    fingerprint: str
    observed: str
    evidence: str | None = None  # the evidence entry recorded by the same dereference
    exhausted: str | None = None  # what the machine ran out of, as the whole observation said (clone/machine.py)

    @property
    def failing(self) -> bool:
        return self.result != "verified"


@dataclass(frozen=True)
class Attempt:
    """``.continuity/attempts/<thread>/<time>-<id>.json``: append-only, merged as a union."""

    id: str
    thread: str
    at: str
    via: str  # what tried it: verify, check, stop or close (schema/attempt.schema.json)
    host: str
    checks: tuple[AttemptCheck, ...]
    commit: str | None = None  # HEAD then
    tree: str | None = None  # the work tree's tree then
    session: str | None = None
    agent: str | None = None

    @property
    def failing(self) -> frozenset[tuple[str, str]]:
        return frozenset((c.claim, c.fingerprint) for c in self.checks if c.failing)

    @property
    def exhausted(self) -> str | None:
        """What the machine ran out of in this attempt, if a failing check says so."""
        return next((c.exhausted for c in self.checks if c.failing and c.exhausted), None)

    @property
    def who(self) -> str:
        """The session it was made in (a host stands in for entries without one)."""
        return self.session or f"host {self.host}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "thread": self.thread,
            "at": self.at,
            "via": self.via,
            "host": self.host,
            "checks": [{k: v for k, v in vars(c).items() if v is not None} for c in self.checks],
        }
        for key in ("commit", "tree", "session", "agent"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Attempt:
        checks = tuple(AttemptCheck(**c) for c in data["checks"])
        return cls(**{**data, "checks": checks})


# -- budgets --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    attempts: int | None = None
    sessions: int | None = None
    time: timedelta | None = None

    def __bool__(self) -> bool:
        return any(v is not None for v in (self.attempts, self.sessions, self.time))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.attempts is not None:
            data["attempts"] = self.attempts
        if self.sessions is not None:
            data["sessions"] = self.sessions
        if self.time is not None:
            data["time"] = duration_text(self.time)
        return data

    def text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.to_json().items()) or "none"


def duration_text(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


# At most five digits a unit (99999d is 273 years): a date that far from now is still a date.
DURATION = re.compile(r"^(\d{1,5})(s|m|h|d)$")


def duration(text: str) -> timedelta:
    match = DURATION.match(text.strip())
    if not match:
        raise ValueError(text)
    return timedelta(seconds=int(match.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)])


def parse_budget(text: str, where: str = "--budget") -> Budget:
    """``attempts=N,sessions=N,time=8h`` (any of them); bad input names the part."""
    found: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if key not in BUDGET_KEYS:
            raise UserError(f"{where}: unknown key {key!r} in {part!r} (known: attempts, sessions, time)")
        if not sep or not value:
            raise UserError(f"{where}: {key} needs a value, e.g. {key}={'8h' if key == 'time' else '3'}")
        if value.startswith("-"):
            raise UserError(f"{where}: {key}={value} is negative; a budget is 1 or more")
        if key == "time":
            try:
                span = duration(value)
            except ValueError:
                raise UserError(
                    f"{where}: time={value} is not a duration such as 30m, 8h or 2d (at most 99999 of a unit)"
                ) from None
            if not span:
                raise UserError(f"{where}: time={value} is no time at all; a budget is 1 or more")
            found[key] = span
        else:
            if not value.isdigit() or int(value) < 1 or int(value) > 99999:
                raise UserError(f"{where}: {key}={value} is not a whole number from 1 to 99999")
            found[key] = int(value)
    if not found:
        raise UserError(f"{where}: give at least one of attempts=N, sessions=N, time=8h")
    return Budget(**found)


def budget_from_json(data: dict[str, Any] | None) -> Budget:
    if not data:
        return Budget()
    time = data.get("time")
    return Budget(data.get("attempts"), data.get("sessions"), duration(str(time)) if time else None)


# -- the course of a thread -----------------------------------------------------------------


@dataclass(frozen=True)
class Course:
    """What a thread's attempts say: when what it fails changed, whether it is stalled, and
    how much of its budget is spent."""

    attempts: tuple[Attempt, ...]  # oldest first
    changes: tuple[Attempt, ...]  # the attempts whose failing set differs from the one before
    run: tuple[Attempt, ...]  # the latest attempts with the same failing set
    stalled: bool
    counted: tuple[Attempt, ...]  # the attempts the budget counts (since budget_from)
    budget: Budget
    spent: tuple[str, ...] = field(default=())  # each part of the budget spent, e.g. "attempts 3 of 3"

    @property
    def run_sessions(self) -> int:
        return len({a.who for a in self.run})

    def used(self) -> dict[str, Any]:
        span = _span(self.counted)
        return {
            "attempts": len(self.counted),
            "sessions": len({a.who for a in self.counted}),
            "time": duration_text(span),
        }


def ordered(attempts: Sequence[Attempt]) -> list[Attempt]:
    """Oldest first by the time each clone wrote, then by id: a clone whose clock is off puts
    its attempts in the wrong place, never out of the list."""
    return sorted(attempts, key=lambda a: (parse_stamp(a.at), a.id))


def _span(attempts: Sequence[Attempt]) -> timedelta:
    if len(attempts) < 2:
        return timedelta(0)
    return max(timedelta(0), parse_stamp(attempts[-1].at) - parse_stamp(attempts[0].at))


def course(
    attempts: Sequence[Attempt],
    *,
    budget: Budget,
    budget_from: str | None,
    stall_attempts: int,
    stall_sessions: int,
) -> Course:
    listed = ordered(attempts)
    changes: list[Attempt] = []
    run: list[Attempt] = []
    for a in listed:
        if not run or a.failing != run[-1].failing:
            changes.append(a)
            run = []
        run.append(a)
    sessions = len({a.who for a in run})
    stalled = len(run) >= stall_attempts and sessions >= stall_sessions
    start = parse_stamp(budget_from) if budget_from else None
    counted = tuple(a for a in listed if start is None or parse_stamp(a.at) >= start)
    spent = []
    if budget.attempts is not None and len(counted) >= budget.attempts:
        spent.append(f"attempts {len(counted)} of {budget.attempts}")
    used_sessions = len({a.who for a in counted})
    if budget.sessions is not None and used_sessions >= budget.sessions:
        spent.append(f"sessions {used_sessions} of {budget.sessions}")
    if budget.time is not None and counted and _span(counted) >= budget.time:
        spent.append(f"time {duration_text(_span(counted))} of {duration_text(budget.time)}")
    ran_out = sum(1 for a in counted if a.exhausted)
    if ran_out >= EXHAUSTED:  # retrying the same shape on the same machine will not help
        spent.append(f"resource exhaustion {ran_out} of {EXHAUSTED}")
    return Course(tuple(listed), tuple(changes), tuple(run), stalled, counted, budget, tuple(spent))


# -- waiting on someone else ----------------------------------------------------------------


def waiting_on(checks: Sequence[Derived]) -> tuple[str, ...]:
    """What a thread's checks wait on (``("review",)``) when every one of them that does not
    verify waits on someone else; ``()`` when one fails otherwise, or none waits."""
    pending = [d for d in checks if d.state != "verified"]
    if not pending or any(d.waiting is None for d in pending):
        return ()
    return tuple(dict.fromkeys(str(d.waiting) for d in pending))


@dataclass(frozen=True)
class Waiting:
    """A thread waiting on someone else, since the first observation of it."""

    on: tuple[str, ...]  # e.g. ("review",), ("review", "CI")
    since: str  # the first of the latest run of waiting observations (of its earliest check)
    claims: tuple[str, ...]  # the checks that wait

    def text(self, at: datetime) -> str:
        when = f"{shown(self.since)} UTC ({ago(parse_stamp(self.since), at)})"
        return f"waiting on {' and '.join(self.on)} since {when}; don't retry"

    def to_json(self, at: datetime) -> dict[str, Any]:
        return {"on": list(self.on), "since": self.since, "claims": list(self.claims), "text": self.text(at)}
