"""The hooks a verifier plugin implements; nothing but specs lives here."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pluggy

from git_continuity.plugin import PROJECT, Handle, Observation, Repo, Scheme, VerifyContext

hookspec = pluggy.HookspecMarker(PROJECT)


@hookspec
def continuity_schemes() -> Sequence[Scheme]:
    """The handle schemes this plugin verifies.

    Called once per process by every command that records or dereferences a handle, and
    by ``git continuity plugins``. Not firstresult: every plugin answers; a scheme may be
    declared by one plugin only.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def continuity_resolve(handle: Handle, repo: Repo) -> Handle | None:
    """Normalize a handle when a claim is recorded.

    ``handle`` is as the user typed it; return it with every revision resolved to a full
    object id (so ``HEAD`` does not drift) and names expanded, or None when the scheme is
    not yours. Raise ``git_continuity.errors.UserError`` with a message naming the bad part
    when the handle is malformed: nothing is written then. firstresult: the first non-None
    answer is used.
    """
    raise NotImplementedError


@hookspec
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation] | None:
    """Dereference handles of your schemes, now.

    ``handles`` holds only handles of the schemes this plugin declared. Return one
    Observation per handle: ``verified`` or ``contradicted`` only when the system answered,
    with what it answered in ``observed``; ``unknown`` with the reason when it could not
    tell (offline, timeout, no token, rate limited). Never ``verified`` on an error. An
    exception marks this plugin's handles unknown; it does not stop other plugins.
    """
    raise NotImplementedError
