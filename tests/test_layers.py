"""Layering rules, kept by tests rather than by memory: which modules may import which, and
what the hooks' cheap path leaves in ``sys.modules`` (checked in a fresh process)."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import git

import git_continuity

PACKAGE = Path(__file__).resolve().parents[1] / "git_continuity"
HOOKS = PACKAGE.parent / "hooks"
HEAVY = ("pygit2", "jsonschema", "ruamel")

# Runs `python -m git_continuity ARGS` and, on the way out, writes to REPORT the heavy modules
# the run imported (atexit runs after the SystemExit that ends every command).
PROBE = f"""\
import atexit, json, runpy, sys
report, sys.argv = sys.argv[1], ["git_continuity", *sys.argv[2:]]
def dump():
    with open(report, "a") as f:
        f.write(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))) + "\\n")
atexit.register(dump)
runpy.run_module("git_continuity", run_name="__main__", alter_sys=True)
"""


def imports(path: Path) -> list[str]:
    """Every module path imports, at the top or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return found


def modules() -> dict[str, Path]:
    return {str(p.relative_to(PACKAGE.parent).with_suffix("")).replace("/", "."): p for p in PACKAGE.rglob("*.py")}


def test_only_the_repository_door_imports_pygit2() -> None:
    importers = {name for name, path in modules().items() if any(m.split(".")[0] == "pygit2" for m in imports(path))}
    assert importers and {name for name in importers if name.split(".")[:2] != ["git_continuity", "repo"]} == set()


def test_no_module_below_the_commands_imports_them() -> None:
    """commands/ and the command line sit on top: nothing they call reaches back up."""
    upward = {
        name: {m for m in imports(path) if m.startswith("git_continuity.commands")}
        for name, path in modules().items()
        if not name.startswith("git_continuity.commands")
        and name not in ("git_continuity.cli.main", "git_continuity.__main__")
    }
    assert {name: found for name, found in upward.items() if found} == {}


