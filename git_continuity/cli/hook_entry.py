"""``git-continuity-hook``: the hooks' entry point.

The loop notice runs after every tool call an agent makes, so it goes straight to
agents/loop_notice.py, before the command line is imported and its parser built (twice what the
notice itself costs), and imports no more than a helper's client would (handing it over would
cost a fork more). Every other coding agent's hook is handed to the repository's helper
process when it can take it, under the same rules as any command (helper/door.py: no terminal, a
repository of this user's, a helper alike), else enters the same ``main`` as the command line;
git's hooks, and the pre-commit framework's, never go to the helper.
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
        from git_continuity.agents import loop_notice as tool_calls

        return tool_calls.main(args[1])
    if len(args) == 3 and args[0] == "agent":
        from git_continuity.helper import door as helper

        done = helper.through_helper(["hook-impl", *args])
        if done is not None:
            helper.leave(done)
    from git_continuity.cli.main import hook_main

    return hook_main()
