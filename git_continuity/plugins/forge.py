"""What every network verifier shares: asking a forge's API in parallel, and turning each
way a request can fail into an ``unknown`` with the reason.

Nothing here decides ``verified``: a verifier does, from a JSON answer it understood.
Every error (no answer, timeout, 401, 403, 404, 429, 5xx, a body that is not JSON) becomes
an Undecided carrying the reason, which the verifier reports as ``unknown``.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from git_continuity.errors import UserError
from git_continuity.model import Handle, Observation
from git_continuity.plugins import redact
from git_continuity.plugins.values import Repository, Undecided, VerifyContext, inside

# Requests in flight at once for one verifier: enough to hide a slow API's latency, far below
# GitHub's guidance of at most 100 concurrent requests.
WORKERS = 32
MAX_PAGES = 20  # a list longer than this many pages is not read to its end
HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class Service:
    """One forge instance's conventions, for one verification run."""

    name: str  # "GitHub", "GitLab", "Gitea": how the user calls it
    base: str  # API root without a trailing slash
    auth: Mapping[str, str]  # headers carrying the token; empty when there is none
    token_hint: str  # how to provide a token, said when the answer needed one
    accept: str = "application/json"
    # Once the forge says "rate limited", nothing more is sent to it in this run.
    blocked_until: datetime | None = None
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def has_token(self) -> bool:
        return bool(self.auth)


def cache_dir(ctx: VerifyContext) -> Path:
    """Conditional-request cache: local to this clone, never synced."""
    return inside(ctx.repo).local_dir / "cache" / "http"


