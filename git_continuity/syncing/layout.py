"""Where the state lives on a remote: its own refs, or ordinary branches under a prefix.

    continuity.transport            refs (default) or branches, for every remote
    continuity.<remote>.transport   the same, for one remote (wins over the one above)
    continuity.branchPrefix         the branches' prefix (default continuity/), also per
                                    remote as continuity.<remote>.branchPrefix

With ``refs``, stream S travels as refs/continuity/S and the notes as refs/notes/continuity.
With ``branches`` (for remotes that take only branches: a cloud sandbox's proxy that takes
``claude/*`` alone, Bitbucket Server and its refusal of refs/notes/*), S travels as the
branch <prefix>S and the notes as <prefix>notes. Either way the tracking refs here are the
same (syncing/tracking.py), so status's ahead/behind reads them unchanged. A fetch reads both
layouts, so moving between transports loses nothing; a push goes to the chosen one only.

Beside each stream's shared ref, each clone may own a **lane** for it: the ref its push goes
to when other clones moved the shared ref first (a fleet on one remote). Only its clone
writes it, so pushing it never races; every fetch takes every lane in, so the next sync of
any clone folds it into the shared ref. With ``refs``: refs/continuity-lanes/<clone>/<stream>
and refs/notes/continuity-lanes/<clone>; with ``branches``: <prefix>lanes/<clone>/<stream>
and <prefix>lanes/<clone>/notes (so no stream may be named ``lanes`` there).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, NamedTuple

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo

Transport = Literal["refs", "branches"]
DEFAULT_PREFIX = "continuity/"
NOTES_BRANCH = "notes"  # <prefix>notes carries the commit notes
LANES_BRANCH = "lanes"  # <prefix>lanes/<clone>/<stream>: the clones' lanes
LANES_PREFIX = "refs/continuity-lanes/"  # <clone>/<stream>, with the refs transport
NOTES_LANES_PREFIX = "refs/notes/continuity-lanes/"  # <clone>: the notes' lanes
_CLONE = re.compile(r"^k-[2-9a-hjkmnp-z]{10}$")  # siblings.clone_id's shape


class Lane(NamedTuple):
    """A clone's lane for a stream (or for the notes) on a remote."""

    clone: str
    stream: str  # the stream; "" for the notes' lane


@dataclass(frozen=True)
class Layout:
    """How one remote carries the state, and the settings that decided it."""

    remote: str
    transport: Transport
    prefix: str
    transport_key: str  # the config key that set the transport (or the one that would)
    prefix_key: str

    def state_ref(self, stream: str) -> str:
        """The remote's ref for a stream's state, in the chosen layout."""
        if self.transport == "refs":
            return f"{constants.STATE_PREFIX}{stream}"
        if stream in (NOTES_BRANCH, LANES_BRANCH):
            carries = "the commit notes" if stream == NOTES_BRANCH else "the clones' lanes"
            raise UserError(
                f"stream {stream!r} cannot travel as a branch: {self.prefix}{stream} carries {carries} "
                f"({self.transport_key} is branches).\nUse the refs transport for this remote, or move the work "
                "to a stream of another name."
            )
        return f"refs/heads/{self.prefix}{stream}"

    def lane_ref(self, lane: Lane) -> str:
        """The remote's ref for a clone's lane, in the chosen layout."""
        if self.transport == "refs":
            return (
                f"{NOTES_LANES_PREFIX}{lane.clone}" if not lane.stream else f"{LANES_PREFIX}{lane.clone}/{lane.stream}"
            )
        return f"refs/heads/{self.prefix}{LANES_BRANCH}/{lane.clone}/{lane.stream or NOTES_BRANCH}"

    @property
    def lane_globs(self) -> list[str]:
        """What a listing asks for to see every lane, in both layouts."""
        return [f"{LANES_PREFIX}*", f"{NOTES_LANES_PREFIX}*", f"refs/heads/{self.prefix}{LANES_BRANCH}/*"]

    def parse_lane(self, name: str) -> Lane | None:
        """The lane a remote ref is, in either layout, else None."""
        if name.startswith(NOTES_LANES_PREFIX):
            clone, stream = name[len(NOTES_LANES_PREFIX) :], ""
        elif name.startswith(LANES_PREFIX):
            clone, _, stream = name[len(LANES_PREFIX) :].partition("/")
            if not constants.usable_stream(stream):
                return None
        elif name.startswith(at := f"refs/heads/{self.prefix}{LANES_BRANCH}/"):
            clone, _, stream = name[len(at) :].partition("/")
            if stream == NOTES_BRANCH:
                stream = ""
            elif stream == LANES_BRANCH or not constants.usable_stream(stream):
                return None
        else:
            return None
        return Lane(clone, stream) if _CLONE.match(clone) else None

    @property
    def notes_ref(self) -> str:
        return constants.NOTES_REF if self.transport == "refs" else f"refs/heads/{self.prefix}{NOTES_BRANCH}"

    @property
    def branch_glob(self) -> str:
        return f"refs/heads/{self.prefix}*"

    def parse_branch(self, name: str) -> str | None:
        """The stream (or NOTES_BRANCH) a branch under the prefix stands for, else None."""
        rest = name.removeprefix(f"refs/heads/{self.prefix}")
        if rest in (name, LANES_BRANCH) or not (rest == NOTES_BRANCH or constants.usable_stream(rest)):
            return None
        return rest


