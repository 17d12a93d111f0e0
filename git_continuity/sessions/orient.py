"""The brief a session starts with (``orient``, and an agent's SessionStart hook): it takes a
fresh look at what lives outside this clone (syncing.look: the remotes, the forge) within its
bound, starts (or continues) the session, re-dereferences every load-bearing claim where the
work is (the home's checkout), records the evidence of the costly ones, and puts what is true
now on top, saying of everything else how fresh it is.

``build`` returns the Markdown and the ``--json`` document; the command and the agent hook
only print one of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import machine, session
from git_continuity.errors import UserError
from git_continuity.model import (
    STATES,
    Handle,
    ObjectiveChange,
    Observation,
    Packet,
    Thread,
    ago,
    new_id,
    now,
    parse_handle,
    shown,
    stamp,
)
from git_continuity.plugins import scoped, verify
from git_continuity.plugins.values import Repository, VerifyContext
from git_continuity.plugins.verify import Assessed
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.sessions import brief, budget, quoting
from git_continuity.sessions.budget import Item, Section
from git_continuity.store import integrity, places, planning, policy, siblings, team
from git_continuity.store.lifespans import Journal, read_live_journal
from git_continuity.store.records import Handoff, SessionShown, Unshared, WorkTree
from git_continuity.syncing import look, tracking
from git_continuity.view import assessed as view
from git_continuity.view import labels, stoploss

JOURNAL_SHOWN = 5


@dataclass(frozen=True)
class Oriented:
    text: str  # the Markdown brief
    document: dict[str, Any]  # the same for --json (schema/orient.schema.json)
    code: int  # 0; 1 when there is no state here to orient on; 2 when the state is malformed


def build(
    repo: Repo,
    *,
    stream: str,
    max_tokens: int | None,
    online: bool = False,
    agent_session: str | None = None,
) -> Oriented:
    """The brief. ``agent_session`` is the agent's own id for its conversation, when a hook
    runs it: another one than the open session's starts a new session (session.resolve)."""
    if max_tokens is not None and max_tokens < 1:
        raise UserError("--max-tokens takes a whole number of tokens, 1 or more")
    snap = store.snapshot(repo, stream)
    if snap.commit is None:
        return _not_here(repo, stream, max_tokens)
    ahead = brief.ahead_started(repo)  # where git walks to count the branch's own commits, it does meanwhile
    found = _look(repo, snap, online)
    looked, snap, here, rules, counted = found.looked, found.snap, found.here, found.rules, found.counted
    problems, judged = here.problems, here.judged
    moment = now()  # after the look: what it fetched is "just now", never in the future
    assert snap.commit is not None
    seen = found.seen if found.seen is not None else _assess(here, rules, moment, online, looked)
    started, warnings = start_session(
        repo, snap, at=moment, agent_session=agent_session, looked=looked is not None, counted=counted
    )
    # The brief says them as status does.
    warnings += [w for w in (found.unreadable, integrity.off_warning(repo), team.warning(repo)) if w]
    if not problems:
        written = _record_costly(snap, seen.claims, seen.at)
        if written is not None:  # the brief's own evidence is no change the session made
            _rebase_session(repo, snap.commit, written)
    packet = store.read_packet(snap)
    if gate := labels.gate_warning(seen):
        warnings.append(gate[0].upper() + gate[1:] + ".")
    if packet is not None and packet.objective is None:
        warnings.append(labels.NO_OBJECTIVE[0].upper() + labels.NO_OBJECTIVE[1:] + ".")
    snap.cache.save()  # folders read whole are known good: the next brief reads one file each (as status)
    lead, place = places.situation(repo, snap)
    standings = tracking.standings(repo, stream, snap.commit)
    tree = brief.work_tree(repo, counted)
    home_tree = brief.work_tree(here.judged.snap.repo) if here.judged.away else tree
    parts = _Parts(
        snap,
        seen,
        rules,
        moment,
        started,
        packet,
        here.journal,
        looked,
        standings,
        warnings,
        problems,
        tree,
        store.latest_handoff(snap),
        store.read_objective_log(snap),
        brief.unshared(judged.snap.repo, snap, home_tree, _ahead_there(judged, ahead)),
    )
    header = _header(parts, lead + ([judged.said] if judged.said else []))
    sections = [Section("header", "", budget.TRUTH, [Item(header, None)]), *_sections(parts)]
    # Others' text as quoted data naming its signer; text no trusted key signed, left out.
    quoted = quoting.quote(repo, stream, snap.commit, sections)
    sections = quoted.sections
    header += quoted.lines()  # the header item holds this very list
    fitted = budget.fit(sections, max_tokens)
    kept = {s.key: [i.data for i in s.items[: fitted.kept[s.key]]] for s in sections}
    document = _document(parts, place, fitted, kept, quoted.left_out)
    return Oriented(fitted.text, document, 2 if problems else 0)