@pytest.fixture
def probe(tmp_path: Path) -> Path:
    """A stand-in for the Python the hooks record: the real one, through PROBE."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    wrapper = tmp_path / "python"
    report = tmp_path / "heavy.jsonl"
    # The hooks run "$python" -m git_continuity hook-impl HOOK ARGS.
    wrapper.write_text(
        '#!/bin/sh\n[ "$1 $2" = "-m git_continuity" ] || exit 97\nshift 2\n'
        f'exec "{sys.executable}" "{script}" "{report}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def runs(probe: Path) -> list[list[str]]:
    """The heavy modules of each run through the probe, in order."""
    report = probe.parent / "heavy.jsonl"
    return [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []


def hook(name: str, probe: Path, repo: Path) -> Path:
    """Our hook as `git continuity hooks install` writes it, naming the probe as its Python."""
    path = repo / ".git" / "hooks" / name
    package = str(Path(git_continuity.__file__).resolve().parent)
    path.write_text((HOOKS / name).read_text().replace("@PYTHON@", str(probe)).replace("@PACKAGE@", package))
    path.chmod(0o755)
    return path


def test_the_commit_msg_cheap_path_imports_nothing_heavy(probe: Path, repo: Path, tmp_path: Path) -> None:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Tidy the readme\n\n# Please enter the commit message for your changes.\n")
    done = subprocess.run([str(probe), "-m", "git_continuity", "hook-impl", "commit-msg", str(message)], cwd=repo)
    assert (done.returncode, runs(probe)) == (0, [[]])


def test_the_commit_msg_shell_hook_does_not_start_python_for_a_message_naming_no_thread(
    probe: Path, repo: Path
) -> None:
    hook("commit-msg", probe, repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "Tidy the readme")
    assert runs(probe) == []
    # A message naming a thread goes on to Python (in a repository that never ran init, it
    # still passes; finding that out opens the repository, so pygit2 is loaded).
    git(repo, "commit", "-q", "--allow-empty", "-m", "Work on t-k7m2qx")
    assert runs(probe) == [["pygit2"]]
    assert git(repo, "log", "--format=%s", "-2") == "Work on t-k7m2qx\nTidy the readme"


def test_the_post_commit_hook_in_a_repository_without_state_imports_nothing_heavy(probe: Path, repo: Path) -> None:
    hook("post-commit", probe, repo)
    git(repo, "commit", "-q", "--allow-empty", "-m", "Work on t-k7m2qx")
    assert runs(probe) == []  # the shell hook finds no state: no Python at all
    done = subprocess.run([str(probe), "-m", "git_continuity", "hook-impl", "post-commit"], cwd=repo)
    assert (done.returncode, runs(probe)) == (0, [[]])
    assert git(repo, "for-each-ref", "refs/notes/") == ""


def test_status_of_a_state_read_before_checks_and_parses_nothing_again(
    probe: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a status has read every entry (the validity cache holds them, the packet is kept
    as JSON), the next imports neither jsonschema nor ruamel.yaml, in text or --json."""
    monkeypatch.delenv("GIT_CONTINUITY_CHECK_JSON")  # the tests' own check of --json output
    writes = [
        ["init"],
        ["objective", "set", "Fix the login loop", "--why", "users bounce"],
        ["claim", "add", "the readme is there", "--check", "file:README"],
        ["thread", "add", "ship it", "--check", "commit:HEAD"],
        ["journal", "add", "looked at the loop"],
        ["blocker", "add", "waiting on review"],
    ]
    for args in writes:
        done = subprocess.run(["git", "continuity", *args], cwd=repo, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    for args in (["status"], ["status"], ["status", "--json"]):
        done = subprocess.run([str(probe), "-m", "git_continuity", *args], cwd=repo, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    assert runs(probe)[1:] == [["pygit2"], ["pygit2"]]


@pytest.fixture
def noted(repo: Path) -> Path:
    """A repository with state and an open session (orient starts one, an agent's hook names
    the agent), as an agent has it."""
    import os

    for args in (["init"], ["objective", "set", "Fix the login loop", "--why", "users bounce"], ["orient"]):
        env = {**os.environ, "GIT_CONTINUITY_AGENT": "claude-code"} if args == ["orient"] else None
        done = subprocess.run(["git", "continuity", *args], cwd=repo, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
    return repo


def test_a_commit_closing_nothing_starts_no_python_and_gets_its_note(probe: Path, noted: Path) -> None:
    """The three commit-time hooks decide in shell; post-commit writes the provenance note
    with git itself, the very line the Python hook writes (guards.post_commit)."""
    import hashlib
    import os
    import socket

    for name in ("pre-commit", "commit-msg", "post-commit"):
        hook(name, probe, noted)
    env = dict(os.environ)  # the agent's commands name no session or agent: the session file does
    done = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "Tidy the readme"], cwd=noted, env=env)
    assert (done.returncode, runs(probe)) == (0, [])
    session = json.loads((noted / ".git" / "continuity" / "session.json").read_text())
    state = git(noted, "rev-parse", "refs/continuity/main")
    (line,) = git(noted, "notes", "--ref=continuity", "show", "HEAD").splitlines()
    record = json.loads(line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record.pop("at"))
    assert record == {
        "agent": "claude-code",
        "host": socket.gethostname(),
        "kind": "provenance",
        "objective": hashlib.sha256(b"Fix the login loop").hexdigest()[:16],
        "session": session["id"],
        "state": state,
        "stream": "main",
        "threads": [],
    }
    # Written as commit_notes.line writes it: keys sorted, no spaces.
    assert line == json.dumps({**record, "at": json.loads(line)["at"]}, sort_keys=True, separators=(",", ":"))
    assert git(noted, "for-each-ref", "--format=%(refname)", "refs/notes/") == "refs/notes/continuity"

    # The Python hook writes the same record on the same commit (one line more: its own time).
    again = subprocess.run(["git-continuity-hook", "post-commit"], cwd=noted, env=env, capture_output=True, text=True)
    assert (again.returncode, again.stderr) == (0, "")
    lines = git(noted, "notes", "--ref=continuity", "show", "HEAD").splitlines()
    assert [{k: v for k, v in json.loads(x).items() if k != "at"} for x in lines] == [record] * len(lines)


def git_commands(trace: Path) -> list[list[str]]:
    """Each git command a traced run started, as its arguments after git's own options: the
    commit itself and its `maintenance run --auto` left out."""
    found = []
    for event in map(json.loads, trace.read_text().splitlines()):
        if event["event"] == "start":
            argv = event["argv"][1:]
            while argv[:1] == ["-c"]:
                argv = argv[2:]
            found.append(argv)
    return [argv for argv in found if argv[0] not in ("commit", "maintenance")]


def test_the_shell_post_commit_asks_git_for_the_new_commit_alone_never_the_state_commit(
    probe: Path, noted: Path, tmp_path: Path
) -> None:
    """The last state write's message can be a verify's whole report (64 KB at 1,000 claims),
    and the shell's string work grows with what git prints: the state ref is read from its own
    file and git log prints the new commit alone (with the refs packed, git rev-parse reads the
    state ref: tests/test_history_reads.py)."""
    import os

    hook("post-commit", probe, noted)
    git(noted, "commit", "-q", "--allow-empty", "-m", "The notes ref is made")
    trace = tmp_path / "trace.jsonl"
    env = {**os.environ, "GIT_TRACE2_EVENT": str(trace)}
    done = subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "Tidy the readme"], cwd=noted, env=env)
    assert (done.returncode, runs(probe)) == (0, [])
    commands = git_commands(trace)
    assert commands[0] == ["log", "-1", "--date=format-local:%Y-%m-%dT%H:%M:%SZ", "--format=%cd %B", "HEAD"]
    assert [argv[0] for argv in commands] == ["log", "notes", "commit-tree", "update-ref"]
    (line,) = git(noted, "notes", "--ref=continuity", "show", "HEAD").splitlines()
    made = datetime.fromtimestamp(int(git(noted, "log", "-1", "--format=%ct", "HEAD")), timezone.utc)
    assert json.loads(line)["at"] == f"{made:%Y-%m-%dT%H:%M:%SZ}"


