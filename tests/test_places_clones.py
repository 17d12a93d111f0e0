"""Places on two clones of one bare remote, in folders of different names (alice on one
machine, bob on the other): a home or a guarded place set in one clone is the checkout on
the same branch in the other, whatever its folder is called; a clone with no checkout on that
branch is told so without blame; an old record by folder name still reads and migrates (#27)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, cont, git, kept_in

from git_continuity import repo as gitrepo
from git_continuity import store
from git_continuity.store import places

Run = Callable[..., Ran]
OVERRIDE = (
    "To commit here on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git commit ... "
    "(or git -c continuity.allowPlace=true commit ...).\n"
)
NOWHERE = (
    "Work happens in the home: the checkout of branch main; no checkout here has main checked out"
    " (git switch main, or git worktree add DIR main)."
)


def run(cwd: Path, *args: str) -> Ran:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True)
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def clones(tmp_path: Path, inproc: Run) -> tuple[Path, Path]:
    """(alice, bob): two clones of origin.git, each with the state and the hooks, both on main."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    alice = tmp_path / "one" / "alice"
    git(tmp_path, "clone", "-q", str(origin), str(alice))
    git(alice, "commit", "-q", "--allow-empty", "-m", "first")
    git(alice, "push", "-q", "origin", "HEAD:main")
    assert inproc(alice, "init").code == 0
    assert inproc(alice, "push").code == 0
    bob = tmp_path / "two" / "bob"
    git(tmp_path, "clone", "-q", str(origin), str(bob))
    assert inproc(bob, "pull").code == 0
    for clone in (alice, bob):
        assert inproc(clone, "hooks", "install").code == 0
    return alice, bob


def lead(where: Path) -> str:
    """The paragraph status leads with."""
    return cont(where, "status").out.split("\n\n")[0]


def test_a_home_set_in_one_clone_is_the_checkout_on_its_branch_in_the_other(
    clones: tuple[Path, Path], inproc: Run
) -> None:
    alice, bob = clones
    said = inproc(alice, "place", "set", "alice", "home", "--why", "the implementation lives here")
    assert (said.code, said.out, said.err) == (
        0,
        "the checkout of branch main is now home: work happens here\n"
        "  why  the implementation lives here\n"
        "  on every clone, the checkout on branch main (here: the main checkout)\n",
        "",
    )
    assert inproc(alice, "push").code == 0
    assert inproc(bob, "pull").code == 0

    # bob, on main, is the home: nothing leads, and nothing names alice's folder.
    status = cont(bob, "status")
    assert status.code == 0 and status.out.startswith("stream main  (")
    assert "alice" not in status.out
    assert json.loads(cont(bob, "status", "--json").out)["place"] == {
        "worktree": "bob",
        "branch": "main",
        "role": "home",
        "home": {"kind": "checkout", "name": "main"},
        "lead": None,
    }
    listed = inproc(bob, "place", "list")
    assert listed.out.splitlines()[0] == f"* home         checkout of branch main  {bob}"
    rows = json.loads(inproc(bob, "place", "list", "--json").out)["places"]
    assert [(p["kind"], p["name"], p["tree"], p["found"], p["path"], p["here"]) for p in rows] == [
        ("checkout", "main", "main", True, str(bob), True)
    ]

    # bob on another branch: told once, in plain words, that no checkout here has the branch.
    git(bob, "switch", "-q", "-c", "feature")
    text = f"You are in worktree bob (branch feature), which is not the home. {NOWHERE}"
    status = cont(bob, "status")
    assert status.out.split("\n\n")[0] == text
    assert (status.out.count("the checkout of branch main"), "alice" in status.out) == (1, False)
    assert json.loads(cont(bob, "status", "--json").out)["place"] == {
        "worktree": "bob",
        "branch": "feature",
        "role": None,
        "home": {"kind": "checkout", "name": "main"},
        "lead": text,
    }
    assert cont(bob, "orient").out.splitlines()[1] == text
    rows = json.loads(inproc(bob, "place", "list", "--json").out)["places"]
    assert [(p["found"], p["path"], p["here"]) for p in rows] == [(False, None, False)]

    # A linked worktree on main in bob's clone is the home; the main checkout points at it.
    linked = bob.parent / "bob-main"
    git(bob, "worktree", "add", "-q", str(linked), "main")
    assert cont(linked, "status").out.startswith("stream main  (")
    assert json.loads(cont(linked, "status", "--json").out)["place"] == {
        "worktree": "bob-main",
        "branch": "main",
        "role": "home",
        "home": {"kind": "checkout", "name": "main"},
        "lead": None,
    }
    assert lead(bob) == (
        "You are in worktree bob (branch feature), which is not the home. "
        f"Work happens in the home: the checkout of branch main, in {linked}."
    )


