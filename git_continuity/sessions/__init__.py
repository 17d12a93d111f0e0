"""A session's start and end: the brief a session starts with (``orient``), the handoff it
ends with (``handoff``), the brief's facts and sections (``brief``) cut to a token budget
(``budget``), others' text quoted as data with its signer (``quoting``), what a session did
told from what arrived (``work``), and what another machine left uncommitted.

May import: ``render``, ``view`` and every folder below them.
"""
