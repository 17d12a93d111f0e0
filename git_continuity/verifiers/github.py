"""GitHub: pull request state, and CI on a commit (check runs and commit statuses together).

API root: ``GITHUB_API_URL`` as GitHub Actions sets it (default https://api.github.com; a
GitHub Enterprise Server's is ``https://HOST/api/v3``). Token: GH_TOKEN, GITHUB_TOKEN, then
``gh auth token``. Without a token public repositories still answer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from git_continuity import __version__, forge
from git_continuity.errors import UserError
from git_continuity.plugin import Handle, Observation, Repo, Scheme, VerifyContext, hookimpl

NAME = "github"
SCHEMES = (
    Scheme(
        "github",
        "pr/<owner>/<repo>#<n>[=open|merged|closed]: the PR is in that state; "
        "checks/<owner>/<repo>@<rev>[=success]: every check run and commit status on rev succeeded",
        "github:pr/octo/app#830=merged or github:checks/octo/app@HEAD",
        live=False,
        network=True,
    ),
)
PR_FORM = "github:pr/<owner>/<repo>#<number>[=open|merged|closed]"
CHECKS_FORM = "github:checks/<owner>/<repo>@<rev>[=success]"
OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")
REPO = re.compile(r"(?!\.{1,2}$)[A-Za-z0-9._-]{1,100}")
NUMBER = re.compile(r"[1-9][0-9]{0,9}")
PR_STATES = ("open", "merged", "closed")
GREEN = ("success", "neutral", "skipped")


@hookimpl
def continuity_schemes() -> Sequence[Scheme]:
    return SCHEMES


# -- recording ------------------------------------------------------------------------------


def _owner_repo(path: str, text: str, form: str) -> tuple[str, str]:
    owner, sep, name = path.partition("/")
    if not sep:
        raise UserError(f"handle {text!r} is not of the form {form}")
    forge.require(OWNER, owner, "owner", text, form)
    forge.require(REPO, name, "repository", text, form)
    return owner, name


def _resolve(repo: Repo, handle: Handle) -> Handle:
    text, body = handle.text, handle.body
    kind, sep, rest = body.partition("/")
    if kind == "pr" and sep:
        rest, eq, state = rest.partition("=")
        path, hash_, number = rest.rpartition("#")
        if not hash_:
            raise UserError(f"handle {text!r} names no PR number; the form is {PR_FORM}")
        owner, name = _owner_repo(path, text, PR_FORM)
        forge.require(NUMBER, number, "PR number", text, PR_FORM)
        expected = f"={forge.expectation(state, PR_STATES, text)}" if eq else ""
        return Handle("github", f"pr/{owner}/{name}#{number}{expected}")
    if kind == "checks" and sep:
        rest, eq, state = rest.partition("=")
        path, at, rev = rest.rpartition("@")
        if not at or not rev:
            raise UserError(f"handle {text!r} names no revision; the form is {CHECKS_FORM}")
        owner, name = _owner_repo(path, text, CHECKS_FORM)
        expected = f"={forge.expectation(state, ('success',), text)}" if eq else ""
        return Handle("github", f"checks/{owner}/{name}@{forge.revision(repo, rev, text)}{expected}")
    raise UserError(f"handle {text!r} is neither {PR_FORM} nor {CHECKS_FORM}")


@hookimpl
def continuity_resolve(handle: Handle, repo: Repo) -> Handle | None:
    return _resolve(repo, handle) if handle.scheme == "github" else None


# -- dereferencing --------------------------------------------------------------------------


def api_for_run() -> forge.Api:
    from git_continuity import tokens

    base = os.environ.get("GITHUB_API_URL", "").strip().rstrip("/") or "https://api.github.com"
    token = tokens.github(urlsplit(base).netloc)
    return forge.Api(
        "GitHub",
        base,
        {"Authorization": f"Bearer {token}"} if token else {},
        "set GH_TOKEN or GITHUB_TOKEN, or run gh auth login",
        accept="application/vnd.github+json",
    )


def _seen(result: str, observed: str) -> Observation:
    return Observation(result, observed, NAME, __version__)  # type: ignore[arg-type]


def _pr(ctx: VerifyContext, api: forge.Api, body: str) -> Observation:
    rest, _, expected = body.removeprefix("pr/").partition("=")
    path, _, number = rest.rpartition("#")
    pr = forge.fetch_object(ctx, api, f"{api.base}/repos/{path}/pulls/{number}")
    actual, now = forge.pull_request(api, number, pr)
    return _seen("verified" if not expected or expected == actual else "contradicted", now)


def _checks(ctx: VerifyContext, api: forge.Api, body: str) -> Observation:
    rest = body.removeprefix("checks/").partition("=")[0]
    path, _, sha = rest.rpartition("@")
    commit = f"{api.base}/repos/{path}/commits/{quote(sha)}"
    runs = forge.fetch_pages(ctx, api, f"{commit}/check-runs?per_page=100", key="check_runs")
    statuses = forge.fetch_pages(ctx, api, f"{commit}/status?per_page=100", key="statuses")
    return _judge_checks(sha, runs, statuses)


def _more(found: list[str]) -> str:
    return f" (and {len(found) - 1} more)" if len(found) > 1 else ""


def _judge_checks(sha: str, runs: list[Any], statuses: list[Any]) -> Observation:
    """Green only when every check run concluded green and every status is success."""
    red, waiting = [], []
    for run in runs:
        name = run.get("name", "?")
        if run.get("status") != "completed":
            waiting.append(f"check '{name}' is {run.get('status', 'not completed')}")
        elif run.get("conclusion") not in GREEN:
            red.append(f"check '{name}' concluded {run.get('conclusion')}")
    for status in statuses:
        context, state = status.get("context", "?"), status.get("state")
        if state == "pending":
            waiting.append(f"status '{context}' is pending")
        elif state != "success":
            red.append(f"status '{context}' is {state}")
    on = f"on {forge.short(sha)}"
    if red:
        return _seen("contradicted", f"{red[0]}{_more(red)} {on}")
    if waiting:
        return _seen("unknown", f"{waiting[0]}{_more(waiting)} {on}; not decided yet")
    if not runs and not statuses:
        return _seen("contradicted", f"CI never saw {forge.short(sha)}: no check runs and no commit statuses")
    parts = [f"{len(runs)} check run{'s' if len(runs) != 1 else ''}"] if runs else []
    parts += [f"{len(statuses)} status{'es' if len(statuses) != 1 else ''}"] if statuses else []
    return _seen("verified", f"{' and '.join(parts)} succeeded {on}")


@hookimpl
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation]:
    api = api_for_run()

    def check(handle: Handle) -> Observation:
        if handle.body.startswith("pr/"):
            return _pr(context, api, handle.body)
        return _checks(context, api, handle.body)

    return forge.each(handles, context, check, lambda reason: _seen("unknown", reason))