def test_the_guards_match_by_branch_on_the_other_clone(clones: tuple[Path, Path], inproc: Run) -> None:
    alice, bob = clones
    git(alice, "worktree", "add", "-q", "-b", "keep", "../alice-keep")
    git(alice, "worktree", "add", "-q", "-b", "old", "../alice-old")
    git(alice, "push", "-q", "origin", "keep", "old")
    assert inproc(alice, "place", "set", "alice", "home", "--why", "the implementation").code == 0
    assert inproc(alice, "place", "set", "alice-keep", "preservation", "--why", "what shipped").code == 0
    assert inproc(alice, "place", "set", "alice-old", "donor", "--why", "the old parser").code == 0
    assert inproc(alice, "push").code == 0
    assert inproc(bob, "pull").code == 0

    # bob keeps the preserved branch in a worktree of another name: its commits are refused.
    git(bob, "fetch", "-q", "origin")
    kept = bob.parent / "shipped"
    git(bob, "worktree", "add", "-q", "-b", "keep", str(kept), "origin/keep")
    before = git(kept, "rev-parse", "HEAD")
    refused = run(kept, "git", "commit", "-q", "--allow-empty", "-m", "touch it")
    assert (refused.code, refused.err) == (
        1,
        "git-continuity: this is a preservation checkout (branch keep): it never moves, so commit nothing on it"
        f" and push nothing over it. Work happens in the home: the checkout of branch main, in {bob}.\n"
        + OVERRIDE
        + kept_in(bob / ".git" / "worktrees" / "shipped"),
    )
    assert git(kept, "rev-parse", "HEAD") == before

    # ...and so is a push that moves it on the remote.
    git(bob, "commit", "-q", "--allow-empty", "-m", "work")
    was = git(bob.parent.parent / "origin.git", "rev-parse", "keep")
    pushed = run(bob, "git", "push", "-q", "origin", "main:keep")
    assert (pushed.code, pushed.err.splitlines()[:2]) == (
        1,
        [
            "git-continuity: this push moves keep on origin, a preservation branch: it never moves, so commit"
            " nothing on it and push nothing over it. "
            f"Work happens in the home: the checkout of branch main, in {bob}.",
            "To move it on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git push ... "
            "(or git -c continuity.allowPlace=true push ...).",
        ],
    )
    assert git(bob.parent.parent / "origin.git", "rev-parse", "keep") == was
    assert run(bob, "git", "push", "-q", "origin", "main").code == 0  # the home's branch moves freely

    # The donor is the main checkout here once it is on branch old; no checkout here is on main.
    git(bob, "switch", "-q", "old")
    refused = run(bob, "git", "commit", "-q", "--allow-empty", "-m", "edit the donor")
    assert (refused.code, refused.err) == (
        1,
        f"git-continuity: this is a donor checkout (branch old): copy from it, commit nothing. {NOWHERE}\n"
        + OVERRIDE
        + kept_in(bob / ".git"),
    )
    assert lead(bob) == f"You are in a donor checkout (branch old): copy from it, commit nothing. {NOWHERE}"


