"""Clone shapes people and agent sandboxes use (#35): partial clones (``--filter=blob:none``,
as GitHub advises for large repositories), treeless clones (``--filter=tree:0``), shallow and
single-branch clones (``--depth 1``, as most CI and cloud sandboxes clone). Each is made by
real git from a real remote, and a teammate's state read there is never called malformed,
nor contradicted, for an object the clone chose not to have."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import by_a_person, commit, git, normalize
from test_signing import own_public, user

REF = "refs/continuity/main"


def run(where: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "continuity", *args], cwd=where, capture_output=True, text=True, env=env)


def ok(where: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = run(where, *args, env=env)
    assert (done.returncode, done.stderr) == (0, ""), (args, done.stdout, done.stderr)
    return done.stdout


def hosted(tmp_path: Path) -> tuple[Path, str]:
    """A bare remote that serves partial clones, as GitHub's does (filters allowed), with two
    commits on main and a tag on the first; its folder and its file:// URL (git ignores
    --filter in a clone by plain path)."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "uploadpack.allowFilter", "true")
    git(bare, "config", "uploadpack.allowAnySHA1InWant", "true")
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    commit(seed, "first", {"README": "hello\n", "docs/guide.md": "guide\n"})
    git(seed, "tag", "v1")
    commit(seed, "second", {"src/app.py": "print('hi')\n"})
    git(seed, "push", "-q", str(bare), "main", "v1")
    return bare, f"file://{bare}"


def ada_shares(tmp_path: Path, url: str) -> tuple[Path, str]:
    """Ada, in a full clone, opens a thread whose checks name the first commit, its tag and a
    file in its tree, and pushes her state; her clone and the first commit."""
    ada = tmp_path / "ada"
    git(tmp_path, "clone", "-q", url, str(ada))
    first = git(ada, "rev-parse", "HEAD~1")
    ok(ada, "init")
    ok(ada, "thread", "add", "Ship the guide", "--check", "file:docs/guide.md@HEAD~1", "--check", "commit:HEAD~1")
    ok(ada, "thread", "add", "Tag the release", "--check", "tag:v1=HEAD~1")
    ok(ada, "journal", "add", "Ada's finding")
    ok(ada, "push")
    return ada, first


def bea_clones(tmp_path: Path, url: str, *shape: str) -> tuple[Path, dict[str, str]]:
    """Bea, a person of her own (HOME, config), clones in the given shape, makes her key (a
    stream of her own) and trusts Ada's; her clone and environment."""
    env = user(tmp_path / "bea-home", "Bea Builder", "bea@example.com")
    (tmp_path / "bea-home" / ".gitconfig").write_text(
        '[user]\n\tname = Bea Builder\n\temail = bea@example.com\n[protocol "file"]\n\tallow = always\n'
    )
    bea = tmp_path / "bea"
    subprocess.run(["git", "clone", "-q", *shape, url, str(bea)], check=True, env=env, capture_output=True)
    ok(bea, "init", "--stream", "bea", "--local", env=env)
    by_a_person(bea, "trust", "signer", "add", "ada@example.com", own_public(), env=env)
    return bea, env


def missing_objects(where: Path, ref: str) -> list[str]:
    """What git itself says is missing below a ref (a partial clone's left-out objects)."""
    listed = git(where, "rev-list", "--objects", "--missing=print", ref)
    return [line[1:] for line in listed.splitlines() if line.startswith("?")]


@pytest.mark.parametrize("shape", ["--filter=blob:none", "--filter=tree:0"])
def test_a_partial_clone_takes_the_teams_state_whole(tmp_path: Path, shape: str) -> None:
    _, url = hosted(tmp_path)
    ada_shares(tmp_path, url)
    bea, env = bea_clones(tmp_path, url, shape)

    pulled = ok(bea, "pull", env=env)
    assert normalize(pulled) == "From origin:\n  main: new here (<short>)\n  notes: new here (<short>)\n"
    assert missing_objects(bea, REF) == []
    assert missing_objects(bea, "refs/notes/continuity") == []
    status = json.loads(ok(bea, "status", "--json", env=env))
    assert [t["title"] for t in status["threads"]] == ["Ship the guide", "Tag the release"]
    assert ok(
        bea, "sync", env=env
    ) == "From origin:\n  main: up to date\n  notes: up to date\nTo origin:\n  bea: created on origin ({})\n".format(
        git(bea, "rev-parse", "--short=7", "refs/continuity/bea")
    )
    doctor = json.loads(run(bea, "doctor", "--json", env=env).stdout)
    assert [f for f in doctor["findings"] if f["area"] in ("state", "tracking", "notes")] == []


