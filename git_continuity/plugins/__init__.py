"""The verifier plugins: the values that cross the plugin hooks (``values``), the specs
(``hookspecs``), the manager that registers the built-in verifiers and installed plugins
(``manager``), dereferencing claims in parallel (``verify``), handles scoped to a sibling
(``scoped``), and what network verifiers share: the forges (``forge``), HTTP with a cache
(``http``), tokens that never land in state (``tokens``), and redaction (``redact``).

May import: ``syncing`` and every folder below. ``api`` (the one module a plugin imports)
stands on it; the built-in verifiers in ``verifiers/`` import only ``api``.
"""
