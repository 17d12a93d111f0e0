"""Reads and hooks on a history of git/git's shape, right after a commit, a push and a fetch
(issue 34's budgets).

The shape, built with `git fast-import` in seconds: a bare remote whose `main` has 80,000
commits with a merged topic every few commits and a work tree of 4,800 files, 10 old branches
forked along the way, and 3,000 pull requests' refs (`refs/pull/N/head`, which a remote on
GitHub lists and no refspec fetches); a clone
of it with those 10 branches as local branches, 10,000 loose tags, the continuity hooks and
Claude Code's hooks installed, and a state of 1,000 claims with local git handles
(`reachable:` and `pushed:` among them, dereferenced on every read), 6 threads done (three
closed by a commit naming them, three by `thread close`) and a million journal entries over
a year, most of them faded notes (written straight as state objects by `git fast-import`,
then one signed state commit on top). A second clone of the remote pushes what the first
fetches.

Each read and hook is run as an agent runs it (no terminal, so the repository's helper
process serves the commands; the agent hooks through `sh -c` as `agent install claude`
wrote them), in five situations, each run of a row right after its event (and after what
git's automatic gc would have done by then: upkeep), 0.2 s after the run before ended (an
agent's calls come seconds apart; the helper makes its next spare meanwhile). In a
situation the rows take turns, one run of each in every round, so that a slow minute of a
shared machine lands on a run of every row rather than on all the runs of one:

  - warm: nothing moved since the last read;
  - after a commit: a commit on `main` (through the continuity hooks) just before;
  - after a push: a commit, then `git push` (which moves `origin/main` here);
  - after a fetch: the other clone pushed two commits, then `git fetch` brought them;
  - on a branch no remote has: a commit on the agent's own branch, made from `main` and
    pushed nowhere (no upstream: what is not shared is what no remote branch has).

Rows: `status`, `orient` (and without its fresh look: the brief's own reading of a million
entries), `verify`, the SessionStart hook (a new conversation each run, as an agent's
startup is, and a resumed one) and the Stop hook, and the commit itself
with the continuity hooks over the same commit without them (`-c core.hooksPath`), each the
median of the runs with its fastest run (the floor of this machine right then) beside it;
and the floors of the same run: `git log -1`, `git merge-base --is-ancestor` of a claim's
commit and `main`, `python -c pass`.

    python benchmarks/real_history_bench.py [--runs 7] [--commits 80000] [--files 4800]
        [--branches 10] [--pulls 3000] [--tags 10000] [--journal 1000000] [--claims 1000]

Budgets (PRODUCT.md): status 150 ms, orient 200 ms, SessionStart 100 ms, Stop 60 ms, the
commit hooks +25 ms, in every situation; verify has no budget of its own (it is printed).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

from status_bench import ENV, SANDBOX, _code, sh

from git_continuity import repo as git
from git_continuity import store
from git_continuity.model import Claim, JournalEntry, now, sortable_name, stamp
from git_continuity.store import integrity

ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # installed packages carry their bytecode
BUDGETS = {
    "status": 150.0,
    "orient": 200.0,
    "orient, no fresh look": 200.0,
    "SessionStart": 100.0,
    "SessionStart, resumed": 100.0,
    "Stop": 60.0,
    "commit": 25.0,
}
TOPIC_EVERY = 8  # a merged topic of three commits after every 8 commits of main
SETTLE = 0.2  # seconds between a run and the next one's event (Events.before)
SITUATIONS = ("warm", "after a commit", "after a push", "after a fetch", "on a branch no remote has")


# -- the history ----------------------------------------------------------------------------


def _commit(ref: str, mark: int, when: int, message: str, parents: list[int], change: str) -> str:
    lines = [f"commit {ref}", f"mark :{mark}", f"committer Bench <bench@example.com> {when} +0000"]
    lines += [f"data {len(message)}", message]
    lines += [f"from :{parents[0]}"] if parents else []
    lines += [f"merge :{p}" for p in parents[1:]]
    return "\n".join(lines) + "\n" + change


def _inline(path: str, text: str) -> str:
    return f"M 100644 inline {path}\ndata {len(text.encode())}\n{text}\n"


def history_stream(commits: int, files: int, branches: int, start: int) -> tuple[bytes, int]:
    """The fast-import stream of main (its first commit adds ``files`` files in 100 folders, as
    git/git's 4,800; merges of short topics every few commits) and of the old branches, and
    how many commits main has."""
    tree = "".join(_inline(f"tree/d{n % 100}/f{n}.c", f"{n}\n") for n in range(files))
    out: list[str] = [_commit("refs/heads/main", 1, start, "the work tree", [], tree)]
    main: list[int] = [1]
    mark = 1
    while mark < commits:
        if len(main) > 30 and len(main) % TOPIC_EVERY == 0:
            prev = main[-20]
            for k in range(3):
                mark += 1
                out.append(_commit("refs/heads/topic", mark, start + mark * 60, "topic", [prev], _inline(f"t{k}", "x")))
                prev = mark
            mark += 1
            out.append(_commit("refs/heads/main", mark, start + mark * 60, "merge topic", [main[-1], prev], ""))
        else:
            mark += 1
            change = _inline(f"src/f{mark % 50}.txt", f"{mark}")
            out.append(_commit("refs/heads/main", mark, start + mark * 60, f"change {mark}", main[-1:], change))
        main.append(mark)
    for b in range(branches):
        base = main[(b + 1) * len(main) // (branches + 2)]
        mark += 1
        out.append(_commit(f"refs/heads/old-{b}", mark, start + base * 60 + 30, "old", [base], _inline("old", str(b))))
    out.append("reset refs/heads/topic\nfrom 0000000000000000000000000000000000000000\n")
    return "".join(out).encode(), len(main)


def make_remote(origin: Path, args: argparse.Namespace) -> None:
    sh(origin.parent, "git", "init", "-q", "--bare", "-b", "main", str(origin))
    start = int(time.time()) - args.commits * 60 - 3600
    stream, _ = history_stream(args.commits, args.files, args.branches, start)
    sh(origin, "git", "fast-import", "--quiet", stdin=stream)
    sh(origin, "git", "update-ref", "-d", "refs/heads/topic")
    revs = sh(origin, "git", "rev-list", "--first-parent", "main").split()
    pulls = [f"create refs/pull/{n}/head {revs[n * len(revs) // max(args.pulls, 1)]}" for n in range(args.pulls)]
    sh(origin, "git", "update-ref", "--stdin", stdin=("\n".join(pulls) + "\n").encode())
    sh(origin, "git", "pack-refs", "--all")  # as a forge keeps them: listed in 15 ms, not 90


def make_clone(origin: Path, work: Path, branches: int, tags: int) -> list[str]:
    """The clone: old branches local, ``tags`` loose tags along main; main's commits, oldest first."""
    sh(origin.parent, "git", "clone", "-q", str(origin), str(work))
    sh(work, "git", "config", "gc.auto", "0")  # the tags stay loose, as the issue measured them
    revs = sh(work, "git", "rev-list", "--first-parent", "--reverse", "main").split()
    old = sh(work, "git", "for-each-ref", "--format=%(objectname) %(refname:lstrip=3)", "refs/remotes/origin/old-*")
    made = [f"create refs/heads/{name} {oid}" for oid, name in (line.split() for line in old.splitlines())]
    made += [f"create refs/tags/bench-{t} {revs[t * len(revs) // max(tags, 1)]}" for t in range(tags)]
    sh(work, "git", "update-ref", "--stdin", stdin=("\n".join(made) + "\n").encode())
    return revs


# -- the state ------------------------------------------------------------------------------


def handles(revs: list[str], claims: int, tags: int) -> Iterator[str]:
    kinds = [
        lambda r: f"commit:{r}",
        lambda r: f"reachable:{r}@refs/heads/main",
        lambda r: f"pushed:{r}@origin/main",
        lambda r: f"tag:bench-{int(r, 16) % max(tags, 1)}",
        lambda r: f"file:src/f{int(r, 16) % 60}.txt@{r}",
        lambda r: f"reachable:{r}@refs/heads/main",
    ]
    for i in range(claims):
        yield kinds[i % len(kinds)](revs[(i * 7919) % len(revs)])


def write_claims(work: Path, revs: list[str], claims: int, tags: int) -> None:
    repo = git.open_repo(work)
    moment = stamp(now())
    files: dict[str, bytes | None] = {}
    for i, handle in enumerate(handles(revs, claims, tags)):
        c = Claim(id=f"c-{_code(i)}", text=f"claim {i}", added_at=moment, added_by="Bench", host="bench", handle=handle)
        files[store.claim_path(c.id)] = store.entry_bytes(c)
    store.update(repo, "main", lambda s: store.Change(f"bench: {claims} claims", files))


def close_threads(work: Path, done: int) -> None:
    """``done`` threads, each with a file: and a reachable: check: the first half closed by a
    commit naming them (the hooks record the commit and the branch), the rest by thread close."""
    cont = ["git", "continuity"]
    for n in range(done):
        path = f"done/{n}.txt"
        added = json.loads(
            sh(work, *cont, "thread", "add", f"done {n}", "--check", f"file:{path}", "--json").strip() or "{}"
        )
        (work / path).parent.mkdir(exist_ok=True)
        (work / path).write_text(f"{n}\n")
        sh(work, "git", "add", path)
        by_commit = n < done // 2
        sh(work, "git", "commit", "-q", "-m", f"work {n}" + (f"\n\nCloses {added['id']}" if by_commit else ""))
        if not by_commit:
            sh(work, *cont, "thread", "close", added["id"])


def journal_stream(entries: int, days: int) -> bytes:
    """A commit whose tree is a journal folder of ``entries`` entries over ``days`` days, a
    tenth findings, a hundredth decisions, the rest notes."""
    moment = datetime.now(timezone.utc) - timedelta(minutes=5)
    step = timedelta(days=days) / max(entries, 1)
    out = [
        f"commit refs/bench/journal\ncommitter Bench <bench@example.com> {int(time.time())} +0000\ndata 7\njournal\n"
    ]
    for i in range(entries):
        at = moment - step * (entries - i)
        kind = "decision" if i % 100 == 0 else "finding" if i % 10 == 1 else None
        e = JournalEntry(id=f"j-{_code(i)}", text=f"entry {i}", at=stamp(at), by="Bench", host="bench", kind=kind)
        data = store.entry_bytes(e)
        out.append(f"M 100644 inline journal/{e.at[:10]}/{sortable_name(at, e.id)}.json\ndata {len(data)}\n")
        out.append(data.decode() + "\n")
    return "".join(out).encode()


def splice_journal(work: Path, entries: int, days: int) -> None:
    """The journal built by fast-import, joined day by day to the state's own journal, in one
    signed state commit (as a writer of this tool makes them)."""
    sh(work, "git", "fast-import", "--quiet", stdin=journal_stream(entries, days))
    repo = git.open_repo(work)
    snap = store.snapshot(repo, "main")
    assert snap.tree is not None
    imported = git.tree_entries(repo, git.resolve_commit(repo, "refs/bench/journal"), "journal") or []
    ours = {e.name: e for e in git.tree_entries(repo, snap.tree, f"{store.ROOT}/journal") or []}
    days_written = []
    for day in imported:
        if day.name in ours:
            both = (git.tree_entries(repo, ours.pop(day.name).oid) or []) + (git.tree_entries(repo, day.oid) or [])
            day = git.TreeEntry(day.name, git.write_folder(repo, sorted(both, key=lambda e: e.name)), True)
        days_written.append(day)
    journal = git.write_folder(repo, sorted([*days_written, *ours.values()], key=lambda e: e.name))
    inner = [e for e in git.tree_entries(repo, snap.tree, store.ROOT) or [] if e.name != "journal"]
    root = git.write_folder(
        repo,
        [git.TreeEntry(store.ROOT, git.write_folder(repo, [*inner, git.TreeEntry("journal", journal, True)]), True)],
    )
    commit = git.write_commit(repo, root, [snap.commit] if snap.commit else [], f"bench: {entries} journal entries\n")
    git.compare_and_swap(repo, snap.ref, commit, snap.commit, "bench: journal")
    integrity.wrote(repo, "main", snap.commit, commit)
    git.delete_ref(repo, "refs/bench/journal")


def upkeep(work: Path) -> None:
    """What git's automatic gc does at a user's next commit (gc.auto is off in the clone, so
    that it never runs while a row is timed): the objects left loose packed once past 6,700
    (the state's writes leave thousands; each `verify` records 1,000 pieces of evidence). The
    refs stay loose, as the issue measured them."""
    sh(work, "git", "-c", "gc.auto=6700", "-c", "gc.autoDetach=false", "-c", "gc.packRefs=false", "gc", "--auto", "-q")


def build(tmp: Path, args: argparse.Namespace) -> tuple[Path, Path, list[str]]:
    origin, work, mate = tmp / "origin.git", tmp / "work", tmp / "mate"
    make_remote(origin, args)
    revs = make_clone(origin, work, args.branches, args.tags)
    sh(tmp, "git", "clone", "-q", str(origin), str(mate))
    cont = ["git", "continuity"]
    sh(work, *cont, "init")
    sh(work, *cont, "objective", "set", "Reads at git's speed", "--why", "measure")
    sh(work, *cont, "hooks", "install")
    sh(work, *cont, "agent", "install", "claude")
    sh(work, "git", "add", ".claude")
    sh(work, "git", "commit", "-q", "-m", "agent hooks")
    write_claims(work, revs, args.claims, args.tags)
    close_threads(work, args.done)
    splice_journal(work, args.journal, args.days)
    sh(work, "git", "push", "-q", "origin", "main")
    upkeep(work)
    sh(work, *cont, "orient")  # a session, and every cache read once
    return work, mate, revs


# -- measuring ------------------------------------------------------------------------------


def agent_hook(work: Path, event: str) -> str:
    groups = json.loads((work / ".claude" / "settings.json").read_text())["hooks"][event]
    return str(groups[0]["hooks"][0]["command"])


def timed(work: Path, argv: list[str], stdin: str = "", ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=work, env=ENV, input=stdin, capture_output=True, text=True, start_new_session=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode not in ok or "Traceback" in done.stderr:
        raise SystemExit(f"{shlex.join(argv)} exited {done.returncode}: {done.stderr or done.stdout}")
    return elapsed


class Events:
    """What moves the refs before a row's run."""

    def __init__(self, work: Path, mate: Path) -> None:
        self.work, self.mate, self.n = work, mate, 0

    def commit(self) -> None:
        self.n += 1
        sh(self.work, "git", "commit", "-q", "--allow-empty", "-m", f"bench {self.n}: nothing closed")

    def push(self) -> None:
        self.commit()
        sh(self.work, "git", "push", "-q", "origin", "main")

    def fetch(self) -> None:
        sh(self.mate, "git", "pull", "-q", "--no-rebase", "origin", "main")
        for k in range(2):
            self.n += 1
            sh(self.mate, "git", "commit", "-q", "--allow-empty", "-m", f"mate {self.n}.{k}")
        sh(self.mate, "git", "push", "-q", "origin", "main")
        sh(self.work, "git", "fetch", "-q", "origin")

    def branch(self) -> None:
        if sh(self.work, "git", "branch", "--show-current").strip() != "agent":
            sh(self.work, "git", "checkout", "-q", "-b", "agent")
        self.commit()

    def before(self, situation: str) -> None:
        # A run starts once the one before has settled, as an agent's calls come seconds apart:
        # after each command the helper makes its next spare (some 30 ms of copying pages), and
        # a commit made at once shared the machine with it (+8 to +10 ms on the commit).
        time.sleep(SETTLE)
        upkeep(self.work)
        moves = {
            "warm": lambda: None,
            "after a commit": self.commit,
            "after a push": self.push,
            "after a fetch": self.fetch,
            "on a branch no remote has": self.branch,
        }
        moves[situation]()


Row = tuple[list[str], Callable[[], str], tuple[int, ...]]


def rows(work: Path) -> dict[str, Row]:
    """Each row's command, what it reads on stdin (made for each run) and the exits it may give.
    An agent's startup is a new conversation each time (Claude Code names a new session_id),
    and so a new session of the brief's; a resumed one keeps its own."""
    started = itertools.count(1)
    said = {"cwd": str(work)}
    conversation = ["bench-0"]

    def start() -> str:
        conversation[0] = f"bench-{next(started)}"
        return json.dumps(
            {**said, "session_id": conversation[0], "hook_event_name": "SessionStart", "source": "startup"}
        )

    def resume() -> str:
        return json.dumps(
            {**said, "session_id": conversation[0], "hook_event_name": "SessionStart", "source": "resume"}
        )

    def stop() -> str:
        return json.dumps({**said, "session_id": conversation[0], "hook_event_name": "Stop", "stop_hook_active": False})

    cont = ["git", "continuity"]
    hook = ["sh", "-c", agent_hook(work, "SessionStart")]
    return {
        "status": ([*cont, "status"], str, (0,)),
        "orient": ([*cont, "orient"], str, (0,)),
        # The brief's own reading of a million entries, without the remote's round trip.
        "orient, no fresh look": (["env", "GIT_CONTINUITY_FRESH_LOOK=0", *cont, "orient"], str, (0,)),
        "verify": ([*cont, "verify"], str, (0, 1)),
        "SessionStart": (hook, start, (0,)),
        "SessionStart, resumed": (hook, resume, (0,)),
        "Stop": (["sh", "-c", agent_hook(work, "Stop")], stop, (0,)),
    }


def commit_cost(work: Path, events: Events, bare_hooks: Path, hooks_first: bool) -> tuple[float, float]:
    """A commit through the continuity hooks, and one without any hooks, after the same event:
    which of them comes first alternates from run to run, so that neither always meets what
    the event left to settle (pages to write, caches to fill)."""
    hooked = ["git", "commit", "-q", "--allow-empty", "-m", f"bench {events.n}a: nothing closed"]
    bare = ["git", "-c", f"core.hooksPath={bare_hooks}", "commit", "-q", "--allow-empty", "-m", f"bench {events.n}b"]
    if hooks_first:
        with_hooks, alone = timed(work, hooked), timed(work, bare)
    else:
        alone, with_hooks = timed(work, bare), timed(work, hooked)
    events.n += 1
    return with_hooks, alone


def floors(work: Path, revs: list[str], runs: int) -> dict[str, list[float]]:
    argvs = {
        "git log -1": ["git", "log", "-1"],
        "git merge-base --is-ancestor HEAD~5": ["git", "merge-base", "--is-ancestor", "HEAD~5", "main"],
        "git merge-base --is-ancestor, far": ["git", "merge-base", "--is-ancestor", revs[len(revs) // 2], "main"],
        "python -c pass": [sys.executable, "-c", "pass"],
    }
    return {name: [timed(work, argv) for _ in range(runs)] for name, argv in argvs.items()}


def show(name: str, times: list[float], budget: float | None, over: str = "") -> str:
    med, floor = statistics.median(times), min(times)
    mark = "" if budget is None else ("ok" if med <= budget else "OVER")
    limit = f"{budget:.0f} ms" if budget is not None else "-"
    return f"  {name:<36} {med:>8.1f} ms {floor:>8.1f} ms {over:>10} {limit:>8} {mark}"


def measure(work: Path, mate: Path, revs: list[str], runs: int) -> None:
    events = Events(work, mate)
    ENV["CLAUDE_PROJECT_DIR"] = str(work)  # as Claude Code sets it for its hooks
    table = rows(work)
    bare_hooks = work.parent / "no-hooks"
    bare_hooks.mkdir(exist_ok=True)
    timed(work, ["git", "continuity", "status"])  # the helper starts
    time.sleep(1)
    print(f"  {'':<36} {'median':>11} {'fastest':>11} {'':>10} {'budget':>8}")
    for situation in SITUATIONS:
        print(f"{situation}:")
        runs_of: dict[str, list[float]] = {name: [] for name in table}
        pairs: list[tuple[float, float]] = []
        for _ in range(runs):  # the rows take turns: a slow minute of a shared machine is a run of each, not a row
            for name, (argv, stdin, ok) in table.items():
                events.before(situation)
                runs_of[name].append(timed(work, argv, stdin(), ok))
            events.before(situation)
            pairs.append(commit_cost(work, events, bare_hooks, hooks_first=len(pairs) % 2 == 0))
        for name, taken in runs_of.items():
            print(show(name, taken, BUDGETS.get(name)))
        added = [a - b for a, b in pairs]
        print(show("commit, continuity hooks", [a for a, _ in pairs], None, f"{statistics.median(added):+.1f} ms"))
        print(show("commit, no hooks (floor)", [b for _, b in pairs], None))
        print(
            f"  {'hooks added (median)':<36} {statistics.median(added):>+8.1f} ms {'':>11} {'':>10} {'+25 ms':>8} "
            f"{'ok' if statistics.median(added) <= BUDGETS['commit'] else 'OVER'}"
        )
    sh(work, "git", "checkout", "-q", "main")  # the floors ask about main's history, HEAD~5 among it
    print("floors, same run:")
    for name, times in floors(work, revs, runs).items():
        print(show(name, times, None))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--commits", type=int, default=80_000)
    parser.add_argument("--files", type=int, default=4_800)
    parser.add_argument("--branches", type=int, default=10)
    parser.add_argument("--pulls", type=int, default=3_000)
    parser.add_argument("--tags", type=int, default=10_000)
    parser.add_argument("--journal", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--claims", type=int, default=1_000)
    parser.add_argument("--done", type=int, default=6)
    parser.add_argument("--keep", type=Path, help="build in this (new) folder and leave it there")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        if args.keep:
            args.keep.mkdir(parents=True)
        work, mate, revs = build(args.keep.resolve() if args.keep else Path(tmp), args)
        print(
            f"history: {args.commits:,} commits with merges, {args.files:,} files, {args.branches} old branches, "
            f"{args.pulls:,} pull refs on the remote, {args.tags:,} loose tags; "
            f"state: {args.claims:,} claims, {args.done} done threads, {args.journal:,} journal entries over "
            f"{args.days} days; built in {time.perf_counter() - t0:.0f} s"
        )
        measure(work, mate, revs, args.runs)
    if not args.keep:
        shutil.rmtree(SANDBOX, ignore_errors=True)  # the signing key and witness made for this run
    else:
        print(f"kept: {args.keep} (its user's keys and witness: {SANDBOX})")
    print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
