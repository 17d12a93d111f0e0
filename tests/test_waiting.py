"""Waiting on someone else (issue 14): a check that observes a PR open and awaiting review, or
a pipeline still queued or running, makes its thread `waiting`: no attempt is counted,
nothing stalls, no budget is spent, the Stop gate lets the agent stop with a one-line note,
and status, orient and progress say "waiting on review since …; don't retry". Against the
loopback forges (tests/forge_fakes.py: real HTTP, answers checked against the published API
descriptions) and real repositories."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import conftest
import pytest
from conftest import Ran, git
from forge_fakes import FakeGitea, FakeGitHub, FakeGitLab

from git_continuity.model import Derived, shown
from git_continuity.store.attempts import waiting_on

Run = Callable[..., Ran]
REVIEW = "github:pr/octo/app#830=merged"


class Cli(conftest.Cli):
    def attempts(self, cwd: Path) -> list[str]:
        return git(cwd, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/attempts/").split()

    def evidence(self, cwd: Path, claim: str) -> list[dict[str, object]]:
        """Every evidence entry of a claim on the state ref, oldest first."""
        names = git(cwd, "ls-tree", "-r", "--name-only", "refs/continuity/main", f".continuity/evidence/{claim}/")
        return [json.loads(git(cwd, "show", f"refs/continuity/main:{n}")) for n in sorted(names.split())]

    def checks(self, cwd: Path, thread: str) -> list[str]:
        shown = json.loads(self.ok(cwd, "thread", "show", thread, "--json"))["thread"]
        return [c["id"] for c in shown["checks"]]


@pytest.fixture
def gc(inproc: Run) -> Cli:
    return Cli(inproc)


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GH_TOKEN", "ghp_test")
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield fake
    assert fake.errors == []  # every answer matched GitHub's published description


@pytest.fixture
def started(gc: Cli, repo: Path) -> Path:
    gc.ok(repo, "init")
    gc.ok(repo, "objective", "set", "Land the login fix", "--why", "users are locked out")
    return repo


def stop(cwd: Path, active: bool = False) -> dict[str, object]:
    """The real Stop hook of Claude Code, in a fresh process."""
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "stop"],
        input=json.dumps({"session_id": "conv-1", "cwd": str(cwd), "stop_hook_active": active}),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def line(since: object) -> str:
    return f"waiting on review since {shown(str(since))} UTC (just now); don't retry"


# -- the rule ---------------------------------------------------------------------------------


def test_a_thread_waits_only_when_every_check_that_does_not_verify_waits() -> None:
    review = Derived("contradicted", "PR #830 is open", "2026-12-01T10:00:00.000Z", "review")
    ci = Derived("unknown", "check 'build' is queued", "2026-12-01T10:00:00.000Z", "CI")
    green = Derived("verified", "1 check run succeeded", "2026-12-01T10:00:00.000Z")
    red = Derived("contradicted", "check 'build' concluded failure", "2026-12-01T10:00:00.000Z")
    assert waiting_on([review, green]) == ("review",)
    assert waiting_on([review, ci, review]) == ("review", "CI")
    assert waiting_on([review, red]) == ()  # one failing and one waiting: it fails
    assert waiting_on([green]) == ()  # nothing is pending: it verifies
    assert waiting_on([]) == ()


# -- the scenario: a PR awaiting review ---------------------------------------------------------


def test_a_pr_awaiting_review_counts_no_attempt_and_the_gate_lets_the_agent_stop(
    gc: Cli, started: Path, github: FakeGitHub
) -> None:
    github.add_pull("octo", "app", 830, "open")
    # A budget of one attempt: any attempt counted would fire the stop-loss at once.
    tid = gc.thread(started, "The fix is merged", REVIEW)
    gc.ok(started, "thread", "set", tid, "open", "--budget", "attempts=1")
    (cid,) = gc.checks(started, tid)
    first = gc.run(started, "verify", "--online")
    (seen,) = gc.evidence(started, cid)
    assert (seen["result"], seen["waiting"]) == ("contradicted", "review")
    assert first.code == 1  # the claim does not hold yet, and verify says so
    assert first.out == (
        f"  contradicted  {cid}  {REVIEW}\n"
        "                PR #830 is open, head 1111111\n\n"
        "Recorded 1 evidence entry.\n\n"
        f'{tid} "The fix is merged": {line(seen["checked_at"])}\n'
    )
    again = gc.run(started, "verify", "--online")
    assert again.out.endswith(f'{tid} "The fix is merged": {line(seen["checked_at"])}\n')
    # Since the first observation, not the latest one.
    first_seen, latest = gc.evidence(started, cid)
    assert first_seen == seen and latest["checked_at"] != seen["checked_at"]

    # No attempt, so nothing stalls and no budget is spent: the thread is still open.
    assert gc.attempts(started) == []
    progress = json.loads(gc.ok(started, "progress", tid, "--json"))["threads"][0]
    expected = {"on": ["review"], "since": seen["checked_at"], "claims": [cid], "text": line(seen["checked_at"])}
    assert (progress["status"], progress["blocked"], progress["stalled"]) == ("open", None, False)
    assert progress["spent"] == []
    assert progress["waiting"] == expected
    assert progress["used"]["attempts"] == 0
    assert gc.ok(started, "progress", tid) == (
        f"{tid}  The fix is merged  (open)\n"
        f"  {line(seen['checked_at'])}\n"
        "  no attempts yet: waiting on someone else counts none\n"
    )

    # status, status --json, thread show
    status = gc.ok(started, "status")
    threads = status.split("Threads (1 not done, 0 done)\n")[1].split("\n\nClaims")[0]
    assert threads == (
        f"  open       {tid}  The fix is merged  (0 of 1 checks verified)\n"
        f"    {line(seen['checked_at'])}\n"
        f"      contradicted  {cid}  {REVIEW}\n"
        "                    PR #830 is open, head 1111111\n"
        "                    [recorded here just now, not asked now]"
    )
    assert json.loads(gc.ok(started, "status", "--json"))["threads"][0]["waiting"] == expected
    assert json.loads(gc.ok(started, "thread", "show", tid, "--json"))["thread"]["waiting"] == expected
    assert f"\n  {line(seen['checked_at'])}\nChecks (0 of 1 checks verified now)\n" in gc.ok(
        started, "thread", "show", tid
    )

    # orient says it first, and not to retry; its JSON carries it.
    brief = gc.ok(started, "orient")
    assert brief.split("\n\n")[1] == (
        f'## Waiting on someone else: don\'t retry these\n- **{tid} "The fix is merged": {line(seen["checked_at"])}**'
    )
    assert "Stalled" not in brief
    oriented = json.loads(gc.ok(started, "orient", "--json"))
    assert oriented["waiting"] == [{"thread": tid, "title": "The fix is merged", "status": "open", **expected}]
    assert oriented["threads"][0]["waiting"] == expected

    # The gate: nothing to retry, so it does not hold; the thread stays open.
    closing = gc.run(started, "check", "--closing")
    assert (closing.code, closing.out) == (
        0,
        f"Nothing to retry: 1 open thread ({tid}) waiting on someone else.\n"
        f'{tid} "The fix is merged": {line(seen["checked_at"])}\n',
    )
    checked = json.loads(gc.ok(started, "check", "--closing", "--json"))
    assert (checked["ok"], checked["threads"][0]["waiting"]) == (True, expected)
    # The agent's Stop hook lets a session that changed something stop with a one-line note
    # instead of sending it back.
    (started / "notes.md").write_text("asked the reviewers\n")
    assert stop(started) == {"systemMessage": f"git-continuity: {tid} {line(seen['checked_at'])}"}
    assert gc.attempts(started) == []
    assert json.loads(gc.ok(started, "thread", "show", tid, "--json"))["thread"]["status"] == "open"

    # Merged: it verifies; the gate says so, and closing it is the agent's deliberate act.
    github.add_pull("octo", "app", 830, "merged")
    assert gc.run(started, "verify", "--online").code == 0
    closed = gc.run(started, "check", "--closing")
    assert (closed.code, closed.out) == (
        0,
        f"Done: every open thread verifies now ({tid}); close it with: git continuity thread close {tid}\n",
    )
    assert "waiting" not in json.loads(gc.ok(started, "status", "--json"))["threads"][0]


def test_one_failing_check_beside_a_waiting_one_fails_and_counts_an_attempt(
    gc: Cli, started: Path, github: FakeGitHub
) -> None:
    github.add_pull("octo", "app", 830, "open")
    tid = gc.thread(started, "The fix is merged and documented", REVIEW, "file:docs/login.md")
    assert gc.run(started, "verify", "--online").code == 1
    assert len(gc.attempts(started)) == 1
    status = json.loads(gc.ok(started, "status", "--json"))["threads"][0]
    assert "waiting" not in status
    assert "waiting on" not in gc.ok(started, "status") and "Waiting" not in gc.ok(started, "orient")
    closing = gc.run(started, "check", "--closing")
    assert closing.code == 1
    assert closing.out.startswith(f"Not done: 1 open thread ({tid}) not verified now.\n")
    assert len(gc.attempts(started)) == 1  # check writes nothing
    (started / "docs.md").write_text("a start\n")  # the session changes something: its Stop is held
    answer = stop(started)
    assert answer["decision"] == "block"
    assert str(answer["reason"]).startswith("git-continuity: you may not stop yet")
    assert len(gc.attempts(started)) == 2  # the Stop gate tried it too


# -- CI still running ----------------------------------------------------------------------------


def test_a_pipeline_still_running_waits_on_ci_since_it_started_waiting(
    gc: Cli, started: Path, github: FakeGitHub
) -> None:
    (started / ".continuity.yaml").write_text("stalled: {attempts: 1, sessions: 1}\n")
    sha = git(started, "rev-parse", "HEAD")
    tid = gc.thread(started, "CI is green", "github:checks/octo/app@HEAD")
    (cid,) = gc.checks(started, tid)
    # It failed: an attempt, and with this policy a stall.
    github.add_run("octo", "app", sha, "build", conclusion="failure")
    assert gc.run(started, "verify", "--online").code == 1
    assert len(gc.attempts(started)) == 1
    assert "## Stalled: stop retrying these" in gc.ok(started, "orient")
    # Re-run by someone else's CI: queued, then in progress. No attempt; no stall now.
    github.runs.clear()
    github.add_run("octo", "app", sha, "build", status="queued", conclusion=None)
    gc.run(started, "verify", "--online")
    github.runs[("octo", "app", sha)][0]["status"] = "in_progress"
    gc.run(started, "verify", "--online")
    # The brief's fresh look asked CI again, and recorded what it said (failed still).
    failed, looked, queued, running = gc.evidence(started, cid)
    assert [e.get("waiting") for e in (failed, looked, queued, running)] == [None, None, "CI", "CI"]
    assert running["observed"] == f"check 'build' is in_progress on {sha[:7]}; not decided yet"
    assert len(gc.attempts(started)) == 1
    since = queued["checked_at"]  # the first observation of this wait, not the failure before it
    text = f"waiting on CI since {shown(str(since))} UTC (just now); don't retry"
    brief = gc.ok(started, "orient")
    assert brief.split("\n\n")[1] == (
        f'## Waiting on someone else: don\'t retry these\n- **{tid} "CI is green": {text}**'
    )
    assert "Stalled" not in brief
    progress = json.loads(gc.ok(started, "progress", "--json"))["threads"][0]
    assert (progress["stalled"], progress["waiting"]["since"], progress["waiting"]["on"]) == (False, since, ["CI"])
    assert f"\n  {text}\n" in gc.ok(started, "progress")
    (started / "notes.md").write_text("re-ran CI\n")  # a session that changed something
    assert stop(started) == {"systemMessage": f"git-continuity: {tid} {text}"}
    # Done running, green: it closes.
    github.runs[("octo", "app", sha)][0].update(status="completed", conclusion="success")
    closed = gc.run(started, "check", "--closing", "--online")
    assert (closed.code, closed.out) == (
        0,
        f"Done: every open thread verifies now ({tid}); close it with: git continuity thread close {tid}\n",
    )
    assert len(gc.attempts(started)) == 1


# -- each forge's words for it ---------------------------------------------------------------------


def test_each_forge_says_what_waits_on_review_or_ci_and_what_does_not(
    gc: Cli, started: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = git(started, "rev-parse", "HEAD")
    with FakeGitLab() as gitlab, FakeGitea() as gitea:
        monkeypatch.setenv("CI_API_V4_URL", gitlab.api)
        github.add_pull("octo", "app", 830, "open")
        github.add_pull("octo", "app", 1, "open", draft=True)  # the author's move: not waiting
        github.add_pull("octo", "app", 2, "closed")
        github.add_status("octo", "app", sha, "ci/lint", "pending")
        gitlab.add_mr("g/app", 3, "opened")
        gitlab.add_mr("g/app", 4, "opened", draft=True)
        gitlab.add_pipeline("g/app", sha, "running")
        gitlab.add_pipeline("g/other", sha, "manual")  # waits for a person to start it: not someone else's CI
        gitea.add_pull("ada", "app", 5, "open")
        gitea.add_status("ada", "app", sha, "ci/test", "pending")
        handles = {
            "GitHub PR open": REVIEW,
            "GitHub draft PR": "github:pr/octo/app#1=merged",
            "GitHub PR closed": "github:pr/octo/app#2=merged",
            "GitHub status pending": "github:checks/octo/app@HEAD",
            "GitLab MR opened": "gitlab:mr/g/app!3=merged",
            "GitLab draft MR": "gitlab:mr/g/app!4=merged",
            "GitLab pipeline running": "gitlab:pipeline/g/app@HEAD",
            "GitLab pipeline manual": "gitlab:pipeline/g/other@HEAD",
            "Gitea PR open": f"gitea:pr/{gitea.url}/ada/app#5=merged",
            "Gitea status pending": f"gitea:status/{gitea.url}/ada/app@HEAD",
        }
        for title, handle in handles.items():
            gc.thread(started, title, handle)
        gc.run(started, "verify", "--online")
        assert gitlab.errors == [] and gitea.errors == []
    threads = json.loads(gc.ok(started, "status", "--json"))["threads"]
    assert {t["title"]: (t["checks"][0]["state"], t.get("waiting", {}).get("on")) for t in threads} == {
        "GitHub PR open": ("contradicted", ["review"]),
        "GitHub draft PR": ("contradicted", None),
        "GitHub PR closed": ("contradicted", None),
        "GitHub status pending": ("unknown", ["CI"]),
        "GitLab MR opened": ("contradicted", ["review"]),
        "GitLab draft MR": ("contradicted", None),
        "GitLab pipeline running": ("unknown", ["CI"]),
        "GitLab pipeline manual": ("unknown", None),
        "Gitea PR open": ("contradicted", ["review"]),
        "Gitea status pending": ("unknown", ["CI"]),
    }
    # One attempt for each thread that fails, none for those that wait.
    assert len(gc.attempts(started)) == 4
