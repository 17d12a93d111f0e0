"""A sweep of corruptions, made with git plumbing as a hostile or careless teammate would,
against every command that reads the state (issue 10): no run ends in a traceback, and every
run that reads the broken part exits 2 naming it (doctor: exit 1, naming it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import Cli, Ran, git, sign_with_own_key, signing_key

from git_continuity.cli.main import main

ROOT = ".continuity"
DAY = "2026-11-30"
NAME = "20261130T100000.000000Z"
DEEP = "[" * 50_000 + "]" * 50_000  # the decoder recurses once per level
NESTED = json.dumps(
    {"at": "x", "by": "x", "host": "x", "id": "x", "text": "x", "more": json.loads("[" * 40 + "]" * 40)}
)


def entry(kind: str, name: str) -> str:
    """Where a new entry of a folder goes (a file name that looks right)."""
    return {
        "claims": f"{ROOT}/claims/c-222222.json",
        "threads": f"{ROOT}/threads/t-222222.json",
        "journal": f"{ROOT}/journal/{DAY}/{NAME}-j-222222.json",
        "objective": f"{ROOT}/objective/{NAME}-o-222222.json",
        "evidence": f"{ROOT}/evidence/{name}/{NAME}-e-222222.json",
        "handoffs": f"{ROOT}/handoffs/{DAY}/{NAME}-h-222222.json",
        "conflicts": f"{ROOT}/conflicts/x-222222.json",
        "attempts": f"{ROOT}/attempts/{name}/{NAME}-a-222222.json",
        "places": f"{ROOT}/places/p-222222.json",
    }[kind]


# What each command reads, beyond the commands that read the whole state. The whole-state
# readers check every file before they answer or write (status, check, orient, every write,
# push, sync, pull, doctor).
WHOLE = {
    "status",
    "status --json",
    "check",
    "check --closing",
    "orient",
    "orient --json",
    "verify",
    "journal add",
    "claim add",
    "next set",
    "objective set",
    "blocker add",
    "thread add",
    "place set",
    "handoff",
    "push",
    "sync",
    "pull",
    "doctor",
    "doctor --json",
}
WRITES = {c for c in WHOLE if c.split()[-1] in ("add", "set", "verify", "handoff", "push", "sync", "pull")}
READERS = {
    "packet": {"next", "blocker list"},
    "claims": {"claim list", "claim list --json", "thread list"},
    "threads": {"thread list", "progress"},
    "journal": {"journal", "journal --json"},
    "objective": {"objective log"},
    "evidence": set(),
    "handoffs": set(),
    "conflicts": {"conflict list"},
    "attempts": set(),
    "places": {"place list", "place list --json"},
}
EVERY_READ = {c for readers in READERS.values() for c in readers} | {"log", "show", "claim show", "thread show"}


@dataclass(frozen=True)
class Corruption:
    name: str
    make: Callable[[Path, dict[str, str]], object]  # what it returns is not used
    named: str  # what the message must name
    readers: frozenset[str]  # the commands that read the broken part (and must exit 2 naming it)


def plumb(repo: Path, *args: str, data: bytes | None = None) -> str:
    env = {**os.environ, "GIT_INDEX_FILE": str(repo.parent / "sweep-index")}
    done = subprocess.run(["git", *args], cwd=repo, env=env, input=data, capture_output=True)
    assert done.returncode == 0, (args, done.stderr.decode())
    return done.stdout.decode().strip()


def commit_files(repo: Path, files: dict[str, tuple[str, bytes] | None], ref: str = "refs/continuity/main") -> str:
    """A new state commit on top of the ref, with each path set to (mode, bytes), or removed."""
    old = git(repo, "rev-parse", "--verify", ref)
    Path(repo.parent / "sweep-index").unlink(missing_ok=True)
    plumb(repo, "read-tree", old)
    for path, value in files.items():
        if value is None:
            plumb(repo, "update-index", "--force-remove", "--", path)
            continue
        mode, content = value
        oid = content.decode() if mode == "160000" else plumb(repo, "hash-object", "-w", "--stdin", data=content)
        plumb(repo, "update-index", "--add", "--replace", "--cacheinfo", f"{mode},{oid},{path}")
    new = plumb(
        repo, *sign_with_own_key(), "commit-tree", "-S", plumb(repo, "write-tree"), "-p", old, "-m", "hand edit"
    )
    plumb(repo, "update-ref", ref, new, old)
    return new


def put(files: dict[str, str | bytes | None]) -> Callable[[Path, dict[str, str]], None]:
    def make(repo: Path, ids: dict[str, str]) -> None:
        commit_files(
            repo,
            {
                path.format(**ids): None if v is None else ("100644", v.encode() if isinstance(v, str) else v)
                for path, v in files.items()
            },
        )

    return make


def tree_paths(repo: Path, folder: str) -> list[str]:
    return git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", folder).splitlines()


def as_blob(folder: str) -> Callable[[Path, dict[str, str]], None]:
    def make(repo: Path, ids: dict[str, str]) -> None:
        gone: dict[str, tuple[str, bytes] | None] = {p: None for p in tree_paths(repo, f"{ROOT}/{folder}")}
        commit_files(repo, {**gone, f"{ROOT}/{folder}": ("100644", b"not a folder\n")})

    return make


def odd_entry(mode: str, content: bytes) -> Callable[[Path, dict[str, str]], None]:
    def make(repo: Path, ids: dict[str, str]) -> None:
        commit_files(repo, {f"{ROOT}/claims/c-333333.json": (mode, content)})

    return make


def loose(repo: Path, oid: str) -> Path:
    return repo / ".git" / "objects" / oid[:2] / oid[2:]


def lost_blob(repo: Path, ids: dict[str, str]) -> None:
    data = b'{"id": "c-444444"}\n'
    commit_files(repo, {f"{ROOT}/claims/c-444444.json": ("100644", data)})
    loose(repo, plumb(repo, "hash-object", "--stdin", data=data)).unlink()


def lost_parent(repo: Path, ids: dict[str, str]) -> None:
    parent = git(repo, "rev-parse", "refs/continuity/main~1")
    loose(repo, parent).unlink()


def lost_tree(repo: Path, ids: dict[str, str]) -> None:
    commit_files(repo, {f"{ROOT}/journal/{DAY}/{NAME}-j-555555.json": ("100644", b"{}\n")})
    loose(repo, git(repo, "rev-parse", "refs/continuity/main^{tree}")).unlink()


def grafted_parent(repo: Path, ids: dict[str, str]) -> None:
    tip = git(repo, "rev-parse", "refs/continuity/main")
    tree = git(repo, "rev-parse", f"{tip}^{{tree}}")
    text = f"tree {tree}\nparent {'1' * 40}\nauthor M <m@x> 1 +0000\ncommitter M <m@x> 1 +0000\n\nhand\n"
    new = plumb(repo, "hash-object", "-t", "commit", "-w", "--literally", "--stdin", data=text.encode())
    plumb(repo, "update-ref", "refs/continuity/main", new)


def ref_file(ref: str, content: str) -> Callable[[Path, dict[str, str]], None]:
    def make(repo: Path, ids: dict[str, str]) -> None:
        path = repo / ".git" / ref
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)

    return make


def ref_at(ref: str, what: str) -> Callable[[Path, dict[str, str]], None]:
    def make(repo: Path, ids: dict[str, str]) -> None:
        if what == "blob":
            target = plumb(repo, "hash-object", "-w", "--stdin", data=b"hello\n")
        elif what == "tree":
            target = git(repo, "rev-parse", "refs/continuity/main^{tree}")
        else:
            git(repo, "tag", "-a", "-m", "a tag", "state-tag", "refs/continuity/main")
            target = git(repo, "rev-parse", "state-tag")
        (repo / ".git" / ref).parent.mkdir(parents=True, exist_ok=True)
        (repo / ".git" / ref).write_text(target + "\n")  # git update-ref refuses a non-commit here

    return make


def dead_pid() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def dead_lock(ref: str) -> Callable[[Path, dict[str, str]], None]:
    def make(repo: Path, ids: dict[str, str]) -> None:
        import socket
        import time

        (repo / ".git" / f"{ref}.lock").write_text("")
        record = repo / ".git" / "continuity" / "locks" / f"{ref}.json"
        record.parent.mkdir(parents=True, exist_ok=True)
        record.write_text(json.dumps({"pid": dead_pid(), "host": socket.gethostname(), "at": time.time()}))

    return make


def deep_folder(repo: Path, ids: dict[str, str]) -> None:
    commit_files(repo, {f"{ROOT}/claims/sub/c-666666.json": ("100644", b"{}\n")})


STATE = "refs/continuity/main"
NOTES = "refs/notes/continuity"
ALL_STATE = frozenset(WHOLE | EVERY_READ) - {"show"}  # show reads the notes alone
NOTES_READERS = frozenset({"show", "claim add", "thread add", "doctor", "doctor --json"})


def entry_cases() -> list[Corruption]:
    cases = []
    for kind, readers in READERS.items():
        if kind == "packet":
            continue
        owner = "{claim}" if kind == "evidence" else "{thread}"
        path = entry(kind, owner)
        bad: dict[str, str | bytes] = {
            "schema": "{}\n",
            "json": '{"id": \n',
            "deep": DEEP,
            "utf8": b'{"id": "\xe9"}\n',
        }
        picked = ("schema", "json", "deep", "utf8") if kind in ("claims", "journal") else ("schema", "json")
        for what in picked:
            named = path.rsplit("/", 1)[1]
            cases.append(Corruption(f"{kind}-{what}", put({path: bad[what]}), named, frozenset(readers)))
    return cases


CORRUPTIONS: list[Corruption] = [
    *entry_cases(),
    # the packet
    Corruption("packet-empty", put({f"{ROOT}/packet.yaml": ""}), "packet.yaml", frozenset(READERS["packet"])),
    Corruption(
        "packet-comments", put({f"{ROOT}/packet.yaml": "# only\n"}), "packet.yaml", frozenset(READERS["packet"])
    ),
    Corruption("packet-yaml", put({f"{ROOT}/packet.yaml": "a: [\n"}), "packet.yaml", frozenset(READERS["packet"])),
    Corruption("packet-list", put({f"{ROOT}/packet.yaml": "- a\n"}), "packet.yaml", frozenset(READERS["packet"])),
    Corruption(
        "packet-alias", put({f"{ROOT}/packet.yaml": "a: &a x\nb: *a\n"}), "packet.yaml", frozenset(READERS["packet"])
    ),
    Corruption(
        "packet-utf8", put({f"{ROOT}/packet.yaml": b"next_action: \xe9\n"}), "packet.yaml", frozenset(READERS["packet"])
    ),
    Corruption("packet-missing", put({f"{ROOT}/packet.yaml": None}), "packet.yaml", frozenset(READERS["packet"])),
    Corruption(
        "packet-folder",
        lambda r, i: commit_files(r, {f"{ROOT}/packet.yaml": None, f"{ROOT}/packet.yaml/x": ("100644", b"x\n")}),
        "packet.yaml",
        frozenset(READERS["packet"]),
    ),
    # folders and files where they do not belong
    Corruption("claims-blob", as_blob("claims"), f"{ROOT}/claims", frozenset(READERS["claims"])),
    Corruption("threads-blob", as_blob("threads"), f"{ROOT}/threads", frozenset(READERS["threads"])),
    Corruption("journal-blob", as_blob("journal"), f"{ROOT}/journal", frozenset(READERS["journal"])),
    Corruption("places-blob", as_blob("places"), f"{ROOT}/places", frozenset(READERS["places"])),
    Corruption("journal-stray", put({f"{ROOT}/journal/stray.json": "{}\n"}), f"{ROOT}/journal/stray.json", frozenset()),
    Corruption("claims-folder", deep_folder, f"{ROOT}/claims/sub", frozenset(READERS["claims"])),
    Corruption("claims-symlink", odd_entry("120000", b"../../etc/passwd"), "c-333333", frozenset(READERS["claims"])),
    Corruption("claims-gitlink", odd_entry("160000", b"1" * 40), "c-333333", frozenset(READERS["claims"])),
    Corruption(
        "claims-big",
        put({entry("claims", ""): '{"id": "' + "x" * 1_100_000 + '"}'}),
        "c-222222",
        frozenset(READERS["claims"]),
    ),
    Corruption("claims-array", put({entry("claims", ""): "[1, 2]\n"}), "c-222222", frozenset(READERS["claims"])),
    Corruption("journal-nested", put({entry("journal", ""): NESTED}), "j-222222", frozenset(READERS["journal"])),
    Corruption("claims-lost-object", lost_blob, "c-444444", frozenset(READERS["claims"])),
    Corruption("format-newer", put({f"{ROOT}/format": "2\n"}), f"{ROOT}/format", frozenset()),
    Corruption("top-stray", put({f"{ROOT}/stray.txt": "x\n"}), f"{ROOT}/stray.txt", frozenset()),
    Corruption(
        "no-root",
        lambda r, i: commit_files(r, {**{p: None for p in tree_paths(r, ROOT)}, "other": ("100644", b"x\n")}),
        STATE,
        frozenset(),
    ),
    Corruption(
        "root-blob",
        lambda r, i: commit_files(r, {**{p: None for p in tree_paths(r, ROOT)}, ROOT: ("100644", b"x\n")}),
        STATE,
        frozenset(),
    ),
    # the state ref and its history
    Corruption("ref-garbage", ref_file(STATE, "garbage\n"), STATE, ALL_STATE),
    Corruption("ref-blob", ref_at(STATE, "blob"), STATE, ALL_STATE),
    Corruption("ref-tree", ref_at(STATE, "tree"), STATE, ALL_STATE),
    Corruption("ref-tag", ref_at(STATE, "tag"), STATE, ALL_STATE),
    Corruption("parent-deleted", lost_parent, STATE, frozenset({"log"})),
    Corruption("parent-grafted", grafted_parent, STATE, frozenset({"log"})),
    Corruption("tree-deleted", lost_tree, STATE, ALL_STATE - {"log", "show"}),
    Corruption("state-lock", dead_lock(STATE), f"{STATE}.lock", frozenset(WRITES - {"pull", "push", "sync"})),
    # the notes
    Corruption("notes-garbage", ref_file(NOTES, "garbage\n"), NOTES, NOTES_READERS),
    Corruption("notes-blob", ref_at(NOTES, "blob"), NOTES, NOTES_READERS),
    Corruption("notes-tree", ref_at(NOTES, "tree"), NOTES, NOTES_READERS),
    Corruption("notes-lock", dead_lock(NOTES), f"{NOTES}.lock", frozenset({"claim add", "thread add"})),
    # what a fetch left
    Corruption(
        "tracking-garbage",
        ref_file("refs/continuity-remotes/origin/main", "garbage\n"),
        "refs/continuity-remotes/origin/main",
        frozenset({"doctor", "doctor --json"}),
    ),
]


class Setup(Cli):
    def ids(self, repo: Path) -> dict[str, str]:
        names = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ROOT).splitlines()
        claim = next(n for n in names if n.startswith(f"{ROOT}/claims/")).rsplit("/", 1)[1].removesuffix(".json")
        thread = next(n for n in names if n.startswith(f"{ROOT}/threads/")).rsplit("/", 1)[1].removesuffix(".json")
        return {"claim": claim, "thread": thread}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare remote and a clone whose stream holds one of everything (built once)."""
    import conftest

    top = tmp_path_factory.mktemp("sweep-base")
    mp = pytest.MonkeyPatch()
    try:
        home = top / "home"
        home.mkdir()
        (home / ".gitconfig").write_text(
            "[user]\n\tname = Ada Agent\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n"
        )
        for name in conftest.REMOVED_ENV:
            mp.delenv(name, raising=False)
        for key, value in {**conftest.FIXED_ENV, "HOME": str(home)}.items():
            mp.setenv(key, value)
        git(top, "init", "-q", "--bare", "origin.git")
        git(top, "clone", "-q", "origin.git", "work")
        work = top / "work"
        conftest.commit(work, "first", {"README": "hello\n"})
        git(work, "push", "-q", "origin", "main")
        mp.chdir(work)

        def run(cwd: Path, *args: str) -> Ran:
            code = main(list(args))
            return Ran(code, "", "")

        cli = Setup(run)
        cli.ok(work, "init")
        cli.ok(work, "objective", "set", "Ship it", "--why", "users wait")
        cli.ok(work, "next", "run the tests")
        cli.ok(work, "blocker", "add", "CI is down")
        cli.ok(work, "claim", "add", "the first commit exists", "--check", "commit:HEAD")
        cli.ok(work, "claim", "add", "reviewers are happy")
        cli.ok(work, "thread", "add", "tag it", "--check", "tag:v1")
        cli.ok(work, "journal", "add", "reproduced the bug")
        cli.ok(work, "place", "set", "main", "home", "--why", "work happens here")
        assert main(["verify"]) == 1  # the tag does not exist: evidence of both kinds
        cli.ok(work, "handoff", "--note", "over to you")
        cli.ok(work, "push")
    finally:
        mp.undo()
    return top


