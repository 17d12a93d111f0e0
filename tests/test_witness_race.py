"""A read that another process's write overtook is read again, not refused as a ref moved back.

The witness (trust/witness.py) moves forward with every write, in whichever process makes it. A
reader that read the ref just before another process wrote meanwhile holds a commit that is
older than the witness: that is a stale read, not a rollback. Seen in the fleet benchmark
(20 worktrees writing at once), where such a read failed a write with "moved back"."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cont, git

from git_continuity import repo as gitrepo
from git_continuity import store
from git_continuity.store import integrity

REF = "refs/continuity/main"


def started(repo: Path) -> Path:
    for args in (("init",), ("journal", "add", "first")):
        ran = cont(repo, *args)
        assert (ran.code, ran.err) == (0, ""), ran
    return repo


def test_a_read_overtaken_by_a_write_is_read_again_where_the_ref_is_now(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started(repo)
    before = git(repo, "rev-parse", REF)
    real = gitrepo.ref_target
    reads: list[str] = []

    def read_then_overtaken(where: gitrepo.Repo, name: str) -> gitrepo.Oid | None:
        found = real(where, name)
        if name == REF and not reads:  # another process writes just after this read
            reads.append(str(found))
            ran = cont(repo, "journal", "add", "written meanwhile by another process")
            assert ran.code == 0, ran
        return found

    monkeypatch.setattr(gitrepo, "ref_target", read_then_overtaken)
    snap = store.snapshot(gitrepo.open_repo(repo), "main")
    assert reads == [before]
    assert snap.commit == git(repo, "rev-parse", REF) != before
    texts = sorted(e.text for e in store.read_journal(snap)[0])
    assert texts == ["first", "written meanwhile by another process"]


def test_a_stale_tip_is_told_apart_from_a_ref_moved_back(repo: Path) -> None:
    started(repo)
    old = gitrepo.Oid(git(repo, "rev-parse", REF))
    assert cont(repo, "journal", "add", "second").code == 0
    handle = gitrepo.open_repo(repo)
    with pytest.raises(gitrepo.RefMoved):  # the ref is past old: read again
        integrity.check(handle, "main", old)
    git(repo, "update-ref", REF, old)  # now the ref itself went back
    with pytest.raises(integrity.Refused, match=f"^{REF} moved back from "):
        integrity.check(handle, "main", old)
