"""The state ref: where writing works, one commit per change, what it never touches, the
layout, comments a person wrote, and writers racing each other."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, approvals, commit, git, state_refs, untouched, write_state

from git_continuity import repo as gitrepo
from git_continuity import store
from git_continuity.errors import UserError
from git_continuity.store import packetfile, queue

Run = Callable[..., Ran]
ID = r"[2-9a-hjkmnp-z]{6}"


def made_id(ran: Ran, prefix: str) -> str:
    found = re.search(rf"\b{prefix}-{ID}\b", ran.out)
    assert found, ran
    return found.group(0)


def ok(run: Run, where: Path, *args: str) -> Ran:
    ran = run(where, *args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def subjects(repo: Path, ref: str = "refs/continuity/main") -> list[str]:
    return git(repo, "log", "--format=%s", ref).splitlines()


def editor(tmp_path: Path, name: str, body: str) -> str:
    """A GIT_EDITOR: a small shell script that rewrites the file it is given."""
    script = tmp_path / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


# -- where writing works --------------------------------------------------------------------


def test_state_in_an_empty_repository(tmp_path: Path, inproc: Run) -> None:
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    before = untouched(empty)
    ok(inproc, empty, "init")
    ok(inproc, empty, "objective", "set", "Write the first commit", "--why", "the repository is new")
    ok(inproc, empty, "claim", "add", "nothing is uncommitted", "--check", "clean:")
    ok(inproc, empty, "claim", "add", "README is there", "--check", "file:README")
    ok(inproc, empty, "journal", "add", "started from nothing")
    status = inproc(empty, "status", "--json")
    assert status.code == 0
    data = json.loads(status.out)
    assert data["objective"]["text"] == "Write the first commit"
    assert [(c["text"], c["state"], c["observed"]) for c in data["claims"]] == [
        ("nothing is uncommitted", "verified", "the work tree has no uncommitted changes"),
        ("README is there", "contradicted", "HEAD has no commits, so README is in no tree"),
    ]
    assert [e["text"] for e in data["journal"]] == ["started from nothing"]
    assert untouched(empty) == before
    assert git(empty, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""
    assert git(empty, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(empty, "for-each-ref", "--format=%(refname)") == "refs/continuity/main"
    assert not (empty / ".git" / "index").exists()


def worktree_index(checkout: Path) -> bytes:
    path = Path(git(checkout, "rev-parse", "--path-format=absolute", "--git-path", "index"))
    return path.read_bytes()


def test_one_state_shared_by_linked_worktrees(repo: Path, tmp_path: Path, inproc: Run) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "side")
    side = commit(wt, "side work", {"side.txt": "side\n"})
    main_head = git(repo, "rev-parse", "HEAD")
    (repo / "scratch.txt").write_text("only in the main checkout\n")
    before = (untouched(repo), worktree_index(repo), untouched(wt), worktree_index(wt))

    ok(inproc, repo, "init")
    ok(inproc, wt, "claim", "add", "side work is committed", "--check", "commit:HEAD")
    ok(inproc, wt, "claim", "add", "the side checkout is clean", "--check", "clean:")
    ok(inproc, wt, "journal", "add", "written from the worktree")
    ok(inproc, repo, "claim", "add", "main is at its first commit", "--check", "ref:main=HEAD")
    ok(inproc, repo, "next", "merge side")

    for checkout in (repo, wt):
        data = json.loads(ok(inproc, checkout, "status", "--json").out)
        assert data["next_action"] == "merge side"
        assert [e["text"] for e in data["journal"]] == ["written from the worktree"]
        claims = [(c["text"], c["handle"]) for c in data["claims"]]
        assert claims == [
            ("side work is committed", f"commit:{side}"),  # HEAD of the worktree that recorded it
            ("the side checkout is clean", "clean:"),
            ("main is at its first commit", f"ref:refs/heads/main={main_head}"),
        ]
    # clean: looks at the work tree of the checkout it runs in.
    states = {
        c["text"]: (c["state"], c["observed"])
        for c in json.loads(inproc(repo, "claim", "list", "--json").out)["claims"]
    }
    assert states["the side checkout is clean"] == ("contradicted", "1 uncommitted change: scratch.txt")
    states = {
        c["text"]: (c["state"], c["observed"]) for c in json.loads(inproc(wt, "claim", "list", "--json").out)["claims"]
    }
    assert states["the side checkout is clean"] == ("verified", "the work tree has no uncommitted changes")

    assert state_refs(repo) == state_refs(wt)
    assert len(subjects(wt)) == 6
    assert (untouched(repo), worktree_index(repo), untouched(wt), worktree_index(wt)) == before
    # One state, in the common dir; a work tree's own folder holds only its next note (clone/provenance.py).
    assert [p.name for p in (repo / ".git" / "worktrees").rglob("continuity/*")] == ["provenance.line"]


def test_state_with_a_detached_head(repo: Path, inproc: Run) -> None:
    second = commit(repo, "second")
    git(repo, "checkout", "-q", "--detach", "HEAD~1")
    first = git(repo, "rev-parse", "HEAD")
    before = untouched(repo)
    ok(inproc, repo, "init")
    ok(inproc, repo, "claim", "add", "we are on the first commit", "--check", "commit:HEAD")
    ok(inproc, repo, "claim", "add", "it is on main", "--check", "reachable:HEAD@main")
    ok(inproc, repo, "journal", "add", "looking at an old commit")
    data = json.loads(ok(inproc, repo, "claim", "list", "--json").out)
    assert [(c["handle"], c["state"], c["observed"]) for c in data["claims"]] == [
        (f"commit:{first}", "verified", f"commit {first[:7]} exists here"),
        (
            f"reachable:{first}@refs/heads/main",
            "verified",
            f"refs/heads/main is at {second[:7]}, which contains {first[:7]}",
        ),
    ]
    assert untouched(repo) == before
    assert git(repo, "symbolic-ref", "-q", "HEAD", check=False) == ""  # still detached


def test_state_in_a_bare_repository(repo: Path, tmp_path: Path, inproc: Run) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    head = git(bare, "rev-parse", "HEAD")
    refs = git(bare, "for-each-ref", "--format=%(refname) %(objectname)")
    ok(inproc, bare, "init")
    ok(inproc, bare, "claim", "add", "nothing is uncommitted", "--check", "clean:")
    ok(inproc, bare, "claim", "add", "README is there", "--check", "file:README")
    ok(inproc, bare, "journal", "add", "kept on the server")
    status = inproc(bare, "status", "--json")
    assert (status.code, status.err) == (0, "")
    data = json.loads(status.out)
    assert [(c["state"], c["observed"]) for c in data["claims"]] == [
        ("unknown", "a bare repository has no work tree"),
        ("verified", f"README exists in HEAD ({head[:7]})"),
    ]
    assert [e["text"] for e in data["journal"]] == ["kept on the server"]
    assert git(bare, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags") == refs
    assert subjects(bare)[-1] == "init: start stream main"
    assert (bare / "continuity" / "cache").is_dir()  # the local folder sits in the git dir itself
    assert not (bare / ".git").exists()


# -- one commit per change ------------------------------------------------------------------


def test_each_change_is_one_commit_that_says_what_changed(
    repo: Path, tmp_path: Path, inproc: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    before = untouched(repo)
    ok(inproc, repo, "init")
    ok(inproc, repo, "objective", "set", "Ship the login fix", "--why", "users are locked out")
    ok(inproc, repo, "next", "push the fix")
    ok(inproc, repo, "next", "push the fix")  # nothing changes: no empty commit
    blocker = made_id(ok(inproc, repo, "blocker", "add", "CI runner is offline"), "b")
    ok(inproc, repo, "blocker", "done", blocker)
    prose = made_id(ok(inproc, repo, "claim", "add", "the reviewers are happy"), "c")
    first = made_id(ok(inproc, repo, "claim", "add", "the first commit exists", "--check", "commit:HEAD"), "c")
    entry = made_id(ok(inproc, repo, "journal", "add", "reproduced the bug"), "j")
    ok(inproc, repo, "verify")
    monkeypatch.setenv("GIT_EDITOR", editor(tmp_path, "append.sh", "printf '# checked by Ada\\n' >> \"$1\"\n"))
    ok(inproc, repo, "edit")

    assert subjects(repo) == [
        "edit: packet edited by hand",
        "verify: 1 claim (1 verified)",
        f"journal add {entry}: reproduced the bug",
        f"claim add {first}: the first commit exists",
        f"claim add {prose}: the reviewers are happy",
        f"blocker done {blocker}: CI runner is offline",
        f"blocker add {blocker}: CI runner is offline",
        "next: push the fix",
        "objective: Ship the login fix",
        "init: start stream main",
    ]
    # Every change records itself in the ref's reflog, newest first.
    reflog = git(repo, "reflog", "show", "--format=%H %gs", "refs/continuity/main").splitlines()
    commits = git(repo, "log", "--format=%H", "refs/continuity/main").splitlines()
    assert reflog == [f"{c} continuity: {s}" for c, s in zip(commits, subjects(repo), strict=True)]
    # A straight chain: each commit's only parent is the one before it.
    parents = git(repo, "log", "--format=%H:%P", "refs/continuity/main").splitlines()
    assert parents == [f"{c}:{p}" for c, p in zip(commits, [*commits[1:], ""], strict=True)]
    assert set(git(repo, "log", "--format=%an <%ae>|%cn <%ce>", "refs/continuity/main").splitlines()) == {
        "Ada Agent <ada@example.com>|Ada Agent <ada@example.com>"
    }

    # Each commit touches exactly the files of its change.
    def changed(c: str) -> list[str]:
        out = git(repo, "diff-tree", "--root", "--no-commit-id", "-r", "--name-status", c).splitlines()
        out = [re.sub(r"\d{8}T\d{6}\.\d{6}Z", "TIME", line) for line in out]
        return [re.sub(r"\d{4}-\d\d-\d\d/", "DAY/", line) for line in out]

    evidence_id = git(repo, "ls-tree", "--name-only", f"refs/continuity/main:.continuity/evidence/{first}")[-13:-5]
    assert [changed(c) for c in commits] == [
        ["M\t.continuity/packet.yaml"],
        [f"A\t.continuity/evidence/{first}/TIME-{evidence_id}.json"],
        [f"A\t.continuity/journal/DAY/TIME-{entry}.json"],
        [f"A\t.continuity/claims/{first}.json"],
        [f"A\t.continuity/claims/{prose}.json"],
        ["M\t.continuity/packet.yaml"],
        ["M\t.continuity/packet.yaml"],
        ["M\t.continuity/packet.yaml"],
        [line for line in changed(commits[-2]) if "objective/" in line] + ["M\t.continuity/packet.yaml"],
        ["A\t.continuity/format", "A\t.continuity/packet.yaml"],
    ]
    assert re.fullmatch(r"A\t\.continuity/objective/TIME-o-" + ID + r"\.json", changed(commits[-2])[0])

    # The bodies say the rest: the handle as stored, why the objective is what it is.
    bodies = git(repo, "log", "--format=%B%x00", "refs/continuity/main").split("\0")
    # Each ends with a trailer saying on which machine it was written (clone/session.py).
    host = f"\n\nHost: {socket.gethostname()}"
    assert bodies[3].strip() == f"claim add {first}: the first commit exists\n\nhandle: commit:{head}" + host
    assert bodies[4].strip() == f"claim add {prose}: the reviewers are happy\n\nprose: no handle" + host
    assert bodies[8].strip() == "objective: Ship the login fix\n\nwhy: users are locked out\nwas: (none)" + host
    assert (
        bodies[1].strip() == f"verify: 1 claim (1 verified)\n\n{first} verified: commit {head[:7]} exists here" + host
    )

    assert untouched(repo) == before


def test_init_twice_is_safe(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    ok(inproc, repo, "next", "keep this")
    refs = state_refs(repo)
    again = ok(inproc, repo, "init")
    tip = git(repo, "rev-parse", "refs/continuity/main")
    assert again.out == f"Stream 'main' already has state: refs/continuity/main at {tip[:7]}.\n"
    assert state_refs(repo) == refs
    assert ok(inproc, repo, "next").out == "keep this\n"


def test_writing_never_moves_head_branches_index_or_work_tree(repo: Path, inproc: Run) -> None:
    # A half-done change in every place git keeps one: staged, unstaged, untracked.
    (repo / "README").write_text("staged\n")
    git(repo, "add", "README")
    (repo / "README").write_text("staged, then edited\n")
    (repo / "new.txt").write_text("untracked\n")
    git(repo, "tag", "v1")
    git(repo, "branch", "other")
    before = untouched(repo)
    ok(inproc, repo, "init")
    ok(inproc, repo, "objective", "set", "Finish the change", "--why", "it is half done")
    ok(inproc, repo, "claim", "add", "the change is committed", "--check", "clean:")
    ok(inproc, repo, "journal", "add", "halfway")
    assert inproc(repo, "verify").code == 1
    assert untouched(repo) == before
    assert (repo / "README").read_text() == "staged, then edited\n"
    assert git(repo, "diff", "--cached", "--name-only") == "README"


# -- layout ---------------------------------------------------------------------------------

PLACEHOLDERS = {
    "<id>": rf"[a-z]-{ID}",
    "<claim>": rf"c-{ID}",
    "<thread>": rf"t-{ID}",
    "<time>": r"\d{8}T\d{6}\.\d{6}Z",
    "<day>": r"\d{4}-\d\d-\d\d",
}


def documented_layout() -> dict[str, re.Pattern[str]]:
    """The paths the store package's docstring documents, as patterns."""
    doc = store.__doc__ or ""
    paths = [line.split()[0] for line in doc.splitlines() if line.startswith("    .continuity/")]
    patterns = {}
    for path in paths:
        pattern = re.escape(path)
        for name, regex in PLACEHOLDERS.items():
            pattern = pattern.replace(re.escape(name), regex)
        assert "<" not in pattern, f"undocumented placeholder in {path}"
        patterns[path] = re.compile(pattern)
    return patterns


