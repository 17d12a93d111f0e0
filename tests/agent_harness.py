"""The real agent CLIs, run in a test: pinned npm packages in a cache folder, a scratch HOME
and CODEX_HOME, the model API imitated on loopback (model_imitation.py), every run bounded.

The packages live in ``$GIT_CONTINUITY_AGENTS_CACHE`` (default
``~/.cache/git-continuity-agents``, read when this module is imported, before the tests'
hermetic seal swaps HOME); the first test that needs them installs them there with ``npm install --prefix`` when npm is
on PATH (``.ci/run`` does it up front). Without npm a test is skipped with the command that
installs them, except under CI, where a missing agent is a failure.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from model_imitation import Imitation

PINS = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197"),
    "codex": ("@openai/codex", "0.171.0"),
    "gemini": ("@google/gemini-cli", "0.61.0"),  # runs on Node 20 (engines: node >=20)
}
CACHE = Path(os.environ.get("GIT_CONTINUITY_AGENTS_CACHE") or Path.home() / ".cache" / "git-continuity-agents")
# npm runs with the user's own HOME (its cache and settings), not the tests' sealed one.
NPM_HOME = os.environ.get("HOME", "")
RUN_TIMEOUT = 120  # seconds for one agent run; a healthy one takes a few


def packages() -> str:
    return " ".join(f"{package}@{version}" for package, version in PINS.values())


def install_command() -> str:
    return f"npm install --prefix {CACHE} --save-exact {packages()}"


def _installed(agent: str) -> str | None:
    package, _ = PINS[agent]
    try:
        found = json.loads((CACHE / "node_modules" / package / "package.json").read_text()).get("version")
    except (OSError, ValueError):
        return None
    return found if isinstance(found, str) and (CACHE / "node_modules" / ".bin" / agent).exists() else None


def _install() -> None:
    """npm install of the pinned packages into the cache, once, by whichever test process
    gets the lock first (the others wait for it): the README's test command needs no step
    by hand. Without npm nothing is tried; binary() says what is missing."""
    npm = shutil.which("npm")
    if npm is None:
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(_installed(agent) == version for agent, (_, version) in PINS.items()):
            return
        subprocess.run(
            [npm, "install", "--prefix", str(CACHE), "--save-exact", "--no-audit", "--no-fund", *packages().split()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "HOME": NPM_HOME},
            timeout=900,
            check=False,
        )


def binary(agent: str) -> Path:
    """The pinned agent's executable, installed on first use when npm is here; else a skip (a
    failure under CI) naming the install."""
    package, version = PINS[agent]
    if _installed(agent) != version:
        _install()
    found = _installed(agent)
    program = CACHE / "node_modules" / ".bin" / agent
    if found != version or not program.exists():
        there = f"{found} is" if found else "nothing is"
        said = f"{package}@{version} is needed in {CACHE} ({there} there); install it with: {install_command()}"
        if os.environ.get("CI") == "true":
            pytest.fail(said)
        pytest.skip(said)
    return program


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    seconds: float


def bounded(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = RUN_TIMEOUT) -> Run:
    """Run to the end or kill the whole process group at the timeout (an agent starts
    children: hooks, shells, its native binary)."""
    started = time.monotonic()
    child = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, err = child.communicate()
        raise AssertionError(f"{argv[0]} ran over {timeout} s:\n{out[-2000:]}\n{err[-2000:]}") from None
    return Run(child.returncode, out, err, time.monotonic() - started)


def base_env(home: Path) -> dict[str, str]:
    """The test's environment (already sealed by conftest) with this scratch HOME."""
    return {**os.environ, "HOME": str(home), "GIT_CONTINUITY_HOST": "laptop"}


# -- Claude Code ------------------------------------------------------------------------------


