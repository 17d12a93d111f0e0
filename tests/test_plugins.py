"""Plugins: the built-in ones through this package's entry points, a third-party plugin
installed as its own package, and the progress line of network verification."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import cont, git

from git_continuity.progress import Progress, on_terminal

ECHO_PLUGIN = '''\
"""A third-party verifier: echo:yes verifies, echo:boom raises."""
from git_continuity.plugin import Observation, Scheme, hookimpl


@hookimpl
def continuity_schemes():
    return [Scheme("echo", "verified when the text after the colon is yes", "echo:yes", live=True)]


@hookimpl
def continuity_verify(handles, context):
    if any(h.body == "boom" for h in handles):
        raise RuntimeError("the echo service is down")
    return {h: Observation("verified" if h.body == "yes" else "contradicted", f"echo said {h.body}", "echo", "1.2.3")
            for h in handles if h.scheme == "echo"}
'''


@pytest.fixture(scope="session")
def echo_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin built as a wheel and installed by pip into a folder of its own."""
    root = tmp_path_factory.mktemp("echo")
    wheel = root / "continuity_echo-1.2.3-py3-none-any.whl"
    info = "continuity_echo-1.2.3.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("continuity_echo.py", ECHO_PLUGIN)
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: continuity-echo\nVersion: 1.2.3\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/entry_points.txt", "[git_continuity]\necho = continuity_echo\n")
        z.writestr(
            f"{info}/RECORD",
            f"continuity_echo.py,,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/entry_points.txt,,\n{info}/RECORD,,\n",
        )
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
    )
    return site


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
    monkeypatch.setenv("PYTHONPATH", f"{echo_site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
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


def test_the_progress_line_is_drawn_on_a_terminal_only() -> None:
    terminal = FakeTerminal()
    progress = on_terminal(as_json=False, stream=terminal)
    assert isinstance(progress, Progress)
    progress.start(2)
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
    from git_continuity import verify

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    scanned = verify.entry_points()
    assert {name for name, _, _ in scanned} >= {"github", "gitlab", "gitea", "buildbot", "ci"}
    (kept,) = (tmp_path / "git-continuity").glob("entry-points-*.json")
    assert verify.entry_points() == scanned  # read back from the file
    kept.write_text('[["only", "git_continuity.verifiers.ci", "9.9"]]')
    assert verify.entry_points() == [("only", "git_continuity.verifiers.ci", "9.9")]