@dataclass(frozen=True)
class _Parts:
    """What one brief is made of, gathered once."""

    snap: store.Snapshot
    seen: view.View
    rules: policy.Policy
    moment: datetime
    started: SessionShown
    packet: Packet | None
    journal: Journal
    looked: look.Look | None
    standings: list[tracking.Standing]
    warnings: list[str]
    problems: list[str]
    tree: WorkTree | None
    last: Handoff | None
    changes: list[ObjectiveChange]
    unshared: Unshared

    @property
    def open_views(self) -> list[view.ThreadView]:
        return [tv for tv in self.seen.threads if not planning.ended(tv.thread)]

    @property
    def threads(self) -> dict[str, Thread]:
        return {tv.thread.id: tv.thread for tv in self.seen.threads}


@dataclass(frozen=True)
class _Here:
    """What a brief reads of this clone's state and checkout: worked out while the look waits
    (a remote's round trip), and again when the look took a remote's state in."""

    problems: list[str]
    judged: places.Judged  # where the work is: a donor's HEAD says nothing of it
    journal: Journal  # the newest live entries, faded ones counted (as of the look's start)


def _here(repo: Repo, snap: store.Snapshot, rules: policy.Policy) -> _Here:
    journal = read_live_journal(snap, rules.lifespans, now(), latest=JOURNAL_SHOWN)
    return _Here(store.all_problems(snap), places.judged_at(repo, snap), journal)


def _ahead_there(judged: places.Judged, ahead: brief.Counting) -> brief.Counting | None:
    """The branch's own commits as counted here, where the work is judged here; None where it is
    judged in the home's checkout (counted there), this count's git waited for all the same."""
    if not judged.away:
        return ahead
    ahead()
    return None


@dataclass(frozen=True)
class _Looked:
    """What a brief has once the fresh look ended."""

    looked: look.Look | None  # None: no look (turned off, or nothing outside this clone)
    snap: store.Snapshot  # read again where the look took a remote's state in
    here: _Here
    rules: policy.Policy
    unreadable: str | None  # what made the policy unreadable
    counted: Callable[[], git.Changes | None]  # git's count of the work tree, under way
    seen: view.View | None  # the view made while the look waited, where the look moved nothing