def test_init_in_a_partial_clone_takes_the_remote_state_in(tmp_path: Path) -> None:
    _, url = hosted(tmp_path)
    ada_shares(tmp_path, url)
    env = user(tmp_path / "bea-home", "Bea Builder", "bea@example.com")
    bea = tmp_path / "bea"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", url, str(bea)], check=True, env=env)
    ok(bea, "init", "--stream", "bea", "--local", env=env)
    by_a_person(bea, "trust", "signer", "add", "ada@example.com", own_public(), env=env)

    said = ok(bea, "init", env=env)
    assert normalize(said).splitlines()[:3] == [
        "origin already has state for stream 'main': took it in instead of starting an unrelated history.",
        "From origin:",
        "  main: new here (<short>)",
    ]
    assert missing_objects(bea, REF) == []


def test_state_a_plain_git_fetch_brought_under_the_filter_is_completed_not_called_malformed(tmp_path: Path) -> None:
    """With the fetch refspecs, a plain git fetch brings the team's state under the clone's
    filter (its files left out). doctor does not call it malformed nor move it into
    quarantine; pull completes it through git."""
    bare, url = hosted(tmp_path)
    ada_shares(tmp_path, url)
    bea, env = bea_clones(tmp_path, url, "--filter=blob:none")
    git(bea, "config", "--add", "remote.origin.fetch", "+refs/continuity/*:refs/continuity-remotes/origin/*")
    subprocess.run(["git", "fetch", "-q", "origin"], cwd=bea, check=True, env=env)
    tracking = "refs/continuity-remotes/origin/main"
    assert missing_objects(bea, tracking)  # git's filter left the state's files out

    doctor = run(bea, "doctor", "--json", env=env)
    findings = json.loads(doctor.stdout)["findings"]
    about = [f for f in findings if f["where"] == tracking]
    assert about == [
        {
            "area": "tracking",
            "where": tracking,
            "problem": f"{len(missing_objects(bea, tracking))} objects of its history are not in this partial clone"
            " (its filter blob:none left them out); they are not malformed",
            "fix": "git continuity pull origin fetches them whole",
            "repair": None,
            "serious": False,
        }
    ]
    fixed = run(bea, "doctor", "--fix", env=env)
    assert "moved into quarantine" not in fixed.stdout
    assert git(bare, "rev-parse", REF) == git(tmp_path / "ada", "rev-parse", REF)

    pulled = ok(bea, "pull", env=env)
    assert normalize(pulled) == "From origin:\n  main: new here (<short>)\n  notes: new here (<short>)\n"
    assert missing_objects(bea, REF) == []


def test_a_treeless_clone_answers_a_file_check_on_an_old_commit(tmp_path: Path) -> None:
    """A treeless clone lacks the trees of every commit but the one checked out: a file:
    check on the first commit fetches that tree through git, and the other checks of the run
    are answered as in a full clone."""
    _, url = hosted(tmp_path)
    _, first = ada_shares(tmp_path, url)
    bea, env = bea_clones(tmp_path, url, "--filter=tree:0")
    ok(bea, "pull", env=env)
    verified = ok(bea, "verify", env=env)
    states = {
        (c["handle"], c["state"]) for c in json.loads(ok(bea, "status", "--json", env=env))["threads"][0]["checks"]
    }
    assert states == {(f"file:docs/guide.md@{first}", "verified"), (f"commit:{first}", "verified")}
    assert "failed" not in verified


