"""Reads at git's speed on real histories (issue 34): a read after a commit, a push or a fetch
asks git's history only about the commits since its last answer, and a done thread is
looked up on the branch it was closed on, from any worktree (issue 35, point 4).

Speed itself is measured in benchmarks/real_history_bench.py; these tests pin the behaviour
that makes it: what a read walks, and where it looks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import Run, commit, git, made_id, ok
from test_lifespans import old_entry, write_old
from test_notes_signed import SHELL_MADE, shown

from git_continuity import repo as gitrepo
from git_continuity import store
from git_continuity.repo import reach
from git_continuity.repo.reach import SLOP
from git_continuity.syncing import tracking
from git_continuity.view import assessed as view


def history(repo: Path, commits: int) -> list[str]:
    """``commits`` more commits on main, each its own loose objects; their ids, oldest first."""
    return [commit(repo, f"change {n}", {f"f{n % 5}.txt": f"{n}\n"}) for n in range(commits)]


def lose_root(repo: Path) -> None:
    """Delete the first commit's object: from now on, any walk of the whole history fails."""
    root = git(repo, "rev-list", "--max-parents=0", "HEAD")
    (repo / ".git" / "objects" / root[:2] / root[2:]).unlink()


def claim_state(repo: Path, handle: str) -> tuple[str, str]:
    (claim,) = [c for c in json.loads(ok(repo, "status", "--json"))["claims"] if c["handle"] == handle]
    return claim["state"], claim["observed"]


def test_a_reachable_claim_after_a_commit_is_answered_from_its_last_answer_never_from_the_whole_history(
    repo: Path,
) -> None:
    revs = history(repo, 20)
    ok(repo, "init")
    handle = f"reachable:{revs[5]}@refs/heads/main"
    ok(repo, "claim", "add", "the fix is on main", "--check", handle)
    assert claim_state(repo, handle)[0] == "verified"  # answered once, by a walk of main

    lose_root(repo)
    tip = commit(repo, "after the claim")
    assert claim_state(repo, handle) == (
        "verified",
        f"refs/heads/main is at {tip[:7]}, which contains {revs[5][:7]}",
    )


