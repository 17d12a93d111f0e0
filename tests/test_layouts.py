"""Work-tree layouts people use (#35): sparse checkouts, and a git folder apart from its work
tree (``GIT_DIR`` with ``GIT_WORK_TREE``, or ``core.worktree``), as dotfile managers and some
CI set them. Each is made by real git and read as git reads it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from conftest import by_a_person, claude_hook, commit, git, stop_hook
from test_clone_shapes import ok

EMAIL = "ada@example.com"


def checks_of(where: Path, env: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    threads = json.loads(ok(where, "status", "--json", env=env))["threads"]
    return [(c["handle"], c["state"], c["observed"]) for t in threads for c in t["checks"]]


# -- sparse checkouts ---------------------------------------------------------------------------


def test_clean_in_a_sparse_checkout_counts_what_git_status_counts(tmp_path: Path) -> None:
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"app/main.py": "x\n", "docs/guide.md": "g\n", "docs/more.md": "m\n", "top.txt": "t\n"})
    git(work, "sparse-checkout", "set", "app")
    assert not (work / "docs").exists()
    assert git(work, "status", "--porcelain") == ""
    ok(work, "init")
    ok(work, "thread", "add", "Tidy", "--check", "clean:")
    assert checks_of(work) == [("clean:", "verified", "the work tree has no uncommitted changes")]

    (work / "app" / "main.py").write_text("y\n")
    assert checks_of(work) == [("clean:", "contradicted", "1 uncommitted change: app/main.py")]


def test_reading_a_sparse_checkout_never_writes_its_index(tmp_path: Path) -> None:
    """git status, which a read asks in a sparse checkout, rewrites the index to refresh what it
    found stale, taking index.lock: an agent's own `git add` at that moment failed. Asked as
    a tool running in the background asks it (--no-optional-locks), the index stays as it was."""
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"app/main.py": "x\n", "docs/guide.md": "g\n"})
    git(work, "sparse-checkout", "set", "app")
    ok(work, "init")
    ok(work, "thread", "add", "Tidy", "--check", "clean:")
    index = work / ".git" / "index"
    before = index.read_bytes(), index.stat().st_mtime_ns
    os.utime(work / "app" / "main.py", (1_700_000_000, 1_700_000_000))  # stale in the index, same text
    assert checks_of(work) == [("clean:", "verified", "the work tree has no uncommitted changes")]
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


def test_a_command_check_verified_in_a_sparse_checkout_closes_its_thread_by_commit(tmp_path: Path) -> None:
    """The work tree a `cmd:` check ran on, in a sparse checkout with nothing changed, is the
    tree being committed: the files outside the sparse set are in both, as git has them. Read
    by libgit2, which knows no sparse checkout, they were missing from the first, and the
    commit that closed the thread was refused, telling the user to stash what was not there."""
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"src/main.c": "int main;\n", "docs/guide.md": "g\n", "top.txt": "t\n"})
    git(work, "sparse-checkout", "set", "--cone", "src")
    ok(work, "init")
    ok(work, "hooks", "install")
    by_a_person(work, "trust", "allow", "test -f src/main.c")
    added = json.loads(ok(work, "thread", "add", "Ship", "--check", "cmd:test -f src/main.c", "--json"))
    ok(work, "verify")
    [(handle, state, observed)] = checks_of(work)
    tree = git(work, "rev-parse", "--short=7", "HEAD^{tree}")  # docs/ in it, as git has it
    assert (handle, state) == ("cmd:test -f src/main.c", "verified")
    assert re.fullmatch(rf"exit 0 in \d+\.\ds on work tree {tree}", observed)

    closing = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", f"Ship it\n\nCloses {added['id']}"],
        cwd=work,
        capture_output=True,
        text=True,
    )
    assert (closing.returncode, closing.stderr) == (
        0,
        f'git-continuity: {added["id"]} "Ship": every check verified now; the thread is done.\n',
    )
    assert json.loads(ok(work, "thread", "show", added["id"], "--json"))["thread"]["status"] == "done"


def test_a_file_whose_name_is_not_utf8_is_named_with_its_byte_escaped_and_breaks_no_read(tmp_path: Path) -> None:
    """A file named in latin-1 (café.txt as b'caf\\xe9.txt', from an archive or an old system)
    ended the brief, and so an agent's session start, and `verify` in a traceback: its name
    is shown and recorded as caf\\xe9.txt."""
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"README": "r\n"})
    ok(work, "init")
    ok(work, "thread", "add", "Tidy", "--check", "clean:")
    (work / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    assert checks_of(work) == [("clean:", "contradicted", "1 uncommitted change: caf\\xe9.txt")]
    verified = subprocess.run(["git", "continuity", "verify"], cwd=work, capture_output=True, text=True)
    assert (verified.returncode, verified.stderr) == (1, ""), verified.stdout
    brief = ok(work, "orient")
    head = git(work, "log", "-1", "--format=%h")
    assert f'\n## Work tree\n- on branch main at {head} "first"\n- uncommitted: 1 untracked: caf\\xe9.txt\n' in brief
    answer, said = claude_hook(work, "session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    assert said == ""
    assert "- uncommitted: 1 untracked: caf\\xe9.txt\n" in answer["hookSpecificOutput"]["additionalContext"]


def test_a_rename_git_add_n_made_is_one_change_as_git_status_says(tmp_path: Path) -> None:
    """A file renamed and its new name added with --intent-to-add: git status says the rename
    in the work tree's column, its source path after it, which is no file of its own."""
    from git_continuity import repo as opened

    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"longname.txt": "x\n"})
    (work / "longname.txt").rename(work / "newname.txt")
    git(work, "add", "-N", "newname.txt")
    counted = opened.changes_started(opened.open_repo(work))()
    assert counted is not None
    assert (counted.staged, counted.unstaged, counted.untracked) == ([], ["newname.txt"], [])


