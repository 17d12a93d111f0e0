"""Whether a commit is on a tip's history, answered as git answers it: from the last answer
plus the commits since (issue 34).

A ``reachable:`` or ``pushed:`` claim asks about one commit and a ref that moves after every
commit, push and fetch. Each answer is kept by (commit, tip) under ``.git/continuity/cache/``;
when the ref has moved on, the question is answered from the last answer for that commit
and the commits between its tip and the new one: everything below a tip is below the old
tip or among the commits since it (``git rev-list NEW ^OLD``), so an answer of no stays no
unless the commit is among them, and an answer of yes stays yes when the old tip is below
the new one. Only a commit never asked about before (or a ref moved sideways, far from
where it was) is answered by one walk of the tip, shared by every question about it
(history.ancestors). ``Repo.walked`` counts the commits read walking history.
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field

import pygit2

from git_continuity import atomic
from git_continuity.repo.base import Oid, Repo
from git_continuity.repo.history import ancestors, keep_found

KEEP_PER_COMMIT = 3  # the newest tips an answer is kept for, per commit
KEEP = 100_000  # answers kept on disk; past that, only those asked last time
NEAR = 2_000  # commits a new tip is searched for the tip of an earlier answer
RECORD = 41  # a commit's 20 bytes, a tip's 20, and the answer


@dataclass
class Answers:
    """The answers kept: for each commit, the tips asked about, the newest first, and the
    answer there (a dict: a claim's question is one lookup, not a scan of its tips)."""

    by_commit: dict[bytes, dict[bytes, bool]] = field(default_factory=dict)
    asked: dict[bytes, set[bytes]] = field(default_factory=dict)  # by this process: commit → tips
    new: bool = False
    times: dict[bytes, int] = field(default_factory=dict)  # tips' commit times, read once

    def get(self, commit: bytes, tip: bytes) -> bool | None:
        self.asked.setdefault(commit, set()).add(tip)
        tips = self.by_commit.get(commit)
        return tips.get(tip) if tips is not None else None

    def put(self, commit: bytes, tip: bytes, held: bool) -> None:
        kept = self.by_commit.get(commit, {})
        self.by_commit[commit] = {tip: held, **{at: h for at, h in kept.items() if at != tip}}
        self.new = True

    def kept(self) -> dict[bytes, list[tuple[bytes, bool]]]:
        """What is written down: for each commit, every tip this process asked about (a done
        thread's closing commit on no branch is asked about on each of them, and the old ones
        do not move), and of the others the newest, up to KEEP_PER_COMMIT in all (a ref that
        moves leaves a tip behind at each commit)."""
        found = {}
        for commit, tips in self.by_commit.items():
            now = self.asked.get(commit, set())
            asked = [(at, h) for at, h in tips.items() if at in now]
            others = [(at, h) for at, h in tips.items() if at not in now]
            found[commit] = asked + others[: KEEP_PER_COMMIT - len(asked)]
        if sum(len(v) for v in found.values()) > KEEP:
            found = {c: v for c, v in found.items() if c in self.asked}
        return found


def _path(repo: Repo) -> str:
    return str(repo.local_dir / "cache" / "reach")


def _answers(repo: Repo) -> Answers:
    if repo._reach is None:
        found = Answers()
        try:
            with open(_path(repo), "rb") as f:
                raw = f.read()
        except OSError:
            raw = b""
        by_commit = found.by_commit
        for i in range(0, len(raw) - RECORD + 1, RECORD):  # each commit's tips, the newest first
            tips = by_commit.get(commit := raw[i : i + 20])
            if tips is None:
                tips = by_commit[commit] = {}
            tips.setdefault(raw[i + 20 : i + 40], raw[i + 40] == 1)
        repo._reach = found
    return repo._reach


@contextlib.contextmanager
def kept_once(repo: Repo) -> Iterator[None]:
    """Answers found inside are written once, at the end (a view dereferences its claims in
    two groups, then asks where its done threads' commits are: each wrote the whole file)."""
    repo._kept_at_end += 1
    try:
        yield
    finally:
        repo._kept_at_end -= 1
        keep_answers(repo)


def keep_answers(repo: Repo) -> None:
    """Write down what this process found out (the whole file replaced: racing writers each
    keep a whole file, and losing one's answers only costs speed), what trees hold, and which
    ids are commits."""
    if repo._kept_at_end:
        return
    keep_found(repo)
    found = repo._reach
    if found is None or not found.new:
        return
    raw = b"".join(commit + tip + bytes([held]) for commit, tips in found.kept().items() for tip, held in tips)
    try:
        atomic.write(repo.local_dir / "cache" / "reach", raw)
    except OSError:
        return  # a cache that cannot be written only costs speed
    found.new = False


def contains(repo: Repo, tip: Oid, rev: Oid) -> bool:
    """Whether rev is tip or one of its ancestors."""
    answers = _answers(repo)
    at, commit = bytes.fromhex(tip), bytes.fromhex(rev)
    known = answers.get(commit, at)
    held = True if at == commit else known
    if held is None:
        held = _from_earlier(repo, answers, at, commit)
    if held is None:
        held = _first_answer(repo, tip, commit)
    if known != held:
        answers.put(commit, at, held)
    return held


def _first_answer(repo: Repo, tip: Oid, commit: bytes) -> bool:
    """Whether commit is below tip, never asked before: from the commits above it, as git
    answers it (what a walk costs is what git's costs), until NEAR commits were read for
    this tip in this process; past that (claims about commits far down) from one walk of the
    tip, shared by every question about it."""
    known = repo._ancestors.get(tip)
    spent = repo._near.get(tip, 0)
    if known is None and spent < NEAR:
        before = repo.walked
        since = _since(repo, bytes.fromhex(tip), commit)
        repo._near[tip] = spent + repo.walked - before
        if since is not None and (since.descends or not since.cut):
            return since.descends
    return commit in (known if known is not None else ancestors(repo, tip))


def _from_earlier(repo: Repo, answers: Answers, tip: bytes, commit: bytes) -> bool | None:
    """The answer at tip from an answer at an earlier tip and the commits since; None when
    no earlier tip is near enough to tell (a ref moved far, or sideways from a yes). The
    newest earlier tips are tried first, the few newest only: a branch's own last tip is
    usually the newest (a closing commit asked about on every old branch has many older)."""
    earlier_tips = sorted(answers.by_commit.get(commit, {}).items(), key=lambda e: _time(repo, e[0]), reverse=True)
    for earlier, held in earlier_tips[:KEEP_PER_COMMIT]:
        since = _since(repo, tip, earlier)
        if since is None:
            continue
        if commit in since.commits or (held and since.descends):
            return True
        if not held:
            return False  # below neither the earlier tip nor the commits since
    return None


def _time(repo: Repo, commit: bytes) -> int:
    answers = _answers(repo)
    if commit not in answers.times:  # a ref's few last tips, asked of each claim about it
        try:
            answers.times[commit] = int(repo.git[pygit2.Oid(raw=commit)].peel(pygit2.Commit).commit_time)
        except (KeyError, ValueError, pygit2.GitError):
            answers.times[commit] = -1  # gone (a branch deleted and pruned): tried last
    return answers.times[commit]


@dataclass(frozen=True)
class Since:
    """The commits reachable from a tip but not from an earlier one (``git rev-list TIP
    ^EARLIER``), and whether the earlier one is below the tip (moved on, not sideways)."""

    commits: frozenset[bytes]
    descends: bool
    cut: bool = False  # an object missing on the way (not a shallow clone's graft): told apart by the caller


def _since(repo: Repo, tip: bytes, earlier: bytes) -> Since | None:
    """Since, kept for the process (many claims name one ref); None past NEAR commits."""
    key = tip + earlier
    if key not in repo._since:
        repo._since[key] = Since(frozenset(), True) if tip == earlier else _walk_since(repo, tip, earlier)
    return repo._since[key]


class _Walk:
    """git's own walk for ``rev-list TIP ^EARLIER`` (revision.c, limit_list): newest commit
    first, what is below the earlier tip painted so, until only painted commits are left
    (and SLOP more, for clocks that disagree). libgit2's walk with a hidden commit reads
    down to the root where commits share a second."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.painted: dict[bytes, bool] = {}
        self.parents: dict[bytes, list[bytes]] = {}
        self.queue: list[tuple[int, int, bytes]] = []
        self.descends = False
        self.cut = False

    def add(self, oid: bytes, painted: bool) -> None:
        self.painted[oid] = painted
        try:
            when = self.repo.git[pygit2.Oid(raw=oid)].peel(pygit2.Commit).commit_time
        except (KeyError, ValueError, pygit2.GitError):
            when = -1  # a shallow clone's graft, a missing object: nothing below it here
        heapq.heappush(self.queue, (-when, len(self.painted), oid))

    def step(self) -> bytes:
        _, _, oid = heapq.heappop(self.queue)
        self.repo.walked += 1
        try:
            found = [p.raw for p in self.repo.git[pygit2.Oid(raw=oid)].peel(pygit2.Commit).parent_ids]
        except (KeyError, ValueError, pygit2.GitError):
            found, self.cut = [], True
        self.parents[oid] = found
        painted = self.painted[oid]
        for parent in found:
            if parent not in self.painted:
                self.add(parent, painted)
            elif painted:
                self.paint(parent)
        return oid

    def paint(self, oid: bytes) -> None:
        """Paint a commit met before unpainted, and what was already read below it."""
        stack = [oid]
        while stack:
            now = stack.pop()
            if not self.painted.get(now, True):
                self.painted[now] = True
                stack.extend(self.parents.get(now, ()))

    def only_painted_left(self) -> bool:
        return all(self.painted[oid] for _, _, oid in self.queue)


SLOP = 5  # commits read past the point where only painted ones are left (revision.c's SLOP)


def _walk_since(repo: Repo, tip: bytes, earlier: bytes) -> Since | None:
    walk = _Walk(repo)
    walk.add(tip, False)  # first: of two commits made in one second, the newer is read first
    walk.add(earlier, True)
    kept, slop = [], SLOP
    while walk.queue and slop:
        if len(walk.painted) > NEAR:
            return None
        oid = walk.step()
        if not walk.painted[oid]:
            kept.append(oid)
            walk.descends = walk.descends or earlier in walk.parents[oid]
        slop = slop - 1 if walk.only_painted_left() else SLOP
    return Since(frozenset(c for c in kept if not walk.painted[c]), walk.descends, walk.cut)
