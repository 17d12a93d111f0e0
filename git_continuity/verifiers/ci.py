"""Local CI evidence: results recorded by ``git continuity ci run -- <command>`` as records on
the commit's note (``refs/notes/continuity``), so they travel with the repository.

``ci:<rev>[#<name>]`` is verified when, for every command recorded on that commit (or the
one named), the newest result succeeded on the commit's own tree. Rules:

- the newest result per command decides: a failure after a success contradicts;
- a result that ran on another tree does not count: a note carried along by ``git commit
  --amend`` or a rebase (notes.rewriteRef) keeps the old tree, and so no longer vouches for
  the rewritten commit; it shows as ``unknown`` ("ran on another tree: run it again");
- no result at all is ``unknown``: the notes may simply not have been fetched here.

Verifying reads notes only: it never runs the recorded command (state from another clone
is data, not something to execute).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from git_continuity.api import (
    GIT_CONTINUITY_VERSION,
    Handle,
    Observation,
    Repository,
    Scheme,
    UserError,
    Verifier,
    VerifyContext,
    ago,
    expectation,
    hookimpl,
    parse_stamp,
    redact,
    require,
)

NAME = "ci"
SEEN = Verifier(NAME, GIT_CONTINUITY_VERSION)
SCHEMES = (
    Scheme(
        "ci",
        "the newest result of each command recorded by `git continuity ci run` on rev (or the one "
        "named) succeeded on rev's tree",
        "ci:HEAD or ci:HEAD#tests",
        live=True,
    ),
)
FORM = "ci:<rev>[#<name>][=success]"
RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}")


@hookimpl
def continuity_schemes() -> Sequence[Scheme]:
    return SCHEMES


def _resolve(repo: Repository, handle: Handle) -> Handle:
    text = handle.text
    body, eq, state = handle.body.partition("=")
    rev, hash_, name = body.partition("#")
    if not rev:
        raise UserError(f"handle {text!r} names no revision; the form is {FORM}")
    if hash_:
        require(RUN_NAME, name, "name", text, FORM)
    expected = f"={expectation(state, ('success',), text)}" if eq else ""
    return Handle("ci", f"{repo.resolve_commit(rev)}{'#' + name if hash_ else ''}{expected}")


@hookimpl
def continuity_resolve(handle: Handle, repo: Repository) -> Handle | None:
    return _resolve(repo, handle)


def results(repo: Repository, commit: str) -> list[dict[str, Any]]:
    """The CI records on commit, oldest first (git-appraise orders them by timestamp)."""
    found = [
        r for r in repo.note_records(commit) if r.get("kind") == "ci" and r.get("status") in ("success", "failure")
    ]
    return sorted(found, key=lambda r: (int(str(r.get("timestamp", "0"))), str(r.get("at", ""))))


def _check(ctx: VerifyContext, body: str) -> Observation:
    sha, _, name = body.partition("=")[0].partition("#")
    if not ctx.repo.has_commit(sha):
        return SEEN.unknown(f"commit {sha[:7]} is not in this clone")
    newest: dict[str, dict[str, Any]] = {}
    for record in results(ctx.repo, sha):
        key = str(record.get("name") or record.get("command") or "?")
        if not name or key == name:
            newest[key] = record
    what = f"`{name}`" if name else "CI"
    if not newest:
        return SEEN.unknown(
            f"no {what} result recorded on {sha[:7]} (git continuity ci run -- COMMAND records one; "
            "a clone gets them with the notes ref)",
        )
    tree = ctx.repo.commit_tree(sha)
    lines = []
    for key, record in sorted(newest.items()):
        when = record.get("at")
        age = ago(parse_stamp(when), ctx.now) if isinstance(when, str) else "at an unknown time"
        said = f"`{key}` {'passed' if record['status'] == 'success' else 'failed'}"
        said += f" (exit {record['exit']})" if "exit" in record else ""
        said += f" {age}"
        if record.get("tree") != tree:
            rewritten = "(the note followed a rewrite): run it again"
            return SEEN.unknown(f"{said}, but on another tree than {sha[:7]}'s {rewritten}")
        if record["status"] != "success":
            return SEEN.contradicted(f"{said} on {sha[:7]}")
        lines.append(said)
    return SEEN.verified(f"{'; '.join(lines)} on {sha[:7]}")


@hookimpl
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation]:
    # Records written by other clones' runs: data, redacted before it is stored or shown.
    found = {h: _check(context, h.body) for h in handles}
    return {h: replace(o, observed=redact(o.observed)) for h, o in found.items()}
