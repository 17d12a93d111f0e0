"""What doctor reads of the state itself: every stream's ref and its history, the notes ref,
the remote-tracking refs, the refs' lock files and the remotes' refspecs. Each problem found
is a Finding that names where it is and the command that repairs it; the ones ``doctor
--fix`` may repair safely say so (doctor/setup.py reads the rest: hooks, agents, trust,
policy)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from git_continuity import constants, store
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo, locks
from git_continuity.store import quarantine
from git_continuity.syncing import tracking

LOCKED = (constants.STATE_PREFIX, constants.NOTES_REF, constants.TRACKING_PREFIX, constants.NOTES_TRACKING_PREFIX)
HISTORY_WALK = 100_000  # state commits walked for a missing parent


@dataclass
class Finding:
    """One thing doctor found: where, what is wrong, and the command that repairs it.
    ``repair`` names what doctor --fix does about it (None: a person's fix)."""

    area: str  # state, notes, tracking, lock, refspec, hook, agent, trust, policy
    where: str
    problem: str
    fix: str
    repair: str | None = None
    serious: bool = True  # False: advice, which does not make doctor fail
    data: dict[str, str] = field(default_factory=dict)  # what the repair needs


def _reflog_commit(repo: Repo, refname: str) -> Oid | None:
    """The newest commit the ref pointed at according to its reflog (read as a file: a ref
    whose own file is broken cannot be asked)."""
    log = repo.common_dir / "logs" / refname
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        parts = line.split(" ", 2)
        if len(parts) >= 2 and re.fullmatch(r"[0-9a-f]{40}", parts[1]) and git.has_commit(repo, Oid(parts[1])):
            return Oid(parts[1])
    return None


def _ref(repo: Repo, refname: str, area: str) -> tuple[Oid | None, list[Finding]]:
    """Where a ref points, or a finding when it cannot be read or is not a commit."""
    try:
        target = git.ref_target(repo, refname)
    except UserError as error:
        back = _reflog_commit(repo, refname)
        said = str(error).split(";")[0]
        if back is None:
            return None, [Finding(area, refname, said, f"git update-ref -d {refname} (no earlier commit is logged)")]
        fix = f"put it back on {back[:7]}, the last commit its reflog names: git continuity doctor --fix"
        return None, [Finding(area, refname, said, fix, f"{refname} put back on {back[:7]}", data={"to": back})]
    if target is None or git.has_commit(repo, target):
        return target, []
    back = _reflog_commit(repo, refname)
    said = f"points at {target[:7]}, which is not a commit"
    if back is None:
        return None, [Finding(area, refname, said, f"git update-ref -d {refname} (no earlier commit is logged)")]
    return None, [
        Finding(
            area,
            refname,
            said,
            f"put it back on {back[:7]}, the last commit its reflog names: git continuity doctor --fix",
            f"{refname} put back on {back[:7]}",
            data={"to": back, "from": target},
        )
    ]


def _cut_history(repo: Repo, refname: str, tip: Oid) -> list[Finding]:
    """Commits of the ref's history that name a parent this clone lacks."""
    seen: set[Oid] = set()
    todo = [tip]
    while todo and len(seen) < HISTORY_WALK:
        oid = todo.pop()
        if oid in seen:
            continue
        seen.add(oid)
        for parent in git.commit_parents(repo, oid):
            if git.has_commit(repo, parent):
                todo.append(parent)
                continue
            return [
                Finding(
                    "state",
                    refname,
                    f"its history is cut: commit {oid[:7]} names a parent {parent[:7]} that is missing here",
                    "bring the objects back from a remote that has them: git fetch --refetch REMOTE "
                    f"'+{constants.STATE_PREFIX}*:{constants.TRACKING_PREFIX}REMOTE/*', or clone again",
                )
            ]
    return []


def state(repo: Repo) -> list[Finding]:
    """Every stream: its ref, its history, its files, and what is in its quarantine."""
    found: list[Finding] = []
    refnames = git.list_refs(repo, constants.STATE_PREFIX)
    if not refnames:
        found.append(
            Finding(
                "state",
                constants.STATE_PREFIX,
                "no stream here yet, so there is no state to read",
                "git continuity init starts one (git continuity pull takes in a remote's)",
                serious=False,
            )
        )
    for refname in refnames:
        stream = refname.removeprefix(constants.STATE_PREFIX)
        if not constants.usable_stream(stream):
            continue
        tip, bad = _ref(repo, refname, "state")
        found += bad
        if tip is None:
            continue
        found += _cut_history(repo, refname, tip)
        found += _files(repo, stream, refname, tip, "state")
        kept = quarantine.quarantined(store.Snapshot(repo, stream, tip, git.commit_tree(repo, tip)))
        if kept:
            found.append(
                Finding(
                    "state",
                    f"{refname}:{quarantine.FOLDER}/",
                    f"{len(kept)} file{'s' if len(kept) != 1 else ''} moved aside by doctor --fix, never read as "
                    f"state: {', '.join(k.removeprefix(quarantine.FOLDER + '/') for k in kept[:5])}"
                    + (", …" if len(kept) > 5 else ""),
                    "git continuity quarantine list, then show, restore (once well-formed) or drop them",
                    serious=False,
                )
            )
    return found


def _left_out(repo: Repo, refname: str, tip: Oid, area: str) -> list[Finding]:
    """A partial clone's state whose objects its filter left out (a plain git fetch under the
    filter brought it): said as such, never read as malformed, nor repaired (#35)."""
    holder = git.promisor(repo)
    gone = git.missing_objects(repo, [tip]) if holder is not None else []
    if holder is None or not gone:
        return []
    remote = refname.removeprefix(constants.TRACKING_PREFIX).rpartition("/")[0] if area == "tracking" else None
    return [
        Finding(
            area,
            refname,
            f"{len(gone)} objects of its history are not in this partial clone (its filter {holder.filter} left"
            " them out); they are not malformed",
            f"git continuity pull {remote or holder.remote} fetches them whole",
            serious=area != "tracking",  # the local state cannot be read until then
        )
    ]


def _files(repo: Repo, stream: str, refname: str, tip: Oid, area: str) -> list[Finding]:
    left_out = _left_out(repo, refname, tip, area)
    if left_out:
        return left_out
    snap = store.Snapshot(repo, stream, tip, git.commit_tree(repo, tip))
    found = []
    for problem in store.all_problems(snap):
        if "names a parent" in problem and problem.startswith(constants.STATE_PREFIX):
            continue  # _cut_history says it, for the whole history
        path = quarantine.movable(problem)
        if path is not None:
            fix, repair = "git continuity doctor --fix moves it into quarantine (a new state commit)", "moved aside"
        elif problem.startswith(quarantine.PACKET) and (back := quarantine.last_good_packet(repo, stream, tip)):
            fix = (
                f"git continuity doctor --fix puts back its last good version (of {back[0][:7]}), keeping the broken"
                f" text in {quarantine.FOLDER}/packet.yaml"
            )
            repair = "put back"
        elif problem.startswith(quarantine.PACKET):
            fix, repair = "git continuity edit" + (f" --stream {stream}" if stream != "main" else ""), None
        elif problem.startswith(f"{store.ROOT}/format"):
            fix, repair = "upgrade git-continuity (pip install -U git-continuity)", None
        else:
            fix = f"put the stream back on its last good change (git continuity log): git update-ref {refname} <commit>"
            repair = None
        found.append(Finding(area, refname, problem, fix, repair, data={"stream": stream, "tip": tip}))
    return found


def notes(repo: Repo) -> list[Finding]:
    if constants.NOTES_REF not in git.list_refs(repo, constants.NOTES_REF):
        return []
    tip, found = _ref(repo, constants.NOTES_REF, "notes")
    return found or (_notes_signature(repo, tip) if tip is not None else [])


def _notes_signature(repo: Repo, tip: Oid) -> list[Finding]:
    """The newest notes commit, when it is not signed by a key trusted here: written by a
    post-commit hook from before notes were signed in the shell, or by anything holding
    ``.git``. Advice: notes are evidence of why a commit exists, not the state."""
    from git_continuity.store import integrity
    from git_continuity.trust import signatures, signing

    if not signing.enabled(repo):
        return []
    verdict = signatures.judge(repo, [tip])[0]
    if verdict.kind == signatures.GOOD:
        return []
    fix = (
        "git continuity hooks install (its post-commit hook signs the notes it writes); the next note is signed on"
        f" top of it. Check with: git log --show-signature {constants.NOTES_REF}"
    )
    return [Finding("notes", constants.NOTES_REF, integrity.describe(repo, verdict), fix, serious=False)]


def tracking_refs(repo: Repo) -> list[Finding]:
    """What each remote had as of the last fetch: a malformed state there is repaired by a
    new commit on top, pushed as a fast-forward."""
    found: list[Finding] = []
    names = git.list_refs(repo, constants.TRACKING_PREFIX)
    for refname in names:
        remote, _, stream = refname.removeprefix(constants.TRACKING_PREFIX).rpartition("/")
        tip, bad = _ref(repo, refname, "tracking")
        found += [
            Finding(f.area, f.where, f.problem, f"git continuity pull {remote} fetches it again", serious=f.serious)
            for f in bad
        ]
        if tip is None or not constants.usable_stream(stream):
            continue
        try:
            local = git.ref_target(repo, f"{constants.STATE_PREFIX}{stream}")
        except UserError:  # state() names it
            local = None
        try:
            mended = (
                local is not None and local != tip and git.has_commit(repo, local) and git.is_ancestor(repo, tip, local)
            )
        except UserError:  # a cut history: _cut_history names it
            mended = False
        for f in _files(repo, stream, refname, tip, "tracking"):
            if f.repair and mended:
                f.fix = f"repaired here already; git continuity push {remote} repairs {remote} (a fast-forward)"
                f.repair = None
            elif f.repair:
                f.fix = f"git continuity doctor --fix, then git continuity push {remote} (a fast-forward)"
                f.repair = "moved aside in a new commit on top of it, taken in here"
                f.data["remote"] = remote
            found.append(f)
    return found


def lock_files(repo: Repo) -> list[Finding]:
    found = []
    for lock in locks.every_lock(repo, LOCKED):
        if lock.gone:
            found.append(
                Finding("lock", lock.ref, lock.describe(), "git continuity doctor --fix removes it", "removed")
            )
        elif lock.age > locks.STALE_AFTER:
            found.append(
                Finding("lock", lock.ref, lock.describe(), f"once that writer is done, remove it: rm {lock.path}")
            )
    return found


def refspecs(repo: Repo) -> list[Finding]:
    found = []
    streams = git.list_refs(repo, constants.STATE_PREFIX)
    for remote in git.remote_names(repo):
        for spec in git.config_values(repo, f"remote.{remote}.fetch"):
            destination = spec.lstrip("+").partition(":")[2]
            if destination.startswith((constants.STATE_PREFIX, constants.NOTES_REF)):
                found.append(
                    Finding(
                        "refspec",
                        f"remote.{remote}.fetch",
                        f"{spec} makes a plain git fetch overwrite this clone's own state",
                        f"git config --fixed-value --unset remote.{remote}.fetch '{spec}'",
                    )
                )
        for spec in git.config_values(repo, f"remote.{remote}.push"):
            if constants.STATE_PREFIX in spec or constants.NOTES_REF in spec:
                found.append(
                    Finding(
                        "refspec",
                        f"remote.{remote}.push",
                        f"{spec}: a plain git push now pushes only its push refspecs, not your branch",
                        f"git config --fixed-value --unset remote.{remote}.push '{spec}' (git continuity push"
                        " publishes the state)",
                    )
                )
        if streams and not tracking.has_fetch_refspec(repo, remote):
            found.append(
                Finding(
                    "refspec",
                    f"remote.{remote}.fetch",
                    f"a plain git fetch does not bring {remote}'s state (status cannot say how it stands)",
                    f"git continuity doctor --fix adds {' '.join(tracking.missing_fetch_refspecs(repo, remote))}",
                    "added",
                    serious=False,
                    data={"remote": remote},
                )
            )
    return found
