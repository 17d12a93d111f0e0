"""Text for people and JSON for programs from the same values (``text``), a write's
``--json`` (``wrote``), the signer put on each item another person wrote, the progress page,
and the one progress line of network verification (``meter``).

May import: ``view`` and every folder below.
"""
