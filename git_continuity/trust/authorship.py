"""Who wrote each entry of a stream's state: the signer of the state commit that added the
entry's file (entries are one file each, so the commit that first added the file wrote the
entry; a merge's side entries belong to the side's commit that added them), or of the last
commit that changed its words (``WORDED``: the text, and who and where it says wrote it): an
edit is the editor's, never shown as the first writer's text. A change the tools make (a
thread's status, a claim withdrawn) leaves the words, and the writer, as they were.

Keys trusted for this user's own e-mail (``user.email`` in their own git config) are theirs:
what they signed on another machine is their own text here too.

The author name inside an entry, and the commit's author, are whatever the writer's
environment said (``GIT_AUTHOR_NAME``); the signature is not. So a reader that hands text to
an agent asks here whose key signed it: this user's own, a key trusted here (with the
e-mail the allowed-signers file gives it), or none trusted here (unsigned, a key not in the
file, a key removed from it since, history accepted as the trust baseline).

The entry→commit map is kept outside ``.git`` beside the signature cache
(``$XDG_CACHE_HOME/git-continuity/authors/<repository>/<stream>.map/``) with the tip it
was made at, so a read walks only the commits added since, and reads only the part of the
map that holds the entries it shows. Signatures are judged again on every read
(trust/signatures.py caches the good ones), so a key no longer trusted stops counting at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from git_continuity import atomic
from git_continuity import repo as git
from git_continuity.errors import UserError
from git_continuity.repo import Oid, Repo
from git_continuity.trust import signatures, signers, signing

ROOT = ".continuity"
PACKET = "packet.yaml"  # one file of several people's text: its blockers, next action and objective
_COMMIT = re.compile(r"[0-9a-f]{40}")
_BLOCKER = re.compile(rb"^\s*-\s*id:\s*['\"]?(b-[2-9a-hjkmnp-z]{6})", re.MULTILINE)
AUTHORED = ("claims", "threads", "journal", "handoffs", "objective")  # folders of entries people write
OWN, TRUSTED, LEFT_OUT = "own", "trusted", "left out"
# The fields of an entry a reader is shown as someone's words: an edit of one is the editor's.
WORDED = ("text", "title", "new", "old", "why", "note", "by", "added_by", "at", "added_at", "host")


@dataclass(frozen=True)
class Author:
    kind: str  # OWN, TRUSTED or LEFT_OUT
    commit: Oid  # the state commit that added the entry
    principals: str = ""  # the e-mail(s) the allowed-signers file trusts the key for
    fingerprint: str = ""  # the key's short fingerprint ("SHA256:…", or an OpenPGP key id)
    why: str = ""  # for LEFT_OUT: unsigned, untrusted or bad

    def to_json(self) -> dict[str, object]:
        return {
            "email": self.principals or None,
            "key": self.fingerprint or None,
            "trusted": self.kind != LEFT_OUT,
            "commit": self.commit,
        }


def cache_path(repo: Repo, stream: str) -> Path:
    """The folder of the entry→commit map: ``tip`` (the state commit it was made at), and
    the map in files by each key's kind (the journal's also by its last characters), so a
    read looks up the entries it shows, however many a year of work wrote (a million ids
    were 40 MB of JSON to read on every status)."""
    digest = hashlib.sha256(str(repo.common_dir).encode()).hexdigest()[:20]
    # "authors": the map since edits count (an "authorship" map of first writers is not reused).
    return signatures.cache_path().parent / "authors" / digest / f"{stream}.map"


def entry_id(path: str) -> str | None:
    """The entry id a state path holds (``…/20261130T101502.123456Z-j-k7m2qx.json`` and
    ``claims/c-k7m2qx.json`` hold ``j-k7m2qx`` and ``c-k7m2qx``); None for other files."""
    name = path.rsplit("/", 1)[-1]
    if path.removeprefix(f"{ROOT}/").split("/", 1)[0] not in AUTHORED or not name.endswith(".json"):
        return None
    parts = name.removesuffix(".json").split("-")
    return "-".join(parts[-2:]) if len(parts) >= 2 else None


def _shard_name(key: str) -> str:
    """A key's file: by its kind's letter, and for the journal, which a year fills, by its
    last two characters too: a status that shows every claim and five journal entries reads
    the claims' file and five of the journal's."""
    return (key[:1] + (key[-2:] if key.startswith("j-") else "")).encode().hex()


class _Map:
    """The entry→commit map kept on disk (cache_path): a key's last line counts (an edit's
    commit is written after its first writer's)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.shards: dict[str, dict[str, str]] = {}

    def tip(self) -> str | None:
        try:
            return (self.folder / "tip").read_text().strip() or None
        except OSError:
            return None

    def shard(self, key: str) -> dict[str, str]:
        name = _shard_name(key)
        if name not in self.shards:
            found: dict[str, str] = {}
            with contextlib.suppress(OSError):
                for line in (self.folder / name).read_text().splitlines():
                    key_found, _, commit = line.rpartition(" ")
                    found[key_found] = commit
            self.shards[name] = found
        return self.shards[name]

    def add(self, added: dict[str, str], edited: dict[str, str], tip: Oid) -> None:
        """Append what is new (a first writer only for a key not known yet, an editor
        always), then move the tip (a reader that sees the tip finds them)."""
        lines: dict[str, list[str]] = {}
        for key, commit in [*added.items(), *edited.items()]:
            shard = self.shard(key)
            if shard.get(key) != commit and (key in edited or key not in shard):
                shard[key] = commit
                lines.setdefault(_shard_name(key), []).append(f"{key} {commit}\n")
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs speed
            self.folder.mkdir(parents=True, exist_ok=True)
            for name, text in lines.items():
                with (self.folder / name).open("a") as f:
                    f.write("".join(text))
            atomic.write(self.folder / "tip", tip + "\n")

    def clear(self) -> None:
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)
        self.shards = {}


