"""Issue 6 against GitHub, GitLab and Gitea: their loopback fakes, whose every answer is
checked against the forge's published description (tests/forge_fakes.py)."""

from __future__ import annotations

import json
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Ran, Run, cont, git
from forge_fakes import FakeGitea, FakeGitHub, FakeGitLab, Fault

TOKEN = "ghp_SECRETsecret0123456789abcdefSECRET"


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GH_TOKEN", TOKEN)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield fake
    assert fake.errors == []  # every answer matched GitHub's published description


@pytest.fixture
def gitlab(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitLab]:
    with FakeGitLab() as fake:
        monkeypatch.setenv("CI_API_V4_URL", fake.api)
        monkeypatch.setenv("GITLAB_TOKEN", "glpat-SECRETsecret")
        yield fake
    assert fake.errors == []


@pytest.fixture
def gitea(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitea]:
    with FakeGitea() as fake:
        monkeypatch.setenv("GITEA_TOKEN", "gitea-SECRETsecret")
        yield fake
    assert fake.errors == []


@pytest.fixture
def work(repo: Path, inproc: Run) -> Path:
    assert inproc(repo, "init").code == 0
    return repo


def claim(inproc: Run, repo: Path, text: str, handle: str) -> str:
    ran = inproc(repo, "claim", "add", text, "--check", handle)
    assert ran.code == 0, ran.err
    found = re.search(r"Recorded claim (c-\w{6})", ran.out)
    assert found
    return found[1]


def states(ran: Ran) -> list[tuple[str, str, str]]:
    """(text, state, observed) of every claim in a --json answer of verify or status."""
    return [(c["text"], c["state"], c["observed"]) for c in json.loads(ran.out)["claims"]]


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD")


# -- GitHub ---------------------------------------------------------------------------------


def test_a_pr_claim_turns_contradicted_once_the_pr_is_merged(work: Path, inproc: Run, github: FakeGitHub) -> None:
    sha = head(work)
    github.add_pull("octo", "app", 830, "open", head_sha=sha)
    github.add_run("octo", "app", sha, "test")
    github.add_status("octo", "app", sha, "ci/lint")
    added = inproc(work, "claim", "add", "PR 830 is open, waiting for review", "--check", "github:pr/octo/app#830=open")
    assert added.out.splitlines() == [
        f"Recorded claim {added.out.split()[2].rstrip(':')}: PR 830 is open, waiting for review",
        "  handle  github:pr/octo/app#830=open",
        "  now     unchecked: never asked: git continuity verify --online asks the service",
    ]
    claim(inproc, work, "CI is green on the fix", "github:checks/octo/app@HEAD")

    ran = inproc(work, "verify", "--online", "--json")
    assert ran.code == 0, ran.out
    assert states(ran) == [
        ("PR 830 is open, waiting for review", "verified", f"PR #830 is open, head {sha[:7]}"),
        ("CI is green on the fix", "verified", f"1 check run and 1 status succeeded on {sha[:7]}"),
    ]

    # The PR is merged and a re-run of the checks fails. status shows the last evidence and
    # sends nothing; verify --online asks again and says what it saw.
    github.add_pull("octo", "app", 830, "merged", head_sha=sha, merged_by="hubot")
    github.runs.clear()
    github.add_run("octo", "app", sha, "test", conclusion="failure")
    asked = len(github.requests)
    assert [(t, s) for t, s, _ in states(inproc(work, "status", "--json"))] == [
        ("PR 830 is open, waiting for review", "verified"),
        ("CI is green on the fix", "verified"),
    ]
    assert len(github.requests) == asked
    ran = inproc(work, "verify", "--online")
    assert ran.code == 1
    text = re.sub(r"c-\w{6}", "c-ID", ran.out)
    assert text == (
        "  contradicted  c-ID  PR 830 is open, waiting for review\n"
        "                github:pr/octo/app#830=open\n"
        "                PR #830 was merged at 2026-11-28T10:02Z by hubot (merge commit eeeeeee)\n"
        "  contradicted  c-ID  CI is green on the fix\n"
        f"                github:checks/octo/app@{sha[:12]}…\n"
        f"                check 'test' concluded failure on {sha[:7]}\n"
        "\n"
        "Recorded 2 evidence entries.\n"
    )
    # A fresh session sees the contradiction from the recorded evidence, offline.
    assert [s for _, s, _ in states(inproc(work, "status", "--json"))] == ["contradicted", "contradicted"]


