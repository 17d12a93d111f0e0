"""The plugin manager: the built-in verifiers and every installed plugin of the
``git_continuity`` entry-point group, registered once per process (the helper registers them
before any command when every plugin installed is one of ours)."""

from __future__ import annotations

import contextlib
import functools
import os
import sys

import pluggy

from git_continuity import atomic
from git_continuity.constants import ENV_TRACE
from git_continuity.plugins import hookspecs
from git_continuity.plugins.values import PROJECT

DEFAULT_PLUGINS = ("git_continuity.verifiers.git", "git_continuity.verifiers.cmd")


def get_plugin_manager() -> pluggy.PluginManager:
    """Built-in verifiers plus every installed plugin of the ``git_continuity`` entry-point
    group. GIT_CONTINUITY_TRACE=1 prints each hook call to stderr."""
    pm = loaded()
    if os.environ.get(ENV_TRACE) and not _tracing:
        pm.trace.root.setwriter(sys.stderr.write)
        _tracing.append(pm.enable_tracing())
    return pm


_tracing: list[object] = []


@functools.cache
def loaded() -> pluggy.PluginManager:
    """The plugin manager with every plugin registered (the helper makes it before any command:
    what is installed is in its fingerprint)."""
    import importlib

    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name.rsplit(".", 1)[-1])
    # What pm.load_setuptools_entrypoints(PROJECT) does, from a remembered list of the group.
    for name, reference, _ in entry_points():
        if not pm.has_plugin(name) and not pm.is_blocked(name):
            pm.register(_load(reference), name=name)
    pm.check_pending()
    return pm


def entry_points() -> list[tuple[str, str, str]]:
    """(name, object reference, distribution version) of each plugin of the entry-point group.

    Scanning every installed distribution (importlib.metadata and its email parser) costs
    ~15 ms, a twentieth of status's budget, so the list is remembered under the user's cache
    folder, keyed by what installing or removing a package changes: the folders of sys.path.
    """
    import hashlib
    import json
    from pathlib import Path

    from git_continuity import __version__

    stamps = [__version__, sys.version]
    for entry in sys.path[1:]:  # [0] is the script's folder or the current one: not installs
        with contextlib.suppress(OSError):
            stamps.append(f"{entry}\0{os.stat(entry or '.').st_mtime_ns}")
    key = hashlib.sha256("\n".join(stamps).encode()).hexdigest()[:16]
    home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    kept = Path(home) / "git-continuity" / f"entry-points-{key}.json"
    try:
        return [(str(n), str(r), str(v)) for n, r, v in json.loads(kept.read_text())]
    except (OSError, ValueError, TypeError):
        pass
    import importlib.metadata

    found: dict[str, tuple[str, str, str]] = {}
    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group == PROJECT and ep.name not in found:  # the first one wins, as in pluggy
                found[ep.name] = (ep.name, ep.value, dist.version)
    listed = list(found.values())
    with contextlib.suppress(OSError):
        kept.parent.mkdir(parents=True, exist_ok=True)
        atomic.write(kept, json.dumps(listed))
    return listed


def _load(reference: str) -> object:
    """``module`` or ``module:attribute.path`` (an entry point's value, extras ignored)."""
    import importlib

    module, _, attribute = reference.split("[")[0].partition(":")
    found: object = importlib.import_module(module.strip())
    for part in filter(None, attribute.strip().split(".")):
        found = getattr(found, part)
    return found
