"""Gitea and Forgejo (one API, ``/api/v1``): pull request state, and commit statuses
(Gitea and Forgejo Actions report through them).

The host is part of the handle (``codeberg.org``; ``http://`` written out for a plain-HTTP
instance), or comes from ``git config continuity.<gitea|forgejo>.host`` when the handle
names only owner/repo. A token (GITEA_TOKEN; FORGEJO_TOKEN first for forgejo:) is sent only
to that configured host: a handle is data, possibly pulled from someone else's clone, and
must not be able to send a token to a host of its choosing.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from git_continuity import api

NAME = "gitea"
SEEN = api.Verifier(NAME, api.GIT_CONTINUITY_VERSION)
TOKENS = {"gitea": ("GITEA_TOKEN",), "forgejo": ("FORGEJO_TOKEN", "GITEA_TOKEN")}
SCHEMES = tuple(
    api.Scheme(
        name,
        f"pr/<host>/<owner>/<repo>#<n>[=open|merged|closed]: the PR is in that state on that {label} "
        f"(host from git config continuity.{name}.host when left out); "
        "status/<host>/<owner>/<repo>@<rev>[=success]: every commit status on rev succeeded",
        f"{name}:pr/{host}/owner/app#12=merged or {name}:status/{host}/owner/app@HEAD",
        live=False,
        network=True,
    )
    for name, label, host in (("gitea", "Gitea", "gitea.example.org"), ("forgejo", "Forgejo", "codeberg.org"))
)
HOST = re.compile(r"(?:https?://)?[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?")
NAME_PART = re.compile(r"(?!\.{1,2}$)[A-Za-z0-9_.-]{1,100}")
NUMBER = re.compile(r"[1-9][0-9]{0,9}")
PR_STATES = ("open", "merged", "closed")
GREEN = ("success", "warning")


def _forms(scheme: str) -> tuple[str, str]:
    return (
        f"{scheme}:pr/[<host>/]<owner>/<repo>#<number>[=open|merged|closed]",
        f"{scheme}:status/[<host>/]<owner>/<repo>@<rev>[=success]",
    )


@api.hookimpl
def continuity_schemes() -> Sequence[api.Scheme]:
    return SCHEMES


def configured_host(repo: api.Repository, scheme: str) -> str | None:
    value = repo.config_value(f"continuity.{scheme}.host")
    return _host(value.strip().rstrip("/")) if value else None


def _host(written: str) -> str:
    """``https://codeberg.org`` and ``codeberg.org`` are stored as ``codeberg.org``; plain
    HTTP keeps its ``http://``."""
    return written.removeprefix("https://")


def _split_path(repo: api.Repository, scheme: str, path: str, text: str, form: str) -> tuple[str, str, str]:
    scheme_prefix = ""
    for prefix in ("http://", "https://"):
        if path.startswith(prefix):
            scheme_prefix, path = prefix, path[len(prefix) :]
    parts = path.split("/")
    if len(parts) == 3:
        host = scheme_prefix + parts[0]
    elif len(parts) == 2 and not scheme_prefix:
        found = configured_host(repo, scheme)
        if found is None:
            raise api.UserError(
                f"handle {text!r} names no host and git config continuity.{scheme}.host is not set; the form is {form}"
            )
        host, parts = found, ["", *parts]
    else:
        raise api.UserError(f"handle {text!r} is not of the form {form}")
    api.require(HOST, host, "host", text, form)
    api.require(NAME_PART, parts[1], "owner", text, form)
    api.require(NAME_PART, parts[2], "repository", text, form)
    return _host(host), parts[1], parts[2]


def _resolve(repo: api.Repository, handle: api.Handle) -> api.Handle:
    text, body, scheme = handle.text, handle.body, handle.scheme
    pr_form, status_form = _forms(scheme)
    kind, sep, rest = body.partition("/")
    if kind == "pr" and sep:
        rest, eq, state = rest.partition("=")
        path, hash_, number = rest.rpartition("#")
        if not hash_:
            raise api.UserError(f"handle {text!r} names no PR number; the form is {pr_form}")
        host, owner, name = _split_path(repo, scheme, path, text, pr_form)
        api.require(NUMBER, number, "PR number", text, pr_form)
        expected = f"={api.expectation(state, PR_STATES, text)}" if eq else ""
        return api.Handle(scheme, f"pr/{host}/{owner}/{name}#{number}{expected}")
    if kind == "status" and sep:
        rest, eq, state = rest.partition("=")
        path, at, rev = rest.rpartition("@")
        if not at or not rev:
            raise api.UserError(f"handle {text!r} names no revision; the form is {status_form}")
        host, owner, name = _split_path(repo, scheme, path, text, status_form)
        expected = f"={api.expectation(state, ('success',), text)}" if eq else ""
        return api.Handle(scheme, f"status/{host}/{owner}/{name}@{api.revision(repo, rev, text)}{expected}")
    raise api.UserError(f"handle {text!r} is neither {pr_form} nor {status_form}")


