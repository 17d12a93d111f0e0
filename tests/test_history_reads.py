"""Reads at git's speed on real histories (issue 34): a read after a commit, a push or a fetch
asks git's history only about the commits since its last answer, and a done thread is
looked up on the branch it was closed on, from any worktree (issue 35, point 4).

Speed itself is measured in benchmarks/real_history_bench.py; these tests pin the behaviour
that makes it: what a read walks, and where it looks."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import commit, git, ok

from git_continuity import repo as gitrepo
from git_continuity.repo.reach import SLOP


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
