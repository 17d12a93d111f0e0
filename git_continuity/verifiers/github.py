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

from git_continuity import api

NAME = "github"
SEEN = api.Verifier(NAME, api.GIT_CONTINUITY_VERSION)
SCHEMES = (
    api.Scheme(
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


@api.hookimpl
def continuity_schemes() -> Sequence[api.Scheme]:
    return SCHEMES


# -- recording ------------------------------------------------------------------------------


def _owner_repo(path: str, text: str, form: str) -> tuple[str, str]:
    owner, sep, name = path.partition("/")
    if not sep:
        raise api.UserError(f"handle {text!r} is not of the form {form}")
    api.require(OWNER, owner, "owner", text, form)
    api.require(REPO, name, "repository", text, form)
    return owner, name


def _resolve(repo: api.Repository, handle: api.Handle) -> api.Handle:
    text, body = handle.text, handle.body
    kind, sep, rest = body.partition("/")
    if kind == "pr" and sep:
        rest, eq, state = rest.partition("=")
        path, hash_, number = rest.rpartition("#")
        if not hash_:
            raise api.UserError(f"handle {text!r} names no PR number; the form is {PR_FORM}")
        owner, name = _owner_repo(path, text, PR_FORM)
        api.require(NUMBER, number, "PR number", text, PR_FORM)
        expected = f"={api.expectation(state, PR_STATES, text)}" if eq else ""
        return api.Handle("github", f"pr/{owner}/{name}#{number}{expected}")
    if kind == "checks" and sep:
        rest, eq, state = rest.partition("=")
        path, at, rev = rest.rpartition("@")
        if not at or not rev:
            raise api.UserError(f"handle {text!r} names no revision; the form is {CHECKS_FORM}")
        owner, name = _owner_repo(path, text, CHECKS_FORM)
        expected = f"={api.expectation(state, ('success',), text)}" if eq else ""
        return api.Handle("github", f"checks/{owner}/{name}@{api.revision(repo, rev, text)}{expected}")
    raise api.UserError(f"handle {text!r} is neither {PR_FORM} nor {CHECKS_FORM}")


@api.hookimpl
def continuity_resolve(handle: api.Handle, repo: api.Repository) -> api.Handle | None:
    return _resolve(repo, handle)


# -- dereferencing --------------------------------------------------------------------------


def service_for_run() -> api.Service:
    base = os.environ.get("GITHUB_API_URL", "").strip().rstrip("/") or "https://api.github.com"
    token = api.github_token(urlsplit(base).netloc)
    return api.Service(
        "GitHub",
        base,
        {"Authorization": f"Bearer {token}"} if token else {},
        "set GH_TOKEN or GITHUB_TOKEN, or run gh auth login",
        accept="application/vnd.github+json",
    )


def _pr(ctx: api.VerifyContext, service: api.Service, body: str) -> api.Observation:
    rest, _, expected = body.removeprefix("pr/").partition("=")
    path, _, number = rest.rpartition("#")
    pr = api.fetch_object(ctx, service, f"{service.base}/repos/{path}/pulls/{number}")
    actual, now = api.pull_request(service, number, pr)
    if not expected or expected == actual:
        return SEEN.verified(now)
    # Open and ready, expected merged: the next move is a reviewer's, not ours.
    awaiting = expected == "merged" and actual == "open" and not pr.get("draft")
    return SEEN.contradicted(now, waiting="review" if awaiting else None)


def _checks(ctx: api.VerifyContext, service: api.Service, body: str) -> api.Observation:
    rest = body.removeprefix("checks/").partition("=")[0]
    path, _, sha = rest.rpartition("@")
    commit = f"{service.base}/repos/{path}/commits/{quote(sha)}"
    runs = api.fetch_pages(ctx, service, f"{commit}/check-runs?per_page=100", key="check_runs")
    statuses = api.fetch_pages(ctx, service, f"{commit}/status?per_page=100", key="statuses")
    return _judge_checks(sha, runs, statuses)


def _more(found: list[str]) -> str:
    return f" (and {len(found) - 1} more)" if len(found) > 1 else ""


def _judge_checks(sha: str, runs: list[Any], statuses: list[Any]) -> api.Observation:
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
    on = f"on {api.short(sha)}"
    if red:
        return SEEN.contradicted(f"{red[0]}{_more(red)} {on}")
    if waiting:
        return SEEN.unknown(f"{waiting[0]}{_more(waiting)} {on}; not decided yet", waiting="CI")
    if not runs and not statuses:
        return SEEN.contradicted(f"CI never saw {api.short(sha)}: no check runs and no commit statuses")
    parts = [f"{len(runs)} check run{'s' if len(runs) != 1 else ''}"] if runs else []
    parts += [f"{len(statuses)} status{'es' if len(statuses) != 1 else ''}"] if statuses else []
    return SEEN.verified(f"{' and '.join(parts)} succeeded {on}")


@api.hookimpl
def continuity_verify(
    handles: Sequence[api.Handle], context: api.VerifyContext
) -> Mapping[api.Handle, api.Observation]:
    service = service_for_run()

    def check(handle: api.Handle) -> api.Observation:
        if handle.body.startswith("pr/"):
            return _pr(context, service, handle.body)
        return _checks(context, service, handle.body)

    return api.each(handles, context, check, SEEN.unknown)
