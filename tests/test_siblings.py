"""Siblings on real repositories with bare remotes: repo add|set-path|list|remove, handles
scoped to a sibling dereferenced there (with trust there), a sibling missing on another
machine, bad input, cycles, and the issue's scenario from end to end."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, approve, commit, cont, git, kept_in, state_refs

Run = Callable[..., Ran]
ID = "[2-9a-hjkmnp-z]"


def run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> Ran:
    done = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, env=env)
    return Ran(done.returncode, done.stdout, done.stderr)


def with_remote(root: Path, name: str) -> Path:
    """Repository root/NAME with one commit, pushed to its bare remote root/NAME.git as origin."""
    work = root / name
    git(root, "init", "-q", str(work))
    commit(work, "first", {"README": f"{name}\n"})
    git(root, "init", "-q", "--bare", f"{name}.git")
    git(work, "remote", "add", "origin", f"../{name}.git")
    git(work, "push", "-q", "origin", "main")
    git(work, "fetch", "-q", "origin")
    return work


@pytest.fixture
def three(tmp_path: Path, inproc: Run) -> Path:
    """cli (state started, its origin), api and consumer, each with a bare remote."""
    for name in ("cli", "api", "consumer"):
        with_remote(tmp_path, name)
    assert inproc(tmp_path / "cli", "init", "--local").code == 0
    return tmp_path


def made_id(text: str, prefix: str) -> str:
    import re

    found = re.search(rf"\b{prefix}-{ID}{{6}}\b", text)
    assert found, text
    return found.group(0)


# -- repo add, list, set-path, remove -------------------------------------------------------


def test_repo_add_list_and_remove(three: Path, inproc: Run) -> None:
    cli = three / "cli"
    added = inproc(cli, "repo", "add", "api", "../api")
    assert (added.code, added.out, added.err) == (
        0,
        f"Sibling api added: {three / 'api'} on this machine\n"
        f"  url   {three / 'api.git'}\n"
        "  scope a check to it: --check '@api:pushed:HEAD@origin/main' or --check '@api:cmd:make check'\n",
        "",
    )
    url = "https://example.com/org/consumer.git"
    assert inproc(cli, "repo", "add", "consumer", str(three / "consumer"), "--url", url).code == 0
    # The name and URL are in the state, one file each; the folders stay on this machine.
    files = git(cli, "ls-tree", "--name-only", "refs/continuity/main", ".continuity/siblings/").split()
    stored = [json.loads(git(cli, "show", f"refs/continuity/main:{f}")) for f in files]
    assert sorted((s["name"], s["url"], s["added_by"]) for s in stored) == [
        ("api", str(three / "api.git"), "Ada Agent <ada@example.com>"),
        ("consumer", url, "Ada Agent <ada@example.com>"),
    ]
    assert json.loads((cli / ".git" / "continuity" / "siblings.json").read_text()) == {
        "siblings": {"api": str(three / "api"), "consumer": str(three / "consumer")}
    }
    assert git(cli, "log", "-1", "--format=%s", "refs/continuity/main") == f"repo add consumer: {url}"
    listed = inproc(cli, "repo", "list")
    assert (listed.code, listed.out) == (
        0,
        f"api       {three / 'api'}\n          url {three / 'api.git'}\n"
        f"consumer  {three / 'consumer'}\n          url {url}\n",
    )
    doc = json.loads(inproc(cli, "repo", "list", "--json").out)
    assert [(s["name"], s["found"], s["path"], s["reason"]) for s in doc["siblings"]] == [
        ("api", True, str(three / "api"), None),
        ("consumer", True, str(three / "consumer"), None),
    ]
    # Adding it again only says where it is: nothing is written.
    before = state_refs(cli)
    again = inproc(cli, "repo", "add", "api", "../api")
    assert (again.code, again.out) == (
        0,
        f"Sibling api is at {three / 'api'} on this machine "
        f"(kept in {cli / '.git' / 'continuity' / 'siblings.json'}, never synced).\n",
    )
    assert state_refs(cli) == before
    # A claim scoped to it, then the sibling removed: the claim is unknown, saying why.
    claim = made_id(inproc(cli, "claim", "add", "api is there", "--check", "@api:commit:HEAD").out, "c")
    gone = inproc(cli, "repo", "remove", "api")
    assert (gone.code, gone.out) == (
        0,
        "Sibling api is no longer part of stream 'main'.\n"
        f"  claims that still check @api ({claim}) are unknown until it is added again\n",
    )
    (shown,) = json.loads(inproc(cli, "status", "--json").out)["claims"]
    assert (shown["state"], shown["observed"]) == (
        "unknown",
        "stream 'main' has no sibling 'api' (siblings: consumer); add it: git continuity repo add api PATH",
    )
    assert "api" not in json.loads((cli / ".git" / "continuity" / "siblings.json").read_text())["siblings"]
    empty = inproc(cli, "repo", "remove", "consumer")
    assert empty.code == 0
    assert inproc(cli, "repo", "list").out == (
        "No siblings in stream 'main': it spans this repository only. Add one with:\n"
        "  git continuity repo add NAME PATH [--url URL]\n"
    )


def test_bad_siblings_are_refused_naming_the_input(three: Path, inproc: Run) -> None:
    cli = three / "cli"
    (three / "plain").mkdir()
    (three / "api" / "src").mkdir()
    git(cli, "worktree", "add", "-q", "-b", "side", "../cli-side")
    assert inproc(cli, "repo", "add", "api", "../api").code == 0
    before = state_refs(cli)
    cases = {
        ("repo", "add", "Api", "../api"): "sibling name 'Api' is not usable: lower-case letters, digits, '-' and '_', "
        "1 to 32 characters, starting with a letter or digit (e.g. api, consumer)",
        ("repo", "add", "a/b", "../api"): "sibling name 'a/b' is not usable: lower-case letters, digits, '-' and '_', "
        "1 to 32 characters, starting with a letter or digit (e.g. api, consumer)",
        ("repo", "add", "x" * 33, "../api"): f"sibling name {'x' * 33!r} is not usable: lower-case letters, digits, "
        "'-' and '_', 1 to 32 characters, starting with a letter or digit (e.g. api, consumer)",
        ("repo", "add", "gone", "../nowhere"): "sibling gone: ../nowhere does not exist or is not a folder",
        ("repo", "add", "plain", "../plain"): "sibling plain: ../plain is not a git repository "
        "(git init or git clone it first)",
        ("repo", "add", "src", "../api/src"): f"sibling src: ../api/src is not a repository's top folder: "
        f"it is inside {three / 'api'}",
        ("repo", "add", "self", "."): f"sibling self: . is this repository ({cli / '.git'}); "
        "a sibling is another repository the stream spans",
        ("repo", "add", "side", "../cli-side"): f"sibling side: ../cli-side is this repository ({cli / '.git'}); "
        "a sibling is another repository the stream spans",
        ("repo", "add", "api2", "../api"): f"sibling api2: ../api is already sibling api here ({three / 'api'})",
        ("repo", "add", "consumer", "../consumer", "--url", "https://ada:ghp_secret@example.com/c.git"): (
            "--url carries a password or token (user:secret@): the URL is synced with the state; "
            "give it without one (your git credential helper supplies it)"
        ),
        ("repo", "add", "consumer", "../consumer", "--url=-uhelp"): "--url '-uhelp' is not usable: one URL or "
        "path git can clone, without spaces, not starting with '-', at most 1000 characters",
        ("repo", "set-path", "consumer", "../consumer"): "no sibling 'consumer' in stream 'main' (siblings: api); "
        "add it: git continuity repo add consumer PATH",
        ("repo", "remove", "consumer"): "no sibling 'consumer' in stream 'main' (siblings: api); "
        "add it: git continuity repo add consumer PATH",
        ("claim", "add", "x", "--check", "@consumer:commit:HEAD"): "stream 'main' has no sibling 'consumer' "
        "(siblings: api); add it: git continuity repo add consumer PATH",
        ("claim", "add", "x", "--check", "@api:@api:commit:HEAD"): "handle '@api:@api:commit:HEAD' is not of the "
        "form @SIBLING:scheme:address, e.g. @api:pushed:HEAD@origin/main\n(a sibling's name: lower-case letters, "
        "digits, '-' and '_'; one sibling per handle; git continuity repo list names them)",
        ("claim", "add", "x", "--check", "@API:commit:HEAD"): "handle '@API:commit:HEAD' is not of the form "
        "@SIBLING:scheme:address, e.g. @api:pushed:HEAD@origin/main\n(a sibling's name: lower-case letters, "
        "digits, '-' and '_'; one sibling per handle; git continuity repo list names them)",
        ("claim", "add", "x", "--check", "@api:commit:nosuch"): "revision 'nosuch' does not resolve to a commit here "
        f"(in sibling api, {three / 'api'})",
        ("thread", "add", "t", "--check", "@api:bogus:x"): "unknown handle scheme 'bogus:' in 'bogus:x'",
    }
    for args, message in cases.items():
        said = inproc(cli, *args)
        assert (said.code, said.out) == (2, ""), args
        assert said.err.startswith(f"git-continuity: error: {message}"), (args, said.err)
    assert state_refs(cli) == before  # nothing written
    assert json.loads((cli / ".git" / "continuity" / "siblings.json").read_text()) == {
        "siblings": {"api": str(three / "api")}
    }


def test_a_sibling_that_lists_this_repository_back_is_a_cycle(three: Path, inproc: Run) -> None:
    """A stream's state lives in one repository: a sibling whose own stream of the same name
    lists this repository back, directly or through its own siblings, is refused."""
    cli, api, consumer = three / "cli", three / "api", three / "consumer"
    for where in (api, consumer):
        assert inproc(where, "init", "--local").code == 0
    assert inproc(api, "repo", "add", "cli", "../cli").code == 0
    before = state_refs(cli)
    direct = inproc(cli, "repo", "add", "api", "../api")
    assert (direct.code, direct.err) == (
        2,
        "git-continuity: error: sibling api: its own stream 'main' lists this repository back (api -> here, as "
        "'cli'), a cycle. A stream's state lives in one repository, which spans the others: drop the listing "
        f"there (git continuity repo remove cli in {api}), or keep this stream's state there instead\n",
    )
    assert inproc(api, "repo", "remove", "cli").code == 0
    assert inproc(api, "repo", "add", "consumer", "../consumer").code == 0
    assert inproc(consumer, "repo", "add", "home", "../cli").code == 0
    longer = inproc(cli, "repo", "add", "api", "../api")
    assert longer.code == 2
    assert "lists this repository back (api -> consumer -> here, as 'home'), a cycle." in longer.err
    assert state_refs(cli) == before
    # The same refusal from the other side: consumer may not list api, which lists it.
    loop = inproc(consumer, "repo", "add", "api", "../api")
    assert loop.code == 2 and "lists this repository back (api -> here, as 'consumer'), a cycle." in loop.err
    # A sibling whose siblings lead elsewhere is fine.
    assert inproc(consumer, "repo", "remove", "home").code == 0
    assert inproc(cli, "repo", "add", "api", "../api").code == 0


# -- scoped handles, dereferenced in the sibling ---------------------------------------------


def test_scoped_checks_are_dereferenced_in_their_sibling(three: Path, inproc: Run) -> None:
    cli, api, consumer = three / "cli", three / "api", three / "consumer"
    assert inproc(cli, "repo", "add", "api", "../api").code == 0
    assert inproc(cli, "repo", "add", "consumer", "../consumer").code == 0
    change = commit(api, "the new output field", {"api.txt": "field\n"})
    # HEAD is resolved in api when the claim is recorded (cli's HEAD is another commit).
    added = inproc(cli, "claim", "add", "the API change is pushed", "--check", "@api:pushed:HEAD@origin/main")
    claim = made_id(added.out, "c")
    assert f"@api:pushed:{change[:12]}…@origin/main" in added.out
    (shown,) = json.loads(inproc(cli, "status", "--json").out)["claims"]
    assert (shown["handle"], shown["state"]) == (f"@api:pushed:{change}@origin/main", "contradicted")
    git(api, "push", "-q", "origin", "main")
    git(api, "fetch", "-q", "origin")
    (shown,) = json.loads(inproc(cli, "status", "--json").out)["claims"]
    assert (shown["state"], shown["observed"]) == (
        "verified",
        f"origin/main is at {change[:7]} (as pushed from here just now), which contains {change[:7]}",
    )

    # A command in the sibling runs there, only once approved there.
    (consumer / "check.sh").write_text("test -f consumer-only.txt && echo renders\n")
    (consumer / "consumer-only.txt").write_text("x\n")
    command = "sh check.sh"
    cmd = made_id(inproc(cli, "claim", "add", "consumer renders", "--check", f"@consumer:cmd:{command}").out, "c")
    # An agent reads this: it names no command that approves (a person approves, at a terminal).
    refused = f"not approved in consumer ({consumer}) (approving a command there is a person's act, at their terminal)"
    verified = inproc(cli, "verify", cmd)
    assert verified.code == 1 and refused in verified.out
    approve(cli, command)  # approving it in cli is not approving it there
    assert refused in inproc(cli, "verify", cmd).out
    approve(consumer, command)
    ran = inproc(cli, "verify", cmd)
    assert ran.code == 0 and "exit 0 in " in ran.out and "; output:\n" in ran.out
    # Its evidence depends on the consumer's work tree: a change there makes it stale here.
    (consumer / "consumer-only.txt").write_text("changed\n")
    states = {c["id"]: c["state"] for c in json.loads(inproc(cli, "status", "--json").out)["claims"]}
    assert states == {claim: "verified", cmd: "stale"}


def test_a_sibling_missing_on_another_machine_is_named_never_guessed(
    three: Path, inproc: Run, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cli = three / "cli"
    assert inproc(cli, "repo", "add", "api", "../api").code == 0
    claim = made_id(inproc(cli, "claim", "add", "api is pushed", "--check", "@api:pushed:HEAD@origin/main").out, "c")
    assert inproc(cli, "verify").code == 0
    assert inproc(cli, "push").code == 0
    laptop = tmp_path_factory.mktemp("laptop")
    other = laptop / "cli"
    git(laptop, "clone", "-q", str(three / "cli.git"), str(other))
    assert inproc(other, "pull").code == 0
    # The same folder layout exists nowhere here: nothing is guessed, the way is named.
    lead = (
        "Sibling api is not found here: no folder is named for it on this machine; point at it with: "
        f"git continuity repo set-path api PATH (clone it first: git clone {three / 'api.git'} PATH); "
        "its checks are unknown."
    )
    assert cont(other, "orient").out.splitlines()[1] == lead
    assert cont(other, "status").out.split("\n\n")[0] == lead
    (shown,) = json.loads(cont(other, "status", "--json").out)["claims"]
    assert (shown["id"], shown["state"]) == (claim, "unknown")
    assert shown["observed"] == (
        "sibling api is not found here: no folder is named for it on this machine; point at it with: "
        f"git continuity repo set-path api PATH (clone it first: git clone {three / 'api.git'} PATH)"
    )
    listed = cont(other, "repo", "list")
    assert listed.out.splitlines()[0] == (
        "api  not found here: no folder is named for it on this machine; point at it with: "
        f"git continuity repo set-path api PATH (clone it first: git clone {three / 'api.git'} PATH)"
    )
    # Pointed at a clone of it here, the check is derived there.
    git(laptop, "clone", "-q", str(three / "api.git"), str(laptop / "src-api"))
    pointed = cont(other, "repo", "set-path", "api", str(laptop / "src-api"))
    assert (pointed.code, pointed.out) == (
        0,
        f"Sibling api is at {laptop / 'src-api'} on this machine "
        f"(kept in {other / '.git' / 'continuity' / 'siblings.json'}, never synced).\n",
    )
    (shown,) = json.loads(cont(other, "status", "--json").out)["claims"]
    assert shown["state"] == "verified"
    assert cont(other, "orient").out.splitlines()[1].startswith("State refs/continuity/main at ")
    # Moved away again: its folder here is named, and how to point at the new one.
    os.rename(laptop / "src-api", laptop / "moved-api")
    assert cont(other, "status").out.split("\n\n")[0] == (
        f"Sibling api is not found here: {laptop / 'src-api'} does not exist or is not a folder; point at it with: "
        f"git continuity repo set-path api PATH (clone it first: git clone {three / 'api.git'} PATH); "
        "its checks are unknown."
    )


# -- the scenario --------------------------------------------------------------------


def test_the_scenario_across_three_repositories(tmp_path: Path, inproc: Run) -> None:
    """Issue 15's scenario from end to end: cli with its home, a donor worktree, a
    preservation branch and a cleanroom; siblings api and consumer, each with its remote."""
    root = tmp_path / "work"
    root.mkdir()
    cli, api, consumer = (with_remote(root, name) for name in ("cli", "api", "consumer"))
    git(cli, "worktree", "add", "-q", "-b", "cli-old", "../cli-old")
    git(cli, "worktree", "add", "-q", "--detach", "../cli-clean")
    git(cli, "branch", "preserve/2026-11")
    git(cli, "push", "-q", "origin", "preserve/2026-11")
    old = root / "cli-old"
    for args in (
        ("init",),
        ("hooks", "install"),
        ("place", "set", "cli", "home", "--why", "the implementation lives here"),
        ("place", "set", "cli-old", "donor", "--why", "the old parser: copy parts, never commit"),
        ("place", "set", "preserve/2026-11", "preservation", "--why", "what shipped in November"),
        ("place", "set", "cli-clean", "cleanroom", "--why", "reproduce bug reports"),
        ("repo", "add", "api", "../api"),
        ("repo", "add", "consumer", "../consumer"),
    ):
        assert inproc(cli, *args).code == 0, args
    home = f"Work happens in the home: the checkout of branch main, in {cli}."

    # 1. Session 2 starts in cli-old by mistake: orient says so first.
    assert cont(old, "orient").out.splitlines()[:2] == [
        "# git-continuity brief: stream main",
        f"You are in a donor checkout (branch cli-old): copy from it, commit nothing. {home}",
    ]
    # 2. A commit there is refused, naming the home; so is a push that moves the preservation branch.
    refused = run(old, "git", "commit", "-q", "--allow-empty", "-m", "edit the donor")
    assert (refused.code, refused.err.splitlines()) == (
        1,
        [
            f"git-continuity: this is a donor checkout (branch cli-old): copy from it, commit nothing. {home}",
            "To commit here on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git commit ... "
            "(or git -c continuity.allowPlace=true commit ...).",
            kept_in(cli / ".git" / "worktrees" / "cli-old").rstrip("\n"),
        ],
    )
    commit(cli, "work in the home")
    pushed = run(cli, "git", "push", "-q", "origin", "main:preserve/2026-11")
    assert (pushed.code, pushed.err.splitlines()[1]) == (
        1,
        "To move it on purpose: GIT_CONTINUITY_ALLOW_PLACE=1 git push ... "
        "(or git -c continuity.allowPlace=true push ...).",
    )

    # 3. One thread, checks in all three repositories, dereferenced each in its own.
    change = commit(api, "the new output field", {"field.txt": "new\n"})
    (consumer / "check.sh").write_text("grep -q new ../api/field.txt\n")
    made = inproc(
        cli,
        "thread",
        "add",
        "consumer renders the new output",
        "--check",
        "@api:pushed:HEAD@origin/main",
        "--check",
        "file:docs/output.md",
        "--check",
        "@consumer:cmd:sh check.sh",
    )
    thread = made_id(made.out, "t")
    checks = {c["handle"]: c["id"] for c in json.loads(inproc(cli, "claim", "list", "--json").out)["claims"]}
    a, f, c = (
        checks[f"@api:pushed:{change}@origin/main"],
        checks["file:docs/output.md"],
        checks["@consumer:cmd:sh check.sh"],
    )

    def table(status_text: str) -> list[str]:
        lines = status_text.split("Threads (")[1].split("\n\n")[0].splitlines()[2:]
        return [line for line in lines if not line.startswith(" " * 30)]

    closing = inproc(cli, "thread", "close", thread)
    assert closing.code == 1
    status = inproc(cli, "status").out
    assert table(status) == [
        "      repository  state         check",
        f"      here        contradicted  {f}  file:docs/output.md",
        f"      api         contradicted  {a}  @api:pushed:HEAD@origin/main",
        f"      consumer    unchecked     {c}  @consumer:cmd:sh check.sh",
    ]
    assert f"not approved in consumer ({consumer}) (approving a command there is a person's act" in closing.out

    git(api, "push", "-q", "origin", "main")
    git(api, "fetch", "-q", "origin")
    commit(cli, "document the new output", {"docs/output.md": "new\n"})
    brief = cont(cli, "orient").out
    rows = brief.split("## Open threads\n")[1].split("\n\n")[0].splitlines()
    assert rows[1:3] == ["  | repository | state | check | observed |", "  | --- | --- | --- | --- |"]
    assert [row.split(" | ")[1:4] for row in rows[3:]] == [
        ["here", "verified", f"{f} file:docs/output.md"],
        ["api", "verified", f"{a} @api:pushed:{change[:12]}…@origin/main"],
        ["consumer", "unchecked", f"{c} @consumer:cmd:sh check.sh"],
    ]
    assert inproc(cli, "thread", "close", thread).code == 1  # not approved in consumer yet
    approve(consumer, "sh check.sh")
    closed = inproc(cli, "thread", "close", thread)
    assert closed.code == 0, closed.out
    assert [t["status"] for t in json.loads(inproc(cli, "status", "--json").out)["threads"]] == ["done"]
    git(cli, "push", "-q", "origin", "main")
    assert inproc(cli, "push").code == 0

    # 4. Another machine, where the siblings live elsewhere: orient names each, and the way.
    laptop = tmp_path / "laptop"
    laptop.mkdir()
    other = laptop / "cli"
    git(laptop, "clone", "-q", str(root / "cli.git"), str(other))
    assert inproc(other, "pull").code == 0

    def missing(name: str) -> str:
        return (
            f"Sibling {name} is not found here: no folder is named for it on this machine; point at it with: "
            f"git continuity repo set-path {name} PATH (clone it first: git clone {root / (name + '.git')} PATH); "
            "its checks are unknown."
        )

    assert cont(other, "orient").out.splitlines()[1:3] == [missing("api"), missing("consumer")]
    states = {x["id"]: x["state"] for x in json.loads(cont(other, "status", "--json").out)["claims"]}
    assert states == {a: "unknown", f: "verified", c: "unknown"}  # never verified from another machine's word
    git(laptop, "clone", "-q", str(root / "api.git"), str(laptop / "src" / "api"))
    assert cont(other, "repo", "set-path", "api", str(laptop / "src" / "api")).code == 0
    assert cont(other, "orient").out.splitlines()[1] == missing("consumer")
    states = {x["id"]: x["state"] for x in json.loads(cont(other, "status", "--json").out)["claims"]}
    assert states == {a: "verified", f: "verified", c: "unknown"}