COMMANDS: dict[str, tuple[str, ...]] = {
    "status": ("status",),
    "status --json": ("status", "--json"),
    "check": ("check",),
    "check --closing": ("check", "--closing"),
    "orient": ("orient",),
    "orient --json": ("orient", "--json"),
    "claim list": ("claim", "list"),
    "claim list --json": ("claim", "list", "--json"),
    "claim show": ("claim", "show", "{claim}"),
    "thread list": ("thread", "list"),
    "thread show": ("thread", "show", "{thread}"),
    "journal": ("journal",),
    "journal --json": ("journal", "--json"),
    "objective log": ("objective", "log"),
    "next": ("next",),
    "blocker list": ("blocker", "list"),
    "conflict list": ("conflict", "list"),
    "place list": ("place", "list"),
    "place list --json": ("place", "list", "--json"),
    "progress": ("progress",),
    "log": ("log",),
    "show": ("show",),
    "doctor": ("doctor",),
    "doctor --json": ("doctor", "--json"),
    "verify": ("verify",),
    "journal add": ("journal", "add", "more"),
    "claim add": ("claim", "add", "more", "--check", "commit:HEAD"),
    "next set": ("next", "more"),
    "objective set": ("objective", "set", "more", "--why", "because"),
    "blocker add": ("blocker", "add", "more"),
    "thread add": ("thread", "add", "more", "--check", "commit:HEAD"),
    "place set": ("place", "set", "main", "home", "--why", "again"),
    "handoff": ("handoff",),
    "pull": ("pull",),
    "push": ("push",),
    "sync": ("sync",),
}
assert set(COMMANDS) == WHOLE | EVERY_READ | {"verify"}, set(COMMANDS) ^ (WHOLE | EVERY_READ)

