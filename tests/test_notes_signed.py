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


def notes_commit(repo: Path, files: dict[str, str], message: str) -> str:
    """A commit on top of the notes ref, unsigned, made with git plumbing: its tree is ``files``."""
    index = {**__import__("os").environ, "GIT_INDEX_FILE": str(repo.parent / "notes-index")}
    parent = git(repo, "rev-parse", NOTES)
    for path, text in files.items():
        blob = subprocess.run(
            ["git", "hash-object", "-w", "--stdin"], cwd=repo, input=text, capture_output=True, text=True, check=True
        ).stdout.strip()
        subprocess.run(
            ["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], cwd=repo, env=index, check=True
        )
    tree = subprocess.run(["git", "write-tree"], cwd=repo, env=index, capture_output=True, text=True, check=True)
    made = git(repo, "commit-tree", tree.stdout.strip(), "-p", parent, "-m", message)
    Path(index["GIT_INDEX_FILE"]).unlink()
    return made


def test_notes_no_trusted_key_signed_are_neither_taken_in_nor_sent(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """#35.10: a garbage commit or an unsigned one on the remote's notes is left out of a pull
    (counted, kept in the tracking ref), not merged; an unsigned notes commit here is not
    pushed (the state is); the notes' own lane is never called a branch of someone's."""
    remote, work = remote_and_clone
    ok(work, "init")
    ok(work, "ci", "run", "--", "true")  # a signed note on HEAD
    ok(work, "push")
    good = git(work, "rev-parse", NOTES)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    ok(other, "pull")

    # Anyone who can push puts a commit that is no notes commit on the remote's notes.
    garbage = notes_commit(other, {"hello.txt": "not a note\n"}, "garbage")
    git(other, "push", "-q", "origin", f"{garbage}:{NOTES}")
    pulled = subprocess.run(["git", "continuity", "pull"], cwd=work, capture_output=True, text=True)
    assert (pulled.returncode, pulled.stderr) == (1, "")
    assert pulled.stdout.splitlines()[-1] == (
        "  notes: nothing taken in: left out 1 change (kept in refs/notes/continuity-remotes/origin): 1 not a notes"
        ' commit (author field, not verified: "Ada Agent <ada@example.com>")'
    )
    assert git(work, "rev-parse", NOTES) == good

    # An unsigned notes commit (a note git itself wrote, no signing) is left out too.
    git(other, "push", "-q", "-f", "origin", f"{good}:{NOTES}")
    git(other, "update-ref", NOTES, good)
    git(other, "notes", "--ref", "continuity", "add", "-f", "-m", '{"note": "unsigned"}', "HEAD")
    git(other, "push", "-q", "origin", NOTES)
    pulled = subprocess.run(["git", "continuity", "pull"], cwd=work, capture_output=True, text=True)
    assert pulled.returncode == 1
    assert (
        "notes: nothing taken in: left out 1 change (kept in refs/notes/continuity-remotes/origin): 1 not signed"
        in (pulled.stdout)
    )
    assert git(work, "rev-parse", NOTES) == good

    # Here, an unsigned notes commit is kept back: the state goes, the notes do not.
    git(work, "notes", "--ref", "continuity", "add", "-f", "-m", '{"note": "unsigned here"}', "HEAD")
    unsigned = git(work, "rev-parse", "--short=7", NOTES)
    ok(work, "journal", "add", "the state still travels")
    pushed = subprocess.run(["git", "continuity", "push"], cwd=work, capture_output=True, text=True)
    assert pushed.returncode == 1, pushed.stderr
    assert f"  notes: not sent, kept here: {unsigned} is not signed;" in pushed.stdout
    assert "a branch of someone's" not in pushed.stdout + pushed.stderr
    assert git(work, "ls-remote", str(remote), "refs/continuity/main").split()[0] == git(
        work, "rev-parse", "refs/continuity/main"
    )
    assert git(work, "ls-remote", str(remote), NOTES).split()[0] != git(work, "rev-parse", NOTES)