def test_a_treeless_clone_offline_says_why_a_file_check_is_unknown(tmp_path: Path) -> None:
    _, url = hosted(tmp_path)
    _, first = ada_shares(tmp_path, url)
    bea, env = bea_clones(tmp_path, url, "--filter=tree:0")
    ok(bea, "pull", env=env)
    git(bea, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    checks = json.loads(ok(bea, "status", "--json", env=env))["threads"][0]["checks"]
    by_handle = {c["handle"]: c for c in checks}
    judged = by_handle[f"file:docs/guide.md@{first}"]
    assert judged["state"] == "unknown"
    assert judged["observed"].startswith(
        f"the tree of {first[:7]} is not in this partial clone (its filter tree:0 left it out) and git could not"
        " fetch it from origin:"
    )
    assert by_handle[f"commit:{first}"]["state"] == "verified"


# -- shallow and single-branch clones ------------------------------------------------------


def closed_by_ada(tmp_path: Path, url: str) -> str:
    """Ada closes both her threads, their checks verified in her full clone; the first commit."""
    ada, first = ada_shares(tmp_path, url)
    for thread in json.loads(ok(ada, "status", "--json"))["threads"]:
        ok(ada, "thread", "close", thread["id"])
    ok(ada, "push")
    return first


def stop(where: Path, env: dict[str, str]) -> dict[str, object]:
    """Claude Code's Stop hook, run in Bea's clone as the agent runs it."""
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "stop"],
        cwd=where,
        input=json.dumps({"cwd": str(where), "session_id": "s-1", "hook_event_name": "Stop"}),
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_a_shallow_clone_reads_a_teammates_verified_checks_as_not_here_and_the_gate_does_not_hold(
    tmp_path: Path,
) -> None:
    _, url = hosted(tmp_path)
    first = closed_by_ada(tmp_path, url)
    bea, env = bea_clones(tmp_path, url, "--depth=1")
    ok(bea, "pull", env=env)

    hint = "is not in this shallow clone (git fetch --unshallow brings the whole history)"
    threads = json.loads(ok(bea, "status", "--json", env=env))["threads"]
    assert [(t["title"], t["status"], t.get("undone")) for t in threads] == [
        ("Ship the guide", "done", None),
        ("Tag the release", "done", None),
    ]
    verified = run(bea, "verify", "--json", env=env).stdout
    judged = {c["handle"]: (c["state"], c["observed"]) for c in json.loads(verified)["claims"]}
    assert judged == {
        f"file:docs/guide.md@{first}": ("unknown", f"commit {first[:7]} {hint}"),
        f"commit:{first}": ("unknown", f"commit {first[:7]} {hint}"),
        f"tag:v1={first}": ("unknown", f"tag v1 {hint}"),
    }
    assert run(bea, "check", env=env).returncode == 0
    ok(bea, "orient", env=env)  # a session starts
    (bea / "notes.txt").write_text("Bea's work\n")  # and changes something
    assert stop(bea, env) == {}

    refused = run(bea, "thread", "add", "Older", "--check", "commit:HEAD~1", env=env)
    assert (refused.returncode, refused.stderr) == (
        2,
        "git-continuity: error: revision 'HEAD~1' does not resolve to a commit here: this is a shallow clone, whose"
        " history stops short (git fetch --unshallow brings the whole history)\n",
    )
    subprocess.run(["git", "fetch", "-q", "--unshallow"], cwd=bea, check=True, env=env)
    after = {c["handle"]: c["state"] for c in json.loads(ok(bea, "verify", "--json", env=env))["claims"]}
    assert after == dict.fromkeys(judged, "verified")


def test_a_single_branch_clone_reads_a_commit_of_another_branch_as_not_here(tmp_path: Path) -> None:
    _, url = hosted(tmp_path)
    ada = tmp_path / "ada"
    git(tmp_path, "clone", "-q", url, str(ada))
    git(ada, "switch", "-q", "-c", "feature")
    side = commit(ada, "on feature", {"feature.txt": "f\n"})
    git(ada, "push", "-q", "origin", "feature")
    ok(ada, "init")
    ok(ada, "thread", "add", "Feature", "--check", f"commit:{side}")
    ok(ada, "push")
    bea, env = bea_clones(tmp_path, url, "--single-branch", "--branch=main")
    ok(bea, "pull", env=env)
    checks = json.loads(ok(bea, "status", "--json", env=env))["threads"][0]["checks"]
    assert [(c["state"], c["observed"]) for c in checks] == [
        (
            "unknown",
            f"commit {side[:7]} is not in this single-branch clone (git remote set-branches origin '*' && git fetch"
            " origin brings the other branches)",
        )
    ]
