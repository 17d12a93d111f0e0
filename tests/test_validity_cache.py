"""The validity cache (store/state.py) knows an object as good for what it was checked as: a
claim's blob that passed once is not thereby a good thread, nor a good claim under another
claim's file name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import cont, git, sign_with_own_key
from test_sweep import plumb


def started(repo: Path) -> tuple[str, str]:
    """A state with one claim, read once by status (so its blob is known good); the claim's
    id and its blob's."""
    assert cont(repo, "init", "--no-fetch-refspecs").code == 0
    made = cont(repo, "claim", "add", "the tip exists", "--check", "commit:HEAD")
    claim = made.out.split()[2].rstrip(":")
    assert cont(repo, "status").code == 0
    return claim, git(repo, "rev-parse", f"refs/continuity/main:.continuity/claims/{claim}.json")


def also_at(repo: Path, path: str, oid: str) -> None:
    """A state commit on top whose tree holds that same blob at ``path`` too."""
    old = git(repo, "rev-parse", "refs/continuity/main")
    Path(repo.parent / "sweep-index").unlink(missing_ok=True)
    plumb(repo, "read-tree", old)
    plumb(repo, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}")
    new = plumb(
        repo, *sign_with_own_key(), "commit-tree", "-S", plumb(repo, "write-tree"), "-p", old, "-m", "hand edit"
    )
    plumb(repo, "update-ref", "refs/continuity/main", new, old)


def test_a_good_claims_blob_under_threads_is_still_checked_as_a_thread(repo: Path) -> None:
    _, oid = started(repo)
    also_at(repo, ".continuity/threads/t-zzzzzz.json", oid)
    done = cont(repo, "thread", "list")
    assert (done.code, done.err) == (2, "")
    assert done.out == (
        'No threads: git continuity thread add "…" --check HANDLE\n'
        "problem: .continuity/threads/t-zzzzzz.json: (top level): 'title' is missing\n"
        "problem: .continuity/threads/t-zzzzzz.json: (top level): 'status' is missing\n"
        "problem: .continuity/threads/t-zzzzzz.json line 4: handle: unknown key 'handle'\n"
        "problem: .continuity/threads/t-zzzzzz.json line 7: text: unknown key 'text'\n"
        "problem: .continuity/threads/t-zzzzzz.json line 8: written: unknown key 'written'\n"
    )


def test_a_good_claims_blob_under_another_claims_name_is_refused_for_its_id(repo: Path) -> None:
    claim, oid = started(repo)
    also_at(repo, ".continuity/claims/c-zzzzzz.json", oid)
    done = cont(repo, "status")
    assert (done.code, done.err) == (2, "")
    problems = done.out.split("\nProblems (", 1)[1].split("\n", 1)[1]
    assert problems == f"  .continuity/claims/c-zzzzzz.json line 6: id: '{claim}' does not match the file name\n"


def test_a_key_added_is_known_at_once_and_once_saved_without_its_shard_read(repo: Path) -> None:
    """A write of many entries adds a key to each of their shards without reading them (at a
    year of journal, all 256 are a million keys): the key is found all the same, in this
    process and the next, and so are the keys its shard's file held before."""
    from git_continuity import repo as opened
    from git_continuity.store.state import ValidityCache, good

    here = opened.open_repo(repo)
    before, added = good("claim", "ab" + "1" * 38, "c-aaaaaa.json"), good("claim", "ab" + "2" * 38, "c-bbbbbb.json")
    first = ValidityCache(here)
    first.add([before])
    first.save()
    second = ValidityCache(here)
    second.add([added])
    assert second._shards == {}  # what was read to add it: nothing
    assert added in second and before in second
    second.save()
    third = ValidityCache(here)
    assert added in third and before in third
    assert (third.path / "ab").read_text().split() == [before, added]


