"""The team's signers: the ``signers:`` list of the committed ``.continuity.yaml``, in git's
allowed-signers format, read at HEAD, so that a change of the list is reviewed and merged like
any change of the code.

``trust team`` shows it with each key's fingerprint and whether it is trusted here; ``trust
team join`` puts this person's key on it in the work tree (for them to commit and push);
``trust team accept``, a person's act at a terminal, trusts every key on it in the user's
allowed-signers file (trust/signers.py) and records which version of the list was accepted, in
``$XDG_CONFIG_HOME/git-continuity/team.json``. Until then a key the list names and this user
does not trust is named by ``status`` and the brief (``warning``): the state it signed is left
out, never taken in on the list's word alone (anything that can commit could add a key).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from git_continuity import atomic
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.store import policy
from git_continuity.trust import approvals as trust
from git_continuity.trust import signers

ACCEPT = "git continuity trust team accept"


@dataclass(frozen=True)
class Member:
    principals: str  # the e-mail address(es) the line names
    key: str  # "ssh-ed25519 AAAA…"
    entry: int  # its place in the list, from 1
    comment: str = ""  # what follows the key (often the machine it is on)


@dataclass(frozen=True)
class Team:
    commit: Oid  # HEAD, where the list was read
    blob: Oid  # the .continuity.yaml it was read from: the version of the list
    members: list[Member]


def fingerprint(key: str) -> str:
    """The key's fingerprint as ``ssh-keygen -l`` prints it (``SHA256:`` and 43 characters)."""
    return signers.fingerprint(key, short=False)


def at_head(repo: Repo) -> Team | None:
    """The list at HEAD (None: no commit, no .continuity.yaml, or no signers in it); a list
    that does not read is refused, naming the entry."""
    head = git.head_commit(repo)
    if head is None:
        return None
    blob = git.entry_oid(repo, git.commit_tree(repo, head), policy.FILE)
    if blob is None:
        return None
    where = f"{policy.FILE} at HEAD ({head[:7]})"
    try:
        text = git.blob(repo, blob).decode()
    except UnicodeDecodeError:
        raise UserError(f"{where}: not UTF-8 text; fix it and commit it") from None
    except KeyError:
        return None  # a blob this clone lacks (a partial clone): no list to judge here
    members = [_member(where, number, line) for number, line in enumerate(policy.parse(text, where).signers, 1)]
    return Team(head, blob, members) if members else None


def _member(where: str, number: int, line: str) -> Member:
    found = signers.parse_line(line, number)
    said = found if isinstance(found, str) else _not_shared(found)
    if said is not None or isinstance(found, str):
        raise UserError(
            f"{where}: signers entry {number} ({line[:60]!r}): {said}; nothing was read.\nFix it in {policy.FILE}"
            " and commit it: each entry is EMAIL KEYTYPE BASE64 [COMMENT], as git's allowed-signers lines are"
        )
    words = line.split()
    start = words.index(found.key.split()[0])
    return Member(found.principals, found.key, number, " ".join(words[start + 2 :]))


def _not_shared(found: signers.Signer) -> str | None:
    """Why a well-formed line is still not one a shared list may hold, or None."""
    if any(mark in found.principals for mark in '*?!"'):
        return "a principal is an e-mail address, not a pattern: accepting the list must not trust a key for anyone"
    if found.options and found.options != 'namespaces="git"':
        return f'{found.options} is not taken from a shared list (only namespaces="git" is)'
    return None


# -- what was accepted here ----------------------------------------------------------------


def record_path() -> Path:
    return signers.config_folder() / "team.json"


