"""Real git servers on 127.0.0.1 for the sync tests: `git daemon` with receive-pack enabled,
and git's smart-HTTP server `git http-backend` behind Python's own HTTP server, with the
policies of remotes that do not take every ref (pre-receive hooks, and a proxy's 403).

Started by the tests themselves (nothing for CI to set up). git daemon needs a fixed port,
so a free one is picked and the daemon is waited for until it accepts connections; a port
taken meanwhile by someone else means another try with another port.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Server:
    base: Path  # the folder the daemon serves
    url: str  # git://127.0.0.1:<port>/ or http://127.0.0.1:<port>/
    http: _HTTPServer | None = None  # the HTTP server, for http_backend

    def fail_next(self, times: int) -> None:
        """Answer the next ``times`` requests with HTTP 500, as a busy forge does now and then."""
        assert self.http is not None, "only the HTTP server fails on purpose"
        self.http.failing = times

    @property
    def failing(self) -> int:
        """How many of the failures asked for are still to come."""
        assert self.http is not None
        return self.http.failing

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


# What the Claude Code on the web proxy answers a push of any ref but its session branches.
PROXY_WORDS = "Unable to parse branch information from push data"

# Server-side policies, as git's pre-receive hook (all or nothing: one bad ref refuses the
# whole push, as the proxies and forges do).
POLICIES = {
    # A cloud sandbox's proxy: claude/* branches only.
    "claude-branches-only": (
        '#!/bin/sh\nwhile read old new ref; do\n  case "$ref" in\n    refs/heads/claude/*) ;;\n'
        f'    *) echo "{PROXY_WORDS}"; exit 1 ;;\n  esac\ndone\n'
    ),
    # Bitbucket Server: no refs/notes/*.
    "no-notes": (
        '#!/bin/sh\nwhile read old new ref; do\n  case "$ref" in\n'
        '    refs/notes/*) echo "$ref: pushing notes is not supported"; exit 1 ;;\n  esac\ndone\n'
    ),
}


def set_policy(bare: Path, name: str | None) -> None:
    """Give a bare repository one of the POLICIES (None: take every ref again)."""
    hook = bare / "hooks" / "pre-receive"
    if name is None:
        hook.unlink(missing_ok=True)
        return
    hook.write_text(POLICIES[name])
    hook.chmod(0o755)


def _pkt_refs(body: bytes) -> list[str]:
    """The ref names a receive-pack request updates: its pkt-lines up to the first flush."""
    refs, at = [], 0
    while at + 4 <= len(body):
        size = int(body[at : at + 4], 16)
        if size == 0:
            break
        line = body[at + 4 : at + size].split(b"\0")[0].decode(errors="replace").strip()
        refs.append(line.split(" ")[-1])
        at += size
    return refs


class _Backend(BaseHTTPRequestHandler):
    """`git http-backend` as a CGI program, one process per request, as a web server runs it."""

    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._cgi(b"")

    def do_POST(self) -> None:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = b""
            while (size := int(self.rfile.readline().strip() or b"0", 16)) > 0:
                body += self.rfile.read(size)
                self.rfile.readline()
            self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.server.proxy and self.path.endswith("/git-receive-pack"):
            bad = [ref for ref in _pkt_refs(body) if not ref.startswith("refs/heads/claude/")]
            if bad:  # the proxy's answer, before git ever sees the push
                words = PROXY_WORDS.encode()
                self.send_response(403)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(words)))
                self.end_headers()
                self.wfile.write(words)
                return
        self._cgi(body)

    def _cgi(self, body: bytes) -> None:
        with self.server.lock:
            fail = self.server.failing > 0
            self.server.failing -= fail
        if fail:
            words = b"Internal Server Error"
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(words)))
            self.end_headers()
            self.wfile.write(words)
            return
        path, _, query = self.path.partition("?")
        env = {
            **self.server.env,
            "GIT_PROJECT_ROOT": str(self.server.base),
            "GIT_HTTP_EXPORT_ALL": "1",
            "REMOTE_USER": "tester",  # receive-pack is served to an authenticated user only
            "REMOTE_ADDR": "127.0.0.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = done.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode(errors="replace").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    base: Path
    env: dict[str, str]
    proxy: bool
    failing: int = 0  # requests still to be answered with HTTP 500
    lock: threading.Lock


@contextmanager
def http_backend(base: Path, home: Path, *, proxy: bool = False) -> Iterator[Server]:
    """Serve every repository under base over smart HTTP (git's own `git http-backend`) on
    127.0.0.1 until the block ends. ``proxy``: answer a push of any ref outside
    refs/heads/claude/* with HTTP 403 and PROXY_WORDS, as a cloud sandbox's proxy does."""
    home.mkdir(parents=True, exist_ok=True)
    httpd = _HTTPServer(("127.0.0.1", 0), _Backend)
    httpd.base = base
    httpd.proxy = proxy
    httpd.lock = threading.Lock()
    httpd.env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "LC_ALL": "C",
    }
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(base, f"http://127.0.0.1:{httpd.server_address[1]}/", httpd)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
