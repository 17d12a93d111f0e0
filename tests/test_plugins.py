"""Plugins: the built-in ones through this package's entry points, a third-party plugin
installed as its own package, and the progress line of network verification."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect
import io
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from conftest import commit, cont, git

from git_continuity.plugins import hookspecs, verify
from git_continuity.plugins import manager as plugin_manager
from git_continuity.render.meter import Progress, on_terminal

ROOT = Path(__file__).resolve().parent.parent

ECHO_PLUGIN = '''\
"""A third-party verifier: echo:yes verifies, echo:boom raises."""
from git_continuity import api

SEEN = api.Verifier("echo", "1.2.3")


@api.hookimpl
def continuity_schemes():
    return [api.Scheme("echo", "verified when the text after the colon is yes", "echo:yes", live=True)]


@api.hookimpl
def continuity_verify(handles, context):
    if any(h.body == "boom" for h in handles):
        raise RuntimeError("the echo service is down")
    return {h: (SEEN.verified if h.body == "yes" else SEEN.contradicted)(f"echo said {h.body}") for h in handles}
'''


def install(root: Path, module: str, source: str, entry: str, version: str) -> Path:
    """A one-module plugin built as a wheel and installed by pip into a folder of its own."""
    dist = module.replace("_", "-")
    wheel = root / f"{module}-{version}-py3-none-any.whl"
    info = f"{module}-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"{module}.py", source)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/entry_points.txt", f"[git_continuity]\n{entry} = {module}\n")
        z.writestr(
            f"{info}/RECORD",
            f"{module}.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/entry_points.txt,,\n{info}/RECORD,,\n",
        )
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    return site


def use_site(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")


@pytest.fixture(scope="session")
def echo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install(tmp_path_factory.mktemp("echo"), "continuity_echo", ECHO_PLUGIN, "echo", "1.2.3")


def test_plugins_lists_every_plugin_version_and_scheme(repo: Path) -> None:
    ran = cont(repo, "plugins", "--json")
    assert ran.code == 0, ran.err
    found = {
        p["name"]: (p["version"], [(s["scheme"], s["live"], s["network"]) for s in p["schemes"]])
        for p in json.loads(ran.out)["plugins"]
    }
    assert found == {
        "buildbot": ("0.1.0", [("buildbot", False, True)]),
        "ci": ("0.1.0", [("ci", True, False)]),
        "cmd": ("0.1.0", [("cmd", False, False)]),
        "git": ("0.1.0", [(s, True, False) for s in ("commit", "ref", "reachable", "pushed", "tag", "file", "clean")]),
        "gitea": ("0.1.0", [("gitea", False, True), ("forgejo", False, True)]),
        "github": ("0.1.0", [("github", False, True)]),
        "gitlab": ("0.1.0", [("gitlab", False, True)]),
    }
    text = cont(repo, "plugins").out
    assert (
        "github 0.1.0\n  github:     pr/<owner>/<repo>#<n>[=open|merged|closed]: the PR is in that state; "
        "checks/<owner>/<repo>@<rev>[=success]: every check run and commit status on rev succeeded  [network]\n"
        "              e.g. github:pr/octo/app#830=merged or github:checks/octo/app@HEAD\n"
    ) in text


def test_a_third_party_plugin_installed_as_its_own_package_is_used(
    repo: Path, echo_site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_site(echo_site, monkeypatch)
    listed = cont(repo, "plugins")
    assert (
        "echo 1.2.3\n  echo:       verified when the text after the colon is yes  [live]\n              e.g. echo:yes\n"
        in listed.out
    )
    assert cont(repo, "init").code == 0
    assert cont(repo, "claim", "add", "the echo agrees", "--check", "echo:yes").code == 0
    assert cont(repo, "claim", "add", "the README is there", "--check", "file:README").code == 0
    states = [(c["text"], c["state"], c["observed"]) for c in json.loads(cont(repo, "status", "--json").out)["claims"]]
    assert states == [
        ("the echo agrees", "verified", "echo said yes"),
        ("the README is there", "verified", f"README exists in HEAD ({git(repo, 'rev-parse', '--short=7', 'HEAD')})"),
    ]
    # A plugin that raises marks its own handles unknown; the others stand.
    assert cont(repo, "claim", "add", "boom", "--check", "echo:boom").code == 0
    states = [(c["text"], c["state"], c["observed"]) for c in json.loads(cont(repo, "status", "--json").out)["claims"]]
    assert [s[:2] for s in states] == [
        ("the echo agrees", "unknown"),
        ("the README is there", "verified"),
        ("boom", "unknown"),
    ]
    assert states[0][2] == "verifier echo failed: RuntimeError('the echo service is down')"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_is_drawn_on_a_terminal_only_once_asking_takes_a_second() -> None:
    quick = FakeTerminal()
    progress = on_terminal(as_json=False, stream=quick)
    assert isinstance(progress, Progress) and progress.delay == 1.0
    progress.start(2)
    progress.advance("github:pr/octo/app#1=open")
    progress.advance("gitlab:mr/group/app!2")
    progress.finish()
    assert quick.getvalue() == ""  # done within the second: nothing drawn
    terminal = FakeTerminal()
    progress = Progress(terminal, delay=0.05)
    progress.start(2)
    time.sleep(0.5)  # slower than the delay: the line appears
    progress.advance("github:pr/octo/app#1=open")
    progress.advance("gitlab:mr/group/app!2")
    progress.finish()
    line1 = "asking 1/2 network claims  github:pr/octo/app#1=open"
    line2 = "asking 2/2 network claims  gitlab:mr/group/app!2"
    assert terminal.getvalue() == (
        "\rasking 0/2 network claims" + f"\r{line1}" + f"\r{line2.ljust(len(line1))}" + "\r" + " " * len(line2) + "\r"
    )
    assert on_terminal(as_json=True, stream=FakeTerminal()) is None
    assert on_terminal(as_json=False, stream=io.StringIO()) is None


def test_the_entry_point_list_is_remembered_and_read_back(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from git_continuity.plugins import manager as plugin_manager

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    scanned = plugin_manager.entry_points()
    assert {name for name, _, _ in scanned} >= {"github", "gitlab", "gitea", "buildbot", "ci"}
    (kept,) = (tmp_path / "git-continuity").glob("entry-points-*.json")
    assert plugin_manager.entry_points() == scanned  # read back from the file
    kept.write_text('[["only", "git_continuity.verifiers.ci", "9.9"]]')
    assert plugin_manager.entry_points() == [("only", "git_continuity.verifiers.ci", "9.9")]


AAA_PLUGIN = '''\
"""A third-party plugin that declares the git plugin's tag: scheme as its own."""
from git_continuity import api


