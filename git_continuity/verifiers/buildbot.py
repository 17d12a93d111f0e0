"""Buildbot: the builds of a revision, through its REST API (``/api/v2``).

A build is matched to the revision by its ``got_revision`` property, which Buildbot's
source steps set to the commit they checked out. The newest matching build of each builder
decides. No token is sent: Buildbot's API is read anonymously.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from git_continuity import api

NAME = "buildbot"
SEEN = api.Verifier(NAME, api.GIT_CONTINUITY_VERSION)
SCHEMES = (
    api.Scheme(
        "buildbot",
        "<url>[#<builder>]@<rev>[=success]: the newest build of rev on each builder (or on the one named) succeeded",
        "buildbot:https://ci.example.org/buildbot#tests@HEAD",
        live=False,
        network=True,
    ),
)
FORM = "buildbot:<http(s) address of the Buildbot>[#<builder>]@<rev>[=success]"
BUILDER = re.compile(r"[A-Za-z0-9_.+-]{1,100}")
PATH = re.compile(r"(/[A-Za-z0-9_.~-]+)*/?")
RECENT = 200  # builds read per builder, newest first
RESULTS = {
    0: "succeeded",
    1: "succeeded with warnings",
    2: "failed",
    3: "was skipped",
    4: "ended in an exception",
    5: "was retried",
    6: "was cancelled",
}
GREEN = (0, 1)


@api.hookimpl
def continuity_schemes() -> Sequence[api.Scheme]:
    return SCHEMES


def _base(url: str, text: str) -> str:
    parts = urlsplit(url)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.username is not None
        or parts.query
        or not PATH.fullmatch(parts.path)
    ):
        raise api.UserError(
            f"address {url!r} in {text!r} is not an http(s) address of a Buildbot (no user, query or "
            f"fragment); the form is {FORM}"
        )
    try:
        parts.port  # noqa: B018 (raises on a port out of range)
    except ValueError:
        raise api.UserError(f"address {url!r} in {text!r} has an invalid port; the form is {FORM}") from None
    return url.rstrip("/")


def _resolve(repo: api.Repository, handle: api.Handle) -> api.Handle:
    text, body = handle.text, handle.body
    body, eq, state = body.partition("=")  # an address here has no query, so '=' starts the expectation
    address, at, rev = body.rpartition("@")
    if not at or not rev or not address:
        raise api.UserError(f"handle {text!r} names no revision; the form is {FORM}")
    url, hash_, builder = address.partition("#")
    base = _base(url, text)
    if hash_:
        api.require(BUILDER, builder, "builder", text, FORM)
    expected = f"={api.expectation(state, ('success',), text)}" if eq else ""
    named = f"#{builder}" if hash_ else ""
    return api.Handle("buildbot", f"{base}{named}@{api.revision(repo, rev, text)}{expected}")


@api.hookimpl
def continuity_resolve(handle: api.Handle, repo: api.Repository) -> api.Handle | None:
    return _resolve(repo, handle)


def _revision_of(build: Mapping[str, Any]) -> set[str]:
    """``got_revision`` is [value, source]; with several codebases the value is a mapping
    of codebase to revision."""
    prop = (build.get("properties") or {}).get("got_revision")
    value = prop[0] if isinstance(prop, list) and prop else None
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {v for v in value.values() if isinstance(v, str)}
    return set()


def _check(ctx: api.VerifyContext, service: api.Service, body: str) -> api.Observation:
    body = body.removesuffix("=success")
    address, _, sha = body.rpartition("@")
    _, _, builder = address.partition("#")
    builders = api.fetch_object(ctx, service, f"{service.base}/api/v2/builders")
    names = {b.get("builderid"): b.get("name") for b in builders.get("builders", []) if isinstance(b, dict)}
    if builder:
        ids = [i for i, n in names.items() if n == builder]
        if not ids:
            raise api.Undecided(f"not found: {service.name} has no builder '{builder}'")
        url = f"{service.base}/api/v2/builders/{ids[0]}/builds"
    else:
        url = f"{service.base}/api/v2/builds"
    found = api.fetch_object(ctx, service, f"{url}?property=got_revision&order=-buildid&limit={RECENT}")
    builds = [b for b in found.get("builds", []) if isinstance(b, dict) and sha in _revision_of(b)]
    latest: dict[Any, dict[str, Any]] = {}
    for build in builds:
        key = build.get("builderid")
        if key not in latest or build.get("buildid", 0) > latest[key].get("buildid", 0):
            latest[key] = build
    return _judge(sha, builder, [(names.get(k, f"builder {k}"), b) for k, b in latest.items()])


def _judge(sha: str, builder: str, latest: list[tuple[Any, dict[str, Any]]]) -> api.Observation:
    on = f"on {api.short(sha)}"
    if not latest:
        where = f"builder '{builder}'" if builder else "Buildbot"
        return SEEN.contradicted(f"CI never saw {api.short(sha)}: {where} has no build of it")
    described = [(f"build {name} #{b.get('number')}", b) for name, b in sorted(latest, key=lambda nb: str(nb[0]))]
    running = [(d, b) for d, b in described if not b.get("complete")]
    red = [(d, b) for d, b in described if b.get("complete") and b.get("results") not in GREEN]
    if red:
        d, b = red[0]
        code = b.get("results")
        said = RESULTS.get(code, f"ended with result {code}") if isinstance(code, int) else "ended without a result"
        return SEEN.contradicted(f"{d} {said} {on}")
    if running:
        return SEEN.unknown(f"{running[0][0]} is still running {on}; not decided yet", waiting="CI")
    shown = ", ".join(f"{d} {RESULTS[b['results']]}" for d, b in described)
    return SEEN.verified(f"{shown} {on}")


@api.hookimpl
def continuity_verify(
    handles: Sequence[api.Handle], context: api.VerifyContext
) -> Mapping[api.Handle, api.Observation]:
    services: dict[str, api.Service] = {}
    for h in handles:
        base = h.body.removesuffix("=success").rpartition("@")[0].partition("#")[0]
        services.setdefault(base, api.Service(f"Buildbot at {urlsplit(base).netloc}", base, {}, "Buildbot needs none"))

    def check(handle: api.Handle) -> api.Observation:
        base = handle.body.removesuffix("=success").rpartition("@")[0].partition("#")[0]
        return _check(context, services[base], handle.body)

    return api.each(handles, context, check, SEEN.unknown)
