"""Commits and history: resolving revisions, ancestry (walked once and cached), merge
bases, and the commits between two points."""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pygit2

from git_continuity import atomic
from git_continuity.errors import UserError
from git_continuity.repo.base import Oid, Repo
from git_continuity.repo.kept import Kept
from git_continuity.repo.refs import ref_target


def resolve_commit(repo: Repo, rev: str) -> Oid:
    """A revision as a full commit id, or a UserError naming the revision."""
    if rev.startswith("-"):
        raise UserError(f"revision {rev!r} starts with '-'; name a commit, branch or tag")
    if not rev:
        raise UserError("empty revision; name a commit, branch or tag")
    try:
        obj = repo.git.revparse_single(rev)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        if rev == "HEAD" and repo.git.head_is_unborn:
            raise UserError("HEAD does not resolve: the repository has no commits yet") from None
        if repo.git.is_shallow:
            raise UserError(
                f"revision {rev!r} does not resolve to a commit here: this is a shallow clone, whose history stops"
                " short (git fetch --unshallow brings the whole history)"
            ) from None
        raise UserError(f"revision {rev!r} does not resolve to a commit here") from None
    return Oid(str(commit.id))


HEX = "0123456789abcdef"
HEADERS = hasattr(pygit2.Odb, "read_header")  # pygit2 1.20; before it (1.19, our floor) objects are read whole


def _kind(repo: Repo, oid: str) -> int | None:
    """An object's type, or None where it is not here. A full id found a commit before is
    only looked up in the pack indexes (kept: an id's type never changes; a fifth of the cost
    of reading the header, and no page of the pack read); else the type is read from the
    header alone (a quarter of the cost of reading the object whole, in a pack of git/git's
    size). An abbreviated id is looked up as git would (pygit2's prefix lookup)."""
    try:
        if len(oid) in (40, 64):
            key = oid.lower()
            commits = _commits(repo)
            if commits.get(key):
                return pygit2.GIT_OBJECT_COMMIT if repo.git.odb.exists(key) else None
            if HEADERS:
                kind = int(repo.git.odb.read_header(key)[0])
                if kind == pygit2.GIT_OBJECT_COMMIT:
                    commits.put(key, True)
                return kind
        found = repo.git.get(oid)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return None if found is None else int(found.type)


def _commits(repo: Repo) -> Kept[str, bool]:
    """The ids found to be commits: one per line; a line that is no id is skipped."""
    if repo._commits is None:
        repo._commits = Kept(repo.local_dir / "cache" / "commits", 200_000, _read_ids, _written_ids)
    return repo._commits


def _read_ids(data: bytes) -> dict[str, bool]:
    lines = data.decode(errors="replace").split("\n")
    return {line: True for line in lines if len(line) in (40, 64) and not line.strip(HEX)}


def _written_ids(known: Mapping[str, bool]) -> bytes:
    return "".join(f"{oid}\n" for oid in sorted(known)).encode()


def has_commit(repo: Repo, oid: Oid) -> bool:
    return _kind(repo, oid) == pygit2.GIT_OBJECT_COMMIT


def has_object(repo: Repo, oid: Oid) -> bool:
    """Whether the object is here, whatever its type."""
    try:
        return repo.git.get(oid) is not None
    except (ValueError, pygit2.GitError):
        return False


def peel_to_commit(repo: Repo, oid: Oid) -> Oid | None:
    if len(oid) in (40, 64) and _kind(repo, oid) == pygit2.GIT_OBJECT_COMMIT:
        return Oid(oid.lower())  # a branch's tip, a lightweight tag: nothing to peel, nothing read
    try:
        return Oid(str(repo.git[oid].peel(pygit2.Commit).id))
    except (KeyError, ValueError, pygit2.GitError):
        return None


ANCESTOR_CACHE_MIN = 2000  # walks shorter than this are cheaper than a cache file


ANCESTOR_CACHE_KEEP = 16


