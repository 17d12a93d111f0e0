"""Issue 6 against a real Buildbot: a master on 127.0.0.1 with sqlite, started once for the
session, building the test repository's commits for real."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from buildbot_master import BuildbotMaster
from conftest import Run, commit, git


@pytest.fixture(scope="session")
def buildbot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuildbotMaster]:
    master = BuildbotMaster(tmp_path_factory.mktemp("buildbot") / "master")
    yield master
    master.stop()


def verified_states(out: str) -> list[tuple[str, str, str]]:
    return [(c["text"], c["state"], c["observed"]) for c in json.loads(out)["claims"]]


def test_builds_of_a_revision_verify_contradict_or_were_never_made(
    buildbot: BuildbotMaster, repo: Path, inproc: Run
) -> None:
    green = commit(repo, "passes", {"check.sh": "echo all good\nexit 0\n"})
    red = commit(repo, "fails", {"check.sh": "echo broken >&2\nexit 1\n"})
    unbuilt = commit(repo, "never built", {"check.sh": "exit 0\n"})
    passed = buildbot.build(repo, green)
    failed = buildbot.build(repo, red)
    assert (passed["results"], failed["results"]) == (0, 2)  # Buildbot's SUCCESS and FAILURE

    url = buildbot.url
    assert inproc(repo, "init").code == 0
    for text, handle in [
        ("CI green on the first fix", f"buildbot:{url}#tests@{green}"),
        ("CI green on the second fix", f"buildbot:{url}#tests@{red}=success"),
        ("CI green on HEAD", f"buildbot:{url}@HEAD"),
        ("CI green on another builder", f"buildbot:{url}#deploy@{green}"),
    ]:
        assert inproc(repo, "claim", "add", text, "--check", handle).code == 0, handle
    ran = inproc(repo, "verify", "--online", "--json")
    assert ran.code == 1
    assert verified_states(ran.out) == [
        ("CI green on the first fix", "verified", f"build tests #{passed['number']} succeeded on {green[:7]}"),
        ("CI green on the second fix", "contradicted", f"build tests #{failed['number']} failed on {red[:7]}"),
        ("CI green on HEAD", "contradicted", f"CI never saw {unbuilt[:7]}: Buildbot has no build of it"),
        (
            "CI green on another builder",
            "unknown",
            f"not found: Buildbot at {url.removeprefix('http://')} has no builder 'deploy'",
        ),
    ]

    # Buildbot builds the third commit; a fresh verify sees it.
    rebuilt = buildbot.build(repo, unbuilt)
    ran = inproc(repo, "verify", "--online", "--json")
    assert verified_states(ran.out)[2] == (
        "CI green on HEAD",
        "verified",
        f"build tests #{rebuilt['number']} succeeded on {unbuilt[:7]}",
    )
    assert git(repo, "status", "--porcelain") == ""  # verifying touched no work tree


def test_a_buildbot_that_is_down_is_unknown(repo: Path, inproc: Run) -> None:
    from buildbot_master import free_port

    port = free_port()
    assert inproc(repo, "init").code == 0
    assert inproc(repo, "claim", "add", "CI green", "--check", f"buildbot:http://127.0.0.1:{port}@HEAD").code == 0
    ran = inproc(repo, "verify", "--online", "--json")
    assert verified_states(ran.out) == [
        ("CI green", "unknown", f"no answer from 127.0.0.1:{port} (connection refused)"),
    ]
