"""What varies between two runs of one failure, and the text with it taken out.

Both fingerprints of a failure use it: an attempt's (store/attempts.py, across sessions) and the
in-session loop notice's (agents/loop_notice.py, on every tool call an agent makes). Standard library
only: the loop notice imports it on a path that runs after every tool call.
"""

from __future__ import annotations

import re

# Replaced before fingerprinting (order matters: times before numbers, paths before hex).
NOISE = (
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"\b\d\d:\d\d:\d\d(\.\d+)?\b"), "<time>"),
    (re.compile(r"(/private)?/(tmp|var/tmp|var/folders|dev/shm)(/[^\s:'\"]*)?"), "<tmp>"),
    (re.compile(r"\btmp[A-Za-z0-9_]{6,}\b"), "<tmp>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"), "<hex>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ns|us|µs|ms|s|sec|seconds?|m|min|minutes?|h)\b"), "<duration>"),
    (re.compile(r"\b(pid|process)(\s*[=:#]?\s*)\d+\b", re.IGNORECASE), r"\1\2<n>"),  # a container's pids are small
    (re.compile(r"\b\d+\.\d+\b"), "<n>"),
    (re.compile(r"\b\d{4,}\b"), "<n>"),  # pids, ports, sizes; small numbers (exit codes) are kept
)
_BLANKS = re.compile(r"[ \t]+")


def normalize(observed: str) -> str:
    """What was observed, with what varies between runs of the same failure replaced."""
    text = observed.strip()
    for pattern, mark in NOISE:
        text = pattern.sub(mark, text)
    return _BLANKS.sub(" ", text)