def ancestors(repo: Repo, tip: Oid) -> frozenset[bytes]:
    """Every commit reachable from tip, tip included, as raw 20-byte ids: how a question
    about a commit never asked about before is answered (reach.py answers the rest from it).

    Many such questions against one ref cost one walk (a descendant_of per claim is ~80 ms
    on 10k commits). A long walk (~50 ms per 10k commits) is also kept on disk under
    ``.git/continuity/cache/`` keyed by the tip: history below a commit never changes.
    """
    found = repo._ancestors.get(tip)
    if found is not None:
        return found
    cache = repo.local_dir / "cache" / "ancestors" / tip
    try:
        raw = cache.read_bytes()
        found = frozenset(raw[i : i + 20] for i in range(0, len(raw), 20))
    except OSError:
        try:
            walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.NONE)
            found = frozenset(c.id.raw for c in walker)
        except (KeyError, ValueError, pygit2.GitError) as error:
            raise HistoryCut(f"the history below {tip[:7]} is cut: an object is missing here ({error})") from None
        repo.walked += len(found)
        if len(found) >= ANCESTOR_CACHE_MIN:
            _keep_ancestors(cache, found)
    repo._ancestors[tip] = found
    return found


def _keep_ancestors(cache: Path, found: frozenset[bytes]) -> None:
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        old = sorted(cache.parent.iterdir(), key=lambda p: p.stat().st_mtime)
        for stale in old[: max(0, len(old) - ANCESTOR_CACHE_KEEP + 1)]:
            stale.unlink(missing_ok=True)
        atomic.write(cache, b"".join(found))
    except OSError:
        pass  # a cache that cannot be written only costs speed


def is_shallow(repo: Repo) -> bool:
    return bool(repo.git.is_shallow)


def head_commit(repo: Repo) -> Oid | None:
    if repo.git.head_is_unborn:
        return None
    try:
        return Oid(str(repo.git.head.peel(pygit2.Commit).id))
    except (pygit2.GitError, KeyError):
        return None


def path_in_commit(repo: Repo, commit: Oid, path: str) -> bool:
    """Whether commit's tree holds path.

    What a commit's tree holds never changes, so the answer is kept by commit id
    (_tree_paths): reading a tree that a pack stores as a chain of deltas cost ~80 µs,
    most of what a ``file:`` check costs, and reading the commit for its tree most of the
    rest. Only the commit's header is read each time, so a commit this clone lacks is never
    answered from what was kept."""
    if len(commit) not in (40, 64) or _kind(repo, commit) != pygit2.GIT_OBJECT_COMMIT:
        try:  # an abbreviated id, or an object that leads to a commit: read as it is
            return _in_tree(repo.git[commit].peel(pygit2.Commit), path)
        except (KeyError, ValueError):
            return False
    key = (commit.lower(), path)
    known = _tree_paths(repo)
    held = known.get(key)
    if held is None:
        held = _in_tree(repo.git[commit].peel(pygit2.Commit), path)
        known.put(key, held)
    return held


def _in_tree(commit: pygit2.Commit, path: str) -> bool:
    try:
        commit.tree[path]
    except KeyError:
        return False
    return True


def _tree_paths(repo: Repo) -> Kept[tuple[str, str], bool]:
    """What commits' trees hold: records ``<commit id><1 or 0><path>``, each ended by NUL
    (which no path holds); a record that does not read so is skipped (an older version kept
    them by tree id, which no commit id is)."""
    if repo._tree_paths is None:
        repo._tree_paths = Kept(repo.local_dir / "cache" / "tree-paths", 200_000, _read_paths, _written_paths)
    return repo._tree_paths


def _read_paths(data: bytes) -> dict[tuple[str, str], bool]:
    text = data.decode(errors="surrogateescape")
    return {(r[:40], r[41:]): r[40] == "1" for r in text.split("\0") if len(r) > 41 and r[40] in "01"}