def _write_old_record(where: Path, name: str) -> None:
    """A home as place set wrote it before checkouts were matched by branch: by folder name."""
    repo = gitrepo.open_repo(where)
    pid = places.place_id("worktree", name)
    old = {
        "id": pid,
        "kind": "worktree",
        "name": name,
        "role": "home",
        "why": "the implementation lives here",
        "set_at": "2026-11-02T10:00:00Z",
        "set_by": "Ada Agent <ada@example.com>",
        "host": "laptop",
    }
    data = (json.dumps(old, indent=2, sort_keys=True) + "\n").encode()
    store.update(
        repo, "main", lambda snap: store.Change(f"place set {pid}: worktree {name} is home", {places.path(pid): data})
    )


def test_an_old_record_by_folder_name_still_reads_and_is_migrated(clones: tuple[Path, Path], inproc: Run) -> None:
    alice, bob = clones
    _write_old_record(alice, "alice")
    # Where the folder is, it reads as before: alice is the home, by its name.
    assert cont(alice, "status").out.startswith("stream main  (")
    side = alice.parent / "alice-side"
    git(alice, "worktree", "add", "-q", "-b", "side", str(side))
    assert lead(side) == (
        "You are in worktree alice-side (branch side), which is not the home. "
        f"Work happens in the home: worktree alice (branch main), in {alice}."
    )
    assert inproc(alice, "push").code == 0
    assert inproc(bob, "pull").code == 0
    # Elsewhere it says what the record is, without asking for a folder this clone never had.
    assert lead(bob) == (
        "You are in worktree bob (branch main), which is not the home. Work happens in the home: worktree alice,"
        " a folder name recorded on another clone; no checkout here has that name (on that clone, git continuity"
        " place set alice home --why TEXT records it by its branch)."
    )
    rows = json.loads(inproc(bob, "place", "list", "--json").out)["places"]
    assert [(p["kind"], p["name"], p["found"], p["here"]) for p in rows] == [("worktree", "alice", False, False)]

    # Set again on that clone, the home is recorded by its branch and the old record goes.
    said = inproc(alice, "place", "set", "alice", "home", "--why", "the implementation lives here")
    assert (said.code, said.out.splitlines()[-1]) == (0, "  replaces worktree alice, recorded by its folder name")
    assert inproc(alice, "push").code == 0
    assert inproc(bob, "pull").code == 0
    rows = json.loads(inproc(bob, "place", "list", "--json").out)["places"]
    assert [(p["kind"], p["name"], p["found"], p["here"]) for p in rows] == [("checkout", "main", True, True)]
    assert cont(bob, "status").out.startswith("stream main  (")


def test_the_same_home_set_on_both_clones_is_one_record(clones: tuple[Path, Path], inproc: Run) -> None:
    """Each clone names its own folder, before they sync: the record is the same (the checkout
    of branch main), so the merge keeps one home, not two."""
    alice, bob = clones
    assert inproc(alice, "place", "set", "alice", "home", "--why", "the implementation lives here").code == 0
    assert inproc(bob, "place", "set", "bob", "home", "--why", "the implementation lives here").code == 0
    assert inproc(alice, "push").code == 0
    assert inproc(bob, "sync").code == 0
    for clone in (alice, bob):
        if clone is alice:
            assert inproc(alice, "pull").code == 0
        rows = json.loads(inproc(clone, "place", "list", "--json").out)["places"]
        assert [(p["kind"], p["name"], p["role"], p["path"], p["here"]) for p in rows] == [
            ("checkout", "main", "home", str(clone), True)
        ]
        assert cont(clone, "status").out.startswith("stream main  (")


