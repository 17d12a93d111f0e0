"""What is wrong and its repair: what doctor reads of the state (``state``) and around it
(``setup``: the hooks, the agents' hooks, the MCP registrations), and taking out of a clone
what git-continuity put there (``uninstall``). The files ``doctor --fix`` moves aside are
kept by ``store/quarantine.py``, which status reads too.

May import: ``hooks``, ``agents`` and every folder below.
"""
