"""Keep secrets out of captured output before it is stored or shown."""

from __future__ import annotations

import os
import re

SECRET_NAMES = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_KEY|CREDENTIAL)", re.IGNORECASE)
PATTERNS = (
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}\b"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b"),  # GitLab personal access tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access key ids
    re.compile(r"(?i)(authorization:\s*(?:bearer|token|basic)\s+)\S+"),
    re.compile(r"(?i)(https?://[^/\s:@]+:)[^@\s]+(@)"),  # passwords in URLs
    re.compile(r"(?i)(\b(?:password|passwd|pwd|secret|token|api[_-]?key)\s*[=:]\s*)[^\s'\"]+"),  # key=value
)
MASK = "[redacted]"


def redact(text: str, env: dict[str, str] | None = None) -> str:
    """text with secret-looking values and the values of secret-named variables masked."""
    for name, value in (env if env is not None else os.environ).items():
        if len(value) >= 6 and SECRET_NAMES.search(name):
            text = text.replace(value, MASK)
    for pattern in PATTERNS:
        text = pattern.sub(
            lambda m: (m.group(1) + MASK + (m.group(2) if m.lastindex == 2 else "")) if m.lastindex else MASK, text
        )
    return text


def tail(text: str, *, lines: int = 12, chars: int = 1500) -> str:
    """The end of captured output, capped in lines and characters."""
    kept = text.rstrip().splitlines()[-lines:]
    out = "\n".join(kept)
    return out if len(out) <= chars else "…" + out[-chars:]
