"""This clone and this machine, read without pygit2 where git's hooks need it: the session
file (``session``), the provenance line of a commit left ready for the post-commit hook
(``provenance``), which place a checkout is and what its role allows (``places``), whether
the closure gate's hooks are installed (``gate_presence``), what the machine has
(``machine``), and what varies between two runs of one failure (``noise``: the loop notice
after every failed command reads it).

May import: ``repo`` and the top-level modules; ``places`` and ``gate_presence`` fall back
to ``store`` (in a function) when the cheap read cannot answer.
"""
