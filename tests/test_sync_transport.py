"""Remotes that do not take every ref, through git's own smart-HTTP server: a sandbox proxy
that takes claude/* branches only, Bitbucket Server's refusal of refs/notes/*, and the
branch transport that gets the state through both (issue #25)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Run, commit, git, state_refs
from gitserver import PROXY_WORDS, Server, http_backend, set_policy


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("http")
    (root / "repos").mkdir()
    with http_backend(root / "repos", root / "home") as running:
        yield running


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("proxy")
    (root / "repos").mkdir()
    with http_backend(root / "repos", root / "home", proxy=True) as running:
        yield running


def seeded(tmp_path: Path, server: Server, name: str, *clones: str) -> tuple[Path, str, list[Path]]:
    """A bare repository on the server with one commit on main, and clones of it."""
    bare, url = server.bare(name)
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", str(seed))
    commit(seed, "first", {"README": "hello\n"})
    git(seed, "push", "-q", str(bare), "main")  # past any policy or proxy
    for clone in clones:
        git(tmp_path, "clone", "-q", url, str(tmp_path / clone))
    return bare, url, [tmp_path / c for c in clones]


def noted(where: Path, text: str) -> None:
    """A note on HEAD, signed as every notes commit of ours is (the post-commit hook's too):
    one record, ``{"note": text}``."""
    from git_continuity import repo as gitrepo
    from git_continuity.store import notes as commit_notes

    repo = gitrepo.open_repo(where)
    commit_notes.add(repo, gitrepo.Oid(git(where, "rev-parse", "HEAD")), {"note": text})


def note_of(text: str) -> str:
    return json.dumps({"note": text}, sort_keys=True, separators=(",", ":"))


def remote_refs(url: str, where: Path) -> dict[str, str]:
    return {name: oid for oid, name in (line.split("\t") for line in git(where, "ls-remote", url).splitlines())}


def journal(inproc, where: Path) -> list[str]:  # type: ignore[no-untyped-def]
    return sorted(e["text"] for e in json.loads(inproc(where, "journal", "--all", "--json").out)["entries"])


def test_a_sandbox_proxy_that_takes_claude_branches_only(server: Server, tmp_path: Path, inproc: Run) -> None:
    bare, url, (work,) = seeded(tmp_path, server, "sandbox", "work")
    set_policy(bare, "claude-branches-only")
    assert inproc(work, "init", "--local").code == 0
    assert inproc(work, "journal", "add", "from the sandbox").code == 0
    noted(work, "stream main")
    before = state_refs(work), git(work, "rev-parse", "refs/notes/continuity")
    refused = inproc(work, "sync")
    assert (refused.code, refused.out) == (2, "origin has no continuity state yet.\n")
    assert refused.err == (
        "git-continuity: error: origin refused the push of the state:\n"
        f"  remote: {PROXY_WORDS}        \n"
        "  refs/continuity/main: [remote rejected] (pre-receive hook declined)\n"
        "  refs/notes/continuity: [remote rejected] (pre-receive hook declined)\n"
        "Nothing here is lost: the local state is kept as it is, and the next sync sends it all.\n"
        "If origin takes only branches (a sandbox's proxy, some forges), send the state as branches:\n"
        "  git config continuity.origin.transport branches\n"
    )
    assert (state_refs(work), git(work, "rev-parse", "refs/notes/continuity")) == before
    # Branches, but not under claude/: still refused, and the message names the prefix.
    git(work, "config", "continuity.origin.transport", "branches")
    refused = inproc(work, "push")
    assert refused.code == 2
    assert refused.err.endswith(
        "The state went as branches under 'continuity/' (continuity.branchPrefix); if origin takes only some branch"
        " names (claude/* in a Claude Code sandbox), put it under one:\n"
        "  git config continuity.branchPrefix claude/continuity-\n"
    )
    git(work, "config", "continuity.branchPrefix", "claude/continuity-")
    sent = inproc(work, "push", "--json")
    assert (sent.code, sent.err) == (0, "")
    report = json.loads(sent.out)
    assert (report["transport"], report["branch_prefix"], report["retries"], report["message"]) == (
        "branches",
        "claude/continuity-",
        0,
        None,
    )
    assert sorted(line["name"] for line in report["pushed"]) == ["main", "notes"]
    refs = remote_refs(url, work)
    assert sorted(refs) == [
        "HEAD",
        "refs/heads/claude/continuity-main",
        "refs/heads/claude/continuity-notes",
        "refs/heads/main",
    ]
    assert refs["refs/heads/claude/continuity-main"] == git(work, "rev-parse", "refs/continuity/main")
    assert refs["refs/heads/main"] == git(work, "rev-parse", "main")  # the user's branch: never touched
    # The next session, on a fresh clone set the same way, starts from it all.
    git(tmp_path, "clone", "-q", url, str(tmp_path / "next"))
    fresh = tmp_path / "next"
    git(fresh, "config", "continuity.transport", "branches")
    git(fresh, "config", "continuity.branchPrefix", "claude/continuity-")
    missing = inproc(fresh, "status")
    assert missing.code == 2 and "origin has state for stream 'main'" in missing.err
    pulled = inproc(fresh, "pull")
    assert pulled.code == 0 and "main: new here" in pulled.out and "notes: new here" in pulled.out
    assert journal(inproc, fresh) == ["from the sandbox"]
    assert git(fresh, "notes", "--ref=continuity", "show", "HEAD") == note_of("stream main")
    assert git(fresh, "branch", "--list") == "* main"  # no branch of the state checked out here
    # init in a fresh clone set the same way takes the branch's state in, never a new history.
    git(tmp_path, "clone", "-q", url, str(tmp_path / "third"))
    third = tmp_path / "third"
    git(third, "config", "continuity.transport", "branches")
    git(third, "config", "continuity.branchPrefix", "claude/continuity-")
    took = inproc(third, "init")
    assert took.code == 0
    assert took.out.startswith(
        "origin already has state for stream 'main': took it in instead of starting an unrelated history.\n"
    )
    assert state_refs(third) == state_refs(work)


def test_a_proxy_answering_403_is_told_with_the_setting(proxy: Server, tmp_path: Path, inproc: Run) -> None:
    _, url, (work,) = seeded(tmp_path, proxy, "proxied", "work")
    assert inproc(work, "init", "--local").code == 0
    refused = inproc(work, "push")
    assert refused.code == 2
    assert refused.err == (
        f"git-continuity: error: cannot push to origin ({url}):\n"
        "  error: RPC failed; HTTP 403 curl 22 The requested URL returned error: 403\n"
        "Nothing was changed here; the local state is untouched.\n"
        "If origin takes only branches (a sandbox's proxy, some forges), send the state as branches:\n"
        "  git config continuity.origin.transport branches\n"
    )
    git(work, "config", "continuity.origin.transport", "branches")
    git(work, "config", "continuity.origin.branchPrefix", "claude/continuity-")
    assert inproc(work, "sync").code == 0
    assert "refs/heads/claude/continuity-main" in remote_refs(url, work)


def test_a_remote_that_refuses_notes_takes_the_state_and_the_notes_stay_here(
    server: Server,
    tmp_path: Path,
    inproc: Run,
) -> None:
    bare, url, (work, mate) = seeded(tmp_path, server, "bitbucket", "work", "mate")
    set_policy(bare, "no-notes")
    assert inproc(work, "init", "--local").code == 0
    noted(work, "stream main")
    partial = inproc(work, "sync", "--json")
    assert partial.code == 2
    report = json.loads(partial.out)
    assert [(line["name"], line["what"][:10]) for line in report["pushed"]] == [("main", "created on")]
    assert report["kept_local"] == ["refs/notes/continuity: [remote rejected] (pre-receive hook declined)"]
    assert report["said"] == ["refs/notes/continuity: pushing notes is not supported"]
    assert partial.err == (
        "git-continuity: error: origin refused the commit notes; the state went through, and the notes are kept here:\n"
        "  remote: refs/notes/continuity: pushing notes is not supported        \n"
        "  refs/notes/continuity: [remote rejected] (pre-receive hook declined)\n"
        "To send the notes too, as a branch: git config continuity.origin.transport branches\n"
    )
    refs = remote_refs(url, work)
    assert refs["refs/continuity/main"] == git(work, "rev-parse", "refs/continuity/main")
    assert "refs/notes/continuity" not in refs
    assert git(work, "notes", "--ref=continuity", "show", "HEAD") == note_of("stream main")
    # The setting named: the notes travel as a branch; a clone on the default transport
    # reads them there (a fetch reads both layouts).
    git(work, "config", "continuity.transport", "branches")
    assert inproc(work, "sync").code == 0
    assert "refs/heads/continuity/notes" in remote_refs(url, work)
    assert inproc(mate, "pull").code == 0
    assert git(mate, "notes", "--ref=continuity", "show", "HEAD") == note_of("stream main")
    assert state_refs(mate) == state_refs(work)


def test_moving_between_transports_loses_nothing(server: Server, tmp_path: Path, inproc: Run) -> None:
    _, url, (a, b) = seeded(tmp_path, server, "moving", "a", "b")
    assert inproc(a, "init").code == 0
    assert inproc(a, "push").code == 0
    assert inproc(b, "pull").code == 0
    assert inproc(a, "journal", "add", "a on refs").code == 0
    assert inproc(a, "sync").code == 0
    git(b, "config", "continuity.transport", "branches")
    assert inproc(b, "journal", "add", "b on branches").code == 0
    moved = inproc(b, "sync")
    assert moved.code == 0, moved.err
    assert "main: merged" in moved.out and "(from refs/continuity/main)" in moved.out
    assert inproc(a, "journal", "add", "a again on refs").code == 0
    back = inproc(a, "sync")
    assert back.code == 0 and "(from refs/heads/continuity/main)" in back.out
    assert inproc(b, "sync").code == 0
    assert inproc(a, "pull").code == 0
    everything = ["a again on refs", "a on refs", "b on branches"]
    assert journal(inproc, a) == journal(inproc, b) == everything
    assert state_refs(a) == state_refs(b)
    refs = remote_refs(url, a)
    assert (
        refs["refs/continuity/main"]
        == refs["refs/heads/continuity/main"]
        == git(a, "rev-parse", "refs/continuity/main")
    )


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("continuity.transport", "bogus", "continuity.transport is 'bogus': give refs (the default) or branches"),
        (
            "continuity.origin.transport",
            "Branches",
            "continuity.origin.transport is 'Branches': give refs (the default) or branches",
        ),
        (
            "continuity.branchPrefix",
            "bad..prefix/",
            "continuity.branchPrefix is 'bad..prefix/': it is not a valid part of a branch name"
            " (git check-ref-format)\n"
            "e.g. git config continuity.branchPrefix claude/continuity-",
        ),
        (
            "continuity.branchPrefix",
            "",
            "continuity.branchPrefix is '': an empty prefix would make the state's branches look like your own"
            " (main, notes)\ne.g. git config continuity.branchPrefix claude/continuity-",
        ),
        (
            "continuity.origin.branchPrefix",
            "refs/heads/x-",
            "continuity.origin.branchPrefix is 'refs/heads/x-': it must not start with '/', '.', '-' or 'refs/'"
            " (it goes after refs/heads/)\ne.g. git config continuity.origin.branchPrefix claude/continuity-",
        ),
    ],
)
def test_bad_transport_settings_are_refused_by_name(
    remote_and_clone: tuple[Path, Path],
    inproc: Run,
    key: str,
    value: str,
    said: str,
) -> None:
    bare, work = remote_and_clone
    assert inproc(work, "init", "--local").code == 0
    git(work, "config", key, value)
    before = state_refs(work)
    for command in ("pull", "push", "sync"):
        refused = inproc(work, command)
        assert (refused.code, refused.out, refused.err) == (2, "", f"git-continuity: error: {said}\n")
    assert state_refs(work) == before
    assert git(work, "ls-remote", str(bare), "refs/continuity/*", "refs/heads/continuity/*") == ""


def test_a_branch_of_someone_elses_under_the_prefix_is_never_moved(
    remote_and_clone: tuple[Path, Path],
    inproc: Run,
) -> None:
    bare, work = remote_and_clone
    git(work, "push", "-q", "origin", "main:refs/heads/continuity/main")  # a person's branch, by chance
    theirs = git(work, "rev-parse", "main")
    assert inproc(work, "init", "--local").code == 0
    git(work, "config", "continuity.transport", "branches")
    refused = inproc(work, "sync")
    assert refused.code == 2
    assert refused.out == ""
    assert refused.err == (
        "git-continuity: error: refs/heads/continuity/main on origin is not continuity state (a branch of someone's),"
        " and the state of stream 'main' would go there; nothing was pushed.\n"
        "Choose a prefix no branch uses: git config continuity.branchPrefix <prefix> (now 'continuity/')."
        " This tool never moves a branch that is not its own.\n"
    )
    assert git(work, "ls-remote", str(bare), "refs/heads/continuity/*").split()[0] == theirs
    git(work, "config", "continuity.branchPrefix", "state/")
    assert inproc(work, "sync").code == 0
    assert git(work, "ls-remote", str(bare), "refs/heads/continuity/main").split()[0] == theirs


def test_a_prefix_inside_a_branch_name_is_told_once_never_retried(
    remote_and_clone: tuple[Path, Path],
    inproc: Run,
) -> None:
    """A prefix that puts the state's branches under an existing branch's name (a folder where
    a ref is) was taken for a race: five retries, then "run git continuity sync again"."""
    _, work = remote_and_clone
    git(work, "push", "-q", "origin", "main:refs/heads/claude/continuity-main")
    assert inproc(work, "init", "--local").code == 0
    git(work, "config", "continuity.transport", "branches")
    git(work, "config", "continuity.branchPrefix", "claude/continuity-main/")
    refused = inproc(work, "sync")
    clash = (
        "error: cannot lock ref 'refs/heads/claude/continuity-main/main': 'refs/heads/claude/continuity-main' exists;"
        " cannot create 'refs/heads/claude/continuity-main/main'"
    )
    assert (refused.code, refused.out) == (2, "origin has no continuity state yet.\n")
    assert refused.err.startswith("git-continuity: error: origin refused the push of the state:\n  remote: " + clash)
    assert refused.err.endswith(
        "Nothing here is lost: the local state is kept as it is, and the next sync sends it all.\n"
        "A branch on origin stands where the state's branches under 'claude/continuity-main/' would go (or the"
        " other way round), which no retry changes: choose a prefix that no branch name there starts with, or ends"
        " inside:\n  git config continuity.branchPrefix claude/continuity-\n"
    )
    assert "retries" not in refused.err and "kept moving" not in refused.err


def test_a_fresh_clone_is_told_where_the_state_branches_are_and_what_to_set(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    """A fresh clone without the sandbox's settings took a remote holding the state under
    claude/continuity- for one with none ("Start one with: git continuity init")."""
    bare, work = remote_and_clone
    assert inproc(work, "init", "--local").code == 0
    git(work, "config", "continuity.transport", "branches")
    git(work, "config", "continuity.branchPrefix", "claude/continuity-")
    assert inproc(work, "sync").code == 0
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(bare), str(fresh))
    told = (
        "origin has continuity state on the branch claude/continuity-main, where this clone's settings do not look;"
        " nothing was taken in. Take it in with:\n"
        "  git config continuity.origin.transport branches\n"
        "  git config continuity.branchPrefix claude/continuity-\n"
        "  git continuity pull origin"
    )
    status = inproc(fresh, "status")
    assert (status.code, status.err) == (
        2,
        "git-continuity: error: no continuity state for stream 'main' here (refs/continuity/main does not exist).\n"
        + told
        + "\n",
    )
    assert inproc(fresh, "pull").err == f"git-continuity: error: {told}\n"
    fetch = json.loads(inproc(fresh, "orient", "--json").out)["fetch"]
    assert (fetch["on_remote"], fetch["commands"]) == (
        True,
        [
            "git config continuity.origin.transport branches",
            "git config continuity.branchPrefix claude/continuity-",
            "git continuity pull origin",
        ],
    )
    for line in fetch["commands"][:2]:
        git(fresh, *line.split()[1:])
    assert inproc(fresh, "pull").code == 0
    assert inproc(fresh, "status").code == 0


def test_a_changed_prefix_invents_no_stream_from_the_old_prefixs_branch(
    remote_and_clone: tuple[Path, Path], tmp_path: Path, inproc: Run
) -> None:
    """With the prefix changed from claude/continuity- to claude/, the branch
    claude/continuity-main read as a stream named continuity-main, new here, pushed back as
    claude/continuity-continuity-main and spread to every clone."""
    bare, work = remote_and_clone
    assert inproc(work, "init", "--local").code == 0
    git(work, "config", "continuity.transport", "branches")
    git(work, "config", "continuity.branchPrefix", "claude/continuity-")
    assert inproc(work, "sync").code == 0
    git(work, "config", "continuity.branchPrefix", "claude/")
    synced = inproc(work, "sync")
    assert (synced.code, synced.err) == (0, "")
    state = git(work, "rev-parse", "--short=7", "refs/continuity/main")
    assert synced.out == (
        "origin has no continuity state where this clone's settings look yet.\n"
        "From origin:\n"
        "  ignored refs/heads/claude/continuity-main: the state of stream 'main' under another prefix"
        " (continuity.branchPrefix is 'claude/'): left alone\n"
        "To origin:\n"
        f"  main: created on origin ({state}) as refs/heads/claude/main\n"
    )
    assert git(work, "for-each-ref", "--format=%(refname)", "refs/continuity/") == "refs/continuity/main"
    assert sorted(remote_refs(str(bare), work)) == [
        "HEAD",
        "refs/heads/claude/continuity-main",
        "refs/heads/claude/main",
        "refs/heads/main",
    ]


def test_a_force_pushed_state_branch_is_named_and_never_merged(
    remote_and_clone: tuple[Path, Path],
    inproc: Run,
) -> None:
    bare, work = remote_and_clone
    git(work, "config", "continuity.transport", "branches")
    assert inproc(work, "init", "--local").code == 0
    first = git(work, "rev-parse", "refs/continuity/main")
    assert inproc(work, "journal", "add", "kept").code == 0
    assert inproc(work, "sync").code == 0
    seen = git(work, "rev-parse", "refs/continuity/main")
    git(work, "push", "-q", "--force", "origin", f"{first}:refs/heads/continuity/main")  # a person rewinds it
    before = state_refs(work)
    refused = inproc(work, "sync")
    assert (refused.code, refused.out) == (2, "")
    assert refused.err == (
        "git-continuity: error: a state branch on origin was rewritten (force-pushed) since it was last fetched; "
        "nothing was merged:\n"
        f"  refs/heads/continuity/main was at {seen[:7]}, now {first[:7]}, which does not contain it"
        " (refs/continuity-remotes/origin/main)\n"
        "The local state is untouched. To take the rewritten branch in (both sides are merged, losing nothing here):"
        " git update-ref -d TRACKING-REF, then git continuity sync. This tool never force-pushes.\n"
    )
    assert state_refs(work) == before
    assert git(work, "ls-remote", str(bare), "refs/heads/continuity/main").split()[0] == first
    git(work, "update-ref", "-d", "refs/continuity-remotes/origin/main")
    assert inproc(work, "sync").code == 0
    assert journal(inproc, work) == ["kept"]
    assert git(work, "ls-remote", str(bare), "refs/heads/continuity/main").split()[0] == seen


def test_status_counts_what_has_not_reached_each_remote(server: Server, tmp_path: Path, inproc: Run) -> None:
    bare, _, (work,) = seeded(tmp_path, server, "outbox", "work")
    assert inproc(work, "init", "--local").code == 0
    assert inproc(work, "journal", "add", "offline work").code == 0

    def outbox() -> list[tuple[str, int, bool, bool]]:
        found = json.loads(inproc(work, "status", "--json").out)["outbox"]
        return [(box["remote"], box["changes"], box["never_sent"], box["since"] is not None) for box in found]

    assert outbox() == [("origin", 2, True, True)]
    text = inproc(work, "status").out
    assert text.endswith(
        "\nOutbox\n  origin: 2 changes never sent there, the oldest made just now (git continuity sync origin)\n"
    )
    set_policy(bare, "claude-branches-only")
    assert inproc(work, "sync").code == 2  # refused: still waiting, nothing lost
    assert outbox() == [("origin", 2, True, True)]
    set_policy(bare, None)
    assert inproc(work, "sync").code == 0
    assert outbox() == [("origin", 0, False, False)]
    assert "Outbox" not in inproc(work, "status").out
    assert inproc(work, "journal", "add", "one more").code == 0
    assert outbox() == [("origin", 1, False, True)]
    text = inproc(work, "status").out
    assert "Outbox" not in text  # the Sync line says it: "origin: 1 change here not on origin yet"
    assert "\nSync       origin: 1 change here not on origin yet (as of the last fetch): git continuity push\n" in text


def test_a_fetch_that_met_a_server_error_is_tried_again(server: Server, tmp_path: Path, inproc: Run) -> None:
    """A forge answers HTTP 500 now and then (#35): sync tries the fetch again after a pause
    instead of giving up, and the state arrives."""
    _, _, (ada, bea) = seeded(tmp_path, server, "busy", "ada", "bea")
    assert inproc(ada, "init").code == 0
    assert inproc(ada, "journal", "add", "from Ada").code == 0
    assert inproc(ada, "push").code == 0
    assert inproc(bea, "init", "--local", "--stream", "bea").code == 0
    server.fail_next(1)
    synced = inproc(bea, "sync")
    assert (synced.code, synced.err) == (0, "")
    assert server.failing == 0  # the server did answer 500 once
    assert journal(inproc, bea) == ["from Ada"]
    assert git(bea, "rev-parse", "refs/continuity/main") == git(ada, "rev-parse", "refs/continuity/main")
