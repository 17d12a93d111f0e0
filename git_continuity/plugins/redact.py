"""Keep secrets out of captured output before it is stored or shown: a command's output
(``cmd:``, ``ci run``) and every answer of a forge or CI server, whose text may echo back
the very token it was sent (issue 10)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

# Pattern texts, compiled on first use by re's own cache: most processes that import this
# module (every write loads the verifiers) never mask anything.
SECRET_NAMES = r"(?i)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIAL)"
# What a token looks like wherever it stands.
SHAPES = (
    r"\bgh[pousr]_[A-Za-z0-9]{20,}\b",  # GitHub tokens
    r"\bgithub_pat_[A-Za-z0-9_]{20,}\b",
    r"\bglpat-[A-Za-z0-9_-]{20,}\b",  # GitLab personal access tokens
    r"\bAKIA[0-9A-Z]{16}\b",  # AWS access key ids
)
PATTERNS = (
    *SHAPES,
    r"(?i)(authorization:\s*(?:bearer|token|basic)\s+)\S+",
    r"(?i)(https?://[^/\s:@]+:)[^@\s]+(@)",  # passwords in URLs
    r"(?i)(\b(?:password|passwd|pwd|secret|token|api[_-]?key)\s*[=:]\s*)[^\s'\"]+",  # key=value
)
MASK = "[redacted]"


def redact(text: str, env: dict[str, str] | None = None) -> str:
    """text with secret-looking values and the values of secret-named variables masked."""
    return _masked(text, env, PATTERNS)


def tokens(text: str, env: dict[str, str] | None = None) -> str:
    """text with tokens masked (the values of secret-named variables, and what has a token's
    shape), but not what merely follows ``token:``: for sentences made of a server's words
    and ours ("no token: set GH_TOKEN")."""
    return _masked(text, env, SHAPES)


def _masked(text: str, env: dict[str, str] | None, patterns: Sequence[str]) -> str:
    for name, value in (env if env is not None else os.environ).items():
        if len(value) >= 6 and re.search(SECRET_NAMES, name):
            text = text.replace(value, MASK)
    for pattern in patterns:
        text = re.sub(
            pattern,
            lambda m: (m.group(1) + MASK + (m.group(2) if m.lastindex == 2 else "")) if m.lastindex else MASK,
            text,
        )
    return text


def tail(text: str, *, lines: int = 12, chars: int = 1500) -> str:
    """The end of captured output, capped in lines and characters."""
    kept = text.rstrip().splitlines()[-lines:]
    out = "\n".join(kept)
    return out if len(out) <= chars else "…" + out[-chars:]


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """A JSON-like value with every occurrence of each secret, in every string (keys
    included), masked: for an answer decoded from JSON, where ``\\u0067hp_…`` escapes would
    slip past a search of the raw bytes."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, MASK)
        return value
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    return value


def scrub_bytes(body: bytes, secrets: Sequence[str]) -> bytes:
    """An answer's body with each secret masked: decoded, scrubbed and encoded again when it
    is JSON (escaped spellings included), else masked where the bytes hold it."""
    if not secrets:
        return body
    import json

    try:
        document = json.loads(body)
    except ValueError:
        for secret in secrets:
            body = body.replace(secret.encode(), MASK.encode())
        return body
    cleaned = scrub(document, secrets)
    return body if cleaned == document else json.dumps(cleaned, ensure_ascii=False).encode()
