"""The one exception for user-facing failures; cli.main maps it to an exit code."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the repository door imports pygit2; this module stays standard library only
    from git_continuity.repo import Repo


class UserError(Exception):
    """Bad input or a state the user must fix: printed without a traceback, exit 2.

    The message names what is wrong and where, and says what to run; nothing was written.
    """

    exit_code = 2


class NoState(UserError):
    """The stream has no state ref here. The message says how to start one; whether a remote
    has the state is added at the top (cli.main), since that may ask the network."""

    def __init__(self, message: str, *, repo: Repo, stream: str, missing: str) -> None:
        super().__init__(message)
        self.repo = repo
        self.stream = stream
        self.missing = missing  # the first line alone
