"""Signing state and notes commits, and judging a commit's signature.

A commit is signed the way git signs one (``git commit -S``), so ``git verify-commit`` and
``git log --show-signature`` check it too:

- with the user's own git signing key where one is configured (``user.signingKey``, in the
  format ``gpg.format`` names: ``ssh`` through ``gpg.ssh.program``, ``openpgp`` through
  ``gpg.program``, ``x509`` through ``gpg.x509.program``);
- else (or where ``continuity.signingKey`` is ``own``) with a per-user SSH Ed25519 key made on
  first write, outside ``.git``, in ``$XDG_CONFIG_HOME/git-continuity/signing_ed25519`` (mode
  0600), and trusted in the allowed-signers file (trust/signers.py) from the start.

The user's own SSH signing key (``user.signingKey`` in their own git config, never the
repository's) is theirs: it is trusted under their e-mail at its first use. A key that cannot
sign without a terminal (a passphrase no ssh-agent holds) would fail every write an agent
makes: ``unattended`` says so, naming the settings, for ``init`` to say at once.

``git config continuity.sign false`` turns signing and its checks off for one repository.
Signing never falls back silently: a configured program that is missing or fails refuses
the write, naming what to fix.
"""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Repo
from git_continuity.trust import signers, sshsig

CONFIG = "continuity.sign"
KEY_CONFIG = "continuity.signingKey"  # "own": git-continuity's own key, whatever user.signingKey says
NAMESPACE = "git"  # what git signs and verifies commits under (ssh-keygen -n)
TIMEOUT = 30.0
OFF = ("false", "no", "off", "0")
ON = ("true", "yes", "on", "1")


def enabled(repo: Repo) -> bool:
    """Whether state commits are signed and checked here (on unless continuity.sign says no)."""
    value = git.config_value(repo, CONFIG)
    if value is None or value.lower() in ON:
        return True
    if value.lower() in OFF:
        return False
    raise UserError(f"git config {CONFIG} is {value!r}: true or false (git config {CONFIG} false turns signing off)")


def arm(repo: Repo) -> None:
    """Decide how this repository's state and notes commits are signed (the key is looked
    for, or made, only when the first one is written)."""
    if repo.signer is not None:
        return
    if not enabled(repo):
        repo.signer = lambda content: None
        return
    repo.signer = lambda content: sign(repo, content)


@dataclass(frozen=True)
class Key:
    format: str  # ssh, openpgp, x509
    program: str
    key: str  # a key file, a literal "key::…" SSH key, or an OpenPGP/X.509 key id
    public: str | None  # "TYPE BASE64" for an SSH key
    here: bool = False  # a key file ssh-keygen would sign with, no program of the user's: trust/sshsig.py may


def own_key_path() -> Path:
    return signers.config_folder() / "signing_ed25519"


def writer_key(repo: Repo) -> Key:
    """The key state commits are signed with here: the user's git signing key, else this
    tool's own per-user key (made now if it does not exist yet)."""
    configured = None if _own_chosen(repo) else git.config_value(repo, "user.signingKey")
    if not configured:
        path = own_key(repo)
        return Key("ssh", "ssh-keygen", str(path), _public_of(path), here=True)
    form = (git.config_value(repo, "gpg.format") or "openpgp").lower()
    if form == "ssh":
        own_program = git.config_value(repo, "gpg.ssh.program")
        program = own_program or "ssh-keygen"
        _require_program(program, "gpg.ssh.program", "ssh-keygen (OpenSSH: apt-get install openssh-client)")
        if configured.startswith("key::"):
            public = signers.parse_key(configured.removeprefix("key::"))
        else:
            public = _public_of(Path(configured).expanduser())
        if public is None:
            raise UserError(
                f"user.signingKey ({configured}) is not an SSH key ssh-keygen can sign with (a key file, or key::TYPE"
                " BASE64); nothing was written.\nFix it with git config user.signingKey, or unset it to sign with"
                " git-continuity's own key"
            )
        return Key("ssh", program, configured, public, here=own_program is None and not configured.startswith("key::"))
    if form in ("openpgp", "x509"):
        key_name = "gpg.program" if form == "openpgp" else "gpg.x509.program"
        program = (
            (git.config_value(repo, "gpg.openpgp.program") if form == "openpgp" else None)
            or git.config_value(repo, key_name)
            or ("gpg" if form == "openpgp" else "gpgsm")
        )
        _require_program(program, key_name, "gpg (apt-get install gnupg)" if form == "openpgp" else "gpgsm")
        return Key(form, program, configured, None)
    raise UserError(f"git config gpg.format is {form!r}: git signs with ssh, openpgp or x509; nothing was written")