def added_by(repo: Repo, stream: str, tip: Oid, keys: Iterable[str]) -> dict[str, str]:
    """Each of these entry ids (or packet keys) found in the stream's history, and the
    commit that first added it (as read from the map: the caller checks the few it uses).
    The map is brought up to tip by walking only the state commits since its own tip."""
    book = _Map(cache_path(repo, stream))
    cached = book.tip()
    if cached != tip:
        since: Oid | None = None
        try:
            if cached and _COMMIT.fullmatch(cached) and git.has_commit(repo, Oid(cached)):
                since = Oid(cached) if git.is_ancestor(repo, Oid(cached), tip) else None
        except UserError:
            since = None
        if since is None:
            book.clear()  # no map, or one of a history rewritten since: the whole history is walked
        with contextlib.suppress(git.HistoryCut):  # the brief names a cut history; nothing is kept
            book.add(*_walked(repo, tip, since), tip)
    return {key: commit for key in keys if (commit := book.shard(key).get(key)) is not None}


def _walked(repo: Repo, tip: Oid, since: Oid | None) -> tuple[dict[str, str], dict[str, str]]:
    """The keys first added by the state commits between since and tip, and by which; and
    the keys whose words a later commit changed, and the last that did (the editor's now)."""
    added: dict[str, str] = {}
    edited: dict[str, str] = {}
    walked = git.paths_added(repo, tip, since, [f"{ROOT}/{f}" for f in AUTHORED], f"{ROOT}/{PACKET}")
    for commit, paths, edits, packet in walked:
        for path in paths:
            found = entry_id(path)
            if found is not None:
                added.setdefault(found, commit)
        for path, old, new in edits:
            found = entry_id(path)
            if found is not None and added.get(found) != commit and _reworded(repo, old, new):
                edited[found] = commit
        for key in packet_keys(git.blob(repo, packet) if packet else b""):
            added.setdefault(key, commit)
    return added, edited


def _reworded(repo: Repo, old: Oid, new: Oid) -> bool:
    """Whether a change of an entry's file changed its words (WORDED), or is one that does not
    read as an entry (then nothing says the words stayed)."""
    try:
        before, after = json.loads(git.blob(repo, old)), json.loads(git.blob(repo, new))
    except (ValueError, KeyError):
        return True
    if not isinstance(before, dict) or not isinstance(after, dict):
        return True
    return any(before.get(name) != after.get(name) for name in WORDED)


def packet_keys(text: bytes) -> list[str]:
    """What a packet holds that people write, as keys of the map: each blocker's id, and
    ``next_action:DIGEST`` and ``objective:DIGEST`` of those fields' lines as written (no
    YAML is parsed here: the same text has the same digest in every commit)."""
    keys = [m.group(1).decode() for m in _BLOCKER.finditer(text)]
    lines = text.splitlines()
    for name in ("next_action", "objective"):
        start = next((i for i, line in enumerate(lines) if line.startswith(name.encode() + b":")), None)
        if start is None:
            continue
        end = start + 1
        while end < len(lines) and lines[end][:1] in (b" ", b"\t"):  # the field's indented lines
            end += 1
        digest = hashlib.sha256(b"\n".join(lines[start:end])).hexdigest()[:16]
        keys.append(f"{name}:{digest}")
    return keys


