"""Where the state lives on a remote: its own refs, or ordinary branches under a prefix.

    continuity.transport            refs (default) or branches, for every remote
    continuity.<remote>.transport   the same, for one remote (wins over the one above)
    continuity.branchPrefix         the branches' prefix (default continuity/), also per
                                    remote as continuity.<remote>.branchPrefix

With ``refs``, stream S travels as refs/continuity/S and the notes as refs/notes/continuity.
With ``branches`` (for remotes that take only branches: a cloud sandbox's proxy that takes
``claude/*`` alone, Bitbucket Server and its refusal of refs/notes/*), S travels as the
branch <prefix>S and the notes as <prefix>notes. Either way the tracking refs here are the
same (tracking.py), so status's ahead/behind reads them unchanged. A fetch reads both
layouts, so moving between transports loses nothing; a push goes to the chosen one only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo

Transport = Literal["refs", "branches"]
DEFAULT_PREFIX = "continuity/"
NOTES_BRANCH = "notes"  # <prefix>notes carries the commit notes


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
        if stream == NOTES_BRANCH:
            raise UserError(
                f"stream 'notes' cannot travel as a branch: {self.prefix}{NOTES_BRANCH} carries the commit notes "
                f"({self.transport_key} is branches).\nUse the refs transport for this remote, or move the work "
                "to a stream of another name."
            )
        return f"refs/heads/{self.prefix}{stream}"

    @property
    def notes_ref(self) -> str:
        return constants.NOTES_REF if self.transport == "refs" else f"refs/heads/{self.prefix}{NOTES_BRANCH}"

    @property
    def branch_glob(self) -> str:
        return f"refs/heads/{self.prefix}*"

    def parse_branch(self, name: str) -> str | None:
        """The stream (or NOTES_BRANCH) a branch under the prefix stands for, else None."""
        rest = name.removeprefix(f"refs/heads/{self.prefix}")
        if rest == name or not (rest == NOTES_BRANCH or constants.usable_stream(rest)):
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