def test_a_pushed_claim_after_a_push_and_a_fetch_is_answered_from_the_commits_since(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    remote, work = remote_and_clone
    revs = history(work, 20)
    git(work, "push", "-q", "origin", "main")
    ok(work, "init")
    handle = f"pushed:{revs[4]}@origin/main"
    ok(work, "claim", "add", "the fix is pushed", "--check", handle)
    assert claim_state(work, handle)[0] == "verified"

    # A teammate pushes, this clone fetches; then this clone commits and pushes.
    mate = tmp_path / "mate"
    git(tmp_path, "clone", "-q", str(remote), str(mate))
    commit(mate, "theirs")
    git(mate, "push", "-q", "origin", "main")
    lose_root(work)
    git(work, "pull", "-q", "--no-rebase", "origin", "main")
    assert claim_state(work, handle)[0] == "verified"
    commit(work, "ours")
    git(work, "push", "-q", "origin", "main")
    pushed = git(work, "rev-parse", "HEAD")
    state, observed = claim_state(work, handle)
    assert (state, observed.split(" (")[0]) == ("verified", f"origin/main is at {pushed[:7]}")


def test_a_claim_not_on_its_ref_stays_contradicted_and_is_found_once_merged_from_the_commits_since(
    repo: Path,
) -> None:
    history(repo, 20)
    git(repo, "checkout", "-q", "-b", "topic")
    fix = commit(repo, "the fix, on a topic branch")
    git(repo, "checkout", "-q", "main")
    ok(repo, "init")
    handle = f"reachable:{fix}@refs/heads/main"
    ok(repo, "claim", "add", "the fix is on main", "--check", handle)
    assert claim_state(repo, handle)[0] == "contradicted"

    lose_root(repo)
    commit(repo, "unrelated work")
    assert claim_state(repo, handle)[0] == "contradicted"  # still not there: known without a walk
    git(repo, "merge", "-q", "--no-edit", "--no-ff", "topic")
    assert claim_state(repo, handle)[0] == "verified"


def test_a_question_after_new_commits_walks_only_the_commits_since_its_last_answer(repo: Path) -> None:
    revs = history(repo, 40)
    git(repo, "checkout", "-q", "-b", "topic", revs[2])
    topic = commit(repo, "a topic never merged")
    git(repo, "checkout", "-q", "main")
    at = gitrepo.open_repo(repo)
    assert gitrepo.contains(at, gitrepo.Oid(revs[-1]), gitrepo.Oid(revs[3]))
    assert not gitrepo.contains(at, gitrepo.Oid(revs[-1]), gitrepo.Oid(topic))
    gitrepo.keep_answers(at)

    added = history(repo, 3)
    again = gitrepo.open_repo(repo)
    assert gitrepo.contains(again, gitrepo.Oid(added[-1]), gitrepo.Oid(revs[3]))
    assert not gitrepo.contains(again, gitrepo.Oid(added[-1]), gitrepo.Oid(topic))
    # The new commits, the last answer's tip and a few below it (git's own slop), not the 40.
    assert again.walked <= len(added) + 1 + SLOP


def test_a_first_question_about_a_commit_walks_the_commits_above_it_as_git_does_not_the_whole_history(
    repo: Path,
) -> None:
    revs = history(repo, 60)
    git(repo, "checkout", "-q", "-b", "ahead")
    ahead = commit(repo, "not on main yet (a pushed: claim before its push)")
    git(repo, "checkout", "-q", "main")
    at = gitrepo.open_repo(repo)
    assert gitrepo.contains(at, gitrepo.Oid(revs[-1]), gitrepo.Oid(revs[-3]))
    assert at.walked <= 3 + SLOP  # the tip, the commit below it and the one asked about: git's cost
    walked = at.walked
    assert not gitrepo.contains(at, gitrepo.Oid(revs[-1]), gitrepo.Oid(ahead))
    assert at.walked - walked <= 2 + SLOP  # it is above the tip: found so at once
    lose_root(repo)  # nothing below the commits asked about is read
    again = gitrepo.open_repo(repo)
    assert gitrepo.contains(again, gitrepo.Oid(revs[-1]), gitrepo.Oid(revs[-10]))
    assert not gitrepo.contains(again, gitrepo.Oid(revs[-2]), gitrepo.Oid(revs[-1]))


def test_a_branch_no_remote_has_is_told_from_the_commits_above_the_remotes_not_down_an_old_branch(
    repo: Path, tmp_path: Path
) -> None:
    """An agent's branch no remote has (no upstream): its own commits are those on no remote
    branch, an old one among them, made from the history's first commits. Telling them reads
    what git reads, the commits above the remotes' tips; libgit2's walk read the old branch's
    history all the way down."""
    revs = history(repo, 30)
    git(repo, "checkout", "-q", "-b", "old", revs[0])
    commit(repo, "an old branch")
    git(repo, "checkout", "-q", "-b", "agent", revs[-1])
    mine = [commit(repo, f"the agent's work {n}", {"agent.txt": f"{n}\n"}) for n in range(2)]
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    git(repo, "push", "-q", "origin", "old", f"{revs[-1]}:refs/heads/main")
    git(repo, "branch", "-q", "-D", "old")
    ok(repo, "init")
    lose_root(repo)  # nothing below the commits asked about is read

    brief = ok(repo, "orient")
    assert (
        f"- agent: 2 commits on no remote ({mine[1][:7]} the agent's work 1; {mine[0][:7]} the agent's work 0):"
        " no remote has a branch agent"
    ) in brief.splitlines()


def test_the_commits_behind_several_tips_are_git_s_answer_and_the_same_as_behind_one(repo: Path) -> None:
    """Behind several hidden tips git walks (``git rev-list``), behind one libgit2 does: the
    same commits, the same count, capped alike, and neither follows a replaced parent
    (``git replace --graft``: libgit2 knows none)."""
    revs = history(repo, 8)
    git(repo, "replace", "--graft", revs[-1], revs[1])
    at = gitrepo.open_repo(repo)
    tip = gitrepo.Oid(revs[-1])
    hidden_once = [gitrepo.Oid(revs[2])]
    hidden_twice = [gitrepo.Oid(revs[2]), gitrepo.Oid(revs[1])]  # revs[1] is below revs[2]: no other answer
    for count in (100, 3):
        by_libgit2 = gitrepo.commits_since(at, tip, hidden_once, show=2, count_up_to=count)
        by_git = gitrepo.commits_since(at, tip, hidden_twice, show=2, count_up_to=count)
        assert [c.oid for c in by_git[0]] == [c.oid for c in by_libgit2[0]] == [revs[-1], revs[-2]]
        assert by_git[1] == by_libgit2[1] == min(count, 5)


def test_many_first_questions_far_down_share_one_walk_of_the_tip(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reach, "NEAR", 20)  # a git/git history's 2,000, in a history of 60
    revs = history(repo, 60)
    at = gitrepo.open_repo(repo)
    assert all(gitrepo.contains(at, gitrepo.Oid(revs[-1]), gitrepo.Oid(rev)) for rev in revs[:30])
    assert at.walked <= reach.NEAR + SLOP + len(revs)  # one walk that gave up, then the tip's once


# -- a done thread, where it was closed --------------------------------------------------------


def closed_on_feature_in_a_linked_worktree(repo: Path, tmp_path: Path, *, by_commit: bool) -> tuple[Path, str]:
    """A thread whose file: check holds on `feature` only, closed in a linked worktree there."""
    ok(repo, "init")
    ok(repo, "hooks", "install")
    linked = tmp_path / "feature-wt"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    tid = made_id(ok(linked, "thread", "add", "The feature", "--check", "file:feature.txt"), "t")
    commit(linked, f"the feature{f', closes {tid}' if by_commit else ''}", {"feature.txt": "done\n"})
    if not by_commit:
        ok(linked, "thread", "close", tid)
    return linked, tid


def test_a_file_answer_kept_for_a_commit_is_given_without_reading_it_and_never_once_it_is_gone(repo: Path) -> None:
    """What a commit's tree holds is kept by the commit's id (repo/history.py path_in_commit):
    asked again, only the commit's header is read; a commit no longer in this clone is said
    so, whatever was kept."""
    revs = history(repo, 3)
    ok(repo, "init")
    handle = f"file:f1.txt@{revs[1]}"
    ok(repo, "claim", "add", "f1 was there", "--check", handle)
    assert claim_state(repo, handle) == ("verified", f"f1.txt exists in {revs[1][:7]}")
    kept = (repo / ".git" / "continuity" / "cache" / "tree-paths").read_bytes()
    assert f"{revs[1]}1f1.txt\0".encode() in kept

    opened = gitrepo.open_repo(repo)
    read: list[object] = []
    real = pygit2.Repository.__getitem__

    def getitem(self: pygit2.Repository, key: Any) -> Any:
        read.append(key)
        return real(self, key)

    pygit2.Repository.__getitem__ = getitem  # type: ignore[method-assign,assignment]
    try:
        assert gitrepo.path_in_commit(opened, gitrepo.Oid(revs[1]), "f1.txt")
    finally:
        pygit2.Repository.__getitem__ = real  # type: ignore[method-assign]
    assert read == []

    git(repo, "reset", "-q", "--hard", revs[0])
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    assert claim_state(repo, handle) == ("contradicted", f"commit {revs[1][:7]} does not exist in this clone")


class _Headers:
    """A repository's object database that counts the headers read through it."""

    def __init__(self, odb: pygit2.Odb, read: list[str]) -> None:
        self.odb, self.read = odb, read

    def read_header(self, oid: str) -> Any:
        self.read.append(oid)
        return self.odb.read_header(oid)

    def exists(self, oid: str) -> bool:
        return bool(self.odb.exists(oid))


def test_a_commit_found_once_is_looked_up_in_the_pack_index_not_read_and_never_once_it_is_gone(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An id found to be a commit is kept (repo/history.py _kind): asked again, the object is
    only looked up, no header read; a commit no longer in this clone is said so, whatever was kept."""
    revs = history(repo, 3)
    ok(repo, "init")
    handle = f"commit:{revs[1]}"
    ok(repo, "claim", "add", "the change was made", "--check", handle)
    assert claim_state(repo, handle) == ("verified", f"commit {revs[1][:7]} exists here")
    assert revs[1] in (repo / ".git" / "continuity" / "cache" / "commits").read_text().split("\n")

    opened = gitrepo.open_repo(repo)
    read: list[str] = []
    real = opened.git.odb
    with monkeypatch.context() as patched:
        patched.setattr(pygit2.Repository, "odb", property(lambda _: _Headers(real, read)))
        assert gitrepo.has_commit(opened, gitrepo.Oid(revs[1]))
        assert read == []
        assert not gitrepo.has_commit(opened, gitrepo.Oid(git(repo, "rev-parse", f"{revs[1]}^{{tree}}")))
        assert len(read) == 1  # an id not kept as a commit: its header is read

    git(repo, "reset", "-q", "--hard", revs[0])
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    assert claim_state(repo, handle) == ("contradicted", f"commit {revs[1][:7]} does not exist in this clone")


def test_a_thread_closed_on_its_branch_in_a_linked_worktree_holds_from_the_main_checkout(
    repo: Path, tmp_path: Path
) -> None:
    linked, tid = closed_on_feature_in_a_linked_worktree(repo, tmp_path, by_commit=False)
    for where in (repo, linked):
        (thread,) = json.loads(ok(where, "status", "--json"))["threads"]
        assert (thread["standing"], thread["undone"]) == ("holds", None)
        assert thread["closed_on"] == "feature"
        (check,) = thread["checks"]
        assert check["state"] == "verified"
    feature_tip = git(repo, "rev-parse", "feature")
    assert f"feature.txt exists in feature ({feature_tip[:7]})" in ok(repo, "thread", "show", tid)
    brief = ok(repo, "orient")
    assert "no longer holds" not in brief
    assert f"thread reopen {tid}" not in brief


def test_a_thread_closed_by_a_commit_on_its_branch_in_a_linked_worktree_holds_from_the_main_checkout(
    repo: Path, tmp_path: Path
) -> None:
    linked, _ = closed_on_feature_in_a_linked_worktree(repo, tmp_path, by_commit=True)
    (thread,) = json.loads(ok(repo, "status", "--json"))["threads"]
    closing = git(linked, "rev-parse", "HEAD")
    assert (thread["standing"], thread["closed_by"]) == ("holds", closing)
    assert thread["closed_on"] == "feature"
    assert "no longer holds" not in ok(repo, "orient")

    # Work undone on its own branch is still seen from here.
    (linked / "feature.txt").unlink()
    git(linked, "commit", "-q", "-am", "the feature, taken back")
    (thread,) = json.loads(ok(repo, "status", "--json"))["threads"]
    assert thread["standing"] == "undone"
    assert thread["undone"].startswith("c-")
    assert thread["undone"].endswith(f"feature.txt is not in feature ({git(linked, 'rev-parse', 'HEAD')[:7]})")


def test_a_done_thread_is_looked_up_on_the_branch_it_was_closed_on_not_on_every_branch(repo: Path) -> None:
    revs = history(repo, 30)
    for n in range(10):  # old branches, each on a commit long before the closing one
        git(repo, "branch", f"a-old-{n}", revs[n])
    ok(repo, "init")
    ok(repo, "hooks", "install")
    tid = made_id(ok(repo, "thread", "add", "Ship it", "--check", "file:shipped.txt"), "t")
    commit(repo, f"ship it, closes {tid}", {"shipped.txt": "yes\n"})
    assert json.loads(ok(repo, "thread", "show", tid, "--json"))["thread"]["closed_on"] == "main"
    ok(repo, "status")  # the answers a read keeps

    commit(repo, "later work")
    at = gitrepo.open_repo(repo)
    found = view.assess(store.snapshot(at, "main"), with_waiting=False)
    assert found.thread(tid).standing == "holds"
    assert at.walked <= 2 + SLOP  # the one commit since on main, and git's slop: no old branch walked


def test_a_done_thread_whose_closing_commit_left_every_branch_is_not_looked_up_again_on_each(
    repo: Path,
) -> None:
    revs = history(repo, 30)
    for n in range(10):
        git(repo, "branch", f"a-old-{n}", revs[n])
    ok(repo, "init")
    ok(repo, "hooks", "install")
    tid = made_id(ok(repo, "thread", "add", "Ship it", "--check", "file:shipped.txt"), "t")
    closing = commit(repo, f"ship it, closes {tid}", {"shipped.txt": "yes\n"})
    git(repo, "commit", "-q", "--amend", "-m", "ship it, reworded")  # the closing commit is on no branch now
    why = f"its closing commit {closing[:7]} is on no branch here (reset, amended or rewritten away)"
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["undone"] == why  # every branch asked once

    commit(repo, "later work")
    at = gitrepo.open_repo(repo)
    found = view.assess(store.snapshot(at, "main"), with_waiting=False)
    assert found.thread(tid).undone == why
    assert at.walked <= 1 + SLOP  # the one commit since on main; the old branches did not move


# -- refs, however many tags -------------------------------------------------------------------


def test_a_status_lists_the_refs_it_reads_not_every_ref_however_many_tags(
    repo: Path, inproc: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    revs = history(repo, 3)
    lines = "".join(f"create refs/tags/t{n} {revs[n % 3]}\n" for n in range(2000))
    subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, input=lines, text=True, check=True)
    assert len(list((repo / ".git" / "refs" / "tags").iterdir())) == 2000  # loose, as made
    ok(repo, "init")
    ok(repo, "claim", "add", "on main", "--check", f"reachable:{revs[1]}@main")
    listed: list[int] = []
    every_ref = pygit2.references.References.__iter__

    def counted(self: pygit2.references.References) -> Iterator[str]:
        listed.append(1)
        return every_ref(self)

    monkeypatch.setattr(pygit2.references.References, "__iter__", counted)
    for args in (("status",), ("status", "--json"), ("thread", "list"), ("orient",)):
        assert inproc(repo, *args).code == 0
    assert listed == []
    assert gitrepo.list_refs(gitrepo.open_repo(repo), "refs/tags/t1")[:3] == [
        "refs/tags/t1",
        "refs/tags/t10",
        "refs/tags/t100",
    ]


def test_refs_listed_from_their_files_are_the_refs_git_lists_loose_packed_and_peeled(repo: Path) -> None:
    revs = history(repo, 3)
    for n in range(5):
        git(repo, "tag", "-a", f"v{n}", "-m", f"release {n}", revs[n % 3])  # annotated: packed with ^peeled lines
        git(repo, "branch", f"topic/{n}", revs[n % 3])
    git(repo, "pack-refs", "--all")
    git(repo, "tag", "v9", revs[0])  # loose beside packed
    git(repo, "update-ref", "refs/heads/topic/1", revs[2])  # loose over packed
    git(repo, "update-ref", "-d", "refs/heads/topic/2")  # deleted from packed-refs
    (repo / ".git" / "refs" / "heads" / "junk").write_text("not a ref\n")  # libgit2 lists none
    at = gitrepo.open_repo(repo)
    for prefix in ("refs/heads/", "refs/tags/", "refs/heads/topic/"):
        listed = git(repo, "for-each-ref", "--format=%(refname)", prefix).split()
        assert gitrepo.list_refs(at, prefix) == sorted(listed), prefix
    tips = gitrepo.ref_tips(at, ("refs/heads/", "refs/tags/"), 100)
    assert tips == dict(
        line.split()[::-1]
        for line in git(
            repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/tags/"
        ).splitlines()
    )


# -- a year of journal -------------------------------------------------------------------------


def test_status_and_orient_count_a_years_faded_entries_without_reading_them_again(repo: Path) -> None:
    ok(repo, "init")
    old = [old_entry(days, n, f"note {n}") for n, days in enumerate((300, 250, 200, 150, 100, 60, 40, 20))]
    write_old(repo, old)
    for n in range(5):
        ok(repo, "journal", "add", "--kind", "decision", f"decision {n}")
    status = json.loads(ok(repo, "status", "--json"))
    oriented = json.loads(ok(repo, "orient", "--json"))
    assert (status["journal_total"], oriented["journal_total"], oriented["journal_faded"]) == (13, 13, 8)

    # The day folders past what each read shows, and every faded entry in them, leave this
    # clone's objects: a read that opened them would fail or miscount.
    state = git(repo, "rev-parse", "refs/continuity/main")
    for path, _, _ in old[:4]:
        day = path.rsplit("/", 1)[0]
        gone = [git(repo, "rev-parse", f"{state}:{day}")]
        gone += git(repo, "ls-tree", "--object-only", f"{state}:{day}").split()
        for oid in gone:
            (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    again = json.loads(ok(repo, "status", "--json"))
    assert (again["journal_total"], again["journal"]) == (13, status["journal"])
    brief = json.loads(ok(repo, "orient", "--json"))
    assert (brief["journal_total"], brief["journal_faded"], brief["journal"]) == (13, 8, oriented["journal"])


def test_the_oldest_days_whose_entries_stay_as_they_are_are_counted_once_as_a_whole(repo: Path) -> None:
    """Days whose notes have all faded (and whose decisions never will) are kept as one count
    (store/lifespans.py Settled): a brief counts them without a day's objects or caches; an
    entry a sync brings into one of them, or other lifespans, count them again."""
    ok(repo, "init")
    old = [old_entry(days, n, f"note {n}") for n, days in enumerate((300, 250, 200, 150, 100, 3))]
    old.append(old_entry(280, 6, "a decision that never fades", "decision"))
    write_old(repo, old)
    for n in range(5):
        ok(repo, "journal", "add", "--kind", "decision", f"decision {n}")

    def counts() -> tuple[int, int]:
        brief = json.loads(ok(repo, "orient", "--json"))
        return brief["journal_total"], brief["journal_faded"]

    cache = repo / ".git" / "continuity" / "cache"
    assert counts() == (12, 5)
    settled = json.loads((cache / "journal-settled").read_text())
    assert (len(settled["days"]), settled["total"], settled["live"]) == (6, 6, 1)

    # Another clone's note of 250 days ago comes in: its day is counted again, then kept.
    write_old(repo, [old_entry(250.01, 7, "a late note")])
    assert counts() == (13, 6)
    assert json.loads((cache / "journal-settled").read_text())["total"] == 7

    # Those days' folders, their entries and their caches gone: the count stands.
    state = git(repo, "rev-parse", "refs/continuity/main")
    for path, _, _ in old[:5] + old[6:]:
        day = path.rsplit("/", 1)[0]
        for oid in [
            git(repo, "rev-parse", f"{state}:{day}"),
            *git(repo, "ls-tree", "--object-only", f"{state}:{day}").split(),
        ]:
            (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink(missing_ok=True)
    for name in ("journal-spans", "journal-times", "journal-kinds"):
        shutil.rmtree(cache / name, ignore_errors=True) if (cache / name).is_dir() else (cache / name).unlink()
    assert counts() == (13, 6)


def test_other_lifespans_count_the_settled_days_again(repo: Path) -> None:
    ok(repo, "init")
    write_old(repo, [old_entry(days, n, f"note {n}") for n, days in enumerate((300, 200, 100))])
    for n in range(5):
        ok(repo, "journal", "add", "--kind", "decision", f"decision {n}")
    assert json.loads(ok(repo, "orient", "--json"))["journal_faded"] == 3
    (repo / ".continuity.yaml").write_text("lifespans: {note: never}\n")
    assert json.loads(ok(repo, "orient", "--json"))["journal_faded"] == 0


def busy_day(repo: Path, entries: int) -> str:
    """``entries`` notes written over the last minutes, one a second, as journal add lays them
    out; the folder of the newest (today's)."""
    code = "23456789abcdefghjkmnpqrstuvwxyz"
    made: list[tuple[str, str, dict[str, object]]] = []
    for n in range(entries):
        at = datetime.now(timezone.utc) - timedelta(seconds=entries - n)
        entry_id = "j-" + "".join(code[(n // len(code) ** k) % len(code)] for k in range(6))
        stamp = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
        name = at.strftime("%Y%m%dT%H%M%S.%fZ") + f"-{entry_id}.json"
        data: dict[str, object] = {"id": entry_id, "text": f"note {n}", "at": stamp, "by": "Ada", "host": "laptop"}
        made.append((f".continuity/journal/{stamp[:10]}/{name}", entry_id, data))
    write_old(repo, made)
    return made[-1][0].rsplit("/", 1)[0]


def test_the_newest_entries_are_taken_from_the_end_of_a_busy_day_not_from_a_listing_of_it(
    repo: Path, inproc: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(repo, "init")
    today = busy_day(repo, 600)
    shown = [e["text"] for e in json.loads(ok(repo, "status", "--json"))["journal"]]  # every cache made
    assert shown == [f"note {n}" for n in range(595, 600)]
    folder = git(repo, "rev-parse", f"refs/continuity/main:{today}")
    listed: list[str] = []
    every_entry = gitrepo.tree_entries

    def counted(at: gitrepo.Repo, tree: gitrepo.Oid, path: str = "") -> list[gitrepo.TreeEntry] | None:
        found = every_entry(at, tree, path)
        listed.extend(e.name for e in found or [] if tree == folder and not path)
        return found

    monkeypatch.setattr(gitrepo, "tree_entries", counted)
    for args in (("status", "--json"), ("orient", "--json"), ("journal", "--json")):
        ran = inproc(repo, *args)
        assert ran.code == 0, ran.err
        data = json.loads(ran.out)
        texts = sorted((e["text"] for e in data.get("journal", data.get("entries"))), key=lambda t: int(t.split()[1]))
        assert texts[-5:] == shown, args  # the newest (orient shows them newest first)
    assert listed == []


# -- the commit hooks --------------------------------------------------------------------------


def git_processes(repo: Path, *args: str) -> list[str]:
    """The git commands run for ``git ARGS``, itself and its hooks' (GIT_TRACE names each)."""
    trace = repo.parent / "trace"
    trace.unlink(missing_ok=True)
    subprocess.run(["git", *args], cwd=repo, env={**os.environ, "GIT_TRACE": str(trace)}, check=True)
    return [line.split("built-in: git ", 1)[1] for line in trace.read_text().splitlines() if "built-in: git " in line]


@pytest.mark.parametrize("where", ["main checkout", "linked worktree"])
def test_a_commit_that_closes_nothing_runs_git_only_to_write_its_signed_note(
    repo: Path, tmp_path: Path, where: str
) -> None:
    ok(repo, "init")
    ok(repo, "objective", "set", "Ship it", "--why", "users wait")
    ok(repo, "hooks", "install")
    work = repo
    if where == "linked worktree":
        work = tmp_path / "linked"
        git(repo, "worktree", "add", "-q", "-b", "topic", str(work))
    ok(work, "orient")  # an open session
    git(work, "commit", "-q", "--allow-empty", "-m", "the first: the line of the next note is left for the shell")
    ran = git_processes(work, "commit", "-q", "--allow-empty", "-m", "nothing closed")
    ours = [r.split(" ")[0] for r in ran if not r.startswith("maintenance ")]  # git commit's own
    assert ours == ["commit", "log", "notes", "commit-tree", "update-ref"], ran
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/notes/") == "refs/notes/continuity"  # no copy left
    note = json.loads(git(work, "notes", "--ref=continuity", "show", "HEAD"))
    assert (note["kind"], note["threads"]) == ("provenance", [])
    assert shown(work).splitlines() == [shown(work).splitlines()[0], SHELL_MADE]  # the shell wrote it
    assert shown(work).startswith('Good "git" signature for ada@example.com with ED25519 key')


def test_what_has_not_reached_a_remote_is_counted_once_for_a_state_that_did_not_move(
    remote_and_clone: tuple[Path, Path],
) -> None:
    _, work = remote_and_clone
    ok(work, "init")
    for n in range(6):
        ok(work, "journal", "add", f"entry {n}")
    first = gitrepo.open_repo(work)
    state = state_of(first)
    (box,) = tracking.outbox(first, "main", state)
    assert (box.remote, box.changes, box.never) == ("origin", 7, True)  # init and six entries, never sent
    assert first.walked == 7

    again = gitrepo.open_repo(work)
    assert [box.changes for box in tracking.outbox(again, "main", state)] == [7]
    assert again.walked == 0


def test_what_has_not_reached_a_remote_after_a_state_write_is_counted_from_the_last_count(
    remote_and_clone: tuple[Path, Path],
) -> None:
    """A brief after a write (a verify's state commit holds its whole report) reads the new
    commit, not the stream's history again, and says what a count from nothing says; past the
    cap, or once the hidden commits change (a push), the count is git's walk."""
    _, work = remote_and_clone
    ok(work, "init")
    for n in range(6):
        ok(work, "journal", "add", f"entry {n}")
    before = gitrepo.open_repo(work)
    (box,) = tracking.outbox(before, "main", state_of(before))
    assert (box.changes, before.walked) == (7, 7)
    assert gitrepo.counted_since(before, state_of(before), [], count_up_to=5)[0] == 5

    ok(work, "journal", "add", "one more")
    after = gitrepo.open_repo(work)
    (box,) = tracking.outbox(after, "main", state_of(after))
    assert (box.remote, box.changes, box.never, after.walked) == ("origin", 8, True, 1)
    capped = gitrepo.counted_since(after, state_of(after), [], count_up_to=5)
    assert after.walked == 1 + 1 + 5  # the new commit read again, then, the last count at the cap, the walk's five
    (work / ".git" / "continuity" / "cache" / "since").unlink()  # counted from nothing
    fresh = gitrepo.open_repo(work)
    assert gitrepo.counted_since(fresh, state_of(fresh), [], count_up_to=1000) == (8, box.since)
    assert gitrepo.counted_since(fresh, state_of(fresh), [], count_up_to=5) == capped
    assert fresh.walked == 8 + 5

    ok(work, "push", "origin")  # the remote has it all: nothing waits
    ok(work, "journal", "add", "after the push")
    sent = gitrepo.open_repo(work)
    (box,) = tracking.outbox(sent, "main", state_of(sent))
    assert (box.changes, box.never, sent.walked) == (1, False, 1)  # a walk that hides the remote's tip


def test_a_count_kept_that_does_not_read_as_one_is_counted_again(remote_and_clone: tuple[Path, Path]) -> None:
    """The cache of counts is this clone's own file, and a file can be spoiled: a line that does
    not read as a count is no answer, and the count is made again."""
    _, work = remote_and_clone
    ok(work, "init")
    ok(work, "journal", "add", "an entry")
    repo = gitrepo.open_repo(work)
    tip, parent = state_of(repo), git(work, "rev-parse", "refs/continuity/main~1")
    kept = work / ".git" / "continuity" / "cache" / "since"
    kept.write_text(f"garbage\n{tip} - 1000 = \u00b2x y\n{parent} - 1000 = 1 \u00b2\n{tip} - 5 = 7\n")
    (box,) = tracking.outbox(repo, "main", tip)
    assert (box.changes, box.never, repo.walked) == (2, True, 2)
    assert gitrepo.counted_since(repo, tip, [], count_up_to=5)[0] == 2
    assert "2 changes never sent there" in ok(work, "status")


def state_of(repo: gitrepo.Repo) -> gitrepo.Oid:
    found = gitrepo.ref_target(repo, "refs/continuity/main")
    assert found is not None
    return found


def test_a_day_on_a_lifespans_edge_is_counted_entry_by_entry_from_its_times(repo: Path) -> None:
    ok(repo, "init")
    hour = 1 / 24
    edges = [
        (7 + hour, "note", True),
        (7 - hour, "note", False),
        (30 + hour, "finding", True),
        (30 - hour, "finding", False),
    ]
    write_old(repo, [old_entry(days, n, f"{kind} {n}", kind) for n, (days, kind, _) in enumerate(edges)])
    for n in range(5):
        ok(repo, "journal", "add", "--kind", "decision", f"decision {n}")
    for _ in range(2):  # the first read keeps each day's times; the second counts from them
        brief = json.loads(ok(repo, "orient", "--json"))
        assert (brief["journal_total"], brief["journal_faded"]) == (9, 2)
    kept = sorted((repo / ".git" / "continuity" / "cache" / "journal-times").iterdir())
    assert kept and all(b"\0" in path.read_bytes() for path in kept)  # kinds and their times, as doubles
    for path in kept:  # as an older version kept them: a line of text a kind, read past
        path.write_text("note 1.0 2.0\n")
    brief = json.loads(ok(repo, "orient", "--json"))
    assert (brief["journal_total"], brief["journal_faded"]) == (9, 2)


def test_with_its_refs_packed_a_commit_that_closes_nothing_still_gets_its_signed_note_from_the_shell(
    repo: Path,
) -> None:
    ok(repo, "init")
    ok(repo, "hooks", "install")
    ok(repo, "orient")
    git(repo, "commit", "-q", "--allow-empty", "-m", "the first")
    git(repo, "pack-refs", "--all")  # the state and notes refs in packed-refs, no loose file
    ran = [r.split(" ")[0] for r in git_processes(repo, "commit", "-q", "--allow-empty", "-m", "nothing closed")]
    assert [r for r in ran if r != "maintenance"] == [
        "commit",
        "rev-parse",  # pre-commit's, for the packed state ref
        "rev-parse",  # post-commit's, for the same (the next state write leaves it a file again)
        "log",
        "update-ref",
        "notes",
        "commit-tree",
        "update-ref",
    ]
    assert json.loads(git(repo, "notes", "--ref=continuity", "show", "HEAD"))["threads"] == []
    assert shown(repo).splitlines()[1:] == [SHELL_MADE]
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/") == "refs/notes/continuity"


def test_tags_kept_with_their_folders_times_are_read_again_once_a_tag_moves_or_comes(repo: Path) -> None:
    revs = history(repo, 3)
    for n in range(30):
        git(repo, "tag", f"v{n}", revs[n % 3])
    git(repo, "tag", "release/r1", revs[0])
    old = 1_700_000_000  # long ago: what was listed then can be kept (racy-git's rule)
    for folder in ("refs/tags", "refs/tags/release"):
        os.utime(repo / ".git" / folder, (old, old))

    def tips() -> dict[str, gitrepo.Oid]:
        return gitrepo.ref_tips(gitrepo.open_repo(repo), ("refs/heads/", "refs/tags/"), 100)

    def gits() -> dict[str, str]:
        listed = git(repo, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/", "refs/tags/")
        return {name: oid for oid, name in (line.split() for line in listed.splitlines())}

    assert tips() == gits()
    assert (repo / ".git" / "continuity" / "cache" / "tags-100").is_file()  # kept
    git(repo, "tag", "-f", "v7", revs[2])  # moved
    git(repo, "tag", "release/r2", revs[1])  # in a folder below
    assert tips() == gits()
    git(repo, "tag", "-d", "v3")
    git(repo, "pack-refs", "--all")
    assert tips() == gits()


def test_a_days_times_are_kept_only_for_kinds_whose_names_read_back_as_written() -> None:
    """A day's times are kept as each kind's name, a NUL and its numbers: a kind another clone
    wrote with a NUL in its name (which would read back as another kind's times) or that is not
    UTF-8 keeps nothing, and the day is read from its entries each time."""
    from git_continuity.store import lifespans

    kept = lifespans._times_record({"note": [1.5, 2.5], "finding": [3.0], "ünïcode": [-1.0]})
    assert kept is not None
    read = lifespans._read_times(kept)
    assert read is not None
    assert {kind: list(times) for kind, times in read.items()} == {
        "note": [1.5, 2.5],
        "finding": [3.0],
        "ünïcode": [-1.0],
    }
    for odd in ("note\0\1\0\0\0AAAAAAAA", "\ud800"):
        assert lifespans._times_record({"note": [1.0], odd: [2.0]}) is None
