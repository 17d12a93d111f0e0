"""Small HTTP servers on 127.0.0.1 that answer like GitHub, GitLab and Gitea.

None of those forges can run here, so each fake serves its API from in-memory state, and
every JSON answer it sends is first checked against the forge's published description
(tests/forge_api/): a fake drifting from the real API fails the test that used it. They
speak the parts the verifiers rely on: pagination (Link, X-Next-Page), ETag and 304,
rate-limit headers, and faults injected per path (status, headers, body, delay).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, unquote, urlsplit

import jsonschema

API = Path(__file__).parent / "forge_api"


# -- checking answers against the published descriptions -----------------------------------


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 / Swagger 2.0 schema objects as JSON Schema: ``nullable: true`` and
    ``x-nullable`` become a null alternative (jsonschema does not know either word)."""
    if isinstance(node, list):
        return [_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k not in ("nullable", "x-nullable", "example", "examples")}
    if node.get("nullable") or node.get("x-nullable"):
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def _pointer(*parts: str) -> str:
    return "#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


class Description:
    """One forge's published description, loaded once, able to check an answer."""

    def __init__(self, file: str, draft: type[jsonschema.protocols.Validator]) -> None:
        self.doc = _json_schema(json.loads((API / file).read_text()))
        self.draft = draft

    def check(self, pointer: str, value: Any) -> list[str]:
        schema = {**self.doc, "$ref": pointer}
        validator = self.draft(schema)
        return [
            f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message[:200]}" for e in validator.iter_errors(value)
        ]


GITHUB = Description("github.json", jsonschema.Draft4Validator)
GITEA = Description("gitea.json", jsonschema.Draft4Validator)
GITLAB = Description("gitlab.json", jsonschema.Draft202012Validator)


def github_example(name: str) -> Any:
    raw = json.loads((API / "github.json").read_text())
    return copy.deepcopy(raw["components"]["examples"][name]["value"])


# -- the server -----------------------------------------------------------------------------


@dataclass
class Fault:
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0
    times: int | None = None  # None: every time


@dataclass
class Answer:
    status: int
    body: Any = None  # JSON-able, or bytes sent as they are
    headers: dict[str, str] = field(default_factory=dict)
    schema: str | None = None  # JSON pointer into the description, checked before sending


Route = Callable[[re.Match[str], dict[str, list[str]]], Answer]
_Fake = TypeVar("_Fake", bound="FakeForge")


class FakeForge:
    """A loopback server; subclasses add routes and state."""

    description: Description
    per_page_param = "per_page"

    def __init__(self) -> None:
        self.routes: list[tuple[re.Pattern[str], Route]] = []
        self.faults: list[tuple[str, Fault]] = []
        self.errors: list[str] = []  # answers that broke the published description
        self.requests: list[tuple[str, dict[str, str]]] = []  # (path?query, headers)
        self.sent = {"full": 0, "not_modified": 0}
        self.delay = 0.0  # seconds before every answer (the benchmark's slow server)
        self.checked: set[str] = set()  # answers already checked (the same bytes pass again)
        self.lock = threading.Lock()
        # A listen backlog of 5 (the default) would leave parallel clients retrying their
        # connections for a second.
        ThreadingHTTPServer.request_queue_size = 128
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        shown = self.server.handle_error

        def handle_error(request: Any, address: Any) -> None:
            # A client that left before its answer (a slow answer past the brief's bound) is no error here.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                shown(request, address)

        self.server.handle_error = handle_error  # type: ignore[method-assign,assignment]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self: _Fake) -> _Fake:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def route(self, pattern: str, handler: Route) -> None:
        self.routes.append((re.compile(pattern), handler))

    def fault(self, path_part: str, fault: Fault) -> None:
        """Answer every request whose path contains path_part with this fault."""
        self.faults.insert(0, (path_part, fault))

    def paged(
        self, items: list[Any], query: dict[str, list[str]], path: str, wrap: Callable[[list[Any]], Any]
    ) -> Answer:
        """One page of items, with a Link header to the next (RFC 8288, as all three forges do)."""
        size = int(query.get(self.per_page_param, ["30"])[0])
        page = int(query.get("page", ["1"])[0])
        chunk = items[(page - 1) * size : page * size]
        headers = {}
        if page * size < len(items):
            rest = "&".join(f"{k}={v[0]}" for k, v in sorted(query.items()) if k != "page")
            headers["Link"] = f'<{self.url}{path}?{rest}&page={page + 1}>; rel="next"'
        return Answer(200, wrap(chunk), headers)

    def _answer(self, target: str, headers: dict[str, str]) -> Answer:
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query)
        for part, fault in self.faults:
            if part in path and fault.times != 0:
                if fault.times is not None:
                    fault.times -= 1
                time.sleep(fault.delay)
                return Answer(fault.status, fault.body, dict(fault.headers))
        for pattern, handler in self.routes:
            found = pattern.fullmatch(path)
            if found:
                return handler(found, query)
        return Answer(404, {"message": "Not Found"})

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        forge = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if forge.delay:
                    time.sleep(forge.delay)
                headers = {k.lower(): v for k, v in self.headers.items()}
                with forge.lock:
                    forge.requests.append((self.path, headers))
                answer = forge._answer(self.path, headers)
                body = answer.body if isinstance(answer.body, bytes) else json.dumps(answer.body).encode()
                key = answer.schema + hashlib.sha256(body).hexdigest() if answer.schema else ""
                if answer.schema is not None and not isinstance(answer.body, bytes) and key not in forge.checked:
                    problems = forge.description.check(answer.schema, answer.body)
                    with forge.lock:
                        forge.errors += [f"{self.path}: {p}" for p in problems]
                        forge.checked.add(key)
                out = dict(answer.headers)
                if answer.status == 200:
                    etag = 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'
                    out["ETag"] = etag
                    if headers.get("if-none-match") == etag:
                        with forge.lock:
                            forge.sent["not_modified"] += 1
                        self.send_response(304)
                        for k, v in out.items():
                            self.send_header(k, v)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    with forge.lock:
                        forge.sent["full"] += 1
                out.setdefault("Content-Type", "application/json; charset=utf-8")
                self.send_response(answer.status)
                for k, v in out.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


