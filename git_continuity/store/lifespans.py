"""The journal by lifespan: which entries are live and which faded (issue 15).

An entry fades once its kind's lifespan (policy ``lifespans``: decisions never, findings
after 30 days, notes after 7) has passed since it was written; an entry without a kind (all
written before kinds existed) is a note. Fading is derived when read, never written: nothing
is deleted, and ``journal --all`` shows every entry.

Telling a faded entry from a live one needs its kind, which is inside the entry. Entries in
a day folder younger than the shortest lifespan are live whatever their kind, so they are
never opened for it; an older day's kinds are read once and kept under the cache folder by
the day's tree id (content-addressed, so never stale), with a summary of the day by kind
(DaySpans) that tells its live entries from its faded ones without opening any.
"""

from __future__ import annotations

import array
import bisect
import contextlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, TypeGuard

from git_continuity import atomic
from git_continuity import repo as git
from git_continuity.model import JournalEntry, parse_stamp
from git_continuity.store.read import DayCounts, _entry, _shards
from git_continuity.store.state import ROOT, Snapshot

Lifespans = Mapping[str, timedelta | None]  # per kind; None: never fades


@dataclass(frozen=True)
class Journal:
    entries: list[JournalEntry]  # oldest first: the latest live ones (every one with everything)
    total: int  # every entry, live or faded
    live: int  # entries still live
    faded: frozenset[str]  # ids of the faded entries among ``entries``

    @property
    def faded_count(self) -> int:
        return self.total - self.live


def faded(kind: str | None, at: str | None, lifespans: Lifespans, now: datetime) -> bool:
    """Whether an entry of this kind written at ``at`` has outlived its lifespan."""
    span = lifespans.get(kind or "note")
    if span is None or at is None:
        return False
    try:
        return parse_stamp(at) + span < now
    except ValueError:
        return False  # an unreadable time: shown, and reported by the entry's own check


def _day_start(name: str) -> datetime | None:
    if not (len(name) == 10 and name[4] == name[7] == "-" and name.replace("-", "").isdigit()):
        return None  # fromisoformat takes forms a day folder's name never has (2026-W49-4)
    try:  # fromisoformat, not strptime: a year of day folders is 366 of them per brief
        return datetime.fromisoformat(name).replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _kinds(
    snap: Snapshot, day: git.TreeEntry, files: list[git.TreeEntry] | None = None
) -> dict[str, tuple[str | None, str | None]]:
    """name → (kind, at) of every entry of a day folder, from the cache when it has the day
    (its entries listed here only when it does not, unless given)."""
    cached = snap.repo.local_dir / "cache" / "journal-kinds" / f"{day.oid}.json"
    try:
        return {n: (k, a) for n, k, a in json.loads(cached.read_text())}
    except (OSError, ValueError, TypeError):
        pass
    found: dict[str, tuple[str | None, str | None]] = {}
    for f in files if files is not None else git.tree_entries(snap.repo, day.oid) or []:
        try:
            data = json.loads(git.blob(snap.repo, f.oid))
        except (ValueError, UnicodeDecodeError):
            data = None
        kind, at = (data.get("kind"), data.get("at")) if isinstance(data, dict) else (None, None)
        found[f.name] = (kind if isinstance(kind, str) else None, at if isinstance(at, str) else None)
    with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
        atomic.write(cached, json.dumps([[n, k, a] for n, (k, a) in found.items()]))
    return found


def _when(at: str | None) -> float:
    """A stored time in seconds, for ordering (an unreadable one first)."""
    try:
        return parse_stamp(at).timestamp() if at else -1.0
    except ValueError:
        return -1.0


def _live_on_edge(snap: Snapshot, day: git.TreeEntry, kind: str, lifespans: Lifespans, now: datetime) -> int:
    """How many entries of one kind in a day on that kind's lifespan's edge are still live:
    from the day's times by kind (kept by the folder's tree id, one sorted line a kind), so
    the edge day of a busy journal is counted without its thousands of entries' records."""
    span = lifespans.get(kind or "note")
    times = _times(snap, day).get(kind, [])
    if span is None:
        return len(times)
    unreadable = bisect.bisect_left(times, 0.0)  # first in the sorted times, and live
    return unreadable + len(times) - bisect.bisect_left(times, (now - span).timestamp())


def _times(snap: Snapshot, day: git.TreeEntry) -> Mapping[str, Sequence[float]]:
    """kind → the times its entries of a day folder were written, in seconds, sorted (an
    unreadable time as -1, which counts as live, as faded() has it). Kept by the folder's tree
    id as each kind's name, a NUL, a count and that many doubles (little-endian): read without
    parsing a busy day's thousands of numbers."""
    cached = snap.repo.local_dir / "cache" / "journal-times" / day.oid
    with contextlib.suppress(OSError):
        kept = _read_times(cached.read_bytes())
        if kept is not None:
            return kept
    found: dict[str, list[float]] = {}
    for kind, at in _kinds(snap, day).values():
        found.setdefault(kind or "", []).append(_when(at))
    for times in found.values():
        times.sort()
    record = _times_record(found)
    if record is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
            atomic.write(cached, record)
    return found


