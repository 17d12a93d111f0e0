"""git-continuity: the working state of long, multi-session work, kept in the repository."""

__version__ = "0.1.0"
