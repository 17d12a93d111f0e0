"""The commands one by one: journal, log, objective log, verify, claim list, next, plugins,
edit, and --help for every subcommand."""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import Ran, git, state_refs, untouched, write_state

from git_continuity import __version__
from git_continuity.cli import main as cli
from git_continuity.model import shown, stamp
from git_continuity.store import packetfile

Run = Callable[..., Ran]
HOST = socket.gethostname()
ME = "Ada Agent <ada@example.com>"


def ok(run: Run, where: Path, *args: str) -> Ran:
    ran = run(where, *args)
    assert (ran.code, ran.err) == (0, ""), ran
    return ran


def made_id(ran: Ran) -> str:
    return ran.out.split()[2].rstrip(":")  # "Recorded claim c-xxxxxx: ..." / "Journal entry j-xxxxxx recorded."


@pytest.fixture
def started(repo: Path, inproc: Run) -> Path:
    ok(inproc, repo, "init")
    return repo


def editor(tmp_path: Path, body: str, name: str = "editor.sh") -> str:
    script = tmp_path / name
    script.write_text("#!/bin/sh\nset -e\n" + body)
    script.chmod(0o755)
    return str(script)


# -- journal --------------------------------------------------------------------------------


def test_journal(started: Path, inproc: Run) -> None:
    assert (
        ok(inproc, started, "journal").out
        == 'The journal is empty: git continuity journal add "what was done, learned, tried"\n'
    )
    ids = [made_id(ok(inproc, started, "journal", "add", text)) for text in ("one", "two", "three")]
    assert ids[0].startswith("j-") and len(set(ids)) == 3
    entries = json.loads(ok(inproc, started, "journal", "--all", "--json").out)
    assert entries == {
        "stream": "main",
        "entries": [
            {"id": i, "text": t, "at": e["at"], "by": ME, "host": HOST}
            for i, t, e in zip(ids, ("one", "two", "three"), entries["entries"], strict=True)
        ],
        "total": 3,
        "faded": 0,
        "problems": [],
    }
    at = [e["at"] for e in entries["entries"]]
    assert at == sorted(at)

    def text(*n: int) -> str:
        return "".join(f"{shown(at[k])} UTC  {ids[k]}  {ME} on {HOST}\n  {('one', 'two', 'three')[k]}\n\n" for k in n)

    assert ok(inproc, started, "journal", "-n", "2").out == "(latest 2 of 3; --all shows every entry)\n\n" + text(1, 2)
    assert ok(inproc, started, "journal", "-n", "3").out == text(0, 1, 2)
    assert ok(inproc, started, "journal", "--all").out == text(0, 1, 2)
    # --all wins wherever it stands, before or after -n.
    assert ok(inproc, started, "journal", "-n", "1", "--all").out == text(0, 1, 2)
    assert ok(inproc, started, "journal", "--all", "-n", "1").out == text(0, 1, 2)
    assert ok(inproc, started, "journal").out == text(0, 1, 2)
    latest = json.loads(ok(inproc, started, "journal", "-n", "1", "--json").out)
    assert (latest["total"], [e["id"] for e in latest["entries"]]) == (3, [ids[2]])
    four = made_id(ok(inproc, started, "journal", "add", "  four  "))
    last = json.loads(ok(inproc, started, "journal", "-n", "1", "--json").out)["entries"][0]
    assert (last["id"], last["text"]) == (four, "four")  # trimmed


def test_journal_add_says_which_entry(started: Path, inproc: Run) -> None:
    ran = ok(inproc, started, "journal", "add", "tried X: fails on Y")
    entry = json.loads(ok(inproc, started, "journal", "--json").out)["entries"][0]
    assert ran.out == f"Journal entry {entry['id']} recorded.\n"


# -- log ------------------------------------------------------------------------------------


