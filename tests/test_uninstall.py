"""A way out (#35): ``git continuity uninstall`` takes out of a clone what git-continuity put
there and says what stays; the hooks of a clone whose git-continuity was removed without it
stay quiet and let work through; a reftable repository is refused naming its format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import BIN, cont, git, made_id, ok

import git_continuity

COPIES = ("refs/continuity-remotes/origin/main",)


def ours(work: Path) -> list[str]:
    """Every ref of git-continuity's in a clone."""
    return [r for r in git(work, "for-each-ref", "--format=%(refname)").splitlines() if "continuity" in r]


def set_up(work: Path) -> None:
    """Everything a clone gets from a user of every part: the state, fetched and pushed, the
    fetch refspecs, the hooks, an agent's hooks, a transport setting."""
    ok(work, "init", "--fetch-refspecs")
    ok(work, "journal", "add", "a finding")
    ok(work, "push")
    ok(work, "pull")
    ok(work, "hooks", "install")
    ok(work, "agent", "install", "claude")
    git(work, "commit", "-q", "--allow-empty", "-m", "work")  # its provenance note: refs/notes/continuity
    git(work, "config", "continuity.origin.transport", "refs")


def test_uninstall_takes_out_what_it_put_in_and_says_what_stays(remote_and_clone: tuple[Path, Path]) -> None:
    bare, work = remote_and_clone
    set_up(work)
    before = git(bare, "for-each-ref")

    done = cont(work, "uninstall")
    hooks = work / ".git" / "hooks"
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "git-continuity"
    state = Path(os.environ["XDG_STATE_HOME"]) / "git-continuity"
    assert (done.code, done.err) == (0, "")
    assert done.out.splitlines() == [
        "Removed:",
        *(f"  {hooks / name}: removed" for name in ("commit-msg", "post-commit", "pre-push")),
        f"  {hooks / 'post-rewrite'}: removed",
        f"  {work / '.claude/settings.json'}: removed (install had created it)",
        f"  {work / '.claude/hooks/git-continuity-hook'}: removed",
        "  remote.origin.fetch: +refs/continuity/*:refs/continuity-remotes/origin/*",
        "  remote.origin.fetch: +refs/continuity-lanes/*:refs/continuity-remote-lanes/origin/*",
        "  continuity.origin.transport: removed",
        *(f"  {ref}: a copy of a remote's state, fetched (the remote keeps its own)" for ref in COPIES),
        f"  {work / '.git' / 'continuity'}: caches, the trust store, sessions, the helper's socket",
        "Kept:",
        "  refs/continuity/main: the work's record, kept unless asked: git continuity uninstall --state removes it",
        "  refs/notes/continuity: the work's record, kept unless asked: git continuity uninstall --state removes it",
        f"  {config}: your signing key and the keys you trust, for every repository (remove it yourself once no"
        " repository needs them)",
        f"  {state}: the newest state seen, kept while the state is",
        "  git-continuity: the program itself: pip uninstall git-continuity (or pipx uninstall)",
    ]
    assert ours(work) == ["refs/continuity/main", "refs/notes/continuity"]
    assert git(work, "config", "--get-all", "remote.origin.fetch") == "+refs/heads/*:refs/remotes/origin/*"
    assert git(work, "config", "--get-regexp", "^continuity", check=False) == ""
    assert [p.name for p in hooks.iterdir() if not p.name.endswith(".sample")] == []  # git's samples stay
    assert not (work / ".claude").exists() and not (work / ".git" / "continuity").exists()
    assert git(work, "status", "--porcelain") == ""
    assert git(bare, "for-each-ref") == before  # the remote is never touched

    (seen,) = (state / "witness").iterdir()  # this repository's witness
    again = json.loads(cont(work, "uninstall", "--state", "--json").out)
    assert again["removed"] == [
        {"area": "state", "where": ref, "what": "removed (--state); a remote's copy is untouched"}
        for ref in ("refs/continuity/main", "refs/notes/continuity")
    ] + [
        {
            "area": "state",
            "where": str(seen),
            "what": "the newest state seen here (the witness), removed with the state",
        }
    ]
    assert ours(work) == []
    assert git(bare, "for-each-ref") == before
    assert [k["area"] for k in again["kept"]] == ["user", "user"]


def test_the_hooks_of_a_clone_whose_git_continuity_is_gone_let_work_through_quietly(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """git-continuity installed in an environment of its own, its hooks installed from there;
    then the package is removed (pip uninstall) without git continuity uninstall."""
    _, work = remote_and_clone
    site = tmp_path / "site"
    shutil.copytree(Path(git_continuity.__file__).parent, site / "git_continuity")
    shutil.copytree(Path(__file__).resolve().parents[1] / "hooks", site / "git_continuity" / "hook_scripts")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    packages = next((venv / "lib").glob("python3*/site-packages"))
    (packages / "deps.pth").write_text(f"{site}\n{sysconfig.get_paths()['purelib']}\n")
    python = venv / "bin" / "python"
    ok(work, "init")
    tid = made_id(ok(work, "thread", "add", "Release", "--check", "tag:v9"), "t")
    installed = subprocess.run([str(python), "-m", "git_continuity", "hooks", "install"], cwd=work, capture_output=True)
    assert installed.returncode == 0, installed.stderr
    assert f"package='{site / 'git_continuity'}'" in (work / ".git" / "hooks" / "commit-msg").read_text()

    shutil.rmtree(site / "git_continuity")  # pip uninstall git-continuity
    env = {**os.environ, "PATH": os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != str(BIN))}
    assert shutil.which("git-continuity", path=env["PATH"]) is None
    plain = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", "Plain work"], cwd=work, env=env, capture_output=True, text=True
    )
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, "", "")
    closing = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", f"Release; closes {tid}"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (closing.returncode, closing.stderr) == (
        0,
        "git-continuity: the commit-msg hook cannot find git-continuity (uninstalled?), so this commit's closing claim"
        " went unchecked; to remove the hook: rm .git/hooks/commit-msg\n",
    )
    pushed = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=work, env=env, capture_output=True, text=True)
    assert (pushed.returncode, pushed.stderr) == (0, "")
    amended = subprocess.run(
        ["git", "commit", "-q", "--amend", "--allow-empty", "-m", "Reworded"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
    )
    assert (amended.returncode, amended.stderr) == (0, "")


def test_a_reftable_repository_is_refused_naming_its_format(tmp_path: Path) -> None:
    """What git 2.45 writes for ``git init --ref-format=reftable`` (format version 1 and the
    extension), refused with what to do instead of libgit2's own words."""
    work = tmp_path / "rt"
    git(tmp_path, "init", "-q", str(work))
    git(work, "config", "core.repositoryformatversion", "1")
    git(work, "config", "extensions.refStorage", "reftable")
    ran = subprocess.run([str(BIN / "git-continuity"), "status"], cwd=work, capture_output=True, text=True)
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr == (
        f"git-continuity: error: {work}/.git/ keeps its refs in the reftable format (extensions.refStorage=reftable,"
        " git 2.45 and later), which git-continuity does not support yet: libgit2, which it reads refs with, knows"
        " only git's files format. Convert it with git refs migrate --ref-format=files (git 2.46 and later), or"
        " clone it again with --ref-format=files.\n"
    )
