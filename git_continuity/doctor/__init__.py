"""What is wrong and its repair: what doctor reads of the state (``state``) and around it
(``setup``: the hooks, the agents' hooks, the MCP registrations), moving malformed files
aside (``quarantine``), and taking out of a clone what git-continuity put there
(``uninstall``).

May import: ``hooks``, ``agents`` and every folder below.
"""