def test_a_branch_and_the_checkout_on_it_take_one_role(clones: tuple[Path, Path], inproc: Run) -> None:
    """The checkout of branch main is the home: branch main cannot also be a donor (commits in
    the home would be refused), and the reverse; each refusal names the role there and how to
    clear it, and writes nothing."""
    alice, bob = clones
    assert inproc(alice, "place", "set", "alice", "home", "--why", "the implementation lives here").code == 0
    before = state_refs(alice)
    said = inproc(alice, "place", "set", "refs/heads/main", "donor", "--why", "x")
    assert (said.code, said.out, said.err) == (
        2,
        "",
        "git-continuity: error: branch main cannot be donor: the checkout of branch main is home,"
        " and one checkout would be both.\n"
        "Clear that role first: git continuity place clear main\n",
    )
    assert state_refs(alice) == before
    assert lead(alice).startswith("stream main  (")  # still the home, nothing leads
    # the reverse: branch main is an archive, so its checkout cannot be the home
    assert inproc(bob, "place", "set", "refs/heads/main", "archive", "--why", "history").code == 0
    before = state_refs(bob)
    said = inproc(bob, "place", "set", "bob", "home", "--why", "x")
    assert (said.code, said.out, said.err) == (
        2,
        "",
        "git-continuity: error: the checkout of branch main cannot be home: branch main is archive,"
        " and one checkout would be both.\n"
        "Clear that role first: git continuity place clear main\n",
    )
    assert state_refs(bob) == before
    # the same role on both is no contradiction
    assert inproc(bob, "place", "set", "bob", "archive", "--why", "history").code == 0


def state_refs(where: Path) -> str:
    return git(where, "for-each-ref", "--format=%(refname) %(objectname)", "refs/continuity/")


def test_two_homes_from_a_sync_status_says_so_and_which_one_this_is(clones: tuple[Path, Path], inproc: Run) -> None:
    """alice sets the checkout of main as the home, bob branch feature, then both sync: status
    in alice's main checkout agrees with place list (it is a home) and names both homes."""
    alice, bob = clones
    git(bob, "branch", "feature")
    assert inproc(alice, "place", "set", "alice", "home", "--why", "the main checkout").code == 0
    assert inproc(bob, "place", "set", "feature", "home", "--why", "the feature branch").code == 0
    assert inproc(alice, "push").code == 0
    assert inproc(bob, "sync").code == 0
    assert inproc(alice, "sync").code == 0
    rows = {p["kind"]: p for p in json.loads(inproc(alice, "place", "list", "--json").out)["places"]}
    assert [(p["kind"], p["name"], p["here"]) for p in rows.values()] == [
        ("branch", "feature", False),
        ("checkout", "main", True),
    ]

    def said(kind: str, label: str) -> str:
        p = rows[kind]
        when = p["set_at"][:19].replace("T", " ")
        return f"{label} (set {when} by {p['set_by']} on {socket.gethostname()}: {p['why']})"

    each = f"{said('branch', 'branch feature')}; {said('checkout', 'the checkout of branch main')}"
    assert lead(alice) == (
        f"Warning: 2 homes are set, kept by a merge of two clones' states: {each}."
        " This checkout is one of them (the checkout of branch main)."
        " Until one is cleared, the other places point at branch feature: git continuity place clear main"
    )
    assert json.loads(cont(alice, "status", "--json").out)["place"]["role"] == "home"
    listed = inproc(alice, "place", "list").out
    assert listed.startswith("  home         branch feature  (not found here)\n")
    assert "\n* home         checkout of branch main  " in listed
    assert listed.splitlines()[-1] == lead(alice)
    # bob's main checkout is the checkout of branch main too; a worktree on another branch is
    # neither home: it is told where work happens, and that there are two
    assert lead(bob) == lead(alice)
    side = bob.parent / "side"
    git(bob, "worktree", "add", "-q", "-b", "side", str(side))
    assert cont(side, "status").out.split("\n\n")[:2] == [
        "You are in worktree side (branch side), which is not the home. Work happens in the home: branch feature.",
        f"Warning: 2 homes are set, kept by a merge of two clones' states: {each}."
        " Until one is cleared, the other places point at branch feature: git continuity place clear main",
    ]
