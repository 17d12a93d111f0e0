"""Plain git hooks (``git continuity hooks install``): where they go, how they chain to a hook
that was there and give it back, and what each does in real commits, pushes and rewrites."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import conftest
import pytest
from conftest import CHECKOUT, Ran, commit, cont, git, kept_in, state_refs

HOOKS = ("commit-msg", "post-commit", "pre-push", "post-rewrite")
INSTALLED = (
    "Commits in a donor, archive or preservation place are now refused, and commits that claim to close a thread"
    " checked; uninstall with: git continuity hooks uninstall\n"
)
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
Run = Callable[..., Ran]


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Ran:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)
    return Ran(done.returncode, done.stdout, done.stderr)


class Cli(conftest.Cli):
    def claim_id(self, cwd: Path, text: str) -> str:
        return str({c["text"]: c["id"] for c in json.loads(self.ok(cwd, "status", "--json"))["claims"]}[text])


@pytest.fixture
def gc(inproc: Run) -> Cli:
    return Cli(inproc)


def folder_files(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in a hooks folder with its bytes and mode."""
    return {p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in sorted(folder.iterdir()) if p.is_file()}


PYTHON_LINE = re.compile(r"^python='(.*)'$", re.MULTILINE)
PACKAGE_LINE = re.compile(r"^package='(.*)' #", re.MULTILINE)


def template(name: str, installed: bytes) -> bytes:
    """The hook as it must be installed: our template with @PYTHON@ replaced by the interpreter
    that ran `git continuity hooks install` (this venv's, under whichever of its names)."""
    (python,) = PYTHON_LINE.findall(installed.decode())
    assert Path(python).parent == Path(sys.executable).parent and os.access(python, os.X_OK), python
    # The git_continuity that python imports (CI installs a copy; a test run from the checkout
    # imports the checkout's): a package folder, and the one that command's Python runs.
    (package,) = PACKAGE_LINE.findall(installed.decode())
    assert (Path(package) / "__main__.py").is_file() and Path(package).name == "git_continuity", package
    return (CHECKOUT / "hooks" / name).read_text().replace("@PYTHON@", python).replace("@PACKAGE@", package).encode()


def ours(files: dict[str, tuple[bytes, int]]) -> dict[str, tuple[bytes, int]]:
    """Our four hooks as found in a folder, checked against the templates."""
    found = {name: files[name] for name in HOOKS}
    assert found == {name: (template(name, found[name][0]), 0o755) for name in HOOKS}
    return found


def installed_text(folder: Path, chained: tuple[str, ...] = ()) -> str:
    lines = []
    for name in HOOKS:
        note = f"  (chains to your earlier hook, kept as {name}.pre-continuity)" if name in chained else ""
        lines.append(f"installed {folder / name}{note}\n")
    return "".join(lines) + INSTALLED


def notes_of(cwd: Path, rev: str) -> list[dict[str, Any]]:
    text = git(cwd, "notes", "--ref=continuity", "show", rev, check=False)
    return [json.loads(line) for line in text.splitlines()]


def refusal(label: str, tid: str, title: str, lines: str, total: int = 1) -> str:
    verb = "is" if total == 1 else "are"
    return (
        f'git-continuity: {label} closes {tid} ("{title}"), but {total} of {total} checks {verb} not verified now:\n'
        + lines
        + (
            f"Make the checks pass first, or reword the commit so it does not claim to close {tid} "
            "(git rebase -i, or git commit --amend for the last one).\n"
            if label.startswith("commit ")  # a push: the commit already exists
            else f"Make the checks pass first, or leave the closing claim ({tid}) out of the commit message.\n"
        )
    )


def untagged(cid: str, tag: str) -> str:
    return f"  contradicted  {cid}  tag:{tag}\n                tag {tag} does not exist here\n"


@pytest.fixture
def started(gc: Cli, repo: Path) -> Path:
    gc.ok(repo, "init")
    return repo


# -- where the hooks go ----------------------------------------------------------------------


def test_install_into_the_git_folder(gc: Cli, started: Path) -> None:
    folder = started / ".git" / "hooks"
    samples = folder_files(folder)
    assert all(name.endswith(".sample") for name in samples)
    installed = cont(started, "hooks", "install")
    assert (installed.code, installed.out, installed.err) == (0, installed_text(folder), "")
    files = folder_files(folder)
    ours(files)
    assert set(files) == set(samples) | set(HOOKS)

    tid = gc.thread(started, "Tag it", "tag:v1")
    blocked = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert (blocked.code, blocked.err) == (
        1,
        refusal("this commit", tid, "Tag it", untagged(gc.claim_id(started, "tag:v1"), "v1")),
    )


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_install_respects_core_hooks_path(gc: Cli, started: Path, tmp_path: Path, absolute: bool) -> None:
    folder = (tmp_path / "shared-hooks") if absolute else (started / ".githooks")
    git(started, "config", "core.hooksPath", str(folder) if absolute else ".githooks")
    before = folder_files(started / ".git" / "hooks")
    if not absolute:
        # Inside the work tree, the hooks would become files to commit for everyone.
        refused = cont(started, "hooks", "install")
        assert (refused.code, refused.out, refused.err) == (
            2,
            "",
            f"git-continuity: error: core.hooksPath is {folder}, inside the work tree: the hooks (which name this "
            "machine's Python)\nwould become files to commit for everyone. Use the pre-commit framework's hooks\n"
            "(.pre-commit-hooks.yaml), or install them there anyway with: git continuity hooks install --force\n",
        )
        assert not folder.exists()
    installed = cont(started, "hooks", "install", *([] if absolute else ["--force"]))
    assert (installed.code, installed.out) == (0, installed_text(folder))
    assert set(ours(folder_files(folder))) == set(folder_files(folder))
    assert folder_files(started / ".git" / "hooks") == before

    # git runs them from there.
    tid = gc.thread(started, "Tag it", "tag:v1")
    head = git(started, "rev-parse", "HEAD")
    blocked = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert blocked.code == 1
    assert blocked.err == refusal("this commit", tid, "Tag it", untagged(gc.claim_id(started, "tag:v1"), "v1"))
    assert git(started, "rev-parse", "HEAD") == head

    removed = cont(started, "hooks", "uninstall")
    assert removed.out == "".join(f"removed {folder / name}\n" for name in HOOKS)
    assert folder_files(folder) == {}


