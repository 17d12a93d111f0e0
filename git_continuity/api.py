"""The interface a verifier plugin may rely on: import this module, nothing else of
git_continuity. The built-in verifiers use only it (and the standard library), which is
what shows it is enough.

``API_VERSION`` is ``"MAJOR.MINOR"``: MINOR grows when something is added here, MAJOR when
something is removed or changes meaning. A plugin can refuse to load on a MAJOR it does not
know.

What is here, by use:

- declaring and resolving: ``hookimpl``, ``Scheme``, ``Handle``, ``UserError`` (a malformed
  handle), ``require`` / ``expectation`` / ``revision`` / ``ref_name_fault`` (check the parts of a
  handle);
- dereferencing: ``VerifyContext`` (its ``repo`` is a ``Repository``: read-only queries,
  plain values), ``Verifier`` (its ``verified`` / ``contradicted`` / ``unknown`` make an
  ``Observation``; ``waiting="review"`` or ``"CI"`` marks one that waits on someone else,
  which counts no attempt), ``Undecided`` (raise it with the reason when the system could not tell);
- asking a web service in parallel: ``Service``, ``fetch_object``, ``fetch_pages``, ``each``,
  ``pull_request``, tokens from ``token_from_env`` and ``github_token``;
- output and time: ``redact`` / ``tail`` (captured output before it is stored), ``short``,
  ``minute``, ``ago``, ``parse_stamp``; ``approve_hint`` (how to approve a command).
"""

from __future__ import annotations

from git_continuity import __version__
from git_continuity.errors import UserError
from git_continuity.model import Handle, Observation, ago, parse_stamp
from git_continuity.plugins.forge import (
    Service,
    each,
    expectation,
    fetch_object,
    fetch_pages,
    minute,
    pull_request,
    ref_name_fault,
    require,
    revision,
    short,
)
from git_continuity.plugins.redact import redact, tail
from git_continuity.plugins.tokens import from_env as token_from_env
from git_continuity.plugins.tokens import github as github_token
from git_continuity.plugins.values import Repository, Scheme, Undecided, Verifier, VerifyContext, hookimpl
from git_continuity.repo import Changes
from git_continuity.trust.approvals import approve_hint

# 1.1: Verifier.contradicted/unknown take waiting=; 1.2: VerifyContext.tree, Repository.path_in_tree;
# 1.3: ref_name_fault, Repository.refs, ref_last_move and remote_refs; 1.4: VerifyContext.head
API_VERSION = "1.4"
GIT_CONTINUITY_VERSION = __version__  # the installed package's (the built-in verifiers' own)

__all__ = [
    "API_VERSION",
    "GIT_CONTINUITY_VERSION",
    "Changes",
    "Handle",
    "Observation",
    "Repository",
    "Scheme",
    "Service",
    "Undecided",
    "UserError",
    "Verifier",
    "VerifyContext",
    "ago",
    "approve_hint",
    "each",
    "expectation",
    "fetch_object",
    "fetch_pages",
    "github_token",
    "hookimpl",
    "minute",
    "parse_stamp",
    "pull_request",
    "redact",
    "ref_name_fault",
    "require",
    "revision",
    "short",
    "tail",
    "token_from_env",
]
