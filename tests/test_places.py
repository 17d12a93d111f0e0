"""Places on real worktrees: the issue's scenario (a home, a donor worktree, a preservation
branch, a cleanroom), the guards in real commits and pushes, orientation leading with where
you are, bad input, sync, and the hooks' cheap path."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, cont, git, kept_in, state_refs

Run = Callable[..., Ran]
HOME = "Work happens in the home: the checkout of branch main, in {root}/cli."
DONOR = "You are in a donor checkout (branch cli-old): copy from it, commit nothing. " + HOME
OVERRIDE = (
    "To commit here on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git commit ... "
    "(or git -c continuity.allowPlace=true commit ...).\n"
)


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Ran:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)
    return Ran(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def scenario(tmp_path: Path, inproc: Run) -> Path:
    """Repository cli: its main checkout, linked worktrees cli-old (on branch cli-old) and
    cli-clean (detached), a branch preserve/2026-11, a bare origin with main and the
    preservation branch, the hooks installed and the state started. Returns the folder."""
    root = tmp_path
    cli = root / "cli"
    git(root, "init", "-q", str(cli))
    git(cli, "commit", "-q", "--allow-empty", "-m", "first")
    git(cli, "worktree", "add", "-q", "-b", "cli-old", "../cli-old")
    git(cli, "worktree", "add", "-q", "--detach", "../cli-clean")
    git(cli, "branch", "preserve/2026-11")
    git(root, "init", "-q", "--bare", "origin.git")
    git(cli, "remote", "add", "origin", "../origin.git")
    git(cli, "push", "-q", "origin", "main", "preserve/2026-11")
    assert inproc(cli, "init", "--local").code == 0
    assert inproc(cli, "hooks", "install").code == 0
    return root


def set_all(inproc: Run, root: Path) -> list[Ran]:
    cli = root / "cli"
    return [
        inproc(cli, "place", "set", "cli", "home", "--why", "the implementation lives here"),
        inproc(cli, "place", "set", "cli-old", "donor", "--why", "the old parser: copy parts, never commit"),
        inproc(cli, "place", "set", "preserve/2026-11", "preservation", "--why", "what shipped in November"),
        inproc(root / "cli-clean", "place", "set", "cli-clean", "cleanroom", "--why", "reproduce bug reports"),
    ]


def test_the_scenario_on_real_worktrees(scenario: Path, inproc: Run) -> None:
    root, cli, old = scenario, scenario / "cli", scenario / "cli-old"
    said = set_all(inproc, root)
    assert [(r.code, r.out, r.err) for r in said] == [
        (
            0,
            "the checkout of branch main is now home: work happens here\n  why  the implementation lives here\n"
            "  on every clone, the checkout on branch main (here: the main checkout)\n",
            "",
        ),
        (
            0,
            "the checkout of branch cli-old is now donor: copy from it, commit nothing\n"
            "  why  the old parser: copy parts, never commit\n"
            "  on every clone, the checkout on branch cli-old (here: a linked worktree)\n",
            "",
        ),
        (
            0,
            "branch preserve/2026-11 is now preservation: it never moves, so commit nothing on it and push nothing "
            "over it\n  why  what shipped in November\n",
            "",
        ),
        (
            0,
            "worktree cli-clean is now cleanroom: reproduce from a clean tree here; change nothing by hand\n"
            "  why  reproduce bug reports\n",
            "",
        ),
    ]
    # Checkouts are found by their branch; where a detached worktree lives stays on this machine.
    assert json.loads((cli / ".git" / "continuity" / "places.json").read_text()) == {
        "worktrees": {"cli-clean": str(root / "cli-clean")}
    }

    # 1. Session 2 starts in cli-old by mistake: orient and status lead with it.
    listed = inproc(old, "place", "list")
    lines = listed.out.splitlines()
    assert (listed.code, [line for i, line in enumerate(lines) if i % 2 == 0 or not line.startswith("    why")]) == (
        0,
        [
            f"  home         checkout of branch main  {cli}",
            f"* donor        checkout of branch cli-old  {old}",
            "  preservation branch preserve/2026-11",
            f"  cleanroom    worktree cli-clean  {root / 'cli-clean'}",
            "",
            DONOR.format(root=root),
        ],
    )
    assert lines[1].startswith("    why  the implementation lives here  (set ") and lines[1].endswith(
        " by Ada Agent <ada@example.com>)"
    )
    oriented = cont(old, "orient")
    assert oriented.out.splitlines()[:2] == ["# git-continuity brief: stream main", DONOR.format(root=root)]
    status = cont(old, "status")
    assert status.out.split("\n\n")[0] == DONOR.format(root=root)
    doc = json.loads(cont(old, "orient", "--json").out)
    assert doc["place"] == {
        "worktree": "cli-old",
        "branch": "cli-old",
        "role": "donor",
        "home": {"kind": "checkout", "name": "main"},
        "lead": DONOR.format(root=root),
    }
    # So does a coding agent's SessionStart hook (the context it gives the model).
    started = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "session-start"],
        cwd=old,
        input=json.dumps({"cwd": str(old), "session_id": "abc", "hook_event_name": "SessionStart"}),
        capture_output=True,
        text=True,
    )
    context = json.loads(started.stdout)["hookSpecificOutput"]["additionalContext"]
    assert (started.returncode, context.splitlines()[:2]) == (
        0,
        ["# git-continuity brief: stream main", DONOR.format(root=root)],
    )
    # In the home, nothing leads; its role is in --json.
    assert cont(cli, "orient").out.splitlines()[1].startswith("State refs/continuity/main at ")
    assert json.loads(cont(cli, "status", "--json").out)["place"] == {
        "worktree": "cli",
        "branch": "main",
        "role": "home",
        "home": {"kind": "checkout", "name": "main"},
        "lead": None,
    }
    clean = cont(root / "cli-clean", "orient").out.splitlines()[1]
    assert clean == (
        "You are in a cleanroom worktree (cli-clean): reproduce from a clean tree here; change nothing by hand. "
        + HOME.format(root=root)
    )

    # 2. A commit in cli-old is refused, naming the home; an override is explicit.
    before = git(old, "rev-parse", "HEAD")
    refused = run(old, "git", "commit", "-q", "--allow-empty", "-m", "edit the donor")
    assert (refused.code, refused.err) == (
        1,
        "git-continuity: this is a donor checkout (branch cli-old): copy from it, commit nothing. "
        + HOME.format(root=root)
        + "\n"
        + OVERRIDE
        + kept_in(root / "cli" / ".git" / "worktrees" / "cli-old"),
    )
    assert git(old, "rev-parse", "HEAD") == before
    env = {**os.environ, "GIT_CONTINUITY_ALLOW_PLACE": "1"}
    assert run(old, "git", "commit", "-q", "--allow-empty", "-m", "on purpose", env=env).code == 0
    assert run(old, "git", "-c", "continuity.allowPlace=true", "commit", "-q", "--allow-empty", "-m", "again").code == 0
    # The home and the cleanroom commit as usual.
    assert run(cli, "git", "commit", "-q", "--allow-empty", "-m", "work").code == 0
    assert run(root / "cli-clean", "git", "commit", "-q", "--allow-empty", "-m", "repro").code == 0

    # A commit on the preservation branch is refused too, wherever it is checked out.
    git(cli, "checkout", "-q", "preserve/2026-11")
    on_branch = run(cli, "git", "commit", "-q", "--allow-empty", "-m", "touch the preserved state")
    assert (on_branch.code, on_branch.err) == (
        1,
        "git-continuity: this is a preservation branch (preserve/2026-11): it never moves, so commit nothing on it "
        "and push nothing over it. Work happens in the home: the checkout of branch main; no checkout here has main"
        " checked out (git switch main, or git worktree add DIR main).\n" + OVERRIDE + kept_in(cli / ".git"),
    )
    git(cli, "checkout", "-q", "main")

    # ...and so is a push that moves preserve/2026-11 on the remote.
    kept = git(root / "origin.git", "rev-parse", "preserve/2026-11")
    pushed = run(cli, "git", "push", "-q", "origin", "main:preserve/2026-11")
    assert (pushed.code, pushed.err.splitlines()[:2]) == (
        1,
        [
            "git-continuity: this push moves preserve/2026-11 on origin, a preservation branch: it never moves, so "
            "commit nothing on it and push nothing over it. " + HOME.format(root=root),
            "To move it on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git push ... "
            "(or git -c continuity.allowPlace=true push ...).",
        ],
    )
    assert git(root / "origin.git", "rev-parse", "preserve/2026-11") == kept
    assert run(cli, "git", "push", "-q", "origin", "main").code == 0  # the home's branch moves freely
    assert run(cli, "git", "push", "-q", "origin", "cli-old").code == 0  # so does a new branch


def test_clearing_a_place_lifts_its_guard(scenario: Path, inproc: Run) -> None:
    set_all(inproc, scenario)
    old = scenario / "cli-old"
    cleared = inproc(old, "place", "clear", "cli-old")
    assert (cleared.code, cleared.out) == (0, "the checkout of branch cli-old has no role any more (it was donor)\n")
    assert run(old, "git", "commit", "-q", "--allow-empty", "-m", "now allowed").code == 0
    assert cont(old, "orient").out.splitlines()[1] == (
        "You are in worktree cli-old (branch cli-old), which is not the home. " + HOME.format(root=scenario)
    )
    assert "cli-old" not in (scenario / "cli" / ".git" / "continuity" / "places.json").read_text()
    as_json = json.loads(inproc(old, "place", "list", "--json").out)
    assert [(p["kind"], p["name"], p["role"], p["found"], p["here"]) for p in as_json["places"]] == [
        ("checkout", "main", "home", True, False),
        ("branch", "preserve/2026-11", "preservation", True, False),
        ("worktree", "cli-clean", "cleanroom", True, False),
    ]
    assert as_json["here"] == {"worktree": "cli-old", "branch": "cli-old"}


def test_a_branch_named_like_a_worktree_is_named_in_full(scenario: Path, inproc: Run) -> None:
    cli = scenario / "cli"
    done = inproc(cli, "place", "set", "refs/heads/cli-old", "archive", "--why", "the old line of work")
    assert (done.code, done.out.splitlines()[0]) == (
        0,
        "branch cli-old is now archive: read it for history, commit nothing",
    )
    # The worktree cli-old is on that branch: its commits are refused as the branch's.
    refused = run(scenario / "cli-old", "git", "commit", "-q", "--allow-empty", "-m", "x")
    assert (refused.code, refused.err.splitlines()[0]) == (
        1,
        "git-continuity: this is an archive branch (cli-old): read it for history, commit nothing. "
        "No home is set: git continuity place set WHERE home --why TEXT names it.",
    )


def test_bad_places_are_refused_and_nothing_is_written(scenario: Path, inproc: Run) -> None:
    cli = scenario / "cli"
    assert inproc(cli, "place", "set", "cli", "home", "--why", "here").code == 0
    before = state_refs(cli)
    cases = {
        ("place", "set", "cli-gone", "donor", "--why", "x"): (
            "git-continuity: error: no branch or worktree 'cli-gone' here.\n"
            "  worktrees: cli, cli-clean, cli-old\n"
            "  branches: cli-old, main, preserve/2026-11\n"
            "Name a worktree by its name (git worktree list), a branch by its name or as refs/heads/NAME.\n"
        ),
        ("place", "set", "refs/heads/nope", "archive", "--why", "x"): None,
        ("place", "set", "preserve/2026-11", "home", "--why", "x"): (
            "git-continuity: error: stream 'main' already has a home: the checkout of branch main (here).\n"
            "Clear it first: git continuity place clear main\n"
        ),
        ("place", "set", "cli-old", "donor", "--why", " "): (
            "git-continuity: error: place set needs a non-empty --why: the next session reads it\n"
        ),
        ("place", "clear", "cli-old"): (
            "git-continuity: error: no place 'cli-old' in stream 'main' (places: the checkout of branch main)\n"
        ),
    }
    for args, err in cases.items():
        done = inproc(cli, *args)
        assert (done.code, done.out) == (2, ""), args
        if err is not None:
            assert done.err == err, args
        else:
            assert done.err.startswith("git-continuity: error: no branch or worktree 'refs/heads/nope' here.\n")
    with pytest.raises(SystemExit) as exited:
        inproc(cli, "place", "set", "cli-old", "owner", "--why", "x")
    assert exited.value.code == 2
    assert state_refs(cli) == before


def test_places_sync_and_a_pulled_place_is_guarded(scenario: Path, inproc: Run, tmp_path: Path) -> None:
    """The roles travel with the state; on another clone (where the state arrived by a pull,
    so the hooks' small file is older than the ref) the guard still holds."""
    cli = scenario / "cli"
    assert inproc(cli, "push").code == 0
    other = tmp_path / "laptop" / "cli"
    git(tmp_path, "clone", "-q", str(scenario / "origin.git"), str(other))
    assert inproc(other, "pull").code == 0
    assert inproc(other, "hooks", "install").code == 0
    git(other, "worktree", "add", "-q", "-b", "cli-old", "../cli-old", "origin/main")
    set_all(inproc, scenario)
    assert inproc(cli, "push").code == 0
    assert inproc(other, "pull").code == 0
    refused = run(other.parent / "cli-old", "git", "commit", "-q", "--allow-empty", "-m", "x")
    assert (refused.code, refused.err.splitlines()[0]) == (
        1,
        "git-continuity: this is a donor checkout (branch cli-old): copy from it, commit nothing. "
        f"Work happens in the home: the checkout of branch main, in {other}.",
    )
    assert inproc(other, "place", "clear", "cli-old").code == 0
    assert inproc(other, "push").code == 0
    assert inproc(cli, "pull").code == 0
    assert [p["name"] for p in json.loads(inproc(cli, "place", "list", "--json").out)["places"]] == [
        "main",
        "preserve/2026-11",
        "cli-clean",
    ]


PROBE = """\
import json, runpy, sys
sys.argv = ["git-continuity", "hook-impl", "pre-commit"]
try:
    runpy.run_module("git_continuity", run_name="__main__", alter_sys=True)
except SystemExit as done:
    code = done.code
print(json.dumps([code, sorted(sys.modules)]))
"""


def imported(cwd: Path) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=cwd, capture_output=True, text=True, check=True)
    code, modules = json.loads(done.stdout.splitlines()[-1])
    return code, {m.split(".")[0] for m in modules}