EARLIER_COMMIT_MSG = """\
#!/bin/sh
# the team's own commit-msg hook
subject=$(head -n 1 "$1")
echo "commit-msg saw: $subject" >> "$(git rev-parse --git-dir)/earlier.log"
case "$subject" in
  WIP*) echo "earlier hook: no WIP commits on main" >&2; exit 3 ;;
esac
"""
EARLIER_PRE_PUSH = """\
#!/bin/sh
# the team's own pre-push hook
echo "pre-push saw: $1 $2" >> "$(git rev-parse --git-dir)/earlier.log"
cat >> "$(git rev-parse --git-dir)/earlier.log"
"""


EARLIER_PRE_COMMIT = (
    '#!/bin/sh\n# the team\'s own pre-commit hook\necho lint ran >> "$(git rev-parse --git-dir)/lint.log"\n'
)


def test_an_install_over_an_earlier_versions_takes_its_pre_commit_hook_out_and_gives_the_teams_back(
    gc: Cli, started: Path
) -> None:
    """An earlier version installed the place guard as a pre-commit hook, chained to the team's
    own; it is commit-msg's now (git reads the index again after any pre-commit hook). Installing
    again removes ours and puts the team's back, byte for byte, where it runs as before; the
    place guard still refuses a commit in a donor, after the message, and says where it is kept."""
    folder = started / ".git" / "hooks"
    (folder / "pre-commit").write_text(EARLIER_PRE_COMMIT)
    (folder / "pre-commit").chmod(0o750)
    earlier = folder_files(folder)["pre-commit"]
    (folder / "pre-commit").rename(folder / "pre-commit.pre-continuity")
    installed_then = (CHECKOUT / "hooks" / "pre-commit").read_text().replace("@PYTHON@", sys.executable)
    (folder / "pre-commit").write_text(installed_then)  # as an earlier install wrote it, its interpreter filled in
    (folder / "pre-commit").chmod(0o755)

    installed = cont(started, "hooks", "install")
    removed = f"removed {folder / 'pre-commit'} (an earlier version's place guard: the commit-msg hook's now); restored"
    removed += " your earlier hook\n"
    assert (installed.code, installed.out) == (0, installed_text(folder).replace(INSTALLED, removed + INSTALLED))
    files = folder_files(folder)
    assert files["pre-commit"] == earlier and "pre-commit.pre-continuity" not in files
    first = commit(started, "Lint runs")
    assert (started / ".git" / "lint.log").read_text() == "lint ran\n"

    git(started, "branch", "old")
    git(started, "worktree", "add", "-q", str(started.parent / "old"), "old")
    gc.ok(started, "place", "set", "old", "donor", "--why", "the old parser: copy from it")
    refused = run(started.parent / "old", "git", "commit", "--allow-empty", "-m", "Edit the donor")
    kept = started / ".git" / "worktrees" / "old"
    assert (refused.code, refused.err.splitlines()[-1]) == (1, kept_in(kept).rstrip("\n"))
    assert refused.err.startswith(
        "git-continuity: this is a donor checkout (branch old): copy from it, commit nothing."
    )
    assert (kept / "COMMIT_EDITMSG").read_text() == "Edit the donor\n"
    assert git(started.parent / "old", "rev-parse", "HEAD") == first


def test_the_place_guard_starts_python_only_where_a_place_refuses_commits(gc: Cli, started: Path) -> None:
    """A home refuses nothing: with places that are all homes, a commit naming no thread starts
    no Python (the shell reads the state's small file). A donor's commit is refused by Python; a
    merge there is left uncommitted, saying how to undo it. A copy of the pre-commit hook made by
    hand (its interpreter not filled in) is kept by an install."""
    folder = started / ".git" / "hooks"
    (folder / "pre-commit").write_text((CHECKOUT / "hooks" / "pre-commit").read_text())  # copied by hand
    (folder / "pre-commit").chmod(0o755)
    hand = folder_files(folder)["pre-commit"]
    installed = cont(started, "hooks", "install")
    assert (installed.code, installed.out) == (0, installed_text(folder))
    assert folder_files(folder)["pre-commit"] == hand
    (folder / "pre-commit").unlink()
    ran = started / "python-ran"
    fake = started.parent / "python"  # the hook's interpreter, standing in: says it ran, and refuses
    fake.write_text(f'#!/bin/sh\necho "$@" >> {ran}\nexit 1\n')
    fake.chmod(0o755)
    hook = (folder / "commit-msg").read_text()
    (folder / "commit-msg").write_text(PYTHON_LINE.sub(f"python='{fake}'", hook))

    gc.ok(started, "place", "set", "main", "home", "--why", "the work lives here")
    commit(started, "Work in the home")
    assert not ran.exists()

    git(started, "branch", "old")
    gc.ok(started, "place", "set", "old", "donor", "--why", "the old parser: copy from it")
    (folder / "commit-msg").write_text(hook)  # the real interpreter again
    git(started, "switch", "-q", "old")
    refused = run(started, "git", "commit", "-q", "--allow-empty", "-m", "Edit the donor")
    assert (refused.code, refused.err.splitlines()[-1]) == (1, kept_in(started / ".git").rstrip("\n"))
    git(started, "switch", "-q", "main")
    commit(started, "More work in the home")
    git(started, "switch", "-q", "old")
    merged = run(started, "git", "merge", "--no-ff", "-q", "-m", "Merge main", "main")
    merge_msg = started / ".git" / "MERGE_MSG"
    assert merged.code == 1
    assert f"The merge is left uncommitted (its message in {merge_msg}): git merge --abort undoes it." in (
        merged.err.splitlines()
    )
    git(started, "merge", "--abort")
    assert git(started, "status", "--porcelain") == ""


