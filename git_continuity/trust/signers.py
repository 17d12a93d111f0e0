"""The keys whose signatures this user trusts on state commits: an allowed-signers file in
the user's config folder (``$XDG_CONFIG_HOME/git-continuity/allowed_signers``), in git's
``gpg.ssh.allowedSignersFile`` format, so ``git -c gpg.ssh.allowedSignersFile=FILE log
--show-signature`` checks the same commits with the same keys.

It lives outside ``.git`` on purpose: nothing that can write the repository (a script, an
agent, a fetched state) can add a key. This user's own key is in it from the start
(trust/signing.py puts it there when it makes the key, or at the first use of their own git
signing key); a teammate's comes in only by a person's act at a terminal, ``git continuity
trust team accept`` or ``trust signer add``: whether a person is at this process's terminal
is asked here too (``at_a_terminal``), below everything that trusts or signs.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from git_continuity import atomic
from git_continuity.errors import UserError

KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)


# Where a refusal or a note would name the command that trusts or approves: what a reader
# without a terminal (an agent) is told instead.
A_PERSONS_ACT = "a person's act, at their terminal"


def at_a_terminal() -> bool:
    """Whether a person's terminal is this process's controlling one (an agent's tool call, a
    script, CI and the helper process have none)."""
    try:
        os.close(os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY))
    except OSError:
        return False
    return True


def persons_act(what: str, command: str) -> str:
    """``what`` and, at a terminal, the command that does it; without one (an agent reads it)
    only that a person does it: no text an agent reads hands it a trust command."""
    if at_a_terminal():
        return f"{what}: {command}"
    return f"{what}, by a person at their terminal"


def require_a_person(command: str) -> None:
    """Refuse, changing nothing, unless a person runs ``command`` at a terminal."""
    if not at_a_terminal():
        raise UserError(
            f"{command} is a person's decision: run it at a terminal. Without one (an agent's tool call, a script)"
            " it refuses, so that nothing trusts or approves on its own; nothing was changed"
        )


def config_folder() -> Path:
    """``$XDG_CONFIG_HOME/git-continuity`` (``~/.config/git-continuity`` without it)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "git-continuity"


def path() -> Path:
    return config_folder() / "allowed_signers"


@dataclass(frozen=True)
class Signer:
    principals: str  # who, as git names them: comma-separated e-mail addresses (or *)
    key: str  # "ssh-ed25519 AAAA…": the key type and its base64 blob
    line: int
    options: str = ""  # as written, e.g. namespaces="git"


def parse_key(text: str) -> str | None:
    """``TYPE BASE64`` from a public key as ssh-keygen writes it (a comment after it is
    dropped), or None when it is not one."""
    words = text.split()
    if len(words) < 2 or words[0] not in KEY_TYPES:
        return None
    try:
        blob = base64.b64decode(words[1], validate=True)
    except ValueError:
        return None
    if len(blob) < 4 or blob[4 : 4 + int.from_bytes(blob[:4], "big")] != words[0].encode():
        return None
    return f"{words[0]} {words[1]}"


def fingerprint(key: str, *, short: bool = True) -> str:
    """A key's fingerprint as ``ssh-keygen -l`` prints it for an SSH key (``SHA256:`` and 43
    characters; ``short``: the first 12 of them); the last 16 digits of an OpenPGP/X.509 id."""
    words = key.split()
    if len(words) == 2 and words[0] in KEY_TYPES:
        digest = base64.b64encode(hashlib.sha256(base64.b64decode(words[1])).digest()).decode().rstrip("=")
        return "SHA256:" + (digest[:12] if short else digest)
    return key[-16:]


def read() -> list[Signer]:
    """Every line of the file (none when it does not exist); a line that is not
    ``PRINCIPALS [OPTIONS] KEYTYPE BASE64 [COMMENT]`` is refused, naming it."""
    where = path()
    try:
        info = where.stat()
        text = where.read_text()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"{where}: cannot be read ({error}); fix its permissions or remove it") from None
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) or info.st_uid != os.getuid():
        raise UserError(
            f"{where}: other users can change it (mode {stat.S_IMODE(info.st_mode):04o}), and it says whose"
            f" signatures are trusted; nothing was read or written.\nFix: chmod 600 {where}"
        )
    found = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        signer = parse_line(line, number)
        if isinstance(signer, str):
            raise _bad(where, number, signer)
        found.append(signer)
    return found