def _look(repo: Repo, snap: store.Snapshot, online: bool) -> _Looked:
    """The fresh look (its fetches started first of all), with this clone's own part of the brief
    worked out while it waits: the policy, the journal, and the view where the look asks no
    network handle nor any sibling and still waits on a remote the last look reached (a remote's
    round trip is often longer than the view takes), kept when the look reached every remote and
    moved nothing. git counts the work tree's changes on the other core meanwhile: while the
    view is made, else once the look's own git is done with it (three at once on two cores
    slowed this brief's own work by half)."""
    pending = fresh_look(repo, snap)
    rules, unreadable = policy.load_or_defaults(repo.work_dir)
    if pending is not None:
        _ask_network(pending, snap, rules)
        if not pending.started and not pending.asking.texts:
            pending = None  # nothing outside this clone to look at
    here = _here(repo, snap, rules)
    if pending is None:
        return _Looked(None, snap, here, rules, unreadable, git.changes_started(repo), None)
    counted = early = None
    # A remote that failed the last time, failing fast again (an old remote nobody removed, a
    # laptop offline), would have the view made twice.
    waiting = not pending.listed and tracking.reached_last_time(repo, pending.remotes)
    if waiting and not (online or pending.asking.texts or pending.siblings):
        counted = git.changes_started(repo)
        moment = now()  # the look's remotes as if heard from now: the view is kept only where they were
        early = _assess(here, rules, moment, online, None, dict.fromkeys(pending.remotes, moment))
    looked = look.finish(pending)
    if looked.changed_state:  # what the look took in is part of the state now
        snap = store.snapshot(repo, snap.stream)
        here = _here(repo, snap, rules)
    seen = early if looked.moved_nothing else None
    return _Looked(looked, snap, here, rules, unreadable, counted or git.changes_started(repo), seen)


def _assess(
    here: _Here,
    rules: policy.Policy,
    at: datetime,
    online: bool,
    looked: look.Look | None,
    heard: dict[str, datetime] | None = None,
) -> view.View:
    """The view the brief shows, of where the work is. Load-bearing claims are re-dereferenced
    now (view "bearing"): every claim with a handle that something rests on, but cmd: checks (a
    test suite may take longer than an agent's session start waits: they show their last
    evidence until verify or the gate) and the checks of done threads (their cheap checks are
    re-derived anyway). A costly check whose last evidence is verified and still applies is not
    run again; the network's were asked by the fresh look."""
    snap = here.judged.snap
    return view.assess(snap, at=at, policy=rules, dereference="bearing", online=online, look=looked, heard=heard)


def fresh_look(repo: Repo, snap: store.Snapshot) -> look.Pending | None:
    """Start the look at what lives outside this clone (syncing.look): the fetches of every
    remote here and of each sibling; None when it is turned off (continuity.freshLook 0)."""
    bound = look.bound_of(repo)
    if bound <= 0:
        return None
    listed = [s.name for s in siblings.read(snap)]
    there = {s.name: s.repo for s in scoped.locate(snap, listed).values() if s.repo is not None}
    return look.start(repo, siblings=there, bound=bound)


def _ask_network(pending: look.Pending, snap: store.Snapshot, rules: policy.Policy) -> None:
    """The network handles the brief rests on, asked again by the look (not a done or cancelled
    thread's checks; a handle scoped to a sibling keeps its evidence)."""
    network = verify.network_schemes()
    # Cheap first: a scheme is the handle's text up to its first colon (a scoped one's starts "@").
    claims = [
        c
        for c in store.read_claims(snap).values()
        if c.handle and c.withdrawn is None and c.handle.partition(":")[0] in network
    ]
    if not claims:
        return
    ended = {t.id for t in store.read_threads(snap).values() if str(t.status) in ("done", "cancelled")}
    handles = [parse_handle(str(c.handle)) for c in claims if c.thread not in ended]
    context = VerifyContext(Repository(pending.repo), now(), online=True, policy=rules)
    context.timeout = pending.bound

    def one(handle: Handle, _: float) -> Observation:
        return verify.dereference([handle], context)[handle]

    look.ask(pending, handles, one)


