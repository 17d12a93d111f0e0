"""Whether a thread may be called done: every acceptance check verified *now*.

One judgement serves `thread close`, `check --closing` and the hooks, so the three can never
disagree. A thread with no check that can verify (none, or only prose) never closes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from git_continuity import render, session, store, verify
from git_continuity.constants import ID_CHARS, THREAD_ID
from git_continuity.errors import UserError
from git_continuity.model import Claim, Evidence, Thread, stamp
from git_continuity.policy import Policy
from git_continuity.verify import Assessed


@dataclass(frozen=True)
class Verdict:
    thread: Thread
    checks: list[Assessed]  # the thread's own claims
    policy_checks: list[Assessed]  # closing_checks from .continuity.yaml, judged the same way

    @property
    def ok(self) -> bool:
        checked = self.checks + self.policy_checks
        return any(a.claim.handle for a in self.checks) and all(a.derived.state == "verified" for a in checked)

    def why_not(self) -> str:
        if not self.checks:
            return "it has no acceptance checks (add one: git continuity claim add TEXT --check HANDLE --thread ID)"
        if not any(a.claim.handle for a in self.checks):
            return "its only checks are prose, which never verify (add a check with a handle)"
        failing = [a for a in self.checks + self.policy_checks if a.derived.state != "verified"]
        total = len(self.checks) + len(self.policy_checks)
        return f"{len(failing)} of {total} checks are not verified now"

    def lines(self) -> list[str]:
        out = render.claim_lines(self.checks)
        if self.policy_checks:
            out.append("  policy (.continuity.yaml closing_checks):")
            out += render.claim_lines(self.policy_checks)
        return out


def closing_ids(message: str, keywords: Iterable[str]) -> list[str]:
    """Thread ids a commit message claims to close: a keyword, then the id ("closes t-k7m2qx")."""
    words = "|".join(re.escape(k) for k in keywords)
    text = "\n".join(line for line in message.splitlines() if not line.startswith("#"))
    pattern = re.compile(rf"\b(?:{words})\b[:\s]+((?:t-{ID_CHARS}{{6}}[,\s]*(?:and\s+)?)+)", re.IGNORECASE)
    found: list[str] = []
    for match in pattern.finditer(text):
        found += [i for i in THREAD_ID.findall(match.group(1)) if i not in found]
    return found


def _policy_claims(snap: store.Snapshot, policy: Policy, at: datetime) -> list[Claim]:
    claims = []
    for n, text in enumerate(policy.closing_checks, 1):
        try:
            handle = verify.resolve(snap.repo, text).text
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
    committing: bool = False,
) -> list[Verdict]:
    """Dereference every check of these threads now (reusing fresh verified evidence of
    costly checks, e.g. a test command already run on this very tree)."""
    own = {t.id: [c for c in claims if c.thread == t.id] for t in threads}
    extra = _policy_claims(snap, policy, at) if threads else []
    every = [c for cs in own.values() for c in cs] + extra
    assessed = {
        a.claim.id: a
        for a in verify.assess(
            snap,
            every,
            at=at,
            policy=policy,
            dereference_all=True,
            online=online,
            reuse_fresh=True,
            committing=committing,
        )
    }
    return [
        Verdict(
            t,
            [assessed[c.id] for c in sorted(own[t.id], key=lambda c: (c.added_at, c.id))],
            [assessed[c.id] for c in extra],
        )
        for t in threads
    ]


def record(snap: store.Snapshot, verdicts: Sequence[Verdict], *, at: datetime, close: bool) -> store.Snapshot:
    """Write the evidence of what was dereferenced now, and close the threads whose verdict is
    ok when ``close``: one commit."""
    taken: set[str] = set()
    files: dict[str, bytes | None] = {}
    closed = []
    who = session.who(snap.repo)
    for v in verdicts:
        for a in v.checks:
            # On a close, all of it; otherwise only costly results worth reusing (a test run on
            # this tree), so that a gate polled by an agent does not add a commit each time.
            obs = a.observation
            costly = obs is not None and obs.result != "unknown" and not verify.is_live(a.claim)
            if (close and v.ok) or costly:
                evidence: Evidence | None = verify.evidence_for(a, at, taken, who)
                if evidence:
                    files[store.evidence_path(evidence, at)] = store.entry_bytes(evidence)
        if close and v.ok and v.thread.status != "done":
            done = replace(v.thread, status="done", closed_at=stamp(at))
            files[store.thread_path(done.id)] = store.entry_bytes(done)
            closed.append(done)
    if not files:
        return snap
    if closed:
        message = "thread close " + ", ".join(f"{t.id}: {t.title}" for t in closed)
        message += "\n\nevery check verified now; evidence recorded"
    else:
        message = f"verify: checks of {', '.join(v.thread.id for v in verdicts)} (evidence of costly checks)"
    return store.update(snap.repo, snap.stream, lambda s: store.Change(message, files))
