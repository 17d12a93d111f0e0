"""The typed shapes that cross layers as JSON: the work tree, a moved ref, a handoff, a conflict
record, and the session as a brief reports it.

Part of the model (model.py holds the entries; this module the records built from them and
from the repository), kept apart only so neither module grows past a reader's page count.
Like model.py it is pure data and imports nothing of ours but the model. Each shape has
``to_json`` (exactly the JSON its schema in ``schema/`` describes, tests/test_records.py checks
each one) and ``from_json`` (for what a store reader returns: already validated, so it only
reads the keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from git_continuity.model import Blocker, Objective, ObjectiveChange, State, ThreadStatus

Json = dict[str, Any]  # a JSON object as the json module reads and writes it


@dataclass(frozen=True)
class Stash:
    commit: str
    message: str


@dataclass(frozen=True)
class WorkTree:
    """Branch, HEAD, uncommitted changes in brief and stashes (none of it in a bare repository)."""

    branch: str | None  # None: detached HEAD
    head: str | None  # None: no commits yet
    head_summary: str | None
    staged: int
    unstaged: int
    untracked: int
    conflicted: int
    touched: int | None  # paths changed in any way; None in handoffs written before it was recorded
    paths: list[str]  # the first few of them
    stashes: list[Stash]

    @property
    def more_paths(self) -> int:
        """Changed paths not named in ``paths``."""
        return (len(self.paths) if self.touched is None else self.touched) - len(self.paths)

    def to_json(self) -> Json:
        data = asdict(self)
        if self.touched is None:
            del data["touched"]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WorkTree:
        return cls(
            data["branch"],
            data["head"],
            data["head_summary"],
            data["staged"],
            data["unstaged"],
            data["untracked"],
            data["conflicted"],
            data.get("touched"),
            list(data["paths"]),
            [Stash(s["commit"], s["message"]) for s in data["stashes"]],
        )


SHOWN_COMMITS = 5  # commits a handoff names per ref; the rest are counted


def ref_label(name: str) -> str:
    for prefix, label in (("refs/heads/", ""), ("refs/remotes/", ""), ("refs/tags/", "tag ")):
        if name.startswith(prefix):
            return label + name[len(prefix) :]
    return name


@dataclass(frozen=True)
class RefCommit:
    commit: str
    summary: str


@dataclass(frozen=True)
class StateUnsent:
    remote: str
    changes: int  # at most tracking.OUTBOX_COUNT
    never: bool  # the remote never had this stream's state, as far as this clone knows


@dataclass(frozen=True)
class Unshared:
    """Work that is only in this clone: commits of the home branch not on its upstream, state
    changes not sent to a remote, files not committed (#33). The brief and the handoff name it."""

    branch: str | None  # the branch judged (the home's), None when detached
    upstream: str | None  # "origin/main"; None when the branch tracks none and no remote has it
    ahead: int  # commits of the branch not on the upstream (all of them when there is none)
    commits: list[RefCommit]  # the first few
    state: list[StateUnsent]
    uncommitted: int  # paths changed in the work tree (staged, unstaged, untracked, conflicted)
    paths: list[str]  # the first few

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Unshared:
        return cls(
            data["branch"],
            data["upstream"],
            data["ahead"],
            [RefCommit(c["commit"], c["summary"]) for c in data["commits"]],
            [StateUnsent(u["remote"], u["changes"], u["never"]) for u in data["state"]],
            data["uncommitted"],
            list(data["paths"]),
        )


@dataclass(frozen=True)
class MovedRef:
    """A ref that differs between two snapshots of the refs. Branches and remote-tracking refs
    also say how many commits they gained (naming the first few) and lost (rewound or rewritten);
    ``missing`` says the earlier tip is not in this clone, so nothing could be counted."""

    ref: str
    was: str | None  # None: new since
    now: str | None  # None: deleted since
    missing: bool = False
    gained: int = 0
    lost: int = 0
    commits: list[RefCommit] = field(default_factory=list)

    @property
    def grew(self) -> bool:
        """A branch that only gained commits: what a brief calls new commits."""
        return self.ref.startswith("refs/heads/") and self.gained > 0 and not self.lost

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MovedRef:
        commits = [RefCommit(c["commit"], c["summary"]) for c in data["commits"]]
        return cls(data["ref"], data["was"], data["now"], data["missing"], data["gained"], data["lost"], commits)


# -- the handoff ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    """What 'this session did' is measured from: its own start when the work tree recorded
    one, else the stream's previous handoff, else nothing."""

    kind: Literal["session", "handoff", "none"]
    at: str | None = None
    handoff: str | None = None
    state: str | None = None

    def to_json(self) -> Json:
        data = {"kind": self.kind, "at": self.at, "handoff": self.handoff, "state": self.state}
        return {k: v for k, v in data.items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Baseline:
        return cls(data["kind"], data.get("at"), data.get("handoff"), data.get("state"))


@dataclass(frozen=True)
class ClaimAdded:
    id: str
    text: str
    handle: str | None
    thread: str | None


@dataclass(frozen=True)
class ThreadMoved:
    id: str
    title: str
    was: ThreadStatus | None  # None: new
    now: ThreadStatus


@dataclass(frozen=True)
class Did:
    """What a session did: branches it moved, claims it added, threads whose status changed."""

    commits: list[MovedRef]
    claims: list[ClaimAdded]
    threads: list[ThreadMoved]
    # What arrived meanwhile by pull or sync: other people's commits and state changes, each
    # "arrived from <who>", never credited to this session.
    arrived: list[Arrived] = field(default_factory=list)

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Did:
        return cls(
            [MovedRef.from_json(m) for m in data["commits"]],
            [ClaimAdded(c["id"], c["text"], c["handle"], c["thread"]) for c in data["claims"]],
            [ThreadMoved(t["id"], t["title"], t["was"], t["now"]) for t in data["threads"]],
            [Arrived(a["what"], a["who"]) for a in data.get("arrived") or []],
        )


@dataclass(frozen=True)
class Arrived:
    what: str  # "main +1 (0ca66e8 Fix the login)", "thread t-… open → done"
    who: str  # the author, or the session and host that wrote it


@dataclass(frozen=True)
class Failing:
    claim: str
    state: State
    observed: str  # its first line


@dataclass(frozen=True)
class ThreadSummary:
    """An open thread as a handoff leaves it: how many of its checks verified then."""

    id: str
    title: str
    status: ThreadStatus
    checks: int
    verified: int
    failing: list[Failing]

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ThreadSummary:
        failing = [Failing(f["claim"], f["state"], f["observed"]) for f in data["failing"]]
        return cls(data["id"], data["title"], data["status"], data["checks"], data["verified"], failing)


def _change_json(c: ObjectiveChange) -> Json:
    return {"id": c.id, "old": c.old, "new": c.new, "why": c.why, "at": c.at, "by": c.by}


@dataclass(frozen=True)
class Handoff:
    """What a session left for the next (``.continuity/handoffs/…``). Its claim states and refs
    are what it saw then, for the next orient to compare with now; never shown as the truth."""

    id: str
    stream: str
    at: str
    by: str
    host: str
    session: str
    state: str  # the state commit it was written on
    baseline: Baseline
    objective: Objective
    next_action: str | None
    blockers: list[Blocker]
    threads: list[ThreadSummary]
    work_tree: WorkTree | None
    did: Did
    claims: dict[str, str]  # claim id -> its state then
    refs: dict[str, str]  # branch, remote-tracking and tag tips then
    journal: str  # the journal entry written with it
    agent: str | None = None
    agent_session: str | None = None
    started_at: str | None = None
    objective_change: ObjectiveChange | None = None
    note: str | None = None
    machine: dict[str, int] | None = None  # memory, disk_free (bytes), cpus here then (machine.here)
    clone: str | None = None  # the clone it was written in (siblings.clone_id): its branches are that clone's
    unshared: Unshared | None = None  # what was only in that clone then

    def to_json(self) -> Json:
        o = self.objective
        data: Json = {
            "id": self.id,
            "stream": self.stream,
            "at": self.at,
            "by": self.by,
            "host": self.host,
            "session": self.session,
            "state": self.state,
            "baseline": self.baseline.to_json(),
            "objective": {"text": o.text, "why": o.why, "set_at": o.set_at, "set_by": o.set_by},
            "next_action": self.next_action,
            "blockers": [
                {"id": b.id, "text": b.text, "added_at": b.added_at, "added_by": b.added_by} for b in self.blockers
            ],
            "threads": [t.to_json() for t in self.threads],
            "work_tree": self.work_tree.to_json() if self.work_tree else None,
            "did": self.did.to_json(),
            "claims": dict(self.claims),
            "refs": dict(self.refs),
            "journal": self.journal,
        }
        optional = {
            "agent": self.agent,
            "agent_session": self.agent_session,
            "started_at": self.started_at,
            "objective_change": _change_json(self.objective_change) if self.objective_change else None,
            "note": self.note,
            "machine": dict(self.machine) if self.machine else None,
            "clone": self.clone,
            "unshared": self.unshared.to_json() if self.unshared else None,
        }
        data.update({k: v for k, v in optional.items() if v is not None})
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Handoff:
        change = data.get("objective_change")
        return cls(
            id=data["id"],
            stream=data["stream"],
            at=data["at"],
            by=data["by"],
            host=data["host"],
            session=data["session"],
            state=data["state"],
            baseline=Baseline.from_json(data["baseline"]),
            objective=Objective(**data["objective"]),
            next_action=data["next_action"],
            blockers=[Blocker(**b) for b in data["blockers"]],
            threads=[ThreadSummary.from_json(t) for t in data["threads"]],
            work_tree=WorkTree.from_json(data["work_tree"]) if data["work_tree"] is not None else None,
            did=Did.from_json(data["did"]),
            claims=dict(data["claims"]),
            refs=dict(data["refs"]),
            journal=data["journal"],
            agent=data.get("agent"),
            agent_session=data.get("agent_session"),
            started_at=data.get("started_at"),
            objective_change=ObjectiveChange(**change) if change else None,
            note=data.get("note"),
            machine=data.get("machine"),
            clone=data.get("clone"),
            unshared=Unshared.from_json(data["unshared"]) if data.get("unshared") else None,
        )

    def summary_json(self) -> Json:
        """Who left it, when and where: what a brief says of the last handoff."""
        return {
            "id": self.id,
            "at": self.at,
            "by": self.by,
            "host": self.host,
            "session": self.session,
            "agent": self.agent,
        }


# -- conflict records and sessions ----------------------------------------------------------


@dataclass(frozen=True)
class Origin:
    commit: str  # the commit that introduced a value
    at: str


@dataclass(frozen=True)
class ConflictRecord:
    """A value a merge of two clones' state did not keep (``.continuity/conflicts/<id>.json``)."""

    id: str
    path: str
    what: str
    kept: object  # any JSON value: what the merge kept (None: deleted)
    kept_from: Origin
    lost: object  # the other value, kept here so nothing is lost
    lost_from: Origin
    between: tuple[str, str]  # the two state commits merged, sorted
    key: str | None = None  # within the packet: objective, next_action, blockers/<id> or layout

    def to_json(self) -> Json:
        data = {**asdict(self), "between": list(self.between)}
        if self.key is None:
            del data["key"]
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ConflictRecord:
        first, second = data["between"]
        return cls(
            data["id"],
            data["path"],
            data["what"],
            data["kept"],
            Origin(data["kept_from"]["commit"], data["kept_from"]["at"]),
            data["lost"],
            Origin(data["lost_from"]["commit"], data["lost_from"]["at"]),
            (first, second),
            data.get("key"),
        )


@dataclass(frozen=True)
class SessionShown:
    """The session a brief was made in, as orient reports it."""

    id: str
    agent: str | None
    agent_session: str | None  # the agent's own id for its conversation
    host: str
    started_at: str
    continued: bool  # False: it started with this brief

    def to_json(self) -> Json:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionShown:
        return cls(
            data["id"], data["agent"], data["agent_session"], data["host"], data["started_at"], data["continued"]
        )