def packet_now(repo: Repo, tip: Oid) -> dict[str, str]:
    """The keys of the packet at tip's next action and objective (``next_action``, ``objective``)."""
    oid = git.entry_oid(repo, git.commit_tree(repo, tip), f"{ROOT}/{PACKET}")
    found = packet_keys(git.blob(repo, oid)) if oid else []
    return {k.split(":")[0]: k for k in found if ":" in k}


def fingerprint(key: str) -> str:
    """A key's short fingerprint (signers.fingerprint)."""
    return signers.fingerprint(key)


def _is_own(own: str | None, key: str | None) -> bool:
    if own is None or key is None:
        return False
    if own == key:
        return True
    # An OpenPGP/X.509 key configured by id: gpg names the signing key by its fingerprint.
    return len(own) >= 8 and key.upper().endswith(own.upper().removeprefix("0X"))


def authors(repo: Repo, stream: str, tip: Oid, ids: Iterable[str]) -> dict[str, Author]:
    """Who wrote each of these entries (ids not found in the history are left out)."""
    added = added_by(repo, stream, tip, ids)
    commits = sorted(Oid(c) for c in set(added.values()) if _COMMIT.fullmatch(c))  # a thousand ids, a few commits
    verdicts = {v.commit: v for v in signatures.judge(repo, commits)}
    own = signing.own_public(repo)
    trusted = signers.trusted()
    checking = signing.enabled(repo)
    me = git.identity(repo).rsplit("<", 1)[-1].rstrip(">")
    mine = set(signers.keys_of(email)) if (email := git.user_config_value(repo, "user.email")) else set()
    found: dict[Oid, Author] = {}
    for commit in commits:
        v = verdicts[commit]
        if v.kind == signatures.GOOD and (_is_own(own, v.key) or v.key in mine):
            found[commit] = Author(OWN, commit)
        elif v.kind == signatures.GOOD and v.key is not None:
            found[commit] = Author(TRUSTED, commit, trusted.get(v.key, ""), fingerprint(v.key))
        elif v.kind == signatures.UNSIGNED and not checking and _author_email(repo, commit) == me:
            # Signing is off here (status says the state is not tamper-evident): nothing but
            # the commit's own word says whose an unsigned entry is.
            found[commit] = Author(OWN, commit)
        else:
            found[commit] = Author(LEFT_OUT, commit, "", fingerprint(v.key) if v.key else "", v.kind)
    return {i: author for i, c in added.items() if (author := found.get(Oid(c))) is not None}


def _author_email(repo: Repo, commit: Oid) -> str:
    author = git.commit_info(repo, commit).author
    return author.rsplit("<", 1)[-1].rstrip(">")


NAMED = {
    "journal": ("journal entry", "journal entries"),
    "claims": ("claim", "claims"),
    "threads": ("thread", "threads"),
    "handoffs": ("handoff", "handoffs"),
    "objective": ("objective change", "objective changes"),
}


def removed_between(repo: Repo, before: Oid, after: Oid) -> list[str]:
    """``2 journal entries removed by ada@example.com (abc1234)``: the entries each commit
    between before and after deleted, with the key that signed that commit (its e-mail where
    it is trusted here, "you" for this user's own)."""
    walked = git.paths_removed(repo, after, before, [f"{ROOT}/{f}" for f in AUTHORED])
    if not walked:
        return []
    verdicts = {v.commit: v for v in signatures.judge(repo, [c for c, _ in walked])}
    own, trusted = signing.own_public(repo), signers.trusted()
    said = []
    for commit, paths in walked:
        v = verdicts[commit]
        if v.kind == signatures.GOOD and _is_own(own, v.key):
            who = "you"
        elif v.kind == signatures.GOOD and v.key:
            who = trusted.get(v.key) or fingerprint(v.key)
        else:
            who = f"a commit {'not signed' if v.kind == signatures.UNSIGNED else 'no trusted key signed'}"
        counts: dict[str, int] = {}
        for path in paths:
            folder = path.removeprefix(f"{ROOT}/").split("/")[0]
            counts[folder] = counts.get(folder, 0) + 1
        for folder, n in counts.items():
            one, many = NAMED.get(folder, ("entry", "entries"))
            said.append(f"{n} {one if n == 1 else many} removed by {who} ({commit[:7]})")
    return said
