"""The built-in git verifiers, registered as a plugin like any other.

Every check is against this repository's actual refs and objects, dereferenced now.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from git_continuity.api import (
    GIT_CONTINUITY_VERSION,
    Handle,
    Observation,
    Repository,
    Scheme,
    Undecided,
    UserError,
    Verifier,
    VerifyContext,
    ago,
    hookimpl,
    ref_name_fault,
    short,
)

NAME = "git"
FULL_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
SEEN = Verifier(NAME, GIT_CONTINUITY_VERSION)

SCHEMES = (
    Scheme("commit", "the commit exists here", "commit:HEAD", True),
    Scheme("ref", "the ref points exactly at rev", "ref:main=HEAD", True),
    Scheme("reachable", "rev is the ref's commit or an ancestor of it", "reachable:HEAD@main", True),
    Scheme(
        "pushed",
        "rev is on the remote's branch (remote-tracking ref; --online asks the remote)",
        "pushed:HEAD@origin/main",
        True,
    ),
    Scheme("tag", "the tag exists (and points at rev)", "tag:v1.2 or tag:v1.2=HEAD", True),
    Scheme("file", "the path exists in rev's tree (HEAD now when no rev)", "file:conf/app.toml@HEAD", True),
    Scheme("clean", "the work tree has no uncommitted changes", "clean:", True),
)


@hookimpl
def continuity_schemes() -> Sequence[Scheme]:
    return SCHEMES


# -- recording: resolve revisions to full ids ----------------------------------------------


def _split(body: str, sep: str, handle: str, form: str) -> tuple[str, str]:
    left, found, right = body.rpartition(sep)
    if not found or not left or not right:
        raise UserError(f"handle {handle!r} is not of the form {form}")
    return left, right


def _refname(repo: Repository, name: str, handle: str) -> str:
    if name.startswith("-"):
        raise UserError(f"ref {name!r} in {handle!r} starts with '-'")
    full = repo.expand_ref(name)
    if full is not None:
        return full
    if name.startswith("refs/") and ".." not in name and not name.endswith("/"):
        return name  # may not exist yet; verifying says so
    raise UserError(f"ref {name!r} in {handle!r} does not exist here; name a branch, tag or refs/… path")


def _remote_branch(repo: Repository, spec: str) -> tuple[str, str] | None:
    """``origin/main`` -> (origin, main), taking the longest configured remote that fits
    (remote names may hold '/')."""
    for remote in sorted(repo.remote_names(), key=len, reverse=True):
        if spec.startswith(remote + "/") and len(spec) > len(remote) + 1:
            return remote, spec[len(remote) + 1 :]
    return None


def _prefix(repo: Repository) -> str:
    """Where the current folder is in the work tree (``sub/``), as ``git rev-parse
    --show-prefix`` says it: paths in handles are read from there, as git reads them."""
    if repo.work_dir is None:
        return ""
    try:
        inside = Path.cwd().resolve().relative_to(repo.work_dir.resolve())
    except (OSError, ValueError):  # the folder is gone, or it is outside the work tree
        return ""
    if inside.parts[:1] == (".git",):
        return ""
    return "" if str(inside) == "." else inside.as_posix() + "/"


def _path(repo: Repository, path: str, handle: str) -> str:
    """``path`` as the repository-relative path it names (what is stored, so that every clone
    reads the same file): relative to the current folder, or to the top after ``:/`` (git's
    own spelling of the top)."""
    prefix = _prefix(repo)
    if path.startswith(":/"):
        path, prefix = path[2:], ""
    clean = posixpath.normpath(prefix + path) if path else ""
    if path.startswith("/") or clean == ".." or clean.startswith("../") or "\\" in path:
        read = f" (read from {prefix}, as git reads paths)" if prefix else ""
        raise UserError(f"path {path!r} in {handle!r} escapes the repository{read}; give a path inside it")
    if clean in (".", "") or clean.split("/")[0] == ".git":
        raise UserError(f"path {path!r} in {handle!r} does not name a file of the repository")
    return clean


def _names_a_path(repo: Repository, written: str, handle: str) -> bool:
    """Whether what was written names a path in the work tree or in HEAD's tree."""
    try:
        path = _path(repo, written, handle)
    except UserError:
        return False
    if repo.work_dir is not None and os.path.lexists(repo.work_dir / path):
        return True
    head = repo.head_commit()
    return head is not None and repo.path_in_commit(head, path)


