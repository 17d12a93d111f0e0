"""The post-commit hook's shell writes a commit's note with git alone, and signs the notes
commit by git's own means (``git commit-tree -S``), so git itself verifies it; a note the
shell wrote unsigned is reported by doctor (#26)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git, signing_key
from test_signing import allowed, ok

NOTES = "refs/notes/continuity"
SHELL_MADE = "Notes added by 'git notes add'"  # git notes' own message: Python's is "notes: add to …"


def fingerprint() -> str:
    pub = signing_key().with_name("signing_ed25519.pub")
    listed = subprocess.run(["ssh-keygen", "-l", "-f", str(pub)], capture_output=True, text=True, check=True)
    return listed.stdout.split()[1]


def shown(repo: Path) -> str:
    """git log --show-signature of the newest notes commit, checked against the keys trusted here."""
    return git(
        repo, "-c", f"gpg.ssh.allowedSignersFile={allowed()}", "log", "-1", "--show-signature", "--format=%s", NOTES
    )


def test_the_shell_hook_signs_the_notes_commit_it_makes_and_an_unsigned_one_is_reported(repo: Path) -> None:
    ok(repo, "init")
    ok(repo, "hooks", "install")
    git(repo, "commit", "-q", "--allow-empty", "-m", "a commit naming no thread")
    assert git(repo, "log", "-1", "--format=%s", NOTES) == SHELL_MADE  # the shell made it, not Python
    assert git(repo, "notes", "--ref", "continuity", "show", "HEAD").startswith('{"at":"')
    assert shown(repo).splitlines() == [
        f'Good "git" signature for ada@example.com with ED25519 key {fingerprint()}',
        SHELL_MADE,
    ]
    assert "nothing wrong" in ok(repo, "doctor")

    # Anything holding .git can tell the shell not to sign (the line it reads is under .git):
    # the note it then writes is unsigned, and doctor says so.
    line = repo / ".git" / "continuity" / "provenance.line"
    line.write_text("\n".join(line.read_text().split("\n")[:4]) + "\noff\n")
    git(repo, "commit", "-q", "--allow-empty", "-m", "another commit naming no thread")
    assert git(repo, "log", "-1", "--format=%s", NOTES) == SHELL_MADE
    assert shown(repo) == SHELL_MADE  # no signature line: git finds none
    tip = git(repo, "rev-parse", "--short=7", NOTES)
    when = git(repo, "log", "-1", "--format=%cd", "--date=format:%Y-%m-%d %H:%M", NOTES)
    done = subprocess.run(["git", "continuity", "doctor"], cwd=repo, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-3:] == [
        "Advice (not problems)",
        f'  notes    {NOTES}: commit {tip} is not signed; subject as its writer gave it: "{SHELL_MADE}", author field,'
        f' not verified: "Ada Agent <ada@example.com>", {when}',
        "           git continuity hooks install (its post-commit hook signs the notes it writes); the next note is"
        f" signed on top of it. Check with: git log --show-signature {NOTES}",
    ]

    # The next note Python or the shell writes is signed again on top of it.
    ok(repo, "journal", "add", "a state write leaves the line again")
    git(repo, "commit", "-q", "--allow-empty", "-m", "a third commit")
    assert shown(repo).splitlines()[0].startswith('Good "git" signature for ada@example.com')
    assert "nothing wrong" in ok(repo, "doctor")
