"""Ed25519 SSH signatures made and checked in-process (trust/sshsig.py): a signature made here is
ssh-keygen's own, byte for byte, and git and ssh-keygen verify it; a check here says good only
where ssh-keygen says good, and leaves every refusal to ssh-keygen, which is compared here
case by case (wrong namespace, wrong key, altered payload, a bad signature blob)."""

from __future__ import annotations

import base64
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import git, signing_key
from helper_harness import listening

from git_continuity.trust import signers, sshsig

PAYLOAD = b"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\n\nstate\n"


def keypair(folder: Path, name: str) -> tuple[Path, str]:
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    return path, " ".join(path.with_name(f"{name}.pub").read_text().split()[:2])


def keygen_sign(key: Path, payload: bytes, namespace: str = "git") -> bytes:
    return subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-n", namespace, "-f", str(key)], input=payload, capture_output=True, check=True
    ).stdout


def keygen_verdict(folder: Path, public: str, signature: bytes, payload: bytes) -> bool:
    """ssh-keygen's own verdict, as trust/signatures.py asks for it."""
    allowed = folder / "allowed"
    allowed.write_text(f'ada@example.com namespaces="git" {public}\n')
    (folder / "sig").write_bytes(signature)
    done = subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            str(allowed),
            "-I",
            "ada@example.com",
            "-n",
            "git",
            "-s",
            str(folder / "sig"),
        ],
        input=payload,
        capture_output=True,
    )
    return done.returncode == 0


def test_a_signature_made_here_is_ssh_keygens_byte_for_byte_and_ssh_keygen_verifies_it(tmp_path: Path) -> None:
    key, public = keypair(tmp_path, "ada")
    made = sshsig.sign(key, public, PAYLOAD, "git")
    assert made is not None
    assert made.encode() == keygen_sign(key, PAYLOAD)
    assert keygen_verdict(tmp_path, public, made.encode(), PAYLOAD)
    assert sshsig.check(made.encode(), PAYLOAD, public, "git")


def test_a_key_with_a_passphrase_another_type_or_another_public_half_is_left_to_ssh_keygen(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret", "-f", str(locked)], check=True)
    locked_public = " ".join(locked.with_name("locked.pub").read_text().split()[:2])
    assert sshsig.sign(locked, locked_public, PAYLOAD, "git") is None
    rsa = tmp_path / "rsa"
    subprocess.run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)], check=True)
    rsa_public = " ".join(rsa.with_name("rsa.pub").read_text().split()[:2])
    assert sshsig.sign(rsa, rsa_public, PAYLOAD, "git") is None
    rsa_signature = keygen_sign(rsa, PAYLOAD)
    assert keygen_verdict(tmp_path, rsa_public, rsa_signature, PAYLOAD)
    assert not sshsig.check(rsa_signature, PAYLOAD, rsa_public, "git")  # good, and still ssh-keygen's to say
    key, _ = keypair(tmp_path, "ada")
    _, other = keypair(tmp_path, "bea")
    assert sshsig.sign(key, other, PAYLOAD, "git") is None
    assert sshsig.sign(tmp_path / "missing", other, PAYLOAD, "git") is None


def _blob(signature: bytes) -> bytes:
    lines = signature.decode().strip().splitlines()
    return base64.b64decode("".join(lines[1:-1]))


