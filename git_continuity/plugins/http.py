"""HTTP GET for the network verifiers: per-request timeouts, conditional requests against a
local cache, and no credential ever written down or sent to another host.

The standard library client does all that is needed here (GET, headers, timeouts, TLS with
the system's certificates, the user's proxy settings), so no HTTP package is added.

Cache: ``.git/continuity/cache/http/<sha256 of the URL>.json`` keeps the ETag (or
Last-Modified), the body and the few headers a verifier reads back (pagination). Request
headers, and so tokens, are never stored. A 304 answer is served from it; GitHub does not
count those against the rate limit.

An answer may echo back the token it was sent (a hostile or broken server): the token is
masked in its body and headers before anything reads or caches them, so it reaches neither
the cache, nor evidence, nor the screen.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from git_continuity import __version__, atomic
from git_continuity.plugins import redact

USER_AGENT = f"git-continuity/{__version__}"
# Headers a verifier may read from a cached answer; rate-limit headers are always fresh.
KEPT_HEADERS = ("content-type", "link", "x-next-page", "x-total", "x-total-count", "x-total-pages")
LOOPBACK = ("127.0.0.1", "localhost", "::1")
AUTH_HEADERS = ("authorization", "private-token", "job-token")


class NoAnswer(Exception):
    """No HTTP answer at all: the host refused, did not answer in time, or TLS failed."""


@dataclass(frozen=True)
class Response:
    url: str
    status: int
    headers: Mapping[str, str]  # names in lower case
    body: bytes


def get(url: str, *, headers: Mapping[str, str], timeout: float, cache_dir: Path | None) -> Response:
    """GET url. Any HTTP status is returned as a Response (the caller decides what a 404
    means); NoAnswer when there is none. With ``cache_dir``, the request is conditional on
    the cached copy and a 304 returns that copy."""
    cached = _read_cache(cache_dir, url)
    sent = {"User-Agent": USER_AGENT, **headers}
    if cached is not None:
        if cached.get("etag"):
            sent["If-None-Match"] = cached["etag"]
        elif cached.get("last_modified"):
            sent["If-Modified-Since"] = cached["last_modified"]
    status, answer_headers, body = _send(url, sent, timeout)
    secrets = credentials(headers)
    if secrets:
        body = redact.scrub_bytes(body, secrets)
        answer_headers = {k: redact.scrub(v, secrets) for k, v in answer_headers.items()}
    if status == 304 and cached is not None:
        kept = {**cached["headers"], **answer_headers}
        return Response(url, int(cached["status"]), kept, base64.b64decode(cached["body"]))
    if status == 200 and cache_dir is not None and ("etag" in answer_headers or "last-modified" in answer_headers):
        _write_cache(cache_dir, url, status, answer_headers, body)
    return Response(url, status, answer_headers, body)


def credentials(headers: Mapping[str, str]) -> list[str]:
    """The secrets a request carries: each credential header's value, and the credential
    alone (``Bearer abc`` and ``abc``), longest first so that a whole value is masked whole."""
    found: set[str] = set()
    for name, value in headers.items():
        if name.lower() in AUTH_HEADERS and value.strip():
            found.add(value.strip())
            credential = value.strip().partition(" ")[2].strip()
            if credential:
                found.add(credential)
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def _send(url: str, headers: Mapping[str, str], timeout: float) -> tuple[int, dict[str, str], bytes]:
    import socket
    import urllib.error
    import urllib.request

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NoAnswer(f"{url} is not an http(s) address")
    opener = _opener(parts.hostname in LOOPBACK)
    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    where = parts.netloc
    try:
        with opener.open(request, timeout=timeout) as answer:
            return answer.status, _lower(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, _lower(error.headers), error.read()
    except TimeoutError:
        raise NoAnswer(f"timeout: {where} did not answer within {timeout:g}s") from None
    except urllib.error.URLError as error:
        reason = error.reason
        if isinstance(reason, TimeoutError):
            raise NoAnswer(f"timeout: {where} did not answer within {timeout:g}s") from None
        if isinstance(reason, ConnectionRefusedError):
            raise NoAnswer(f"no answer from {where} (connection refused)") from None
        if isinstance(reason, socket.gaierror):
            raise NoAnswer(f"no answer from {where} (host name not found)") from None
        raise NoAnswer(f"no answer from {where} ({reason})") from None
    except (ConnectionError, OSError) as error:
        raise NoAnswer(f"no answer from {where} ({error.__class__.__name__})") from None


def _lower(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()} if headers is not None else {}


@functools.cache
def _opener(loopback: bool) -> Any:
    """An opener (urllib is imported here: ~20 ms that status never needs to pay).

    Loopback never goes through a proxy (a test or a local CI server); elsewhere the user's
    proxy settings apply, as for any other program. Redirects are followed, but a token is
    never carried to another host: urllib would copy the Authorization header onto any
    redirect.
    """
    import urllib.request

    class SameHostRedirects(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
            new = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None and urlsplit(newurl).netloc != urlsplit(req.full_url).netloc:
                for name in list(new.headers):
                    if name.lower() in AUTH_HEADERS:
                        del new.headers[name]
            return new

    return urllib.request.build_opener(urllib.request.ProxyHandler({} if loopback else None), SameHostRedirects())


# -- the conditional-request cache ----------------------------------------------------------


def _cache_file(cache_dir: Path, url: str) -> Path:
    return cache_dir / (hashlib.sha256(url.encode()).hexdigest() + ".json")


def _read_cache(cache_dir: Path | None, url: str) -> dict[str, Any] | None:
    if cache_dir is None:
        return None
    try:
        data = json.loads(_cache_file(cache_dir, url).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("url") != url or not isinstance(data.get("headers"), dict):
        return None
    return data


def _write_cache(cache_dir: Path, url: str, status: int, headers: Mapping[str, str], body: bytes) -> None:
    entry = {
        "url": url,
        "status": status,
        "etag": headers.get("etag"),
        "last_modified": headers.get("last-modified"),
        "headers": {k: v for k, v in headers.items() if k in KEPT_HEADERS},
        "body": base64.b64encode(body).decode(),
        "stored_at": int(time.time()),
    }
    target = _cache_file(cache_dir, url)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        atomic.write(target, json.dumps(entry))
    except OSError:
        pass  # a cache that cannot be written only costs a full answer next time


def next_link(headers: Mapping[str, str]) -> str | None:
    """The ``rel="next"`` address of an RFC 8288 Link header (GitHub, GitLab and Gitea page
    their lists this way)."""
    for part in headers.get("link", "").split(","):
        target, _, params = part.partition(";")
        target = target.strip()
        if target.startswith("<") and target.endswith(">") and 'rel="next"' in params.replace(" ", ""):
            return target[1:-1]
    return None
