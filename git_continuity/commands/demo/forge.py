"""The demo's forge chapter, and the local stand-in for GitHub's pull request API it runs.

No real GitHub can run on a laptop, so the tour starts this on 127.0.0.1 and says so. It
answers ``GET /repos/{owner}/{repo}/pulls/{number}`` with the fields of GitHub's answer
that the github verifier reads, from state the tour changes (a reviewer merging the PR).
The verifier talks to it exactly as to api.github.com, through GITHUB_API_URL.
"""

from __future__ import annotations

import json
import re
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from git_continuity.commands.demo import Tour, made
from git_continuity.commands.demo.story import world

PULL = re.compile(r"^/repos/([^/]+)/([^/]+)/pulls/(\d+)$")


class StandIn:
    """Owns the server thread; ``merge`` changes a PR the way a reviewer's click would."""

    def __init__(self) -> None:
        self.pulls: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def open_pull(self, owner: str, repo: str, number: int, head: str) -> None:
        self.pulls[(owner, repo, number)] = {
            "number": number,
            "state": "open",
            "draft": False,
            "merged": False,
            "merged_at": None,
            "merged_by": None,
            "closed_at": None,
            "merge_commit_sha": None,
            "head": {"sha": head, "ref": "fix-login"},
            "base": {"ref": "main"},
        }

    def merge(self, owner: str, repo: str, number: int, by: str, at: str, commit: str) -> None:
        pr = self.pulls[(owner, repo, number)]
        pr.update(state="closed", merged=True, merged_at=at, closed_at=at, merge_commit_sha=commit)
        pr["merged_by"] = {"login": by}

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        pulls = self.pulls

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                found = PULL.match(self.path.split("?")[0])
                pr = pulls.get((found[1], found[2], int(found[3]))) if found else None
                status, body = (200, pr) if pr else (404, {"message": "Not Found"})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def forges(t: Tour) -> None:
    """CI and PR truth: a recorded CI result that travels with the commit, and a "PR open"
    claim that turns contradicted once the PR is merged."""
    world(t)
    t.say(
        "Chapter ci. The agent runs the tests through git continuity, which records the result on the\n"
        "commit's note (refs/notes/continuity: it travels to every clone with the state):"
    )
    t.run("work", "git", "continuity", "ci", "run", "--name", "tests", "--", "python3", "test_login.py")
    t.run("work", "git", "continuity", "claim", "add", "the tests pass", "--check", "ci:HEAD#tests")

    head = t.quiet("work", "git", "rev-parse", "HEAD").strip()
    forge = StandIn()
    try:
        forge.open_pull("demo", "app", 830, head)
        t.env.update(GITHUB_API_URL=forge.url, GH_TOKEN="demo-token")
        t.say(
            "It opens PR 830 for review. No real GitHub can run here, so a LOCAL STAND-IN for GitHub's API\n"
            f"answers on {forge.url} (GITHUB_API_URL points there; the verifier is the real one):"
        )
        added = t.run(
            "work",
            "git",
            "continuity",
            "claim",
            "add",
            "PR 830 is open, waiting for review",
            "--check",
            "github:pr/demo/app#830=open",
        )
        claim = made(added, "c")
        t.run("work", "git", "continuity", "verify", claim, "--online")
        t.say(
            "A thread that waits on someone else is waiting, not failing: while the PR awaits review, its\n"
            "check counts no attempt, nothing stalls, and the brief says not to retry:"
        )
        opened = t.run(
            "work", "git", "continuity", "thread", "add", "PR 830 is merged", "--check", "github:pr/demo/app#830=merged"
        )
        thread = made(opened, "t")
        t.run("work", "git", "continuity", "check", "--closing", "--online")
        t.run("work", "git", "continuity", "orient", head=r"waiting on review")

        merged = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")  # as GitHub's API writes times
        forge.merge("demo", "app", 830, by="reviewer", at=merged, commit="9f3c2a1" + "0" * 33)
        t.say(
            "While the agent works on, a reviewer merges PR 830 on the forge. verify without --online sends\n"
            "nothing: it shows the last evidence (the record of a dereference), and says nothing was asked:"
        )
        t.run("work", "git", "continuity", "verify", claim)
        t.say("verify --online asks the forge, and the stale 'PR open' claim turns contradicted:")
        t.run("work", "git", "continuity", "verify", claim, "--online", expect=1)
        t.say("The thread that was waiting on the review closes now:")
        t.run("work", "git", "continuity", "thread", "close", thread, "--online")
    finally:
        forge.stop()
        for name in ("GITHUB_API_URL", "GH_TOKEN"):
            t.env.pop(name, None)