def _file_handle(repo: Repository, body: str, text: str) -> Handle:
    """``file:<path>[@<rev>]``. The last ``@`` separates a revision only when what follows
    resolves to a commit here and the whole text is not a path of the work tree or HEAD;
    otherwise the whole text is the path (``pkgs/@scope/a.js``, ``me@home.txt``). A trailing
    ``@`` says there is no revision (``notes@main@``)."""
    path, at, rev = body.rpartition("@")
    if at and path and rev:
        if rev.startswith("-"):
            repo.resolve_commit(rev)  # refused, naming it: a revision is never an option to git
        oid = None if _names_a_path(repo, body, text) else _commit_or_none(repo, rev)
        if oid is not None:
            return Handle("file", f"{_path(repo, path, text)}@{oid}")
        if not path.endswith("/") and _names_a_path(repo, path, text):
            # NOTES@HEAD~99: a file that is here, then a revision that is not.
            raise UserError(
                f"revision {rev!r} in {text!r} does not resolve to a commit here; for a path that"
                f" holds '@', end the handle with '@': file:{body}@"
            )
        path = body
    elif not (at and path):  # no @ at all, or only a leading one
        path = body
    if not path:
        raise UserError(f"handle {text!r} is not of the form file:<path>[@<rev>]")
    clean = _path(repo, path, text)
    # Stored so that it reads back unambiguously (_file_parts): a path that ends in '@', or
    # whose last '@' is followed by what looks like a full commit id, keeps a trailing '@'.
    return Handle("file", clean + "@" if _file_parts(clean) != (clean, None) else clean)


def _commit_or_none(repo: Repository, rev: str) -> str | None:
    try:
        return repo.resolve_commit(rev)
    except UserError:
        return None


def _file_parts(body: str) -> tuple[str, str | None]:
    """A stored ``file:`` body as (path, full commit id or None)."""
    if body.endswith("@"):
        return body[:-1], None
    path, at, rev = body.rpartition("@")
    if at and path and FULL_ID.fullmatch(rev):
        return path, rev
    return body, None


def _resolve(repo: Repository, h: Handle) -> Handle:
    body, text = h.body, h.text
    if h.scheme == "commit":
        return Handle("commit", repo.resolve_commit(body))
    if h.scheme == "ref":
        name, rev = _split(body, "=", text, "ref:<refname>=<rev>")
        return Handle("ref", f"{_refname(repo, name, text)}={repo.resolve_commit(rev)}")
    if h.scheme == "reachable":
        rev, name = _split(body, "@", text, "reachable:<rev>@<ref>")
        return Handle("reachable", f"{repo.resolve_commit(rev)}@{_refname(repo, name, text)}")
    if h.scheme == "pushed":
        rev, spec = _split(body, "@", text, "pushed:<rev>@<remote>/<branch>")
        split = _remote_branch(repo, spec)
        if split is None and spec.rstrip("/") in repo.remote_names():
            raise UserError(
                f"{text!r} names the remote {spec.rstrip('/')} but no branch; the form is"
                f" pushed:<rev>@<remote>/<branch>, e.g. pushed:{rev}@{spec.rstrip('/')}/main"
            )
        if split is None:
            remotes = ", ".join(repo.remote_names()) or "none configured"
            raise UserError(f"{spec!r} in {text!r} names no configured remote (remotes: {remotes})")
        remote, branch = split
        fault = ref_name_fault(branch)
        if fault:
            raise UserError(f"branch {branch!r} in {text!r} is not a valid ref name ({fault})")
        return Handle("pushed", f"{repo.resolve_commit(rev)}@{remote}/{branch}")
    if h.scheme == "tag":
        name, eq, rev = body.partition("=")
        fault = "it names a full ref; give the tag's own name" if name.startswith("refs/") else ref_name_fault(name)
        if fault:
            raise UserError(f"tag name {name!r} in {text!r} is not a valid ref name ({fault}); e.g. tag:v1.2")
        return Handle("tag", f"{name}={repo.resolve_commit(rev)}" if eq else name)
    if h.scheme == "file":
        return _file_handle(repo, body, text)
    if body:
        raise UserError(f"handle {text!r}: clean: takes nothing after the colon")
    return Handle("clean", "")


@hookimpl
def continuity_resolve(handle: Handle, repo: Repository) -> Handle | None:
    return _resolve(repo, handle)


# -- dereferencing --------------------------------------------------------------------------


def _not_here(ctx: VerifyContext, what: str) -> Observation | None:
    """What a shallow or single-branch clone says of a commit or tag it lacks: unknown, since
    the remote may well have it (a teammate verified it there), with the command that brings
    it; None in a clone that fetched the whole history, where absence is contradiction."""
    cut = ctx.repo.cut_clone()
    if cut == "shallow":
        return SEEN.unknown(f"{what} is not in this shallow clone (git fetch --unshallow brings the whole history)")
    if cut == "single-branch":
        remote = ctx.repo.single_branch_remote()
        return SEEN.unknown(
            f"{what} is not in this single-branch clone (git remote set-branches {remote} '*' && git fetch {remote}"
            " brings the other branches)"
        )
    return None