def _until(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%H:%M UTC")


def rate_limited_until(status: int, headers: Mapping[str, str], now: datetime) -> datetime | None:
    """When a 403/429 answer is a rate limit, the moment it lifts.

    GitHub: ``retry-after`` (seconds, secondary limits) or ``x-ratelimit-remaining: 0`` with
    ``x-ratelimit-reset`` (epoch seconds). GitLab: ``Retry-After`` or ``RateLimit-Remaining:
    0`` with ``RateLimit-Reset``. Gitea: ``Retry-After``.
    """
    if status not in (403, 429):
        return None
    retry = headers.get("retry-after", "").strip()
    if retry.isdigit():
        return now + timedelta(seconds=int(retry))
    for prefix in ("x-ratelimit-", "ratelimit-"):
        if headers.get(prefix + "remaining", "").strip() == "0":
            reset = headers.get(prefix + "reset", "").strip()
            if reset.isdigit():
                return datetime.fromtimestamp(int(reset), timezone.utc)
            return now + timedelta(minutes=1)
    if status == 429:
        return now + timedelta(minutes=1)  # a 429 without a hint: back off anyway
    return None


def fetch(ctx: VerifyContext, service: Service, url: str) -> tuple[Any, Mapping[str, str]]:
    """GET url from the API and decode its JSON, or raise Undecided with the reason."""
    from git_continuity.plugins import http

    with service._lock:
        blocked = service.blocked_until
        service.requests += 1
    if blocked is not None and blocked > ctx.now:
        raise Undecided(f"rate limited until {_until(blocked)} ({service.name} said so earlier in this run)")
    headers = {"Accept": service.accept, **service.auth}
    try:
        answer = http.get(url, headers=headers, timeout=ctx.timeout, cache_dir=cache_dir(ctx))
    except http.NoAnswer as error:
        raise Undecided(str(error)) from None
    status = answer.status
    limited = rate_limited_until(status, answer.headers, ctx.now)
    if limited is not None:
        with service._lock:
            service.blocked_until = max(limited, service.blocked_until or limited)
        raise Undecided(f"rate limited until {_until(limited)} ({service.name} answered {status})")
    no_token = "" if service.has_token else f"; no token: {service.token_hint}"
    if status == 401:
        said = "the token was refused (401)" if service.has_token else "it needs a token (401)"
        raise Undecided(f"{service.name} said {said}{no_token}")
    if status == 403:
        said = "the token lacks access (403)" if service.has_token else "access denied (403)"
        raise Undecided(f"{service.name} said {said}{no_token}")
    if status == 404:
        raise Undecided(f"not found ({service.name} answered 404{no_token or ': or this token cannot see it'})")
    if status >= 500:
        raise Undecided(f"{service.name} failed to answer ({status}); try again later")
    if status != 200:
        raise Undecided(f"{service.name} answered {status}")
    try:
        return json.loads(answer.body), answer.headers
    except ValueError:
        kind = answer.headers.get("content-type", "no content type").split(";")[0]
        raise Undecided(f"{service.name}'s answer is not JSON ({kind}); is {service.base} its API address?") from None


def fetch_object(ctx: VerifyContext, service: Service, url: str) -> dict[str, Any]:
    data, _ = fetch(ctx, service, url)
    if not isinstance(data, dict):
        raise Undecided(f"{service.name}'s answer is not the JSON object its API describes")
    return data


def fetch_pages(ctx: VerifyContext, service: Service, url: str, key: str | None = None) -> list[Any]:
    """Every item of a paged list, following ``Link: rel="next"`` (and GitLab's
    ``X-Next-Page``). ``key`` names the list inside an object answer (GitHub's
    ``check_runs``); without it the answer is the list itself."""
    items: list[Any] = []
    next_url: str | None = url
    for _ in range(MAX_PAGES):
        if next_url is None:
            return items
        data, headers = fetch(ctx, service, next_url)
        page = data.get(key) if key is not None and isinstance(data, dict) else data
        if not isinstance(page, list):
            raise Undecided(f"{service.name}'s answer is not the list its API describes")
        items.extend(page)
        next_url = _next_page(next_url, headers)
    raise Undecided(f"{service.name} has more than {MAX_PAGES} pages of answers; not read to the end")


def _next_page(url: str, headers: Mapping[str, str]) -> str | None:
    from git_continuity.plugins import http

    link = http.next_link(headers)
    if link is not None:
        return link
    following = headers.get("x-next-page", "").strip()
    if following.isdigit():
        parts = urlsplit(url)
        query = re.sub(r"(^|&)page=\d+", "", parts.query).lstrip("&")
        return parts._replace(query=f"{query}&page={following}" if query else f"page={following}").geturl()
    return None


def each(
    handles: Sequence[Handle],
    ctx: VerifyContext,
    check: Callable[[Handle], Observation],
    unknown: Callable[[str], Observation],
) -> dict[Handle, Observation]:
    """``check`` every handle in a thread pool. An Undecided, or any other exception, is
    that handle's ``unknown`` with the reason; the others go on. What each one observed is
    redacted (``redact.tokens``) before it is stored or shown: it is made of a server's words."""
    from concurrent.futures import ThreadPoolExecutor

    def guarded(handle: Handle) -> Observation:
        try:
            seen = check(handle)
        except Undecided as reason:
            seen = unknown(str(reason))
        except Exception as error:  # a bug must not sink the verifications beside it
            seen = unknown(f"verifier failed: {error!r}")
        finally:
            ctx.advance(handle)
        return replace(seen, observed=redact.tokens(seen.observed))

    if not handles:
        return {}
    with ThreadPoolExecutor(max_workers=min(WORKERS, len(handles))) as pool:
        return dict(zip(handles, pool.map(guarded, handles), strict=True))


# -- recording: every part of a handle checked before anything is written -------------------


def require(pattern: re.Pattern[str], value: str, what: str, handle: str, form: str) -> str:
    if not pattern.fullmatch(value):
        raise UserError(f"{what} {value!r} in {handle!r} is not valid; the form is {form}")
    return value


def revision(repo: Repository, rev: str, handle: str) -> str:
    """A revision as a full commit id. A 40-hex id this clone lacks is kept as written
    (the forge may know a commit that was never fetched here)."""
    if HEX40.fullmatch(rev):
        return rev
    try:
        return repo.resolve_commit(rev)
    except UserError as error:
        raise UserError(f"{error} (in {handle!r}; give a revision this clone has, or a full commit id)") from None


def ref_name_fault(name: str) -> str | None:
    """Why ``name`` is not a valid ref name by git's rules (git check-ref-format, one level
    allowed), or None: a branch or tag named in a handle. Written out because a verifier
    runs no git of its own."""
    for bad, why in ((" ", "a space"), ("..", "'..'"), ("@{", "'@{'"), ("\\", "'\\'"), ("//", "'//'")):
        if bad in name:
            return f"it has {why}"
    for char in "~^:?*[":
        if char in name:
            return f"it has {char!r}"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "it has a control character"
    if not name:
        return "it is empty"
    if name == "@":
        return "it is '@'"
    if name.startswith("-"):
        return "it starts with '-'"
    if name.startswith("/") or name.endswith("/"):
        return "it starts or ends with '/'"
    if name.endswith("."):
        return "it ends with '.'"
    parts = name.split("/")
    if any(part.startswith(".") for part in parts):
        return "a part starts with '.'"
    if any(part.endswith(".lock") for part in parts):
        return "a part ends in .lock"
    return None


def expectation(value: str, allowed: Iterable[str], handle: str) -> str:
    choices = tuple(allowed)
    if value not in choices:
        raise UserError(f"expected state {value!r} in {handle!r} is not one of: {', '.join(choices)}")
    return value


def short(oid: str) -> str:
    return oid[:7]


def minute(stamp: str | None) -> str:
    """A forge's timestamp as ``2026-11-28T10:02Z`` (what a person compares)."""
    if not stamp:
        return "an unknown time"
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def pull_request(service: Service, number: str, pr: dict[str, Any]) -> tuple[str, str]:
    """A pull request as GitHub and Gitea/Forgejo describe it (the same fields): its state
    (open, merged or closed) and a sentence saying what was observed."""
    state = pr.get("state")
    if pr.get("merged") is True or pr.get("merged_at"):
        by = (pr.get("merged_by") or {}).get("login")
        sha = pr.get("merge_commit_sha")
        return "merged", (
            f"PR #{number} was merged at {minute(pr.get('merged_at'))}"
            + (f" by {by}" if by else "")
            + (f" (merge commit {short(sha)})" if sha else "")
        )
    if state == "closed":
        return "closed", f"PR #{number} was closed at {minute(pr.get('closed_at'))} without merging"
    if state == "open":
        head = (pr.get("head") or {}).get("sha")
        draft = " (draft)" if pr.get("draft") else ""
        return "open", f"PR #{number} is open{draft}" + (f", head {short(head)}" if head else "")
    raise Undecided(f"{service.name} gave PR #{number} a state this verifier does not know: {state!r}")