def _header(parts: _Parts, lead: list[str]) -> list[str]:
    """The brief's first lines: where this checkout stands, the state, the session, the look."""
    snap, started, moment = parts.snap, parts.started, parts.moment
    assert snap.commit is not None
    updated = git.commit_info(snap.repo, snap.commit).time
    claims = parts.seen.claims
    fresh = brief.freshness_tally(claims)
    header = [
        f"# git-continuity brief: stream {snap.stream}",
        *lead,
        f"State {snap.ref} at {snap.commit[:7]}, changed {ago(updated, moment)}. "
        f"Claims: {brief.tally(claims)}" + (f" ({fresh})." if fresh else "."),
        brief.session_line(started, moment),
        *planning.claimed_lines(
            planning.claims_from(store.read_thread_claims(snap)),
            parts.threads,
            started.id,
            started.host,
            git.identity(snap.repo),
        ),
    ]
    header += brief.look_lines(parts.looked, moment) if parts.looked is not None else []
    # Another clone's state fetched but not taken in: this brief may be behind it.
    now_fetched = {r.remote for r in (parts.looked.reaches if parts.looked else ()) if r.reached and not r.repository}
    header += [
        f"Sync: {render.standing_text(s, fetched_now=s.remote in now_fetched)}"
        for s in parts.standings
        if s.relation != "same"
    ]
    last = parts.last
    if (
        last is not None
        and last.machine
        and any((tv.thread.blocked or {}).get("note") for tv in parts.open_views)  # only when the machine was the limit
        and (said := machine.brief_line(last.host, last.machine, started.host, snap.repo.work_dir or "."))
    ):
        header.append(said)
    header += [f"Warning: {w}" for w in parts.warnings]
    header += [f"Problem: {p}" for p in parts.problems]
    return header


def _sections(parts: _Parts) -> list[Section]:
    """The brief's sections after its header, in the order a reader needs them."""
    return _truth_sections(parts) + _work_sections(parts) + _since(parts)


def _truth_sections(parts: _Parts) -> list[Section]:
    seen, moment, threads = parts.seen, parts.moment, parts.threads
    open_threads = [tv.thread for tv in parts.open_views]
    waiting = {tv.thread.id: tv.waiting for tv in parts.open_views if tv.waiting is not None}
    unwaited = [t for t in open_threads if t.id not in waiting]
    stalled = stoploss.stalled_leads(parts.snap, unwaited, parts.rules, moment)
    standing = seen.loose()
    return [
        Section(
            "let_go",
            "The last session stopped on unverified work",
            budget.TRUTH,
            [
                Item([brief.hung("- ", e.text)], render.journal_json(e))
                for e in brief.let_go_entries(parts.journal.entries, seen)
            ],
        ),
        Section(
            "undone",
            "Done, but no longer holds: reopen it or restore the work",
            budget.TRUTH,
            [brief.thread_item(tv) for tv in seen.undone],
        ),
        Section(
            "stalled",
            "Stalled: stop retrying these",
            budget.TRUTH,
            [Item([brief.hung("- **", f"{line}**")], data) for line, data in stalled],
        ),
        Section(
            "waiting",
            "Waiting on someone else: don't retry these",
            budget.TRUTH,
            [
                Item([brief.hung("- **", f"{line}**")], data)
                for line, data in stoploss.waiting_leads(threads, waiting, moment)
            ],
        ),
        Section(
            "do_not_act",
            "Do not act on these: not true now",
            budget.TRUTH,
            [
                brief.claim_item(a, state=True, bold=True, at=moment)
                for a in standing
                if a.derived.state in brief.DO_NOT_ACT
            ],
        ),
        Section(
            "verified",
            "Verified now",
            5,
            [brief.claim_item(a, state=False, at=moment) for a in standing if labels.verified_now(a)],
            see="git continuity claim list --state verified",
            what="verified claims",
        ),
        Section(
            "unconfirmed",
            "Not confirmed: check before relying on these",
            7,
            [brief.claim_item(a, state=True, at=moment) for a in standing if brief.unconfirmed(a)],
            see="git continuity claim list",
            what="unconfirmed claims",
        ),
    ]