def _written_paths(known: Mapping[tuple[str, str], bool]) -> bytes:
    text = "".join(f"{commit}{int(held)}{path}\0" for (commit, path), held in known.items())
    return text.encode(errors="surrogateescape")


def keep_found(repo: Repo) -> None:
    """Write down which ids are commits and what trees hold, where this process found more."""
    for kept in (repo._commits, repo._tree_paths):
        if kept is not None:
            kept.keep()


def tag_commit(repo: Repo, name: str) -> Oid | None:
    target = ref_target(repo, f"refs/tags/{name}")
    return peel_to_commit(repo, target) if target else None


@dataclass(frozen=True)
class CommitInfo:
    oid: Oid
    parents: tuple[Oid, ...]
    message: str
    author: str
    time: datetime
    tree: Oid
    authored: datetime


def commit_info(repo: Repo, oid: Oid) -> CommitInfo:
    c = repo.git[oid].peel(pygit2.Commit)
    return CommitInfo(
        Oid(str(c.id)),
        tuple(Oid(str(p)) for p in c.parent_ids),
        c.message,
        f"{c.author.name} <{c.author.email}>",
        datetime.fromtimestamp(c.commit_time, timezone.utc),
        Oid(str(c.tree_id)),
        datetime.fromtimestamp(c.author.time, timezone.utc),
    )


def first_parent_log(repo: Repo, tip: Oid) -> Iterator[CommitInfo]:
    """tip and its first parents, newest first, as far as this clone has them (a history cut
    by a deleted object or a shallow fetch ends there: the caller checks the last one's parent)."""
    oid: Oid | None = tip
    while oid is not None:
        info = commit_info(repo, oid)
        yield info
        oid = info.parents[0] if info.parents and has_commit(repo, info.parents[0]) else None


class HistoryCut(UserError):
    """A walk of history met a commit this clone lacks (a deleted object, a cut history)."""


def _cut(a: Oid, b: Oid, error: Exception) -> HistoryCut:
    return HistoryCut(
        f"the history between {a[:7]} and {b[:7]} is cut: an object is missing here ({error}); "
        "git continuity doctor says how to repair it"
    )


def is_ancestor(repo: Repo, ancestor: Oid, tip: Oid) -> bool:
    """Whether ancestor is tip or one of its ancestors (descendant_of is false for a == b)."""
    try:
        return ancestor == tip or bool(repo.git.descendant_of(pygit2.Oid(hex=tip), pygit2.Oid(hex=ancestor)))
    except (KeyError, pygit2.GitError) as error:
        raise _cut(ancestor, tip, error) from None


def ahead_behind(repo: Repo, local: Oid, upstream: Oid) -> tuple[int, int]:
    try:
        ahead, behind = repo.git.ahead_behind(pygit2.Oid(hex=local), pygit2.Oid(hex=upstream))
    except (KeyError, pygit2.GitError) as error:
        raise _cut(local, upstream, error) from None
    return int(ahead), int(behind)


def merge_bases(repo: Repo, a: Oid, b: Oid) -> list[Oid]:
    """Every best common ancestor of a and b, sorted (empty for unrelated histories).

    libgit2 gives one; after criss-cross merges (two clones merging each other's state at
    once) there are several, and a three-way merge against only one of them resurrects
    what the other side deleted. The others are common ancestors not below the first one
    that no other such ancestor descends from; all of them lie in the commits since it.
    """
    found = repo.git.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
    if found is None:
        return []
    first = Oid(str(found))

    def since(tip: Oid) -> dict[Oid, tuple[Oid, ...]]:
        walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.NONE)
        walker.hide(pygit2.Oid(hex=first))
        return {Oid(str(c.id)): tuple(Oid(str(p)) for p in c.parent_ids) for c in walker}

    on_a, on_b = since(a), since(b)
    common = {oid: parents for oid, parents in on_a.items() if oid in on_b}
    below = {p for parents in common.values() for p in parents if p in common}
    return sorted({first, *(oid for oid in common if oid not in below)})


