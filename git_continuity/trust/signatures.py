"""Judging state commits' signatures: good (by a key this user trusts), unsigned, by a key
not trusted here, or one that does not verify. Good verdicts are kept by commit id in the
user's cache folder (outside ``.git``: ``$XDG_CACHE_HOME/git-continuity/signatures``), each
with the key that made it, so a read checks only commits it has not seen and a key no longer
trusted stops counting at once.

SSH signatures are checked with ``ssh-keygen -Y verify`` against the allowed-signers file
(trust/signers.py); OpenPGP and X.509 ones with the program the user's own git config names
(``gpg.program``, ``gpg.x509.program``; never the repository's config, which anything
holding ``.git`` can change), trusted when gpg says the key is fully trusted.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import signers, signing, sshsig

GOOD, UNSIGNED, UNTRUSTED, BAD = "good", "unsigned", "untrusted", "bad"


@dataclass(frozen=True)
class Verdict:
    commit: Oid
    kind: str  # GOOD, UNSIGNED, UNTRUSTED or BAD
    key: str | None = None  # "ssh-ed25519 AAAA…", or an OpenPGP/X.509 key id
    detail: str = ""


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "git-continuity" / "signatures"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:20]


def _cached() -> set[str]:
    try:
        return set(cache_path().read_text().splitlines())
    except OSError:
        return set()


def remember(verdicts: Sequence[Verdict]) -> None:
    """Keep good verdicts (appended: racing readers each add their lines)."""
    lines = [f"{v.commit} {_digest(v.key)}" for v in verdicts if v.kind == GOOD and v.key]
    if not lines:
        return
    try:
        cache_path().parent.mkdir(parents=True, exist_ok=True)
        with cache_path().open("a") as f:
            f.write("\n".join(lines) + "\n")
    except OSError:
        pass  # a cache that cannot be written only costs speed


def judge(repo: Repo, commits: Sequence[Oid]) -> list[Verdict]:
    """The verdict on each commit, in order; commits not seen before are checked in parallel."""
    trusted = signers.trusted()
    cached = _cached()
    found: dict[Oid, Verdict] = {}
    pending: list[tuple[Oid, bytes, bytes, str]] = []
    for oid in commits:
        signed = git.commit_signature(repo, oid)
        if signed is None:
            found[oid] = Verdict(oid, UNSIGNED)
            continue
        signature, payload = signed
        if not signature.lstrip().startswith(b"-----BEGIN SSH SIGNATURE-----"):
            pending.append((oid, signature, payload, ""))
            continue
        key = signing.signature_key(signature)
        if key is None:
            found[oid] = Verdict(oid, BAD, None, "its SSH signature does not parse")
        elif key not in trusted:
            found[oid] = Verdict(oid, UNTRUSTED, key)
        elif f"{oid} {_digest(key)}" in cached:
            found[oid] = Verdict(oid, GOOD, key)
        else:
            pending.append((oid, signature, payload, key))
    here = _checked_here(pending)
    pending = [p for p in pending if p[0] not in here]
    found.update(here)
    if pending:
        from concurrent.futures import ThreadPoolExecutor  # only when there is something new to check

        with ThreadPoolExecutor(max_workers=min(4, len(pending))) as pool:
            for verdict in pool.map(lambda p: _check(repo, p[0], p[1], p[2], p[3], trusted), pending):
                found[verdict.commit] = verdict
    remember([*here.values(), *(found[p[0]] for p in pending)])
    return [found[oid] for oid in commits]


def _checked_here(pending: list[tuple[Oid, bytes, bytes, str]]) -> dict[Oid, Verdict]:
    """Judge good here, without ssh-keygen, the Ed25519 signatures that verify by a key the
    allowed-signers file plainly trusts (trust/sshsig.py): where the crypto is imported already (the
    helper), or where enough are new that importing it costs less than the ssh-keygen runs it
    saves. The others (and any that does not verify here: ssh-keygen gives the verdict and its
    words) are left for ssh-keygen."""
    ed25519 = [p for p in pending if p[3].startswith(sshsig.ED25519 + " ")]
    if not ed25519 or not (sshsig.loaded() or len(ed25519) >= sshsig.WORTH_IMPORTING):
        return {}
    plain = signers.plain(signing.NAMESPACE)
    return {
        oid: Verdict(oid, GOOD, key)
        for oid, signature, payload, key in ed25519
        if key in plain and sshsig.check(signature, payload, key, signing.NAMESPACE)
    }


def _check(repo: Repo, oid: Oid, signature: bytes, payload: bytes, key: str, trusted: dict[str, str]) -> Verdict:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        sig_file = Path(folder) / "signature"
        sig_file.write_bytes(signature)
        if key:
            return _check_ssh(oid, sig_file, payload, key, trusted[key])
        return _check_gpg(repo, oid, signature, sig_file, payload)


def _check_ssh(oid: Oid, sig_file: Path, payload: bytes, key: str, principals: str) -> Verdict:
    if shutil.which("ssh-keygen") is None:
        raise UserError(
            f"commit {oid[:7]} is signed with an SSH key, and ssh-keygen is not on this machine to check it;"
            " nothing was read.\nInstall it (apt-get install openssh-client), or turn signing and its checks off"
            f" for this repository: git config {signing.CONFIG} false"
        )
    principal = principals.split(",")[0]
    args = ["ssh-keygen", "-Y", "verify", "-f", str(signers.path()), "-I", principal, "-n", signing.NAMESPACE]
    done = subprocess.run([*args, "-s", str(sig_file)], input=payload, capture_output=True, timeout=signing.TIMEOUT)
    if done.returncode == 0:
        return Verdict(oid, GOOD, key)
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return Verdict(oid, BAD, key, f"ssh-keygen: {said[-1]}" if said else "ssh-keygen says it does not verify")


def _check_gpg(repo: Repo, oid: Oid, signature: bytes, sig_file: Path, payload: bytes) -> Verdict:
    x509 = b"-----BEGIN SIGNED MESSAGE-----" in signature
    key_name = "gpg.x509.program" if x509 else "gpg.program"
    program = git.user_config_value(repo, key_name) or ("gpgsm" if x509 else "gpg")
    if shutil.which(program) is None:
        raise UserError(
            f"commit {oid[:7]} is signed with {'X.509' if x509 else 'OpenPGP'}, and {program} is not on this"
            f" machine to check it ({key_name}); nothing was read.\nInstall it, or turn signing and its checks off"
            f" for this repository: git config {signing.CONFIG} false"
        )
    done = subprocess.run(
        [program, "--status-fd=1", "--verify", str(sig_file), "-"],
        input=payload,
        capture_output=True,
        timeout=signing.TIMEOUT,
    )
    status = done.stdout.decode(errors="replace")
    key = next((line.split()[2] for line in status.splitlines() if line.startswith("[GNUPG:] VALIDSIG ")), None)
    if done.returncode != 0 or key is None:
        return Verdict(oid, BAD, key, "gpg says the signature does not verify")
    if "[GNUPG:] TRUST_FULLY" not in status and "[GNUPG:] TRUST_ULTIMATE" not in status:
        return Verdict(oid, UNTRUSTED, key)
    return Verdict(oid, GOOD, key)
