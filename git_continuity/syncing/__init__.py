"""The sync engine: every stream's state and the commit notes, through ordinary git remotes.

The network goes through the user's own git (syncing/transport.py); merging is local (store/merge.py).
A remote's state lands in tracking refs first (syncing/tracking.py), is validated there, and only
then taken in (``pulling``); local refs move by compare-and-swap, so a writer racing with a
pull loses nothing. Pushes never force (``pushing``): a remote that moved meanwhile refuses,
and the push fetches, merges and tries again, a bounded number of times.

``commands/sync.py`` (push, pull, sync), ``init`` and ``doctor`` call it.
"""
