"""SSH signatures (OpenSSH's SSHSIG format, PROTOCOL.sshsig) made and checked in this process
for Ed25519 keys, with the ``cryptography`` package: a fleet's syncs check every other clone's
new commits, and each ``ssh-keygen`` started costs a process.

The armored blob holds the magic ``SSHSIG``, version 1, the public key, the namespace, a
reserved string, the hash algorithm and the signature (``ssh-ed25519`` and 64 bytes); what is
signed is ``SSHSIG`` + string(namespace) + string("") + string(hash name) + string(hash of the
payload). Ed25519 signatures are deterministic, so a signature made here is byte for byte the
one ``ssh-keygen -Y sign`` makes with the same key.

This is a fast path, never a judge of its own: ``check`` says True only for a well-formed
signature by exactly the given key, in the given namespace, that verifies; anything else
(another key type, an unusual armor, a bad signature) is for ``ssh-keygen -Y verify`` to judge,
so a refusal always has ssh-keygen's verdict and words. ``sign`` signs only with an
unencrypted Ed25519 key file; a key in an SSH agent, one with a passphrase, or another type is
for ssh-keygen.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path
from types import ModuleType

MAGIC = b"SSHSIG"
VERSION = 1
BEGIN, END = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
ED25519 = "ssh-ed25519"
HASHES = {b"sha512": hashlib.sha512, b"sha256": hashlib.sha256}
LINE = 70  # characters of base64 on each armor line, as ssh-keygen writes them
# What the helper imports before any command (helper_server.WARM): there, a check costs no import.
MODULES = ("cryptography.hazmat.primitives.asymmetric.ed25519", "cryptography.hazmat.primitives.serialization")
# In a process of its own, importing cryptography costs about what three ssh-keygen runs do.
WORTH_IMPORTING = 3


def loaded() -> bool:
    """Whether the crypto is imported already (in the helper), so using it costs nothing more."""
    return all(name in sys.modules for name in MODULES)


def warm() -> None:
    """Sign and check once with a throwaway key: the library's first use of a key costs 2.5 ms
    (its tables made), which the helper pays once instead of every command's copy."""
    crypto = _crypto()
    if crypto is not None:
        ed25519, _ = crypto
        key = ed25519.Ed25519PrivateKey.from_private_bytes(bytes(32))
        key.public_key().verify(key.sign(b""), b"")


def _crypto() -> tuple[ModuleType, ModuleType] | None:
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:  # pragma: no cover - a dependency; without it ssh-keygen does it all
        return None
    return ed25519, serialization


def _string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def signed_data(namespace: str, hash_name: bytes, payload: bytes) -> bytes:
    """The bytes an SSHSIG signature signs."""
    digest = HASHES[hash_name](payload).digest()
    return MAGIC + _string(namespace.encode()) + _string(b"") + _string(hash_name) + _string(digest)


def armor(blob: bytes) -> str:
    text = base64.b64encode(blob).decode()
    lines = [text[at : at + LINE] for at in range(0, len(text), LINE)]
    return BEGIN + "\n" + "\n".join(lines) + "\n" + END + "\n"


def _strings(data: bytes) -> list[bytes] | None:
    """The length-prefixed strings data is made of, every byte of it; None when it is not."""
    found, at = [], 0
    while at < len(data):
        if at + 4 > len(data):
            return None
        size = int.from_bytes(data[at : at + 4], "big")
        if at + 4 + size > len(data):
            return None
        found.append(data[at + 4 : at + 4 + size])
        at += 4 + size
    return found


def _public_blob(public: str) -> bytes | None:
    kind, _, text = public.partition(" ")
    if kind != ED25519:
        return None
    try:
        blob = base64.b64decode(text, validate=True)
    except ValueError:
        return None
    parts = _strings(blob)
    if parts is None or len(parts) != 2 or parts[0] != ED25519.encode() or len(parts[1]) != 32:
        return None
    return blob


def check(signature: bytes, payload: bytes, public: str, namespace: str) -> bool:
    """True when ``signature`` is an armored SSHSIG of ``payload`` by the Ed25519 key
    ``public`` ("ssh-ed25519 BASE64") in ``namespace`` that verifies; False otherwise, which
    means only that ssh-keygen is to judge it."""
    key_blob = _public_blob(public)
    crypto = _crypto() if key_blob is not None else None
    if key_blob is None or crypto is None:
        return False
    try:
        text = signature.decode("ascii")
        blob = base64.b64decode("".join(text.removeprefix(BEGIN).strip().removesuffix(END).split()), validate=True)
    except ValueError:
        return False
    if text not in (armor(blob), armor(blob).removesuffix("\n")):
        return False  # an armor ssh-keygen would not write: it judges that
    if blob[:6] != MAGIC or blob[6:10] != VERSION.to_bytes(4, "big"):
        return False
    parts = _strings(blob[10:])
    if parts is None or len(parts) != 5:
        return False
    signer, space, reserved, hash_name, sig_blob = parts
    sig = _strings(sig_blob)
    if (
        signer != key_blob
        or space != namespace.encode()
        or reserved
        or hash_name not in HASHES
        or sig is None
        or len(sig) != 2
        or sig[0] != ED25519.encode()
        or len(sig[1]) != 64
    ):
        return False
    ed25519, _ = crypto
    try:
        ed25519.Ed25519PublicKey.from_public_bytes(key_blob[-32:]).verify(
            sig[1], signed_data(namespace, hash_name, payload)
        )
    except Exception:  # cryptography's InvalidSignature, or a key it cannot read
        return False
    return True


def sign(private: Path, public: str, payload: bytes, namespace: str) -> str | None:
    """The armored SSHSIG (sha512) of ``payload`` with the key in the file ``private``, when
    it is an unencrypted Ed25519 key whose public half is ``public``; None when ssh-keygen is
    to sign (another key type, a passphrase, a file that does not read)."""
    key_blob = _public_blob(public)
    crypto = _crypto() if key_blob is not None else None
    if key_blob is None or crypto is None:
        return None
    ed25519, serialization = crypto
    try:
        key = serialization.load_ssh_private_key(private.read_bytes(), password=None)
    except Exception:  # unreadable, not a key, or one with a passphrase (ssh-keygen asks for it)
        return None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        return None
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    if raw != key_blob[-32:]:
        return None
    hash_name = b"sha512"
    signed = key.sign(signed_data(namespace, hash_name, payload))
    blob = MAGIC + VERSION.to_bytes(4, "big") + _string(key_blob) + _string(namespace.encode()) + _string(b"")
    blob += _string(hash_name) + _string(_string(ED25519.encode()) + _string(signed))
    return armor(blob)
