"""What doctor reads around the state: the installed git hooks and the Python they run, the
coding agents' hooks and whether their command can start, the trust store, the policy file
and what signs the state. Each problem is a health.Finding naming the file and the command that repairs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from git_continuity import repo as git
from git_continuity.agents import table as agents
from git_continuity.clone.gate_presence import HOOK_MARK
from git_continuity.doctor.state import Finding
from git_continuity.errors import UserError
from git_continuity.hooks import install as githooks
from git_continuity.repo import Repo
from git_continuity.store import policy
from git_continuity.trust import approvals as trust
from git_continuity.trust import signers, signing

_PYTHON = re.compile(r"^python='([^']*)'$", re.MULTILINE)


def _imports(python: str) -> bool:
    """Whether that Python can import git_continuity (what the hooks run)."""
    try:
        done = subprocess.run(
            [python, "-c", "import git_continuity"], capture_output=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _has_threads(repo: Repo) -> bool:
    from git_continuity import store
    from git_continuity.constants import STATE_PREFIX

    for name in git.list_refs(repo, STATE_PREFIX):
        try:
            snap = store.snapshot(repo, name.removeprefix(STATE_PREFIX))
            if snap.commit is not None and store.read_threads(snap):
                return True
        except UserError:  # a ref that cannot be read is the state check's finding, not this one's
            continue
    return False


def hooks(repo: Repo) -> list[Finding]:
    """The plain git hooks that git continuity hooks install wrote, and whether the closure
    gate is there at all where a stream has threads (gate_presence)."""
    from git_continuity.clone import gate_presence

    found: list[Finding] = []
    gone = gate_presence.missing(repo)
    if gone is not None and _has_threads(repo):
        where = str(git.hooks_dir(repo) / "commit-msg")
        found.append(Finding("hook", where, f"no closure gate here: {gone}", gate_presence.INSTALL))
    folder = githooks.folder(repo)  # under husky, the git folder's own hooks/ that husky's lines run
    checked: dict[str, bool] = {}
    for path in sorted(folder.glob("*")) if folder.is_dir() else []:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if HOOK_MARK not in text:
            continue
        if not os.access(path, os.X_OK):
            found.append(
                Finding("hook", str(path), "is not executable, so git skips it", "git continuity hooks install")
            )
        match = _PYTHON.search(text)
        python = match.group(1) if match else ""
        if python not in checked:
            checked[python] = bool(python) and Path(python).is_file() and _imports(python)
        if checked[python]:
            continue
        fallback = shutil.which("git-continuity")
        said = f"runs {python or 'no recorded Python'}, which " + (
            "does not exist" if not python or not Path(python).is_file() else "cannot import git_continuity"
        )
        if fallback:
            said += f"; it falls back to {fallback} from PATH"
        else:
            said += ", and git-continuity is not on PATH: the hook skips its check"
        found.append(Finding("hook", str(path), said, "git continuity hooks install (records this Python)"))
    return found


def agent_hooks(repo: Repo) -> list[Finding]:
    """The agents' hooks that git continuity agent install wrote (agents.installed_hooks, as
    agent status shows them): can their command start?"""
    found: list[Finding] = []
    if repo.work_dir is None:
        return found
    from git_continuity.agents import probe as agent_probe

    checks = agent_probe.installed_hooks(repo.work_dir, common_dir=repo.common_dir)
    for name, target in agents.TARGETS.items():
        path = repo.work_dir / target.settings
        try:
            json.loads(path.read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as error:
            found.append(Finding("agent", str(path), f"cannot be read: {error}", "fix the file, or remove it"))
            continue
        mine = [check for check in checks if check.agent == target.agent]
        fix = f"install git-continuity where the agent finds it, then: git continuity agent install {name}"
        broken = next((check for check in mine if not check.runs), None)
        older = next((check for check in mine if check.form != "current"), None)
        recorded = agent_probe.recorded_program(repo.common_dir)
        if broken is not None:
            found.append(Finding("agent", str(path), f"the {name} hooks cannot run: {broken.why}", fix))
        elif older is not None:
            said = f"the {name} {older.event} hook: {older.why}"
            found.append(Finding("agent", str(path), said, f"git continuity agent install {name}", serious=False))
        elif mine and recorded and not os.path.isfile(recorded):
            said = f"the {name} hooks' recorded {recorded} is gone; they run git-continuity-hook from PATH"
            found.append(Finding("agent", str(path), said, f"git continuity agent install {name}", serious=False))
    return found


def trust_store(repo: Repo) -> list[Finding]:
    try:
        trust.approved(repo)
    except UserError as error:
        return [Finding("trust", str(trust.path(repo)), str(error), "fix it, or remove it and approve again")]
    old = trust.old_path(repo)
    if old.exists():
        said = "approvals kept in .git are no longer read: anything that can write .git could approve a command"
        again = trust.persons_act("each command is approved again", "git continuity trust allow 'COMMAND'")
        fix = f"{again}, then: rm {old}"
        return [Finding("trust", str(old), said, fix, serious=False)]
    return []


def policy_file(repo: Repo) -> list[Finding]:
    try:
        policy.load(repo.work_dir)
    except UserError as error:
        where = str(repo.work_dir / policy.FILE) if repo.work_dir else policy.FILE
        said = str(error).removeprefix(where).lstrip(": ") or str(error)
        return [Finding("policy", where, said, f"fix {where} (its keys: schema/policy.schema.json)")]
    return []


def signing_setup(repo: Repo) -> list[Finding]:
    """What would refuse every write here before it is tried: the signing setting, the
    allowed-signers file, the key state commits are signed with (never made here: a missing
    key of this tool's own is made by the first write)."""
    try:
        if not signing.enabled(repo):
            return []
        signers.read()
        if git.config_value(repo, "user.signingKey") or signing.own_key_path().exists():
            key = signing.writer_key(repo)
            if key.public is not None and key.public not in signers.trusted():
                signing.sign(repo, b"")  # refuses, naming the key and the command that trusts it
    except UserError as error:
        problem, _, fix = str(error).partition("\n")
        return [Finding("signing", "state commits", problem, fix.removeprefix("Fix: ") or "fix what it names")]
    return []