def raw_message(repo: Path, oid: str) -> str:
    return subprocess.run(
        ["git", "cat-file", "commit", oid], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split("\n\n", 1)[1]


def test_log(started: Path, inproc: Run) -> None:
    ok(inproc, started, "objective", "set", "Ship it", "--why", "users wait")
    ok(inproc, started, "claim", "add", "the first commit exists", "--check", "commit:HEAD")
    ok(inproc, started, "next", "push")
    history = [
        line.split(" ", 2) for line in git(started, "log", "--format=%H %ct %s", "refs/continuity/main").splitlines()
    ]
    assert [s for _, _, s in history][-1] == "init: start stream main"

    def when(ct: str) -> datetime:
        return datetime.fromtimestamp(int(ct), timezone.utc)

    expected = [
        f"{oid[:7]}  {shown(stamp(when(ct)))}  Ada Agent on {HOST}  {subject}\n" for oid, ct, subject in history
    ]
    assert ok(inproc, started, "log").out == "".join(expected)
    assert ok(inproc, started, "log", "-n", "2").out == "".join(expected[:2])
    assert ok(inproc, started, "log", "-n", "99999999999999999999").out == "".join(expected)  # past any length: all

    data = json.loads(ok(inproc, started, "log", "--json").out)
    assert data == {
        "stream": "main",
        "ref": "refs/continuity/main",
        "commits": [
            {
                "commit": oid,
                "at": stamp(when(ct)),
                "by": ME,
                "summary": subject,
                "message": raw_message(started, oid),
                "host": HOST,
            }
            for oid, ct, subject in history
        ],
    }
    head = git(started, "rev-parse", "HEAD")
    assert (
        data["commits"][1]["message"]
        == f"claim add {made_claim(data)}: the first commit exists\n\nhandle: commit:{head}\n\nHost: {HOST}\n"
    )
    assert data["commits"][2]["message"] == f"objective: Ship it\n\nwhy: users wait\nwas: (none)\n\nHost: {HOST}\n"
    assert [c["commit"] for c in json.loads(ok(inproc, started, "log", "-n", "1", "--json").out)["commits"]] == [
        history[0][0]
    ]


def made_claim(log: dict[str, object]) -> str:
    summary = log["commits"][1]["summary"]  # type: ignore[index]
    return str(summary).split()[2].rstrip(":")


# -- objective ------------------------------------------------------------------------------


def test_objective_log(started: Path, inproc: Run) -> None:
    assert (
        ok(inproc, started, "objective", "log").out == "No objective: nothing says what this work is for; set one with"
        ' git continuity objective set "…" --why "…".\n'
    )
    assert ok(inproc, started, "objective", "set", "Fix the login loop", "--why", "users bounce back").out == (
        "Objective set: Fix the login loop\n  why: users bounce back\n"
    )
    ok(inproc, started, "objective", "set", "  Fix the loop and ship 1.2 ", "--why", " release is due ")
    data = json.loads(ok(inproc, started, "objective", "log", "--json").out)
    changes = data["changes"]
    assert [(c["old"], c["new"], c["why"], c["by"]) for c in changes] == [
        (None, "Fix the login loop", "users bounce back", ME),
        ("Fix the login loop", "Fix the loop and ship 1.2", "release is due", ME),
    ]
    assert data["current"] == {
        "text": "Fix the loop and ship 1.2",
        "why": "release is due",
        "set_at": changes[1]["at"],
        "set_by": ME,
    }
    assert data["problems"] == []
    assert ok(inproc, started, "objective", "log").out == (
        f"{shown(changes[1]['at'])} UTC  {ME}\n"
        "  now: Fix the loop and ship 1.2\n"
        "  was: Fix the login loop\n"
        "  why: release is due\n\n"
        f"{shown(changes[0]['at'])} UTC  {ME}\n"
        "  now: Fix the login loop\n"
        "  was: (none)\n"
        "  why: users bounce back\n\n"
    )


# -- next -----------------------------------------------------------------------------------


def test_next_prints_the_next_action_without_text(started: Path, inproc: Run) -> None:
    assert ok(inproc, started, "next").out == "(none: git continuity next TEXT)\n"
    assert ok(inproc, started, "next", " rebase on origin/main ").out == "Next action: rebase on origin/main\n"
    tip = state_refs(started)
    assert ok(inproc, started, "next").out == "rebase on origin/main\n"
    assert state_refs(started) == tip  # reading writes nothing


# -- verify ---------------------------------------------------------------------------------


def evidence_files(repo: Path) -> dict[str, list[dict[str, object]]]:
    """Evidence entries by claim id, oldest first, read straight from the ref."""
    out: dict[str, list[dict[str, object]]] = {}
    listing = git(repo, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/evidence/")
    for path in sorted(listing.splitlines()):
        out.setdefault(path.split("/")[2], []).append(json.loads(git(repo, "show", f"refs/continuity/main:{path}")))
    return out


def test_verify_records_one_evidence_file_per_claim(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    exists = made_id(ok(inproc, started, "claim", "add", "the first commit exists", "--check", "commit:HEAD"))
    on_main = made_id(ok(inproc, started, "claim", "add", "main is at it", "--check", "ref:main=HEAD"))
    clean = made_id(ok(inproc, started, "claim", "add", "nothing is uncommitted", "--check", "clean:"))
    prose = made_id(ok(inproc, started, "claim", "add", "the reviewers are happy"))
    before = untouched(started)

    ran = ok(inproc, started, "verify")
    assert ran.out == (
        f"  verified  {exists}  the first commit exists\n"
        f"            commit:{head[:12]}…\n"
        f"            commit {head[:7]} exists here\n"
        f"  verified  {on_main}  main is at it\n"
        f"            ref:refs/heads/main={head[:12]}…\n"
        f"            refs/heads/main is at {head[:7]}\n"
        f"  verified  {clean}  nothing is uncommitted\n"
        f"            clean:\n"
        f"            the work tree has no uncommitted changes\n"
        f"  prose     {prose}  the reviewers are happy\n"
        f"            no handle: shown, never trusted\n"
        "\nRecorded 3 evidence entries.\n"
    )
    recorded = evidence_files(started)
    assert sorted(recorded) == sorted([exists, on_main, clean])  # none for prose
    (first,) = recorded[on_main]
    assert first == {
        "id": first["id"],
        "claim": on_main,
        "handle": f"ref:refs/heads/main={head}",
        "result": "verified",
        "observed": f"refs/heads/main is at {head[:7]}",
        "verifier": "git",
        "verifier_version": __version__,
        "checked_at": first["checked_at"],
        "host": HOST,
        "depends_on": {"refs/heads/main": head},
        "clone": json.loads((started / ".git" / "continuity" / "clone.json").read_text())["id"],  # who derived it
    }
    assert recorded[exists][0]["depends_on"] == {}
    assert git(started, "log", "-1", "--format=%B", "refs/continuity/main") == (
        "verify: 3 claims (3 verified)\n\n"
        f"{exists} verified: commit {head[:7]} exists here\n"
        f"{on_main} verified: refs/heads/main is at {head[:7]}\n"
        f"{clean} verified: the work tree has no uncommitted changes\n\n"
        f"Host: {HOST}"
    )

    # One claim not verified: exit 1, and its evidence says why.
    (started / "new.txt").write_text("x\n")
    ran = inproc(started, "verify", "--json")
    assert (ran.code, ran.err) == (1, "")
    data = json.loads(ran.out)
    assert {c["id"]: c["state"] for c in data["claims"]} == {
        exists: "verified",
        on_main: "verified",
        clean: "contradicted",
        prose: "prose",
    }
    assert len(data["evidence"]) == 3
    recorded = evidence_files(started)
    assert {k: len(v) for k, v in recorded.items()} == {exists: 2, on_main: 2, clean: 2}
    assert (recorded[clean][1]["result"], recorded[clean][1]["observed"]) == (
        "contradicted",
        "1 uncommitted change: new.txt",
    )
    assert sorted(
        str(e["id"]) for v in recorded.values() for e in v if e["checked_at"] == recorded[clean][1]["checked_at"]
    ) == sorted(data["evidence"])

    # Only the claims named; prose named explicitly cannot verify.
    assert inproc(started, "verify", exists, on_main).code == 0
    assert {k: len(v) for k, v in evidence_files(started).items()} == {exists: 3, on_main: 3, clean: 2}
    ran = inproc(started, "verify", prose)
    assert (ran.code, ran.out) == (
        1,
        f"  prose  {prose}  the reviewers are happy\n         no handle: shown, never trusted\n",
    )
    after = untouched(started)
    assert (after[:2], after[2], after[3]) == (before[:2], "?? new.txt", before[3])  # only what the test made


def test_verify_with_no_claims(started: Path, inproc: Run) -> None:
    tip = state_refs(started)
    assert ok(inproc, started, "verify").out == "No claims to verify.\n"
    assert state_refs(started) == tip


# -- claim list -----------------------------------------------------------------------------


def test_claim_list_by_state(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    good = made_id(ok(inproc, started, "claim", "add", "the first commit exists", "--check", "commit:HEAD"))
    tag = made_id(ok(inproc, started, "claim", "add", "v1 is tagged", "--check", "tag:v1"))
    notes = made_id(ok(inproc, started, "claim", "add", "the notes are committed", "--check", "file:NOTES"))
    prose = made_id(ok(inproc, started, "claim", "add", "the reviewers are happy"))
    assert ok(inproc, started, "claim", "list", "--state", "contradicted").out == (
        f"  contradicted  {tag}  v1 is tagged\n"
        "                tag:v1\n"
        "                tag v1 does not exist here\n"
        f"  contradicted  {notes}  the notes are committed\n"
        "                file:NOTES\n"
        f"                NOTES is not in HEAD ({head[:7]})\n"
    )
    listed = json.loads(ok(inproc, started, "claim", "list", "--state", "prose", "--state", "verified", "--json").out)
    assert [(c["id"], c["state"]) for c in listed["claims"]] == [(good, "verified"), (prose, "prose")]
    assert ok(inproc, started, "claim", "list", "--state", "stale").out == "No claims.\n"
    everything = json.loads(ok(inproc, started, "claim", "list", "--json").out)["claims"]
    assert [c["id"] for c in everything] == [good, tag, notes, prose]
    assert everything[0] == {
        "id": good,
        "text": "the first commit exists",
        "handle": f"commit:{head}",
        "written": "commit:HEAD",
        "thread": None,
        "state": "verified",
        "observed": f"commit {head[:7]} exists here",
        "checked_at": everything[0]["checked_at"],
        "origin": "now",
        "freshness": {"kind": "now", "text": "re-derived now"},
        "added_at": everything[0]["added_at"],
        "added_by": ME,
    }
    assert everything[3]["checked_at"] is None and everything[3]["handle"] is None


def test_claim_add_says_what_was_recorded(started: Path, inproc: Run) -> None:
    head = git(started, "rev-parse", "HEAD")
    ran = ok(inproc, started, "claim", "add", "the first commit exists", "--check", "commit:HEAD")
    assert ran.out == (
        f"Recorded claim {made_id(ran)}: the first commit exists\n"
        f"  handle  commit:{head[:12]}…  (as written: commit:HEAD)\n"
        f"  now     verified: commit {head[:7]} exists here\n"
    )
    ran = ok(inproc, started, "claim", "add", "it is clean", "--check", "clean:")
    assert ran.out == (
        f"Recorded claim {made_id(ran)}: it is clean\n"
        "  handle  clean:\n"
        "  now     verified: the work tree has no uncommitted changes\n"
    )
    ran = ok(inproc, started, "claim", "add", "the reviewers are happy")
    assert ran.out == (
        f"Recorded claim {made_id(ran)}: the reviewers are happy\n"
        "  prose: no handle, so it is shown but never trusted (add one with --check HANDLE)\n"
    )


# -- plugins --------------------------------------------------------------------------------

GIT_SCHEMES = [
    ("commit", "the commit exists here", "commit:HEAD"),
    ("ref", "the ref points exactly at rev", "ref:main=HEAD"),
    ("reachable", "rev is the ref's commit or an ancestor of it", "reachable:HEAD@main"),
    (
        "pushed",
        "rev is on the remote's branch (remote-tracking ref; --online asks the remote)",
        "pushed:HEAD@origin/main",
    ),
    ("tag", "the tag exists (and points at rev)", "tag:v1.2 or tag:v1.2=HEAD"),
    ("file", "the path exists in rev's tree (HEAD now when no rev)", "file:conf/app.toml@HEAD"),
    ("clean", "the work tree has no uncommitted changes", "clean:"),
]


def test_plugins(tmp_path: Path, inproc: Run) -> None:
    # Outside any repository: listing plugins needs none.
    data = json.loads(ok(inproc, tmp_path, "plugins", "--json").out)
    names = [p["name"] for p in data["plugins"]]
    assert names == sorted(names) and "git" in names
    (git_plugin,) = [p for p in data["plugins"] if p["name"] == "git"]
    assert git_plugin == {
        "name": "git",
        "version": __version__,
        "schemes": [
            {"scheme": s, "summary": m, "example": e, "live": True, "network": False} for s, m, e in GIT_SCHEMES
        ],
    }
    text = ok(inproc, tmp_path, "plugins").out
    block = f"git {__version__}\n" + "".join(
        f"  {(s + ':').ljust(11)} {m}  [live]\n  {'':11} e.g. {e}\n" for s, m, e in GIT_SCHEMES
    )
    assert block in text
    assert text.splitlines()[0].split()[0] == names[0]


# -- edit -----------------------------------------------------------------------------------


@pytest.fixture
def kept(started: Path) -> Path:
    return (started / ".git" / "continuity" / "edit" / "main.packet.yaml").resolve()


VALID = """\
# hand-written
objective:
  text: Ship the login fix
  why: users are locked out
  set_at: '2026-11-30T10:00:00Z'
  set_by: Ada by hand
next_action: push the fix
blockers: []
"""


# What edit prints after saving VALID over a packet that held no values.
VALID_SAVED = """\
Packet updated:
  objective.text: (none) → "Ship the login fix"
  objective.why: (none) → "users are locked out"
  objective.set_at: (none) → "2026-11-30T10:00:00Z"
  objective.set_by: (none) → "Ada by hand"
  next_action: (none) → "push the fix"
"""


def use_editor(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, body: str, name: str = "editor.sh") -> None:
    monkeypatch.setenv("GIT_EDITOR", editor(tmp_path, body, name))


def write_with(tmp_path: Path, text: str, name: str) -> str:
    """A shell line that writes ``text`` over the file being edited."""
    source = tmp_path / name
    source.write_text(text)
    return f"cp '{source}' \"$1\"\n"


def test_edit_a_valid_packet(
    started: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = untouched(started)
    seen = tmp_path / "seen.yaml"
    use_editor(monkeypatch, tmp_path, f"cp \"$1\" '{seen}'\n" + write_with(tmp_path, VALID, "valid.yaml"))
    assert ok(inproc, started, "edit").out == VALID_SAVED
    assert seen.read_text() == packetfile.TEMPLATE  # the editor was given the packet as stored
    assert git(started, "show", f"refs/continuity/main:{packetfile.PATH}") + "\n" == VALID
    assert git(started, "log", "-1", "--format=%s", "refs/continuity/main") == "edit: packet edited by hand"
    assert not kept.exists()
    assert ok(inproc, started, "next").out == "push the fix\n"
    # The objective changed by hand lands in the objective log.
    changes = json.loads(ok(inproc, started, "objective", "log", "--json").out)["changes"]
    assert [(c["old"], c["new"], c["why"], c["by"]) for c in changes] == [
        (None, "Ship the login fix", "users are locked out", ME)
    ]
    assert untouched(started) == before

    # No change: nothing written.
    tip = state_refs(started)
    use_editor(monkeypatch, tmp_path, "true\n", "noop.sh")
    assert ok(inproc, started, "edit").out == "No changes.\n"
    assert state_refs(started) == tip and not kept.exists()


def test_an_invalid_edit_writes_nothing_and_is_kept(
    started: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tip = state_refs(started)
    broken = VALID.replace("next_action: push the fix", "next_action: push: the fix")
    use_editor(monkeypatch, tmp_path, write_with(tmp_path, broken, "broken.yaml"))
    ran = inproc(started, "edit")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        f"git-continuity: error: {kept} line 7: not valid YAML: mapping values are not allowed here\n"
        f"Nothing was written. Your edit is kept in {kept}; run git continuity edit again to fix it,"
        " or drop it: git continuity edit --discard\n"
    )
    assert state_refs(started) == tip
    assert kept.read_text() == broken

    # The next edit starts from the kept file; a schema violation is refused the same way.
    seen = tmp_path / "seen.yaml"
    use_editor(
        monkeypatch,
        tmp_path,
        f"cp \"$1\" '{seen}'\n"
        + write_with(tmp_path, VALID.replace("blockers: []", "colour: blue"), "unknown-key.yaml"),
        "e2.sh",
    )
    ran = inproc(started, "edit")
    assert seen.read_text() == broken
    assert ran.code == 2
    assert ran.out == f"Resuming your earlier edit kept in {kept} (git continuity edit --discard drops it).\n"
    assert ran.err == (
        f"git-continuity: error: {kept} line 8: colour: unknown key 'colour'\n"
        f"Nothing was written. Your edit is kept in {kept}; run git continuity edit again to fix it,"
        " or drop it: git continuity edit --discard\n"
    )
    assert state_refs(started) == tip

    use_editor(monkeypatch, tmp_path, write_with(tmp_path, VALID, "fixed.yaml"), "e3.sh")
    ran = ok(inproc, started, "edit")
    assert (
        ran.out
        == f"Resuming your earlier edit kept in {kept} (git continuity edit --discard drops it).\n" + VALID_SAVED
    )
    assert not kept.exists()
    assert git(started, "show", f"refs/continuity/main:{packetfile.PATH}") + "\n" == VALID


def test_an_editor_that_fails_keeps_the_edit(
    started: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tip = state_refs(started)
    script = editor(tmp_path, "echo 'next_action: half' > \"$1\"\nexit 3\n")
    monkeypatch.setenv("GIT_EDITOR", script)
    ran = inproc(started, "edit")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == f"git-continuity: error: the editor ({script}) failed; your edit is kept in {kept}\n"
    assert kept.read_text() == "next_action: half\n"
    assert state_refs(started) == tip


def test_a_packet_changed_while_editing_is_not_overwritten(
    started: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another session sets the next action while this one is in the editor.
    use_editor(
        monkeypatch,
        tmp_path,
        "git continuity next 'theirs' >/dev/null\n" + write_with(tmp_path, "next_action: mine\n", "mine.yaml"),
    )
    ran = inproc(started, "edit")
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == (
        "git-continuity: error: the packet changed while you were editing; "
        f"your edit is kept in {kept}: run git continuity edit again\n"
    )
    assert ok(inproc, started, "next").out == "theirs\n"
    assert kept.read_text() == "next_action: mine\n"


@pytest.mark.parametrize(
    "broken",
    [
        "objective:\nnext_action: push: the fix\n",  # not YAML
        "objective:\nnext_action: push\ncolour: blue\n",  # breaks the schema
        None,  # missing
    ],
)
def test_edit_repairs_a_packet_broken_by_hand(
    started: Path, tmp_path: Path, inproc: Run, kept: Path, monkeypatch: pytest.MonkeyPatch, broken: str | None
) -> None:
    ok(inproc, started, "claim", "add", "the reviewers are happy")
    write_state(started, {packetfile.PATH: broken})
    assert inproc(started, "status").code == 2
    assert inproc(started, "journal", "add", "blocked").code == 2
    seen = tmp_path / "seen.yaml"
    use_editor(monkeypatch, tmp_path, f"cp \"$1\" '{seen}'\n" + write_with(tmp_path, VALID, "valid.yaml"))
    saved = VALID_SAVED
    if broken and "colour" in broken:  # a packet that breaks the schema still shows what it held
        saved = saved.replace('(none) → "push the fix"', '"push" → "push the fix"') + '  colour: "blue" → (none)\n'
    assert ok(inproc, started, "edit").out == saved
    assert seen.read_text() == (broken if broken is not None else packetfile.TEMPLATE)
    status = json.loads(ok(inproc, started, "status", "--json").out)
    assert (status["problems"], status["next_action"], status["objective"]["text"]) == (
        [],
        "push the fix",
        "Ship the login fix",
    )
    assert [c["text"] for c in status["claims"]] == ["the reviewers are happy"]
    ok(inproc, started, "journal", "add", "unblocked")


# -- every subcommand documents itself ------------------------------------------------------


def subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name)
                yield from subcommands(sub, (*path, name))


ALL_SUBCOMMANDS = list(subcommands(cli.build_parser()))


def test_the_subcommands_are_found() -> None:
    for expected in [
        ("init",),
        ("status",),
        ("objective", "set"),
        ("objective", "log"),
        ("next",),
        ("blocker", "add"),
        ("blocker", "done"),
        ("claim", "add"),
        ("claim", "list"),
        ("verify",),
        ("journal",),
        ("journal", "add"),
        ("log",),
        ("edit",),
        ("plugins",),
    ]:
        assert expected in ALL_SUBCOMMANDS


@pytest.mark.parametrize("path", ALL_SUBCOMMANDS, ids=" ".join)
def test_every_subcommand_has_help_with_an_example(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main([*path, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: git continuity {' '.join(path)}")
    assert "\nexample:\n" in out
    # At least one example runs this very command.
    example = out.split("\nexample:\n", 1)[1].split("\n\n", 1)[0]
    assert f"git continuity {path[0]}" in example, example


def test_claim_retract_removes_the_claim_and_the_journal_keeps_why(repo: Path, inproc: Run) -> None:
    assert inproc(repo, "init").code == 0
    added = inproc(repo, "claim", "add", "v9 is tagged", "--check", "tag:v9")
    cid = added.out.split()[2].rstrip(":")
    done = inproc(repo, "claim", "retract", cid, "--why", "no v9 after all")
    assert (done.code, done.out) == (0, f"Claim {cid} retracted; the journal keeps what it said and why.\n")
    status = json.loads(inproc(repo, "status", "--json").out)
    assert status["claims"] == []
    assert status["journal"][-1]["text"] == (
        f'retracted claim {cid} "v9 is tagged" (tag:v9), contradicted when withdrawn: no v9 after all'
    )
    again = inproc(repo, "claim", "retract", cid, "--why", "twice")
    retracted_at = shown(status["journal"][-1]["at"])
    assert (again.code, again.err) == (
        2,
        f"git-continuity: error: claim {cid} was retracted at {retracted_at} UTC: no v9 after all\n",
    )
    empty = inproc(repo, "claim", "retract", cid, "--why", " ")
    assert (empty.code, empty.err) == (
        2,
        "git-continuity: error: claim retract needs a non-empty --why: the journal keeps it\n",
    )


def test_stream_is_accepted_after_the_command_too(repo: Path, inproc: Run) -> None:
    assert inproc(repo, "init", "--stream", "agent-b").code == 0
    assert inproc(repo, "journal", "add", "on b", "--stream", "agent-b").code == 0
    entries = json.loads(inproc(repo, "--stream", "agent-b", "journal", "--json").out)["entries"]
    assert [e["text"] for e in entries] == ["on b"]
    assert inproc(repo, "status", "--stream", "main").code == 2  # main was never started here