def test_verify_without_online_sends_nothing_and_says_so(work: Path, inproc: Run, github: FakeGitHub) -> None:
    github.add_pull("octo", "app", 7)
    cid = claim(inproc, work, "PR 7 is open", "github:pr/octo/app#7=open")
    ran = inproc(work, "verify")
    assert ran.code == 1
    assert github.requests == []
    assert ran.out == (
        f"  unchecked  {cid}  PR 7 is open\n"
        "             github:pr/octo/app#7=open\n"
        "             never asked: git continuity verify --online asks the service\n"
        f"Not asked: 1 network claim ({cid}) shows its last evidence; nothing was sent over the network.\n"
        "git continuity verify --online asks the services.\n"
    )
    data = json.loads(inproc(work, "verify", "--json").out)
    assert data["not_asked"] == [cid] and data["evidence"] == [] and data["online"] is False


def test_check_runs_and_statuses_are_read_across_pages(work: Path, inproc: Run, github: FakeGitHub) -> None:
    sha = head(work)
    for n in range(150):
        github.add_run("octo", "app", sha, f"job-{n}")
    for n in range(3):
        github.add_status("octo", "app", sha, f"ci/{n}")
    claim(inproc, work, "CI green", f"github:checks/octo/app@{sha}=success")
    assert states(inproc(work, "verify", "--online", "--json")) == [
        ("CI green", "verified", f"150 check runs and 3 statuses succeeded on {sha[:7]}")
    ]
    paths = sorted(p for p, _ in github.requests)
    assert paths == [
        f"/repos/octo/app/commits/{sha}/check-runs?per_page=100",
        f"/repos/octo/app/commits/{sha}/check-runs?per_page=100&page=2",
        f"/repos/octo/app/commits/{sha}/status?per_page=100",
    ]
    # One failing run on the second page is enough to contradict.
    github.runs[("octo", "app", sha)][120]["conclusion"] = "timed_out"
    assert states(inproc(work, "verify", "--online", "--json"))[0][1:] == (
        "contradicted",
        f"check 'job-120' concluded timed_out on {sha[:7]}",
    )


def test_pending_checks_and_a_commit_ci_never_saw(work: Path, inproc: Run, github: FakeGitHub) -> None:
    sha = head(work)
    github.add_run("octo", "app", sha, "build", status="in_progress", conclusion=None)
    github.add_status("octo", "app", sha, "ci/lint", "pending")
    claim(inproc, work, "CI green", "github:checks/octo/app@HEAD")
    other = git(work, "commit", "-q", "--allow-empty", "-m", "second") or head(work)
    claim(inproc, work, "CI green on the second commit", "github:checks/octo/app@HEAD")
    github.statuses[("octo", "app", other)] = []
    assert states(inproc(work, "verify", "--online", "--json")) == [
        ("CI green", "unknown", f"check 'build' is in_progress (and 1 more) on {sha[:7]}; not decided yet"),
        (
            "CI green on the second commit",
            "contradicted",
            f"CI never saw {other[:7]}: no check runs and no commit statuses",
        ),
    ]


def test_a_second_run_is_answered_with_304s_and_nothing_full(work: Path, inproc: Run, github: FakeGitHub) -> None:
    sha = head(work)
    github.add_pull("octo", "app", 1)
    github.add_run("octo", "app", sha, "test")
    claim(inproc, work, "PR open", "github:pr/octo/app#1=open")
    claim(inproc, work, "CI green", "github:checks/octo/app@HEAD")
    first = states(inproc(work, "verify", "--online", "--json"))
    assert github.sent == {"full": 3, "not_modified": 0}
    second = states(inproc(work, "verify", "--online", "--json"))
    assert github.sent == {"full": 3, "not_modified": 3}
    assert first == second
    # The cache is local (.git/continuity/cache/http), one file per address.
    assert len(list((work / ".git" / "continuity" / "cache" / "http").glob("*.json"))) == 3