def test_what_the_cache_knows_outlives_a_change_of_an_output_schema_not_of_an_entrys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache is named by the schemas of what it judges (the entries, the packet): a new
    field in orient's output keeps a year of entries known good; a change of the claim's
    schema sends them to be judged again."""
    from git_continuity.store import STORED, schema

    copy = tmp_path / "schema"
    shutil.copytree(schema._schema_dir(), copy)
    monkeypatch.setattr(schema, "_schema_dir", lambda: copy)
    named = []
    for edited in (None, "orient", "status", "claim"):
        if edited is not None:
            path = copy / f"{edited}.schema.json"
            text = path.read_text()
            assert '"type": "object"' in text
            path.write_text(text.replace('"type": "object"', '"type":  "object"', 1))
        schema.digest.cache_clear()
        named.append(schema.digest(STORED))
    schema.digest.cache_clear()
    assert named[0] == named[1] == named[2] != named[3]


def test_another_schemas_cache_goes_once_nothing_wrote_to_it_for_two_weeks(repo: Path) -> None:
    """An upgrade that changes what is stored leaves the old cache behind (90 MB at a million
    entries): the next write removes it once no process wrote to it for two weeks, and leaves
    a recent one (another installed version in use on this clone) and whatever is not a
    validity cache."""
    import os
    import time

    from git_continuity import repo as opened
    from git_continuity.store.state import validity_path

    started(repo)
    cache = validity_path(opened.open_repo(repo)).parent
    month, day = time.time() - 30 * 86400, time.time() - 86400
    made = {
        "valid-0123456789abcdef-3.d": month,  # another schema's, forgotten
        "valid-fedcba9876543210-2": month,  # an older version's one file, forgotten
        "valid-00000000ffffffff": month,  # the first versions' name
        "valid-1111111111111111-3.d": day,  # another version's, in use
        "valid-2222222222222222-3.d": month,  # an older one's, in use: it appends to its files
        "valid-notes.d": month,  # not a cache of ours
    }
    for name, when in made.items():
        if name.endswith(".d"):
            (cache / name).mkdir()
            (cache / name / "ab").write_text("claim:c-aaaaaa.json:ab\n")
            os.utime(cache / name / "ab", (when, when))
        else:
            (cache / name).write_text("claim:c-aaaaaa.json:ab\n")
        os.utime(cache / name, (when, when))
    older = cache / "valid-2222222222222222-3.d"
    (older / "whole").write_text("tree::cd\n")
    os.utime(older / "whole", (day, day))  # appended to yesterday
    os.utime(older, (month, month))  # which left the folder's own time as it was
    own = validity_path(opened.open_repo(repo))
    for shard in [f"{n:02x}" for n in range(256)] + ["whole"]:  # this write only appends
        (own / shard).touch()
    os.utime(own, (month, month))  # its last write a month ago: this write makes it current
    assert cont(repo, "claim", "add", "another", "--check", "commit:HEAD").code == 0
    assert sorted(p.name for p in cache.glob("valid-*")) == sorted(
        [own.name, "valid-1111111111111111-3.d", "valid-2222222222222222-3.d", "valid-notes.d"]
    )
    assert time.time() - own.stat().st_mtime < 60


def test_a_walk_cut_short_keeps_what_it_had_judged(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk of every entry judged anew (after a schema changed, a year of them takes
    minutes) saves what it found as it goes: an agent's hook killed at its time limit leaves
    the folders it judged known good, and the next walk goes on from there."""
    from git_continuity import repo as opened
    from git_continuity import store
    from git_continuity.store import problems, state

    started(repo)
    assert cont(repo, "thread", "add", "ship it", "--check", "commit:HEAD").code == 0
    assert cont(repo, "journal", "add", "tried the fast path").code == 0
    here = opened.open_repo(repo)
    shutil.rmtree(state.validity_path(here))  # nothing known: as after a change of a schema
    judged = []

    def cut(snap: state.Snapshot, folder: str) -> None:
        if folder == "threads":  # the claims and the journal before it, by name
            raise KeyboardInterrupt  # what the hook's time limit does here
        judged.append(folder)
        real(snap, folder)

    real = problems._flat
    monkeypatch.setattr(problems, "_flat", cut)
    monkeypatch.setattr(state, "CHECKPOINT", 0.0)  # save at every folder
    with pytest.raises(KeyboardInterrupt):
        store.all_problems(store.snapshot(here, "main"))
    assert judged == ["claims"]
    kept = state.ValidityCache(here)
    day = git(repo, "ls-tree", "--name-only", "refs/continuity/main:.continuity/journal").split()[-1]
    for folder, name in (("claims", "claims"), ("journal", day)):
        oid = git(
            repo, "rev-parse", f"refs/continuity/main:.continuity/{folder}" + ("" if name == folder else f"/{name}")
        )
        assert state.good(f"folder-{folder}", oid, name) in kept, folder
    threads = git(repo, "rev-parse", "refs/continuity/main:.continuity/threads")
    thread = git(repo, "ls-tree", "refs/continuity/main:.continuity/threads").split()
    assert state.good("folder-threads", threads, "threads") not in kept
    assert state.good("thread", thread[2], thread[3]) not in kept
    assert state.good("tree", git(repo, "rev-parse", "refs/continuity/main^{tree}")) not in kept
