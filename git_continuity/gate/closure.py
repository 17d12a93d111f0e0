"""Whether a thread may be called done: every acceptance check verified *now*.

One judgement serves `thread close`, `check --closing` and the hooks, so the three can never
disagree. A thread with no check that can verify (none, or only prose) never closes. The gate
(``gate``) is what `git continuity check`, the state hook and an agent's stop hook ask.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import session
from git_continuity.errors import UserError
from git_continuity.model import Claim, Evidence, Thread, now, stamp
from git_continuity.plugins import verify
from git_continuity.plugins.verify import Assessed
from git_continuity.render import text as render
from git_continuity.store import attempts
from git_continuity.store import policy as policies
from git_continuity.store.policy import Policy
from git_continuity.view import stoploss


@dataclass(frozen=True)
class Verdict:
    thread: Thread
    checks: list[Assessed]  # the thread's own claims
    policy_checks: list[Assessed]  # closing_checks from .continuity.yaml, judged the same way
    undone: str | None = None  # a done thread that no longer holds: why (view.ThreadView.undone)
    withdrawn: list[Claim] = field(default_factory=list)  # checks retracted while it was open
    accepted: str | None = None  # thread close --accept-withdrawn: why that is acceptable

    @property
    def ok(self) -> bool:
        if self.undone or (self.withdrawn and not self.accepted):
            return False
        checked = self.checks + self.policy_checks
        # Only what this clone derived closes: another clone's evidence is its report (model.reported_elsewhere).
        held = all(a.derived.state == "verified" and a.derived.elsewhere is None for a in checked)
        return any(a.claim.handle for a in self.checks) and held

    @property
    def waiting(self) -> bool:
        """Not done, and nothing to retry: every check that does not verify waits on someone
        else (attempts.waiting_on); one that fails otherwise makes the thread fail."""
        checked = self.checks + self.policy_checks
        return any(a.claim.handle for a in self.checks) and bool(attempts.waiting_on([a.derived for a in checked]))

    def why_not(self) -> str:
        if self.undone:
            return f"it is done, but no longer holds: {self.undone}"
        if self.withdrawn and not self.accepted and (not self.checks or self._held()):
            n = len(self.withdrawn)
            named = "; ".join(
                f"{c.id} {c.handle or 'prose'}: {(c.withdrawn or {}).get('why', '')}" for c in self.withdrawn
            )
            return (
                f"{n} of its checks {'was' if n == 1 else 'were'} withdrawn while it was open ({named}); it closes "
                f'only with: git continuity thread close {self.thread.id} --accept-withdrawn "why that is acceptable"'
            )
        if not self.checks:
            return "it has no acceptance checks (add one: git continuity claim add TEXT --check HANDLE --thread ID)"
        if not any(a.claim.handle for a in self.checks):
            return "its only checks are prose, which never verify (add a check with a handle)"
        failing = [a for a in self.checks + self.policy_checks if a.derived.state != "verified"]
        total = len(self.checks) + len(self.policy_checks)
        reported = [
            a for a in self.checks + self.policy_checks if a.derived.state == "verified" and a.derived.elsewhere
        ]
        if reported and not failing:
            return (
                f"{len(reported)} of {total} checks {_is(reported)} verified only by another clone's report, not "
                "re-derived here (git continuity verify --online derives them here)"
            )
        return f"{len(failing)} of {total} checks {_is(failing)} not verified now"

    def _held(self) -> bool:
        checked = self.checks + self.policy_checks
        return all(a.derived.state == "verified" and a.derived.elsewhere is None for a in checked)

    def lines(self) -> list[str]:
        out = render.claim_lines(self.checks)
        if self.policy_checks:
            out.append("  policy (.continuity.yaml closing_checks):")
            out += render.claim_lines(self.policy_checks)
        return out


def _policy_claims(snap: store.Snapshot, policy: Policy, at: datetime) -> list[Claim]:
    claims = []
    for n, text in enumerate(policy.closing_checks, 1):
        try:
            handle = verify.resolve(snap.repo, text, stream=snap.stream).text
        except UserError as error:
            raise UserError(f"{policy.source}: closing_checks entry {n} ({text!r}): {error}") from None
        claims.append(
            Claim(id=f"p-{n}", text=f"policy: {text}", added_at=stamp(at), added_by="policy", host="-", handle=handle)
        )
    return claims


def judge(
    snap: store.Snapshot,
    threads: Sequence[Thread],
    claims: Iterable[Claim],
    *,
    at: datetime,
    policy: Policy,
    online: bool = False,
    tree: str | None = None,
    accept: str | None = None,
) -> list[Verdict]:
    """Dereference every check of these threads now (reusing fresh verified evidence of
    costly checks, e.g. a test command already run on this very tree). ``tree``: the tree of
    the commit being made (commit-msg), which checks of the tree judge instead of HEAD's.
    Withdrawn checks are not judged; a thread that has any closes only with ``accept``
    (thread close --accept-withdrawn)."""
    claims = list(claims)
    own = {t.id: [c for c in claims if c.thread == t.id and c.withdrawn is None] for t in threads}
    withdrawn = {t.id: [c for c in claims if c.thread == t.id and c.withdrawn is not None] for t in threads}
    extra = _policy_claims(snap, policy, at) if threads else []
    every = [c for cs in own.values() for c in cs] + extra
    assessed = {
        a.claim.id: a
        for a in verify.assess(
            snap,
            every,
            at=at,
            policy=policy,
            asking=verify.Asking(dereference_all=True, online=online, reuse_fresh=True, tree=tree),
        )
    }
    return [
        Verdict(
            t,
            [assessed[c.id] for c in sorted(own[t.id], key=lambda c: (c.added_at, c.id))],
            [assessed[c.id] for c in extra],
            withdrawn=sorted(withdrawn[t.id], key=lambda c: (c.added_at, c.id)),
            accepted=accept,
        )
        for t in threads
    ]


def evidence_of(verdicts: Sequence[Verdict], at: datetime, who: session.Who) -> list[Evidence]:
    """The evidence of every check dereferenced now: what a close records."""
    taken: set[str] = set()
    found = [verify.evidence_for(a, at, taken, who) for v in verdicts for a in v.checks]
    return [e for e in found if e is not None]


def _is(counted: Sequence[object]) -> str:
    return "is" if len(counted) == 1 else "are"


def elsewhere(verdict: Verdict) -> tuple[list[str], bool]:
    """The schemes of the verdict's failing checks that hold only once a commit has left the
    machine (pushed:, and the network schemes: a forge's PR or CI), e.g. ["pushed:"]; and
    whether anything else keeps it from verifying too (another check, or no check at all)."""
    later = {"pushed"} | verify.network_schemes()
    checked = verdict.checks + verdict.policy_checks
    failing = [(a.claim.handle or "").partition(":")[0] for a in checked if a.derived.state != "verified"]
    found = sorted({f"{s}:" for s in failing if s in later})
    return found, not found or any(s not in later for s in failing)


def refusal_advice(failing: Sequence[Verdict]) -> list[str]:
    """How to go on from a refused commit. A check that holds only once the commit has left
    the machine (pushed:, a forge's PR or CI) cannot verify while it is being made: the order
    that works is to commit, push, and close the thread then."""
    later = {v.thread.id: elsewhere(v) for v in failing}
    local = [thread_id for thread_id, (_, other) in later.items() if other]
    said = [f"Make the checks pass first, or leave the closing claim ({', '.join(local)}) out of the commit message."]
    said = said if local else []
    return said + [
        f"{thread_id} checks what holds only once this commit has left the machine ({', '.join(schemes)}): "
        f"leave the closing claim out, commit, push, then git continuity thread close {thread_id}"
        for thread_id, (schemes, _) in later.items()
        if schemes
    ]


def record(
    snap: store.Snapshot,
    verdicts: Sequence[Verdict],
    *,
    at: datetime,
    close: bool,
    via: str | None = None,
    rules: Policy | None = None,
    closed_by: str | None = None,
) -> stoploss.Recorded:
    """Write the evidence of what was dereferenced now, the attempt of each thread that did
    not verify (``via`` says what tried it: close, check, stop; None records none), and close
    the threads whose verdict is ok when ``close`` (``closed_by``: the commit whose message
    closed them, when one did): one commit. Returns what it added; a
    thread whose attempt spent its budget is blocked by the stop-loss (view/stoploss.py).

    The commit-msg and pre-push guards pass no ``via``: a refused commit or push leaves the
    state as it was (tests/test_hooks_plain.py), and the agent meets the same checks at the
    gate, which counts them."""
    taken: set[str] = set()
    files: dict[str, bytes | None] = {}
    closed = []
    who = session.who(snap.repo)
    branch = git.current_branch(snap.repo) if close else None  # where its work is (view._holding_branch)
    proven: dict[str, str] = {}
    for v in verdicts:
        for a in v.checks:
            # On a close, all of it; otherwise only costly results worth reusing (a test run on
            # this tree), so that a gate polled by an agent does not add a commit each time.
            obs = a.observation
            decided = obs is not None and (obs.result != "unknown" or obs.waiting is not None)
            costly = decided and not verify.is_live(a.claim)
            if (close and v.ok) or costly:
                evidence: Evidence | None = verify.evidence_for(a, at, taken, who)
                if evidence:
                    files[store.evidence_path(evidence, at)] = store.entry_bytes(evidence)
                    proven[a.claim.id] = evidence.id
        if close and v.ok and v.thread.status != "done":
            done = replace(v.thread, status="done", closed_at=stamp(at), closed_by=closed_by, closed_on=branch)
            if v.withdrawn and v.accepted:
                done.accepted_withdrawn = {
                    "why": v.accepted,
                    "at": stamp(at),
                    "by": who.by,
                    **({"session": who.session} if who.session else {}),
                    "checks": [c.id for c in v.withdrawn],
                }
            files[store.thread_path(done.id)] = store.entry_bytes(done)
            closed.append(done)
    recorded = stoploss.Recorded({}, [], [])
    if via is not None:
        rules = rules or policies.load(snap.repo.work_dir)
        tried = [(v.thread, v.checks) for v in verdicts if not v.ok]
        recorded = stoploss.record(snap, tried, at=at, via=via, rules=rules, evidence=proven, who=who)
    files.update(recorded.files)
    if not files:
        return recorded
    if closed:
        message = "thread close " + ", ".join(f"{t.id}: {t.title}" for t in closed)
        message += "\n\nevery check verified now; evidence recorded"
    else:
        message = f"verify: checks of {', '.join(v.thread.id for v in verdicts)} (evidence of costly checks)"
    if recorded.attempts:
        message += "\n\n" + stoploss.message(recorded)
    store.update(snap.repo, snap.stream, lambda s: store.Change(message, files))
    recorded.files = files
    return recorded


@dataclass(frozen=True)
class Gate:
    """The gate's verdict on a stream that has state."""

    closing: bool  # every open thread must verify now (else: every done thread still holds)
    verdicts: list[Verdict]
    failing: list[Verdict]
    problems: list[str]  # the state is malformed
    stopped: list[stoploss.Stopped] = field(default_factory=list)  # blocked by the stop-loss now
    # Open threads waiting on someone else (a review, CI): not done, but they do not hold it.
    waiting: list[tuple[Verdict, attempts.Waiting]] = field(default_factory=list)
    at: datetime = field(default_factory=now)

    @property
    def exit_code(self) -> int:
        """2 for a malformed state, 1 when a thread fails, else 0 (the commands' contract)."""
        return 2 if self.problems else 1 if self.failing else 0

    def summary(self) -> str:
        if self.problems:
            n = len(self.problems)
            return f"The state is malformed ({n} problem{'s' if n != 1 else ''})."
        n = len(self.failing)
        if not self.closing:
            if self.failing:
                return f"{n} done thread{'s no longer hold' if n != 1 else ' no longer holds'}."
            return "The state is well-formed; every done thread still holds."
        if not self.verdicts:
            return "No open threads: none waits to be closed."
        if self.failing:
            unproved = [v.thread.id for v in self.failing if not v.undone]
            undone = [v.thread.id for v in self.failing if v.undone]
            said = []
            if unproved:
                u = len(unproved)
                said.append(f"{u} open thread{'s' if u != 1 else ''} ({', '.join(unproved)}) not verified now")
            if undone:
                u = len(undone)
                held = "s no longer hold" if u != 1 else " no longer holds"
                said.append(f"{u} done thread{held} ({', '.join(undone)})")
            return f"Not done: {'; '.join(said)}."
        if self.waiting:
            w = len(self.waiting)
            ids = ", ".join(v.thread.id for v, _ in self.waiting)
            return f"Nothing to retry: {w} open thread{'s' if w != 1 else ''} ({ids}) waiting on someone else."
        return f"Done: every open thread verifies now ({', '.join(self.closable)}); {self.close_hint()}"

    @property
    def closable(self) -> list[str]:
        """Open threads whose every check verifies now: a check closes none of them."""
        return [v.thread.id for v in self.verdicts if v.ok and v.thread.status != "done"]

    def close_hint(self) -> str:
        ids = self.closable
        if len(ids) == 1:
            return f"close it with: git continuity thread close {ids[0]}"
        return "close each with: git continuity thread close ID"

    def waiting_line(self) -> str:
        """One line for an agent let stop while threads wait on someone else."""
        return "; ".join(f"{v.thread.id} {w.text(self.at)}" for v, w in self.waiting)

    def report(self) -> list[str]:
        """The verdict for people (and for an agent's stop hook): what fails and why."""
        lines = [self.summary()]
        for v in self.failing:
            lines.append(f'\n{v.thread.id} "{v.thread.title}": {v.why_not()}')
            lines += v.lines()
        lines += [f"problem: {p}" for p in self.problems]
        lines += [f'{v.thread.id} "{v.thread.title}": {w.text(self.at)}' for v, w in self.waiting]
        if self.closing and self.failing:
            lines.append(
                "\nMake these checks pass, or park a thread that is not finished with: "
                "git continuity thread set ID waiting|watching|blocked"
            )
        return lines + stoploss.stopped_lines(self.stopped)


def gate(
    snap: store.Snapshot, *, closing: bool, online: bool, via: str | None = None, skip: frozenset[str] = frozenset()
) -> Gate:
    """The gate on a stream that has state: it is well-formed; with ``closing``, every open
    thread verifies now, and with or without it every done thread still holds (view: its
    closing commit is on a branch, its cheap checks are not contradicted). It closes nothing:
    closing is ``thread close``, a commit message through the hooks, or the MCP tool. Threads
    parked as waiting, watching or blocked do not hold it, nor do open ones whose checks wait
    on someone else (``waiting``). With ``via`` (stop, for an agent's Stop hook) a thread
    that does not verify makes an attempt, and one whose attempt spends its budget is blocked
    by the stop-loss and no longer holds the gate (``stopped``); ``check`` passes none and
    writes nothing. Threads in ``skip`` (another live session claimed them: the Stop gate)
    are neither judged nor held to."""
    from git_continuity.view import assessed as view

    problems = store.all_problems(snap)
    moment = now()
    rules = policies.load(snap.repo.work_dir)
    verdicts: list[Verdict] = []
    stopped: list[stoploss.Stopped] = []
    # Only the threads and their checks: a claim of no thread says nothing about done.
    ids = list(store.read_threads(snap)) if not problems else []
    seen = view.assess(snap, at=moment, policy=rules, thread_ids=ids, with_waiting=False) if not problems else None
    if seen is not None and closing:
        chosen = [tv.thread for tv in seen.open if tv.thread.id not in skip]
        claims = store.read_claims(snap).values()
        verdicts = judge(snap, chosen, claims, at=moment, policy=rules, online=online)
        if via is not None:  # an agent's Stop: its attempts count for the stop-loss; `check` writes nothing
            stopped = record(snap, verdicts, at=moment, close=False, via=via, rules=rules).stopped
        gone = {s.thread.id for s in stopped}
        verdicts = [v for v in verdicts if v.thread.id not in gone]  # blocked now: told apart
    if seen is not None:  # a done thread that no longer holds holds the gate like an open one
        done = [tv for tv in seen.threads if tv.thread.status == "done" and tv.thread.id not in skip]
        verdicts += [Verdict(tv.thread, list(tv.checks), [], tv.undone) for tv in done if not closing or tv.undone]
    waiting = []
    if closing:  # waiting on someone else: nothing to retry, so it does not hold the gate
        for v in verdicts:
            if (
                not v.ok
                and not v.undone
                and v.waiting
                and (w := stoploss.waiting_of(snap, v.checks + v.policy_checks)) is not None
            ):
                waiting.append((v, w))
    parked = {v.thread.id for v, _ in waiting}
    failing = [v for v in verdicts if not v.ok and v.thread.id not in parked and (closing or v.undone)]
    return Gate(closing, verdicts, failing, problems, stopped, waiting, moment)