@pytest.mark.parametrize(
    "why",
    [
        "a close to record",
        "a thread named",
        "a line for another state",
        "no line",
        "a note already there",
        "an agent named in the environment",
    ],
)
def test_what_the_shell_post_commit_leaves_to_python(probe: Path, noted: Path, why: str) -> None:
    import os

    hook("post-commit", probe, noted)
    env = dict(os.environ)
    message = "Tidy the readme"
    if why == "a close to record":
        (noted / ".git" / "continuity" / "closing.json").write_text("{}")
    elif why == "a thread named":
        message = "Work on t-k7m2qx"
    elif why == "a line for another state":
        ready = noted / ".git" / "continuity" / "provenance.line"
        key, _, rest = ready.read_text().split("\n", 2)
        ready.write_text(f"{key}\n{'1' * 40}\n{rest}")
    elif why == "no line":
        (noted / ".git" / "continuity" / "provenance.line").unlink()
    elif why == "a note already there":
        tree = git(noted, "rev-parse", "HEAD^{tree}")
        head = git(noted, "rev-parse", "HEAD")
        env.update(GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
        made = subprocess.run(
            ["git", "commit-tree", tree, "-p", head, "-m", message], cwd=noted, env=env, capture_output=True, text=True
        ).stdout.strip()
        git(noted, "notes", "--ref=continuity", "add", "-m", "written by hand", made)
    else:
        env["GIT_CONTINUITY_AGENT"] = 'say "hi"'
    done = subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "-m", message], cwd=noted, env=env, capture_output=True, text=True
    )
    assert (done.returncode, done.stderr, len(runs(probe))) == (0, "", 1)
    assert git(noted, "for-each-ref", "--format=%(refname)", "refs/notes/") == "refs/notes/continuity"
    kinds = [json.loads(x)["kind"] for x in git(noted, "notes", "--ref=continuity", "show", "HEAD").splitlines()
             if x.startswith("{")]  # fmt: skip
    assert kinds == ["provenance"]


def test_the_line_python_leaves_follows_the_environment_the_state_and_the_session(probe: Path, noted: Path) -> None:
    """The shell takes the line Python left only in the environment it was made for: a
    process naming its own agent gets its first note from Python, which leaves the line for
    the next; a state write or the session's end leaves it again, as a process naming
    nothing has it."""
    import os
    import socket

    hook("post-commit", probe, noted)

    def commit(message: str, **named: str) -> dict[str, str]:
        argv = ["git", "commit", "-q", "--allow-empty", "-m", message]
        assert subprocess.run(argv, cwd=noted, env={**os.environ, **named}).returncode == 0
        (line,) = git(noted, "notes", "--ref=continuity", "show", "HEAD").splitlines()
        record = json.loads(line)
        assert record["host"] == named.get("GIT_CONTINUITY_HOST", socket.gethostname())
        return {k: v for k, v in record.items() if k not in ("at", "objective", "host", "kind", "threads")}

    session = json.loads((noted / ".git" / "continuity" / "session.json").read_text())["id"]
    state = git(noted, "rev-parse", "refs/continuity/main")
    odd = {"GIT_CONTINUITY_AGENT": 'say "hi"'}
    by = {"agent": 'say "hi"', "session": session, "state": state, "stream": "main"}
    assert (commit("one", **odd), len(runs(probe))) == (by, 1)
    assert (commit("two", **odd), len(runs(probe))) == (by, 1)  # the line Python left
    # A write from an agent's hook, which names its agent (and here a host) in its own environment.
    hooks_env = {**os.environ, "GIT_CONTINUITY_AGENT": "hook", "GIT_CONTINUITY_HOST": "ci-box"}
    assert subprocess.run(["git", "continuity", "journal", "add", "a step"], cwd=noted, env=hooks_env).returncode == 0
    state = git(noted, "rev-parse", "refs/continuity/main")
    by = {"agent": "claude-code", "session": session, "state": state, "stream": "main"}
    assert (commit("three"), len(runs(probe))) == (by, 1)  # the state write left it
    assert (commit("four", **odd), len(runs(probe))) == ({**by, "agent": 'say "hi"'}, 2)
    assert subprocess.run(["git", "continuity", "handoff"], cwd=noted, capture_output=True).returncode == 0
    state = git(noted, "rev-parse", "refs/continuity/main")
    assert (commit("five"), len(runs(probe))) == ({"state": state, "stream": "main"}, 2)  # the session ended


def test_the_shell_post_commit_knows_a_thread_id_as_the_constants_do() -> None:
    """The post-commit hook leaves a message naming a thread to Python: its glob for an id,
    in any case, is ID_CHARS written out for `case`."""
    import fnmatch

    from git_continuity import constants

    glob = "[2-9a-hjkmnp-zA-HJKMNP-Z]"
    both = constants.ID_ALPHABET + constants.ID_ALPHABET.upper()
    assert "".join(c for c in map(chr, range(128)) if fnmatch.fnmatchcase(c, glob)) == "".join(sorted(set(both)))
    assert f"*[tT]-{glob * 6}*) return 1 ;;" in (HOOKS / "post-commit").read_text()