def _work_sections(parts: _Parts) -> list[Section]:
    packet, threads, changes = parts.packet, parts.threads, parts.changes
    return [
        Section(
            "unshared",
            "Not yet shared: only in this clone",
            2,
            [Item([line], None) for line in brief.unshared_lines(parts.unshared)],
            what="items of work not yet shared",
        ),
        Section(
            "objective",
            "Objective",
            1,
            brief.objective_items(packet.objective, changes[-1] if changes else None)
            if packet
            else [Item([brief.UNREADABLE], None)],
            what="the objective",
        ),
        Section(
            "next_action",
            "Next action",
            1,
            [Item([brief.next_line(packet, threads)], packet.next_action if packet else None)],
            what="the next action",
        ),
        Section(
            "blockers",
            "Blockers",
            2,
            [
                Item([brief.hung(f"- {b.id} ", b.text)], brief.blocker_json(b))
                for b in (packet.open_blockers() if packet else [])
            ]
            or [Item(["- none"], None, placeholder=True)],
            see="git continuity status",
            what="blockers",
        ),
        Section(
            "threads",
            "Open threads",
            3,
            [brief.thread_item(tv) for tv in parts.open_views] or [Item(["- none"], None, placeholder=True)],
            see="git continuity status",
            what="threads",
        ),
        Section("work_tree", "Work tree", 6, brief.work_tree_items(parts.tree), see="git status", what="the work tree"),
    ]


def _since(parts: _Parts) -> list[Section]:
    return [*brief.since_sections(parts.snap, parts.last, parts.seen.claims), brief.journal_section(parts.journal)]


def _document(
    parts: _Parts, place: dict[str, Any] | None, fitted: budget.Fitted, kept: dict[str, list[Any]], left_out: Any
) -> dict[str, Any]:
    """The same brief for --json (schema/orient.schema.json)."""
    snap, packet, changes, tree = parts.snap, parts.packet, parts.changes, parts.tree
    assert snap.commit is not None
    updated = git.commit_info(snap.repo, snap.commit).time
    return {
        "stream": snap.stream,
        "state": {"ref": snap.ref, "commit": snap.commit, "updated_at": stamp(updated)},
        "fetch": None,
        "look": brief.look_json(parts.looked) if parts.looked is not None else None,
        "session": parts.started.to_json(),
        "remotes": [render.standing_json(s) for s in parts.standings],
        "place": place,
        "warnings": parts.warnings,
        "problems": parts.problems,
        "counts": render.counts(parts.seen.claims),
        "let_go": kept["let_go"],
        "undone": kept["undone"],
        "stalled": kept["stalled"],
        "waiting": kept["waiting"],
        "do_not_act": kept["do_not_act"],
        "verified": kept["verified"],
        "unconfirmed": kept["unconfirmed"],
        "objective": render.objective_json(packet.objective) if packet and fitted.kept["objective"] else None,
        "objective_change": render.change_json(changes[-1]) if changes and fitted.kept["objective"] else None,
        "next_action": packet.next_action if packet and fitted.kept["next_action"] else None,
        "blockers": [b for b in kept["blockers"] if b is not None],
        "threads": [t for t in kept["threads"] if t is not None],
        "work_tree": tree.to_json() if tree and fitted.kept["work_tree"] else None,
        "unshared": parts.unshared.to_json(),
        "since": _since_json(parts.last, kept),
        "journal": [j for j in kept["journal"] if j is not None],
        "journal_total": parts.journal.total,
        "journal_faded": parts.journal.faded_count,
        "left_out_untrusted": left_out,
        "budget": _budget_json(fitted),
    }


