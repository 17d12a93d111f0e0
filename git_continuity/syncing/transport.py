"""The network, through the user's own git (their SSH agent, credential helpers, proxies)."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from git_continuity.repo import Repo


class TransportError(Exception):
    """git could not talk to the remote; the message is what git said."""


def failure(stderr: str, what: str) -> str:
    """What went wrong, in git's words: its first fatal:/error: line (its last line is often
    advice, "and the repository exists."), with the cause git was told before it, such as
    ``ssh: Could not resolve hostname …`` (``remote:`` lines are the server's, said apart)."""
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    at = next((i for i, line in enumerate(said) if line.startswith(("fatal:", "error:"))), None)
    if at is None:
        return said[-1] if said else what
    causes = [line for line in said[:at] if not line.startswith(("remote:", "hint:", "warning:"))]
    return said[at] + (f" ({'; '.join(causes[-2:])})" if causes else "")


# A server error (HTTP 5xx: a forge busy or restarting) is worth another try; a refusal, a
# missing repository or an unreachable host is not. Reads only: a push is judged per ref.
SERVER_ERROR = re.compile(r"returned error: 5\d\d|HTTP 5\d\d|\b50[234] (?:Bad Gateway|Service|Gateway)")
READ_TRIES = 3
READ_PAUSE = 0.5  # seconds before the second try, doubled before each later one


def _git(repo: Repo, args: list[str], timeout: float, given: str | None = None) -> str:
    """git ARGS for a read from a remote (ls-remote, fetch), tried again after a server error."""
    what = next(a for a in args if not a.startswith("-") and "=" not in a)
    for attempt in range(READ_TRIES):
        done = _run(repo, args, timeout, given)
        if done.returncode == 0:
            return done.stdout
        if attempt + 1 < READ_TRIES and SERVER_ERROR.search(done.stderr):
            time.sleep(READ_PAUSE * 2**attempt)
            continue
        break
    raise TransportError(failure(done.stderr, f"git {what} exited {done.returncode}"))


def remote_ref(repo: Repo, remote: str, refname: str, timeout: float) -> str | None:
    """Where ``refname`` points on the remote right now (None: the remote lacks it)."""
    out = _git(repo, ["ls-remote", "--", remote, refname], timeout)
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name == refname:
            return oid
    return None


def _run(repo: Repo, args: list[str], timeout: float, given: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}  # never hang on a password prompt
    try:
        return subprocess.run(
            ["git", f"--git-dir={repo.common_dir}", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            input=given,
            stdin=None if given is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise TransportError(f"git {args[0]} timed out after {timeout:g}s") from None


def list_refs(repo: Repo, remote: str, patterns: list[str], timeout: float) -> dict[str, str]:
    """The remote's refs matching the patterns, name -> object id, asked right now."""
    return _listing(_git(repo, ["ls-remote", "--", remote, *patterns], timeout))


def _listing(out: str) -> dict[str, str]:
    """What ``git ls-remote`` printed, name -> object id (a peeled tag's line left out)."""
    found = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name and not name.endswith("^{}"):
            found[name] = oid
    return found


def fetch(repo: Repo, remote: str, refspecs: list[str], timeout: float) -> None:
    """Fetch exactly these refspecs (no tags, FETCH_HEAD left alone: a state fetch must not
    change what a later ``git merge FETCH_HEAD`` of the user's would take; ``--refmap=``: no
    remote-tracking branch moved behind the user's back, as git would for a branch named)."""
    if refspecs:
        _git(repo, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--refmap=", remote, *refspecs], timeout)


def fetch_objects(repo: Repo, remote: str, oids: Sequence[str], timeout: float, *, filter: str | None = None) -> None:
    """Fetch these objects by id, as git fetches what a partial clone left out (no
    negotiation: the wanted objects are named), without the clone's filter unless one is given
    (``blob:none``: a tree and its subtrees, not their files)."""
    if not oids:
        return
    args = [
        "-c",
        "fetch.negotiationAlgorithm=noop",
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        f"--filter={filter}" if filter else "--no-filter",
        "--stdin",
        remote,
    ]
    _git(repo, args, timeout, "".join(f"{oid}\n" for oid in oids))


@dataclass(frozen=True)
class Pushed:
    """What the remote said of each ref of a push."""

    accepted: list[str]  # remote ref names now updated
    behind: list[str]  # refused because the remote moved: fetch, merge, retry
    refused: list[tuple[str, str]]  # refused for another reason: (ref, git's verdict, e.g. "[remote rejected] …")
    said: list[str]  # the server's own words (``remote:`` lines), for the refusal message


# `git push --porcelain` reasons that mean "the remote has what you do not have yet".
RETRYABLE = ("fetch first", "non-fast-forward", "stale info", "already exists")
# A server-side compare-and-swap lost to another push landing at the same moment (its
# receive-pack says "cannot lock ref 'refs/…': is at X but expected Y", older ones "failed
# to lock"): the same, one step later.
RACED = ("failed to update ref", "failed to lock", "incorrect old value", "cannot lock ref")
# ...but not a name that cannot be made there, whatever the retries: a ref where a folder of
# refs would go, or the other way ("'refs/heads/a' exists; cannot create 'refs/heads/a/b'").
CLASHES = ("exists; cannot create",)


def push(repo: Repo, remote: str, refspecs: list[str], timeout: float) -> Pushed:
    """Push without force: a ref the remote moved meanwhile is refused and named in ``behind``.

    ``--no-verify``: the user's pre-push hook guards their branches (tests, linters) and must
    not run, nor block, when only state refs move.
    """
    done = _run(repo, ["push", "--porcelain", "--no-verify", remote, *refspecs], timeout)
    said = [line for line in done.stderr.splitlines() if line.startswith("remote:") and line[7:].strip()]
    clash = {  # the server's words for a ref it cannot make, by the ref
        dst: line.removeprefix("remote:").strip()
        for line in said
        if any(c in line for c in CLASHES)
        for dst in (spec.partition(":")[2] for spec in refspecs)
        if dst and f"cannot lock ref '{dst}'" in line
    }
    accepted: list[str] = []
    behind: list[str] = []
    refused: list[tuple[str, str]] = []
    for line in done.stdout.splitlines():
        flag, _, rest = line.partition("\t")
        spec, _, summary = rest.partition("\t")
        if not spec or len(flag) != 1:
            continue
        dst = spec.partition(":")[2]
        if flag in " +-*=":
            accepted.append(dst)
        elif flag == "!" and (
            (summary.startswith("[rejected]") and any(r in summary for r in RETRYABLE))
            or (summary.startswith("[remote rejected]") and any(r in summary for r in RACED) and dst not in clash)
        ):
            behind.append(dst)
        elif flag == "!":
            refused.append((dst, clash.get(dst, summary)))
    if done.returncode != 0 and not (behind or refused):
        # No per-ref verdict: the push never got that far (unreachable, no permission).
        raise TransportError("\n".join([*said, failure(done.stderr, f"git push exited {done.returncode}")]))
    return Pushed(accepted, behind, refused, said)


# -- a fetch started now and waited for until a deadline (the fresh look at a session's start) --

CLOBBER = "(would clobber existing tag)"


@dataclass
class Started:
    """A ``git fetch`` or ``git ls-remote`` under way in a process group of its own, so that a
    remote that does not answer is ended whole (git, ssh or the remote helper it started) at
    the deadline."""

    remote: str
    process: subprocess.Popen[bytes]
    said: IO[bytes]  # where git writes its messages (a pipe left unread would stop it: a line a ref)
    listing: IO[bytes] | None = None  # where a listing writes the refs it found

    def close(self) -> None:
        for file in (self.said, self.listing):
            if file is not None:
                file.close()


@dataclass(frozen=True)
class Fetched:
    """How a started fetch or listing ended: ``failed`` is why it brought nothing (git's words,
    or the deadline), ``clobbered`` the tags that differ here from the remote's (left as they
    are), ``listed`` a listing's refs (name -> object id)."""

    remote: str
    failed: str | None
    clobbered: tuple[str, ...] = ()
    listed: Mapping[str, str] = field(default_factory=dict)


def _start(repo: Repo, remote: str, args: list[str], *, listing: bool) -> Started:
    # No prompt can hang it: GIT_TERMINAL_PROMPT for git's own, and a session without a
    # controlling terminal for ssh's (it fails instead of asking). Its output goes to files,
    # read once it ended: a pipe nobody reads stops git once it is full (a fetch says a line
    # for each ref it writes, a listing one for each ref there is).
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    said = tempfile.TemporaryFile()  # noqa: SIM115 (Started.close)
    out = tempfile.TemporaryFile() if listing else None  # noqa: SIM115 (Started.close)
    try:
        process = subprocess.Popen(
            ["git", "-c", "maintenance.auto=false", f"--git-dir={repo.common_dir}", *args],
            stdin=subprocess.DEVNULL,
            stdout=out if out is not None else subprocess.DEVNULL,
            stderr=said,
            env=env,
            start_new_session=True,
        )
    except OSError:
        said.close()
        if out is not None:
            out.close()
        raise
    return Started(remote, process, said, out)


def start_listing(repo: Repo, remote: str, patterns: Sequence[str] = ()) -> Started:
    """Start listing the remote's refs (``git ls-remote --refs``): one round trip, no object
    fetched, so that a fetch is started only for what moved. ``patterns``: only the refs whose
    names end as one of these does (git's own matching; none: every ref)."""
    return _start(repo, remote, ["ls-remote", "--refs", "--", remote, *patterns], listing=True)


def start_fetch(repo: Repo, remote: str, refspecs: list[str]) -> Started:
    """Start fetching exactly these refspecs (no automatic tags, no FETCH_HEAD, no remote-tracking
    branch moved but by a refspec named here, no maintenance started behind it, no walk to
    tell a forced update)."""
    args = ["fetch", "--no-tags", "--no-write-fetch-head", "--refmap=", "--no-auto-gc", "--no-show-forced-updates"]
    return _start(repo, remote, [*args, remote, *refspecs], listing=False)


END_WAIT = 0.05  # seconds a fetch ended at the deadline has to remove its lock files (git does it on SIGTERM)
POLL = 0.005  # seconds between looks at the fetches still running, where the kernel has no pidfd


def _end_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def finish_all(started: list[Started], deadline: float, bound: float) -> list[Fetched]:
    """Wait for started fetches until ``deadline`` (time.monotonic()), all at once; those still
    running then are ended with everything they started. ``bound`` is how long the look
    waits, for the words."""
    _wait(started, deadline)
    late = {id(s) for s in started if s.process.poll() is None}
    ended = []
    for s in started:
        if id(s) in late:
            _end(s.process)
            ended.append(Fetched(s.remote, f"did not answer within {bound:g} s"))
        else:
            ended.append(_ended(s))
        s.close()
    return ended


def _wait(started: list[Started], deadline: float) -> None:
    """Until every process ended or the deadline passed, woken as each one ends (a pidfd each:
    a look that polled every POLL seconds waited half of that more, on average, for nothing)."""
    import select

    fds: list[int] = []
    try:
        ends = select.poll()  # not select(): a process with 1,024 files open has pidfds past its reach
        for s in started:
            if s.process.poll() is None:
                fds.append(os.pidfd_open(s.process.pid))
                ends.register(fds[-1], select.POLLIN)  # a pidfd reads ready once its process ended
        while fds and (left := deadline - time.monotonic()) > 0:
            for fd, _ in ends.poll(left * 1000):
                ends.unregister(fd)
                fds.remove(fd)
                os.close(fd)
    except (AttributeError, OSError):  # not Linux, or before 5.3: looked at in turns
        _poll(started, deadline)
    finally:
        for fd in fds:
            os.close(fd)


def _poll(started: list[Started], deadline: float) -> None:
    running = list(started)
    while running and time.monotonic() < deadline:
        running = [s for s in running if s.process.poll() is None]
        if running:
            time.sleep(POLL)


def _end(process: subprocess.Popen[bytes]) -> None:
    import signal

    _end_group(process, signal.SIGTERM)  # git removes its lock files on SIGTERM
    try:
        process.communicate(timeout=END_WAIT)
    except subprocess.TimeoutExpired:
        _end_group(process, signal.SIGKILL)
        process.communicate()


def _ended(started: Started) -> Fetched:
    """How a fetch or a listing that ended by itself went."""
    process = started.process
    process.wait()
    started.said.seek(0)
    said = started.said.read().decode(errors="replace")
    if started.listing is not None:
        return _listed(started, said)
    clobbered = tuple(
        line.split("->")[0].split("]", 1)[1].strip() for line in said.splitlines() if CLOBBER in line and "]" in line
    )
    other = [line for line in said.splitlines() if line.strip() and CLOBBER not in line]
    if process.returncode != 0 and (not clobbered or any(line.startswith(("fatal:", "error:")) for line in other)):
        return Fetched(started.remote, failure(said, f"git fetch exited {process.returncode}"), clobbered)
    return Fetched(started.remote, None, clobbered)


def _listed(started: Started, said: str) -> Fetched:
    out = started.listing
    assert out is not None
    if started.process.returncode != 0:
        return Fetched(started.remote, failure(said, f"git ls-remote exited {started.process.returncode}"))
    out.seek(0)
    listed = _listing(out.read().decode(errors="replace"))  # a name not UTF-8 keeps U+FFFD: look.py passes it by
    return Fetched(started.remote, None, listed=listed)