def index_files(work: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (work / ".git").iterdir() if p.name.startswith(("index", "sharedindex."))}


def test_a_split_index_libgit2_cannot_read_is_read_by_git_and_left_as_it_was(tmp_path: Path) -> None:
    """core.splitIndex keeps a big work tree's index in two files, with an extension libgit2
    refuses ("unsupported mandatory extension: 'link'"): the brief ended in a traceback, and
    so did a command check's run. The work tree's tree is made by git itself, into a copy of
    the index, which stays as it was, no shared index added beside it."""
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"src/main.c": "int main;\n", "README": "r\n"})
    git(work, "config", "core.splitIndex", "true")
    git(work, "update-index", "--split-index")
    ok(work, "init")
    ok(work, "hooks", "install")
    by_a_person(work, "trust", "allow", "test -f src/main.c")
    added = json.loads(ok(work, "thread", "add", "Ship", "--check", "cmd:test -f src/main.c", "--json"))
    (work / "src" / "main.c").write_text("int main(void);\n")
    (work / "notes.txt").write_text("n\n")
    before = index_files(work)
    assert [name for name in before if name.startswith("sharedindex.")] != []

    ok(work, "verify")
    copy = tmp_path / "index-copy"
    copy.write_bytes((work / ".git" / "index").read_bytes())
    as_git = {**os.environ, "GIT_INDEX_FILE": str(copy)}
    unsplit = ["git", "-c", "core.splitIndex=false"]
    subprocess.run([*unsplit, "add", "-A"], cwd=work, env=as_git, check=True)
    tree = subprocess.run([*unsplit, "write-tree"], cwd=work, env=as_git, capture_output=True, text=True).stdout[:7]
    [(_, state, observed)] = checks_of(work)
    assert (state, re.sub(r"\d+\.\ds", "Ns", observed)) == ("verified", f"exit 0 in Ns on work tree {tree}")
    brief = ok(work, "orient")
    assert "- uncommitted: 1 unstaged, 1 untracked: src/main.c, notes.txt\n" in brief
    answer, said = claude_hook(work, "session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    assert said == ""
    assert (
        "- uncommitted: 1 unstaged, 1 untracked: src/main.c, notes.txt\n"
        in answer["hookSpecificOutput"]["additionalContext"]
    )
    assert index_files(work) == before

    git(work, "add", "-A")
    closing = subprocess.run(
        ["git", "commit", "-q", "-m", f"Ship it\n\nCloses {added['id']}"], cwd=work, capture_output=True, text=True
    )
    assert (closing.returncode, closing.stderr) == (
        0,
        f'git-continuity: {added["id"]} "Ship": every check verified now; the thread is done.\n',
    )


def test_with_a_split_index_the_work_tree_is_the_tree_libgit2_reads_without_one(tmp_path: Path) -> None:
    """What git add -A refuses or skips, the work tree as libgit2 reads it takes or leaves out
    alike: a file outside a sparse checkout's set that is there and edited is in it, a name no
    index may hold (.GIT/x) and a repository with no commit yet are left out. Read by plain
    git add -A, the first ended the Stop gate in an error and the edited file was missing."""
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    commit(work, "first", {"src/main.c": "int main;\n", "docs/guide.md": "g\n", "README": "r\n"})
    git(work, "sparse-checkout", "set", "--cone", "src")
    git(work, "config", "core.splitIndex", "true")
    git(work, "update-index", "--split-index")
    ok(work, "init")
    ok(work, "thread", "add", "Ship", "--check", "clean:")
    (work / "docs").mkdir()
    (work / "docs" / "guide.md").write_text("edited outside the set\n")
    (work / ".GIT").mkdir()
    (work / ".GIT" / "x").write_text("x\n")
    git(tmp_path, "init", "-q", str(work / "nested"))
    (work / "notes.txt").write_text("n\n")
    before = index_files(work)
    from git_continuity import repo as opened

    def tree() -> str:
        answer, said = stop_hook(work)
        assert (answer["decision"], said) == ("block", "")  # the clean: check is contradicted: not done
        return str(opened.worktree_tree(opened.open_repo(work)))

    made_by_git = tree()
    assert index_files(work) == before
    git(work, "update-index", "--no-split-index")
    assert len(opened.open_repo(work).git.index) == 3  # libgit2 reads it now: the next tree is its own
    assert tree() == made_by_git
    listed = git(work, "ls-tree", "-r", "--name-only", made_by_git).splitlines()
    assert listed == ["README", "docs/guide.md", "notes.txt", "src/main.c"]
    assert git(work, "cat-file", "blob", f"{made_by_git}:docs/guide.md") == "edited outside the set"


# -- a git folder apart from its work tree --------------------------------------------------------


def apart(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A git folder (``repo.git``) and its work tree (``wt``) side by side, used through
    GIT_DIR and GIT_WORK_TREE as dotfile managers do; the two and the environment."""
    git_dir, work = tmp_path / "repo.git", tmp_path / "wt"
    git(tmp_path, "init", "-q", "--bare", str(git_dir))
    git(git_dir, "config", "core.bare", "false")
    work.mkdir()
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(work)}
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("print('hi')\n")
    for args in (["add", "src"], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)
    return git_dir, work, env


def test_git_dir_and_git_work_tree_are_read_as_git_reads_them(tmp_path: Path) -> None:
    _, work, env = apart(tmp_path)
    ok(work, "init", env=env)
    added = ok(
        work / "src", "thread", "add", "Ship it", "--check", "file:app.py", "--check", "file::/src/new.py", env=env
    )
    assert added.splitlines()[1:3] == [
        "  check file:src/app.py  (as written: file:app.py)",
        "  check file:src/new.py  (as written: file::/src/new.py)",
    ]
    assert sorted((h, s) for h, s, _ in checks_of(work, env)) == [
        ("file:src/app.py", "verified"),
        ("file:src/new.py", "contradicted"),
    ]
    ok(work, "hooks", "install", env=env)
    (work / "src" / "new.py").write_text("new\n")
    thread = json.loads(ok(work, "status", "--json", env=env))["threads"][0]["id"]
    subprocess.run(["git", "add", "src/new.py"], cwd=work, env=env, check=True)
    done = subprocess.run(
        ["git", "commit", "-q", "-m", f"New module; closes {thread}"], cwd=work, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(ok(work, "status", "--json", env=env))["threads"][0]["status"] == "done"

    ok(work, "agent", "install", "claude", env=env)
    assert (work / ".claude" / "settings.json").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo.git", "wt"]


def test_core_worktree_and_a_separate_git_dir_are_read_as_git_reads_them(tmp_path: Path) -> None:
    git_dir, work, _ = apart(tmp_path)
    git(git_dir, "config", "core.worktree", str(work))
    only_dir = {**os.environ, "GIT_DIR": str(git_dir)}
    ok(work, "init", env=only_dir)
    added = ok(work, "thread", "add", "One", "--check", "file:src/app.py", env=only_dir)
    assert added.splitlines()[1] == "  check file:src/app.py"

    separate = tmp_path / "sep"
    git(tmp_path, "init", "-q", f"--separate-git-dir={tmp_path / 'sep.git'}", str(separate))
    commit(separate, "first", {"a.txt": "a\n"})
    ok(separate, "init")
    assert ok(separate, "thread", "add", "Two", "--check", "file:a.txt").splitlines()[1] == "  check file:a.txt"
    assert [(h, s) for h, s, _ in checks_of(separate)] == [("file:a.txt", "verified")]