def commit_time(repo: Repo, oid: Oid) -> int:
    """The committer time of a commit, in seconds since the epoch."""
    return int(repo.git[oid].peel(pygit2.Commit).commit_time)


def commit_parents(repo: Repo, oid: Oid) -> tuple[Oid, ...]:
    return tuple(Oid(str(p)) for p in repo.git[oid].peel(pygit2.Commit).parent_ids)


def commit_tree(repo: Repo, oid: Oid) -> Oid:
    return Oid(str(repo.git[oid].peel(pygit2.Commit).tree_id))


def only_in(repo: Repo, tip: Oid, hidden: Oid, limit: int = 1000) -> list[CommitInfo]:
    """Commits reachable from tip but not from hidden, newest first (at most limit)."""
    walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(pygit2.Oid(hex=hidden))
    found = []
    for c in walker:
        found.append(commit_info(repo, Oid(str(c.id))))
        if len(found) >= limit:
            break
    return found


def commits_since(
    repo: Repo, tip: Oid, hidden: Sequence[Oid], *, show: int, count_up_to: int
) -> tuple[list[CommitInfo], int]:
    """Commits reachable from tip but from none of ``hidden`` (ids this repository lacks are
    ignored), newest first: the first ``show`` of them, and how many there are (counted up
    to ``count_up_to``)."""
    return commits_since_started(repo, tip, hidden, show=show, count_up_to=count_up_to)()


def commits_since_started(
    repo: Repo, tip: Oid, hidden: Sequence[Oid], *, show: int, count_up_to: int
) -> Callable[[], tuple[list[CommitInfo], int]]:
    """commits_since, its answer waited for when asked. Behind several tips (a branch's commits
    on no remote, or on no other branch) git walks, from now on: libgit2 reads every commit
    below a hidden tip down to where the walk from ``tip`` meets it, an old branch's all the
    way down the history; git stops once all it has left to read is hidden."""
    present = [oid for oid in dict.fromkeys(hidden) if has_commit(repo, oid)]  # origin/HEAD is origin/main
    count = max(count_up_to, 1)

    def walked() -> list[Oid]:
        walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
        for oid in present:
            walker.hide(pygit2.Oid(hex=oid))
        return [Oid(str(c.id)) for c in itertools.islice(walker, count)]

    listing = _git_walk_started(repo, tip, present, count) if len(present) > 1 else None

    def answer() -> tuple[list[CommitInfo], int]:
        found = listing() if listing is not None else None
        if found is None:  # one tip hidden, or git gave no answer
            found = walked()
        return [commit_info(repo, oid) for oid in found[:show]], len(found)

    return answer


def _git_walk_started(repo: Repo, tip: Oid, hidden: Sequence[Oid], count: int) -> Callable[[], list[Oid] | None]:
    """``git rev-list``'s answer, newest first by commit time (None where git gave none), started
    now. Not sorted by the graph (--topo-order, libgit2's order): that reads far more below the
    hidden tips (50 ms against 4 on git/git's shape); the two differ only in which commits past
    ``count`` are left out where commit times are out of order. Grafts and replaced commits are
    not followed, as libgit2 follows none."""
    from git_continuity import gitcli  # a process runner: a read that needs no walk loads none

    args = ["--no-replace-objects", f"--git-dir={repo.common_dir}", "rev-list", f"--max-count={count}", tip]
    try:
        process = gitcli.start(*args, "--not", *hidden, cwd=repo.common_dir)
    except OSError:
        return lambda: None

    @functools.cache
    def answer() -> list[Oid] | None:
        out = process.communicate()[0].decode("ascii", "replace")
        return [Oid(line) for line in out.split()] if process.returncode == 0 else None

    return answer


SINCE_KEEP = 64  # counts kept (counted_since), the newest last
SINCE_STEPS = 100  # commits read parent by parent down to a tip counted before (_count_on)
Count = tuple[int, int | None]  # commits counted, and the oldest one's commit time (None: none)


