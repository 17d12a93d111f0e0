"""Names every layer shares: ref names, id patterns, environment variables, the default stream.

Standard library only: the hooks' hot path imports this module and nothing else of ours, so
that a commit which closes nothing never pays for pygit2 or jsonschema.
"""

from __future__ import annotations

import os
import re
import socket

DEFAULT_STREAM = "main"

# Refs. The state of a stream is refs/continuity/<stream>; a remote's copy of it is kept
# under refs/continuity-remotes/<remote>/<stream>, so `git branch -a` stays clean.
STATE_PREFIX = "refs/continuity/"
NOTES_REF = "refs/notes/continuity"
# What the commit-msg hook judged for the post-commit hook of the same commit (gate/pending_close.py),
# under the work tree's own git folder: the shell hook tests for it before any Python starts.
CLOSING_FILE = "continuity/closing.json"
TRACKING_PREFIX = "refs/continuity-remotes/"
NOTES_TRACKING_PREFIX = "refs/notes/continuity-remotes/"

# Ids are typed by people: no 0/o, 1/l/i, lower case only. Six characters give 31**6 (~887
# million) values, so two clones adding entries at the same moment do not collide in practice.
ID_ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"
ID_CHARS = "[2-9a-hjkmnp-z]"  # ID_ALPHABET as a regular-expression class
ID_RE = re.compile(rf"^[a-z]-{ID_CHARS}{{6}}$")
# hooks/commit-msg writes this pattern out once more for grep; a test ties the two together.
# A commit message may spell an id in any case ("Closes T-Q24H6Y"): match it whatever its
# case, and lower it before looking it up (ids are stored in lower case).
THREAD_ID = re.compile(rf"\bt-{ID_CHARS}{{6}}\b", re.IGNORECASE)
STREAM_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*$")  # and not ending in .lock

# Environment variables.
ENV_STREAM = "GIT_CONTINUITY_STREAM"
ENV_SESSION = "GIT_CONTINUITY_SESSION"
ENV_AGENT = "GIT_CONTINUITY_AGENT"
ENV_HOST = "GIT_CONTINUITY_HOST"
ENV_TRACE = "GIT_CONTINUITY_TRACE"
ENV_CHECK_JSON = "GIT_CONTINUITY_CHECK_JSON"
ENV_BRIEF_TOKENS = "GIT_CONTINUITY_BRIEF_TOKENS"
# Set by the helper in a command's copy of itself: the pid the kernel gave it for its client,
# so that the command knows which process asked (session.caller_pid); never set by hand.
ENV_CALLER = "GIT_CONTINUITY_CALLER_PID"
# The roles of a place (store/places.py); nothing is committed in the GUARDED ones.
PLACE_ROLES = ("home", "donor", "archive", "preservation", "cleanroom")
GUARDED_ROLES = ("donor", "archive", "preservation")
# Commit in a donor, archive or preservation place, or move a preservation branch, on purpose
# (or: git -c continuity.allowPlace=true ...).
ENV_ALLOW_PLACE = "GIT_CONTINUITY_ALLOW_PLACE"
CONFIG_ALLOW_PLACE = "continuity.allowPlace"
# A sibling repository's name (store/siblings.py), as a scoped handle names it: @api:pushed:…
SIBLING_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


# A name shown as an agent or a host: printable, one line, short.
AGENT_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,64}$")


def hostname(*, environment: bool = True) -> str:
    """This machine's name as entries record it: GIT_CONTINUITY_HOST when set (containers and
    CI runners get random host names; a person can name the machine they mean), else the
    host name (``environment=False``: the host name, as for a process that names none)."""
    named = os.environ.get(ENV_HOST, "").strip() if environment else ""
    if named and AGENT_RE.match(named):
        return named
    return socket.gethostname() or "unknown-host"


# Names a stream cannot take: git's HEAD, and what the branch transport puts beside the streams
# under its prefix (<prefix>notes, <prefix>lanes/…: remote_layout).
RESERVED_STREAMS = ("HEAD", "notes", "lanes")


def usable_stream(name: str) -> bool:
    """Whether name can be a stream: one ref name component (STREAM_RE), not ending in .lock,
    not reserved."""
    return bool(STREAM_RE.match(name)) and not name.endswith(".lock") and name not in RESERVED_STREAMS


def env_stream() -> str:
    """The stream named by GIT_CONTINUITY_STREAM, or the default: one rule for the command
    line (the default of --stream) and every hook alike.

    An empty value counts as unset (a shell's ``VAR= cmd`` must not select a stream named
    ''). Any other value is taken as it is, and a name that is not usable_stream is refused
    wherever it is used, by the commands and the hooks with the same message and exit 2
    (store.ref_name), except that a hook in a repository without any continuity state
    passes quietly, as it does for every stream there.
    """
    return os.environ.get(ENV_STREAM) or DEFAULT_STREAM


# The journal entry an agent's Stop gate writes when it lets a session end on unverified
# threads (agent_hooks); the next brief leads with the latest (orientation).
LET_GO = "Stop gate let go: session "
