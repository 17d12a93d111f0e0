"""The one assessment of a stream at a moment (``assessed``), which every reader renders and
none re-derives; the whole documents status and progress show (``document``, ``progress``);
its one wording of each fact (``labels``); the stop-loss that blocks a thread whose budget is
spent (``stoploss``); why an id names a retracted claim.

May import: ``plugins`` (dereferencing), ``syncing`` and every folder below.
"""
