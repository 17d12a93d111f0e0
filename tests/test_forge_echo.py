"""A forge that echoes back the token it was sent (issue 10, item 14): the token lands
nowhere, not in evidence (and so not on the remote), not in the HTTP cache, not on the
screen, not in --json."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Ran, git
from forge_fakes import Answer, FakeGitHub

# Matches none of redact.PATTERNS: only knowing what was sent can mask it.
TOKEN = "opaque-0123456789-Token-value"


class EchoingGitHub(FakeGitHub):
    """GitHub's answers, with whatever credential the request carried written into them:
    the PR's merger, a check run's name, a commit status's context (JSON-escaped, so that a
    search of the raw bytes misses it) and the pagination link."""

    def __init__(self) -> None:
        super().__init__()
        self.heard = ""

    def _answer(self, target: str, headers: dict[str, str]) -> Answer:
        self.heard = headers.get("authorization", "").removeprefix("Bearer ")
        answer = super()._answer(target, headers)
        if "/pulls/" in target and isinstance(answer.body, dict):
            answer.body["merged_by"]["login"] = self.heard
        if "/check-runs" in target and isinstance(answer.body, dict):
            for run in answer.body["check_runs"]:
                run["name"] = f"lint with {self.heard}"
            answer.headers["X-Echo"] = self.heard
        if "/status" in target and isinstance(answer.body, dict):
            for status in answer.body["statuses"]:
                status["context"] = f"deploy {self.heard}"
            escaped = "".join(f"\\u{ord(c):04x}" for c in self.heard)
            answer = Answer(200, json.dumps(answer.body).replace(self.heard, escaped).encode(), answer.headers)
        return answer


@pytest.fixture
def github(monkeypatch: pytest.MonkeyPatch) -> Iterator[EchoingGitHub]:
    with EchoingGitHub() as fake:
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        monkeypatch.setenv("GH_TOKEN", TOKEN)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        yield fake


def nowhere(where: Path, *shown: Ran) -> None:
    """The token is in no file under .git, in no object, and in nothing shown."""
    for path in (where / ".git").rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=where, capture_output=True, check=True
    ).stdout
    assert TOKEN.encode() not in objects
    for ran in shown:
        assert TOKEN not in ran.out + ran.err


def observed(ran: Ran) -> dict[str, Any]:
    return {c["text"]: (c["state"], c["observed"]) for c in json.loads(ran.out)["claims"]}


def test_a_token_echoed_back_lands_nowhere(
    remote_and_clone: tuple[Path, Path], inproc: Any, github: EchoingGitHub
) -> None:
    bare, work = remote_and_clone
    assert inproc(work, "init").code == 0
    sha = git(work, "rev-parse", "HEAD")
    github.add_pull("octo", "app", 7, "merged", head_sha=sha)
    github.add_run("octo", "app", sha, "lint", conclusion="failure")
    github.add_status("octo", "app", sha, "deploy", state="error")
    for text, handle in (("PR 7 merged", "github:pr/octo/app#7=merged"), ("CI green", f"github:checks/octo/app@{sha}")):
        assert inproc(work, "claim", "add", text, "--check", handle).code == 0

    human = inproc(work, "verify", "--online")
    assert github.heard == TOKEN  # it was sent, and echoed
    as_json = inproc(work, "verify", "--online", "--json")  # the cache answers this time (304)
    assert github.sent["not_modified"] > 0
    assert observed(as_json) == {
        "PR 7 merged": ("verified", "PR #7 was merged at 2026-11-28T10:02Z by [redacted] (merge commit eeeeeee)"),
        "CI green": ("contradicted", f"check 'lint with [redacted]' concluded failure (and 1 more) on {sha[:7]}"),
    }
    status = inproc(work, "status")
    status_json = inproc(work, "status", "--json")
    assert "[redacted]" in status.out
    pushed = inproc(work, "push")
    assert pushed.code == 0, pushed
    nowhere(work, human, as_json, status, status_json, pushed)
    cached = list((work / ".git" / "continuity" / "cache" / "http").glob("*.json"))
    assert cached  # the answers were cached, masked
    bodies = [base64.b64decode(json.loads(p.read_text())["body"]) for p in cached]
    assert len(bodies) == 3 and all(b"[redacted]" in body and TOKEN.encode() not in body for body in bodies)
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=bare, capture_output=True, check=True
    ).stdout
    assert b"[redacted]" in objects and TOKEN.encode() not in objects  # the remote has the evidence, masked
