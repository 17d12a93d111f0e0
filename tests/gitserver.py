"""A real git server on 127.0.0.1 for the sync tests: `git daemon` with receive-pack enabled.

Started by the tests themselves (nothing for CI to set up). git daemon needs a fixed port,
so a free one is picked and the daemon is waited for until it accepts connections; a port
taken meanwhile by someone else means another try with another port.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Server:
    base: Path  # the folder the daemon serves
    url: str  # git://127.0.0.1:<port>/

    def bare(self, name: str) -> tuple[Path, str]:
        """A new empty bare repository on the server: its folder and its URL."""
        path = self.base / f"{name}.git"
        subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True, capture_output=True)
        return path, f"{self.url}{name}.git"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def git_daemon(base: Path, home: Path) -> Iterator[Server]:
    """Serve every repository under base, read and write, until the block ends."""
    home.mkdir(parents=True, exist_ok=True)
    # The server's own environment: its git must not read the test runner's configuration.
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LC_ALL": "C",
    }
    for _ in range(5):
        port = _free_port()
        daemon = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--informative-errors",
                "--listen=127.0.0.1",
                f"--port={port}",
                f"--base-path={base}",
                str(base),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while daemon.poll() is None and not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.02)
        if daemon.poll() is None and _listening(port):
            break
        daemon.kill()
        daemon.wait()
    else:
        raise RuntimeError("git daemon did not start on 127.0.0.1")
    try:
        yield Server(base, f"git://127.0.0.1:{port}/")
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=5)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
