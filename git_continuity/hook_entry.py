"""``git-continuity-hook``: the hooks' entry point.

The loop notice runs after every tool call an agent makes, so it goes straight to
tool_calls.py, before the command line is imported and its parser built (twice what the
notice itself costs); every other hook enters the same ``main`` as the command line.
"""

from __future__ import annotations

import os
import sys

PROBE = "GIT_CONTINUITY_HOOK_PROBE"  # agent status and doctor: the launcher on a no-op event


def main() -> int:
    args = sys.argv[1:]
    if os.environ.get(PROBE):  # the interpreter started and the package imports: that is the answer
        from git_continuity import __version__

        python = f"Python {sys.version.split()[0]}"
        print(f"ready: git-continuity-hook {__version__} at {os.path.abspath(sys.argv[0])} ({python})")
        return 0
    if (
        len(args) == 3
        and args[0] == "agent"
        and args[2] == "post-tool-use"
        and args[1] in ("claude", "codex", "gemini")
    ):
        from git_continuity import tool_calls

        return tool_calls.main(args[1])
    from git_continuity.cli import hook_main

    return hook_main()
