"""What ``handoff`` leaves and ``orient`` reads: facts about the repository and the state,
gathered as typed records (store/records.py), and the Markdown lines that show them.

The two commands compare snapshots: the refs and the state commit when a session started
(kept in its session file), and those a handoff recorded. Everything said here is read from
the repository now; what a handoff stored is shown as what it saw then, never as the truth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from git_continuity import repo as git
from git_continuity import store
from git_continuity.clone import session
from git_continuity.display import cut, hang
from git_continuity.model import (
    Blocker,
    Claim,
    JournalEntry,
    Objective,
    ObjectiveChange,
    Packet,
    Thread,
    ago,
    now,
    parse_stamp,
    shown,
    stamp,
)
from git_continuity.plugins.verify import Assessed
from git_continuity.render import text as render
from git_continuity.repo import Oid, Repo
from git_continuity.sessions.budget import Item, Section
from git_continuity.store.lifespans import Journal
from git_continuity.store.records import (
    SHOWN_COMMITS,
    ClaimAdded,
    Handoff,
    MovedRef,
    RefCommit,
    SessionShown,
    Stash,
    StateUnsent,
    ThreadMoved,
    Unshared,
    WorkTree,
    ref_label,
)
from git_continuity.view import labels
from git_continuity.view.assessed import ThreadView, View

if TYPE_CHECKING:
    from git_continuity.syncing.look import Look, Reach

UNREADABLE = "(unreadable packet: see the problems above)"
REF_PREFIXES = ("refs/heads/", "refs/remotes/", "refs/tags/")
MAX_REFS = 1000  # refs kept in a handoff; branches first, then remote-tracking refs, then tags
COUNT_UP_TO = 1000
SHOWN_PATHS = 10
DO_NOT_ACT = ("contradicted", "stale")
UNCONFIRMED = ("unknown", "unchecked", "prose")


def short(oid: str | None) -> str:
    return oid[:7] if oid else "(none)"


def first_line(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return cut(lines[0], "git continuity orient --json") + (" …" if len(lines) > 1 else "")


def hung(first: str, text: str) -> str:
    """``first`` and then another's ``text`` (a title, an objective, a journal entry), its
    later lines under its first character (display.hang, not folded: the brief is Markdown
    for an agent, not a terminal's lines), so that none of them starts a line of the brief's
    own: a heading, a list item, a warning (#26)."""
    return hang(first, text, fold=False)


def paragraph(text: str) -> str:
    """Another's ``text`` as a paragraph of its own (the objective, the next action): its
    first line where a line starts, the later ones two columns in, as a Markdown paragraph
    goes on, so that none of them reads as the brief's own line."""
    return hung("  ", text)[2:]


def summary_of(info: git.CommitInfo) -> str:
    return info.message.splitlines()[0] if info.message else ""


# -- the repository now ---------------------------------------------------------------------


def ref_snapshot(repo: Repo) -> dict[str, str]:
    """Branch, remote-tracking and tag tips (symbolic refs such as origin/HEAD left out)."""
    tips = git.ref_tips(repo, REF_PREFIXES, MAX_REFS + 50)
    kept = {name: oid for name, oid in tips.items() if not name.endswith("/HEAD")}
    return dict(list(kept.items())[:MAX_REFS])


def work_tree(repo: Repo, counted: Callable[[], git.Changes | None] | None = None) -> WorkTree | None:
    """Branch, HEAD, uncommitted changes in brief and stashes; None in a bare repository.
    ``counted``: the changes as git.changes_started started counting them (else counted now)."""
    changes = counted() if counted is not None else git.changes(repo)
    if changes is None:
        return None
    head = git.head_commit(repo)
    touched = list(dict.fromkeys(changes.conflicted + changes.staged + changes.unstaged + changes.untracked))
    return WorkTree(
        branch=git.current_branch(repo),
        head=head,
        head_summary=summary_of(git.commit_info(repo, head)) if head else None,
        staged=len(changes.staged),
        unstaged=len(changes.unstaged),
        untracked=len(changes.untracked),
        conflicted=len(changes.conflicted),
        touched=len(touched),
        paths=touched[:SHOWN_PATHS],
        stashes=[Stash(oid, message) for oid, message in git.stashes(repo)],
    )


def moved_refs(repo: Repo, before: Mapping[str, str], after: Mapping[str, str]) -> list[MovedRef]:
    """Every ref that differs between two snapshots. Branches and remote-tracking refs also
    say how many commits they gained (naming the first few) and lost (rewound or rewritten);
    ``missing`` says the earlier tip is not in this clone, so nothing can be counted."""

    def heads(snapshot: Mapping[str, str], but: str) -> list[Oid]:
        return [
            t
            for k, v in snapshot.items()
            if k.startswith("refs/heads/") and k != but and (t := git.peel_to_commit(repo, Oid(v)))
        ]

    found = []
    for name in sorted(set(before) | set(after)):
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        old_tip = git.peel_to_commit(repo, Oid(was)) if was else None
        new_tip = git.peel_to_commit(repo, Oid(now)) if now else None
        missing = was is not None and old_tip is None
        if name.startswith("refs/tags/") or new_tip is None or missing:
            found.append(MovedRef(name, was, now, missing))
            continue
        # A new ref's own commits: those on no other branch, then or now.
        hidden = [old_tip] if old_tip else heads(before, name) + heads(after, name)
        commits, gained = git.commits_since(repo, new_tip, hidden, show=SHOWN_COMMITS, count_up_to=COUNT_UP_TO)
        lost = git.commits_since(repo, old_tip, [new_tip], show=0, count_up_to=COUNT_UP_TO)[1] if old_tip else 0
        found.append(MovedRef(name, was, now, False, gained, lost, [RefCommit(c.oid, summary_of(c)) for c in commits]))
    return found


def other_clone(repo: Repo, last: Handoff, host: str) -> bool:
    """Whether a handoff was written in another clone (its branches are that clone's own)."""
    from git_continuity.store import siblings

    if last.clone is not None:
        return last.clone != siblings.clone_id(repo)
    return last.host != host  # written before handoffs named their clone: its machine says it


def clone_line(repo: Repo, entry: MovedRef, host: str) -> str:
    """A branch that differs between the clone a handoff was written in and this one, said as
    that: ``old-parser: laptop's is at e796f19, a commit this clone does not have (not pushed
    from there); here at 6faf041``."""
    name, theirs, ours = ref_label(entry.ref), entry.was, entry.now
    if ours is None:
        lacks = ", a commit this clone does not have" if entry.missing else ""
        return f"{name}: only in {host}'s clone, at {short(theirs)}{lacks}"
    if entry.missing or theirs is None:
        return (
            f"{name}: {host}'s is at {short(theirs)}, a commit this clone does not have (not pushed from there);"
            f" here at {short(ours)}"
        )
    try:
        ahead, behind = git.ahead_behind(repo, Oid(ours), Oid(theirs))
    except git.HistoryCut:  # a shallow clone: the two tips are all that can be said
        return f"{name}: here at {short(ours)}, {host}'s at {short(theirs)}"
    return (
        f"{name}: here at {short(ours)}, {host}'s at {short(theirs)}: {ahead} commit{'s' if ahead != 1 else ''} here"
        f" not there, {behind} there not here"
    )


def ref_line(entry: MovedRef) -> str:
    """``main: +2 (0ca66e8 Fix the login loop; …)`` and the like."""
    name, was, now = ref_label(entry.ref), entry.was, entry.now
    if now is None:
        gone = ", a commit not in this clone" if entry.missing else ""
        return f"{name}: not here now (it was at {short(was)}{gone})"
    commits = "; ".join(f"{short(c.commit)} {c.summary}" for c in entry.commits)
    more = entry.gained - len(entry.commits)
    commits += f"; {more} more" if more > 0 else ""
    gained = f"+{entry.gained}{'+' if entry.gained >= COUNT_UP_TO else ''}"
    if was is None:
        return f"{name}: new at {short(now)}" + (f", {gained} ({commits})" if entry.gained else "")
    text = f"{name}: {short(was)} → {short(now)}"
    if entry.missing:
        return text + f" ({short(was)} is not in this clone)"
    if entry.lost:
        text += f", rewound or rewritten: {entry.lost} commits no longer on it"
    return text + (f", {gained} ({commits})" if entry.gained else "")


def upstream_of(repo: Repo, branch: str) -> str | None:
    """The remote-tracking ref a branch shares its commits through: its upstream, else the
    same name on the default remote (``refs/remotes/origin/main``); None when neither is here."""
    remote = (git.config_values(repo, f"branch.{branch}.remote") or [""])[-1]
    merge = (git.config_values(repo, f"branch.{branch}.merge") or [""])[-1]
    if remote and remote != "." and merge and merge.startswith("refs/heads/"):
        tracked = f"refs/remotes/{remote}/{merge.removeprefix('refs/heads/')}"
        if git.ref_target(repo, tracked) is not None:
            return tracked
    for name in ["origin", *git.remote_names(repo)]:
        if git.ref_target(repo, f"refs/remotes/{name}/{branch}") is not None:
            return f"refs/remotes/{name}/{branch}"
    return None


Counting = Callable[[], tuple[list[git.CommitInfo], int]]  # commits, newest first, and how many: asked when called


def ahead_started(repo: Repo) -> Counting:
    """The commits of the branch checked out that its upstream lacks (without an upstream: what
    any remote has is shared, the branch's own commits are not), newest first, and how many:
    git's walk of them started now (a brief's other work goes on meanwhile). When asked, the
    answer for the refs as they are then (asked again where they moved meanwhile: the fresh look
    fetched)."""
    asked = _ahead_question(repo)
    started = _commits_ahead(repo, asked)

    def answer() -> tuple[list[git.CommitInfo], int]:
        now = _ahead_question(repo)
        found = started()  # waited for even when it is no longer the answer: no process is left behind
        return found if now == asked else _commits_ahead(repo, now)()

    return answer


def _ahead_question(repo: Repo) -> tuple[Oid, list[Oid]] | None:
    """The branch's tip and the tips that hold what is shared; None: nothing to share with."""
    branch = git.current_branch(repo)
    head = git.head_commit(repo)
    if head is None or branch is None or not git.remote_names(repo):
        return None
    upstream = upstream_of(repo, branch)
    hidden = [t for t in [git.ref_target(repo, upstream) if upstream else None] if t is not None]
    return head, hidden or list(git.ref_tips(repo, ("refs/remotes/",), 200).values())


def _commits_ahead(repo: Repo, asked: tuple[Oid, list[Oid]] | None) -> Counting:
    if asked is None:
        return lambda: ([], 0)
    return git.commits_since_started(repo, *asked, show=SHOWN_COMMITS, count_up_to=COUNT_UP_TO)


def unshared(repo: Repo, snap: store.Snapshot, tree: WorkTree | None, ahead: Counting | None = None) -> Unshared:
    """What is only in this clone: the branch's commits its upstream lacks (``repo`` is where
    the work is judged: the home's checkout; ``ahead``, where they were started to be counted
    there), the state changes no remote has, and the files not committed there (``tree``)."""
    from git_continuity.syncing import tracking

    branch = git.current_branch(repo)
    upstream = upstream_of(repo, branch) if branch else None
    found, count = (ahead or ahead_started(repo))()
    commits = [RefCommit(c.oid, summary_of(c)) for c in found]
    state = []
    if snap.commit is not None:
        for box in tracking.outbox(repo, snap.stream, Oid(snap.commit)):
            if box.changes:
                state.append(StateUnsent(box.remote, box.changes, box.never))
    touched = (tree.touched or 0) if tree else 0
    return Unshared(
        branch, ref_label(upstream) if upstream else None, count, commits, state, touched, tree.paths if tree else []
    )


def unshared_lines(found: Unshared) -> list[str]:
    """The brief's and the handoff's lines for work only in this clone (none when there is none)."""
    lines = []
    if found.ahead:
        n = f"{found.ahead}{'+' if found.ahead >= COUNT_UP_TO else ''} commit{'s' if found.ahead != 1 else ''}"
        named = "; ".join(f"{short(c.commit)} {c.summary}" for c in found.commits)
        more = found.ahead - len(found.commits)
        named += f"; {more} more" if more > 0 else ""
        if found.upstream:
            lines.append(f"- {found.branch}: {n} not on {found.upstream} ({named}): git push")
        else:
            lines.append(f"- {found.branch}: {n} on no remote ({named}): no remote has a branch {found.branch}")
    for unsent in found.state:
        n = f"{unsent.changes} state change{'s' if unsent.changes != 1 else ''}"
        where = f"never sent to {unsent.remote}" if unsent.never else f"not on {unsent.remote}"
        lines.append(f"- {n} {where}: git continuity push {unsent.remote}")
    if found.uncommitted:
        paths = ", ".join(found.paths)
        more = found.uncommitted - len(found.paths)
        paths += f", … {more} more" if more > 0 else ""
        lines.append(f"- {found.uncommitted} file{'s' if found.uncommitted != 1 else ''} not committed: {paths}")
    return lines


# -- the state now and then -----------------------------------------------------------------


def threads_moved(before: Mapping[str, Thread], after: Mapping[str, Thread]) -> list[ThreadMoved]:
    return [
        ThreadMoved(t.id, t.title, before[t.id].status if t.id in before else None, t.status)
        for t in sorted(after.values(), key=lambda t: (t.added_at, t.id))
        if t.id not in before or before[t.id].status != t.status
    ]


def claims_added(before: Iterable[str], after: Mapping[str, Claim], session_id: str | None) -> list[ClaimAdded]:
    """Claims new since ``before``, written in this session (or before sessions existed)."""
    old = set(before)
    return [
        ClaimAdded(c.id, c.text, c.handle, c.thread)
        for c in sorted(after.values(), key=lambda c: (c.added_at, c.id))
        if c.id not in old and c.session in (session_id, None)
    ]


def claim_states(assessed: Sequence[Assessed]) -> dict[str, str]:
    return {a.claim.id: a.derived.state for a in assessed}


def claims_changed(was: Mapping[str, str], assessed: Sequence[Assessed]) -> list[dict[str, Any]]:
    return [
        {
            "id": a.claim.id,
            "text": a.claim.text,
            "was": was[a.claim.id],
            "now": a.derived.state,
            "observed": a.derived.observed,
        }
        for a in assessed
        if a.claim.id in was and was[a.claim.id] != a.derived.state
    ]


def unconfirmed(a: Assessed) -> bool:
    """Not confirmed now: unknown, never checked, prose, or verified but not re-derived now
    (recorded earlier, another clone's report, a cmd: not approved here: labels.verified_now)."""
    return a.derived.state in UNCONFIRMED or (a.derived.state == "verified" and not labels.verified_now(a))


# -- Markdown items -------------------------------------------------------------------------


def claim_item(a: Assessed, *, state: bool, bold: bool = False, at: datetime | None = None) -> Item:
    """A claim's line: its state when ``state``, and how fresh that is when not re-derived now
    (made only if it is shown)."""
    moment = at or now()

    def made() -> tuple[list[str], object]:
        c = a.claim
        name = f"**{c.id}**" if bold else c.id
        handle = f" ({render.abbreviate(c.handle)})" if c.handle and c.handle != c.text else ""
        said = f" is {a.derived.state}" if state else ""
        note = labels.freshness_note(a, moment)
        said += f" [{note}]" if note else ""
        line = hung(f'- {name} "', f'{c.text}"{handle}{said}: {first_line(a.derived.observed)}')
        return [line], render.claim_json(a)

    return Item(made=made, key=a.claim.id)


def thread_item(tv: ThreadView) -> Item:
    thread, checks = tv.thread, tv.checks
    lines = [hung(f"- {thread.id} [{labels.thread_standing(tv)}] ", f"{thread.title}: {tv.tally()} now")]
    table = render.repository_table(checks)  # checks in sibling repositories: every one, as one table
    lines += table
    for a in checks:
        if (a.derived.state != "verified" or not labels.verified_now(a)) and not table:
            handle = render.abbreviate(a.claim.handle or "no handle")
            note = labels.freshness_note(a, now())
            fresh = f" [{note}]" if note else ""
            lines.append(f"  - {a.derived.state} {a.claim.id} {handle}{fresh}: {first_line(a.derived.observed)}")
    return Item(lines, render.thread_json(tv))


def objective_items(o: Objective | None, change: ObjectiveChange | None) -> list[Item]:
    if o is None:
        return [Item([f"({labels.NO_OBJECTIVE})"], None)]
    lines = [paragraph(o.text), hung("- why: ", o.why), hung(f"- set {shown(o.set_at)} UTC by ", o.set_by)]
    if change is not None and change.old:
        lines.append(hung(hung('- it was "', change.old) + '" until then; why it changed: ', change.why))
    return [Item(lines, render.objective_json(o))]


def work_tree_items(tree: WorkTree | None) -> list[Item]:
    if tree is None:
        return [Item(["- bare repository: no work tree"], None)]
    where = f"on branch {tree.branch}" if tree.branch else "detached HEAD"
    head = f' at {short(tree.head)} "{tree.head_summary}"' if tree.head else " (no commits yet)"
    lines = [f"- {where}{head}"]
    kinds = {"conflicted": tree.conflicted, "staged": tree.staged, "unstaged": tree.unstaged}
    counts = [f"{n} {kind}" for kind, n in {**kinds, "untracked": tree.untracked}.items() if n]
    if counts:
        more = tree.more_paths
        paths = ", ".join(tree.paths) + (f", … {more} more" if more > 0 else "")
        lines.append(f"- uncommitted: {', '.join(counts)}: {paths}")
    else:
        lines.append("- no uncommitted changes")
    if tree.stashes:
        count = len(tree.stashes)
        lines.append(f"- {count} stash{'es' if count != 1 else ''}, the latest: {tree.stashes[0].message}")
    return [Item(lines, tree.to_json())]


def journal_item(e: JournalEntry) -> Item:
    who = render.where(e.by.split(" <")[0], e.host, e.agent, e.session)
    kind = f" ({e.kind})" if e.kind and e.kind != "note" else ""
    text = cut(e.text.strip(), "git continuity orient --json")
    return Item([hung(f"- {shown(e.at)} UTC {who}{kind}: ", text)], render.journal_json(e))


def journal_section(found: Journal) -> Section:
    """The brief's journal: the latest live entries, newest first; those whose lifespan passed
    are left out and counted, never dropped silently."""
    n = found.faded_count
    intro = [f"{n} faded entr{'ies' if n != 1 else 'y'} left out: git continuity journal --all"] if n else []
    items = [journal_item(e) for e in reversed(found.entries)]
    if not items and n:
        items = [Item(["- no live entries"], None, placeholder=True)]
    title = f"Journal (latest {len(found.entries)} of {found.live})"
    return Section("journal", title, 10, items, see="git continuity journal", intro=intro, what="journal entries")


def read_at(snap: store.Snapshot, commit: str | None) -> tuple[dict[str, Thread], set[str]] | None:
    """Threads and claim ids as of an earlier state commit; None when it is unknown here."""
    old = store.at_commit(snap, Oid(commit) if commit else None)
    if old is None:
        return None
    return store.read_threads(old), store.claim_ids(old)


# -- since the last session -----------------------------------------------------------------


def since_sections(snap: store.Snapshot, last: Handoff | None, assessed: Sequence[Assessed]) -> list[Section]:
    """The brief's "Since the last session": what changed since the stream's last handoff
    (claim states, branches, other refs, other machines' journal entries)."""
    if last is None:
        return [
            Section(
                "since_none",
                "Since the last session",
                8,
                [Item(["- no earlier handoff on this stream: nothing to compare with"], None)],
                what="the changes since the last session",
            )
        ]
    who = render.where(last.by.split(" <")[0], last.host, last.agent, last.session)
    group = f"## Since the last session: handoff {last.id}, {shown(last.at)} UTC by {who}"
    here = session.hostname()
    moved, differ = _moved_since(snap, last, here)
    journal = [e for e in store.journal_since(snap, last.at) if e.host != here]
    changed = claims_changed(last.claims, assessed)
    quiet = Item(["- nothing changed: no commits, refs, claim states or journal entries"], None)
    from git_continuity.sessions import left_behind

    left = left_behind.section(snap.repo.work_dir, last, here, group)
    return [
        left,
        Section(
            "since_claims",
            "Claims whose state changed",
            4,
            [
                Item([hung(f'- {c["id"]} "', f'{c["text"]}": {c["was"]} → {c["now"]}: {first_line(c["observed"])}')], c)
                for c in changed
            ],
            what="changed claims",
            group=group,
        ),
        *_ref_sections(snap, last, group, moved, differ),
        Section(
            "since_journal",
            "Journal entries from other machines",
            9,
            [journal_item(e) for e in journal],
            see="git continuity journal",
            what="journal entries from other machines",
            group=group,
        ),
        Section(
            "since_quiet",
            "",
            8,
            [] if moved or differ or journal or changed else [quiet],
            what="the changes since the last session",
            group=group,
        ),
    ]


def _moved_since(snap: store.Snapshot, last: Handoff, here: str) -> tuple[list[MovedRef], list[MovedRef]]:
    """The refs that moved since the last handoff, and the branches that only differ from
    another clone's (each clone has its own branches: where they differ, nothing moved)."""
    moved = moved_refs(snap.repo, last.refs, ref_snapshot(snap.repo))
    apart = other_clone(snap.repo, last, here)
    differ = [m for m in moved if apart and m.ref.startswith("refs/heads/") and m.was is not None]
    return [m for m in moved if m not in differ and not (apart and m.ref.startswith("refs/heads/"))], differ


def _ref_sections(
    snap: store.Snapshot, last: Handoff, group: str, moved: list[MovedRef], differ: list[MovedRef]
) -> list[Section]:
    """New commits, branches that differ from the last handoff's clone, other refs that moved."""
    return [
        Section(
            "since_commits",
            "New commits",
            8,
            [Item([f"- {ref_line(m)}"], m.to_json()) for m in moved if m.grew],
            see="git log",
            what="branches",
            group=group,
        ),
        Section(
            "since_clones",
            f"Branches that differ from {last.host}'s clone (nothing moved: each clone has its own)",
            8,
            [Item([f"- {clone_line(snap.repo, m, last.host)}"], m.to_json()) for m in differ],
            see="git branch -v",
            what="branches",
            group=group,
        ),
        Section(
            "since_refs",
            "Refs that moved",
            8,
            [Item([f"- {ref_line(m)}"], m.to_json()) for m in moved if not m.grew],
            see="git for-each-ref",
            what="refs",
            group=group,
        ),
    ]


# -- lines of the brief's header and sections ---------------------------------------------------


def look_lines(looked: Look, moment: datetime) -> list[str]:
    """What the fresh look at the session's start found: the remotes it reached, and each one
    it did not with the age of what this clone knows of it; tags that differ; the state taken
    in or not; network checks not answered."""
    reached = [_remote_name(r) for r in looked.reaches if r.reached]
    lines = [f"Fresh look: fetched now from {', '.join(reached)}."] if reached else []
    for r in looked.reaches:
        if not r.reached:
            known = (
                f"what this clone knows of it (its branches, tags and state, and every check that reads them) is "
                f"as it last heard from it, {ago(r.known, moment)}"
                if r.known
                else "this clone never fetched from it"
            )
            url = f" ({r.url})" if r.url else ""
            lines.append(f"Fresh look: {_remote_name(r)}{url} was not reached: {r.failed}; {known}.")
        lines += [
            f"Tag {tag} differs between this clone and {_remote_name(r)}: left as it is here (git ls-remote {r.remote} "
            f"refs/tags/{tag} shows theirs)."
            for tag in r.clobbered
        ]
    lines += [f"Fresh look: {said}." for said in looked.state]
    if looked.unanswered:
        n = len(looked.unanswered)
        first = next(iter(looked.unanswered.values()))
        lines.append(
            f"Fresh look: {n} network check{'s' if n != 1 else ''} not answered ({first}): "
            f"shown with {'their' if n != 1 else 'its'} last evidence and its age."
        )
    return lines


def _remote_name(r: Reach) -> str:
    return f"{r.repository}'s {r.remote}" if r.repository else r.remote


def look_json(looked: Look) -> dict[str, Any]:
    return {
        "bound": looked.bound,
        "took": round(looked.took, 3),
        "remotes": [
            {
                "repository": r.repository or None,
                "remote": r.remote,
                "url": r.url,
                "reached": r.reached,
                "failed": r.failed,
                "known_at": stamp(r.known) if r.known else None,
                "tags_differ": list(r.clobbered),
            }
            for r in looked.reaches
        ],
        "network": {
            "answered": sorted(looked.observed),
            "unanswered": [{"handle": h, "why": why} for h, why in sorted(looked.unanswered.items())],
        },
        "state": list(looked.state),
    }


def let_go_entries(entries: Sequence[JournalEntry], seen: View) -> list[JournalEntry]:
    """The latest journal entry saying the Stop gate let a session end on unverified threads,
    while one of them still holds a stop (agent_hooks._let_go writes it)."""
    from git_continuity.constants import LET_GO

    gating = {tv.thread.id for tv in seen.threads if tv.gates}
    for e in reversed(entries):
        if e.text.startswith(LET_GO) and any(t in e.text for t in gating):
            return [e]
    return []


def tally(assessed: Sequence[Assessed]) -> str:
    return ", ".join(f"{n} {s}" for s, n in render.counts(assessed).items() if n) or "no claims yet"


FRESHNESS_SAID = {
    "now": "re-derived now",
    "recorded": "recorded earlier, not asked now",
    "reported": "reported by another clone",
    "unapproved": "not approved here",
}


def freshness_tally(assessed: Sequence[Assessed]) -> str:
    """How many claims' states were re-derived now, and how many show earlier evidence."""
    counts = {kind: 0 for kind in FRESHNESS_SAID}
    for a in assessed:
        kind = labels.freshness(a).kind
        if kind in counts:
            counts[kind] += 1
    return ", ".join(f"{n} {FRESHNESS_SAID[k]}" for k, n in counts.items() if n)


def next_line(packet: Packet | None, threads: Mapping[str, Thread]) -> str:
    """The next action, or what the ready queue puts first when none is set (planning)."""
    from git_continuity.store import planning

    if packet is None:
        return UNREADABLE
    if packet.next_action:
        return paragraph(packet.next_action)
    return planning.next_or_ready(None, threads, packet.blockers)  # its title hangs under itself


def blocker_json(b: Blocker) -> dict[str, str]:
    return {"id": b.id, "text": b.text, "added_at": b.added_at, "added_by": b.added_by}


def session_line(started: SessionShown, moment: datetime) -> str:
    agent = f" ({started.agent})" if started.agent else ""
    end = "end it with: git continuity handoff"
    if started.continued:
        when = ago(parse_stamp(started.started_at), moment)
        return f"Session {started.id}{agent} continues, started {when} on {started.host}; {end}"
    return f"Session {started.id}{agent} started now on {started.host}; {end}"
