"""trust: the commands cmd: checks may run here, the keys whose signatures are trusted, and
the team's list of keys. Approving a command and trusting a key run only at a terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from git_continuity import constants
from git_continuity import repo as git
from git_continuity.display import clean
from git_continuity.errors import UserError
from git_continuity.model import now, stamp
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import team
from git_continuity.trust import approvals as trust
from git_continuity.trust import signers, signing


def allow(repo: Repo, *, command: str) -> int:
    """Approve one exact command for cmd: checks on this machine."""
    command = command.strip()
    if not command:
        raise UserError("trust allow needs the exact command, e.g. git continuity trust allow 'python -m pytest -q'")
    trust.require_a_person("trust allow")
    entries = trust.approved(repo)
    if command in entries:
        print(f"Already approved here: {command}")
        return 0
    entries[command] = {"command": command, "approved_at": stamp(now()), "by": git.identity(repo)}
    trust.save(repo, entries)
    print(
        f"Approved on this machine: {command}\n  (kept in {trust.path(repo)}, outside the repository, never synced)\n"
        "Claims that check it show their last result until git continuity verify runs it."
    )
    return 0


def revoke(repo: Repo, *, command: str) -> int:
    entries = trust.approved(repo)
    if command not in entries:
        raise UserError(f"not approved here: {command!r} (git continuity trust list shows what is)")
    del entries[command]
    trust.save(repo, entries)
    print(f"No longer approved: {command}")
    return 0


def list_trusted(repo: Repo, *, as_json: bool) -> int:
    entries = sorted(trust.approved(repo).values(), key=lambda e: e["command"])
    if as_json:
        render.emit_json(
            "trust-list",
            {"commands": [{"command": e["command"], "approved_at": e["approved_at"], "by": e["by"]} for e in entries]},
        )
    elif not entries:
        print(
            "No command is approved on this machine. "
            + trust.persons_act(
                "cmd: checks stay unknown until each is approved", "git continuity trust allow 'COMMAND'"
            )
        )
    else:
        for e in entries:
            print(f"{e['command']}\n  approved {e['approved_at']} by {e['by']}")
    return 0


def signer_add(repo: Repo, *, principal: str, key: str) -> int:
    """Trust a teammate's signing key (or one of your own) for state commits read here."""
    parsed = _key_argument(key, "trust signer add")
    trust.require_a_person("trust signer add")
    if not principal or any(c.isspace() or c in "\"'#" or ord(c) < 32 for c in principal):
        raise UserError(
            f"trust signer add: {principal!r} is not a principal: an e-mail address (no spaces or quotes), as git"
            " names a signer, e.g. git continuity trust signer add bea@example.com 'ssh-ed25519 AAAA…'"
        )
    if not signers.add(principal, parsed, "added by git continuity trust signer add"):
        print(f"Already trusted: {parsed[:60]}…")
        return 0
    print(
        f"Trusted for {principal}: {parsed[:60]}…\n  (kept in {signers.path()}, outside every repository;"
        " git log --show-signature reads it with git config gpg.ssh.allowedSignersFile)"
    )
    return 0


def _key_argument(key: str, command: str) -> str:
    """The key as TYPE BASE64, from the text itself or a .pub file that holds it; ``command``
    (``trust signer add``, ``trust signer remove``) names the command in a refusal."""
    text = key.strip()
    named = text.endswith(".pub") or ("/" in text and not text.startswith(("ssh-", "ecdsa-", "sk-", "key::")))
    if signers.parse_key(text.removeprefix("key::")) is None and named:
        file = Path(text).expanduser()
        if not file.is_file():
            raise UserError(f"{command}: no such file {key[:200]!r}; nothing was written")
        try:
            text = file.read_text().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise UserError(f"{command}: {key[:200]!r} cannot be read ({error}); nothing was written") from None
    parsed = signers.parse_key(text.removeprefix("key::"))
    if parsed is None:
        raise UserError(
            f"{command}: {key[:60]!r} is not an SSH public key; nothing was written.\n"
            "Give it as ssh-keygen writes it ('ssh-ed25519 AAAA…', quoted) or as the .pub file that holds it"
        )
    return parsed


def signer_remove(repo: Repo, *, key: str) -> int:
    """Stop trusting a key, or every key trusted for an e-mail address."""
    text = key.strip()
    if "@" in text and not text.startswith(("ssh-", "ecdsa-", "sk-", "key::")) and " " not in text:
        keys = signers.keys_of(text)
        if not keys:
            raise UserError(f"no key is trusted here for {text!r} (git continuity trust signer list shows what is)")
    else:
        keys = [_key_argument(key, "trust signer remove")]
    for each in keys:
        gone = signers.remove(each)
        if not gone:
            raise UserError(f"not trusted here: {each[:60]}… (git continuity trust signer list shows what is)")
        print(f"No longer trusted: {each[:60]}… (for {', '.join(s.principals for s in gone)})")
    return 0


