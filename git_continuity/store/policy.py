"""``.continuity.yaml``: the repository's optional policy, committed with the code.

    # Words that, before a thread id in a commit message, claim the thread is finished.
    closing_keywords: [closes, fixes, resolves]
    # Checks every closure must also pass, whatever the thread's own checks are.
    closing_checks: ["clean:"]
    # How long evidence stays fresh, per handle scheme ("default" for the rest).
    evidence_max_age: {default: 24h, cmd: 1h}
    # How long a cmd: check may run before it counts as unknown.
    cmd_timeout: 10m
    # A thread is stalled when what it fails stayed the same for this many attempts over at
    # least this many sessions (git continuity progress).
    stalled: {attempts: 3, sessions: 2}
    # What every thread may spend before the stop-loss blocks it (none unless set; a thread's
    # own --budget replaces it).
    budget: {attempts: 10, sessions: 5, time: 8h}
    # How long a journal entry of each kind stays live (journal add --kind): a faded one is
    # kept, but left out of orient and of journal unless --all. A duration, or never.
    lifespans: {decision: never, finding: 30d, note: 7d}
    # The team's signing keys, as git's allowed-signers lines (store/team.py reads them at HEAD;
    # git continuity trust team join adds yours, trust team accept trusts them all here).
    signers:
      - ada@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI… ada-laptop

No file means the defaults below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from git_continuity import display
from git_continuity.errors import UserError
from git_continuity.store import schema

FILE = ".continuity.yaml"
LIFESPANS: dict[str, timedelta | None] = {"decision": None, "finding": timedelta(days=30), "note": timedelta(days=7)}
# At most five digits a unit (99999d is 273 years): a date that far from now is still a date.
DURATION = re.compile(r"^(\d{1,5})(s|m|h|d)$")  # attempts.DURATION too (a write imports no attempts)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
LIFESPAN_HINT = "give a duration such as 12h, 7d or 30d, at most 99999 of a unit, or never"


@dataclass(frozen=True)
class Policy:
    closing_keywords: tuple[str, ...] = (
        "closes",
        "close",
        "closed",
        "fixes",
        "fix",
        "fixed",
        "resolves",
        "resolve",
        "resolved",
        "done",
    )
    closing_checks: tuple[str, ...] = ()
    evidence_max_age: dict[str, timedelta] = field(default_factory=lambda: {"default": timedelta(hours=24)})
    cmd_timeout: timedelta = timedelta(minutes=10)
    stall_attempts: int = 3
    stall_sessions: int = 2
    budget: dict[str, Any] = field(default_factory=dict)  # attempts, sessions, time (as in a thread)
    # Per journal kind, how long an entry stays live; None: it never fades.
    lifespans: dict[str, timedelta | None] = field(default_factory=lambda: dict(LIFESPANS))
    signers: tuple[str, ...] = ()  # the team's allowed-signers lines, as written (store/team.py reads them)
    source: str = "defaults"

    def max_age(self, scheme: str) -> timedelta:
        return self.evidence_max_age.get(scheme) or self.evidence_max_age.get("default") or timedelta(hours=24)


def duration(text: str) -> timedelta:
    match = DURATION.match(text.strip())
    if not match:
        raise ValueError(text)
    return timedelta(seconds=int(match.group(1)) * UNITS[match.group(2)])


def _lifespan_hint(message: str) -> str:
    if message.startswith("unknown key"):
        return f"{message} (the kinds are {', '.join(LIFESPANS)})"
    return f"{message} ({LIFESPAN_HINT})"


def load(work_dir: Path | None) -> Policy:
    """The policy of the work tree at work_dir (defaults when there is no file or no work tree)."""
    if work_dir is None:
        return Policy()
    path = work_dir / FILE
    try:
        with path.open("rb") as file:
            data = file.read(schema.MAX_BYTES["policy"] + 1)  # more is refused unread
    except FileNotFoundError:
        return Policy()
    except OSError as error:
        raise UserError(f"{path}: cannot read: {error}") from None
    too_big = schema.size_problem(path.stat().st_size, schema.MAX_BYTES["policy"])
    if too_big:
        raise UserError(f"{path}: {too_big}: it was not read")
    try:
        text = data.decode()
    except UnicodeDecodeError as error:
        raise UserError(f"{path}{display.undecodable(data, error)}") from None
    return parse(text, str(path))


def load_or_defaults(work_dir: Path | None) -> tuple[Policy, str | None]:
    """For a read (status, orient): the policy, or when the file is malformed the built-in
    defaults and one line saying which file and line is wrong. A reader must not stop
    everyone because of one bad edit; the writes and gates that depend on it still refuse."""
    try:
        return load(work_dir), None
    except UserError as error:
        lines = str(error).splitlines() or ["malformed"]
        more = f" (and {len(lines) - 1} more lines: git continuity doctor)" if len(lines) > 1 else ""
        return Policy(), (
            f"{lines[0]}{more}; read with the built-in defaults here, and what depends on the policy"
            " (thread close, check --closing, the commit gate) refuses until it is fixed"
        )


def parse(text: str, where: str) -> Policy:
    data = _validated(text, where)
    if not data:
        return Policy(source=where)
    ages = {"default": timedelta(hours=24)}
    for scheme, text_age in (data.get("evidence_max_age") or {}).items():
        ages[str(scheme)] = duration(str(text_age))
    defaults = Policy()
    return Policy(
        closing_keywords=tuple(str(k).lower() for k in data.get("closing_keywords") or defaults.closing_keywords),
        closing_checks=tuple(str(c) for c in data.get("closing_checks") or ()),
        evidence_max_age=ages,
        cmd_timeout=duration(str(data["cmd_timeout"])) if "cmd_timeout" in data else defaults.cmd_timeout,
        stall_attempts=int((data.get("stalled") or {}).get("attempts", defaults.stall_attempts)),
        stall_sessions=int((data.get("stalled") or {}).get("sessions", defaults.stall_sessions)),
        budget=dict(data.get("budget") or {}),
        lifespans={
            **LIFESPANS,
            **{str(k): None if v == "never" else duration(str(v)) for k, v in (data.get("lifespans") or {}).items()},
        },
        signers=tuple(str(line) for line in data.get("signers") or ()),
        source=where,
    )


def _validated(text: str, where: str) -> dict[str, Any]:
    """The policy's values, parsed (ruamel.yaml) and checked against its schema (jsonschema)
    once per content: ~40 ms of imports that every write reading the policy would pay. What
    passed is kept as JSON under the user's cache folder, keyed by the text, the schemas and
    this version, so an edited policy is judged again; what fails is never kept."""
    import contextlib
    import hashlib
    import json
    import os

    from git_continuity import __version__, atomic

    key = hashlib.sha256(f"{__version__}\0{schema.digest()}\0{text}".encode(errors="surrogateescape")).hexdigest()
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    kept = Path(home) / "git-continuity" / "policy" / f"{key[:32]}.json"
    with contextlib.suppress(OSError, ValueError):
        found = json.loads(kept.read_text())
        if isinstance(found, dict):
            return found
    from git_continuity.store import packetfile

    try:
        doc = packetfile.load_mapping(
            text,
            where,
            "closing_keywords, closing_checks, evidence_max_age, cmd_timeout, stalled, budget, lifespans, signers",
            limit=schema.MAX_BYTES["policy"],
        )
    except packetfile.YamlError as error:
        raise UserError(str(error)) from None
    data: dict[str, Any] = packetfile.plain(doc)
    found_problems = schema.problems("policy", data)
    if found_problems:
        said = [(p, _lifespan_hint(m) if p[:1] == ("lifespans",) and len(p) == 2 else m) for p, m in found_problems]
        raise UserError("\n".join(f"{where}{packetfile.line_of(doc, p)}: {schema.key_path(p)}: {m}" for p, m in said))
    # A cache that cannot be written (or a value JSON cannot hold) only costs speed.
    with contextlib.suppress(OSError, TypeError, ValueError):
        atomic.write(kept, json.dumps(data))
    return data