def _times_record(found: Mapping[str, list[float]]) -> bytes | None:
    """What _times keeps of a day; None where a kind's name cannot be kept so (a NUL in it, or
    text that is not UTF-8: the state is another's to write), and the day is read each time."""
    parts = []
    for kind, times in found.items():
        try:
            name = kind.encode()
        except UnicodeEncodeError:
            return None
        if b"\0" in name:
            return None
        doubles = array.array("d", times)
        if sys.byteorder == "big":
            doubles.byteswap()
        parts.append(name + b"\0" + len(times).to_bytes(4, "little") + doubles.tobytes())
    return b"".join(parts)


def _read_times(raw: bytes) -> Mapping[str, Sequence[float]] | None:
    """What _times_record kept, or None where it does not read so (an older version kept text)."""
    found: dict[str, Sequence[float]] = {}
    at = 0
    while at < len(raw):
        name_end = raw.find(b"\0", at)
        if name_end < 0 or name_end + 5 > len(raw):
            return None
        count = int.from_bytes(raw[name_end + 1 : name_end + 5], "little")
        start, end = name_end + 5, name_end + 5 + 8 * count
        if end > len(raw):
            return None
        doubles = array.array("d", raw[start:end])
        if sys.byteorder == "big":
            doubles.byteswap()
        try:
            found[raw[at:name_end].decode()] = doubles
        except UnicodeDecodeError:
            return None
        at = end
    return found


def _spans_read(spans: object) -> TypeGuard[dict[str, list[Any]]]:
    """Whether what was kept for a day reads as DaySpans keeps it."""
    return isinstance(spans, dict) and all(
        isinstance(v, list) and len(v) == 3 and all(isinstance(n, int | float) for n in v) for v in spans.values()
    )


class DaySpans:
    """What each old day folder holds by kind, kept by the folder's tree id under the cache
    folder (``journal-spans``): for each kind, how many entries and the first and last time
    one was written. A day whose entries of a kind all outlived that kind's lifespan, or all
    did not, is counted from it without opening an entry: a brief reads the live entries it
    shows, not a year of faded notes. Only a day on a lifespan's edge is read entry by entry."""

    def __init__(self, snap: Snapshot) -> None:
        self.snap = snap
        self.path = snap.repo.local_dir / "cache" / "journal-spans"
        self.known: dict[str, dict[str, list[Any]]] = {}
        self.asked: set[str] = set()
        self.new = False
        with contextlib.suppress(OSError, ValueError, TypeError):
            found = json.loads(self.path.read_text())
            self.known = found if isinstance(found, dict) else {}

    def live(self, day: git.TreeEntry, lifespans: Lifespans, now: datetime) -> tuple[int, int]:
        """(entries, live entries) of an old day."""
        self.asked.add(day.oid)
        spans = self.known.get(day.oid)
        if not _spans_read(spans):  # none kept, or not as this version keeps them
            spans = self.known[day.oid] = self._spans(day)
            self.new = True
        total = live = 0
        for kind, (count, first, last) in spans.items():
            span = lifespans.get(kind or "note")
            cutoff = (now - span).timestamp() if span is not None else None
            total += count
            if cutoff is None or first >= cutoff:  # every one written since the lifespan began
                live += count
            elif first < 0 or last >= cutoff:  # on the lifespan's edge (or a time unreadable)
                live += _live_on_edge(self.snap, day, kind, lifespans, now)
        return total, live

    def _spans(self, day: git.TreeEntry) -> dict[str, list[Any]]:
        """kind → [entries, first time, last time], times in seconds (-1: unreadable)."""
        spans: dict[str, list[Any]] = {}
        for kind, times in _times(self.snap, day).items():
            spans[kind] = [len(times), times[0], times[-1]] if times else [0, 0.0, 0.0]
        return spans

    def settled(self, day: git.TreeEntry, lifespans: Lifespans, now: datetime) -> bool:
        """Whether every entry of an old day counted here stays as it is now: of each kind, all
        faded, or of a kind that never fades (a time unreadable is live, and may be read again)."""
        spans = self.known.get(day.oid)
        if not _spans_read(spans):
            return False
        for kind, (_, first, last) in spans.items():
            span = lifespans.get(kind or "note")
            if span is not None and (first < 0 or last >= (now - span).timestamp()):
                return False
        return True

    def keep(self) -> None:
        if self.new:
            kept = {oid: spans for oid, spans in self.known.items() if oid in self.asked}
            with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
                atomic.write(self.path, json.dumps(kept, separators=(",", ":")))
            self.new = False