def advice(layout: Layout) -> str:
    """The setting that would get the state through a remote that refused it."""
    if layout.transport == "refs":
        return (
            f"If {layout.remote} takes only branches (a sandbox's proxy, some forges), send the state as branches:\n"
            f"  git config continuity.{layout.remote}.transport branches"
        )
    return (
        f"The state went as branches under {layout.prefix!r} ({layout.prefix_key}); if {layout.remote} takes only "
        "some branch names (claude/* in a Claude Code sandbox), put it under one:\n"
        f"  git config {layout.prefix_key} claude/continuity-"
    )


def layout_of(repo: Repo, remote: str) -> Layout:
    """The layout the config chooses for this remote; a bad value is refused, naming its key."""
    transport_key = f"continuity.{remote}.transport"
    value = git.config_value(repo, transport_key)
    if value is None:
        value, transport_key = git.config_value(repo, "continuity.transport"), "continuity.transport"
    if value not in (None, "refs", "branches"):
        raise UserError(f"{transport_key} is {value!r}: give refs (the default) or branches")
    prefix_key = f"continuity.{remote}.branchPrefix"
    prefix = _setting(repo, prefix_key)
    if prefix is None:
        prefix_key = "continuity.branchPrefix"
        prefix = _setting(repo, prefix_key)
    prefix = DEFAULT_PREFIX if prefix is None else prefix
    problem = prefix_problem(prefix)
    if problem:
        raise UserError(f"{prefix_key} is {prefix!r}: {problem}\ne.g. git config {prefix_key} claude/continuity-")
    transport: Transport = "branches" if value == "branches" else "refs"
    return Layout(remote, transport, prefix, transport_key, prefix_key)


def _setting(repo: Repo, key: str) -> str | None:
    """A config value, an empty one included (config_value reads it as unset)."""
    value = git.config_value(repo, key)
    return value if value is not None else ("" if "" in git.config_values(repo, key) else None)


# What git refuses in a ref name (git check-ref-format), checked on <prefix><stream>.
_BAD = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|/\.|\.lock/")


def prefix_problem(prefix: str) -> str | None:
    """Why refs/heads/<prefix><stream> could not be a branch name, or None when it can."""
    if not prefix:
        return "an empty prefix would make the state's branches look like your own (main, notes)"
    if prefix.startswith(("/", ".", "-", "refs/")):
        return "it must not start with '/', '.', '-' or 'refs/' (it goes after refs/heads/)"
    if _BAD.search(prefix) or prefix.endswith(".lock"):
        return "it is not a valid part of a branch name (git check-ref-format)"
    return None


def is_state_commit(repo: Repo, commit: Oid) -> bool:
    """Whether a commit is continuity state: its tree holds .continuity/format."""
    return (
        git.has_commit(repo, commit)
        and git.entry_oid(repo, git.commit_tree(repo, commit), f"{store.ROOT}/format") is not None
    )


def is_notes_commit(repo: Repo, commit: Oid) -> bool:
    """Whether a commit looks like a notes ref's: every path is a (fanned-out) object id."""
    if not git.has_commit(repo, commit):
        return False
    entries = git.tree_entries(repo, git.commit_tree(repo, commit))
    return entries is not None and all(re.fullmatch(r"[0-9a-f]{2}|[0-9a-f]{40}", e.name) for e in entries)
