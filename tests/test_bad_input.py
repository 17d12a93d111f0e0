"""Bad input and malformed state: exit 2, a message naming what and where, nothing written."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, commit, cont, git, state_refs, untouched, write_state

from git_continuity.plugins import verify

Run = Callable[..., Ran]
PACKET = ".continuity/packet.yaml"
# As an agent's tool call reads it (no terminal): what to tell the user, not the repair, which is
# the person's (a person at a terminal is shown it: tests/test_true_now.py).
MALFORMED_TAIL = (
    "Nothing can be written on this state until it is repaired, and what to repair is the user's decision (git"
    " continuity doctor shows them the state and its repair): tell them; do not repair or rewrite the state"
    " yourself.\n"
)
NO_STATE = (
    "git-continuity: error: no continuity state for stream 'main' here (refs/continuity/main does not exist).\n"
    "Start one with: git continuity init\n"
)


NO_ALIASES = "anchors and aliases (&name, *name) are not allowed here: write each value out"
BOMB = (
    "a: &a [x,x,x,x,x,x,x,x,x]\n"
    + "".join(f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdef", "bcdefg", strict=True))
    + "next_action: *g\n"
)
assert len(BOMB) == 252


def everything(repo: Path) -> tuple[object, ...]:
    """All that a refused command must leave as it was: state refs and their reflogs,
    HEAD, branches, index, work tree, and git-continuity's local folder (but the helper's
    socket and lock, which the helper makes for the next command)."""
    logs = repo / ".git" / "logs" / "refs" / "continuity"
    local = repo / ".git" / "continuity"
    return (
        state_refs(repo),
        untouched(repo),
        sorted((str(p.relative_to(logs)), p.read_bytes()) for p in logs.rglob("*") if p.is_file())
        if logs.exists()
        else [],
        sorted(
            str(p.relative_to(local))
            for p in local.rglob("*")
            if "cache" not in p.parts and not p.name.startswith(("helper-", ".helper."))
        )
        if local.exists()
        else [],
    )


def refused(run: Run, repo: Path, *args: str) -> str:
    """Run a command that must be refused; return its stderr."""
    before = everything(repo)
    ran = run(repo, *args)
    assert (ran.code, ran.out) == (2, ""), ran
    assert everything(repo) == before
    return ran.err


def claim_id(ran: Ran) -> str:
    found = re.search(r"\b(c-[2-9a-hjkmnp-z]{6})\b", ran.out)
    assert found, ran
    return found.group(1)


@pytest.fixture
def started(repo: Path, inproc: Run) -> Path:
    """A repository with state: one claim with a handle, one prose claim, one journal entry."""
    assert inproc(repo, "init").code == 0
    assert inproc(repo, "claim", "add", "the first commit exists", "--check", "commit:HEAD").code == 0
    assert inproc(repo, "claim", "add", "the reviewers are happy").code == 0
    assert inproc(repo, "journal", "add", "reproduced the bug").code == 0
    return repo


# -- where git-continuity runs --------------------------------------------------------------


@pytest.mark.parametrize("args", [("status",), ("init",), ("claim", "add", "x"), ("journal",)])
def test_outside_a_repository(tmp_path: Path, inproc: Run, args: tuple[str, ...]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    ran = inproc(plain, *args)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        f"git-continuity: error: not a git repository: {plain}\n"
        "Run git continuity inside a repository (or create one with git init).\n"
    )
    assert list(plain.iterdir()) == []


def test_outside_a_repository_in_a_fresh_process(tmp_path: Path) -> None:
    ran = cont(tmp_path, "status")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        f"git-continuity: error: not a git repository: {tmp_path}\n"
        "Run git continuity inside a repository (or create one with git init).\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("claim", "add", "x"),
        ("claim", "list"),
        ("journal",),
        ("journal", "add", "x"),
        ("next", "x"),
        ("objective", "set", "x", "--why", "y"),
        ("objective", "log"),
        ("blocker", "add", "x"),
        ("verify",),
        ("log",),
        ("edit",),
    ],
)
def test_before_init_says_how_to_start(repo: Path, inproc: Run, args: tuple[str, ...]) -> None:
    assert refused(inproc, repo, *args) == NO_STATE


def test_before_init_names_the_streams_that_do_exist(repo: Path, inproc: Run) -> None:
    assert inproc(repo, "--stream", "agent-b", "init").code == 0
    assert inproc(repo, "--stream", "agent-a", "init").code == 0
    assert refused(inproc, repo, "status") == (
        "git-continuity: error: no continuity state for stream 'main' here (refs/continuity/main does not exist).\n"
        "Start one with: git continuity init\n"
        "Streams here: agent-a, agent-b (choose one with --stream NAME).\n"
    )


def test_a_sha256_repository_is_not_supported_yet(tmp_path: Path, inproc: Run) -> None:
    path = tmp_path / "sha256"
    git(tmp_path, "init", "-q", "--object-format=sha256", str(path))
    commit(path, "first", {"README": "hello\n"})
    before = git(path, "for-each-ref")
    for args in (("init",), ("status",)):
        ran = inproc(path, *args)
        assert (ran.code, ran.out) == (2, "")
        assert ran.err == (
            f"git-continuity: error: {path}/.git/ uses SHA-256 object ids, which git-continuity does not support yet.\n"
        )
    assert git(path, "for-each-ref") == before
    assert not (path / ".git" / "continuity").exists()


@pytest.mark.parametrize("stream", ["../x", "a/b", ".hidden", "a..b", "x.lock", "a b", "trailing.", "é"])
def test_a_bad_stream_name(repo: Path, inproc: Run, stream: str) -> None:
    assert refused(inproc, repo, "--stream", stream, "init") == (
        f"git-continuity: error: stream name {stream!r} is not usable: letters, digits, '-', '_' and inner '.' only,"
        " not ending in .lock (one ref name each, e.g. agent-b)\n"
    )
    assert not (repo / ".git" / "logs" / "refs" / "continuity").exists()


@pytest.mark.parametrize("stream", ["HEAD", "notes", "lanes"])
def test_a_reserved_stream_name(repo: Path, inproc: Run, stream: str) -> None:
    """--stream notes made a stream whose branch was the notes' own under the branch transport,
    and --stream HEAD a ref named refs/continuity/HEAD."""
    assert refused(inproc, repo, "--stream", stream, "init") == (
        f"git-continuity: error: stream name {stream!r} is reserved: HEAD is git's, and notes and lanes name what"
        " the state travels beside as branches; choose another (e.g. agent-b)\n"
    )
    assert not (repo / ".git" / "refs" / "continuity").exists()


# -- handles --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("handle", "message"),
    [
        (
            "HEAD",
            "handle 'HEAD' is not of the form scheme:address, e.g. commit:HEAD or tag:v1.2\n"
            "(git continuity plugins lists the schemes this machine knows)",
        ),
        (
            "",
            "handle '' is not of the form scheme:address, e.g. commit:HEAD or tag:v1.2\n"
            "(git continuity plugins lists the schemes this machine knows)",
        ),
        ("commit:nope", "revision 'nope' does not resolve to a commit here"),
        ("commit:", "empty revision; name a commit, branch or tag"),
        ("commit:-x", "revision '-x' starts with '-'; name a commit, branch or tag"),
        ("commit:--output=/tmp/x", "revision '--output=/tmp/x' starts with '-'; name a commit, branch or tag"),
        ("commit:HEAD^{tree}", "revision 'HEAD^{tree}' does not resolve to a commit here"),
        ("ref:main", "handle 'ref:main' is not of the form ref:<refname>=<rev>"),
        ("ref:=HEAD", "handle 'ref:=HEAD' is not of the form ref:<refname>=<rev>"),
        ("ref:--upload-pack=x=HEAD", "ref '--upload-pack=x' in 'ref:--upload-pack=x=HEAD' starts with '-'"),
        ("ref:nosuch=HEAD", "ref 'nosuch' in 'ref:nosuch=HEAD' does not exist here; name a branch, tag or refs/… path"),
        ("ref:main=nope", "revision 'nope' does not resolve to a commit here"),
        ("reachable:HEAD", "handle 'reachable:HEAD' is not of the form reachable:<rev>@<ref>"),
        ("reachable:HEAD@-x", "ref '-x' in 'reachable:HEAD@-x' starts with '-'"),
        ("reachable:-x@main", "revision '-x' starts with '-'; name a commit, branch or tag"),
        ("tag:-x", "tag name '-x' in 'tag:-x' is not a valid ref name (it starts with '-'); e.g. tag:v1.2"),
        ("tag:", "tag name '' in 'tag:' is not a valid ref name (it is empty); e.g. tag:v1.2"),
        ("tag:v1=-x", "revision '-x' starts with '-'; name a commit, branch or tag"),
        ("file:../x", "path '../x' in 'file:../x' escapes the repository; give a path inside it"),
        ("file:/etc/passwd", "path '/etc/passwd' in 'file:/etc/passwd' escapes the repository; give a path inside it"),
        ("file:a/../../x", "path 'a/../../x' in 'file:a/../../x' escapes the repository; give a path inside it"),
        ("file:..", "path '..' in 'file:..' escapes the repository; give a path inside it"),
        (
            "file:a\\..\\..\\x",
            "path 'a\\\\..\\\\..\\\\x' in 'file:a\\\\..\\\\..\\\\x' escapes the repository; give a path inside it",
        ),
        ("file:../x@HEAD", "path '../x' in 'file:../x@HEAD' escapes the repository; give a path inside it"),
        ("file:.git/config", "path '.git/config' in 'file:.git/config' does not name a file of the repository"),
        ("file:.", "path '.' in 'file:.' does not name a file of the repository"),
        ("file:", "handle 'file:' is not of the form file:<path>[@<rev>]"),
        ("file:README@-x", "revision '-x' starts with '-'; name a commit, branch or tag"),
        ("clean:now", "handle 'clean:now': clean: takes nothing after the colon"),
        (
            "pushed:HEAD@nowhere/main",
            "'nowhere/main' in 'pushed:HEAD@nowhere/main' names no configured remote (remotes: none configured)",
        ),
    ],
)
def test_a_bad_handle(started: Path, inproc: Run, handle: str, message: str) -> None:
    assert refused(inproc, started, "claim", "add", "x", "--check", handle) == f"git-continuity: error: {message}\n"


def test_an_unknown_handle_scheme(started: Path, inproc: Run) -> None:
    # Installed plugins add schemes; the built-in ones are always among those named.
    known = sorted(verify.schemes())
    assert {"clean", "commit", "file", "pushed", "reachable", "ref", "tag"} <= set(known)
    assert refused(inproc, started, "claim", "add", "x", "--check", "foo:bar") == (
        "git-continuity: error: unknown handle scheme 'foo:' in 'foo:bar'\n"
        f"Known here: {', '.join(s + ':' for s in known)} (git continuity plugins lists them with examples)\n"
    )


@pytest.mark.parametrize(
    ("handle", "message"),
    [
        (
            "pushed:--upload-pack=evil@origin/main",
            "revision '--upload-pack=evil' starts with '-'; name a commit, branch or tag",
        ),
        (
            "pushed:HEAD@origin/--upload-pack=evil",
            "branch '--upload-pack=evil' in 'pushed:HEAD@origin/--upload-pack=evil'"
            " is not a valid ref name (it starts with '-')",
        ),
        ("pushed:HEAD@origin/a..b", "branch 'a..b' in 'pushed:HEAD@origin/a..b' is not a valid ref name (it has '..')"),
        (
            "pushed:HEAD@upstream/main",
            "'upstream/main' in 'pushed:HEAD@upstream/main' names no configured remote (remotes: origin)",
        ),
        (
            "pushed:HEAD@origin",
            "'pushed:HEAD@origin' names the remote origin but no branch; the form is"
            " pushed:<rev>@<remote>/<branch>, e.g. pushed:HEAD@origin/main",
        ),
        ("pushed:HEAD", "handle 'pushed:HEAD' is not of the form pushed:<rev>@<remote>/<branch>"),
    ],
)
def test_a_bad_pushed_handle_in_a_clone(
    remote_and_clone: tuple[Path, Path], inproc: Run, handle: str, message: str
) -> None:
    _, work = remote_and_clone
    assert inproc(work, "init").code == 0
    assert refused(inproc, work, "claim", "add", "x", "--check", handle) == f"git-continuity: error: {message}\n"


def test_head_in_an_empty_repository(tmp_path: Path, inproc: Run) -> None:
    git(tmp_path, "init", "-q", "empty")
    empty = tmp_path / "empty"
    assert inproc(empty, "init").code == 0
    assert refused(inproc, empty, "claim", "add", "x", "--check", "commit:HEAD") == (
        "git-continuity: error: HEAD does not resolve: the repository has no commits yet\n"
    )


# -- ids and arguments ----------------------------------------------------------------------


def test_blocker_done_with_an_unknown_id(started: Path, inproc: Run) -> None:
    added = inproc(started, "blocker", "add", "CI runner is offline")
    blocker = re.search(r"b-[2-9a-hjkmnp-z]{6}", added.out).group(0)  # type: ignore[union-attr]
    assert refused(inproc, started, "blocker", "done", "b-222222") == (
        f"git-continuity: error: no blocker 'b-222222' in stream 'main' (open blockers: {blocker})\n"
    )
    assert inproc(started, "blocker", "done", blocker).code == 0
    assert refused(inproc, started, "blocker", "done", "b-222222") == (
        "git-continuity: error: no blocker 'b-222222' in stream 'main' (open blockers: none)\n"
    )
    err = refused(inproc, started, "blocker", "done", blocker)
    assert re.fullmatch(
        rf"git-continuity: error: blocker {blocker} was already done at "
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n",
        err,
    ), err


def test_verify_with_an_unknown_claim_id(started: Path, inproc: Run) -> None:
    assert refused(inproc, started, "verify", "c-222222") == (
        "git-continuity: error: no claim c-222222 in stream 'main' (git continuity claim list shows the ids)\n"
    )
    known = claim_id(inproc(started, "claim", "add", "also", "--check", "clean:"))
    assert refused(inproc, started, "verify", known, "c-222222", "c-333333") == (
        "git-continuity: error: no claim c-222222, c-333333 in stream 'main' "
        "(git continuity claim list shows the ids)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("objective", "set", "", "--why", "x"),
            "objective set needs a text and a non-empty --why (the reason is what the next session reads)",
        ),
        (
            ("objective", "set", "Ship it", "--why", "  "),
            "objective set needs a text and a non-empty --why (the reason is what the next session reads)",
        ),
        (("claim", "add", "  "), "claim add needs a non-empty statement"),
        (("journal", "add", ""), "journal add needs a non-empty text"),
        (("blocker", "add", "\n"), "blocker add needs a non-empty text"),
        (("next", " "), "next needs a non-empty text: the first thing the next session should do"),
        (("journal", "-n", "0"), "-n takes a whole number of entries, 1 or more"),
        (("journal", "-n", "-3"), "-n takes a whole number of entries, 1 or more"),
        (("log", "-n", "0"), "-n takes a whole number of changes, 1 or more"),
        (
            ("thread", "add", "y", "--budget", "time=99999999999999999999h"),
            "--budget: time=99999999999999999999h is not a duration such as 30m, 8h or 2d (at most 99999 of a unit)",
        ),
    ],
)
def test_empty_or_out_of_range_arguments(started: Path, inproc: Run, args: tuple[str, ...], message: str) -> None:
    assert refused(inproc, started, *args) == f"git-continuity: error: {message}\n"


@pytest.mark.parametrize(
    ("args", "last_line"),
    [
        (
            ("objective", "set", "Ship it"),
            "git continuity objective set: error: the following arguments are required: --why",
        ),
        (("journal", "-n", "many"), "git continuity journal: error: argument -n: invalid int value: 'many'"),
        (
            ("claim", "list", "--state", "green"),
            "git continuity claim list: error: argument --state: invalid choice: "
            "'green' (choose from 'verified', 'contradicted', 'unknown', 'unchecked', "
            "'stale', 'prose')",
        ),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(
    started: Path, inproc: Run, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], last_line: str
) -> None:
    before = everything(started)
    with pytest.raises(SystemExit) as raised:
        inproc(started, *args)
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: git continuity ")
    assert err.splitlines()[-1] == last_line
    assert everything(started) == before


# -- malformed state ------------------------------------------------------------------------

STATUS_HEAD = """\
stream main  (refs/continuity/main at REF)