def _commit(ctx: VerifyContext, body: str) -> Observation:
    if ctx.repo.has_commit(body):
        return SEEN.verified(f"commit {short(body)} exists here")
    return _not_here(ctx, f"commit {short(body)}") or SEEN.contradicted(
        f"commit {short(body)} does not exist in this clone"
    )


def _contains(ctx: VerifyContext, tip: str, rev: str) -> bool | None:
    """Whether rev is tip or an ancestor of it; None when a shallow clone cannot tell."""
    if ctx.repo.contains(tip, rev):
        return True
    return None if ctx.repo.is_shallow() else False


def _ref(ctx: VerifyContext, body: str) -> Observation:
    name, _, rev = body.rpartition("=")
    target = ctx.repo.ref_target(name)
    if target is None:
        return SEEN.contradicted(f"{name} does not exist here")
    at = ctx.repo.peel_to_commit(target) or target
    if at == rev:
        return SEEN.verified(f"{name} is at {short(at)}", {name: target})
    return SEEN.contradicted(f"{name} is at {short(at)}, not {short(rev)}", {name: target})


def _reachable(ctx: VerifyContext, body: str) -> Observation:
    rev, _, name = body.rpartition("@")
    target = ctx.repo.ref_target(name)
    tip = ctx.repo.peel_to_commit(target) if target else None
    if tip is None:
        return SEEN.contradicted(f"{name} does not exist here")
    contained = _contains(ctx, tip, rev)
    if contained is None:
        return SEEN.unknown(
            f"{short(rev)} is not in this shallow clone's history of {name} (git fetch --unshallow brings the whole"
            " history)"
        )
    if contained:
        return SEEN.verified(f"{name} is at {short(tip)}, which contains {short(rev)}", {name: tip})
    return SEEN.contradicted(f"{name} is at {short(tip)}, which does not contain {short(rev)}", {name: tip})


def _pushed(ctx: VerifyContext, body: str) -> Observation:
    rev, _, spec = body.rpartition("@")
    split = _remote_branch(ctx.repo, spec)
    if split is None:
        return SEEN.unknown(f"{spec.partition('/')[0]} is not a configured remote here")
    remote, branch = split
    if ctx.online:
        return _pushed_online(ctx, rev, remote, branch)
    tracking = f"refs/remotes/{remote}/{branch}"
    target = ctx.repo.ref_target(tracking)
    if target is None:
        return _no_tracking_ref(ctx, remote, branch)
    contained = _contains(ctx, target, rev)
    where = f"{remote}/{branch} is at {short(target)} ({_tracking_age(ctx, tracking)})"
    if contained is None:
        return SEEN.unknown(f"{where}; this shallow clone cannot tell whether it contains {short(rev)}")
    if contained:
        return SEEN.verified(f"{where}, which contains {short(rev)}", {tracking: target})
    return SEEN.contradicted(f"{where}, which does not contain {short(rev)}", {tracking: target})


def _tracking_age(ctx: VerifyContext, tracking: str) -> str:
    """How old a remote-tracking ref is, by what last moved it: a fetch, or a push from here
    (which moves it without fetching anything)."""
    moved = ctx.repo.ref_last_move(tracking)
    if moved is None:
        cloned = ctx.repo.cloned_at()
        return f"as cloned {ago(cloned, ctx.now)}, not fetched since" if cloned else "fetch time unknown"
    when, why = moved
    if why.startswith("update by push"):
        return f"as pushed from here {ago(when, ctx.now)}"
    if why.startswith(("fetch", "pull")):
        return f"fetched {ago(when, ctx.now)}"
    return f"updated {ago(when, ctx.now)}"


def _branches(names: Sequence[str], prefix: str) -> str:
    found = [n[len(prefix) :] for n in names if n.startswith(prefix) and n != prefix + "HEAD"]
    if not found:
        return "none"
    return ", ".join(found[:5]) + (f" and {len(found) - 5} more" if len(found) > 5 else "")


def _no_tracking_ref(ctx: VerifyContext, remote: str, branch: str) -> Observation:
    """No remote-tracking ref for the branch: the remote lacked it at the last fetch, or it was
    never fetched at all."""
    prefix = f"refs/remotes/{remote}/"
    known = [n for n in ctx.repo.refs(prefix) if n != prefix + "HEAD"]
    if not known:
        return SEEN.unknown(f"{remote}/{branch} has never been fetched here: git fetch {remote}, or verify --online")
    moves = [(moved[0], name) for name in known if (moved := ctx.repo.ref_last_move(name))]
    newest = max(moves)[1] if moves else known[0]
    return SEEN.contradicted(
        f"{remote} had no branch {branch} when this clone last heard from it ({_tracking_age(ctx, newest)};"
        f" its branches then: {_branches(known, prefix)}); verify --online asks {remote} now"
    )