TOTALS = {"runs": 0, "tracebacks": 0, "reached the remote": 0}


def run_in_process(repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int | None, str]:
    """One command in this process; (exit code, what it printed), or (None, the traceback)."""
    capsys.readouterr()
    cwd = os.getcwd()
    os.chdir(repo)
    try:
        code = main(args)
    except SystemExit as exited:
        code = exited.code if isinstance(exited.code, int) else 2
    except BaseException:  # a traceback: the bug this sweep hunts
        return None, traceback.format_exc()
    finally:
        os.chdir(cwd)
    out = capsys.readouterr()
    return code, out.out + out.err


@pytest.mark.parametrize("corruption", CORRUPTIONS, ids=lambda c: c.name)
def test_a_corruption_against_every_command(
    base: Path, tmp_path: Path, corruption: Corruption, capsys: pytest.CaptureFixture[str]
) -> None:
    top = tmp_path / "copy"
    shutil.copytree(base, top, symlinks=True, ignore=shutil.ignore_patterns("home"))
    # The same user as the one who wrote the state: its signing key and trusted signers.
    shutil.copytree(base / "home" / ".config" / "git-continuity", signing_key().parent)
    work, remote = top / "work", top / "origin.git"
    git(work, "remote", "set-url", "origin", str(remote))
    ids = Setup(lambda *a: Ran(0, "", "")).ids(work)
    remote_state = git(remote, "for-each-ref", "--format=%(refname) %(objectname)")
    corruption.make(work, ids)
    failures = []
    for name, words in COMMANDS.items():
        args = [w.format(**ids) for w in words]
        code, said = run_in_process(work, args, capsys)
        TOTALS["runs"] += 1
        if code is None:
            TOTALS["tracebacks"] += 1
            failures.append(f"{name}: traceback\n{said}")
            continue
        must = name in WHOLE or name in corruption.readers
        if corruption.name == "state-lock" or corruption.name.startswith(("notes-", "tracking-")):
            must = name in corruption.readers  # only writes take the lock; only these read the notes
        if not must:
            continue
        wanted = 1 if name.startswith("doctor") else 2
        if code != wanted or corruption.named not in said:
            failures.append(f"{name}: exit {code}, wanted {wanted} naming {corruption.named!r}:\n{said[-600:]}")
    # A dead lock on the notes leaves the state well-formed: writes of the state, and their push, go on.
    if (
        corruption.name != "notes-lock"
        and git(remote, "for-each-ref", "--format=%(refname) %(objectname)") != remote_state
    ):
        TOTALS["reached the remote"] += 1
        failures.append("the remote's state changed")
    assert not failures, "\n\n".join(failures)


def test_the_sweep_counts() -> None:
    """The figures of the sweep (it runs first: pytest keeps the order of a module)."""
    if TOTALS["runs"] == 0:
        pytest.skip("run with the sweep")
    print(
        f"\nsweep: {len(CORRUPTIONS)} corruptions x {len(COMMANDS)} commands = {TOTALS['runs']} runs, "
        f"{TOTALS['tracebacks']} tracebacks, {TOTALS['reached the remote']} malformed states reached the remote"
    )
    assert len(CORRUPTIONS) >= 45
    assert TOTALS["tracebacks"] == 0 and TOTALS["reached the remote"] == 0