def test_chains_to_an_earlier_hook_and_gives_it_back(gc: Cli, remote_and_clone: tuple[Path, Path]) -> None:
    bare, work = remote_and_clone
    gc.ok(work, "init")
    folder = work / ".git" / "hooks"
    (folder / "commit-msg").write_text(EARLIER_COMMIT_MSG)
    (folder / "commit-msg").chmod(0o755)
    (folder / "pre-push").write_text(EARLIER_PRE_PUSH)
    (folder / "pre-push").chmod(0o750)
    before = folder_files(folder)

    installed = cont(work, "hooks", "install")
    chained = ("commit-msg", "pre-push")
    assert (installed.code, installed.out) == (0, installed_text(folder, chained))
    files = folder_files(folder)
    assert files["commit-msg.pre-continuity"] == before["commit-msg"]
    assert files["pre-push.pre-continuity"] == before["pre-push"]
    ours(files)

    # Installing again changes nothing and does not chain to itself.
    again = cont(work, "hooks", "install")
    assert (again.code, again.out) == (0, installed_text(folder))
    assert folder_files(folder) == files

    # The earlier hook still runs, and its failure still blocks.
    log = work / ".git" / "earlier.log"
    first = commit(work, "Add the login form")
    refused = run(work, "git", "commit", "--allow-empty", "-m", "WIP: half a fix")
    assert (refused.code, refused.out, refused.err) == (1, "", "earlier hook: no WIP commits on main\n")
    assert git(work, "rev-parse", "HEAD") == first
    # Ours runs after it.
    tid = gc.thread(work, "Tag it", "tag:v1")
    blocked = run(work, "git", "commit", "--allow-empty", "-m", f"Tagged; closes {tid}")
    assert (blocked.code, blocked.err) == (
        1,
        refusal("this commit", tid, "Tag it", untagged(gc.claim_id(work, "tag:v1"), "v1")),
    )
    # The earlier pre-push hook gets git's arguments and the refs on its standard input.
    old = git(bare, "rev-parse", "main")
    pushed = run(work, "git", "push", "-q", "origin", "main")
    assert pushed.code == 0, pushed.err
    assert log.read_text() == (
        "commit-msg saw: Add the login form\n"
        "commit-msg saw: WIP: half a fix\n"
        f"commit-msg saw: Tagged; closes {tid}\n"
        f"pre-push saw: origin {bare}\n"
        f"refs/heads/main {first} refs/heads/main {old}\n"
    )

    removed = cont(work, "hooks", "uninstall")
    assert (removed.code, removed.out) == (
        0,
        f"removed {folder / 'commit-msg'}; restored your earlier hook\n"
        f"removed {folder / 'post-commit'}\n"
        f"removed {folder / 'pre-push'}; restored your earlier hook\n"
        f"removed {folder / 'post-rewrite'}\n",
    )
    assert folder_files(folder) == before  # byte for byte, modes included
    nothing = cont(work, "hooks", "uninstall")
    assert (nothing.code, nothing.out) == (0, f"No git-continuity hooks in {folder}.\n")
    assert folder_files(folder) == before


def test_an_earlier_hook_kept_aside_twice_is_not_overwritten(started: Path) -> None:
    folder = started / ".git" / "hooks"
    (folder / "commit-msg").write_text(EARLIER_COMMIT_MSG)
    (folder / "commit-msg.pre-continuity").write_text("#!/bin/sh\n# an older copy\n")
    before = folder_files(folder)
    refused = cont(started, "hooks", "install")
    assert (refused.code, refused.out, refused.err) == (
        2,
        "",
        f"git-continuity: error: {folder / 'commit-msg'} is not ours and {folder / 'commit-msg.pre-continuity'} "
        "exists too; move one of them away first\n",
    )
    assert folder_files(folder) == before


# -- post-commit: the provenance note ----------------------------------------------------------


def test_post_commit_writes_the_provenance_note(gc: Cli, started: Path) -> None:
    objective = "Fix the login loop"
    gc.ok(started, "objective", "set", objective, "--why", "users bounce back to /login")
    tid = gc.thread(started, "Ship the login fix", "tag:v1")
    other = gc.thread(started, "Write the release note", "file:NOTES.md")
    gc.ok(started, "hooks", "install")
    env = {**os.environ, "GIT_CONTINUITY_SESSION": "s-2026-11-30", "GIT_CONTINUITY_AGENT": "claude-code"}
    made = run(started, "git", "commit", "-q", "--allow-empty", "-m", f"Work on {tid}\n\nSee also {other}.", env=env)
    assert (made.code, made.err) == (0, "")
    head = git(started, "rev-parse", "HEAD")
    state = git(started, "rev-parse", "refs/continuity/main")

    (record,) = notes_of(started, head)
    assert STAMP.fullmatch(record.pop("at"))
    assert record == {
        "kind": "provenance",
        "stream": "main",
        "state": state,
        "objective": hashlib.sha256(objective.encode()).hexdigest()[:16],
        "threads": [tid, other],
        "session": "s-2026-11-30",
        "agent": "claude-code",
        "host": socket.gethostname(),
    }
    (line,) = git(started, "notes", "--ref=continuity", "show", head).splitlines()
    assert git(started, "log", "-1", "--notes=continuity", "--format=%s%n%N") == f"Work on {tid}\n{line}"
    assert f"\nNotes (continuity):\n    {line}\n" in git(started, "log", "-1", "--notes=continuity") + "\n"

    shown = cont(started, "show", "HEAD", "--json")
    assert shown.code == 0, shown.err
    assert json.loads(shown.out) == {
        "commit": head,
        "summary": f"Work on {tid}",
        "notes_ref": "refs/notes/continuity",
        "records": [json.loads(line)],
    }
    digest = hashlib.sha256(objective.encode()).hexdigest()[:16]
    at = json.loads(line)["at"]
    assert cont(started, "show").out == (
        f"commit {head}  Work on {tid}\n"
        f"  provenance  made while stream main; state {state[:7]}; objective {digest}; threads {tid}, {other}; "
        f"session s-2026-11-30; agent claude-code; host {socket.gethostname()}; at {at}\n"
    )
    # A commit made before the hooks were installed has no note; show says how one gets there.
    first = git(started, "rev-parse", "HEAD~1")
    assert cont(started, "show", "HEAD~1").out == (
        f"commit {first}  first\n"
        "  no continuity notes (refs/notes/continuity); commits get one while a stream is active "
        "and the hooks are installed\n"
    )


def test_claims_naming_a_commit_are_noted_on_it(gc: Cli, started: Path) -> None:
    """A claim and a thread's check alike: each is a claim that names the commit."""
    head = commit(started, "Add the login form", {"login.html": "<form>\n"})
    gc.ok(started, "claim", "add", "the form is committed", "--check", "commit:HEAD")
    tid = gc.thread(started, "Ship the form", "reachable:HEAD@main")
    claims = {c["text"]: c for c in json.loads(gc.ok(started, "status", "--json"))["claims"]}
    expected = [
        {
            "kind": "claim",
            "stream": "main",
            "claim": claims[text]["id"],
            "text": text,
            "handle": claims[text]["handle"],
            "at": claims[text]["added_at"],
            "by": "Ada Agent <ada@example.com>",
            **({"thread": tid} if claims[text]["thread"] else {}),
        }
        for text in ("the form is committed", "reachable:HEAD@main")
    ]
    assert [c["handle"] for c in expected] == [f"commit:{head}", f"reachable:{head}@refs/heads/main"]
    records = json.loads(cont(started, "show", "--json").out)["records"]
    assert sorted(records, key=lambda r: r["text"]) == sorted(expected, key=lambda r: r["text"])


