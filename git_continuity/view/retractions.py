"""What ``claim retract`` wrote in the journal, read back: why an id names no claim any more.

Below the commands, so ``claim show`` and ``verify`` ask the same thing without one command
importing another.
"""

from __future__ import annotations

import re

from git_continuity import store
from git_continuity.model import STATES, shown

# What retract writes in the journal (commands/claim.py), read back: the first ", <state> when withdrawn: "
# ends what the claim said (a claim's text could hold those words too, but seldom does).
RETRACTED = re.compile(r'retracted claim \S+ ".*?, (?:' + "|".join(STATES) + r") when withdrawn: (?P<why>.*)", re.S)


def retractions(snap: store.Snapshot, ids: list[str]) -> dict[str, str]:
    """For each of ``ids`` that names no claim because it was retracted: when and why, as
    a sentence (the journal keeps it; the latest retraction counts)."""
    found: dict[str, str] = {}
    for entry in reversed(store.read_journal(snap)[0]):
        match = RETRACTED.match(entry.text)
        if match is None:
            continue
        for claim_id in ids:
            if claim_id not in found and entry.text.startswith(f'retracted claim {claim_id} "'):
                found[claim_id] = f"claim {claim_id} was retracted at {shown(entry.at)} UTC: {match['why']}"
    return found
