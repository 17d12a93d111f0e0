"""The hooks a verifier plugin implements; nothing but specs lives here.

A plugin marks its functions with ``git_continuity.api.hookimpl``; their names and argument
names must be these (a plugin may take fewer arguments). Each scheme has one owning plugin:
only that plugin is asked to resolve and to verify its handles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pluggy

from git_continuity.model import Handle, Observation
from git_continuity.plugins.values import PROJECT, Repository, Scheme, VerifyContext

hookspec = pluggy.HookspecMarker(PROJECT)


@hookspec
def continuity_schemes() -> Sequence[Scheme]:
    """The handle schemes this plugin verifies.

    Arguments: none. Returns: the plugin's ``Scheme`` values (name, summary, example, live,
    network). Called once per process by every command that records or dereferences a
    handle, and by ``git continuity plugins``. Not firstresult: every plugin answers. A
    scheme has one owner: when two plugins declare one scheme, every command that records or
    dereferences a handle refuses to run, naming both.
    """
    raise NotImplementedError


@hookspec(firstresult=True)
def continuity_resolve(handle: Handle, repo: Repository) -> Handle | None:
    """Normalize a handle of one of your schemes when a claim is recorded.

    Arguments: ``handle`` as the user typed it (only ever of a scheme you declared);
    ``repo``, read-only queries on the repository. Returns: the handle as it will be stored,
    every revision resolved to a full object id (so ``HEAD`` does not drift) and names
    expanded; None keeps it as typed. Raise ``UserError`` with a message naming the bad part
    when the handle is malformed: nothing is written then. firstresult: only the scheme's
    owner is asked, and its answer is used.
    """
    raise NotImplementedError


@hookspec
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation] | None:
    """Dereference handles of your schemes, now.

    Arguments: ``handles``, only handles of the schemes you declared (each once);
    ``context``, the repository, the time, whether to go online, the timeout and policy.
    Returns: one Observation per handle: ``verified`` or ``contradicted`` only when the
    system answered, with what it answered; ``unknown`` with the reason when it could not
    tell (offline, timeout, no token, rate limited). Never ``verified`` on an error. A handle
    left out is ``unknown``; an exception marks all your handles unknown and does not stop
    other plugins. Not firstresult: only the owner of the handles' schemes is asked.
    """
    raise NotImplementedError
