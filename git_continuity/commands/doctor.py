"""doctor [--fix] [--json]: read everything git-continuity depends on, say what is wrong and
the command that repairs it; with --fix, repair what is safe (doctor/state.py, doctor/setup.py).

Safe means nothing is lost and nothing is forced: a lock whose writer is gone is removed; a
ref whose file holds garbage, or that points at no commit, goes back to the last commit its
reflog names (the bad value stays in the reflog); the state's fetch refspec is added;
malformed files move into the state's quarantine by a new commit on top (store/quarantine.py).
A malformed state fetched from a remote gets that commit on top of the remote's, taken in
here, so that git continuity push repairs the remote as a fast-forward.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from git_continuity import constants
from git_continuity import repo as git
from git_continuity.display import clean
from git_continuity.doctor import setup as health_setup
from git_continuity.doctor import state as health
from git_continuity.doctor.state import Finding
from git_continuity.errors import UserError
from git_continuity.render import text as render
from git_continuity.repo import Oid, Repo, locks
from git_continuity.store import quarantine
from git_continuity.syncing import pulling, tracking
from git_continuity.trust import approvals as trust


def signing_checks(repo: Repo) -> list[Finding]:
    """Every stream whose state a read would refuse: not what this user last saw, or not
    signed by a key trusted here (store/integrity.py)."""
    from git_continuity.store import integrity
    from git_continuity.trust import signing

    try:
        signing.enabled(repo)
    except UserError:
        return []  # health_setup.signing_setup names the setting
    found = []
    for refname in git.list_refs(repo, constants.STATE_PREFIX):
        stream = refname.removeprefix(constants.STATE_PREFIX)
        if not constants.usable_stream(stream):
            continue
        try:
            problem = integrity.problem(repo, stream)
        except git.HistoryCut:
            continue  # health.state names the cut
        if problem:
            first, _, rest = problem.partition("\n")
            fix = (
                rest.rsplit("\n", 1)[-1]
                if rest
                else trust.persons_act("the state is accepted after a look", "git continuity doctor --accept COMMIT")
            )
            details = "".join(f"; {line.strip().rstrip(':')}" for line in rest.splitlines() if line.startswith("  "))
            found.append(Finding("signing", refname, first.removesuffix(":") + details, fix))
    return found


CHECKS: tuple[Callable[[Repo], list[Finding]], ...] = (
    health.lock_files,
    health.state,
    signing_checks,
    health.notes,
    health.tracking_refs,
    health.refspecs,
    health_setup.hooks,
    health_setup.agent_hooks,
    health_setup.trust_store,
    health_setup.policy_file,
    health_setup.signing_setup,
)
READ = "state refs, notes, tracking refs, locks, refspecs, git hooks, agent hooks, trust store, policy file, signing"


def examine(repo: Repo) -> list[Finding]:
    found = [f for check in CHECKS for f in check(repo)]
    refused = {f.where for f in found if f.area == "signing"}
    return [_held(f) if f.area == "state" and f.repair and f.where in refused else f for f in found]


def _held(finding: Finding) -> Finding:
    """A repair of a state the reads refuse waits for the refusal to be settled: --fix would
    write this user's commit on top of one nobody trusted, and accepting that commit would
    take the other in unseen."""
    fix = f"first accept or put back the state the signing problem names; then {finding.fix}"
    return dataclasses.replace(finding, fix=fix, repair=None)


def doctor(repo: Repo, *, fix: bool, as_json: bool, accept: str | None = None) -> int:
    if accept is not None:
        return _accept_state(repo, accept)
    repaired: list[dict[str, str]] = []
    if fix:
        repaired = _repair(repo, examine(repo))
    found = examine(repo)
    serious = [f for f in found if f.serious]
    if as_json:
        render.emit_json(
            "doctor",
            {
                "ok": not serious,
                "findings": [
                    {
                        "area": f.area,
                        "where": f.where,
                        "problem": f.problem,
                        "fix": f.fix,
                        "repair": f.repair,
                        "serious": f.serious,
                    }
                    for f in found
                ],
                "repaired": repaired,
            },
        )
        return 1 if serious else 0
    for done in repaired:
        print(f"repaired  {clean(done['where'])}: {clean(done['what'])}")
    if repaired:
        print()
    if not serious:
        print(f"doctor: nothing wrong ({READ} read)")
    else:
        fixable = sum(1 for f in serious if f.repair)
        plural = "s" if len(serious) != 1 else ""
        said = f" ({fixable} repaired by git continuity doctor --fix)" if fixable and not fix else ""
        print(f"doctor: {len(serious)} problem{plural}{said}")
        for f in serious:
            print(f"  {f.area:<8} {clean(f.where)}: {clean(f.problem)}\n           fix: {clean(f.fix)}")
    advice = [f for f in found if not f.serious]
    if advice:
        print("\nAdvice (not problems)")
        for f in advice:
            print(f"  {f.area:<8} {clean(f.where)}: {clean(f.problem)}\n           {clean(f.fix)}")
    return 1 if serious else 0


def _repair(repo: Repo, found: list[Finding]) -> list[dict[str, str]]:
    """Apply every safe repair the findings name; what was done."""
    done: list[dict[str, str]] = []
    for f in found:
        if f.repair is None:
            continue
        if f.area == "lock":
            lock = locks.judge(repo, f.where)
            if lock is not None and lock.gone:
                locks.clear(repo, lock)
                done.append({"area": f.area, "where": str(lock.path), "what": "removed (its writer is gone)"})
        elif f.area in ("state", "notes") and "to" in f.data:
            _put_back(repo, f.where, Oid(f.data["to"]))
            done.append({"area": f.area, "where": f.where, "what": f.repair})
        elif f.area == "refspec":
            added = tracking.add_fetch_refspec(repo, f.data["remote"])
            done.append({"area": f.area, "where": f.where, "what": f"added {' '.join(added)}"})
    streams = dict.fromkeys(
        f.data["stream"] for f in found if f.area == "state" and f.repair in ("moved aside", "put back")
    )
    for stream in streams:
        done += _quarantine_local(repo, stream)
    remote_streams = dict.fromkeys(
        (f.data["remote"], f.data["stream"], f.where) for f in found if f.area == "tracking" and f.repair
    )
    for remote, stream, refname in remote_streams:
        done += _quarantine_remote(repo, remote, stream, refname)
    return done


def _put_back(repo: Repo, refname: str, commit: Oid) -> None:
    """Point a broken ref at the last commit its reflog names (the bad value stays logged)."""
    try:
        git.remove_broken_ref(repo, refname)  # a file holding no object id: neither git nor libgit2 moves it
    except git.RefMoved:
        fix = "run git continuity doctor --fix again"
        raise UserError(f"{refname} changed while doctor --fix ran; nothing was put back; {fix}") from None
    git.set_ref(repo, refname, commit, "continuity: doctor --fix: put back on its last commit")


def _moved(stream: str, where: str, made: quarantine.Repair) -> list[dict[str, str]]:
    done = [{"area": "state", "where": where, "what": f"{p} moved into {quarantine.FOLDER}/"} for p in made.moved]
    if made.packet_from is None:
        return done
    put = (
        f"{quarantine.PACKET} put back on its version of {made.packet_from[:7]}; the broken text kept in"
        f" {quarantine.FOLDER}/packet.yaml"
    )
    return [{"area": "state", "where": where, "what": put}, *done]


def _quarantine_local(repo: Repo, stream: str) -> list[dict[str, str]]:
    ref = f"{constants.STATE_PREFIX}{stream}"

    def step(tip: Oid | None) -> list[dict[str, str]]:
        if tip is None:
            return []
        made = quarantine.repair(repo, stream, tip)
        if made is None:
            return []
        git.compare_and_swap(repo, ref, made.commit, tip, "continuity: doctor --fix: quarantine")
        return _moved(stream, f"{ref} ({made.commit[:7]})", made)

    return git.update_ref(repo, ref, step, gave_up="nothing was moved. Try again.")


def _quarantine_remote(repo: Repo, remote: str, stream: str, refname: str) -> list[dict[str, str]]:
    tip = git.ref_target(repo, refname)
    if tip is None:
        return []
    made = quarantine.repair(repo, stream, tip)
    if made is None:
        return []
    said = pulling.take_in(repo, stream, made.commit, remote)
    where = f"{remote}'s {stream} ({tip[:7]}), here as {constants.STATE_PREFIX}{stream}: {said}"
    return [
        *_moved(stream, where, made),
        {"area": "tracking", "where": refname, "what": f"to repair {remote}: git continuity push {remote}"},
    ]


def _at_a_terminal() -> bool:
    """Whether a person's terminal is this process's (helper/door.py asks the same)."""
    import os

    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def _accept_state(repo: Repo, rev: str) -> int:
    """Take a stream's state as it is now at COMMIT, after a look: the witness is re-anchored
    there (this user's record of the newest state seen, outside .git), and the journal says so."""
    from git_continuity import store
    from git_continuity.clone import session
    from git_continuity.errors import UserError
    from git_continuity.model import JournalEntry, new_id, now, stamp
    from git_continuity.store import integrity

    if not _at_a_terminal():
        raise UserError(
            "doctor --accept takes a state as trusted, which is the user's decision: run it at a terminal. Without"
            " one (an agent's tool call, a script) it refuses, so that nothing accepts a state on its own;"
            " nothing was changed"
        )
    try:
        commit = git.resolve_commit(repo, rev)
    except UserError:
        commit = None
    streams = [
        name.removeprefix(constants.STATE_PREFIX)
        for name in git.list_refs(repo, constants.STATE_PREFIX)
        if commit is not None and git.ref_target(repo, name) == commit
    ]
    if commit is None or not streams:
        raise UserError(
            f"doctor --accept {rev or repr(rev)}: no stream's ref is at that commit; nothing was changed.\n"
            "Name the commit a refusal named (git continuity doctor lists them)"
        )
    streams = [s for s in streams if integrity.problem(repo, s)]
    if not streams:
        print(f"Nothing to accept: the state at {commit[:7]} reads without complaint here; nothing was changed.")
        return 0
    for stream in streams:
        before = integrity.accept(repo, stream, commit)
        had = f"; the witness had {before.commit[:7]} (seen {before.seen})" if before else ""
        text = f"accepted {constants.STATE_PREFIX}{stream} at {commit[:7]} after a look (doctor --accept){had}"
        moment = now()
        who = session.who(repo)
        entry = JournalEntry(new_id("journal"), text, stamp(moment), who.by, who.host, **who.stamp())
        change = store.Change(
            f"journal add {entry.id}: {text}", {store.journal_path(entry, moment): store.entry_bytes(entry)}
        )
        if store.all_problems(store.snapshot(repo, stream)):  # nothing is written on a malformed state
            from git_continuity.trust import witness

            kept = witness.path(repo, stream)
            print(
                f"Accepted {constants.STATE_PREFIX}{stream} at {commit[:7]}{had}; recorded in {kept} (its files are"
                " malformed, so the journal cannot take it: git continuity doctor --fix moves them aside)."
            )
            continue
        store.update(repo, stream, lambda snap, change=change: change)  # type: ignore[misc]
        print(f"Accepted {constants.STATE_PREFIX}{stream} at {commit[:7]}{had}; recorded in the journal ({entry.id}).")
    return 0