"""


def normalized(text: str) -> str:
    text = re.sub(r"refs/continuity/main at [0-9a-f]{7}, changed [^)]*", "refs/continuity/main at REF", text)
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "TIME", text)
    text = re.sub(r"\b([cbj])-[2-9a-hjkmnp-z]{6}\b", r"\1-ID", text)
    return re.sub(r"\b[0-9a-f]{12}…", "OID…", re.sub(r"\b[0-9a-f]{7}\b", "SHORT", text))


def status_with_problems(problems: list[str]) -> str:
    return (
        STATUS_HEAD
        + """\
Objective  (unreadable: see problems below)

Claims (1 verified, 1 prose; states derived now, not stored)
  verified  c-ID  the first commit exists
            commit:OID…
            commit SHORT exists here
  prose     c-ID  the reviewers are happy
            no handle: shown, never trusted

Journal (1: git continuity journal)
  TIME  reproduced the bug

Problems (this state is malformed; nothing will be written on top of it)
"""
        + "".join(f"  {normalized(p)}\n" for p in problems)
    )


WRITES = [
    ("journal", "add", "more"),
    ("claim", "add", "more"),
    ("claim", "add", "more", "--check", "commit:HEAD"),
    ("next", "more"),
    ("objective", "set", "more", "--why", "because"),
    ("blocker", "add", "more"),
    ("verify",),
]


def assert_writes_refused(run: Run, repo: Path, problems: list[str]) -> None:
    for args in WRITES:
        err = refused(run, repo, *args)
        assert err == (
            "git-continuity: error: the state on refs/continuity/main is malformed; nothing was written:\n"
            + "".join(f"  {p}\n" for p in problems)
            + MALFORMED_TAIL
        ), args


@pytest.mark.parametrize(
    ("packet", "problems"),
    [
        (
            "objective:\nnext_action: check: the logs\nblockers: []\n",
            [f"{PACKET} line 2: not valid YAML: mapping values are not allowed here"],
        ),
        (
            "objective:\nnext_action: [unclosed\n",
            [f"{PACKET} line 3: not valid YAML: expected ',' or ']', but got '<stream end>'"],
        ),
        ("- just\n- a list\n", [f"{PACKET} line 1: expected a mapping of keys (objective, next_action, blockers)"]),
        ("objective:\nnext_action: push\ncolour: blue\n", [f"{PACKET} line 3: colour: unknown key 'colour'"]),
        (
            "objective:\nnext_action:\n  - push\n  - tag\n",
            [f"{PACKET} line 2: next_action: ['push', 'tag'] is not of type 'string', 'null'"],
        ),
        (
            "# my notes\nobjective:\n  text: Ship it\n  why: 5\n  set_at: '2026-11-30T10:00:00Z'\n  set_by: Ada\n",
            [f"{PACKET} line 4: objective.why: 5 is not of type 'string'"],
        ),
        (
            "objective:\n  text: Ship it\n  why: users wait\n  set_at: '2026-11-30T10:00:00Z'\n  set_by: Ada\n"
            "  owner: Bob\n",
            [f"{PACKET} line 6: objective.owner: unknown key 'owner'"],
        ),
        (
            "objective:\n  text: Ship it\n  why: users wait\n  set_at: yesterday\n  set_by: Ada\n",
            [
                f"{PACKET} line 4: objective.set_at: 'yesterday' is not in the expected form"
                " (a UTC time such as 2026-12-01T14:05:00Z)"
            ],
        ),
        (
            "blockers:\n  - id: b-222222\n    added_at: '2026-11-30T10:00:00Z'\n    added_by: Ada\n",
            [f"{PACKET} line 2: blockers.0: 'text' is missing"],
        ),
        (
            "blockers:\n  - id: b-aaaaaa\n    text: x\n    added_at: '2026-11-30T10:00:00Z'\n    added_by: Ada\n"
            "  - id: b-aaaaaa\n    text: y\n    added_at: '2026-11-30T10:00:00Z'\n    added_by: Ada\n",
            [
                f"{PACKET} line 6: blockers.1.id: b-aaaaaa is the id of blockers.0 too (line 2):"
                " give each blocker an id of its own"
            ],
        ),
        # Nested aliases: 252 bytes that expand to 9**7 values (issue 10: 26 s and 345 MB).
        (BOMB, [f"{PACKET} line 1: {NO_ALIASES}"]),
        ("objective:\n  text: &t Ship it\n  why: *t\n", [f"{PACKET} line 2: {NO_ALIASES}"]),
        ("next_action: " + "[" * 30 + "]" * 30 + "\n", [f"{PACKET} line 1: nested deeper than 20 levels"]),
        (
            "next_action: " + "x" * 262_144 + "\n",
            [f"{PACKET}: 262,158 bytes, over the limit of 262,144 bytes for this file: it was not read"],
        ),
    ],
    # A test's id reaches every process it starts (PYTEST_CURRENT_TEST): 256 KB of it is more
    # than an environment holds, and git would not start ("Argument list too long").
    ids=lambda value: value[:40] if isinstance(value, str) else None,
)
def test_a_hand_edited_packet_that_is_malformed(started: Path, inproc: Run, packet: str, problems: list[str]) -> None:
    write_state(started, {PACKET: packet})
    ran = inproc(started, "status")
    assert (ran.code, ran.err) == (2, "")
    assert normalized(ran.out) == status_with_problems(problems)

    data = json.loads(inproc(started, "status", "--json").out)
    assert data["problems"] == problems
    assert [c["state"] for c in data["claims"]] == ["verified", "prose"]
    assert [e["text"] for e in data["journal"]] == ["reproduced the bug"]

    assert_writes_refused(inproc, started, problems)


def test_a_malformed_packet_in_a_fresh_process(started: Path) -> None:
    write_state(started, {PACKET: "objective:\nnext_action: check: the logs\n"})
    problem = f"{PACKET} line 2: not valid YAML: mapping values are not allowed here"
    ran = cont(started, "status")
    assert (ran.code, ran.err) == (2, "")
    assert normalized(ran.out) == status_with_problems([problem])
    before = everything(started)
    ran = cont(started, "journal", "add", "more")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        "git-continuity: error: the state on refs/continuity/main is malformed; nothing was written:\n"
        f"  {problem}\n" + MALFORMED_TAIL
    )
    assert everything(started) == before


def test_a_missing_packet(started: Path, inproc: Run) -> None:
    write_state(started, {PACKET: None})
    problems = [f"{PACKET}: missing (run git continuity edit to recreate it)"]
    ran = inproc(started, "status")
    assert (ran.code, ran.err) == (2, "")
    assert normalized(ran.out) == status_with_problems(problems)
    assert_writes_refused(inproc, started, problems)


def test_next_without_text_on_a_malformed_packet(started: Path, inproc: Run) -> None:
    write_state(started, {PACKET: "colour: blue\n"})
    assert refused(inproc, started, "next") == (
        f"git-continuity: error: the packet is malformed:\n  {PACKET} line 1: colour: unknown key 'colour'\n"
    )


def claim_file(repo: Path) -> tuple[str, str]:
    """The path of the claim with a handle and its JSON text."""
    for name in git(repo, "ls-tree", "--name-only", "refs/continuity/main:.continuity/claims").splitlines():
        text = git(repo, "show", f"refs/continuity/main:.continuity/claims/{name}")
        if '"handle"' in text:
            return f".continuity/claims/{name}", text + "\n"
    raise AssertionError("no claim with a handle")


def status_without_the_first_claim(problems: list[str]) -> str:
    return normalized(
        STATUS_HEAD
        + """\