class Settled:
    """The oldest days of a journal whose entries all stay as they are (DaySpans.settled):
    counted once and kept as one record under the cache folder (``journal-settled``), by the
    days' tree ids and the lifespans, so that a brief counts a year of faded notes without
    going through it day by day. Time only adds days to them."""

    def __init__(self, snap: Snapshot, lifespans: Lifespans) -> None:
        self.path = snap.repo.local_dir / "cache" / "journal-settled"
        self.lifespans = {k: v.total_seconds() if v is not None else None for k, v in sorted(lifespans.items())}
        self.days: list[str] = []  # tree ids, newest first, as the journal lists them
        self.total = self.live = 0
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            found = json.loads(self.path.read_text())
            if found["lifespans"] == self.lifespans and all(isinstance(d, str) for d in found["days"]):
                self.days, self.total, self.live = list(found["days"]), int(found["total"]), int(found["live"])

    def covers(self, days: list[git.TreeEntry], start: int) -> bool:
        """Whether the journal's days from ``start`` on, its oldest, are the ones kept."""
        return len(days) - start == len(self.days) and [d.oid for d in days[start:]] == self.days

    def grow(
        self,
        days: list[git.TreeEntry],
        counted: Mapping[str, tuple[int, int]],
        covered: bool,
        settled: Callable[[git.TreeEntry], bool],
    ) -> None:
        """Keep the oldest days settled now: those kept (when the read ``covered`` them), then
        each day above them counted from its spans (``counted``) and ``settled``."""
        run, total, live = (self.days, self.total, self.live) if covered else ([], 0, 0)
        above = days[: len(days) - len(run)]
        grown = []
        for day in reversed(above):
            if day.oid not in counted or not settled(day):
                break
            grown.append(day.oid)
            total, live = total + counted[day.oid][0], live + counted[day.oid][1]
        if grown[::-1] + run == self.days:
            return
        kept = {"lifespans": self.lifespans, "days": grown[::-1] + run, "total": total, "live": live}
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
            atomic.write(self.path, json.dumps(kept, separators=(",", ":")))


def read_live_journal(
    snap: Snapshot, lifespans: Lifespans, now: datetime, *, latest: int | None, everything: bool = False
) -> Journal:
    """The newest ``latest`` live entries (all when None), oldest first, and how many entries
    there are and how many faded. With ``everything``, faded entries are listed too (and
    named in ``faded``). Once ``latest`` are picked, the older days are only counted."""
    if snap.tree is None:
        return Journal([], 0, 0, frozenset())
    days = sorted(_shards(snap, "journal"), key=lambda e: e.name, reverse=True)  # a stray file is a problem
    finite = [s for s in lifespans.values() if s is not None]
    shortest = min(finite) if finite else None
    picked: list[tuple[str, git.Oid, bool]] = []  # path in the journal folder, blob, faded
    total = live = 0
    counts, spans, settled = DayCounts(snap), DaySpans(snap), Settled(snap, lifespans)
    old: dict[str, tuple[int, int]] = {}  # old days counted from their spans, by tree id
    covered = False
    for n, day in enumerate(days):
        if _full(picked, latest) and not everything and settled.covers(days, n):
            total, live, covered = total + settled.total, live + settled.live, True
            break
        start = _day_start(day.name)
        # Young: every entry of the day was written after the shortest lifespan began (from the
        # day's start, not its end: a note at 10:00 seven days and an hour ago has faded).
        young = shortest is None or (start is not None and now - start < shortest)
        counted = _counted(day, young, counts, spans, lifespans, now) if _full(picked, latest) else None
        if counted is not None and not young:
            old[day.oid] = counted
        if counted is None and young and latest is not None:  # live whatever their kind: the newest taken
            counted = counts.count(day), counts.count(day)
            newest = git.last_entries(snap.repo, day.oid, latest - len(picked))
            picked.extend((f"{day.name}/{f.name}", f.oid, False) for f in newest)
        if counted is not None:
            total, live = total + counted[0], live + counted[1]
            continue
        files = sorted(git.tree_entries(snap.repo, day.oid) or [], key=lambda f: f.name, reverse=True)
        kinds = {} if young else _kinds(snap, day, files)
        for f in files:
            total += 1
            kind, at = kinds.get(f.name, (None, None))
            out = not young and faded(kind, at, lifespans, now)
            live += not out
            if (everything or not out) and not _full(picked, latest):
                picked.append((f"{day.name}/{f.name}", f.oid, out))
    counts.keep()
    spans.keep()
    if _full(picked, latest) and not everything:  # a read that counted the old days
        settled.grow(days, old, covered, lambda day: spans.settled(day, lifespans, now))
    entries = []
    gone = set()
    for path, oid, out in reversed(picked):
        data = _entry(snap, f"{ROOT}/journal/{path}", oid, "journal-entry")
        if data is not None:
            entries.append(JournalEntry(**data))
            if out:
                gone.add(entries[-1].id)
    return Journal(entries, total, live, frozenset(gone))


def _full(picked: list[tuple[str, git.Oid, bool]], latest: int | None) -> bool:
    return latest is not None and len(picked) >= latest


def _counted(
    day: git.TreeEntry, young: bool, counts: DayCounts, spans: DaySpans, lifespans: Lifespans, now: datetime
) -> tuple[int, int]:
    """(entries, live entries) of a day not listed: counted, not read entry by entry."""
    if young:
        n = counts.count(day)
        return n, n
    return spans.live(day, lifespans, now)