def _reblob(change: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    return lambda signature: sshsig.armor(change(_blob(signature))).encode()


def _flip_last(blob: bytes) -> bytes:
    return blob[:-1] + bytes([blob[-1] ^ 1])


CASES: dict[str, Callable[[Path, Path, str, str], tuple[bytes, bytes, str]]] = {
    # Each: (signature, payload, the key it is checked against).
    "good": lambda folder, key, public, other: (keygen_sign(key, PAYLOAD), PAYLOAD, public),
    "wrong namespace": lambda folder, key, public, other: (keygen_sign(key, PAYLOAD, "file"), PAYLOAD, public),
    "wrong key": lambda folder, key, public, other: (keygen_sign(key, PAYLOAD), PAYLOAD, other),
    "altered payload": lambda folder, key, public, other: (keygen_sign(key, PAYLOAD), PAYLOAD + b"more\n", public),
    "a bad signature": lambda folder, key, public, other: (
        _reblob(_flip_last)(keygen_sign(key, PAYLOAD)),
        PAYLOAD,
        public,
    ),
    "version 2": lambda folder, key, public, other: (
        _reblob(lambda b: b[:6] + (2).to_bytes(4, "big") + b[10:])(keygen_sign(key, PAYLOAD)),
        PAYLOAD,
        public,
    ),
    "bytes after the signature": lambda folder, key, public, other: (
        _reblob(lambda b: b + b"\0\0\0\0")(keygen_sign(key, PAYLOAD)),
        PAYLOAD,
        public,
    ),
    "a cut blob": lambda folder, key, public, other: (
        _reblob(lambda b: b[:-20])(keygen_sign(key, PAYLOAD)),
        PAYLOAD,
        public,
    ),
    "armor with a broken line": lambda folder, key, public, other: (
        keygen_sign(key, PAYLOAD).replace(b"\n", b"\n!", 2),
        PAYLOAD,
        public,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_check_here_says_good_exactly_where_ssh_keygen_does(case: str, tmp_path: Path) -> None:
    key, public = keypair(tmp_path, "ada")
    _, other = keypair(tmp_path, "bea")
    signature, payload, checked = CASES[case](tmp_path, key, public, other)
    theirs = keygen_verdict(tmp_path, checked, signature, payload)
    assert theirs == (case == "good")
    assert sshsig.check(signature, payload, checked, "git") == theirs


def test_only_a_plainly_trusted_key_is_judged_here(tmp_path: Path) -> None:
    """Validity times, a certificate authority, patterns or a negated namespace: ssh-keygen
    reads those options itself, so a signature by such a key is left to it."""
    keys = [keypair(tmp_path, f"k{n}")[1] for n in range(7)]
    signers.path().parent.mkdir(parents=True, exist_ok=True)
    signers.path().write_text(
        f'ada@example.com namespaces="git" {keys[0]}\n'
        f"bea@example.com {keys[1]}\n"
        f'cy@example.com namespaces="file,git" {keys[2]}\n'
        f'dee@example.com namespaces="git",valid-after="20990101" {keys[3]}\n'
        f"*@example.com {keys[4]}\n"
        f'eve@example.com namespaces="file" {keys[5]}\n'
        f"fay@example.com cert-authority {keys[6]}\n"
    )
    os.chmod(signers.path(), 0o600)
    assert signers.plain("git") == set(keys[:3])


def test_a_state_written_through_the_helper_is_signed_without_ssh_keygen_and_git_verifies_it(
    repo: Path, tmp_path: Path
) -> None:
    """An ssh-keygen that refuses to sign is first on PATH: the write in the helper signs
    in-process, and git verify-commit, git log --show-signature and ssh-keygen accept it."""
    subprocess.run(["git", "continuity", "init"], cwd=repo, check=True, capture_output=True)  # makes the key
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ssh-keygen").write_text('#!/bin/sh\ncase "$*" in *"-Y sign"*) exit 1;; esac\nexec ssh-keygen.real "$@"\n')
    (shim / "ssh-keygen").chmod(0o755)
    real = subprocess.run(["sh", "-c", "command -v ssh-keygen"], capture_output=True, text=True).stdout.strip()
    os.symlink(real, shim / "ssh-keygen.real")
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "GIT_CONTINUITY_HELPER": "1"}
    refused = subprocess.run(
        ["git", "continuity", "journal", "add", "in its own process"],
        cwd=repo,
        env={**env, "GIT_CONTINUITY_HELPER": "0"},
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "could not sign the state commit" in refused.stderr
    subprocess.run(["git", "continuity", "status"], cwd=repo, env=env, capture_output=True, start_new_session=True)
    listening(repo)
    for n in range(2):
        done = subprocess.run(
            ["git", "continuity", "journal", "add", f"entry {n}"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            start_new_session=True,
        )
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
    allowed = signers.path()
    verified = subprocess.run(
        ["git", "-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-commit", "-v", "refs/continuity/main"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert verified.returncode == 0, verified.stderr
    assert 'Good "git" signature for ada@example.com with ED25519 key' in verified.stderr
    shown = git(
        repo, "-c", f"gpg.ssh.allowedSignersFile={allowed}", "log", "--show-signature", "-2", "refs/continuity/main"
    )
    assert shown.count('Good "git" signature for ada@example.com') == 2
    signed = git(repo, "cat-file", "commit", "refs/continuity/main").encode()
    head, _, message = signed.partition(b"\n\n")
    lines = head.split(b"\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(b"gpgsig "))
    end = next((i for i in range(at + 1, len(lines)) if not lines[i].startswith(b" ")), len(lines))
    signature = b"\n".join([lines[at][7:], *(line[1:] for line in lines[at + 1 : end])]) + b"\n"
    payload = b"\n".join(lines[:at] + lines[end:]) + b"\n\n" + message + b"\n"
    public = " ".join(signing_key().with_name("signing_ed25519.pub").read_text().split()[:2])
    assert keygen_verdict(tmp_path, public, signature, payload)


def test_a_sync_in_the_helper_checks_a_teammates_new_commits_without_ssh_keygen(
    remote_and_clone: tuple[Path, Path], tmp_path: Path
) -> None:
    """Another clone's new state commits, taken in by a sync in the helper while an
    ssh-keygen that refuses every check is first on PATH: each is checked in-process and the
    sync takes them in. A process of its own with one new commit asks ssh-keygen (which
    refuses here: the pull says so and takes nothing in)."""
    remote, ada = remote_and_clone
    own = {**os.environ, "GIT_CONTINUITY_HELPER": "0"}
    for args in (["init"], ["push"]):
        subprocess.run(["git", "continuity", *args], cwd=ada, env=own, check=True, capture_output=True)
    bea = tmp_path / "bea"
    git(tmp_path, "clone", "-q", str(remote), str(bea))
    subprocess.run(["git", "continuity", "pull"], cwd=bea, env=own, check=True, capture_output=True)
    subprocess.run(["git", "continuity", "journal", "add", "from ada 0"], cwd=ada, env=own, check=True)
    subprocess.run(["git", "continuity", "push"], cwd=ada, env=own, check=True, capture_output=True)
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "ssh-keygen").write_text('#!/bin/sh\necho "refused by the test" >&2\nexit 255\n')
    (shim / "ssh-keygen").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}", "GIT_CONTINUITY_HELPER": "1"}
    alone = subprocess.run(
        ["git", "continuity", "pull"],
        cwd=bea,
        env={**env, "GIT_CONTINUITY_HELPER": "0"},
        capture_output=True,
        text=True,
    )
    assert alone.returncode == 1 and "with a signature that does not verify (ssh-keygen: refused by the test;" in (
        alone.stdout
    ), alone.stdout
    for n in (1, 2):
        subprocess.run(["git", "continuity", "journal", "add", f"from ada {n}"], cwd=ada, env=own, check=True)
    subprocess.run(["git", "continuity", "push"], cwd=ada, env=own, check=True, capture_output=True)
    subprocess.run(["git", "continuity", "status"], cwd=bea, env=env, capture_output=True, start_new_session=True)
    listening(bea)
    done = subprocess.run(
        ["git", "continuity", "sync"], cwd=bea, env=env, capture_output=True, text=True, start_new_session=True
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    shown = subprocess.run(["git", "continuity", "journal"], cwd=bea, env=own, capture_output=True, text=True).stdout
    assert all(f"from ada {n}" in shown for n in range(3)), shown
