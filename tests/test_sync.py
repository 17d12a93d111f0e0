"""push, pull and sync through plain path remotes and a git daemon: what each says, what
moves, and the bad input of issue 4 (nothing written, the message names what and where)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Ran, Run, commit, git, state_refs
from gitserver import Server, git_daemon

from git_continuity import repo as gitrepo
from git_continuity import store
from git_continuity.model import Claim


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("server")
    (root / "repos").mkdir()
    with git_daemon(root / "repos", root / "home") as running:
        yield running


def clones(tmp_path: Path, url: str, *names: str) -> list[Path]:
    """Clones of a remote with one commit on main (pushed first if the remote is empty)."""
    if not git(tmp_path, "ls-remote", url, "refs/heads/main"):
        seed = tmp_path / "seed"
        git(tmp_path, "init", "-q", str(seed))
        commit(seed, "first", {"README": "hello\n"})
        git(seed, "push", "-q", url, "main")
    for name in names:
        git(tmp_path, "clone", "-q", url, str(tmp_path / name))
    return [tmp_path / n for n in names]


def shorts(text: str) -> str:
    return re.sub(r"\b[0-9a-f]{7}\b", "<c>", text)


def test_three_clones_through_a_git_daemon_converge(server: Server, tmp_path: Path, inproc: Run) -> None:
    _, url = server.bare("three")
    a, b, c = clones(tmp_path, url, "a", "b", "c")
    assert inproc(a, "init").code == 0
    assert shorts(inproc(a, "push").out) == "To origin:\n  main: created on origin (<c>)\n"
    for where in (b, c):
        assert shorts(inproc(where, "pull").out) == "From origin:\n  main: new here (<c>)\n"
    for where, text in ((a, "from a"), (b, "from b"), (c, "from c")):
        assert inproc(where, "journal", "add", text).code == 0
    assert shorts(inproc(a, "sync").out) == (
        "From origin:\n  main: up to date (1 change here to push)\nTo origin:\n  main: pushed <c>..<c>\n"
    )
    assert shorts(inproc(b, "sync").out) == (
        "From origin:\n  main: merged <c> and <c> into <c>\nTo origin:\n  main: pushed <c>..<c>\n"
    )
    assert inproc(c, "sync").code == 0
    for where in (a, b):
        assert shorts(inproc(where, "pull").out) == "From origin:\n  main: fast-forward <c>..<c>\n"
    assert state_refs(a) == state_refs(b) == state_refs(c)
    journal = json.loads(inproc(c, "journal", "--json").out)["entries"]
    assert sorted(e["text"] for e in journal) == ["from a", "from b", "from c"]
    assert git(a, "ls-remote", url, "refs/continuity/*").split()[0] == git(a, "rev-parse", "refs/continuity/main")


def test_a_remote_without_state_is_named_and_push_creates_it(remote_and_clone: tuple[Path, Path], inproc: Run) -> None:
    _, work = remote_and_clone
    nothing = inproc(work, "pull")
    assert (nothing.code, nothing.out, nothing.err) == (0, "origin has no continuity state yet: nothing to pull.\n", "")
    assert inproc(work, "init", "--local").code == 0
    told = inproc(work, "pull")
    assert told.out == (
        "origin has no continuity state yet: nothing to pull.\nPublish this clone's with: git continuity push origin\n"
    )
    assert inproc(work, "push").code == 0
    # Nothing left to push: said so, and nothing moves.
    before = state_refs(work)
    assert inproc(work, "push").out == "To origin:\n  main: up to date\n"
    assert state_refs(work) == before


def test_an_unreachable_remote_is_a_clear_error_and_nothing_changes(tmp_path: Path, repo: Path, inproc: Run) -> None:
    assert inproc(repo, "init", "--local").code == 0
    assert inproc(repo, "journal", "add", "local work").code == 0
    git(repo, "remote", "add", "far", str(tmp_path / "no-such-remote.git"))
    before = state_refs(repo)
    for command, what in (("pull", "reach"), ("push", "push to"), ("sync", "reach")):
        failed = inproc(repo, command, "far")
        assert (failed.code, failed.out) == (2, "")
        assert failed.err.startswith(f"git-continuity: error: cannot {what} far ({tmp_path / 'no-such-remote.git'}):\n")
        assert failed.err.endswith("Nothing was changed here; the local state is untouched.\n")
        assert state_refs(repo) == before
    assert git(repo, "for-each-ref", "refs/continuity-remotes/", "refs/notes/") == ""
    unknown = inproc(repo, "pull", "nowhere")
    assert (unknown.code, unknown.err) == (
        2,
        "git-continuity: error: no remote named 'nowhere' here (remotes: far).\n"
        "Add it with: git remote add nowhere URL\n",
    )
    for url in ("https://127.0.0.1:1/x.git", "git@example.invalid:x.git", str(tmp_path / "x.git")):
        given = inproc(repo, "pull", url)
        assert (given.code, given.err) == (
            2,
            f"git-continuity: error: {url!r} is a URL or a path; give the name of a remote (remotes: far).\n"
            f"Add one with: git remote add NAME {url}, then run this again with NAME\n",
        )
    assert state_refs(repo) == before


def test_a_remote_git_daemon_that_is_down(tmp_path: Path, repo: Path, inproc: Run) -> None:
    assert inproc(repo, "init", "--local").code == 0
    # A port held bound but never listening refuses every connection, and no other process
    # (a daemon of a test running beside this one) can take it over meanwhile.
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        url = f"git://127.0.0.1:{held.getsockname()[1]}/"
        git(repo, "remote", "add", "origin", f"{url}x.git")
        failed = inproc(repo, "sync")
    assert failed.code == 2
    assert failed.err.startswith(f"git-continuity: error: cannot reach origin ({url}x.git):\n  fatal: unable to")


def write_bad_claim(repo: Path) -> str:
    """A state commit whose claim breaks the schema, as a broken or hostile clone would push."""
    r = gitrepo.open_repo(repo)
    snap = store.snapshot(r, "main")
    good = Claim("c-bbbbbb", "fine", "2026-11-30T10:00:00.000Z", "Ada <ada@example.com>", "host")
    bad = json.dumps({"id": "c-aaaaaa", "text": "", "added_at": "yesterday", "added_by": "x", "host": "h"}, indent=2)
    tree = gitrepo.write_tree(
        r,
        snap.tree,
        {
            ".continuity/claims/c-aaaaaa.json": bad.encode(),
            ".continuity/claims/c-bbbbbb.json": store.entry_bytes(good),
        },
    )
    new = gitrepo.write_commit(r, tree, [snap.commit] if snap.commit else [], "a broken clone\n")
    gitrepo.compare_and_swap(r, "refs/continuity/main", new, snap.commit, "test: broken state")
    return new


def test_remote_entries_that_fail_the_schema_are_refused_by_name(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    bare, work = remote_and_clone
    mate = clones(tmp_path, str(bare), "mate")[0]
    assert inproc(work, "init").code == 0
    assert inproc(work, "push").code == 0
    assert inproc(mate, "pull").code == 0
    assert inproc(mate, "journal", "add", "mine").code == 0
    bad = write_bad_claim(work)
    git(work, "push", "-q", "origin", "refs/continuity/main")  # plain git pushes whatever it is given
    before = state_refs(mate)
    refused = inproc(mate, "sync")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: the state fetched from origin is malformed; nothing was merged, "
        "the local state is untouched:\n"
        f"  origin's main ({bad[:7]}): .continuity/claims/c-aaaaaa.json line 4: added_at: "
        "'yesterday' is not in the expected form (a UTC time such as 2026-12-01T14:05:00Z)\n"
        f"  origin's main ({bad[:7]}): .continuity/claims/c-aaaaaa.json line 3: text: '' should be non-empty\n"
        "It is kept in refs/continuity-remotes/origin/ for a look (git log -p REF).\n"
        "Repair it: git continuity doctor --fix (moves the malformed files aside in a new commit on top),"
        " then git continuity push origin (a fast-forward).\n"
    )
    assert state_refs(mate) == before
    assert git(mate, "rev-parse", "refs/continuity-remotes/origin/main") == bad


def test_a_push_the_server_refuses_quotes_the_server(server: Server, tmp_path: Path, inproc: Run) -> None:
    bare, url = server.bare("guarded")
    (work,) = clones(tmp_path, url, "work")
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'state pushes are closed for maintenance until 18:00'\nexit 1\n")
    hook.chmod(0o755)
    assert inproc(work, "init").code == 0
    before = state_refs(work)
    refused = inproc(work, "push")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: origin refused the push of the state:\n"
        "  remote: state pushes are closed for maintenance until 18:00        \n"
        "  refs/continuity/main: [remote rejected] (pre-receive hook declined)\n"
        "Nothing here is lost: the local state is kept as it is, and the next sync sends it all.\n"
        "If origin takes only branches (a sandbox's proxy, some forges), send the state as branches:\n"
        "  git config continuity.origin.transport branches\n"
    )
    assert state_refs(work) == before
    assert git(work, "ls-remote", url, "refs/continuity/*") == ""


def test_two_clones_that_both_ran_init_merge_losing_nothing(
    remote_and_clone: tuple[Path, Path],
    tmp_path: Path,
    inproc: Run,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bare, work = remote_and_clone
    mate = clones(tmp_path, str(bare), "mate")[0]
    for where, who in ((work, "work"), (mate, "mate")):
        # Two people: their init commits differ even when made in the same second.
        monkeypatch.setenv("GIT_AUTHOR_NAME", who)
        assert inproc(where, "init").code == 0  # neither has pushed: both start a history
        assert inproc(where, "journal", "add", f"{who}'s entry").code == 0
        assert inproc(where, "claim", "add", f"{who}'s claim").code == 0
    assert inproc(work, "push").code == 0
    merged = inproc(mate, "sync")
    assert shorts(merged.out) == (
        "From origin:\n  main: merged <c> and <c> into <c> (unrelated histories: both kept)\n"
        "To origin:\n  main: pushed <c>..<c>\n"
    )
    assert inproc(work, "pull").code == 0
    assert state_refs(work) == state_refs(mate)
    status = json.loads(inproc(work, "status", "--json").out)
    assert sorted(c["text"] for c in status["claims"]) == ["mate's claim", "work's claim"]
    assert sorted(e["text"] for e in status["journal"]) == ["mate's entry", "work's entry"]
    assert status["conflicts"] == []


def clone_id(where: Path) -> str:
    return str(json.loads((where / ".git" / "continuity" / "clone.json").read_text())["id"])


def test_a_push_race_sends_the_state_to_the_clones_lane_and_the_next_sync_folds_it_in(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    bare, work = remote_and_clone
    mate = clones(tmp_path, str(bare), "mate")[0]
    assert inproc(work, "init").code == 0
    assert inproc(work, "push").code == 0
    assert inproc(mate, "pull").code == 0
    assert inproc(work, "journal", "add", "work's").code == 0
    assert inproc(mate, "journal", "add", "mate's").code == 0
    assert inproc(mate, "push").code == 0
    # work still believes origin is where it last saw it: the shared ref refuses its push,
    # and the state goes to work's own lane at once, which no other clone writes.
    raced = inproc(work, "push", "--json")
    assert (raced.code, raced.err) == (0, "")
    lane = f"refs/continuity-lanes/{clone_id(work)}/main"
    tip = git(work, "rev-parse", "refs/continuity/main")
    report = json.loads(raced.out)
    assert (report["landed"], report["lanes"], report["retries"], report["refused"]) == ("lane", [lane], 0, [])
    assert report["pushed"] == [
        {
            "name": "main",
            "what": f"sent to this clone's lane ({tip[:7]}): others pushed first\n"
            f"    {lane}\n    (any clone's next sync folds it in)",
            "meanwhile": False,
        }
    ]
    assert git(work, "ls-remote", str(bare), lane).split()[0] == tip
    # work's change has reached the remote (on its lane): nothing waits in its outbox.
    assert [b["changes"] for b in json.loads(inproc(work, "status", "--json").out)["outbox"]] == [0]
    # mate's next sync folds the lane into the shared ref; work's next sync deletes its lane.
    folded = inproc(mate, "sync")
    assert folded.code == 0 and shorts(folded.out) == (
        "From origin:\n  main: merged <c> and <c> into <c>\nTo origin:\n  main: pushed <c>..<c>\n"
    )
    assert sorted(e["text"] for e in json.loads(inproc(mate, "journal", "--json").out)["entries"]) == [
        "mate's",
        "work's",
    ]
    assert inproc(work, "sync").code == 0
    assert git(work, "ls-remote", str(bare), "refs/continuity-lanes/*") == ""
    assert state_refs(work) == state_refs(mate)


def test_pushes_at_the_same_moment_both_land(remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run) -> None:
    bare, work = remote_and_clone
    mates = clones(tmp_path, str(bare), "m1", "m2", "m3")
    assert inproc(work, "init").code == 0
    assert inproc(work, "push").code == 0
    for where in mates:
        assert inproc(where, "pull").code == 0
        assert inproc(where, "journal", "add", f"from {where.name}").code == 0
    running = [
        subprocess.Popen(
            [sys.executable, "-m", "git_continuity", "push"],
            cwd=w,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in mates
    ]
    results = [Ran(p.wait(), *p.communicate()) for p in running]  # communicate after wait: outputs are small
    assert [r.code for r in results] == [0, 0, 0], results
    assert inproc(work, "pull").code == 0
    journal = json.loads(inproc(work, "journal", "--json").out)["entries"]
    assert sorted(e["text"] for e in journal) == ["from m1", "from m2", "from m3"]


def test_init_offers_fetch_refspecs_and_status_reads_them_without_the_network(
    remote_and_clone: tuple[Path, Path],
    tmp_path: Path,
    inproc: Run,
) -> None:
    bare, work = remote_and_clone
    started = inproc(work, "init")
    assert started.out.endswith(
        "A plain git fetch does not bring the state. To make it, run:\n"
        "  git continuity init --fetch-refspecs\n"
        "(the same as: git config --add remote.origin.fetch '+refs/continuity/*:refs/continuity-remotes/origin/*';"
        " git config --add remote.origin.fetch '+refs/continuity-lanes/*:refs/continuity-remote-lanes/origin/*')\n"
    )
    added = inproc(work, "init", "--fetch-refspecs")
    assert shorts(added.out) == (
        "Stream 'main' already has state: refs/continuity/main at <c>.\n\n"
        "Added +refs/continuity/*:refs/continuity-remotes/origin/*"
        " +refs/continuity-lanes/*:refs/continuity-remote-lanes/origin/* in remote.origin.fetch.\n"
        "A plain git fetch now brings origin's state into refs/continuity-remotes/origin/, and status\n"
        "says how it stands. No push refspec: git push still pushes your branch; git continuity push\n"
        "publishes the state (and sync does both ways).\n"
    )
    assert git(work, "config", "--get-all", "remote.origin.fetch").splitlines() == [
        "+refs/heads/*:refs/remotes/origin/*",
        "+refs/continuity/*:refs/continuity-remotes/origin/*",
        "+refs/continuity-lanes/*:refs/continuity-remote-lanes/origin/*",
    ]
    assert git(work, "config", "--get-all", "remote.origin.push", check=False) == ""
    again = inproc(work, "init", "--fetch-refspecs").out
    assert (
        again.splitlines()[2] == "Already there: +refs/continuity/*:refs/continuity-remotes/origin/*"
        " +refs/continuity-lanes/*:refs/continuity-remote-lanes/origin/* in remote.origin.fetch."
    )
    assert len(git(work, "config", "--get-all", "remote.origin.fetch").splitlines()) == 3
    assert inproc(work, "push").code == 0

    def standing() -> tuple[str, list[dict[str, object]]]:
        text = inproc(work, "status").out.splitlines()[1]
        data = json.loads(inproc(work, "status", "--json").out)["remotes"]
        return text, [{k: v for k, v in d.items() if k in ("relation", "ahead", "behind")} for d in data]

    assert standing() == (
        "Sync       origin: in step (as of the last fetch)",
        [{"relation": "same", "ahead": 0, "behind": 0}],
    )
    assert inproc(work, "journal", "add", "here").code == 0
    assert standing() == (
        "Sync       origin: 1 change here not on origin yet (as of the last fetch): git continuity push",
        [{"relation": "ahead", "ahead": 1, "behind": 0}],
    )
    mate = clones(tmp_path, str(bare), "mate")[0]
    assert inproc(mate, "pull").code == 0
    assert inproc(mate, "journal", "add", "there").code == 0
    assert inproc(mate, "journal", "add", "there again").code == 0
    assert inproc(mate, "push").code == 0
    git(work, "fetch", "-q")  # a plain fetch, thanks to the refspec
    assert standing() == (
        "Sync       origin: diverged, 1 change here and 2 changes there (as of the last fetch): git continuity sync",
        [{"relation": "diverged", "ahead": 1, "behind": 2}],
    )
    assert inproc(work, "sync").code == 0
    assert inproc(mate, "pull").code == 0
    git(mate, "fetch", "-q")
    assert git(mate, "branch", "-a").splitlines() == [
        "* main",
        "  remotes/origin/HEAD -> origin/main",
        "  remotes/origin/main",
    ]


def test_init_in_a_clone_takes_the_remote_state_in(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    bare, work = remote_and_clone
    assert inproc(work, "init").code == 0
    assert inproc(work, "objective", "set", "Ship it", "--why", "now").code == 0
    assert inproc(work, "push").code == 0
    mate = clones(tmp_path, str(bare), "mate")[0]
    taken = inproc(mate, "init", "--no-fetch-refspecs")
    assert shorts(taken.out) == (
        "origin already has state for stream 'main': took it in instead of starting an unrelated history.\n"
        "From origin:\n  main: new here (<c>)\n\nNext:\n  git continuity status\n"
    )
    assert state_refs(mate) == state_refs(work)
    # A clone that has only fetched (not taken in) the state is told where it is.
    other = clones(tmp_path, str(bare), "other")[0]
    git(other, "fetch", "-q", "origin", "+refs/continuity/*:refs/continuity-remotes/origin/*")
    told = inproc(other, "journal", "add", "x")
    assert (told.code, told.err) == (
        2,
        "git-continuity: error: no continuity state for stream 'main' here (refs/continuity/main does not exist).\n"
        "origin has state for stream 'main' (fetched into refs/continuity-remotes/origin/main), "
        "not yet taken in here.\n"
        "Take it with: git continuity pull origin\n",
    )


def test_conflicts_are_listed_and_dismissed_once_looked_at(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    bare, work = remote_and_clone
    mate = clones(tmp_path, str(bare), "mate")[0]
    assert inproc(work, "init").code == 0
    assert inproc(work, "push").code == 0
    assert inproc(mate, "pull").code == 0
    assert inproc(work, "next", "announce the release").code == 0
    assert inproc(mate, "next", "write the release notes").code == 0
    assert inproc(work, "push").code == 0
    assert inproc(mate, "sync").code == 0
    listed = json.loads(inproc(mate, "conflict", "list", "--json").out)
    (record,) = listed["conflicts"]
    assert listed == {"stream": "main", "conflicts": [record], "problems": []}
    assert json.loads(inproc(mate, "status", "--json").out)["conflicts"] == [record]
    assert (record["key"], record["what"]) == ("next_action", "edited on both sides")
    assert {record["kept"], record["lost"]} == {"announce the release", "write the release notes"}
    kept, lost = record["kept_from"], record["lost_from"]
    assert inproc(mate, "conflict", "list").out == (
        f"  {record['id']}  the next action: edited on both sides\n"
        f'            kept   "{record["kept"]}"  ({kept["at"][:10]} {kept["at"][11:19]}, {kept["commit"][:7]})\n'
        f'            other  "{record["lost"]}"  ({lost["at"][:10]} {lost["at"][11:19]}, {lost["commit"][:7]})\n'
    )
    assert f"Next       {record['kept']}\n" in inproc(mate, "status").out

    before = state_refs(mate)
    unknown = inproc(mate, "conflict", "dismiss", "x-2222zz")
    assert (unknown.code, unknown.err) == (
        2,
        f"git-continuity: error: no conflict x-2222zz in stream 'main' (conflicts: {record['id']})\n",
    )
    assert state_refs(mate) == before
    assert inproc(mate, "conflict", "dismiss", record["id"]).out == f"Dismissed {record['id']}.\n"
    assert inproc(mate, "conflict", "list").out == "No conflicts.\n"
    assert "Conflicts" not in inproc(mate, "status").out


@pytest.mark.parametrize("command", ["push", "sync"])
def test_a_malformed_local_state_never_leaves_the_machine(
    remote_and_clone: tuple[Path, Path], inproc: Run, command: str
) -> None:
    bare, work = remote_and_clone
    assert inproc(work, "init").code == 0
    assert inproc(work, "push").code == 0
    published = git(bare, "rev-parse", "refs/continuity/main")
    bad = write_bad_claim(work)
    refused = inproc(work, command)
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: the local state is malformed; nothing was sent to origin:\n"
        f"  main ({bad[:7]}): .continuity/claims/c-aaaaaa.json line 4: added_at: "
        "'yesterday' is not in the expected form (a UTC time such as 2026-12-01T14:05:00Z)\n"
        f"  main ({bad[:7]}): .continuity/claims/c-aaaaaa.json line 3: text: '' should be non-empty\n"
        "Put the stream back on its last good change (git continuity log lists them):"
        " git update-ref refs/continuity/<stream> <commit>; a bad packet is repaired with git continuity edit."
        " Then push again.\n"
    )
    assert git(bare, "rev-parse", "refs/continuity/main") == published
    assert git(work, "rev-parse", "refs/continuity/main") == bad