@pytest.mark.parametrize(
    ("fault", "observed"),
    [
        (
            Fault(403, {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1795961100"}),
            "rate limited until 14:05 UTC (GitHub answered 403)",
        ),
        (Fault(429, {"retry-after": "0"}, b'{"message": "slow down"}'), "rate limited until NOW (GitHub answered 429)"),
        (Fault(401, body=b'{"message": "Bad credentials"}'), "GitHub said the token was refused (401)"),
        (Fault(403, body=b'{"message": "Resource not accessible"}'), "GitHub said the token lacks access (403)"),
        (Fault(502, body=b"<html>bad gateway</html>"), "GitHub failed to answer (502); try again later"),
        (
            Fault(200, {"Content-Type": "text/html"}, b"<html>a captive portal</html>"),
            "GitHub's answer is not JSON (text/html); is URL its API address?",
        ),
        (Fault(200, body=b"[1, 2]"), "GitHub's answer is not the JSON object its API describes"),
    ],
    ids=["rate-limit-403", "rate-limit-429", "401", "403-scope", "502", "not-json", "wrong-json"],
)
def test_each_failure_is_unknown_with_its_reason(
    work: Path, inproc: Run, github: FakeGitHub, fault: Fault, observed: str
) -> None:
    github.add_pull("octo", "app", 5)
    github.fault("/pulls/5", fault)
    claim(inproc, work, "PR 5 is open", "github:pr/octo/app#5")
    ran = inproc(work, "verify", "--online", "--json")
    assert ran.code == 1
    ((_, state, said),) = states(ran)
    said = said.replace(github.url, "URL")
    said = re.sub(r"until \d\d:\d\d UTC \(GitHub answered 429", "until NOW (GitHub answered 429", said)
    assert (state, said) == ("unknown", observed)


def test_missing_pr_timeout_and_a_host_that_does_not_answer_leave_the_others_standing(
    work: Path, inproc: Run, github: FakeGitHub
) -> None:
    github.add_pull("octo", "app", 1)
    github.add_pull("octo", "app", 2)
    github.fault("/pulls/2", Fault(200, delay=1.0))
    claim(inproc, work, "PR 1 open", "github:pr/octo/app#1=open")
    claim(inproc, work, "PR 2 open", "github:pr/octo/app#2=open")
    claim(inproc, work, "PR 404 open", "github:pr/octo/app#404=open")
    ran = inproc(work, "verify", "--online", "--timeout", "0.2", "--json")
    host = github.url.removeprefix("http://")
    assert states(ran) == [
        ("PR 1 open", "verified", "PR #1 is open, head 1111111"),
        ("PR 2 open", "unknown", f"timeout: {host} did not answer within 0.2s"),
        ("PR 404 open", "unknown", "not found (GitHub answered 404: or this token cannot see it)"),
    ]
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    # Nothing listens there any more.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("GITHUB_API_URL", f"http://127.0.0.1:{port}")
        ran = inproc(work, "verify", "--online", "--json")
    assert {s for _, _, s in states(ran)} == {f"no answer from 127.0.0.1:{port} (connection refused)"}


def test_without_a_token_the_reason_says_how_to_give_one(
    work: Path, inproc: Run, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GH_TOKEN")
    claim(inproc, work, "PR 9 merged", "github:pr/octo/private#9=merged")
    ((_, state, said),) = states(inproc(work, "verify", "--online", "--json"))
    assert (state, said) == (
        "unknown",
        "not found (GitHub answered 404; no token: set GH_TOKEN or GITHUB_TOKEN, or run gh auth login)",
    )
    assert "authorization" not in github.requests[-1][1]


def test_the_token_comes_from_gh_when_the_environment_has_none(
    work: Path, github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text('#!/bin/sh\n[ "$1 $2" = "auth token" ] && echo gho_fromGhCli123 && exit 0\nexit 1\n')
    gh.chmod(0o755)
    monkeypatch.delenv("GH_TOKEN")
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    github.add_pull("octo", "app", 3, "closed")
    assert cont(work, "claim", "add", "PR 3 merged", "--check", "github:pr/octo/app#3=merged").code == 0
    ran = cont(work, "verify", "--online")
    assert ran.code == 1
    assert "PR #3 was closed at 2026-11-27T09:00Z without merging" in ran.out
    assert github.requests[-1][1]["authorization"] == "Bearer gho_fromGhCli123"
    assert ran.err == ""  # stderr is not a terminal: no progress line


def test_tokens_are_never_written_down(work: Path, inproc: Run, github: FakeGitHub, gitlab: FakeGitLab) -> None:
    github.add_pull("octo", "app", 1)
    github.fault("/pulls/2", Fault(401, body=b'{"message": "Bad credentials"}'))
    gitlab.add_mr("group/app", 4)
    claim(inproc, work, "PR open", "github:pr/octo/app#1=open")
    claim(inproc, work, "PR 2 open", "github:pr/octo/app#2=open")
    claim(inproc, work, "MR open", "gitlab:mr/group/app!4=opened")
    ran = inproc(work, "verify", "--online")
    assert github.requests[0][1]["authorization"] == f"Bearer {TOKEN}"
    assert gitlab.requests[0][1]["private-token"] == "glpat-SECRETsecret"
    assert "verified" in ran.out
    secrets = (TOKEN.encode(), b"glpat-SECRETsecret")
    for path in (work / ".git").rglob("*"):
        if path.is_file():
            assert not any(s in path.read_bytes() for s in secrets), path
    # Objects are compressed: read every one of them back.
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=work, capture_output=True, check=True
    ).stdout
    assert not any(s in objects for s in secrets)
    assert not any(s.decode() in ran.out + ran.err for s in secrets)


@pytest.mark.parametrize(
    ("handle", "message"),
    [
        ("github:pr/octo app/x#1", "owner 'octo app' in 'github:pr/octo app/x#1' is not valid"),
        ("github:pr/-octo/app#1", "owner '-octo' in 'github:pr/-octo/app#1' is not valid"),
        ("github:pr/octo/a:b#1", "repository 'a:b' in 'github:pr/octo/a:b#1' is not valid"),
        ("github:pr/octo/app#01", "PR number '01' in 'github:pr/octo/app#01' is not valid"),
        ("github:pr/octo/app#x", "PR number 'x' in 'github:pr/octo/app#x' is not valid"),
        ("github:pr/octo/app", "handle 'github:pr/octo/app' names no PR number"),
        (
            "github:pr/octo/app#1=done",
            "expected state 'done' in 'github:pr/octo/app#1=done' is not one of: open, merged, closed",
        ),
        ("github:checks/octo/app@nope", "revision 'nope' does not resolve to a commit here"),
        ("github:issue/octo/app#1", "handle 'github:issue/octo/app#1' is neither github:pr/"),
        ("gitlab:mr/app!1", "project 'app' in 'gitlab:mr/app!1' is not valid"),
        ("gitlab:mr/group/app!0", "merge request iid '0' in 'gitlab:mr/group/app!0' is not valid"),
        (
            "gitea:pr/octo/app#1",
            "handle 'gitea:pr/octo/app#1' names no host and git config continuity.gitea.host is not set",
        ),
        ("gitea:pr/bad_host!/octo/app#1", "host 'bad_host!' in 'gitea:pr/bad_host!/octo/app#1' is not valid"),
        (
            "buildbot:ftp://ci.example.org@HEAD",
            "address 'ftp://ci.example.org' in 'buildbot:ftp://ci.example.org@HEAD' is not",
        ),
        ("buildbot:https://u:p@ci.example.org@HEAD", "address 'https://u:p@ci.example.org' in"),
        ("buildbot:https://ci.example.org#te st@HEAD", "builder 'te st' in"),
        ("ci:HEAD#no spaces", "name 'no spaces' in 'ci:HEAD#no spaces' is not valid"),
    ],
)
def test_a_malformed_handle_is_refused_naming_the_part_and_nothing_is_written(
    work: Path, inproc: Run, handle: str, message: str
) -> None:
    before = git(work, "rev-parse", "refs/continuity/main")
    ran = inproc(work, "claim", "add", "a claim", "--check", handle)
    assert ran.code == 2
    assert ran.err.startswith(f"git-continuity: error: {message}"), ran.err
    assert git(work, "rev-parse", "refs/continuity/main") == before


def test_revisions_are_resolved_to_full_ids_when_recorded(work: Path, inproc: Run) -> None:
    sha = head(work)
    unknown_here = "ab" * 20
    # -v shows the ids whole (without it, 12 characters and an ellipsis).
    ran = inproc(work, "-v", "claim", "add", "CI green", "--check", "github:checks/octo/app@HEAD")
    assert f"  handle  github:checks/octo/app@{sha}  (as written: github:checks/octo/app@HEAD)" in ran.out
    ran = inproc(
        work, "-v", "claim", "add", "CI green there", "--check", f"gitlab:pipeline/g/sub/app@{unknown_here}=success"
    )
    assert f"  handle  gitlab:pipeline/g/sub/app@{unknown_here}=success\n" in ran.out


# -- GitLab ---------------------------------------------------------------------------------


def test_gitlab_merge_request_and_pipelines(work: Path, inproc: Run, gitlab: FakeGitLab) -> None:
    sha = head(work)
    gitlab.add_mr("group/sub/app", 42, "opened")
    gitlab.add_mr("group/sub/app", 43, "merged")
    gitlab.add_pipeline("group/sub/app", sha, "failed")
    retried = gitlab.add_pipeline("group/sub/app", sha, "success")
    mr_pipeline = gitlab.add_pipeline("group/sub/app", sha, "success", ref="refs/merge-requests/42/head")
    claim(inproc, work, "MR 42 open", "gitlab:mr/group/sub/app!42=opened")
    claim(inproc, work, "MR 43 open", "gitlab:mr/group/sub/app!43=opened")
    claim(inproc, work, "pipelines green", "gitlab:pipeline/group/sub/app@HEAD")
    assert states(inproc(work, "verify", "--online", "--json")) == [
        ("MR 42 open", "verified", "MR !42 is opened, head 1111111"),
        ("MR 43 open", "contradicted", "MR !43 was merged at 2026-11-28T10:02Z by ada (merge commit eeeeeee)"),
        ("pipelines green", "verified", f"pipelines #{mr_pipeline}, #{retried} succeeded on {sha[:7]}"),
    ]
    assert "/api/v4/projects/group%2Fsub%2Fapp/merge_requests/42" in {p for p, _ in gitlab.requests}
    gitlab.add_pipeline("group/sub/app", sha, "running")
    assert states(inproc(work, "verify", "--online", "--json"))[2][1:] == (
        "unknown",
        f"pipeline #{retried + 2} (main) is running on {sha[:7]}; not decided yet",
    )


def test_gitlab_pages_pipelines_and_honours_its_rate_limit(work: Path, inproc: Run, gitlab: FakeGitLab) -> None:
    sha = head(work)
    for n in range(120):
        gitlab.add_pipeline("g/app", sha, "success", ref=f"branch-{n}")
    gitlab.add_pipeline("g/app", sha, "canceled", ref="branch-7")
    claim(inproc, work, "green", "gitlab:pipeline/g/app@HEAD")
    assert states(inproc(work, "verify", "--online", "--json"))[0][1:] == (
        "contradicted",
        f"pipeline #{500 + 120} (branch-7) canceled on {sha[:7]}",
    )
    assert len(gitlab.requests) == 2  # 100 per page
    gitlab.fault("/pipelines", Fault(429, {"RateLimit-Remaining": "0", "RateLimit-Reset": "1795961100"}))
    assert states(inproc(work, "verify", "--online", "--json"))[0][1:] == (
        "unknown",
        "rate limited until 14:05 UTC (GitLab answered 429)",
    )


def test_gitlab_never_saw_the_commit(work: Path, inproc: Run, gitlab: FakeGitLab) -> None:
    gitlab.add_pipeline("g/app", "f" * 40, "success")
    claim(inproc, work, "green", "gitlab:pipeline/g/app@HEAD")
    assert states(inproc(work, "verify", "--online", "--json"))[0][1:] == (
        "contradicted",
        f"CI never saw {head(work)[:7]}: no pipeline for it",
    )


# -- Gitea / Forgejo ------------------------------------------------------------------------


def test_gitea_and_forgejo_pull_requests_and_statuses(work: Path, inproc: Run, gitea: FakeGitea) -> None:
    sha = head(work)
    host = gitea.url  # plain HTTP on loopback: written out in the handle
    gitea.add_pull("ada", "app", 12, "merged")
    gitea.add_status("ada", "app", sha, "ci/test")
    gitea.add_status("ada", "app", sha, "ci/lint", "warning")
    claim(inproc, work, "PR 12 open", f"gitea:pr/{host}/ada/app#12=open")
    claim(inproc, work, "PR 12 merged", f"forgejo:pr/{host}/ada/app#12=merged")
    claim(inproc, work, "statuses green", f"gitea:status/{host}/ada/app@HEAD")
    assert states(inproc(work, "verify", "--online", "--json")) == [
        ("PR 12 open", "contradicted", "PR #12 was merged at 2026-11-28T10:02Z by ada (merge commit eeeeeee)"),
        ("PR 12 merged", "verified", "PR #12 was merged at 2026-11-28T10:02Z by ada (merge commit eeeeeee)"),
        ("statuses green", "verified", f"2 statuses succeeded on {sha[:7]}"),
    ]
    # The host was not configured, so no token went to it.
    assert all("authorization" not in h for _, h in gitea.requests)
    gitea.statuses[("ada", "app", sha)][1]["status"] = "failure"
    assert states(inproc(work, "verify", "--online", "--json"))[2][1:] == (
        "contradicted",
        f"status 'ci/lint' is failure on {sha[:7]}",
    )


def test_gitea_host_from_config_is_the_only_one_given_the_token(work: Path, inproc: Run, gitea: FakeGitea) -> None:
    git(work, "config", "continuity.gitea.host", gitea.url)
    gitea.add_pull("ada", "app", 3)
    ran = inproc(work, "claim", "add", "PR 3 open", "--check", "gitea:pr/ada/app#3=open")
    assert f"  handle  gitea:pr/{gitea.url}/ada/app#3=open  (as written: gitea:pr/ada/app#3=open)" in ran.out
    assert states(inproc(work, "verify", "--online", "--json")) == [
        ("PR 3 open", "verified", "PR #3 is open, head 1111111")
    ]
    assert gitea.requests[-1][1]["authorization"] == "token gitea-SECRETsecret"
    gitea.fault("/pulls/3", Fault(404, body=b'{"message": "not found"}'))
    assert states(inproc(work, "verify", "--online", "--json"))[0][1:] == (
        "unknown",
        f"not found (Gitea at {gitea.url} answered 404: or this token cannot see it)",
    )


def test_a_redirect_to_another_host_does_not_carry_the_token(work: Path, inproc: Run, github: FakeGitHub) -> None:
    with FakeGitHub() as elsewhere:
        elsewhere.add_pull("octo", "app", 6)
        github.fault("/pulls/6", Fault(302, {"Location": f"{elsewhere.url}/repos/octo/app/pulls/6"}))
        claim(inproc, work, "PR 6 open", "github:pr/octo/app#6=open")
        assert states(inproc(work, "verify", "--online", "--json")) == [
            ("PR 6 open", "verified", "PR #6 is open, head 1111111")
        ]
        assert github.requests[-1][1]["authorization"] == f"Bearer {TOKEN}"
        assert "authorization" not in elsewhere.requests[-1][1]