def test_the_layout_on_the_ref_is_the_documented_one(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    ok(inproc, repo, "objective", "set", "Ship it", "--why", "users wait")
    ok(inproc, repo, "objective", "set", "Ship it today", "--why", "users still wait")
    ok(inproc, repo, "blocker", "add", "CI runner is offline")
    claim = made_id(ok(inproc, repo, "claim", "add", "the first commit exists", "--check", "commit:HEAD"), "c")
    ok(inproc, repo, "claim", "add", "prose")
    ok(inproc, repo, "thread", "add", "Ship the login fix", "--check", "clean:")
    ok(inproc, repo, "journal", "add", "one")
    ok(inproc, repo, "journal", "add", "two")
    ok(inproc, repo, "place", "set", "main", "home", "--why", "the work happens on main")
    git(repo.parent, "init", "-q", "api")
    ok(inproc, repo, "repo", "add", "api", "../api")
    ok(inproc, repo, "verify")
    ok(inproc, repo, "verify")
    ok(inproc, repo, "handoff")

    files = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main").splitlines()
    layout = documented_layout()
    matched = {path: [f for f in files if pattern.fullmatch(f)] for path, pattern in layout.items()}
    assert sorted(f for found in matched.values() for f in found) == sorted(files)  # nothing undocumented
    assert {path: len(found) for path, found in matched.items()} == {
        ".continuity/format": 1,
        ".continuity/packet.yaml": 1,
        ".continuity/claims/<id>.json": 3,  # one of them the thread's check
        ".continuity/threads/<id>.json": 1,
        ".continuity/objective/<time>-<id>.json": 2,
        ".continuity/journal/<day>/<time>-<id>.json": 3,  # the handoff's session entry too
        ".continuity/evidence/<claim>/<time>-<id>.json": 4,  # two claims with handles, verified twice
        ".continuity/handoffs/<day>/<time>-<id>.json": 1,
        ".continuity/conflicts/<id>.json": 0,  # only merges of two clones' state write them (test_merge)
        ".continuity/attempts/<thread>/<time>-<id>.json": 0,  # the thread's check verified (test_progress)
        ".continuity/places/<id>.json": 1,
        ".continuity/siblings/<id>.json": 1,
        ".continuity/thread-claims/<thread>.json": 0,  # thread claim writes one (test_planning)
    }
    with_handles = {
        json.loads(git(repo, "show", f"refs/continuity/main:{f}"))["id"]
        for f in matched[".continuity/claims/<id>.json"]
        if "handle" in git(repo, "show", f"refs/continuity/main:{f}")
    }
    assert claim in with_handles and len(with_handles) == 2
    # Each entry's file name carries its id, and journal days and evidence folders are right.
    for path in files:
        if path.endswith(".json"):
            data = json.loads(git(repo, "show", f"refs/continuity/main:{path}"))
            assert path.endswith(f"-{data['id']}.json") or path.endswith(f"/{data['id']}.json"), path
            if "/journal/" in path or "/handoffs/" in path:
                assert path.split("/")[2] == data["at"][:10]
            if "/evidence/" in path:
                assert path.split("/")[2] == data["claim"] and data["claim"] in with_handles
    assert git(repo, "show", "refs/continuity/main:.continuity/format") == store.FORMAT


# -- comments survive -----------------------------------------------------------------------

COMMENTED = """\
# Top comment by Ada: read this first.
objective:   # set by the tool
# between the keys
next_action: check the logs  # inline note
# blockers below
blockers: []
# trailing comment at the end
"""


def comments(text: str) -> list[str]:
    return [line[line.index("#") :] for line in text.splitlines() if "#" in line]


@pytest.mark.parametrize("how", ["edit", "plumbing"])
def test_comments_a_person_wrote_survive_later_commands(
    repo: Path, tmp_path: Path, inproc: Run, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    ok(inproc, repo, "init")
    if how == "edit":
        (tmp_path / "packet.yaml").write_text(COMMENTED)
        monkeypatch.setenv("GIT_EDITOR", editor(tmp_path, "replace.sh", f"cp '{tmp_path / 'packet.yaml'}' \"$1\"\n"))
        assert ok(inproc, repo, "edit").out == 'Packet updated:\n  next_action: (none) → "check the logs"\n'
    else:
        write_state(repo, {packetfile.PATH: COMMENTED})
    assert git(repo, "show", f"refs/continuity/main:{packetfile.PATH}") + "\n" == COMMENTED

    ok(inproc, repo, "next", "rebase and push")
    blocker = made_id(ok(inproc, repo, "blocker", "add", "CI runner is offline"), "b")
    ok(inproc, repo, "objective", "set", "Ship the login fix", "--why", "users are locked out")
    ok(inproc, repo, "blocker", "done", blocker)

    text = git(repo, "show", f"refs/continuity/main:{packetfile.PATH}") + "\n"
    assert comments(text) == comments(COMMENTED)
    # Every comment is where it was written: after the value it followed, at the end of the file.
    assert (
        re.sub(r"'\d{4}-\d\d-\d\dT[\d:.]+Z'", "TIME", text)
        == f"""\
# Top comment by Ada: read this first.
objective:   # set by the tool
  text: Ship the login fix
  why: users are locked out
  set_at: TIME
  set_by: Ada Agent <ada@example.com>
# between the keys
next_action: rebase and push # inline note
# blockers below
blockers:
  - id: {blocker}
    text: CI runner is offline
    added_at: TIME
    added_by: Ada Agent <ada@example.com>
    done_at: TIME
# trailing comment at the end
"""
    )


TWO_BLOCKERS = """\
next_action: wait
blockers:
  - id: b-222222
    text: CI runner is offline
    added_at: '2026-11-30T10:00:00Z'
    added_by: Ada
  # the runner is shared with team B
  - id: b-333333
    text: waiting for the API key
    added_at: '2026-11-30T10:00:00Z'
    added_by: Ada  # asked twice
# end of the packet
"""


def test_a_comment_between_blockers_stays_between_them(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    write_state(repo, {packetfile.PATH: TWO_BLOCKERS})
    ok(inproc, repo, "blocker", "done", "b-222222")
    ok(inproc, repo, "blocker", "done", "b-333333")
    text = git(repo, "show", f"refs/continuity/main:{packetfile.PATH}") + "\n"
    assert (
        re.sub(r"'\d{4}-\d\d-\d\dT[\d:.]+Z'", "TIME", text)
        == """\
next_action: wait
blockers:
  - id: b-222222
    text: CI runner is offline
    added_at: TIME
    added_by: Ada
    done_at: TIME
  # the runner is shared with team B
  - id: b-333333
    text: waiting for the API key
    added_at: TIME
    added_by: Ada  # asked twice
    done_at: TIME
# end of the packet
"""
    )


def test_the_template_comments_survive_the_commands(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    ok(inproc, repo, "objective", "set", "Ship it", "--why", "users wait")
    ok(inproc, repo, "next", "push")
    ok(inproc, repo, "blocker", "add", "CI is down")
    text = git(repo, "show", f"refs/continuity/main:{packetfile.PATH}")
    assert comments(text) == comments(packetfile.TEMPLATE)

    # Each explanation still sits right above its key.
    def above(text: str, key: str) -> str:
        lines = text.splitlines()
        return lines[next(n for n, line in enumerate(lines) if line.startswith(key)) - 1]

    for key in ("objective:", "next_action:", "blockers:"):
        assert above(text, key) == above(packetfile.TEMPLATE, key), key


# -- streams --------------------------------------------------------------------------------


def test_two_streams_are_independent(repo: Path, inproc: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    ok(inproc, repo, "--stream", "a", "init")
    ok(inproc, repo, "--stream", "b", "init")
    ok(inproc, repo, "--stream", "a", "objective", "set", "Objective A", "--why", "for a")
    ok(inproc, repo, "--stream", "a", "claim", "add", "claim of a")
    ok(inproc, repo, "--stream", "b", "next", "next of b")
    ok(inproc, repo, "--stream", "b", "journal", "add", "journal of b")

    a = json.loads(ok(inproc, repo, "--stream", "a", "status", "--json").out)
    monkeypatch.setenv("GIT_CONTINUITY_STREAM", "b")
    b = json.loads(ok(inproc, repo, "status", "--json").out)
    assert (a["stream"], a["objective"]["text"], a["next_action"], [c["text"] for c in a["claims"]], a["journal"]) == (
        "a",
        "Objective A",
        None,
        ["claim of a"],
        [],
    )
    assert (b["stream"], b["objective"], b["next_action"], b["claims"], [e["text"] for e in b["journal"]]) == (
        "b",
        None,
        "next of b",
        [],
        ["journal of b"],
    )
    assert subjects(repo, "refs/continuity/a")[:2] == [
        "claim add " + a["claims"][0]["id"] + ": claim of a",
        "objective: Objective A",
    ]
    assert subjects(repo, "refs/continuity/b")[:2] == [
        f"journal add {b['journal'][0]['id']}: journal of b",
        "next: next of b",
    ]
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/continuity/").splitlines() == [
        "refs/continuity/a",
        "refs/continuity/b",
    ]
    # The two histories share nothing.
    assert git(repo, "merge-base", "refs/continuity/a", "refs/continuity/b", check=False) == ""


# -- racing writers -------------------------------------------------------------------------

WRITER = """\
import contextlib, io, os, sys, time
from git_continuity.cli.main import main
tag, go, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(count):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["claim", "add", f"{tag} {i}"] + (["--check", "clean:"] if i % 5 == 0 else []))
    if code != 0:
        sys.exit(f"{tag} {i}: exit {code}: {out.getvalue()}")
"""


def test_two_writers_at_once_both_land(repo: Path, tmp_path: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, tag, str(go), "50"],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    go.touch()
    for w in writers:
        _, err = w.communicate(timeout=120)
        assert w.returncode == 0, err

    names = git(repo, "ls-tree", "--name-only", "refs/continuity/main:.continuity/claims").splitlines()
    assert len(names) == 100
    data = json.loads(ok(inproc, repo, "claim", "list", "--json").out)
    assert sorted(c["text"] for c in data["claims"]) == sorted(f"{t} {i}" for t in "AB" for i in range(50))
    assert len({c["id"] for c in data["claims"]}) == 100
    assert sorted(f"{c['id']}.json" for c in data["claims"]) == sorted(names)
    # One commit per claim on one straight chain, and one reflog entry each: nothing overwritten.
    assert len(subjects(repo)) == 101
    assert len(git(repo, "reflog", "show", "refs/continuity/main").splitlines()) == 101
    assert git(repo, "rev-list", "--min-parents=2", "refs/continuity/main") == ""


def test_inits_at_once_make_one_root(repo: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    script = (
        "import os, sys, time\nfrom git_continuity.cli.main import main\n"
        "while not os.path.exists(sys.argv[1]): time.sleep(0.001)\nsys.exit(main(['init']))\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(go)], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert subjects(repo) == ["init: start stream main"]


PACKET_WRITER = """\
import contextlib, io, os, sys, time
from git_continuity.cli.main import main
tag, go, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(count):
    args = [["next", f"{tag} next {i}"], ["blocker", "add", f"{tag} blocker {i}"]]
    args.append(["journal", "add", f"{tag} entry {i}"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args[i % 3])
    if code != 0:
        sys.exit(f"{tag} {i}: exit {code}: {out.getvalue()}")
"""


def test_four_writers_to_the_packet_at_once_all_land(repo: Path, tmp_path: Path, inproc: Run) -> None:
    """Issue 10: writers of the packet (next, blocker add) starved behind quicker ones."""
    ok(inproc, repo, "init")
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", PACKET_WRITER, tag, str(go), "9"],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in "ABCD"
    ]
    go.touch()
    for w in writers:
        _, err = w.communicate(timeout=300)
        assert w.returncode == 0, err
    assert len(subjects(repo)) == 1 + 4 * 9
    blockers = json.loads(ok(inproc, repo, "blocker", "list", "--json").out)["blockers"]
    assert sorted(b["text"] for b in blockers) == sorted(f"{t} blocker {i}" for t in "ABCD" for i in (1, 4, 7))
    entries = json.loads(ok(inproc, repo, "journal", "--json").out)["entries"]
    assert sorted(e["text"] for e in entries) == sorted(f"{t} entry {i}" for t in "ABCD" for i in (2, 5, 8))
    assert ok(inproc, repo, "next").out in {f"{t} next 6\n" for t in "ABCD"}


def test_a_writer_waits_its_turn(repo: Path, inproc: Run) -> None:
    """While one writer holds the stream's turn, another builds nothing and moves nothing;
    it lands once the turn is free."""
    ok(inproc, repo, "init")
    opened = gitrepo.open_repo(repo)
    before = git(repo, "rev-parse", "refs/continuity/main")
    with queue.turn(opened, "main"):
        waiting = subprocess.Popen(
            ["git", "continuity", "journal", "add", "after my turn"], cwd=repo, stdout=subprocess.PIPE, text=True
        )
        with pytest.raises(subprocess.TimeoutExpired):
            waiting.wait(timeout=3)
        assert git(repo, "rev-parse", "refs/continuity/main") == before
    assert waiting.communicate(timeout=60)[0].startswith("Journal entry j-")
    assert subjects(repo)[0].endswith(": after my turn")


def test_a_killed_writer_leaves_no_turn_behind(repo: Path, inproc: Run) -> None:
    """kill -9 inside a write: the kernel drops the lock with the process, so the next
    writer takes its turn at once (a lock file left by a dead writer blocked every write)."""
    import fcntl

    ok(inproc, repo, "init")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfrom git_continuity import store, repo\n"
            "with store.queue.turn(repo.open_repo('.'), 'main'):\n    print('held', flush=True)\n    time.sleep(120)\n",
        ],
        cwd=repo,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    path = repo / ".git" / "continuity" / "writers" / "main"
    with path.open("rb") as busy, pytest.raises(BlockingIOError):
        fcntl.flock(busy.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    holder.kill()
    holder.wait()
    with path.open("rb") as free:
        fcntl.flock(free.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # free: no exception
    ok(inproc, repo, "journal", "add", "the next writer")
    assert subjects(repo)[0].endswith(": the next writer")


def test_a_writer_that_lost_the_race_rereads_and_retries(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    opened = gitrepo.open_repo(repo)
    seen: list[str | None] = []

    def make(snap: store.Snapshot) -> store.Change:
        seen.append(snap.commit)
        if len(seen) == 1:
            # Another writer lands between our read and our compare-and-swap.
            write_state(
                repo,
                {
                    ".continuity/claims/c-222222.json": json.dumps(
                        {
                            "id": "c-222222",
                            "text": "theirs",
                            "added_at": "2026-11-30T10:00:00.000Z",
                            "added_by": "Bob <bob@example.com>",
                            "host": "elsewhere",
                        }
                    )
                    + "\n"
                },
                "claim add c-222222: theirs",
            )
        names = git(repo, "ls-tree", "--name-only", f"{snap.commit}:.continuity/claims", check=False)
        return store.Change(
            "ours: " + (names or "no claims"),
            {
                ".continuity/claims/c-333333.json": json.dumps(
                    {
                        "id": "c-333333",
                        "text": "ours",
                        "added_at": "2026-11-30T10:00:01.000Z",
                        "added_by": "Ada <ada@example.com>",
                        "host": "here",
                    }
                ).encode()
                + b"\n"
            },
        )

    store.update(opened, "main", make)
    assert len(seen) == 2 and seen[0] != seen[1]
    assert subjects(repo) == ["ours: c-222222.json", "claim add c-222222: theirs", "init: start stream main"]
    assert git(repo, "ls-tree", "--name-only", "refs/continuity/main:.continuity/claims").splitlines() == [
        "c-222222.json",
        "c-333333.json",
    ]


def test_compare_and_swap_refuses_a_ref_that_moved(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    opened = gitrepo.open_repo(repo)
    tip = gitrepo.Oid(git(repo, "rev-parse", "refs/continuity/main"))
    head = gitrepo.Oid(git(repo, "rev-parse", "HEAD"))
    with pytest.raises(gitrepo.RefMoved):
        gitrepo.compare_and_swap(opened, "refs/continuity/main", head, head, "wrong old value")
    with pytest.raises(gitrepo.RefMoved):
        gitrepo.compare_and_swap(opened, "refs/continuity/main", head, None, "must not exist")
    assert git(repo, "rev-parse", "refs/continuity/main") == tip
    gitrepo.compare_and_swap(opened, "refs/continuity/other", tip, None, "create")
    assert git(repo, "rev-parse", "refs/continuity/other") == tip


def test_a_change_that_changes_nothing_makes_no_commit(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    ok(inproc, repo, "next", "push")
    tip = git(repo, "rev-parse", "refs/continuity/main")
    assert ok(inproc, repo, "next", "push").out == "Next action: push\n"
    assert git(repo, "rev-parse", "refs/continuity/main") == tip


def test_the_local_folder_is_never_on_the_ref(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    ok(inproc, repo, "claim", "add", "x", "--check", "commit:HEAD")
    ok(inproc, repo, "status")
    assert (repo / ".git" / "continuity" / "cache").is_dir()
    files = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main").splitlines()
    assert all(f.startswith(".continuity/") for f in files)
    assert not any("cache" in f for f in files)
    assert sorted(os.listdir(repo)) == [".git", "README"]


def test_caches_keyed_by_object_ids_see_a_changed_entry(repo: Path, inproc: Run) -> None:
    """The folder, packet and validity caches are keyed by tree and blob ids: one entry
    changed by hand behind their back is read as it is now, good or bad."""
    ok(inproc, repo, "init")
    claim = made_id(ok(inproc, repo, "claim", "add", "as first written", "--check", "commit:HEAD"), "c")
    ok(inproc, repo, "claim", "add", "another one")
    ok(inproc, repo, "next", "as first written")
    for _ in range(2):  # the second run is served from the caches
        listed = json.loads(ok(inproc, repo, "claim", "list", "--json").out)["claims"]
        assert sorted(c["text"] for c in listed) == ["another one", "as first written"]
    cache = repo / ".git" / "continuity" / "cache"
    assert any((cache / "claims").iterdir()) and any((cache / "packet").iterdir())
    path = f".continuity/claims/{claim}.json"
    data = json.loads(git(repo, "show", f"refs/continuity/main:{path}"))
    write_state(repo, {path: json.dumps({**data, "text": "changed by hand"}) + "\n"})
    doc = git(repo, "show", f"refs/continuity/main:{packetfile.PATH}")
    write_state(repo, {packetfile.PATH: doc.replace("next_action: as first written", "next_action: edited") + "\n"})
    listed = json.loads(ok(inproc, repo, "claim", "list", "--json").out)["claims"]
    assert sorted(c["text"] for c in listed) == ["another one", "changed by hand"]
    assert ok(inproc, repo, "next").out == "edited\n"
    write_state(repo, {path: json.dumps({**data, "text": ""}) + "\n"})
    ran = inproc(repo, "status")
    assert ran.code == 2
    assert ran.out.endswith(f"nothing will be written on top of it)\n  {path} line 1: text: '' should be non-empty\n")


def test_a_claims_cache_spoiled_by_hand_is_read_past_not_raised(repo: Path, inproc: Run) -> None:
    """The claims kept as rows under the cache folder are checked for their shape before they
    are used: a row whose id is not text is read past, and the claims folder read again."""
    ok(inproc, repo, "init")
    ok(inproc, repo, "claim", "add", "kept", "--check", "commit:HEAD")

    def claims() -> list[tuple[str, str, str, str]]:
        found = json.loads(ok(inproc, repo, "status", "--json").out)["claims"]
        return [(c["id"], c["text"], c["state"], c["observed"]) for c in found]

    before = claims()
    (kept,) = (repo / ".git" / "continuity" / "cache" / "claims").iterdir()
    data = json.loads(kept.read_text())
    data["rows"][0][0] = [1]
    kept.write_text(json.dumps(data))
    assert claims() == before


def test_status_dereferences_a_claim_changed_behind_its_caches(repo: Path, inproc: Run) -> None:
    """Status reads the claims folder kept by its tree id and what each tree holds kept by
    the tree's id: a claim's handle changed by hand to another path, or to the same path in
    another commit, is dereferenced as it is now."""
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "rm", "-q", "README")
    second = commit(repo, "second", {"NOTES": "later\n"})
    ok(inproc, repo, "init")
    claim = made_id(ok(inproc, repo, "claim", "add", "the readme is there", "--check", f"file:README@{first}"), "c")

    def claim_lines() -> list[str]:
        out = ok(inproc, repo, "status").out.splitlines()
        start = next(i for i, line in enumerate(out) if line.startswith("Claims ("))
        return out[start : start + 4]

    for _ in range(2):  # the second run is served from the caches
        assert claim_lines() == [
            "Claims (1 verified; states derived now, not stored)",
            f"  verified  {claim}  the readme is there",
            f"            file:README@{first[:12]}…",
            f"            README exists in {first[:7]}",
        ]
    cache = repo / ".git" / "continuity" / "cache"
    assert any((cache / "claims").iterdir()) and (cache / "tree-paths").exists()
    path = f".continuity/claims/{claim}.json"
    data = json.loads(git(repo, "show", f"refs/continuity/main:{path}"))
    write_state(repo, {path: json.dumps({**data, "handle": f"file:NOTES@{first}"}) + "\n"})
    assert claim_lines()[1:] == [
        f"  contradicted  {claim}  the readme is there",
        f"                file:NOTES@{first[:12]}…",
        f"                NOTES is not in {first[:7]}",
    ]
    write_state(repo, {path: json.dumps({**data, "handle": f"file:README@{second}"}) + "\n"})
    assert claim_lines()[1:] == [
        f"  contradicted  {claim}  the readme is there",
        f"                file:README@{second[:12]}…",
        f"                README is not in {second[:7]}",
    ]


# -- files under .git/continuity/: whole or not at all ---------------------------------------

FILE_WRITER = """
import json, os, sys, time
from pathlib import Path
from git_continuity import repo as git
from git_continuity.clone import session
from git_continuity.trust import approvals as trust
which, tag, go, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
opened = git.open_repo(".")
pad = tag * 100_000  # large enough that one write takes several system calls
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(rounds):
    if which == "session":
        session.save(opened.common_dir, session.Session(f"s-{tag}", pad, "h", "main"))
    else:
        trust.save(opened, {"c": {"command": "c", "by": tag, "pad": pad}})
"""

FILE_READER = """
import json, os, sys
target, done = sys.argv[1], sys.argv[2]
torn = 0
while not os.path.exists(done):
    try:
        text = open(target).read()
    except FileNotFoundError:
        continue
    try:
        json.loads(text)
    except ValueError:
        torn += 1
sys.exit(f"{torn} torn reads" if torn else 0)
"""


@pytest.mark.parametrize("which", ["session", "trust"])
def test_writers_of_one_file_at_once_never_fail_nor_tear_it(repo: Path, tmp_path: Path, which: str) -> None:
    target = repo / ".git" / "continuity" / "session.json" if which == "session" else approvals(repo)
    name = target.name
    go, done = tmp_path / "go", tmp_path / "done"
    reader = subprocess.Popen(
        [sys.executable, "-c", FILE_READER, str(target), str(done)], stderr=subprocess.PIPE, text=True
    )
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", FILE_WRITER, which, tag, str(go), "40"], cwd=repo, stderr=subprocess.PIPE, text=True
        )
        for tag in "ABCD"
    ]
    go.touch()
    errors = [w.communicate(timeout=120)[1] for w in writers]
    done.touch()
    _, torn = reader.communicate(timeout=60)
    assert [w.returncode for w in writers] == [0, 0, 0, 0], errors
    assert (reader.returncode, torn) == (0, "")
    data = json.loads(target.read_text())
    tag = data["started_at"][0] if which == "session" else data["commands"][0]["by"]
    assert tag in "ABCD" and (data["started_at"] if which == "session" else data["commands"][0]["pad"]) == tag * 100_000
    assert sorted(p.name for p in target.parent.iterdir()) == [name]


def test_a_ref_that_keeps_moving_is_given_up_on_naming_it(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    opened = gitrepo.open_repo(repo)
    seen: list[str | None] = []

    def step(tip: gitrepo.Oid | None) -> None:
        seen.append(tip)
        raise gitrepo.RefMoved("refs/continuity/main")

    with pytest.raises(UserError) as raised:
        gitrepo.update_ref(opened, "refs/continuity/main", step, gave_up="nothing was written.", tries=3)
    assert str(raised.value) == "refs/continuity/main kept moving under 3 tries; nothing was written."
    assert seen == [git(repo, "rev-parse", "refs/continuity/main")] * 3


# -- reading: one immutable state, each problem once, no network -----------------------------


def test_a_snapshot_is_immutable_and_names_each_bad_file_once(repo: Path, inproc: Run) -> None:
    ok(inproc, repo, "init")
    write_state(repo, {".continuity/claims/c-222222.json": "{not json\n"})
    snap = store.snapshot(gitrepo.open_repo(repo), "main")
    assert store.read_claims(snap) == {}
    assert store.read_claims(snap) == {}
    problem = (
        ".continuity/claims/c-222222.json: not valid JSON: Expecting property name enclosed in double quotes:"
        " line 1 column 2 (char 1)"
    )
    assert store.all_problems(snap) == [problem]
    assert store.all_problems(snap) == [problem]
    assert list(snap.problems) == [problem]
    with pytest.raises(AttributeError):
        snap.commit = None  # type: ignore[misc]


def test_a_missing_state_is_refused_without_asking_a_remote(repo: Path, tmp_path: Path, inproc: Run) -> None:
    git(repo, "remote", "add", "origin", str(tmp_path / "gone.git"))
    missing = "no continuity state for stream 'main' here (refs/continuity/main does not exist)."
    snap = store.snapshot(gitrepo.open_repo(repo), "main")
    with pytest.raises(UserError) as raised:
        store.require_state(snap)
    assert str(raised.value) == f"{missing}\nStart one with: git continuity init"
    # The command says whether a remote has it: that is where the network is asked.
    ran = inproc(repo, "status")
    assert ran.code == 2
    assert ran.err.startswith(
        f"git-continuity: error: {missing}\nStart one with: git continuity init\n"
        "(Could not ask origin whether it has state: "
    ), ran.err