def claude_env(home: Path, model: Imitation) -> dict[str, str]:
    return {
        **base_env(home),
        "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-imitation",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def claude(work: Path, home: Path, model: Imitation, *args: str, env: dict[str, str] | None = None) -> Run:
    """``claude -p …`` in the project, Bash allowed (the scripted tool calls use it)."""
    program = binary("claude")
    return bounded([str(program), *args, "--allowedTools", "Bash"], cwd=work, env=env or claude_env(home, model))


# -- Codex --------------------------------------------------------------------------------------


def codex_env(home: Path) -> dict[str, str]:
    return {**base_env(home), "CODEX_HOME": str(home / ".codex"), "IMITATION_KEY": "sk-imitation"}


def codex_config(work: Path, model: Imitation, extra: str = "") -> str:
    return (
        'model = "gpt-imitation"\n'
        'model_provider = "imitation"\n'
        f"{extra}"
        "\n[model_providers.imitation]\n"
        'name = "imitation"\n'
        f'base_url = "{model.url}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "IMITATION_KEY"\n'
        f"\n[projects.{json.dumps(str(work))}]\n"
        'trust_level = "trusted"\n'
    )


def codex_hooks(work: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """What Codex itself says about the project's hooks (``codex app-server``, ``hooks/list``):
    each with its ``key``, ``currentHash`` and ``trustStatus``."""
    program = binary("codex")
    lines = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "git-continuity-tests", "version": "1"}}},
        {"method": "initialized"},
        {"id": 2, "method": "hooks/list", "params": {"cwds": [str(work)]}},
    ]
    child = subprocess.Popen(
        [str(program), "app-server"],
        cwd=work,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        child.stdin.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = child.stdout.readline()
            assert line, "codex app-server ended without answering hooks/list"
            message = json.loads(line)
            if message.get("id") == 2:
                (listed,) = message["result"]["data"]
                hooks: list[dict[str, Any]] = listed["hooks"]
                return hooks
        raise AssertionError("codex app-server did not answer hooks/list within 60 s")
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def trust_codex_hooks(work: Path, env: dict[str, str]) -> list[str]:
    """Trust the project's hooks the way ``/hooks`` does: each hook's current hash under
    ``[hooks.state."<key>"]`` in ``$CODEX_HOME/config.toml``. Returns the keys trusted."""
    config = Path(env["CODEX_HOME"]) / "config.toml"
    hooks = codex_hooks(work, env)
    text = config.read_text()
    for hook in hooks:
        text += f"\n[hooks.state.{json.dumps(hook['key'])}]\ntrusted_hash = {json.dumps(hook['currentHash'])}\n"
    config.write_text(text)
    return [hook["key"] for hook in hooks]


def setup_codex(work: Path, home: Path, model: Imitation, extra: str = "") -> dict[str, str]:
    env = codex_env(home)
    Path(env["CODEX_HOME"]).mkdir(parents=True, exist_ok=True)
    (Path(env["CODEX_HOME"]) / "config.toml").write_text(codex_config(work, model, extra))
    return env


def codex(work: Path, env: dict[str, str], *args: str) -> Run:
    """``codex exec …`` in the project without sandbox or approvals (the scripted tool calls
    run git in the test's folder)."""
    program = binary("codex")
    return bounded(
        [str(program), "exec", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", *args],
        cwd=work,
        env=env,
    )


# -- Gemini CLI ---------------------------------------------------------------------------------

GEMINI_MODEL = "gemini-2.5-pro"  # named, so that no routing request (a classifier's) comes first


def gemini_env(home: Path, model: Imitation) -> dict[str, str]:
    """The Gemini API on loopback (GOOGLE_GEMINI_BASE_URL; plain HTTP is allowed to localhost),
    an API key, the folder trusted for the run, and the API-key sign-in chosen in the user's
    settings (without it the headless CLI says "Invalid auth method selected.")."""
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}) + "\n")
    return {
        **base_env(home),
        "GOOGLE_GEMINI_BASE_URL": model.url,
        "GEMINI_API_KEY": "imitation",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def gemini(work: Path, env: dict[str, str], prompt: str) -> Run:
    """``gemini -p PROMPT`` in the project, every tool call approved (the scripted ones run git)."""
    program = binary("gemini")
    return bounded([str(program), "-p", prompt, "--yolo", "-m", GEMINI_MODEL], cwd=work, env=env)


def gate_reason(thread: str, check: str) -> str:
    """What the Stop gate says of one open thread whose one check, tag:v1.2, is contradicted."""
    return (
        "git-continuity: you may not stop yet: an open thread is finished only when its checks verify now.\n"
        f"Not done: 1 open thread ({thread}) not verified now.\n"
        "\n"
        f'{thread} "Release v1.2": 1 of 1 checks is not verified now\n'
        f"  contradicted  {check}  tag:v1.2\n"
        "                tag v1.2 does not exist here\n"
        "\n"
        "Make these checks pass, or park a thread that is not finished with: "
        "git continuity thread set ID waiting|watching|blocked\n"
        "If it is honestly not finished, record why (git continuity journal add TEXT) and park it."
    )