# -- GitHub ---------------------------------------------------------------------------------

GH_PR = "/repos/{owner}/{repo}/pulls/{pull_number}"
GH_RUNS = "/repos/{owner}/{repo}/commits/{ref}/check-runs"
GH_STATUS = "/repos/{owner}/{repo}/commits/{ref}/status"


def _ok(path: str) -> str:
    return _pointer("paths", path, "get", "responses", "200", "content", "application/json", "schema")


class FakeGitHub(FakeForge):
    """GitHub's REST API for pull requests, check runs and combined commit status; answers
    start from the examples in GitHub's own description and are checked against it."""

    description = GITHUB

    def __init__(self) -> None:
        super().__init__()
        self.pulls: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.runs: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.statuses: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.route(r"/repos/([^/]+)/([^/]+)/pulls/(\d+)", self._pull)
        self.route(r"/repos/([^/]+)/([^/]+)/commits/([^/]+)/check-runs", self._runs)
        self.route(r"/repos/([^/]+)/([^/]+)/commits/([^/]+)/status", self._status)

    def add_pull(self, owner: str, repo: str, number: int, state: str = "open", **fields: Any) -> dict[str, Any]:
        pr: dict[str, Any] = github_example("pull-request")
        for team in pr["requested_teams"]:
            # GitHub's own example lags its schema here (team-simple requires `type`).
            team.setdefault("type", "organization")
        pr.update(number=number, state="closed" if state in ("merged", "closed") else "open", draft=False)
        pr.update(merged=state == "merged", merged_at=None, closed_at=None, merged_by=None, merge_commit_sha=None)
        pr["head"]["sha"] = fields.pop("head_sha", "1" * 40)
        if state == "merged":
            pr.update(merged_at="2026-11-28T10:02:31Z", closed_at="2026-11-28T10:02:31Z", merge_commit_sha="e" * 40)
            pr["merged_by"] = copy.deepcopy(pr["user"])
            pr["merged_by"]["login"] = fields.pop("merged_by", "octocat")
        if state == "closed":
            pr["closed_at"] = "2026-11-27T09:00:00Z"
        pr.update(fields)
        self.pulls[(owner, repo, number)] = pr
        return pr

    def add_run(
        self, owner: str, repo: str, sha: str, name: str, status: str = "completed", conclusion: str | None = "success"
    ) -> None:
        run = github_example("check-run-paginated")["check_runs"][0]
        found = self.runs.setdefault((owner, repo, sha), [])
        run.update(id=len(found) + 1, name=name, head_sha=sha, status=status, conclusion=conclusion)
        if status != "completed":
            run["completed_at"] = None
        found.append(run)

    def add_status(self, owner: str, repo: str, sha: str, context: str, state: str = "success") -> None:
        status = github_example("combined-commit-status")["statuses"][0]
        found = self.statuses.setdefault((owner, repo, sha), [])
        status.update(id=len(found) + 1, context=context, state=state)
        found.append(status)

    def _pull(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        pr = self.pulls.get((m[1], m[2], int(m[3])))
        if pr is None:
            return Answer(404, _not_found(), schema=_pointer("components", "schemas", "basic-error"))
        return Answer(200, pr, schema=_ok(GH_PR))

    def _runs(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        runs = self.runs.get((m[1], m[2], unquote(m[3])))
        if runs is None and (m[1], m[2], unquote(m[3])) not in self.statuses:
            return Answer(404, _not_found(), schema=_pointer("components", "schemas", "basic-error"))
        answer = self.paged(runs or [], q, m[0], lambda page: {"total_count": len(runs or []), "check_runs": page})
        answer.schema = _ok(GH_RUNS)
        return answer

    def _status(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        key = (m[1], m[2], unquote(m[3]))
        statuses = self.statuses.get(key, [])
        combined = github_example("combined-commit-status")
        states = {s["state"] for s in statuses}
        state = (
            "failure"
            if states & {"failure", "error"}
            else "pending"
            if "pending" in states or not statuses
            else "success"
        )

        def wrap(page: list[Any]) -> Any:
            return {**combined, "sha": key[2], "state": state, "total_count": len(statuses), "statuses": page}

        answer = self.paged(statuses, q, m[0], wrap)
        answer.schema = _ok(GH_STATUS)
        return answer


def _not_found() -> dict[str, str]:
    return {"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"}


# -- GitLab ---------------------------------------------------------------------------------


class FakeGitLab(FakeForge):
    """GitLab's REST API v4 for merge requests and the pipelines of a commit."""

    description = GITLAB

    def __init__(self) -> None:
        super().__init__()
        self.mrs: dict[tuple[str, int], dict[str, Any]] = {}
        self.pipelines: dict[str, list[dict[str, Any]]] = {}
        self.route(r"/api/v4/projects/([^/]+)/merge_requests/(\d+)", self._mr)
        self.route(r"/api/v4/projects/([^/]+)/pipelines", self._pipelines)

    @property
    def api(self) -> str:
        return f"{self.url}/api/v4"

    def add_mr(self, project: str, iid: int, state: str = "opened", **fields: Any) -> None:
        merged = state == "merged"
        user = {
            "id": 7,
            "username": "ada",
            "name": "Ada",
            "state": "active",
            "web_url": "https://gitlab.example.com/ada",
        }
        self.mrs[(project, iid)] = {
            "id": 1000 + iid,
            "iid": iid,
            "project_id": 3,
            "title": "Fix the login loop",
            "state": state,
            "created_at": "2026-11-20T08:00:00.000Z",
            "updated_at": "2026-11-28T10:02:31.000Z",
            "merged_by": user if merged else None,
            "merge_user": user if merged else None,
            "merged_at": "2026-11-28T10:02:31.000Z" if merged else None,
            "closed_by": None,
            "closed_at": "2026-11-27T09:00:00.000Z" if state == "closed" else None,
            "target_branch": "main",
            "source_branch": "fix-login",
            "sha": "1" * 40,
            "merge_commit_sha": "e" * 40 if merged else None,
            "squash_commit_sha": None,
            "draft": False,
            "detailed_merge_status": "not_open" if state != "opened" else "mergeable",
            "web_url": f"https://gitlab.example.com/{project}/-/merge_requests/{iid}",
            **fields,
        }

    def add_pipeline(self, project: str, sha: str, status: str, ref: str = "main") -> int:
        found = self.pipelines.setdefault(project, [])
        number = 500 + sum(len(v) for v in self.pipelines.values())
        found.append(
            {
                "id": number,
                "iid": len(found) + 1,
                "project_id": 3,
                "sha": sha,
                "ref": ref,
                "status": status,
                "source": "push",
                "created_at": "2026-11-28T10:00:00.000Z",
                "updated_at": "2026-11-28T10:05:00.000Z",
                "web_url": f"https://gitlab.example.com/{project}/-/pipelines/{number}",
                "name": None,
            }
        )
        return number

    def _mr(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        mr = self.mrs.get((unquote(m[1]), int(m[2])))
        if mr is None:
            return Answer(404, {"message": "404 Not found"})
        return Answer(
            200, mr, schema=_pointer("paths", "/projects/{id}/merge_requests/{merge_request_iid}", "get", "response")
        )

    def _pipelines(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        project = unquote(m[1])
        if project not in self.pipelines and not any(p == project for p, _ in self.mrs):
            return Answer(404, {"message": "404 Project Not Found"})
        sha = q.get("sha", [None])[0]
        found = sorted(
            (p for p in self.pipelines.get(project, []) if sha is None or p["sha"] == sha), key=lambda p: -p["id"]
        )
        answer = self.paged(found, q, m[0], lambda page: page)
        # GitLab also says where the next page is in X-Next-Page (empty on the last page).
        page = int(q.get("page", ["1"])[0])
        answer.headers["X-Next-Page"] = str(page + 1) if "Link" in answer.headers else ""
        answer.headers["X-Total"] = str(len(found))
        answer.schema = _pointer("paths", "/projects/{id}/pipelines", "get", "response")
        return answer


# -- Gitea / Forgejo ------------------------------------------------------------------------


class FakeGitea(FakeForge):
    """Gitea's (and Forgejo's) API v1 for pull requests and combined commit status."""

    description = GITEA
    per_page_param = "limit"

    def __init__(self) -> None:
        super().__init__()
        self.pulls: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.statuses: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.route(r"/api/v1/repos/([^/]+)/([^/]+)/pulls/(\d+)", self._pull)
        self.route(r"/api/v1/repos/([^/]+)/([^/]+)/commits/([^/]+)/status", self._status)

    def add_pull(self, owner: str, repo: str, number: int, state: str = "open") -> None:
        merged = state == "merged"
        user = {"id": 1, "login": "ada", "full_name": "Ada", "email": "ada@example.com"}
        branch = {"label": "fix", "ref": "fix", "sha": "1" * 40, "repo_id": 1, "repo": {"id": 1, "name": repo}}
        self.pulls[(owner, repo, number)] = {
            "id": 90 + number,
            "number": number,
            "title": "Fix the login loop",
            "state": "closed" if state in ("merged", "closed") else "open",
            "merged": merged,
            "merged_at": "2026-11-28T10:02:31Z" if merged else None,
            "merged_by": user if merged else None,
            "merge_commit_sha": "e" * 40 if merged else None,
            "closed_at": "2026-11-28T10:02:31Z" if state in ("merged", "closed") else None,
            "head": branch,
            "base": {**branch, "label": "main", "ref": "main"},
            "user": user,
            "html_url": f"https://gitea.example.org/{owner}/{repo}/pulls/{number}",
        }

    def add_status(self, owner: str, repo: str, sha: str, context: str, status: str = "success") -> None:
        found = self.statuses.setdefault((owner, repo, sha), [])
        found.append(
            {
                "id": len(found) + 1,
                "context": context,
                "status": status,
                "description": f"{context}: {status}",
                "target_url": "https://ci.example.org/1",
                "created_at": "2026-11-28T10:00:00Z",
                "updated_at": "2026-11-28T10:00:00Z",
                "url": f"https://gitea.example.org/api/v1/repos/{owner}/{repo}/statuses/{sha}",
                "creator": {"id": 1, "login": "ci-bot"},
            }
        )

    def _pull(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        pr = self.pulls.get((m[1], m[2], int(m[3])))
        if pr is None:
            return Answer(404, {"message": "pull request does not exist", "url": self.url + "/api/swagger"})
        # Gitea leaves unset fields out rather than sending null.
        return Answer(200, {k: v for k, v in pr.items() if v is not None}, schema="#/definitions/PullRequest")

    def _status(self, m: re.Match[str], q: dict[str, list[str]]) -> Answer:
        key = (m[1], m[2], unquote(m[3]))
        statuses = self.statuses.get(key, [])
        states = {s["status"] for s in statuses}
        state = (
            "failure"
            if states & {"failure", "error"}
            else "pending"
            if "pending" in states or not statuses
            else "success"
        )

        def wrap(page: list[Any]) -> Any:
            return {"sha": key[2], "state": state, "total_count": len(statuses), "statuses": page, "url": self.url}

        answer = self.paged(statuses, q, m[0], wrap)
        answer.schema = "#/definitions/CombinedStatus"
        return answer
