"""GitLab: merge request state, and the pipelines of a commit.

API root: ``CI_API_V4_URL`` as GitLab CI sets it (default https://gitlab.com/api/v4).
Token: GITLAB_TOKEN (sent as PRIVATE-TOKEN). Without a token public projects still answer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from git_continuity import api

NAME = "gitlab"
SEEN = api.Verifier(NAME, api.GIT_CONTINUITY_VERSION)
SCHEMES = (
    api.Scheme(
        "gitlab",
        "mr/<project>!<iid>[=opened|merged|closed|locked]: the merge request is in that state; "
        "pipeline/<project>@<rev>[=success]: the latest pipeline of rev on each ref succeeded",
        "gitlab:mr/group/app!42=merged or gitlab:pipeline/group/app@HEAD",
        live=False,
        network=True,
    ),
)
MR_FORM = "gitlab:mr/<group>/<project>!<iid>[=opened|merged|closed|locked]"
PIPELINE_FORM = "gitlab:pipeline/<group>/<project>@<rev>[=success]"
# A project path: namespace segments and the project, or a numeric project id.
PROJECT = re.compile(r"[0-9]+|[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)+")
NUMBER = re.compile(r"[1-9][0-9]{0,9}")
MR_STATES = ("opened", "merged", "closed", "locked")
RED = ("failed", "canceled", "canceling")
QUEUED = ("created", "waiting_for_resource", "preparing", "pending", "running", "scheduled")


@api.hookimpl
def continuity_schemes() -> Sequence[api.Scheme]:
    return SCHEMES


def _project(path: str, text: str, form: str) -> str:
    api.require(PROJECT, path, "project", text, form)
    if any(part.endswith((".git", ".atom")) or ".." in part for part in path.split("/")):
        raise api.UserError(f"project {path!r} in {text!r} is not valid; the form is {form}")
    return path


def _resolve(repo: api.Repository, handle: api.Handle) -> api.Handle:
    text, body = handle.text, handle.body
    kind, sep, rest = body.partition("/")
    if kind == "mr" and sep:
        rest, eq, state = rest.partition("=")
        path, bang, iid = rest.rpartition("!")
        if not bang:
            raise api.UserError(f"handle {text!r} names no merge request iid; the form is {MR_FORM}")
        _project(path, text, MR_FORM)
        api.require(NUMBER, iid, "merge request iid", text, MR_FORM)
        expected = f"={api.expectation(state, MR_STATES, text)}" if eq else ""
        return api.Handle("gitlab", f"mr/{path}!{iid}{expected}")
    if kind == "pipeline" and sep:
        rest, eq, state = rest.partition("=")
        path, at, rev = rest.rpartition("@")
        if not at or not rev:
            raise api.UserError(f"handle {text!r} names no revision; the form is {PIPELINE_FORM}")
        _project(path, text, PIPELINE_FORM)
        expected = f"={api.expectation(state, ('success',), text)}" if eq else ""
        return api.Handle("gitlab", f"pipeline/{path}@{api.revision(repo, rev, text)}{expected}")
    raise api.UserError(f"handle {text!r} is neither {MR_FORM} nor {PIPELINE_FORM}")


@api.hookimpl
def continuity_resolve(handle: api.Handle, repo: api.Repository) -> api.Handle | None:
    return _resolve(repo, handle)


def service_for_run() -> api.Service:
    base = os.environ.get("CI_API_V4_URL", "").strip().rstrip("/") or "https://gitlab.com/api/v4"
    token = api.token_from_env("GITLAB_TOKEN")
    return api.Service("GitLab", base, {"PRIVATE-TOKEN": token} if token else {}, "set GITLAB_TOKEN")


def _mr(ctx: api.VerifyContext, service: api.Service, body: str) -> api.Observation:
    rest, _, expected = body.removeprefix("mr/").partition("=")
    path, _, iid = rest.rpartition("!")
    mr = api.fetch_object(ctx, service, f"{service.base}/projects/{quote(path, safe='')}/merge_requests/{iid}")
    state = mr.get("state")
    if state == "merged":
        user = mr.get("merge_user") or mr.get("merged_by") or {}
        sha = mr.get("merge_commit_sha") or mr.get("squash_commit_sha")
        now = (
            f"MR !{iid} was merged at {api.minute(mr.get('merged_at'))}"
            + (f" by {user['username']}" if isinstance(user, dict) and user.get("username") else "")
            + (f" (merge commit {api.short(sha)})" if sha else "")
        )
    elif state == "closed":
        now = f"MR !{iid} was closed at {api.minute(mr.get('closed_at'))} without merging"
    elif state in ("opened", "locked"):
        head = mr.get("sha")
        now = f"MR !{iid} is {state}" + (f", head {api.short(head)}" if head else "")
    else:
        raise api.Undecided(f"GitLab gave MR !{iid} a state this verifier does not know: {state!r}")
    if not expected or expected == state:
        return SEEN.verified(now)
    # Open and ready, expected merged: the next move is a reviewer's, not ours.
    awaiting = expected == "merged" and state in ("opened", "locked") and not mr.get("draft")
    return SEEN.contradicted(now, waiting="review" if awaiting else None)


def _pipeline(ctx: api.VerifyContext, service: api.Service, body: str) -> api.Observation:
    rest = body.removeprefix("pipeline/").partition("=")[0]
    path, _, sha = rest.rpartition("@")
    url = f"{service.base}/projects/{quote(path, safe='')}/pipelines?sha={sha}&per_page=100"
    return _judge(sha, api.fetch_pages(ctx, service, url))


def _judge(sha: str, pipelines: list[Any]) -> api.Observation:
    """The newest pipeline of the commit on each ref decides (a retried pipeline replaces
    the failed one; a branch and a merge request pipeline are both CI on that commit)."""
    latest: dict[str, dict[str, Any]] = {}
    for p in pipelines:
        if isinstance(p, dict) and p.get("sha") == sha and isinstance(p.get("id"), int):
            ref = str(p.get("ref"))
            if ref not in latest or p["id"] > latest[ref]["id"]:
                latest[ref] = p
    on = f"on {api.short(sha)}"
    if not latest:
        return SEEN.contradicted(f"CI never saw {api.short(sha)}: no pipeline for it")
    ordered = sorted(latest.values(), key=lambda p: p["id"], reverse=True)
    red = [p for p in ordered if p.get("status") in RED]
    waiting = [p for p in ordered if p.get("status") != "success" and p not in red]
    if red:
        p = red[0]
        return SEEN.contradicted(f"pipeline #{p['id']} ({p.get('ref')}) {p.get('status')} {on}")
    if waiting:
        p = waiting[0]
        pending = all(w.get("status") in QUEUED for w in waiting)  # manual or skipped: nobody will run it
        return SEEN.unknown(
            f"pipeline #{p['id']} ({p.get('ref')}) is {p.get('status')} {on}; not decided yet",
            waiting="CI" if pending else None,
        )
    ids = ", ".join(f"#{p['id']}" for p in ordered)
    return SEEN.verified(f"pipeline{'s' if len(ordered) > 1 else ''} {ids} succeeded {on}")


@api.hookimpl
def continuity_verify(
    handles: Sequence[api.Handle], context: api.VerifyContext
) -> Mapping[api.Handle, api.Observation]:
    service = service_for_run()

    def check(handle: api.Handle) -> api.Observation:
        if handle.body.startswith("mr/"):
            return _mr(context, service, handle.body)
        return _pipeline(context, service, handle.body)

    return api.each(handles, context, check, SEEN.unknown)