def counted_since(repo: Repo, tip: Oid, hidden: Sequence[Oid], *, count_up_to: int) -> tuple[int, datetime | None]:
    """How many commits are reachable from tip but from none of ``hidden`` (counted up to
    ``count_up_to``), and when the oldest of those counted was made. What a history holds
    never changes, so the answer is kept by its question under the cache folder: a status
    that asks again, the state not having moved, walks nothing, and one asked once the state
    moved on (a write is a commit) reads the commits since the tip last counted (a stream never
    sent anywhere has its whole history to count once, each of its commits read, and a
    verify's commit holds its whole report)."""
    present = sorted(h for h in hidden if has_commit(repo, h))
    question = f"{','.join(present) or '-'} {count_up_to}"
    path = repo.local_dir / "cache" / "since"
    try:
        kept = path.read_text().splitlines()
    except OSError:
        kept = []
    known: dict[str, Count] = {}
    for line in kept:
        key, _, found = line.rpartition(" = ")
        at, _, asked = key.partition(" ")
        if asked == question and (count := _read(found, count_up_to)) is not None:  # a spoiled line is no answer
            known[at] = count
    answer = known.get(tip)
    if answer is None:
        answer = _count_on(repo, tip, known, count_up_to) or _count_since(repo, tip, present, count_up_to)
        total, oldest = answer
        lines = [*kept[-(SINCE_KEEP - 1) :], f"{tip} {question} = {total} {'-' if oldest is None else oldest}"]
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
            atomic.write(path, "".join(f"{line}\n" for line in lines))
    total, oldest = answer
    return total, datetime.fromtimestamp(oldest, timezone.utc) if oldest is not None else None


def _read(answer: str, count_up_to: int) -> Count | None:
    """A kept ``<count> <oldest commit time, or ->``, where it reads as one within its cap."""
    count, _, when = answer.partition(" ")
    if not (count.isascii() and count.isdigit()) or int(count) > count_up_to:
        return None
    if when == "-":
        return int(count), None
    return (int(count), int(when)) if when.isascii() and when.isdigit() else None


def _count_on(repo: Repo, tip: Oid, known: Mapping[str, Count], count_up_to: int) -> Count | None:
    """The count at tip from a tip counted before that it comes down to parent by parent within
    SINCE_STEPS commits (a state commit has one parent, unless a sync merged two): that count
    and the commits since. Only from a count of one or more (then no hidden commit reaches the
    earlier tip, so none reaches a commit above it) and within the cap (past it, which commits
    count is the walk's). None where it cannot tell so."""
    if not known:
        return None
    oldest, at, read = 0, tip, 0
    try:
        while read < SINCE_STEPS:
            try:
                commit = repo.git[pygit2.Oid(hex=at)].peel(pygit2.Commit)
            except (KeyError, ValueError, pygit2.GitError):
                return None
            if len(commit.parent_ids) != 1:
                return None
            read += 1
            oldest = commit.commit_time if read == 1 else min(oldest, commit.commit_time)
            at = Oid(str(commit.parent_ids[0]))
            if (earlier := known.get(at)) is not None:
                count, when = earlier
                if count == 0 or when is None or read + count > count_up_to:
                    return None
                return read + count, min(oldest, when)
        return None
    finally:
        repo.walked += read


def _count_since(repo: Repo, tip: Oid, hidden: Sequence[Oid], count_up_to: int) -> Count:
    """The count and the oldest commit time, walking only the commits counted."""
    walker = repo.git.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.NONE)
    for oid in hidden:
        walker.hide(pygit2.Oid(hex=oid))
    total, oldest = 0, None
    for c in walker:
        total += 1
        oldest = c.commit_time if oldest is None else min(oldest, c.commit_time)
        if total >= count_up_to:
            break
    repo.walked += total
    return total, oldest
