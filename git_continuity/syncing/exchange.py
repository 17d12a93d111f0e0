"""One exchange with a remote (pull, push or sync) and its report, which the commands render."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Repo
from git_continuity.store import claiming, planning
from git_continuity.syncing import tracking, transport
from git_continuity.syncing.fetching import TIMEOUT, LeftOut, Line
from git_continuity.syncing.layout import Layout, advice, layout_of
from git_continuity.syncing.pulling import left_out_text, pull_from
from git_continuity.syncing.pushing import (
    BACKOFF_CAP,
    MAX_RETRIES,
    Published,
    last_fetched,
    local_streams,
    publish,
    require_sendable,
)


@dataclass(frozen=True)
class Report:
    """What one exchange did: what came in, what went out, what the server refused."""

    remote: str
    layout: Layout
    pulled: list[Line] | None  # None: nothing was fetched (push alone)
    remote_empty: bool  # the remote had no state at all
    pushed: Published | None  # None: nothing was pushed (pull, or nothing here to push)
    local_empty: bool  # this clone has no state
    fetched_left_out: list[LeftOut] = field(default_factory=list)  # what the pull did not take in

    @property
    def left_out(self) -> list[LeftOut]:
        """What was not taken in (no trusted key signed it), the pull's and a push's retries'."""
        found = [*self.fetched_left_out, *(self.pushed.left_out if self.pushed else [])]
        return list({(x.name, x.kept_in): x for x in found}.values())


def _claims_lost(repo: Repo, held: dict[tuple[str, str], planning.ThreadClaim]) -> list[Line]:
    """Thread claims this session held before the merge and another session holds after it:
    the loser of two clones claiming at once is told here (store/claiming.py)."""
    return [Line("thread claims", text) for text in claiming.lost_since(repo, held)]


def pull(repo: Repo, remote: str | None) -> Report:
    name = tracking.pick_remote(repo, remote)
    layout = layout_of(repo, name)
    held = claiming.held_here(repo)
    fetched, lines = pull_from(repo, name, layout)
    lines += _claims_lost(repo, held)
    empty = not fetched.streams and fetched.notes is None and not fetched.other.streams and not fetched.lanes
    return Report(name, layout, lines, empty, None, not local_streams(repo), fetched.left_out)


def push(repo: Repo, remote: str | None) -> Report:
    name = tracking.pick_remote(repo, remote)
    layout = layout_of(repo, name)
    if not local_streams(repo):
        raise UserError(
            f"no continuity state here to push.\nStart with git continuity init (or git continuity pull {name})."
        )
    require_sendable(repo, name)
    return Report(name, layout, None, False, publish(repo, name, last_fetched(repo, name, layout)), False)


def sync(
    repo: Repo, remote: str | None, *, timeout: float = TIMEOUT, retries: int = MAX_RETRIES, cap: float = BACKOFF_CAP
) -> Report:
    name = tracking.pick_remote(repo, remote)
    layout = layout_of(repo, name)
    require_sendable(repo, name)
    held = claiming.held_here(repo)
    fetched, lines = pull_from(repo, name, layout, timeout)
    lines += _claims_lost(repo, held)
    empty = not fetched.streams and fetched.notes is None and not fetched.other.streams and not fetched.lanes
    left = list(fetched.left_out)
    if not local_streams(repo):
        return Report(name, layout, lines, empty, None, True, left)
    done = publish(repo, name, fetched, timeout=timeout, retries=retries, cap=cap)
    return Report(name, layout, lines, empty, done, False, left)


def refusal(report: Report) -> str | None:
    """The message for what the server refused: its words, and the setting that would get
    the state through; None when nothing was refused."""
    done, layout = report.pushed, report.layout
    if done is None or not (done.refused or done.kept_local):
        return None
    said = "\n  ".join([*done.said, *done.refused, *done.kept_local])
    remote = report.remote
    if not done.refused:
        return (
            f"{remote} refused the commit notes; the state went through, and the notes are kept here:\n  {said}\n"
            + (
                f"To send the notes too, as a branch: git config continuity.{remote}.transport branches"
                if layout.transport == "refs"
                else f"The next sync sends them again; {layout.prefix_key} ({layout.prefix!r}) names their branch."
            )
        )
    head = f"{remote} refused the push of the state:\n  {said}\n"
    kept = "Nothing here is lost: the local state is kept as it is, and the next sync sends it all.\n"
    if layout.transport == "branches" and any(c in said for c in transport.CLASHES):
        return (
            head
            + kept
            + (
                f"A branch on {remote} stands where the state's branches under {layout.prefix!r} would go (or the other"
                " way round), which no retry changes: choose a prefix that no branch name there starts with, or"
                f" ends inside:\n  git config {layout.prefix_key} claude/continuity-"
            )
        )
    return head + kept + advice(layout)


def _landed(done: Published | None) -> str | None:
    """Where the state went: the shared refs, this clone's lane (other clones pushed first),
    or nowhere (nothing to send, or refused)."""
    if done is None:
        return None
    if done.lanes:
        return "lane"
    sent = any(what.startswith(("pushed ", "created on ")) for _, what, meanwhile in done.lines if not meanwhile)
    return "shared" if sent else None


def to_json(report: Report, command: str) -> dict[str, Any]:
    """The --json document of an exchange (schema/sync.schema.json)."""
    done = report.pushed

    def lines(found: list[Line] | None) -> list[dict[str, Any]] | None:
        if found is None:
            return None
        return [{"name": n, "what": w, "meanwhile": m} for n, w, m in found]

    return {
        "command": command,
        "remote": report.remote,
        "transport": report.layout.transport,
        "branch_prefix": report.layout.prefix,
        "pulled": lines(report.pulled),
        "pushed": lines(done.lines if done else None),
        "retries": done.retries if done else 0,
        "landed": _landed(done),
        "lanes": done.lanes if done else [],
        "refused": done.refused if done else [],
        "kept_local": done.kept_local if done else [],
        "said": [line.removeprefix("remote:").strip() for line in done.said] if done else [],
        "message": refusal(report),
        "left_out": [
            {"name": x.name, "kept_in": x.kept_in, "commits": x.commits, "signers": x.signers} for x in report.left_out
        ],
        "held": done.held if done else [],
    }


# When a session ends the agent waits for its hook (Claude Code gives a hook 60 s): each git
# call at most 10 s, two retries, pauses of at most 2 s.
SESSION_END_TIMEOUT = 10.0


def at_session_end(repo: Repo) -> str | None:
    """A bounded sync with the default remote when a session ends, only where this clone
    has synced the state with it before (a clone kept local stays local): what to say of it,
    or None when there was nothing to try."""
    remote = tracking.default_remote(repo)
    if remote is None or not (
        tracking.tracked_streams(repo, remote) or git.ref_target(repo, tracking.notes_tracking_ref(remote))
    ):
        return None
    try:
        report = sync(repo, remote, timeout=SESSION_END_TIMEOUT, retries=2, cap=2.0)
    except UserError as error:
        return f"not synced with {remote}: {str(error).splitlines()[0]} (the next git continuity sync sends it)"
    refused = refusal(report)
    if refused:
        return f"not all synced with {remote}: {refused.splitlines()[0]} (git continuity sync says more)"
    if report.left_out:
        return f"synced with {remote}; " + "; ".join(f"{x.name}: {left_out_text(x)}" for x in report.left_out)
    return f"synced with {remote}"
