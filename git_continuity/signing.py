"""Signing state and notes commits, and judging a commit's signature.

A commit is signed the way git signs one (``git commit -S``), so ``git verify-commit`` and
``git log --show-signature`` check it too:

- with the user's own git signing key where one is configured (``user.signingKey``, in the
  format ``gpg.format`` names: ``ssh`` through ``gpg.ssh.program``, ``openpgp`` through
  ``gpg.program``, ``x509`` through ``gpg.x509.program``);
- else with a per-user SSH Ed25519 key made on first write, outside ``.git``, in
  ``$XDG_CONFIG_HOME/git-continuity/signing_ed25519`` (mode 0600), and trusted in the
  allowed-signers file (signers.py) from the start.

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
from git_continuity import signers, sshsig
from git_continuity.errors import UserError
from git_continuity.repo import Repo

CONFIG = "continuity.sign"
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
    here: bool = False  # a key file ssh-keygen would sign with, no program of the user's: sshsig.py may


def own_key_path() -> Path:
    return signers.config_folder() / "signing_ed25519"


def writer_key(repo: Repo) -> Key:
    """The key state commits are signed with here: the user's git signing key, else this
    tool's own per-user key (made now if it does not exist yet)."""
    configured = git.config_value(repo, "user.signingKey")
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


def shell_signer(repo: Repo) -> str:
    """How the post-commit hook's shell signs the notes commit it makes (the fifth line of
    provenance.line): ``off`` (continuity.sign false), ``git`` (the user's git config names a
    signing key: ``git commit-tree -S`` signs as git would), ``key PATH`` (this tool's own
    key, through ``-c gpg.format=ssh -c user.signingKey=PATH``), or "" when there is no key
    yet (Python writes that note, and makes the key)."""
    if not enabled(repo):
        return "off"
    if git.config_value(repo, "user.signingKey"):
        return "git"
    path = own_key_path()
    return f"key {path}" if path.is_file() and "\n" not in str(path) else ""


def own_public(repo: Repo) -> str | None:
    """This user's signing key as a verdict names it ("TYPE BASE64", or an OpenPGP/X.509 key
    id), from the user's own config only (the repository's is anyone's who holds ``.git``);
    never made here: None when there is none yet."""
    configured = git.user_config_value(repo, "user.signingKey")
    if not configured:
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
    signers.add(_email(repo), public, "git-continuity")
    return path


def _email(repo: Repo) -> str:
    ident = git.identity(repo)
    return ident[ident.rfind("<") + 1 : -1] if ident.endswith(">") else ident


def sign(repo: Repo, content: bytes) -> str:
    """The armored signature of a commit's bytes, with the writer's key."""
    key = writer_key(repo)
    if key.format == "ssh":
        if key.public is not None and key.public not in signers.trusted():
            raise UserError(
                f"state commits would be signed with {key.public[:40]}…, which {signers.path()} does not trust, so"
                " no reader here would accept them; nothing was written.\n"
                f"Trust it: git continuity trust signer add {_email(repo)} '{key.public}'"
            )
        return _sign_ssh(key, content)
    return _sign_gpg(key, content)


def _sign_ssh(key: Key, content: bytes) -> str:
    if key.here and key.public is not None and sshsig.loaded():  # in the helper: no process
        made = sshsig.sign(Path(key.key).expanduser(), key.public, content, NAMESPACE)
        if made is not None:
            return made
    args = [key.program, "-Y", "sign", "-n", NAMESPACE]
    if key.key.startswith("key::"):
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            literal = Path(folder) / "key.pub"
            literal.write_text(key.key.removeprefix("key::") + "\n")
            done = run([*args, "-U", "-f", str(literal)], content)  # the private half is in the SSH agent
    else:
        done = run([*args, "-f", str(Path(key.key).expanduser())], content)
    if done.returncode != 0 or b"-----BEGIN SSH SIGNATURE-----" not in done.stdout:
        raise UserError(
            f"{key.program} could not sign the state commit with {key.key}: "
            f"{done.stderr.decode(errors='replace').strip()}; nothing was written"
        )
    return done.stdout.decode()


def _sign_gpg(key: Key, content: bytes) -> str:
    done = run([key.program, "--status-fd=2", "-bsau", key.key], content)
    if done.returncode != 0 or b"[GNUPG:] SIG_CREATED " not in done.stderr:
        raise UserError(
            f"{key.program} could not sign the state commit with user.signingKey {key.key}: "
            f"{done.stderr.decode(errors='replace').strip()[-300:]}; nothing was written"
        )
    return done.stdout.decode()


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: bytes
    stderr: bytes


def run(args: list[str], data: bytes) -> Done:
    """Run a signing program with data on its standard input, as subprocess.run would, but
    with os.posix_spawnp: every write signs, and the subprocess module would add its import
    to each one. The program's output (a signature, a line of status) is small, so it is
    read after all of the input is written."""
    ends = [os.pipe() for _ in range(3)]  # stdin, stdout, stderr: (read end, write end)
    child = [ends[0][0], ends[1][1], ends[2][1]]
    actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, fd, number) for number, fd in enumerate(child)]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for pair in ends for fd in pair]
    try:
        pid = os.posix_spawnp(args[0], args, os.environ, file_actions=actions)
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
