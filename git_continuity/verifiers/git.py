"""The built-in git verifiers, registered as a plugin like any other.

Every check is against this repository's actual refs and objects, dereferenced now.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence

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
    short,
)

NAME = "git"
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


def _ref_name_fault(name: str) -> str | None:
    """Why ``name`` is not a valid ref name by git's rules (git check-ref-format, one level
    allowed), or None. Written out here because a verifier runs no git of its own."""
    for bad, why in ((" ", "a space"), ("..", "'..'"), ("@{", "'@{'"), ("\\", "'\\'"), ("//", "'//'")):
        if bad in name:
            return f"it has {why}"
    for char in "~^:?*[":
        if char in name:
            return f"it has {char!r}"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "it has a control character"
    if not name:
        return "it is empty"
    if name == "@":
        return "it is '@'"
    if name.startswith("-"):
        return "it starts with '-'"
    if name.startswith("/") or name.endswith("/"):
        return "it starts or ends with '/'"
    if name.endswith("."):
        return "it ends with '.'"
    parts = name.split("/")
    if any(part.startswith(".") for part in parts):
        return "a part starts with '.'"
    if any(part.endswith(".lock") for part in parts):
        return "a part ends in .lock"
    return None


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


def _path(path: str, handle: str) -> str:
    clean = posixpath.normpath(path)
    if path.startswith("/") or clean == ".." or clean.startswith("../") or "\\" in path:
        raise UserError(f"path {path!r} in {handle!r} escapes the repository; give a path inside it")
    if clean == "." or clean.split("/")[0] == ".git":
        raise UserError(f"path {path!r} in {handle!r} does not name a file of the repository")
    return clean


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
        fault = _ref_name_fault(branch)
        if fault:
            raise UserError(f"branch {branch!r} in {text!r} is not a valid ref name ({fault})")
        return Handle("pushed", f"{repo.resolve_commit(rev)}@{remote}/{branch}")
    if h.scheme == "tag":
        name, eq, rev = body.partition("=")
        fault = "it names a full ref; give the tag's own name" if name.startswith("refs/") else _ref_name_fault(name)
        if fault:
            raise UserError(f"tag name {name!r} in {text!r} is not a valid ref name ({fault}); e.g. tag:v1.2")
        return Handle("tag", f"{name}={repo.resolve_commit(rev)}" if eq else name)
    if h.scheme == "file":
        path, at, rev = body.rpartition("@") if "@" in body else (body, "", "")
        if not path:
            raise UserError(f"handle {text!r} is not of the form file:<path>[@<rev>]")
        clean = _path(path, text)
        return Handle("file", f"{clean}@{repo.resolve_commit(rev)}" if at else clean)
    if body:
        raise UserError(f"handle {text!r}: clean: takes nothing after the colon")
    return Handle("clean", "")


@hookimpl
def continuity_resolve(handle: Handle, repo: Repository) -> Handle | None:
    return _resolve(repo, handle)


# -- dereferencing --------------------------------------------------------------------------


def _commit(ctx: VerifyContext, body: str) -> Observation:
    if ctx.repo.has_commit(body):
        return SEEN.verified(f"commit {short(body)} exists here")
    return SEEN.contradicted(f"commit {short(body)} does not exist in this clone")


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
        return SEEN.unknown(f"{short(rev)} is not in this shallow clone's history of {name}")
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
        return SEEN.unknown(f"{remote}/{branch} has never been fetched here: git fetch {remote}, or verify --online")
    fetched = ctx.repo.ref_updated_at(tracking)
    cloned = None if fetched else ctx.repo.cloned_at()
    if fetched:
        age = f"fetched {ago(fetched, ctx.now)}"
    else:
        age = f"as cloned {ago(cloned, ctx.now)}, not fetched since" if cloned else "fetch time unknown"
    contained = _contains(ctx, target, rev)
    where = f"{remote}/{branch} is at {short(target)} ({age})"
    if contained is None:
        return SEEN.unknown(f"{where}; this shallow clone cannot tell whether it contains {short(rev)}")
    if contained:
        return SEEN.verified(f"{where}, which contains {short(rev)}", {tracking: target})
    return SEEN.contradicted(f"{where}, which does not contain {short(rev)}", {tracking: target})


def _pushed_online(ctx: VerifyContext, rev: str, remote: str, branch: str) -> Observation:
    try:
        target = ctx.repo.remote_ref(remote, f"refs/heads/{branch}", ctx.timeout)
    except Undecided as error:
        return SEEN.unknown(f"could not ask {remote}: {error}")
    if target is None:
        return SEEN.contradicted(f"{remote} has no branch {branch} (asked just now)")
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
        return SEEN.contradicted(f"tag {name} does not exist here")
    if rev and at != rev:
        return SEEN.contradicted(f"tag {name} points at {short(at)}, not {short(rev)}", {ref: at})
    return SEEN.verified(f"tag {name} points at {short(at)}", {ref: at})


def _file(ctx: VerifyContext, body: str) -> Observation:
    path, at, rev = body.rpartition("@") if "@" in body else (body, "", "")
    if not at and ctx.tree is not None:
        # While a commit is being made (commit-msg), "the tree" is the one git is committing.
        label = f"the commit being made (tree {short(ctx.tree)})"
        if ctx.repo.path_in_tree(ctx.tree, path):
            return SEEN.verified(f"{path} exists in {label}")
        return SEEN.contradicted(f"{path} is not in {label}")
    commit = rev if at else ctx.repo.head_commit()
    if commit is None:
        return SEEN.contradicted(f"HEAD has no commits, so {path} is in no tree")
    if not ctx.repo.has_commit(commit):
        return SEEN.contradicted(f"commit {short(commit)} does not exist in this clone")
    label = short(commit) if at else f"HEAD ({short(commit)})"
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
    return {h: VERIFIERS[h.scheme](context, h.body) for h in handles}