def _pushed_online(ctx: VerifyContext, rev: str, remote: str, branch: str) -> Observation:
    try:
        heads = ctx.repo.remote_refs(remote, ["refs/heads/*"], ctx.timeout)
    except Undecided as error:
        return SEEN.unknown(f"could not ask {remote}: {error}")
    target = heads.get(f"refs/heads/{branch}")
    if target is None:
        return SEEN.contradicted(
            f"{remote} has no branch {branch} (asked just now; its branches: {_branches(sorted(heads), 'refs/heads/')})"
        )
    where = f"{remote}/{branch} is at {short(target)} (asked just now)"
    if target == rev:
        return SEEN.verified(f"{where}, which contains {short(rev)}")
    if not ctx.repo.has_commit(target):
        return SEEN.unknown(f"{where}, a commit this clone lacks: git fetch {remote}")
    contained = _contains(ctx, target, rev)
    if contained:
        return SEEN.verified(f"{where}, which contains {short(rev)}")
    if contained is None:
        return SEEN.unknown(f"{where}; this shallow clone cannot tell whether it contains {short(rev)}")
    return SEEN.contradicted(f"{where}, which does not contain {short(rev)}")


def _tag(ctx: VerifyContext, body: str) -> Observation:
    name, _, rev = body.partition("=")
    at = ctx.repo.tag_commit(name)
    ref = f"refs/tags/{name}"
    if at is None:
        return _not_here(ctx, f"tag {name}") or SEEN.contradicted(f"tag {name} does not exist here")
    if rev and at != rev:
        return SEEN.contradicted(f"tag {name} points at {short(at)}, not {short(rev)}", {ref: at})
    return SEEN.verified(f"tag {name} points at {short(at)}", {ref: at})


def _file(ctx: VerifyContext, body: str) -> Observation:
    path, rev = _file_parts(body)
    if rev is None and ctx.tree is not None:
        # While a commit is being made (commit-msg), "the tree" is the one git is committing.
        label = f"the commit being made (tree {short(ctx.tree)})"
        if ctx.repo.path_in_tree(ctx.tree, path):
            return SEEN.verified(f"{path} exists in {label}")
        return SEEN.contradicted(f"{path} is not in {label}")
    branch, commit = (None, rev) if rev else ctx.head or ("HEAD", ctx.repo.head_commit())
    if commit is None:
        return SEEN.contradicted(f"HEAD has no commits, so {path} is in no tree")
    if not ctx.repo.has_commit(commit):
        return _not_here(ctx, f"commit {short(commit)}") or SEEN.contradicted(
            f"commit {short(commit)} does not exist in this clone"
        )
    label = f"{branch} ({short(commit)})" if branch else short(commit)
    if ctx.repo.path_in_commit(commit, path):
        return SEEN.verified(f"{path} exists in {label}")
    return SEEN.contradicted(f"{path} is not in {label}")


def _clean(ctx: VerifyContext, body: str) -> Observation:
    if ctx.repo.work_dir is None:
        return SEEN.unknown("a bare repository has no work tree")
    found = ctx.repo.changes()
    assert found is not None  # a work tree exists
    # While a commit is being made (commit-msg), what is staged is what it holds.
    staged = [] if ctx.committing else found.staged
    paths = sorted({*staged, *found.unstaged, *found.untracked, *found.conflicted})
    if not paths:
        return SEEN.verified("the work tree has no uncommitted changes")
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    count = f"{len(paths)} uncommitted change{'s' if len(paths) != 1 else ''}"
    return SEEN.contradicted(f"{count}: {shown}")


VERIFIERS: Mapping[str, Callable[[VerifyContext, str], Observation]] = {
    "commit": _commit,
    "ref": _ref,
    "reachable": _reachable,
    "pushed": _pushed,
    "tag": _tag,
    "file": _file,
    "clean": _clean,
}


@hookimpl
def continuity_verify(handles: Sequence[Handle], context: VerifyContext) -> Mapping[Handle, Observation]:
    return {h: _judged(context, h) for h in handles}


def _judged(ctx: VerifyContext, h: Handle) -> Observation:
    """One handle's observation: what the repository could not answer (a tree a treeless
    clone could not fetch) makes that handle unknown, saying why, and no other."""
    try:
        return VERIFIERS[h.scheme](ctx, h.body)
    except Undecided as error:
        return SEEN.unknown(str(error))