def test_concurrent_notes_writers_all_land_their_lines(started: Path) -> None:
    """The post-commit hook and commands noting the same commit at once (a commit made while
    another session adds claims about it): every writer's line lands, none is overwritten."""
    head = git(started, "rev-parse", "HEAD")
    writers = []
    for i in range(6):
        env = {**os.environ, "GIT_CONTINUITY_SESSION": f"s-writer-{i}"}
        for args in (["git-continuity-hook", "post-commit"], ["git", "continuity", "claim", "add", f"claim {i}",
                                                               "--check", "commit:HEAD"]):  # fmt: skip
            writers.append(subprocess.Popen(args, cwd=started, env=env, stdin=subprocess.DEVNULL, text=True,
                                            stdout=subprocess.PIPE, stderr=subprocess.PIPE))  # fmt: skip
    for writer in writers:
        _, err = writer.communicate()
        assert (writer.returncode, err) == (0, ""), writer.args
    assert sorted((r["kind"], r.get("session") or r.get("text")) for r in notes_of(started, head)) == sorted(
        [("provenance", f"s-writer-{i}") for i in range(6)] + [("claim", f"claim {i}") for i in range(6)]
    )


def test_a_note_in_a_fanned_out_notes_tree_is_added_to_where_it_is(gc: Cli, started: Path) -> None:
    """git keeps a large notes tree in ab/cdef… folders; a line added to such a note lands in
    that same note, not in a second copy beside it."""
    head = git(started, "rev-parse", "HEAD")

    def plumb(*args: str, stdin: str) -> str:
        return subprocess.run(["git", *args], cwd=started, input=stdin, capture_output=True, text=True).stdout.strip()

    note = plumb("hash-object", "-w", "--stdin", stdin="written by hand\n")
    folder = plumb("mktree", stdin=f"100644 blob {note}\t{head[2:]}\n")
    top = plumb("mktree", stdin=f"040000 tree {folder}\t{head[:2]}\n")
    git(started, "update-ref", "refs/notes/continuity", plumb("commit-tree", top, "-m", "notes", stdin=""))

    gc.ok(started, "claim", "add", "the first commit", "--check", "commit:HEAD")
    assert git(started, "ls-tree", "-r", "--name-only", "refs/notes/continuity") == f"{head[:2]}/{head[2:]}"
    shown = git(started, "notes", "--ref=continuity", "show", head).splitlines()
    assert (len(shown), shown[0]) == (2, "written by hand")  # lines sorted and unique
    assert (json.loads(shown[1])["kind"], json.loads(shown[1])["text"]) == ("claim", "the first commit")
    assert git(started, "rev-parse", "refs/notes/continuity^^{tree}") == top


# -- pre-push: nothing that claims closure reaches a remote unverified -------------------------


def test_pre_push_blocks_an_unverified_closing_commit_made_with_no_verify(
    gc: Cli,
    remote_and_clone: tuple[Path, Path],
) -> None:
    bare, work = remote_and_clone
    gc.ok(work, "init")
    gc.ok(work, "hooks", "install")
    tid = gc.thread(work, "Tag the release", "tag:v1.0")
    cid = gc.claim_id(work, "tag:v1.0")
    commit(work, "Prepare the release", {"VERSION": "1.0\n"})
    git(work, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"Release 1.0; closes {tid}")
    closing = git(work, "rev-parse", "HEAD")
    remote_before = git(bare, "rev-parse", "main")

    blocked = run(work, "git", "push", "origin", "main")
    assert (blocked.code, blocked.out) == (1, "")
    assert blocked.err == (
        refusal(f"commit {closing[:7]}", tid, "Tag the release", untagged(cid, "v1.0"))
        + f"error: failed to push some refs to '{bare}'\n"
    )
    assert git(bare, "rev-parse", "main") == remote_before
    assert json.loads(gc.ok(work, "status", "--json"))["threads"][0]["status"] == "open"

    git(work, "tag", "v1.0")
    pushed = run(work, "git", "push", "origin", "main")
    assert pushed.code == 0, pushed.err
    assert pushed.err.startswith(
        f'git-continuity: {tid} "Tag the release": every check verified now; the thread is done.\nTo {bare}\n'
    )
    assert git(bare, "rev-parse", "main") == closing
    assert json.loads(gc.ok(work, "status", "--json"))["threads"][0]["status"] == "done"


def test_pre_push_sees_every_ref_pushed(gc: Cli, remote_and_clone: tuple[Path, Path]) -> None:
    bare, work = remote_and_clone
    gc.ok(work, "init")
    gc.ok(work, "hooks", "install")
    tid = gc.thread(work, "Tag the release", "tag:v1.0")
    git(work, "checkout", "-q", "-b", "release")
    git(work, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"Release 1.0; closes {tid}")
    closing = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "main")
    commit(work, "Unrelated work")
    remote_before = git(bare, "for-each-ref")

    blocked = run(work, "git", "push", "origin", "main", "release")
    assert (blocked.code, blocked.err) == (
        1,
        refusal(f"commit {closing[:7]}", tid, "Tag the release", untagged(gc.claim_id(work, "tag:v1.0"), "v1.0"))
        + f"error: failed to push some refs to '{bare}'\n",
    )
    assert git(bare, "for-each-ref") == remote_before


def test_pre_push_lets_through_what_closes_nothing(gc: Cli, remote_and_clone: tuple[Path, Path]) -> None:
    bare, work = remote_and_clone
    gc.ok(work, "init")
    gc.ok(work, "hooks", "install")
    tid = gc.thread(work, "Tag the release", "tag:v1.0")
    head = commit(work, f"Progress on {tid}: the changelog")
    pushed = run(work, "git", "push", "-q", "origin", "main")
    assert (pushed.code, pushed.err) == (0, "")
    assert git(bare, "rev-parse", "main") == head


# -- post-rewrite: notes and claims follow amend and rebase ------------------------------------


