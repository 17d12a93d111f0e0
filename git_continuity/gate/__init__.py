"""Whether a thread may be called done, and the gates that hold to it: the one closure
judgement (``closure``: every acceptance check verified now), the agents' Stop gate
(``stop``), and a close judged at commit-msg and recorded at post-commit (``pending_close``).

May import: ``sessions`` and every folder below.
"""