def _own_chosen(repo: Repo) -> bool:
    """Whether continuity.signingKey asks for git-continuity's own key (a value it does not
    know is refused, naming it)."""
    value = git.config_value(repo, KEY_CONFIG)
    if value is None:
        return False
    if value.lower() == "own":
        return True
    raise UserError(
        f"git config {KEY_CONFIG} is {value!r}: own (sign state with git-continuity's own key) or unset (sign"
        " with user.signingKey, as git does); nothing was written"
    )


def shell_signer(repo: Repo) -> str:
    """How the post-commit hook's shell signs the notes commit it makes (the fifth line of
    provenance.line): ``off`` (continuity.sign false), ``git`` (the user's git config names a
    signing key: ``git commit-tree -S`` signs as git would), ``key PATH`` (this tool's own
    key, through ``-c gpg.format=ssh -c user.signingKey=PATH``), or "" when there is no key
    yet (Python writes that note, and makes the key)."""
    if not enabled(repo):
        return "off"
    if git.config_value(repo, "user.signingKey") and not _own_chosen(repo):
        return "git"
    path = own_key_path()
    return f"key {path}" if path.is_file() and "\n" not in str(path) else ""


def own_public(repo: Repo) -> str | None:
    """This user's signing key as a verdict names it ("TYPE BASE64", or an OpenPGP/X.509 key
    id), from the user's own config only (the repository's is anyone's who holds ``.git``);
    never made here: None when there is none yet."""
    configured = git.user_config_value(repo, "user.signingKey")
    if not configured or (git.user_config_value(repo, KEY_CONFIG) or "").lower() == "own":
        return _public_of(own_key_path())
    if (git.user_config_value(repo, "gpg.format") or "openpgp").lower() != "ssh":
        return configured
    if configured.startswith("key::"):
        return signers.parse_key(configured.removeprefix("key::"))
    return _public_of(Path(configured).expanduser())


def _require_program(program: str, key: str, what: str) -> None:
    if shutil.which(program) is None:
        raise UserError(
            f"state commits are signed with {program}, which is not on this machine ({key}); nothing was written.\n"
            f"Install {what}, point git config {key} at it, or turn signing off for this repository:"
            f" git config {CONFIG} false"
        )


def _public_of(path: Path) -> str | None:
    pub = path if path.suffix == ".pub" else path.with_name(path.name + ".pub")
    try:
        return signers.parse_key(pub.read_text())
    except OSError:
        return None


def own_key(repo: Repo) -> Path:
    """This user's git-continuity key, made with ssh-keygen on first use; refused when other
    users could read or change it."""
    path = own_key_path()
    try:
        info = path.stat()
    except FileNotFoundError:
        return _make_key(repo, path)
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or info.st_uid != os.getuid():
        raise UserError(
            f"{path}: other users can read or change this signing key (mode {stat.S_IMODE(info.st_mode):04o});"
            f" nothing was written.\nFix: chmod 600 {path} (or remove it and its .pub: a new key is made, and"
            " teammates must trust the new one)"
        )
    if _public_of(path) is None:
        raise UserError(f"{path}.pub is missing or not an SSH public key; nothing was written.\nFix: remove {path}")
    return path


