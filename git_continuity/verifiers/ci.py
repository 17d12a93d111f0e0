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
from typing import Any

from git_continuity import __version__, forge, notes
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.model import ago, parse_stamp
from git_continuity.plugin import Handle, Observation, Repo, Scheme, VerifyContext, hookimpl

NAME = "ci"
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


def _resolve(repo: Repo, handle: Handle) -> Handle:
    text = handle.text
    body, eq, state = handle.body.partition("=")
    rev, hash_, name = body.partition("#")
    if not rev:
        raise UserError(f"handle {text!r} names no revision; the form is {FORM}")
    if hash_:
        forge.require(RUN_NAME, name, "name", text, FORM)
    expected = f"={forge.expectation(state, ('success',), text)}" if eq else ""
    return Handle("ci", f"{git.resolve_commit(repo, rev)}{'#' + name if hash_ else ''}{expected}")


@hookimpl
def continuity_resolve(handle: Handle, repo: Repo) -> Handle | None:
    return _resolve(repo, handle) if handle.scheme == "ci" else None


def _seen(result: str, observed: str) -> Observation:
    return Observation(result, observed, NAME, __version__)  # type: ignore[arg-type]


def results(repo: Repo, commit: git.Oid) -> list[dict[str, Any]]:
    """The CI records on commit, oldest first (git-appraise orders them by timestamp)."""
    found = [
        r for r in notes.records(repo, commit) if r.get("kind") == "ci" and r.get("status") in ("success", "failure")
    ]
    return sorted(found, key=lambda r: (int(str(r.get("timestamp", "0"))), str(r.get("at", ""))))


def _check(ctx: VerifyContext, body: str) -> Observation:
    sha, _, name = body.partition("=")[0].partition("#")
    commit = git.Oid(sha)
    if not git.has_commit(ctx.repo, commit):
        return _seen("unknown", f"commit {sha[:7]} is not in this clone")
    newest: dict[str, dict[str, Any]] = {}
    for record in results(ctx.repo, commit):
        key = str(record.get("name") or record.get("command") or "?")
        if not name or key == name:
            newest[key] = record
    what = f"`{name}`" if name else "CI"
    if not newest:
        return _seen(
            "unknown",
            f"no {what} result recorded on {sha[:7]} (git continuity ci run -- COMMAND records one; "
            "a clone gets them with the notes ref)",
        )
    tree = git.commit_info(ctx.repo, commit).tree
    lines = []
    for key, record in sorted(newest.items()):
        when = record.get("at")
        age = ago(parse_stamp(when), ctx.now) if isinstance(when, str) else "at an unknown time"
        said = f"`{key}` {'passed' if record['status'] == 'success' else 'failed'}"
        said += f" (exit {record['exit']})" if "exit" in record else ""
        said += f" {age}"
        if record.get("tree") != tree:
            rewritten = "(the note followed a rewrite): run it again"
            return _seen("unknown", f"{said}, but on another tree than {sha[:7]}'s {rewritten}")
        if record["status"] != "success":
            return _seen("contradicted", f"{said} on {sha[:7]}")
        lines.append(said)
    return _seen("verified", f"{'; '.join(lines)} on {sha[:7]}")


@hookimpl
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation]:
    return {h: _check(context, h.body) for h in handles if h.scheme == "ci"}
