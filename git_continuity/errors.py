"""The one exception for user-facing failures; cli.main maps it to an exit code."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or a state the user must fix: printed without a traceback, exit 2.

    The message names what is wrong and where, and says what to run; nothing was written.
    """

    exit_code = 2