def parse_line(line: str, number: int = 0) -> Signer | str:
    """One allowed-signers line (``PRINCIPALS [OPTIONS] KEYTYPE BASE64 [COMMENT]``), or what
    is wrong with it."""
    words = _words(line.strip())
    if words is None:
        return "a quotation mark is not closed"
    start = 1 if len(words) > 1 and words[1] in KEY_TYPES else 2
    key = parse_key(" ".join(words[start : start + 2])) if len(words) > start + 1 else None
    if key is None:
        return "expected PRINCIPALS [OPTIONS] KEYTYPE BASE64 (git's allowed-signers format)"
    return Signer(words[0], key, number, words[1] if start == 2 else "")


def _words(line: str) -> list[str] | None:
    """The line's words, split at spaces outside double quotes (as ssh-keygen reads
    options such as ``namespaces="git,file"``); None when a quote is not closed."""
    words, word, quoted = [], "", False
    for char in line:
        if char == '"':
            quoted = not quoted
        if char.isspace() and not quoted:
            if word:
                words.append(word)
            word = ""
        else:
            word += char
    if quoted:
        return None
    return [*words, word] if word else words


def _bad(where: Path, number: int, why: str) -> UserError:
    return UserError(
        f"{where} line {number}: {why}; nothing was read or written.\n"
        "Fix the line or remove it: each line is an e-mail, then the key as KEYTYPE BASE64 (what .pub files hold)"
    )


def trusted() -> dict[str, str]:
    """Each trusted key (``TYPE BASE64``) and the principals it is trusted for."""
    return {s.key: s.principals for s in read()}


def plain(namespace: str) -> set[str]:
    """The trusted keys whose line (the one ``trusted`` names) plainly trusts them for the
    namespace: principals without patterns, no option but a ``namespaces`` list that names it.
    Only a signature by one of those may be judged good without ssh-keygen (trust/sshsig.py), which
    reads every other option (validity times, certificate authorities, patterns) itself."""
    lines = {s.key: s for s in read()}  # the last line of each key, as trusted() takes it
    found = set()
    for key, signer in lines.items():
        if any(mark in signer.principals for mark in "*?!") or not signer.principals:
            continue
        if signer.options:
            name, _, listed = signer.options.partition("=")
            names = listed[1:-1].split(",") if len(listed) > 1 and listed[0] == listed[-1] == '"' else []
            # One option only (a second follows a comma outside the quotes), naming the namespace
            # itself, and no negated pattern (which would refuse it).
            if name.lower() != "namespaces" or '"' in listed[1:-1] or namespace not in names or "!" in listed:
                continue
        found.add(key)
    return found


def add(principals: str, key: str, comment: str = "") -> bool:
    """Trust ``key`` for ``principals``; False when it is trusted already."""
    if key in trusted():
        return False
    where = path()
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        before = where.read_text()
    except FileNotFoundError:
        before = ""
    if before and not before.endswith("\n"):
        before += "\n"
    line = f'{principals} namespaces="git" {key}' + (f" {comment}" if comment else "")
    atomic.write(where, before + line + "\n")
    where.chmod(0o600)
    return True


def principal_list(principals: str) -> list[str]:
    """The e-mail addresses a line names (git's comma-separated principals)."""
    return [p.strip().lower() for p in principals.split(",") if p.strip()]


def keys_of(email: str) -> list[str]:
    """The keys trusted for this e-mail address (named on their line, not by a pattern)."""
    wanted = email.strip().lower()
    return list(dict.fromkeys(s.key for s in read() if wanted in principal_list(s.principals)))


def remove(key: str) -> list[Signer]:
    """Stop trusting a key; the lines removed."""
    gone = [s for s in read() if s.key == key]
    if gone:
        numbers = {s.line for s in gone}
        lines = path().read_text().splitlines()
        kept = [text for number, text in enumerate(lines, 1) if number not in numbers]
        atomic.write(path(), "".join(line + "\n" for line in kept))
        path().chmod(0o600)
    return gone
