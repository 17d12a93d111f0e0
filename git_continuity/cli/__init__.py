"""The command line: every command declared once as a table, in one place (``table``, its
rows shaped by ``spec``), parsed and dispatched by ``main``; the manual page made from the
same parsers; ``hook_entry``, the hooks' entry point (``git-continuity-hook``).

May import: every folder below it (a command runs through ``commands``); ``helper`` and
``mcp`` are its peers (the front door hands a command to the helper).
"""