def start_session(
    repo: Repo,
    snap: store.Snapshot,
    *,
    at: datetime,
    agent_session: str | None,
    looked: bool = False,
    counted: Callable[[], git.Changes | None] | None = None,
) -> tuple[SessionShown, list[str]]:
    """Continue the current session (session.resolve), or start one when there is none: the
    open one, on whichever stream it started, unless the environment or the agent's hook names
    another. Returns it, and warnings: among them each session of the clone that ended without
    a handoff, wherever it started (its agent is gone). The agent's name comes from
    GIT_CONTINUITY_AGENT (an agent's hook sets it). ``counted``: the brief's count of the work
    tree (git.changes_started), which a new session's record of it does not count again."""
    git_dir = git.worktree_git_dir(repo)
    found = session.resolve(git_dir, agent_session=agent_session)
    warnings = []
    where = found.where or git_dir
    agent = session.agent_process() if agent_session else None
    if found.stored is not None:
        stored = found.stored
        current = stored._replace(agent=found.agent, agent_session=agent_session or stored.agent_session)
        if agent is not None and stored.agent_pid is None:
            current = current._replace(agent_pid=agent[0], agent_start=agent[1])
        if looked:  # what the look fetched moved no ref of the session's: its baseline takes it
            current = current._replace(refs=_refetched(stored.refs or {}, brief.ref_snapshot(repo)))
    else:
        ended = found.ended
        if ended is not None and ended.id != found.id:
            warnings.append(
                f"The previous session {ended.id} (started {shown(ended.started_at)} UTC on {ended.host}) "
                "ended without a handoff: what it left is in the work tree and under 'Since the last session'."
            )
        current = session.Session(
            id=found.id or new_id("session"),
            started_at=stamp(at),
            host=session.hostname(),
            stream=snap.stream,
            agent=found.agent,
            agent_session=agent_session,
            state=snap.commit,
            refs=brief.ref_snapshot(repo),
            worktree=git.worktree_tree(repo, counted() if counted is not None else None),
            agent_pid=agent[0] if agent else None,
            agent_start=agent[1] if agent else None,
        )
    warnings += _abandoned(git_dir, current.id, at)
    try:
        session.save(where, current)
    except OSError as error:
        warnings.append(f"could not record the session in {session.path(where)}: {error}")
    shown_as = SessionShown(
        current.id, current.agent, current.agent_session, current.host, current.started_at, found.stored is not None
    )
    return shown_as, warnings


def _refetched(before: dict[str, str], now_at: dict[str, str]) -> dict[str, str]:
    """A continued session's refs at its start, with the remote-tracking refs as a fresh look
    just fetched them (a compaction's or a resume's brief): the Stop gate then holds the session
    to what it changed, not to what arrived."""
    kept = {k: v for k, v in before.items() if not k.startswith("refs/remotes/")}
    return {**kept, **{k: v for k, v in now_at.items() if k.startswith("refs/remotes/")}}


def _abandoned(git_dir: Path, current: str, at: datetime) -> list[str]:
    """Each session of the clone whose agent is gone and that left no handoff, said once (it is
    marked ended): where it ran, so its work there is looked at, not lost."""
    said = []
    for where, gone in session.abandoned(git_dir, current):
        agent = f" ({gone.agent})" if gone.agent else ""
        folder = _worktree_folder(where)
        said.append(
            f"The session {gone.id}{agent}, started {shown(gone.started_at)} UTC on {gone.host} in {folder}, ended "
            "without a handoff (its agent is no longer running): what it left is in that work tree and under "
            "'Since the last session'."
        )
        with contextlib.suppress(OSError):
            session.save(where, gone._replace(ended_at=stamp(at)))
    return said


def _worktree_folder(git_dir: Path) -> str:
    """The work tree a git dir belongs to, as a folder (the main checkout's, or a linked one's)."""
    try:
        return str(Path((git_dir / "gitdir").read_text().strip()).parent)
    except OSError:
        return str(git_dir.parent) if git_dir.name == ".git" else str(git_dir)


def _rebase_session(repo: Repo, was: str | None, now_at: str | None) -> None:
    git_dir = git.worktree_git_dir(repo)
    stored = session.open_session(git_dir)
    if stored is not None and stored.state == was:
        with contextlib.suppress(OSError):
            session.save(git_dir, stored._replace(state=now_at))