@api.hookimpl
def continuity_schemes():
    return [api.Scheme("tag", "aaa's tags", "tag:v9", live=True)]


@api.hookimpl
def continuity_resolve(handle, repo):
    return handle


@api.hookimpl
def continuity_verify(handles, context):
    return {h: api.Verifier("aaa", "1.0").verified("aaa says so") for h in handles}
'''


def test_two_plugins_declaring_one_scheme_are_refused_naming_both(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: aaa resolved tag:v9 (the first answer) while git verified it (the last owner
    # by name), so the claim was recorded by one plugin and judged by another.
    use_site(install(tmp_path, "continuity_aaa", AAA_PLUGIN, "aaa", "1.0"), monkeypatch)
    assert cont(repo, "init").code == 0
    refused = cont(repo, "claim", "add", "v9 is tagged", "--check", "tag:v9")
    said = (
        "git-continuity: error: the handle scheme 'tag:' is declared by two plugins, aaa 1.0 and git 0.1.0; "
        "a scheme has one owner: uninstall the package of one of them\n"
    )
    assert (refused.code, refused.out, refused.err) == (2, "", said)
    assert cont(repo, "status").err == said
    # `plugins` still lists both, then says the same.
    listed = cont(repo, "plugins")
    assert (listed.code, listed.err) == (2, said)
    assert "aaa 1.0\n  tag:        aaa's tags  [live]\n              e.g. tag:v9\n" in listed.out
    assert "git 0.1.0\n  commit:     the commit exists here  [live]\n" in listed.out


def test_a_plugin_declaring_something_else_than_a_scheme_is_refused_naming_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = "from git_continuity import api\n\n@api.hookimpl\ndef continuity_schemes():\n    return [('x', 'y')]\n"
    use_site(install(tmp_path, "continuity_odd", source, "odd", "0.1"), monkeypatch)
    ran = cont(repo, "plugins")
    assert (ran.code, ran.out, ran.err) == (
        2,
        "",
        "git-continuity: error: plugin odd declares ('x', 'y') as a handle scheme; its continuity_schemes must "
        "return git_continuity.api.Scheme values: update or uninstall its package\n",
    )


# -- the plugin of docs/how-to/plugins.md, exactly as written -------------------------------


def plugins_page() -> str:
    return (ROOT / "docs" / "how-to" / "plugins.md").read_text()


def page_block(language: str) -> str:
    found = re.search(rf"```{language}\n(.*?)```", plugins_page(), re.DOTALL)
    assert found is not None, f"no {language} block in docs/how-to/plugins.md"
    return found.group(1)


@pytest.fixture(scope="session")
def version_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugins page's plugin, installed from the page's own text and entry point."""
    registered = re.fullmatch(r'\[project\.entry-points\.git_continuity\]\n(\w+) = "(\w+)"\n', page_block("toml"))
    assert registered is not None
    entry, module = registered.groups()
    return install(tmp_path_factory.mktemp("version"), module, page_block("python"), entry, "1.0")


def states(repo: Path) -> list[tuple[str, str, str]]:
    return [(c["text"], c["state"], c["observed"]) for c in json.loads(cont(repo, "status", "--json").out)["claims"]]


def test_the_plugin_page_works_as_written(repo: Path, version_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_site(version_site, monkeypatch)
    commit(repo, "version", {"VERSION": "1.2\n"})
    assert cont(repo, "init").code == 0
    refused = cont(repo, "claim", "add", "released", "--check", "version:")
    assert (refused.code, refused.err) == (
        2,
        "git-continuity: error: handle 'version:' names no version, e.g. version:1.2\n",
    )
    assert cont(repo, "claim", "add", "1.2 is out", "--check", "version:1.2").code == 0
    assert states(repo) == [("1.2 is out", "verified", "VERSION says 1.2")]
    (repo / "VERSION").write_text("1.3\n")
    assert states(repo) == [("1.2 is out", "contradicted", "VERSION says 1.3")]


# -- completeness: every hook documented and exercised, every scheme owned once ------------


def specs() -> list[str]:
    found = inspect.getmembers(hookspecs, inspect.isfunction)
    return sorted(name for name, f in found if hasattr(f, "git_continuity_spec"))


def test_every_hookspec_is_documented_and_exercised() -> None:
    assert specs() == ["continuity_resolve", "continuity_schemes", "continuity_verify"]
    tests = {name for name in globals() if name.startswith("test_hook_")}
    for name in specs():
        assert f"`{name}(" in plugins_page(), f"{name} is not described in docs/how-to/plugins.md"
        assert f"test_hook_{name}" in tests, f"no test_hook_{name} in {__file__}"
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert "Arguments:" in doc and "Returns:" in doc and "firstresult" in doc, name
    # plugins/hookspecs.py holds only specs.
    assert [
        n for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if f.__module__ == hookspecs.__name__
    ] == specs()


def test_hook_continuity_schemes(repo: Path, version_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_site(version_site, monkeypatch)
    listed = cont(repo, "plugins")
    assert (
        "version 1.0\n  version:    the VERSION file says <text>  [live]\n              e.g. version:1.2\n"
        in listed.out
    )


def test_hook_continuity_resolve(repo: Path, version_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The documented plugin keeps every handle it is given: were it asked about commit:HEAD, the
    # claim would keep the drifting HEAD. Only the scheme's owner is asked.
    use_site(version_site, monkeypatch)
    head = git(repo, "rev-parse", "HEAD")
    assert cont(repo, "init").code == 0
    monkeypatch.setenv("GIT_CONTINUITY_TRACE", "1")
    ran = cont(repo, "claim", "add", "the first commit", "--check", "commit:HEAD")
    assert ran.code == 0, ran.err
    assert f"  handle  commit:{head[:12]}…  (as written: commit:HEAD)\n" in ran.out
    asked = (
        "  continuity_resolve [hook]\n"
        "      handle: Handle(scheme='commit', body='HEAD')\n"
        "      repo: Repository()\n"
        f"  finish continuity_resolve --> Handle(scheme='commit', body='{head}') [hook]\n"
    )
    assert ran.err.count("continuity_resolve [hook]") == 1
    assert asked in ran.err


def test_hook_continuity_verify(repo: Path, version_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_site(version_site, monkeypatch)
    commit(repo, "version", {"VERSION": "1.2\n"})
    assert cont(repo, "init").code == 0
    assert cont(repo, "claim", "add", "1.2 is out", "--check", "version:1.2").code == 0
    assert cont(repo, "claim", "add", "the README is there", "--check", "file:README").code == 0
    monkeypatch.setenv("GIT_CONTINUITY_TRACE", "1")
    ran = cont(repo, "status", "--json")
    head = git(repo, "rev-parse", "--short=7", "HEAD")
    assert [(c["text"], c["state"], c["observed"]) for c in json.loads(ran.out)["claims"]] == [
        ("1.2 is out", "verified", "VERSION says 1.2"),
        ("the README is there", "verified", f"README exists in HEAD ({head})"),
    ]
    # One call per owning plugin, each given only its own handles.
    assert sorted(re.findall(r"\n      handles: (.*)\n", ran.err)) == [
        "[Handle(scheme='file', body='README')]",
        "[Handle(scheme='version', body='1.2')]",
    ]


def test_every_built_in_scheme_is_owned_exactly_once() -> None:
    ours = importlib.metadata.distribution("git-continuity").entry_points
    registered = {ep.name: ep.value for ep in ours if ep.group == "git_continuity"}
    registered |= {module.rsplit(".", 1)[-1]: module for module in plugin_manager.DEFAULT_PLUGINS}
    modules = {f"git_continuity.verifiers.{p.stem}" for p in (ROOT / "git_continuity" / "verifiers").glob("*.py")}
    assert sorted(registered.values()) == sorted(modules)  # every verifier module is a registered plugin
    built_in = [p for p in verify.plugins() if p.name in registered]
    assert sorted(p.name for p in built_in) == sorted(registered)
    declared = Counter(s.name for p in built_in for s in p.schemes)
    assert [name for name, n in declared.items() if n != 1] == []
    git_schemes = ["commit", "ref", "reachable", "pushed", "tag", "file", "clean"]
    assert sorted(declared) == sorted([*git_schemes, "cmd", "ci", "github", "gitlab", "gitea", "forgejo", "buildbot"])
    owners = verify.schemes()
    assert {name: owners[name][0].name for name in declared} == {s.name: p.name for p in built_in for s in p.schemes}


def test_the_api_names_what_it_offers_and_hands_out_no_pygit2_object() -> None:
    from git_continuity import api

    assert re.fullmatch(r"[0-9]+\.[0-9]+", api.API_VERSION)
    assert [name for name in api.__all__ if not hasattr(api, name)] == []
    documented = set(re.findall(r"`(?:api\.)?(\w+)", plugins_page()))
    assert [name for name in api.__all__ if name not in documented] == []
    public = [name for name, _ in inspect.getmembers(api.Repository) if not name.startswith("_")]
    assert [name for name in public if name not in documented] == []
    queries = [f for name, f in inspect.getmembers(api.Repository) if not name.startswith("_")]
    annotations = {inspect.signature(f).return_annotation for f in queries if callable(f)}
    annotations |= {f.fget.__annotations__["return"] for f in queries if isinstance(f, property)}
    # Plain values (ids are hex strings); Changes is a dataclass of path lists.
    assert [a for a in annotations if "pygit2" in str(a) or "git.Repo" in str(a)] == []
    assert len(annotations) > 5


def test_the_built_in_verifiers_import_only_the_api_and_the_standard_library() -> None:
    wrong = []
    for path in sorted((ROOT / "git_continuity" / "verifiers").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                names = [f"{base}.{a.name}" for a in node.names] if base == "git_continuity" else [base]
            else:
                continue
            for name in names:
                if name != "git_continuity.api" and name.split(".")[0] not in sys.stdlib_module_names:
                    wrong.append(f"{path.name}:{node.lineno} imports {name}")
    assert wrong == []