def test_notes_and_claims_follow_an_amend(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    old = commit(started, "Add the login form", {"login.html": "<form>\n"})
    gc.ok(started, "claim", "add", "the login form is committed", "--check", "commit:HEAD")
    cid = gc.claim_id(started, "the login form is committed")
    carried = notes_of(started, old)
    assert sorted(r["kind"] for r in carried) == ["claim", "provenance"]
    gc.ok(started, "journal", "add", "amending the form")  # the state moves on before the amend
    state = git(started, "rev-parse", "refs/continuity/main")

    amended = run(started, "git", "commit", "-q", "--amend", "-m", "Add the login form (with labels)")
    assert (amended.code, amended.err) == (0, "")
    new = git(started, "rev-parse", "HEAD")
    assert new != old
    records = notes_of(started, new)
    made_now = [r for r in records if r["kind"] == "provenance" and r["state"] == state]
    assert len(made_now) == 1 and STAMP.fullmatch(made_now[0].pop("at"))
    assert made_now[0] == {"kind": "provenance", "stream": "main", "state": state, "objective": None,
                           "threads": [], "host": socket.gethostname()}  # fmt: skip
    expected = [*carried, {"kind": "rewritten", "from": old, "by": "amend"}]
    assert sorted(
        json.dumps(r, sort_keys=True) for r in records if r["kind"] != "provenance" or r["state"] != state
    ) == (sorted(json.dumps(r, sort_keys=True) for r in expected))
    assert notes_of(started, old) == carried  # the old commit keeps its own

    claims = {c["id"]: c for c in json.loads(gc.ok(started, "status", "--json"))["claims"]}
    assert (claims[cid]["handle"], claims[cid]["state"]) == (f"commit:{new}", "verified")
    assert git(started, "log", "-1", "--format=%B", "refs/continuity/main") == (
        f"rewrite (amend): claims follow {old[:7]} -> {new[:7]}\n\n{cid}: commit:{old} -> commit:{new}\n\n"
        f"Host: {socket.gethostname()}"
    )


def test_notes_and_claims_follow_a_rebase(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    git(started, "checkout", "-q", "-b", "feature")
    first = commit(started, "Add the login form", {"login.html": "<form>\n"})
    gc.ok(started, "claim", "add", "the form is on the feature branch", "--check", "reachable:HEAD@feature")
    cid = gc.claim_id(started, "the form is on the feature branch")
    second = commit(started, "Add the labels", {"login.html": "<form><label>\n"})
    before = {first: notes_of(started, first), second: notes_of(started, second)}
    git(started, "checkout", "-q", "main")
    commit(started, "Meanwhile on main", {"README": "hello again\n"})
    git(started, "checkout", "-q", "feature")
    gc.ok(started, "journal", "add", "rebasing on main")  # the state moves on before the rebase
    state = git(started, "rev-parse", "refs/continuity/main")

    rebased = run(started, "git", "rebase", "main")
    assert rebased.code == 0, rebased.err
    new_second = git(started, "rev-parse", "HEAD")
    new_first = git(started, "rev-parse", "HEAD~1")
    for old, new in ((first, new_first), (second, new_second)):
        records = notes_of(started, new)
        # The pick itself got a provenance note (git runs post-commit for picks)...
        made_now = [r for r in records if r["kind"] == "provenance" and r["state"] == state]
        assert len(made_now) == 1, records
        # ...and everything the old commit had came along, with a record of the rewrite.
        expected = [*before[old], {"kind": "rewritten", "from": old, "by": "rebase"}]
        assert sorted(json.dumps(r, sort_keys=True) for r in records if r not in made_now) == sorted(
            json.dumps(r, sort_keys=True) for r in expected
        )
    claims = {c["id"]: c for c in json.loads(gc.ok(started, "status", "--json"))["claims"]}
    assert (claims[cid]["handle"], claims[cid]["state"]) == (f"reachable:{new_first}@refs/heads/feature", "verified")
    assert git(started, "log", "-1", "--format=%B", "refs/continuity/main") == (
        f"rewrite (rebase): claims follow {first[:7]} -> {new_first[:7]}, {second[:7]} -> {new_second[:7]}\n\n"
        f"{cid}: reachable:{first}@refs/heads/feature -> "
        f"reachable:{new_first}@refs/heads/feature\n\n"
        f"Host: {socket.gethostname()}"
    )


# -- bad places to run in --------------------------------------------------------------------


def test_hooks_in_a_repository_that_never_ran_init_pass_quietly(gc: Cli, remote_and_clone: tuple[Path, Path]) -> None:
    bare, work = remote_and_clone
    gc.ok(work, "hooks", "install")
    for args in (
        ("commit", "--allow-empty", "-m", "Fix login; closes t-k7m2qx"),
        ("commit", "--allow-empty", "-m", "Plain work"),
        ("commit", "--amend", "--allow-empty", "-m", "Plain work, amended"),
        ("push", "-q", "origin", "main"),
    ):
        done = run(work, "git", *args)
        assert (done.code, done.err) == (0, ""), args
    assert git(bare, "rev-parse", "main") == git(work, "rev-parse", "HEAD")
    assert git(work, "for-each-ref", "refs/continuity/", "refs/notes/") == ""
    assert not (work / ".git" / "continuity").exists()


REFUSED_STREAM = (
    "git-continuity: error: stream name 'main~1' (from GIT_CONTINUITY_STREAM) is not usable: letters, digits, '-',"
    " '_' and inner '.' only,"
    " not ending in .lock (one ref name each, e.g. agent-b)\n"
)


@pytest.mark.parametrize("value", ["", "main~1"], ids=["empty", "not-a-stream-name"])
def test_the_stream_variable_means_the_same_to_hooks_and_commands(gc: Cli, started: Path, value: str) -> None:
    """The hooks read GIT_CONTINUITY_STREAM as the commands do: empty counts as unset, and a
    name the commands refuse (main~1, which git itself would take for the state's parent) the
    hooks refuse in the same words, writing nothing (a commit that names no thread is made)."""
    tid = gc.thread(started, "Tag it", "tag:v1")  # a second state commit: main~1 exists for git
    cid = gc.claim_id(started, "tag:v1")
    gc.ok(started, "hooks", "install")
    before = state_refs(started)
    env = {**os.environ, "GIT_CONTINUITY_STREAM": value}
    status = run(started, "git", "continuity", "status", "--json", env=env)
    made = run(started, "git", "commit", "-q", "--allow-empty", "-m", "Plain work", env=env)
    closing = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}", env=env)
    if value:
        assert (status.code, status.out, status.err) == (2, "", REFUSED_STREAM)
        assert (made.code, made.out, made.err) == (0, "", REFUSED_STREAM)  # made, but not noted
        assert notes_of(started, "HEAD") == []
        assert (closing.code, closing.err) == (1, REFUSED_STREAM)
    else:
        assert (status.code, json.loads(status.out)["stream"]) == (0, "main")
        assert (made.code, made.out, made.err) == (0, "", "")
        assert [(r["kind"], r["stream"]) for r in notes_of(started, "HEAD")] == [("provenance", "main")]
        assert (closing.code, closing.err) == (1, refusal("this commit", tid, "Tag it", untagged(cid, "v1")))
    assert git(started, "log", "-1", "--format=%s") == "Plain work"
    assert state_refs(started) == before


def test_the_hook_entry_is_one_hidden_command(started: Path) -> None:
    """git's hooks run `git continuity hook-impl HOOK`, and git-continuity-hook is its alias:
    one error handler, one exit status; the command list does not show it."""
    hooks = (
        "pre-commit, commit-msg FILE, post-commit, pre-push REMOTE [URL], post-rewrite amend|rebase, state, "
        "agent claude|codex session-start|pre-compact|stop|session-end"
    )
    for args in (["git", "continuity", "hook-impl", "pre-rebase"], ["git-continuity-hook", "pre-rebase"]):
        done = run(started, *args)
        assert (done.code, done.out, done.err) == (
            2,
            "",
            f"git-continuity: error: no hook 'pre-rebase'; the hooks are: {hooks}\n",
        )
    listed = run(started, "git-continuity", "--help")
    assert (listed.code, "<command>" in listed.out, "hook-impl" in listed.out) == (0, True, False)
    for name in HOOKS:
        assert '"$python" -m git_continuity hook-impl "$hook" "$@"' in (CHECKOUT / "hooks" / name).read_text()


def test_hooks_from_a_linked_worktree(gc: Cli, started: Path, tmp_path: Path) -> None:
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Tag it", "tag:v1")
    cid = gc.claim_id(started, "tag:v1")
    linked = tmp_path / "linked"
    git(started, "worktree", "add", "-q", "-b", "side", str(linked))
    state = git(started, "rev-parse", "refs/continuity/main")

    blocked = run(linked, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert (blocked.code, blocked.err) == (1, refusal("this commit", tid, "Tag it", untagged(cid, "v1")))
    made = run(linked, "git", "commit", "-q", "--allow-empty", "-m", f"Side work for {tid}")
    assert (made.code, made.err) == (0, "")
    head = git(linked, "rev-parse", "HEAD")
    (record,) = notes_of(started, head)  # the notes are shared with the main checkout
    assert (record["kind"], record["state"], record["threads"]) == ("provenance", state, [tid])
    assert json.loads(cont(linked, "show", "--json").out)["records"] == [record]
    assert git(started, "rev-parse", "refs/continuity/main") == state

    git(started, "tag", "v1")
    closed = run(linked, "git", "commit", "-q", "--allow-empty", "-m", f"Tagged; closes {tid}")
    assert (closed.code, closed.err) == (
        0,
        f'git-continuity: {tid} "Tag it": every check verified now; the thread is done.\n',
    )
    assert json.loads(gc.ok(started, "status", "--json"))["threads"][0]["status"] == "done"


def test_a_command_check_runs_in_the_worktree_it_is_judged_from(gc: Cli, started: Path, tmp_path: Path) -> None:
    gc.ok(started, "hooks", "install")
    command = "test -f side.txt"
    tid = gc.thread(started, "The side file is there", f"cmd:{command}")
    conftest.approve(started, command)
    linked = tmp_path / "linked"
    git(started, "worktree", "add", "-q", "-b", "side", str(linked))
    commit(linked, "Add the side file", {"side.txt": "side\n"})

    # The trust store is shared by the worktrees (it lives in the common git folder).
    here = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert here.code == 1 and "contradicted" in here.err and "exit 1 in " in here.err
    there = run(linked, "git", "commit", "-q", "--allow-empty", "-m", f"closes {tid}")
    assert (there.code, there.err) == (
        0,
        f'git-continuity: {tid} "The side file is there": every check verified now; the thread is done.\n',
    )
    tree = git(linked, "rev-parse", "HEAD^{tree}")
    (claim,) = json.loads(gc.ok(linked, "status", "--json"))["claims"]
    assert re.fullmatch(rf"exit 0 in \d+\.\ds on work tree {tree[:7]}", claim["observed"]), claim


def test_hooks_with_a_detached_head(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Tag it", "tag:v1")
    cid = gc.claim_id(started, "tag:v1")
    git(started, "checkout", "-q", "--detach")
    head = git(started, "rev-parse", "HEAD")
    blocked = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    assert (blocked.code, blocked.err) == (1, refusal("this commit", tid, "Tag it", untagged(cid, "v1")))
    assert git(started, "rev-parse", "HEAD") == head
    made = run(started, "git", "commit", "-q", "--allow-empty", "-m", f"Detached work on {tid}")
    assert (made.code, made.err) == (0, "")
    (record,) = notes_of(started, "HEAD")
    assert (record["kind"], record["threads"]) == ("provenance", [tid])
    assert git(started, "symbolic-ref", "-q", "HEAD", check=False) == ""


def test_a_closing_commit_replayed_by_a_rebase(gc: Cli, remote_and_clone: tuple[Path, Path]) -> None:
    """git runs no commit-msg hook for the commits a rebase picks, so a closing claim made with
    --no-verify is replayed; the state is not corrupted, and the push guard still holds."""
    bare, work = remote_and_clone
    gc.ok(work, "init")
    gc.ok(work, "hooks", "install")
    tid = gc.thread(work, "Tag it", "tag:v1")
    cid = gc.claim_id(work, "tag:v1")
    git(work, "checkout", "-q", "-b", "feature")
    git(work, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"Done; closes {tid}")
    old = git(work, "rev-parse", "HEAD")
    git(work, "checkout", "-q", "main")
    commit(work, "Meanwhile on main", {"README": "hello again\n"})
    git(work, "checkout", "-q", "feature")
    state = git(work, "rev-parse", "refs/continuity/main")

    rebased = run(work, "git", "rebase", "main")
    assert rebased.code == 0, rebased.err
    new = git(work, "rev-parse", "HEAD")
    assert (git(work, "log", "-1", "--format=%s"), new != old) == (f"Done; closes {tid}", True)
    # No claim named the old commit, so the rewrite left the state alone; it is well-formed.
    assert git(work, "rev-parse", "refs/continuity/main") == state
    checked = cont(work, "check")
    assert (checked.code, checked.out) == (0, "The state is well-formed; every done thread still holds.\n")
    assert json.loads(gc.ok(work, "status", "--json"))["threads"][0]["status"] == "open"
    assert {"kind": "rewritten", "from": old, "by": "rebase"} in notes_of(work, new)

    blocked = run(work, "git", "push", "origin", "feature")
    assert blocked.code == 1
    assert blocked.err == (
        refusal(f"commit {new[:7]}", tid, "Tag it", untagged(cid, "v1"))
        + f"error: failed to push some refs to '{bare}'\n"
    )
    assert git(bare, "branch", "--list", "feature") == ""


def test_a_closing_commit_made_during_a_rebase_is_blocked(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Tag it", "tag:v1")
    cid = gc.claim_id(started, "tag:v1")
    commit(started, "Second", {"b": "b\n"})
    commit(started, "Third", {"c": "c\n"})
    head = git(started, "rev-parse", "HEAD")
    state = git(started, "rev-parse", "refs/continuity/main")
    before = state_refs(started)

    # `rebase -x` runs a command after each pick; this one commits a false closure.
    stopped = run(
        started, "git", "rebase", "HEAD~2", "--force-rebase", "-x", f"git commit --allow-empty -m 'closes {tid}'"
    )
    assert stopped.code == 1
    progress, _, said = stopped.err.rpartition("\x1b[K")
    assert progress.startswith("Rebasing (1/4)")
    assert said.startswith(
        f"Executing: git commit --allow-empty -m 'closes {tid}'\n"
        + refusal("this commit", tid, "Tag it", untagged(cid, "v1"))
        + f"warning: execution failed: git commit --allow-empty -m 'closes {tid}'\n"
    )
    assert (started / ".git" / "rebase-merge").is_dir()  # git stopped in the middle of the rebase
    assert git(started, "log", "--format=%s", "-3") == "Second\nfirst"  # the exec's commit was not made
    assert state_refs(started) == before
    assert cont(started, "check").code == 0

    git(started, "rebase", "--abort")
    assert git(started, "rev-parse", "HEAD") == head
    assert git(started, "rev-parse", "refs/continuity/main") == state


@pytest.mark.parametrize("spelled", [str.upper, str.title])
def test_a_thread_id_closes_whatever_its_case(
    gc: Cli, remote_and_clone: tuple[Path, Path], spelled: Callable[[str], str]
) -> None:
    """`Closes T-Q24H6Y` names the same thread as `closes t-q24h6y`: commit-msg and pre-push
    both judge it, and the thread's id is recorded as the state spells it."""
    bare, work = remote_and_clone
    gc.ok(work, "init")
    gc.ok(work, "hooks", "install")
    tid = gc.thread(work, "Tag the release", "tag:v1.0")
    cid = gc.claim_id(work, "tag:v1.0")
    named = spelled(tid)
    assert named != tid

    refused = run(work, "git", "commit", "-q", "--allow-empty", "-m", f"Release 1.0; Closes {named}")
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == refusal("this commit", tid, "Tag the release", untagged(cid, "v1.0"))

    git(work, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"Release 1.0; Closes {named}")
    closing = git(work, "rev-parse", "HEAD")
    remote_before = git(bare, "rev-parse", "main")
    blocked = run(work, "git", "push", "origin", "main")
    assert (blocked.code, blocked.err) == (
        1,
        refusal(f"commit {closing[:7]}", tid, "Tag the release", untagged(cid, "v1.0"))
        + f"error: failed to push some refs to '{bare}'\n",
    )
    assert git(bare, "rev-parse", "main") == remote_before
    assert json.loads(gc.ok(work, "status", "--json"))["threads"][0]["status"] == "open"


def test_a_commit_closing_two_threads_closes_both_or_neither(gc: Cli, started: Path) -> None:
    """All or nothing: when one named thread does not verify, the commit is refused and the
    other, though its checks verify, stays open (the commit that would close it never lands)."""
    gc.ok(started, "hooks", "install")
    failing = gc.thread(started, "Tag the release", "tag:v1.0")
    cid = gc.claim_id(started, "tag:v1.0")
    holding = gc.thread(started, "Keep the readme", "file:README")
    head = git(started, "rev-parse", "HEAD")

    refused = run(started, "git", "commit", "-q", "--allow-empty", "-m", f"Release; closes {holding} and {failing}")
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == (
        f'git-continuity: {holding} "Keep the readme": every check verified now, but it stays open:'
        " a commit closes its threads only when all of them verify.\n"
        + refusal("this commit", failing, "Tag the release", untagged(cid, "v1.0"))
    )
    assert git(started, "rev-parse", "HEAD") == head
    threads = {t["id"]: t["status"] for t in json.loads(gc.ok(started, "status", "--json"))["threads"]}
    assert threads == {failing: "open", holding: "open"}


# -- closing by commit message is exact: judged on the commit being made, recorded once it exists


def threads_of(gc: Cli, cwd: Path) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for t in json.loads(gc.ok(cwd, "status", "--json"))["threads"]}


def done_line(tid: str, title: str) -> str:
    return f'git-continuity: {tid} "{title}": every check verified now; the thread is done.\n'


def test_a_commit_that_fails_after_commit_msg_closes_nothing(gc: Cli, started: Path) -> None:
    """The signature fails after commit-msg passed: no commit, so the thread stays open; a
    commit made afterwards with --no-verify (no commit-msg runs) does not take up what the
    failed one left for post-commit."""
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Ship it", "commit:HEAD")
    head, before = git(started, "rev-parse", "HEAD"), state_refs(started)
    signed = ["-c", "commit.gpgsign=true", "-c", "gpg.program=false"]
    failed = run(started, "git", *signed, "commit", "--allow-empty", "-m", f"Ship it; closes {tid}")
    assert (failed.code, failed.out) == (128, "")
    assert failed.err == "error: gpg failed to sign the data\nfatal: failed to write commit object\n"
    assert git(started, "rev-parse", "HEAD") == head
    assert state_refs(started) == before
    assert threads_of(gc, started)[tid]["status"] == "open"

    made = run(started, "git", "commit", "-q", "--no-verify", "--allow-empty", "-m", f"Ship it; closes {tid}")
    assert (made.code, made.err) == (0, "")
    assert threads_of(gc, started)[tid]["status"] == "open"
    assert state_refs(started) == before
    assert not (started / ".git" / "continuity" / "closing.json").exists()


def test_a_commit_that_adds_the_file_a_thread_checks_closes_it(gc: Cli, tmp_path: Path) -> None:
    """file:README is judged on the commit being made, not on HEAD; the close is recorded by
    post-commit and names the commit (closed_by)."""
    repo = tmp_path / "bare-start"
    git(tmp_path, "init", "-q", str(repo))
    git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    gc.ok(repo, "init")
    gc.ok(repo, "hooks", "install")
    tid = gc.thread(repo, "Write the readme", "file:README")
    cid = gc.claim_id(repo, "file:README")
    (repo / "README").write_text("hello\n")
    git(repo, "add", "README")
    tree = git(repo, "write-tree")

    made = run(repo, "git", "commit", "-q", "-m", f"Add the readme; closes {tid}")
    assert (made.code, made.out, made.err) == (0, "", done_line(tid, "Write the readme"))
    head = git(repo, "rev-parse", "HEAD")
    thread = threads_of(gc, repo)[tid]
    assert (thread["status"], thread["closed_by"]) == ("done", head)
    assert git(repo, "log", "-1", "--format=%B", "refs/continuity/main") == (
        f"thread close {tid}: Write the readme\n\nclosed by commit {head}; every check verified on its tree; "
        f"evidence recorded\n\nHost: {socket.gethostname()}"
    )
    (path,) = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/evidence/").split()
    evidence = json.loads(git(repo, "show", f"refs/continuity/main:{path}"))
    assert (evidence["claim"], evidence["result"], evidence["observed"]) == (
        cid,
        "verified",
        f"README exists in the commit being made (tree {tree[:7]})",
    )
    shown = cont(repo, "thread", "show", tid)
    assert re.search(rf"^  closed  \S+ \S+ UTC \(.*\) by commit {head[:7]}$", shown.out, re.MULTILINE), shown.out
    status = cont(repo, "status")
    assert f"  done       {tid}  Write the readme  (1 of 1 checks verified; closed by {head[:7]})\n" in status.out
    assert not (repo / ".git" / "continuity" / "closing.json").exists()


@pytest.mark.parametrize("how", [["-a"], ["--", "README"]], ids=["commit -a", "commit <paths>"])
def test_the_tree_judged_is_the_one_git_commits_from_a_temporary_index(gc: Cli, started: Path, how: list[str]) -> None:
    """commit -a and commit PATHS commit a temporary index (GIT_INDEX_FILE): README, deleted
    in the work tree only, is still in the index, but not in what those commits are made of."""
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Keep the readme", "file:README")
    cid = gc.claim_id(started, "file:README")
    (started / "README").unlink()
    head, before = git(started, "rev-parse", "HEAD"), state_refs(started)
    refused = run(started, "git", "commit", "-m", f"Drop the readme; closes {tid}", *how)
    temporary = refused.err.split("(tree ")[1][:7] if "(tree " in refused.err else "?"
    assert (refused.code, refused.err) == (
        1,
        refusal(
            "this commit",
            tid,
            "Keep the readme",
            f"  contradicted  {cid}  file:README\n"
            f"                README is not in the commit being made (tree {temporary})\n",
        ),
    )
    assert (git(started, "rev-parse", "HEAD"), state_refs(started)) == (head, before)
    # The index itself still holds README: a commit of it closes the thread.
    made = run(started, "git", "commit", "-q", "--allow-empty", "-m", f"Keep it; closes {tid}")
    assert (made.code, made.err) == (0, done_line(tid, "Keep the readme"))
    assert threads_of(gc, started)[tid]["closed_by"] == git(started, "rev-parse", "HEAD")
    assert git(started, "ls-tree", "--name-only", "HEAD") == "README"


def test_an_amend_that_adds_the_file_closes_the_thread_naming_the_new_commit(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    old = commit(started, "Start the notes")
    tid = gc.thread(started, "Write the notes", "file:NOTES.md")
    (started / "NOTES.md").write_text("notes\n")
    git(started, "add", "NOTES.md")
    amended = run(started, "git", "commit", "-q", "--amend", "-m", f"Write the notes; closes {tid}")
    assert (amended.code, amended.err) == (0, done_line(tid, "Write the notes"))
    new = git(started, "rev-parse", "HEAD")
    assert new != old
    thread = threads_of(gc, started)[tid]
    assert (thread["status"], thread["closed_by"]) == ("done", new)


def test_a_check_that_holds_only_once_pushed_is_refused_with_the_order_that_works(
    gc: Cli, remote_and_clone: tuple[Path, Path]
) -> None:
    bare, work = remote_and_clone
    gc.ok(work, "init")
    gc.ok(work, "hooks", "install")
    fix = commit(work, "Fix the login loop", {"login.py": "LOOP = False\n"})
    tid = gc.thread(work, "Ship the fix", "pushed:HEAD@origin/main")
    cid = gc.claim_id(work, "pushed:HEAD@origin/main")
    base = git(bare, "rev-parse", "main")
    before = state_refs(work)
    refused = run(work, "git", "commit", "--allow-empty", "-m", f"Ship the fix; closes {tid}")
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == (
        f'git-continuity: this commit closes {tid} ("Ship the fix"), but 1 of 1 checks is not verified now:\n'
        f"  contradicted  {cid}  pushed:HEAD@origin/main\n"
        f"                pushed:{fix[:12]}…@origin/main\n"
        f"                origin/main is at {base[:7]} (as cloned just now, not fetched since), "
        f"which does not contain {fix[:7]}\n"
        f"{tid} checks what holds only once this commit has left the machine (pushed:): leave the closing claim "
        f"out, commit, push, then git continuity thread close {tid}\n"
    )
    assert (git(work, "rev-parse", "HEAD"), state_refs(work)) == (fix, before)
    # The order that works.
    assert run(work, "git", "commit", "-q", "--allow-empty", "-m", f"Ship the fix for {tid}").code == 0
    assert run(work, "git", "push", "-q", "origin", "main").code == 0
    closed = cont(work, "thread", "close", tid)
    assert closed.code == 0, closed.out
    assert threads_of(gc, work)[tid]["status"] == "done"


def test_a_command_check_runs_only_on_what_is_being_committed(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    command = "test -f README"
    tid = gc.thread(started, "The readme is there", f"cmd:{command}")
    cid = gc.claim_id(started, f"cmd:{command}")
    conftest.approve(started, command)
    (started / "scratch.txt").write_text("not committed\n")
    index = git(started, "write-tree")
    refused = run(started, "git", "commit", "--allow-empty", "-m", f"closes {tid}")
    worktree = refused.err.split("the work tree (")[1][:7] if "the work tree (" in refused.err else "?"
    assert (refused.code, refused.err) == (
        1,
        f'git-continuity: this commit closes {tid} ("The readme is there"), but 1 of 1 checks is not verified now:\n'
        f"  unknown  {cid}  cmd:{command}\n"
        f"           the work tree ({worktree}) is not what is being committed (tree {index[:7]}), so running it "
        "here would not test the commit: commit or stash the rest first (git stash push --keep-index "
        "--include-untracked)\n"
        f"Make the checks pass first, or leave the closing claim ({tid}) out of the commit message.\n",
    )
    (started / "scratch.txt").unlink()
    made = run(started, "git", "commit", "-q", "--allow-empty", "-m", f"closes {tid}")
    assert (made.code, made.err) == (0, done_line(tid, "The readme is there"))


def test_a_stale_or_broken_hand_off_is_dropped(gc: Cli, started: Path) -> None:
    gc.ok(started, "hooks", "install")
    tid = gc.thread(started, "Keep the readme", "file:README")
    handoff = started / ".git" / "continuity" / "closing.json"
    before = state_refs(started)
    for text in ("not json", json.dumps({"threads": [tid]}), "[]"):
        handoff.write_text(text)
        made = run(started, "git", "commit", "-q", "--no-verify", "--allow-empty", "-m", f"closes {tid}")
        assert (made.code, made.err) == (0, "")
        assert not handoff.exists()
    assert state_refs(started) == before
    assert threads_of(gc, started)[tid]["status"] == "open"