def _record_costly(snap: store.Snapshot, assessed: Sequence[Assessed], at: datetime) -> str | None:
    """Evidence of the costly checks dereferenced now (a network answer, a test run), so the
    next status and gate can reuse it; live local checks are re-derived on every read."""
    taken: set[str] = set()
    who = session.who(snap.repo)
    files: dict[str, bytes | None] = {}
    for a in assessed:
        obs = a.observation
        if obs is None or (obs.result == "unknown" and obs.waiting is None) or verify.is_live(a.claim):
            continue
        evidence = verify.evidence_for(a, at, taken, who)
        if evidence is not None:
            files[store.evidence_path(evidence, at)] = store.entry_bytes(evidence)
    if not files:
        return None
    message = f"orient: evidence of {len(files)} costly check{'s' if len(files) != 1 else ''}"
    return store.update(snap.repo, snap.stream, lambda s: store.Change(message, files)).commit


def _since_json(last: Handoff | None, kept: dict[str, list[Any]]) -> dict[str, Any] | None:
    if last is None:
        return None
    return {
        "handoff": last.summary_json(),
        "claims": kept["since_claims"],
        "commits": kept["since_commits"],
        "refs": kept["since_refs"],
        "clones": kept["since_clones"],
        "journal": kept["since_journal"],
    }


def _budget_json(fitted: budget.Fitted) -> dict[str, Any]:
    return {
        "max_tokens": fitted.max_tokens,
        "estimated_tokens": fitted.tokens,
        "over_budget": fitted.over_budget,
        "left_out": [
            {"section": x.section, "count": x.count, "of": x.of, "see": x.see or None} for x in fitted.left_out
        ],
    }


def _not_here(repo: Repo, stream: str, max_tokens: int | None) -> Oriented:
    """No state ref here: say so, whether a remote has it, and how to take it in. Never an
    empty brief, which a session would take for an empty state."""
    lines = [
        f"# git-continuity brief: stream {stream}",
        f"No continuity state for stream '{stream}' in this clone: {store.ref_name(stream)} does not exist here. "
        "Nothing below is known; do not take this for an empty state.",
    ]
    # The same question and words as every command in a clone without the state (sync's).
    on_remote, said = tracking.remote_state_hint(repo, stream)
    lines += said.splitlines() if said else []
    if not on_remote:
        local = [r.removeprefix("refs/continuity/") for r in git.list_refs(repo, "refs/continuity/")]
        if local:
            lines.append(f"Streams in this clone: {', '.join(local)} (choose one with --stream NAME).")
        lines.append("To start keeping state here: git continuity init")
    commands = [line.split(": ", 1)[1] for line in lines if line.startswith(("Take it with: ", "To start"))]
    commands += [line.strip() for line in lines if line.startswith("  git ")]  # tracking.elsewhere's settings
    fitted = budget.fit([Section("header", "", budget.TRUTH, [Item(lines, None)])], max_tokens)
    document: dict[str, Any] = {
        "stream": stream,
        "state": None,
        "fetch": {"message": "\n".join(lines[1:]), "on_remote": on_remote, "commands": commands},
        "look": None,
        "session": None,
        "remotes": [],
        "place": None,
        "warnings": [],
        "problems": [],
        "counts": dict.fromkeys(STATES, 0),
        "let_go": [],
        "undone": [],
        "stalled": [],
        "waiting": [],
        "do_not_act": [],
        "verified": [],
        "unconfirmed": [],
        "objective": None,
        "objective_change": None,
        "next_action": None,
        "blockers": [],
        "threads": [],
        "work_tree": None,
        "unshared": None,
        "since": None,
        "journal": [],
        "journal_total": 0,
        "journal_faded": 0,
        "left_out_untrusted": [],
        "budget": _budget_json(fitted),
    }
    return Oriented(fitted.text, document, 1)