def _make_key(repo: Repo, path: Path) -> Path:
    import subprocess
    import tempfile

    _require_program("ssh-keygen", "the key is made with ssh-keygen", "ssh-keygen (apt-get install openssh-client)")
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    comment = f"git-continuity {git.identity(repo)}"
    with tempfile.TemporaryDirectory(dir=path.parent) as folder:
        made = Path(folder) / path.name
        done = subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(made)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise UserError(f"ssh-keygen could not make {path}: {done.stderr.strip()}; nothing was written")
        made.chmod(0o600)
        public = _public_of(made)
        assert public is not None
        os.replace(made.with_name(made.name + ".pub"), path.with_name(path.name + ".pub"))
        os.replace(made, path)  # the private key last: its presence says the pair is whole
    signers.add(email(repo), public, "git-continuity")
    return path


def email(repo: Repo) -> str:
    """This user's e-mail address, as their commits name it."""
    ident = git.identity(repo)
    return ident[ident.rfind("<") + 1 : -1] if ident.endswith(">") else ident


def sign(repo: Repo, content: bytes) -> str:
    """The armored signature of a commit's bytes, with the writer's key."""
    key = writer_key(repo)
    if key.format == "ssh":
        _require_trusted(repo, key)
        return _sign_ssh(key, content)
    return _sign_gpg(key, content)


def _require_trusted(repo: Repo, key: Key) -> None:
    """The writer's SSH key is trusted here, or is the user's own (their own git config names
    it: trusted now under their e-mail), or the write is refused."""
    if key.public is None or key.public in signers.trusted():
        return
    # Not where this process's environment names another global config (GIT_CONFIG_GLOBAL): a
    # command run with one of its own making must not trust a key by that alone.
    if key.public == own_public(repo) and not os.environ.get("GIT_CONFIG_GLOBAL"):
        signers.add(email(repo), key.public, "your git signing key (user.signingKey)")
        return
    raise UserError(
        f"state commits would be signed with {key.public[:40]}… (user.signingKey), which {signers.path()} does"
        " not trust, so no reader here would accept them; nothing was written.\n"
        + signers.persons_act("It is trusted", f"git continuity trust signer add {email(repo)} '{key.public}'")
    )


def _ssh_args(key: Key) -> tuple[list[str], str | None]:
    """ssh-keygen's arguments to sign with the key, and a literal public key to write to the
    file the last argument names (a key:: key, whose private half is in the SSH agent)."""
    args = [key.program, "-Y", "sign", "-n", NAMESPACE]
    if key.key.startswith("key::"):
        return [*args, "-U", "-f"], key.key.removeprefix("key::") + "\n"
    return [*args, "-f", str(Path(key.key).expanduser())], None


def _run_ssh(key: Key, content: bytes, alone: bool = False) -> Done:
    args, literal = _ssh_args(key)
    if literal is None:
        return run(args, content, alone)
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "key.pub").write_text(literal)
        return run([*args, str(Path(folder) / "key.pub")], content, alone)


def _sign_ssh(key: Key, content: bytes) -> str:
    if key.here and key.public is not None and sshsig.loaded():  # in the helper: no process
        made = sshsig.sign(Path(key.key).expanduser(), key.public, content, NAMESPACE)
        if made is not None:
            return made
    done = _run_ssh(key, content)
    if done.returncode != 0 or b"-----BEGIN SSH SIGNATURE-----" not in done.stdout:
        raise UserError(
            f"{key.program} could not sign the state commit with {key.key}: "
            f"{done.stderr.decode(errors='replace').strip()}; nothing was written" + _unattended_fix(key)
        )
    return done.stdout.decode()


def _run_gpg(key: Key, content: bytes, alone: bool = False) -> Done:
    return run([key.program, "--status-fd=2", "-bsau", key.key], content, alone)


def _sign_gpg(key: Key, content: bytes) -> str:
    done = _run_gpg(key, content)
    if done.returncode != 0 or b"[GNUPG:] SIG_CREATED " not in done.stderr:
        raise UserError(
            f"{key.program} could not sign the state commit with user.signingKey {key.key}: "
            f"{done.stderr.decode(errors='replace').strip()[-300:]}; nothing was written" + _unattended_fix(key)
        )
    return done.stdout.decode()