def _records() -> dict[str, Any]:
    try:
        data = json.loads(record_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def accepted(repo: Repo) -> dict[str, Any] | None:
    """What ``trust team accept`` recorded for this repository: the commit and blob of the list
    accepted, when, and the keys it trusted (None: never accepted here)."""
    found = _records().get(str(repo.common_dir))
    if not isinstance(found, dict) or not all(isinstance(found.get(k), str) for k in ("commit", "blob", "at")):
        return None  # none, or not one this tool wrote: as if never accepted
    return found


def _remember(repo: Repo, team: Team) -> None:
    records = _records()
    records[str(repo.common_dir)] = {
        "commit": team.commit,
        "blob": team.blob,
        "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "keys": [m.key for m in team.members],
    }
    record_path().parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic.write(record_path(), json.dumps(records, indent=1, sort_keys=True) + "\n")
    record_path().chmod(0o600)


@dataclass(frozen=True)
class Accepted:
    trusted: list[Member]  # trusted now
    already: list[tuple[Member, str]]  # trusted before, and for whom
    dropped: list[str]  # keys an earlier version of the list had trusted here, no longer on it


def accept(repo: Repo) -> tuple[Team, Accepted]:
    """Trust every key on the list at HEAD, stop trusting the keys an earlier acceptance of
    this repository's list trusted that it no longer names (unless another repository's
    accepted list still does), and record the version accepted. Only at a terminal."""
    trust.require_a_person("trust team accept")
    team = at_head(repo)
    if team is None:
        raise UserError(
            f"there is no team list at HEAD: {policy.FILE} has no signers: entry there; nothing was changed.\n"
            "A teammate starts it with git continuity trust team join, then commits and pushes it"
        )
    before = signers.trusted()
    done = Accepted([], [], [])
    for member in team.members:
        if member.key in before:
            done.already.append((member, before[member.key]))
        elif signers.add(member.principals, member.key, f"team list {team.commit[:7]}"):
            done.trusted.append(member)
    others = {k for where, r in _records().items() if where != str(repo.common_dir) for k in r.get("keys", [])}
    for key in _left_the_list(repo, team):
        if key not in others and signers.remove(key):
            done.dropped.append(key)
    _remember(repo, team)
    return team, done


def _left_the_list(repo: Repo, team: Team) -> list[str]:
    """The keys the version of the list accepted here named and ``team`` no longer does, but
    this user's own signing key: a list without it does not make their own state unreadable
    to them (their teammates, accepting it, leave out what it signs)."""
    from git_continuity.trust import signing

    earlier = (accepted(repo) or {}).get("keys", [])
    keep = {m.key for m in team.members} | {signing.own_public(repo)}
    return [k for k in earlier if isinstance(k, str) and k not in keep]


def warning(repo: Repo) -> str | None:
    """What status and the brief say while the list at HEAD names keys not trusted here, or no
    longer names keys its accepted version trusted here; None when there is nothing to say."""
    try:
        team = at_head(repo)
    except UserError as error:
        return f"the team's list of signers cannot be read: {str(error).splitlines()[0]}"
    if team is None:
        return None
    trusted = signers.trusted()
    missing = [m for m in team.members if m.key not in trusted]
    gone = [k for k in _left_the_list(repo, team) if k in trusted]
    if not missing and not gone:
        return None
    parts = []
    if missing:
        named = ", ".join(f"{m.principals} ({fingerprint(m.key)[:19]})" for m in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        parts.append(f"names {_keys(len(missing))} not trusted here: {named}{more}; the state they sign is left out")
    if gone:
        parts.append(f"no longer names {_keys(len(gone))} its accepted version trusted here")
    said = f"the team's list of signers ({policy.FILE} at HEAD) " + "; it ".join(parts)
    return trust.persons_act(said + " until the list is accepted", ACCEPT)


def _keys(n: int) -> str:
    return f"{n} key{'s' if n != 1 else ''}"


# -- this person's key on the list ----------------------------------------------------------


def join(repo: Repo, email: str, key: str, comment: str) -> bool:
    """Put ``email key comment`` on the list in the work tree's .continuity.yaml (made when
    there is none), comments and order kept; False when the key is on it already."""
    from git_continuity.store import packetfile, schema

    if repo.work_dir is None:
        raise UserError(f"a bare repository has no work tree to hold {policy.FILE}; run it in a clone")
    where = repo.work_dir / policy.FILE
    try:
        text = where.read_text()
    except FileNotFoundError:
        text = ""
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"{where}: cannot be read ({error}); nothing was written") from None
    rules = policy.parse(text, str(where))  # a file that does not read is refused as it is
    listed = [signers.parse_line(line) for line in rules.signers]
    if any(isinstance(found, signers.Signer) and found.key == key for found in listed):
        return False
    try:
        doc = packetfile.load_mapping(text, str(where), "signers", limit=schema.MAX_BYTES["policy"])
    except packetfile.YamlError as error:
        raise UserError(str(error)) from None
    line = f"{email} {key}" + (f" {comment}" if comment else "")
    if doc.get("signers"):
        doc["signers"].append(line)
    else:
        doc["signers"] = [line]
    after = packetfile.dump(doc).decode()
    policy.parse(after, str(where))  # what is written reads back
    atomic.write(where, after)
    return True
