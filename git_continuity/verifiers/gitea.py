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

from git_continuity import __version__, forge
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.plugin import Handle, Observation, Repo, Scheme, VerifyContext, hookimpl

NAME = "gitea"
TOKENS = {"gitea": ("GITEA_TOKEN",), "forgejo": ("FORGEJO_TOKEN", "GITEA_TOKEN")}
SCHEMES = tuple(
    Scheme(
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


@hookimpl
def continuity_schemes() -> Sequence[Scheme]:
    return SCHEMES


def configured_host(repo: Repo, scheme: str) -> str | None:
    value = git.config_value(repo, f"continuity.{scheme}.host")
    return _host(value.strip().rstrip("/")) if value else None


def _host(written: str) -> str:
    """``https://codeberg.org`` and ``codeberg.org`` are stored as ``codeberg.org``; plain
    HTTP keeps its ``http://``."""
    return written.removeprefix("https://")


def _split_path(repo: Repo, scheme: str, path: str, text: str, form: str) -> tuple[str, str, str]:
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
            raise UserError(
                f"handle {text!r} names no host and git config continuity.{scheme}.host is not set; the form is {form}"
            )
        host, parts = found, ["", *parts]
    else:
        raise UserError(f"handle {text!r} is not of the form {form}")
    forge.require(HOST, host, "host", text, form)
    forge.require(NAME_PART, parts[1], "owner", text, form)
    forge.require(NAME_PART, parts[2], "repository", text, form)
    return _host(host), parts[1], parts[2]


def _resolve(repo: Repo, handle: Handle) -> Handle:
    text, body, scheme = handle.text, handle.body, handle.scheme
    pr_form, status_form = _forms(scheme)
    kind, sep, rest = body.partition("/")
    if kind == "pr" and sep:
        rest, eq, state = rest.partition("=")
        path, hash_, number = rest.rpartition("#")
        if not hash_:
            raise UserError(f"handle {text!r} names no PR number; the form is {pr_form}")
        host, owner, name = _split_path(repo, scheme, path, text, pr_form)
        forge.require(NUMBER, number, "PR number", text, pr_form)
        expected = f"={forge.expectation(state, PR_STATES, text)}" if eq else ""
        return Handle(scheme, f"pr/{host}/{owner}/{name}#{number}{expected}")
    if kind == "status" and sep:
        rest, eq, state = rest.partition("=")
        path, at, rev = rest.rpartition("@")
        if not at or not rev:
            raise UserError(f"handle {text!r} names no revision; the form is {status_form}")
        host, owner, name = _split_path(repo, scheme, path, text, status_form)
        expected = f"={forge.expectation(state, ('success',), text)}" if eq else ""
        return Handle(scheme, f"status/{host}/{owner}/{name}@{forge.revision(repo, rev, text)}{expected}")
    raise UserError(f"handle {text!r} is neither {pr_form} nor {status_form}")


@hookimpl
def continuity_resolve(handle: Handle, repo: Repo) -> Handle | None:
    return _resolve(repo, handle) if handle.scheme in TOKENS else None


def _seen(result: str, observed: str) -> Observation:
    return Observation(result, observed, NAME, __version__)  # type: ignore[arg-type]


def _address(body: str) -> tuple[str, str, str, str]:
    """(host, owner/repo, what: '#12' or '@sha', expected state) from a stored handle body."""
    rest, _, expected = body.partition("/")[2].partition("=")
    scheme_prefix = "http://" if rest.startswith("http://") else ""
    rest = rest.removeprefix("http://")
    host, _, rest = rest.partition("/")
    cut = max(rest.rfind("#"), rest.rfind("@"))
    return scheme_prefix + host, rest[:cut], rest[cut:], expected


class Run:
    """One verification run: an Api per host, and tokens only for the configured host."""

    def __init__(self, ctx: VerifyContext) -> None:
        # Read in the calling thread: worker threads never touch the repository.
        self.trusted = {scheme: configured_host(ctx.repo, scheme) for scheme in TOKENS}
        self.apis: dict[tuple[str, str], forge.Api] = {}
        self.lock = threading.Lock()

    def api(self, scheme: str, host: str) -> forge.Api:
        from git_continuity import tokens

        with self.lock:
            key = (scheme, host)
            if key not in self.apis:
                label = "Forgejo" if scheme == "forgejo" else "Gitea"
                base = host if host.startswith("http://") else f"https://{host}"
                trusted = self.trusted[scheme] == host
                token = tokens.from_env(*TOKENS[scheme]) if trusted else None
                hint = (
                    f"set {' or '.join(TOKENS[scheme])}"
                    if trusted
                    else f"a token is sent only to the host in git config continuity.{scheme}.host"
                )
                self.apis[key] = forge.Api(f"{label} at {host}", f"{base}/api/v1", _auth(token), hint)
            return self.apis[key]


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"token {token}"} if token else {}


def _pr(ctx: VerifyContext, api: forge.Api, path: str, number: str, expected: str) -> Observation:
    pr = forge.fetch_object(ctx, api, f"{api.base}/repos/{path}/pulls/{number}")
    actual, now = forge.pull_request(api, number, pr)
    return _seen("verified" if not expected or expected == actual else "contradicted", now)


def _status(ctx: VerifyContext, api: forge.Api, path: str, sha: str) -> Observation:
    url = f"{api.base}/repos/{path}/commits/{quote(sha)}/status?limit=50"
    statuses = forge.fetch_pages(ctx, api, url, key="statuses")
    return _judge(sha, statuses)


def _judge(sha: str, statuses: list[Any]) -> Observation:
    # Gitea names each status's state `status`, not `state` as GitHub does.
    red = [s for s in statuses if s.get("status") not in (*GREEN, "pending")]
    waiting = [s for s in statuses if s.get("status") == "pending"]
    on = f"on {forge.short(sha)}"
    if red:
        s = red[0]
        more = f" (and {len(red) - 1} more)" if len(red) > 1 else ""
        return _seen("contradicted", f"status '{s.get('context', '?')}' is {s.get('status')}{more} {on}")
    if waiting:
        return _seen("unknown", f"status '{waiting[0].get('context', '?')}' is pending {on}; not decided yet")
    if not statuses:
        return _seen("contradicted", f"CI never saw {forge.short(sha)}: no commit statuses")
    return _seen("verified", f"{len(statuses)} status{'es' if len(statuses) != 1 else ''} succeeded {on}")


@hookimpl
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation]:
    run = Run(context)

    def check(handle: Handle) -> Observation:
        host, path, what, expected = _address(handle.body)
        api = run.api(handle.scheme, host)
        if what.startswith("#"):
            return _pr(context, api, path, what[1:], expected)
        return _status(context, api, path, what[1:])

    mine = [h for h in handles if h.scheme in TOKENS]
    return forge.each(mine, context, check, lambda reason: _seen("unknown", reason))