def _unattended_fix(key: Key) -> str:
    """The settings that let a write sign without a terminal (the user's key asks for a
    passphrase, and an agent has no terminal to type it)."""
    load = f"load it into ssh-agent (ssh-add {key.key})" if key.format == "ssh" else "let gpg-agent keep its passphrase"
    return (
        f".\nWithout a terminal a key that asks for its passphrase cannot sign: {load}, or sign state with"
        f" git-continuity's own key: git config --global {KEY_CONFIG} own"
    )


def unattended(repo: Repo) -> str | None:
    """Why a write with no terminal (an agent's) could not sign here, naming the settings, or
    None when it can: the user's own key is tried on a few bytes in a session of its own, as
    an agent's write would run it. git-continuity's own key needs no try."""
    if not enabled(repo):
        return None
    try:
        key = writer_key(repo)
    except UserError:
        return None  # the write itself refuses, naming what to fix
    if key.here and Path(key.key) == own_key_path():
        return None
    probe = b"git-continuity: can this key sign without a terminal?\n"
    if key.format == "ssh":
        done, good = _run_ssh(key, probe, alone=True), b"-----BEGIN SSH SIGNATURE-----"
        made = good in done.stdout
    else:
        done = _run_gpg(key, probe, alone=True)
        made = b"[GNUPG:] SIG_CREATED " in done.stderr
    if done.returncode == 0 and made:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    return (
        f"user.signingKey ({key.key}) cannot sign without a terminal here ({said[-1] if said else 'it failed'}),"
        " so every state write an agent makes would be refused" + _unattended_fix(key)
    )


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: bytes
    stderr: bytes


def run(args: list[str], data: bytes, alone: bool = False) -> Done:
    """Run a signing program with data on its standard input, as subprocess.run would, but
    with os.posix_spawnp: every write signs, and the subprocess module would add its import
    to each one. The program's output (a signature, a line of status) is small, so it is
    read after all of the input is written. ``alone``: in a session of its own, without
    this process's terminal (as an agent's write runs it)."""
    ends = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read end, write end)
    child = [ends[0][0], ends[1][1], ends[2][1]]
    actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, fd, number) for number, fd in enumerate(child)]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for pair in ends for fd in pair]
    try:
        pid = os.posix_spawnp(args[0], args, os.environ, file_actions=actions, setsid=alone)
    except OSError as error:
        for pair in ends:
            for fd in pair:
                os.close(fd)
        return Done(127, b"", str(error).encode())
    for fd in child:
        os.close(fd)
    # A program that ends without reading all of it: its status and stderr say why.
    with contextlib.suppress(BrokenPipeError):
        view = memoryview(data)
        while view:
            view = view[os.write(ends[0][1], view) :]
    os.close(ends[0][1])
    with open(ends[1][0], "rb") as stdout, open(ends[2][0], "rb") as stderr:
        out, err = stdout.read(), stderr.read()
    return Done(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), out, err)


def signature_key(signature: bytes) -> str | None:
    """The public key (``TYPE BASE64``) an SSH signature names, or None when the signature
    is not an SSH one or does not parse."""
    text = signature.decode(errors="replace").strip()
    head, tail = "-----BEGIN SSH SIGNATURE-----", "-----END SSH SIGNATURE-----"
    if not (text.startswith(head) and text.endswith(tail)):
        return None
    try:
        blob = base64.b64decode("".join(text[len(head) : -len(tail)].split()), validate=True)
    except ValueError:
        return None
    if blob[:6] != b"SSHSIG" or len(blob) < 14:
        return None
    size = int.from_bytes(blob[10:14], "big")
    public = blob[14 : 14 + size]
    if len(public) != size or len(public) < 4:
        return None
    kind = public[4 : 4 + int.from_bytes(public[:4], "big")].decode(errors="replace")
    return signers.parse_key(f"{kind} {base64.b64encode(public).decode()}")
