from __future__ import annotations

from git_continuity import render, trust
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.model import now, stamp
from git_continuity.repo import Repo


def allow(repo: Repo, *, command: str) -> int:
    """Approve one exact command for cmd: checks on this machine."""
    command = command.strip()
    if not command:
        raise UserError("trust allow needs the exact command, e.g. git continuity trust allow 'python -m pytest -q'")
    entries = trust.approved(repo)
    if command in entries:
        print(f"Already approved here: {command}")
        return 0
    entries[command] = {"command": command, "approved_at": stamp(now()), "by": git.identity(repo)}
    trust.save(repo, entries)
    print(
        f"Approved on this machine: {command}\n  (kept in {trust.path(repo)}, never synced)\n"
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
            "cmd: checks stay unknown until: git continuity trust allow 'COMMAND'"
        )
    else:
        for e in entries:
            print(f"{e['command']}\n  approved {e['approved_at']} by {e['by']}")
    return 0


def signer_add(repo: Repo, *, principal: str, key: str) -> int:
    """Trust a teammate's signing key (or one of your own) for state commits read here."""
    from git_continuity import signers

    parsed = _key_argument(key, "trust signer add")
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
    from pathlib import Path

    from git_continuity import signers

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
    from git_continuity import signers

    parsed = _key_argument(key, "trust signer remove")
    gone = signers.remove(parsed)
    if not gone:
        raise UserError(f"not trusted here: {parsed[:60]}… (git continuity trust signer list shows what is)")
    print(f"No longer trusted: {parsed[:60]}… (for {', '.join(s.principals for s in gone)})")
    return 0


def signer_list(repo: Repo, *, as_json: bool) -> int:
    from git_continuity import signers, signing

    own = signing.own_key_path()
    mine = signers.parse_key(own.with_name(own.name + ".pub").read_text()) if own.is_file() else None
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
