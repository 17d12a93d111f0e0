"""Whose key signed each item of a document that another person wrote (#26).

status, thread list, ready, progress, next and check put on each item another person wrote
(a claim, a thread, a blocker, a journal entry or handoff; the objective; the next action as
``next_action_signer``) the ``signer`` object orient's items carry: the e-mail and short
fingerprint of the key that signed the state commit that added it, whether that key is
trusted here, and that commit (trust/authorship.py). This user's own items carry none, so a
single-user document does not change. The documents keep an item no trusted key signed,
marked ``"trusted": false`` (status is the full view); what a model reads beside them, the
MCP summaries (mcp/summary.py), quotes a trusted teammate's text and leaves the rest out.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import authorship

LISTS = ("claims", "threads", "blockers", "journal", "ready", "waiting")  # the documents' lists of items
NESTED = ("checks",)  # a thread's own list of claims
FIELDS = ("objective", "next_action")  # the packet's fields another person may have set


def others(repo: Repo, stream: str, tip: Oid, keys: Iterable[str]) -> dict[str, authorship.Author]:
    """The author of each of these entries that another person wrote (authorship keys: entry
    ids, or a packet field's key). A cut history names itself as a problem elsewhere: its
    entries stay unattributed here."""
    wanted = set(keys)
    if not wanted:
        return {}
    try:
        found = authorship.authors(repo, stream, tip, wanted)
    except UserError:
        return {}
    return {k: a for k, a in found.items() if a.kind != authorship.OWN}


def label(author: authorship.Author | None) -> str:
    """What status prints before an item another person wrote."""
    if author is None:
        return ""
    if author.kind == authorship.TRUSTED:
        return f"[signed by {author.principals or author.fingerprint}] "
    return "[not signed by a key trusted here] "


def _items(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for name in LISTS:
        found = document.get(name)
        for item in found if isinstance(found, list) else [found] if isinstance(found, dict) else []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                yield item
                for inner in NESTED:  # (progress counts a thread's checks: a number, no list)
                    listed = item.get(inner)
                    if isinstance(listed, list):
                        yield from (c for c in listed if isinstance(c, dict) and isinstance(c.get("id"), str))


def marker(repo: Repo, stream: str, tip: Oid | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """What render.emit_json calls to put the signers on a document before it is printed."""
    return functools.partial(annotate, repo, stream, tip)


def annotate(repo: Repo, stream: str, tip: Oid | None, document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with a ``signer`` on each item another person wrote (in place; returned)."""
    if tip is None:
        return document
    items = list(_items(document))
    fields = [name for name in FIELDS if document.get(name)]
    packet = authorship.packet_now(repo, tip) if fields else {}
    keys = {i["id"] for i in items} | {packet[name] for name in fields if name in packet}
    found = others(repo, stream, tip, keys)
    if not found:
        return document
    for item in items:
        if (author := found.get(item["id"])) is not None:
            item["signer"] = author.to_json()
    for name in fields:
        author = found.get(packet.get(name, ""))
        if author is None:
            continue
        if isinstance(document[name], dict):
            document[name]["signer"] = author.to_json()
        else:
            document[f"{name}_signer"] = author.to_json()
    return document
