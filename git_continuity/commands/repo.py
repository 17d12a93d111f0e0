"""repo add|set-path|list|remove: the other repositories a stream spans (store/siblings.py)."""

from __future__ import annotations

from pathlib import Path

from git_continuity import store
from git_continuity.clone import session
from git_continuity.errors import UserError
from git_continuity.model import now, parse_handle, stamp, to_json
from git_continuity.render import text as render
from git_continuity.repo import Repo
from git_continuity.store import siblings


def _listed(snap: store.Snapshot, name: str) -> siblings.Sibling:
    listed = {s.name: s for s in siblings.read(snap)}
    if name not in listed:
        known = ", ".join(sorted(listed)) or "none"
        raise UserError(
            f"no sibling {name!r} in stream '{snap.stream}' (siblings: {known}); "
            f"add it: git continuity repo add {name} PATH"
        )
    return listed[name]


def _open(repo: Repo, snap: store.Snapshot, name: str, path: str) -> Repo:
    """The sibling's repository at ``path``: a repository's top folder, not this one, not
    already another sibling here, and not listing this repository back (a cycle)."""
    there = siblings.open_at(repo, Path(path), name)
    paths = siblings.local_paths(repo)
    for other in siblings.read(snap):
        found = siblings.locate(repo, other, paths) if other.name != name else None
        if found is not None and found.repo is not None and found.repo.common_dir == there.common_dir:
            raise UserError(f"sibling {name}: {path} is already sibling {other.name} here ({found.path})")
    chain = siblings.find_cycle(repo, name, there, snap.stream)
    if chain is not None:
        raise UserError(
            f"sibling {name}: its own stream '{snap.stream}' lists this repository back "
            f"({' -> '.join(chain[:-1])} -> here, as {chain[-1]!r}), a cycle. A stream's state lives in one "
            f"repository, which spans the others: drop the listing there (git continuity repo remove {chain[-1]} "
            f"in {there.work_dir or there.common_dir}), or keep this stream's state there instead"
        )
    return there


def add(repo: Repo, *, stream: str, name: str, path: str, url: str | None) -> int:
    """List another repository the stream spans (the name and URL synced, the path kept here)."""
    name = siblings.check_name(name.strip())
    given = siblings.check_url(url) if url is not None else None
    first = store.snapshot(repo, stream)
    store.require_state(first)
    there = _open(repo, first, name, path)
    folder = there.work_dir or there.common_dir
    known = {s.name: s for s in siblings.read(first)}.get(name)
    if known is not None and given in (None, known.url):
        siblings.remember(repo, name, folder)
        _kept(repo, name, folder)
        return 0
    chosen = given or siblings.default_url(there)
    moment, who = now(), session.who(repo)
    made = siblings.Sibling(
        id=siblings.sibling_id(name),
        name=name,
        added_at=known.added_at if known else stamp(moment),
        added_by=who.by,
        host=who.host,
        url=chosen,
        **who.stamp(),
    )

    def make(snap: store.Snapshot) -> store.Change:
        verb = "url of" if {s.name for s in siblings.read(snap)} >= {name} else "add"
        said = f"repo {verb} {name}" + (f": {chosen}" if chosen else "")
        return store.Change(said, {siblings.path(name): store.entry_bytes(made)})

    store.update(repo, stream, make)
    siblings.remember(repo, name, folder)
    print(f"Sibling {name} {'updated' if known else 'added'}: {folder} on this machine")
    print(f"  url   {chosen or '(none: git continuity repo add ' + name + ' PATH --url URL names one)'}")
    print(f"  scope a check to it: --check '@{name}:pushed:HEAD@origin/main' or --check '@{name}:cmd:make check'")
    return 0


def set_path(repo: Repo, *, stream: str, name: str, path: str) -> int:
    """Say where a sibling lives on this machine (nothing synced)."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    _listed(snap, name)
    there = _open(repo, snap, name, path)
    folder = there.work_dir or there.common_dir
    _kept(repo, name, folder)
    return 0


def _kept(repo: Repo, name: str, folder: Path) -> None:
    siblings.remember(repo, name, folder)
    print(f"Sibling {name} is at {folder} on this machine (kept in {repo.local_dir / 'siblings.json'}, never synced).")


def remove(repo: Repo, *, stream: str, name: str) -> int:
    """Take a sibling out of the stream (a deletion, which syncs as one)."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    gone = _listed(snap, name)

    def make(s: store.Snapshot) -> store.Change:
        return store.Change(f"repo remove {name}", {siblings.path(name): None})

    store.update(repo, stream, make)
    siblings.remember(repo, name, None)
    print(f"Sibling {gone.name} is no longer part of stream '{stream}'.")
    scoped = [c.id for c in store.read_claims(snap).values() if c.handle and parse_handle(c.handle).scope == name]
    if scoped:
        print(f"  claims that still check @{name} ({', '.join(sorted(scoped))}) are unknown until it is added again")
    return 0


def list_siblings(repo: Repo, *, stream: str, as_json: bool) -> int:
    """Each sibling of the stream, whether it is found here, and its folder here."""
    snap = store.snapshot(repo, stream)
    store.require_state(snap)
    paths = siblings.local_paths(repo)
    rows = []
    for sibling in siblings.read(snap):
        found = siblings.locate(repo, sibling, paths)
        folder = found.repo.work_dir or found.repo.common_dir if found.repo else found.path
        row = {k: v for k, v in to_json(sibling).items() if k not in ("id", "session", "agent")}
        here = {"found": found.repo is not None, "path": str(folder) if folder else None, "reason": found.reason}
        rows.append({**row, "url": sibling.url, **here})
    if as_json:
        render.emit_json("repo-list", {"stream": stream, "siblings": rows})
        return 0
    if not rows:
        print(
            f"No siblings in stream '{stream}': it spans this repository only. Add one with:\n"
            "  git continuity repo add NAME PATH [--url URL]"
        )
        return 0
    width = max(len(str(r["name"])) for r in rows)
    for row in rows:
        where = row["path"] if row["found"] else f"not found here: {row['reason']}"
        print(f"{str(row['name']).ljust(width)}  {where}")
        print(f"{' ' * width}  url {row['url'] or '(none)'}")
    return 0
