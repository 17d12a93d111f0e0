"""git-continuity's hooks beside real hook managers from npm (#35): husky 9, which runs the
team's ``.husky/<hook>`` scripts through ``core.hooksPath=.husky/_``, and lefthook, which
writes ``.git/hooks``. The team's own hook keeps running, and so does the closure gate."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import cont, git, made_id, ok
from hook_managers import binary

LINT = 'echo "lint ran" >> lint.log\n'
LINE = (
    "# git-continuity: runs this clone's hook where git continuity hooks install put it; skipped where it did not\n"
    'h="$(git rev-parse --git-common-dir)/hooks/{hook}"; if [ -x "$h" ]; then "$h" "$@"; fi\n'
)


def husky_repo(repo: Path) -> Path:
    """The repository with husky installed as its docs say (``npx husky``), and the team's
    pre-commit lint in .husky/pre-commit, committed."""
    done = subprocess.run([str(binary("husky"))], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(repo, "config", "core.hooksPath") == ".husky/_"
    (repo / ".husky" / "pre-commit").write_text(LINT)
    (repo / ".gitignore").write_text("lint.log\n")
    git(repo, "add", ".husky/pre-commit", ".gitignore")
    git(repo, "commit", "-q", "-m", "husky")
    assert (repo / "lint.log").read_text() == "lint ran\n"  # husky runs the team's hook
    (repo / "lint.log").unlink()
    return repo


def test_hooks_install_chains_through_huskys_own_scripts(repo: Path) -> None:
    """The hooks run through husky's own scripts, the team's lint beside them. An earlier
    version's line in .husky/pre-commit (its place guard, commit-msg's now) is taken out."""
    husky_repo(repo)
    ok(repo, "init")
    (repo / ".husky" / "pre-commit").write_text(LINT + LINE.format(hook="pre-commit"))
    installed = cont(repo, "hooks", "install")
    hooks = repo / ".git" / "hooks"
    assert (installed.code, installed.err) == (0, "")
    assert installed.out.splitlines()[:7] == [
        *(f"installed {hooks / name}" for name in HOOK_NAMES),
        f"removed git-continuity's line from {repo / '.husky' / 'pre-commit'} (a file the team commits: commit it)",
        "husky runs this clone's hooks: added git-continuity's line to "
        + ", ".join(str(repo / ".husky" / name) for name in HOOK_NAMES)
        + ".",
        "Commit them, so every clone's husky runs git-continuity's hooks (a clone without them skips the line).",
    ]
    assert (repo / ".husky" / "pre-commit").read_text() == LINT
    assert (repo / ".husky" / "commit-msg").read_text() == LINE.format(hook="commit-msg")
    assert sorted(p.name for p in (repo / ".husky" / "_").iterdir() if p.name in HOOK_NAMES) == sorted(HOOK_NAMES)
    assert git(repo, "status", "--porcelain", "--", ".husky/_") == ""  # husky's own folder is untouched, ignored

    # The closure gate runs through husky: a false closure is blocked, the team's lint runs.
    tid = made_id(ok(repo, "thread", "add", "Write the notes", "--check", "file:NOTES.md"), "t")
    blocked = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", f"closes {tid}"], cwd=repo, capture_output=True, text=True
    )
    assert blocked.returncode != 0
    assert blocked.stderr.startswith(f'git-continuity: this commit closes {tid} ("Write the notes"), but 1 of 1')
    assert blocked.stderr.endswith("husky - commit-msg script failed (code 1)\n")
    (repo / "NOTES.md").write_text("notes\n")
    git(repo, "add", "NOTES.md")
    git(repo, "commit", "-q", "-m", f"Notes; closes {tid}")
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["status"] == "done"
    assert (repo / "lint.log").read_text() == "lint ran\nlint ran\n"
    assert git(repo, "notes", "--ref=continuity", "show", "HEAD")  # post-commit ran: the provenance note
    doctor = json.loads(cont(repo, "doctor", "--json").out)
    assert [f for f in doctor["findings"] if f["area"] == "hook"] == []

    # A clone without git-continuity's hooks skips the line, and the team's hook still runs.
    (repo / ".git" / "hooks" / "commit-msg").unlink()
    git(repo, "commit", "-q", "--allow-empty", "-m", "no gate here")
    assert (repo / "lint.log").read_text().count("lint ran") == 3

    removed = cont(repo, "hooks", "uninstall")
    assert removed.code == 0
    assert (repo / ".husky" / "pre-commit").read_text() == LINT
    assert not (repo / ".husky" / "commit-msg").exists()  # it held only the line
    assert git(repo, "config", "core.hooksPath") == ".husky/_"


HOOK_NAMES = ("commit-msg", "post-commit", "pre-push", "post-rewrite")


def test_doctor_under_husky_advises_what_hooks_install_then_does(repo: Path) -> None:
    husky_repo(repo)
    ok(repo, "init")
    ok(repo, "thread", "add", "Something", "--check", "tag:v9")
    found = [f for f in json.loads(cont(repo, "doctor", "--json").out)["findings"] if f["area"] == "hook"]
    assert [(f["problem"], f["fix"]) for f in found] == [
        (
            f"no closure gate here: husky runs this clone's hooks, and {repo / '.husky' / 'commit-msg'} does not run"
            " git-continuity's, so commits that close threads go unchecked (git continuity hooks install adds the"
            " line)",
            "git continuity hooks install",
        )
    ]
    assert cont(repo, "hooks", "install").code == 0
    assert [f for f in json.loads(cont(repo, "doctor", "--json").out)["findings"] if f["area"] == "hook"] == []


def test_lefthook_and_the_hooks_run_side_by_side(repo: Path) -> None:
    """lefthook writes .git/hooks; git-continuity's hooks chain to its hook, and lefthook's
    command keeps running with the closure gate."""
    (repo / "lefthook.yml").write_text("pre-commit:\n  commands:\n    lint:\n      run: echo lint ran >> lint.log\n")
    (repo / ".gitignore").write_text("lint.log\n")
    done = subprocess.run([str(binary("lefthook")), "install"], cwd=repo, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    ok(repo, "init")
    lefthooks = {p.name: p.read_bytes() for p in (repo / ".git" / "hooks").iterdir() if not p.name.endswith(".sample")}
    installed = ok(repo, "hooks", "install")
    assert "pre-commit" not in installed  # lefthook's own hook runs it, left as lefthook wrote it
    assert (repo / ".git" / "hooks" / "pre-commit").read_bytes() == lefthooks["pre-commit"]
    tid = made_id(ok(repo, "thread", "add", "Write the notes", "--check", "file:NOTES.md"), "t")
    blocked = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", f"closes {tid}"], cwd=repo, capture_output=True, text=True
    )
    assert blocked.returncode != 0
    assert f'git-continuity: this commit closes {tid} ("Write the notes"), but 1 of 1' in blocked.stderr
    (repo / "lint.log").unlink(missing_ok=True)
    (repo / "NOTES.md").write_text("notes\n")
    git(repo, "add", "NOTES.md", "lefthook.yml", ".gitignore")
    git(repo, "commit", "-q", "-m", f"Notes; closes {tid}")
    assert json.loads(ok(repo, "status", "--json"))["threads"][0]["status"] == "done"
    assert (repo / "lint.log").read_text() == "lint ran\n"  # lefthook's own hook ran too
