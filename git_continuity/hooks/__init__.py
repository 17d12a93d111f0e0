"""What git's hooks run (``guards``: decide from the cheapest evidence, then ask a reader),
how ``hooks install`` writes them and uninstall removes them (``install``, husky's scripts
too), and notes and claims that follow an amend or a rebase (``rewrite``).

May import: ``agents`` and every folder below.
"""