def test_the_commit_guard_stays_cheap(scenario: Path, inproc: Run, repo: Path) -> None:
    """Without a state, with a state but no places, and in the home: no pygit2, no jsonschema."""
    heavy = {"pygit2", "jsonschema"}
    code, modules = imported(repo)
    assert (code, modules & heavy) == (0, set())
    cli = scenario / "cli"
    code, modules = imported(cli)
    assert (code, modules & heavy) == (0, set())
    set_all(inproc, scenario)
    code, modules = imported(cli)
    assert (code, modules & heavy) == (0, set())
    code, modules = imported(scenario / "cli-old")
    assert (code, modules & heavy) == (1, set())


def test_two_homes_after_a_merge_of_states_are_named(scenario: Path, inproc: Run, tmp_path: Path) -> None:
    """place set refuses a second home, but two clones may each set one before they sync: the
    merge keeps both, and status, orient and place list say so and how to keep one."""
    cli = scenario / "cli"
    assert inproc(cli, "push").code == 0
    other = tmp_path / "laptop" / "cli"
    git(tmp_path, "clone", "-q", str(scenario / "origin.git"), str(other))
    assert inproc(other, "pull").code == 0
    assert inproc(cli, "place", "set", "cli", "home", "--why", "the main checkout").code == 0
    assert inproc(other, "place", "set", "main", "home", "--why", "the main branch").code == 0
    assert inproc(cli, "push").code == 0
    assert inproc(other, "sync").code == 0
    homes = {p["kind"]: p for p in json.loads(inproc(other, "place", "list", "--json").out)["places"]}
    assert [(p["kind"], p["name"]) for p in homes.values()] == [("branch", "main"), ("checkout", "main")]

    def said(kind: str, label: str, why: str) -> str:
        p = homes[kind]
        when = p["set_at"][:19].replace("T", " ")
        return f"{label} (set {when} by {p['set_by']} on {socket.gethostname()}: {why})"

    warning = (
        "Warning: 2 homes are set, kept by a merge of two clones' states: "
        f"{said('branch', 'branch main', 'the main branch')}; "
        f"{said('checkout', 'the checkout of branch main', 'the main checkout')}. "
        "This checkout is one of them (branch main). "
        "Until one is cleared, the other places point at branch main: git continuity place clear main"
    )
    assert cont(other, "status").out.split("\n\n")[0] == warning  # this checkout is on main: the home named
    assert cont(other, "orient").out.splitlines()[1] == warning
    assert inproc(other, "place", "list").out.splitlines()[-1] == warning
    cleared = inproc(other, "place", "clear", "main")  # the checkout first, as the warning says
    assert (cleared.code, cleared.out) == (0, "the checkout of branch main has no role any more (it was home)\n")
    assert cont(other, "status").out.startswith("stream main  (")