Objective  (no objective: nothing says what this work is for; set one with git continuity objective set "…" --why "…")
Next       (none: git continuity next TEXT)

Blockers (0 open)
  none

Claims (1 prose; states derived now, not stored)
  prose  c-ID  the reviewers are happy
         no handle: shown, never trusted

Journal (1: git continuity journal)
  TIME  reproduced the bug

Warnings
  no objective: nothing says what this work is for; set one with git continuity objective set "…" --why "…"

Problems (this state is malformed; nothing will be written on top of it)
"""
        + "".join(f"  {normalized(p)}\n" for p in problems)
    )


def test_a_claim_file_that_is_not_json(started: Path, inproc: Run) -> None:
    path, text = claim_file(started)
    broken = text.replace('",\n  "host"', '"\n  "host"')  # a comma lost
    assert broken != text
    with pytest.raises(ValueError) as parsing:
        json.loads(broken)
    assert "line " in str(parsing.value)  # the parser's own words name the line
    write_state(started, {path: broken})
    problems = [f"{path}: not valid JSON: {parsing.value}"]
    ran = inproc(started, "status")
    assert (ran.code, ran.err) == (2, "")
    assert normalized(ran.out) == status_without_the_first_claim(problems)
    listed = inproc(started, "claim", "list", "--json")
    assert listed.code == 2
    assert json.loads(listed.out)["problems"] == problems
    assert_writes_refused(inproc, started, problems)


def test_a_claim_file_that_breaks_its_schema(started: Path, inproc: Run) -> None:
    path, text = claim_file(started)
    data = json.loads(text)
    data["text"] = 5
    data["colour"] = "blue"
    data["handle"] = "HEAD"
    del data["host"]
    bad = json.dumps(data, indent=2, sort_keys=True) + "\n"
    lines = bad.splitlines()

    def line(key: str) -> int:
        return next(n for n, x in enumerate(lines, 1) if x.strip().startswith(f'"{key}"'))

    problems = [
        f"{path}: (top level): 'host' is missing",
        f"{path} line {line('colour')}: colour: unknown key 'colour'",
        f"{path} line {line('handle')}: handle: 'HEAD' is not in the expected form"
        " (a handle, scheme:address, e.g. commit:HEAD)",
        f"{path} line {line('text')}: text: 5 is not of type 'string'",
    ]
    write_state(started, {path: bad})
    ran = inproc(started, "status")
    assert (ran.code, ran.err) == (2, "")
    assert normalized(ran.out) == status_without_the_first_claim(problems)
    assert_writes_refused(inproc, started, problems)


def test_a_claim_file_whose_id_is_not_its_name(started: Path, inproc: Run) -> None:
    path, text = claim_file(started)
    real = json.loads(text)["id"]
    write_state(started, {path: text.replace(real, "c-222222")})
    line = next(n for n, x in enumerate(text.splitlines(), 1) if x.startswith('  "id"'))
    problems = [f"{path} line {line}: id: 'c-222222' does not match the file name"]
    assert inproc(started, "status").code == 2
    assert_writes_refused(inproc, started, problems)


def test_a_malformed_entry_that_status_does_not_read_is_still_reported(started: Path, inproc: Run) -> None:
    # status reads the latest journal entries and no objective change; a broken objective
    # change still blocks every write, so status must say so.
    assert inproc(started, "objective", "set", "Ship it", "--why", "users wait").code == 0
    name = git(started, "ls-tree", "--name-only", "refs/continuity/main:.continuity/objective")
    path = f".continuity/objective/{name}"
    write_state(started, {path: "{}\n", ".continuity/stray.txt": "x\n", ".continuity/format": "2\n"})
    problems = [
        *(f"{path}: (top level): '{key}' is missing" for key in ("id", "why", "at", "by")),
        ".continuity/format: written by a newer git-continuity (format is not 1); upgrade",
        ".continuity/stray.txt: not part of the state format 1",
    ]
    ran = inproc(started, "status", "--json")
    assert ran.code == 2
    assert sorted(json.loads(ran.out)["problems"]) == sorted(problems)
    assert_writes_refused(inproc, started, problems)


def test_a_write_that_would_put_the_packet_over_its_size_limit_is_refused(repo: Path) -> None:
    """No clone reads a packet over 256 KiB (nor `edit`, nor `blocker done` here): a write
    that would make one is refused, naming the file and the limit, and nothing is written;
    the packet can still be changed after (a blocker marked done)."""
    assert cont(repo, "init", "--no-fetch-refspecs").code == 0
    long = "x" * 100_000
    small = cont(repo, "blocker", "add", "small")
    assert small.code == 0
    made = small.out.split()[1].rstrip(":")
    for _ in range(2):
        assert cont(repo, "blocker", "add", long).code == 0
    before = state_refs(repo)
    refused = cont(repo, "blocker", "add", long)
    assert refused.code == 2
    assert re.fullmatch(
        r"git-continuity: error: refusing to write \.continuity/packet\.yaml: 300,\d{3} bytes, over the limit of"
        r" 262,144 bytes for this file \(no clone would read it\); nothing was written\.\n"
        r"Mark blockers done, or shorten texts with git continuity edit\.\n",
        refused.err,
    ), refused.err
    assert state_refs(repo) == before
    assert cont(repo, "blocker", "done", made) == Ran(0, f"Blocker {made} is done.\n", "")
