"""push, pull and sync: call the sync engine (syncing/), say what it did."""

from __future__ import annotations

from git_continuity.constants import env_stream
from git_continuity.display import clean
from git_continuity.errors import UserError
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.syncing import exchange, tracking
from git_continuity.syncing.fetching import Line


def _lines(found: list[Line]) -> str:
    """Each stream's line; a fetch that brought nothing says so rather than print nothing."""
    return (
        "\n".join(
            f"  {'(the remote moved meanwhile) ' if meanwhile else ''}{clean(name)}: {clean(what)}"
            for name, what, meanwhile in found
        )
        or "  nothing new"
    )


def _end(report: exchange.Report, command: str, as_json: bool) -> int:
    """Exit 0, or 1 where something was left out (no trusted key signed it) or held back (notes
    no trusted key signed): the trusted state moved on both ways all the same."""
    if as_json:
        render.emit_json("sync", exchange.to_json(report, command))
    refused = exchange.refusal(report)
    if refused:
        raise UserError(refused)
    return 1 if report.left_out or (report.pushed and report.pushed.held) else 0


def pull(repo: Repo, *, remote: str | None, as_json: bool = False) -> int:
    report = exchange.pull(repo, remote)
    if not as_json:
        if report.remote_empty:
            hint = tracking.elsewhere(repo, report.remote, env_stream())
            if hint:
                raise UserError(hint)
            print(f"{report.remote} has no continuity state yet: nothing to pull.")
            if not report.local_empty:
                print(f"Publish this clone's with: git continuity push {report.remote}")
        else:
            print(f"From {report.remote}:\n" + _lines(report.pulled or []))
    return _end(report, "pull", as_json)


def push(repo: Repo, *, remote: str | None, as_json: bool = False) -> int:
    report = exchange.push(repo, remote)
    if not as_json and report.pushed and report.pushed.lines:
        print(f"To {report.remote}:\n" + _lines(report.pushed.lines))
    return _end(report, "push", as_json)


def sync(repo: Repo, *, remote: str | None, as_json: bool = False) -> int:
    report = exchange.sync(repo, remote)
    if not as_json:
        if report.remote_empty and report.pulled:  # only branches under the prefix left alone, each named
            print(f"{report.remote} has no continuity state where this clone's settings look yet.")
            print(f"From {report.remote}:\n" + _lines(report.pulled))
        elif report.remote_empty:
            print(f"{report.remote} has no continuity state yet.")
        else:
            print(f"From {report.remote}:\n" + _lines(report.pulled or []))
        if report.local_empty:
            print("No continuity state here to push (git continuity init starts one).")
        elif report.pushed and report.pushed.lines:
            print(f"To {report.remote}:\n" + _lines(report.pushed.lines))
    return _end(report, "sync", as_json)
