"""Codex's trust in a project's hooks, read as Codex 0.171.0 stores it: ``[projects."<path>"]
trust_level`` and ``[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash`` in
``$CODEX_HOME/config.toml``, the hash being Codex's own of the hook's definition (a changed
definition is no longer trusted). What ``agent status`` shows; nothing here writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def codex_home() -> Path:
    import os

    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def codex_hash(event: str, matcher: str | None, handler: dict[str, Any]) -> str:
    """The hash Codex keeps as a hook's ``trusted_hash``: SHA-256 of its normalized identity
    (the event's snake_case name, the matcher and this one handler, with what is unset left out)
    as JSON with sorted keys and no spaces (codex-rs hooks discovery and config fingerprint)."""
    import hashlib

    normalized: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "async": bool(handler.get("async")),
    }
    normalized["timeout"] = int(handler.get("timeout") or handler.get("timeoutSec") or 600)
    if handler.get("statusMessage") is not None:
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": snake(event), "hooks": [normalized]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def state(trusted: str | None, current: str) -> str:
    if trusted is None:
        return "untrusted"
    return "trusted" if trusted == current else "modified"


def _codex_config() -> dict[str, Any] | None:
    """Codex's config.toml, read; {} when it is not there or not TOML."""
    import tomllib

    try:
        config: dict[str, Any] = tomllib.loads((codex_home() / "config.toml").read_text())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return config


def codex_trust(top: Path) -> dict[str, str] | None:
    """``[hooks.state."<key>"] trusted_hash`` from Codex's config.toml: key → hash (None: unknown)."""
    config = _codex_config()
    if config is None:
        return None
    states = (config.get("hooks") or {}).get("state") or {}
    return {
        k: v["trusted_hash"]
        for k, v in states.items()
        if isinstance(v, dict) and isinstance(v.get("trusted_hash"), str)
    }


def codex_project_trusted(top: Path) -> bool | None:
    """Whether config.toml trusts the project (``[projects."<path>"] trust_level``); None: unknown."""
    config = _codex_config()
    if config is None:
        return None
    projects = config.get("projects") or {}
    return any((projects.get(str(p)) or {}).get("trust_level") == "trusted" for p in {top, top.resolve()})