@api.hookimpl
def continuity_resolve(handle: api.Handle, repo: api.Repository) -> api.Handle | None:
    return _resolve(repo, handle)


def _address(body: str) -> tuple[str, str, str, str]:
    """(host, owner/repo, what: '#12' or '@sha', expected state) from a stored handle body."""
    rest, _, expected = body.partition("/")[2].partition("=")
    scheme_prefix = "http://" if rest.startswith("http://") else ""
    rest = rest.removeprefix("http://")
    host, _, rest = rest.partition("/")
    cut = max(rest.rfind("#"), rest.rfind("@"))
    return scheme_prefix + host, rest[:cut], rest[cut:], expected


class Run:
    """One verification run: a Service per host, and tokens only for the configured host."""

    def __init__(self, ctx: api.VerifyContext) -> None:
        # Read in the calling thread: worker threads never touch the repository.
        self.trusted = {scheme: configured_host(ctx.repo, scheme) for scheme in TOKENS}
        self.services: dict[tuple[str, str], api.Service] = {}
        self.lock = threading.Lock()

    def service(self, scheme: str, host: str) -> api.Service:
        with self.lock:
            key = (scheme, host)
            if key not in self.services:
                label = "Forgejo" if scheme == "forgejo" else "Gitea"
                base = host if host.startswith("http://") else f"https://{host}"
                trusted = self.trusted[scheme] == host
                token = api.token_from_env(*TOKENS[scheme]) if trusted else None
                hint = (
                    f"set {' or '.join(TOKENS[scheme])}"
                    if trusted
                    else f"a token is sent only to the host in git config continuity.{scheme}.host"
                )
                self.services[key] = api.Service(f"{label} at {host}", f"{base}/api/v1", _auth(token), hint)
            return self.services[key]


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"token {token}"} if token else {}


def _pr(ctx: api.VerifyContext, service: api.Service, path: str, number: str, expected: str) -> api.Observation:
    pr = api.fetch_object(ctx, service, f"{service.base}/repos/{path}/pulls/{number}")
    actual, now = api.pull_request(service, number, pr)
    if not expected or expected == actual:
        return SEEN.verified(now)
    # Open and ready, expected merged: the next move is a reviewer's, not ours.
    awaiting = expected == "merged" and actual == "open" and not pr.get("draft")
    return SEEN.contradicted(now, waiting="review" if awaiting else None)


def _status(ctx: api.VerifyContext, service: api.Service, path: str, sha: str) -> api.Observation:
    url = f"{service.base}/repos/{path}/commits/{quote(sha)}/status?limit=50"
    statuses = api.fetch_pages(ctx, service, url, key="statuses")
    return _judge(sha, statuses)


def _judge(sha: str, statuses: list[Any]) -> api.Observation:
    # Gitea names each status's state `status`, not `state` as GitHub does.
    red = [s for s in statuses if s.get("status") not in (*GREEN, "pending")]
    waiting = [s for s in statuses if s.get("status") == "pending"]
    on = f"on {api.short(sha)}"
    if red:
        s = red[0]
        more = f" (and {len(red) - 1} more)" if len(red) > 1 else ""
        return SEEN.contradicted(f"status '{s.get('context', '?')}' is {s.get('status')}{more} {on}")
    if waiting:
        return SEEN.unknown(f"status '{waiting[0].get('context', '?')}' is pending {on}; not decided yet", waiting="CI")
    if not statuses:
        return SEEN.contradicted(f"CI never saw {api.short(sha)}: no commit statuses")
    return SEEN.verified(f"{len(statuses)} status{'es' if len(statuses) != 1 else ''} succeeded {on}")


@api.hookimpl
def continuity_verify(
    handles: Sequence[api.Handle], context: api.VerifyContext
) -> Mapping[api.Handle, api.Observation]:
    run = Run(context)

    def check(handle: api.Handle) -> api.Observation:
        host, path, what, expected = _address(handle.body)
        service = run.service(handle.scheme, host)
        if what.startswith("#"):
            return _pr(context, service, path, what[1:], expected)
        return _status(context, service, path, what[1:])

    return api.each(handles, context, check, SEEN.unknown)