def signer_list(repo: Repo, *, as_json: bool) -> int:
    mine = signing.own_public(repo)
    listed = signers.read()
    if as_json:
        render.emit_json(
            "trust-signer-list",
            {
                "file": str(signers.path()),
                "signers": [{"principals": s.principals, "key": s.key, "own": s.key == mine} for s in listed],
            },
        )
        return 0
    if not listed:
        print(f"No signing key is trusted here yet ({signers.path()}); the first state write adds your own.")
        return 0
    print(f"Trusted signers ({signers.path()}):")
    for s in listed:
        print(f"  {s.principals}  {s.key}" + ("  (your own key)" if s.key == mine else ""))
    return 0


def team_list(repo: Repo, *, as_json: bool) -> int:
    """The team's list of signers at HEAD: each key's fingerprint, and whether it is trusted here."""
    found = team.at_head(repo)
    trusted, mine, done = signers.trusted(), signing.own_public(repo), team.accepted(repo)
    if as_json:
        render.emit_json("trust-team", _team_json(found, trusted, mine, done))
    elif found is None:
        print(
            "No team list at HEAD (.continuity.yaml has no signers: entry). Put your key on it with: git continuity"
            " trust team join, then commit and push .continuity.yaml"
        )
    else:
        print("\n".join(_team_lines(found, trusted, mine, done)))
    return 0


def _team_json(
    found: team.Team | None, trusted: dict[str, str], mine: str | None, done: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "commit": found.commit if found else None,
        "signers": [
            {
                "principals": m.principals,
                "key": m.key,
                "fingerprint": team.fingerprint(m.key),
                "comment": m.comment,
                "trusted": m.key in trusted,
                "own": m.key == mine,
            }
            for m in (found.members if found else [])
        ],
        "accepted": {"commit": done["commit"], "at": done["at"]} if done else None,
    }


def _team_lines(found: team.Team, trusted: dict[str, str], mine: str | None, done: dict[str, Any] | None) -> list[str]:
    lines = [f"The team's signers (.continuity.yaml at HEAD, {found.commit[:7]}):"]
    width = max(len(m.principals) for m in found.members)
    for m in found.members:
        where = "trusted here" if m.key in trusted else "not trusted here"
        own = ", your own key" if m.key == mine else ""
        said = f" ({m.comment})" if m.comment else ""
        lines.append(f"  {clean(m.principals):<{width}}  {team.fingerprint(m.key)}{clean(said)}  {where}{own}")
    if done:
        lines.append(f"Accepted here: the list at {done['commit'][:7]}, {done['at'].replace('T', ' ')}.")
    else:
        lines.append("Not accepted here yet.")
    if missing := sum(1 for m in found.members if m.key not in trusted):
        keys = f"{missing} key{'s are' if missing != 1 else ' is'}"
        said = f"{keys} not trusted here; after a check of the fingerprints with their owners, the list is accepted"
        lines.append(trust.persons_act(said, team.ACCEPT))
    return lines


def team_join(repo: Repo) -> int:
    """Put this person's signing key on the team's list in the work tree's .continuity.yaml."""
    key = signing.writer_key(repo)
    if key.public is None:
        raise UserError(
            f"your state commits are signed with {key.format} (gpg.format), and the team's list holds SSH keys;"
            " nothing was written.\nSign state with an SSH key (git config gpg.format ssh and user.signingKey), or"
            " with git-continuity's own: git config continuity.signingKey own"
        )
    email = signing.email(repo)
    if not team.join(repo, email, key.public, constants.hostname()):
        print(f"Your key is on the team's list already ({team.fingerprint(key.public)}, in .continuity.yaml).")
        return 0
    signers.add(email, key.public, "your own key (trust team join)")
    print(
        f"Put your key on the team's list in .continuity.yaml:\n  {clean(email)}  {team.fingerprint(key.public)}"
        f"  {constants.hostname()}\n"
        "Commit and push it, for your teammates to review and accept (git continuity trust team accept):\n"
        "  git add .continuity.yaml && git commit -m 'Join the signers' && git push"
    )
    return 0


def team_accept(repo: Repo) -> int:
    """Trust every key on the team's list at HEAD (at a terminal), and record the version accepted."""
    found, done = team.accept(repo)
    print(f"Accepted the team's list of signers at {found.commit[:7]} (.continuity.yaml at HEAD):")
    for m in done.trusted:
        print(f"  trusted now      {clean(m.principals)}  {team.fingerprint(m.key)}")
    for m, whom in done.already:
        also = "" if whom == m.principals else f" (for {clean(whom)})"
        print(f"  trusted already  {clean(m.principals)}  {team.fingerprint(m.key)}{also}")
    for key in done.dropped:
        print(f"  no longer trusted (it left the list)  {team.fingerprint(key)}")
    print(f"Kept in {signers.path()}; the next pull takes in what these keys signed.")
    return 0
