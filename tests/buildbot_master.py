"""A real Buildbot master on 127.0.0.1 with sqlite and an in-process worker, for the tests.

It has one builder, ``tests``: check out the forced revision of the forced repository and
run ``sh check.sh`` there. Builds are forced through Buildbot's own JSON-RPC endpoint.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

MASTER_CFG = """\
from buildbot.plugins import schedulers, steps, util, worker

c = BuildmasterConfig = {}
c["workers"] = [worker.LocalWorker("local")]
c["protocols"] = {"pb": {"port": "tcp:0:interface=127.0.0.1"}}
c["change_source"] = []
c["schedulers"] = [
    schedulers.ForceScheduler(
        name="force",
        builderNames=["tests"],
        codebases=[
            util.CodebaseParameter(
                "",
                revision=util.StringParameter(name="revision", default=""),
                repository=util.StringParameter(name="repository", default=""),
                branch=util.FixedParameter(name="branch", default=""),
                project=util.FixedParameter(name="project", default=""),
            )
        ],
    )
]
factory = util.BuildFactory()
factory.addStep(steps.Git(repourl=util.Interpolate("%(src::repository)s"), mode="full", method="clobber"))
factory.addStep(steps.ShellCommand(name="check", command=["sh", "check.sh"]))
c["builders"] = [util.BuilderConfig(name="tests", workernames=["local"], factory=factory)]
c["title"] = "git-continuity tests"
c["buildbotURL"] = "http://127.0.0.1:{port}/"
c["www"] = {"port": "tcp:{port}:interface=127.0.0.1", "plugins": {}}
c["db"] = {"db_url": "sqlite:///state.sqlite"}
c["buildbotNetUsageData"] = None
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BuildbotMaster:
    """Owns the master process; ``stop`` ends it."""

    def __init__(self, basedir: Path) -> None:
        self.basedir = basedir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        buildbot = Path(sys.executable).parent / "buildbot"
        subprocess.run([str(buildbot), "create-master", "-q", str(basedir)], check=True, capture_output=True)
        (basedir / "master.cfg").write_text(MASTER_CFG.replace("{port}", str(self.port)))
        self.log = (basedir / "console.log").open("w")
        self.process = subprocess.Popen(
            [str(buildbot), "start", "--nodaemon", str(basedir)], stdout=self.log, stderr=subprocess.STDOUT
        )
        for _ in range(300):  # up to 30 s on a loaded machine; about 1 s usually
            if self.process.poll() is not None:
                raise RuntimeError(f"buildbot exited {self.process.returncode}: {self.console()}")
            try:
                self.get("/api/v2/builders")
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"buildbot did not answer on {self.url}: {self.console()}")

    def console(self) -> str:
        log = self.basedir / "twistd.log"
        return log.read_text()[-3000:] if log.exists() else ""

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.url + path, timeout=5) as answer:
            return json.loads(answer.read())

    def build(self, repository: Path, revision: str) -> dict[str, Any]:
        """Force a build of revision and wait for it to finish; the finished build."""
        call = {
            "jsonrpc": "2.0",
            "method": "force",
            "id": 1,
            "params": {"builderNames": ["tests"], "revision": revision, "repository": str(repository)},
        }
        request = urllib.request.Request(
            self.url + "/api/v2/forceschedulers/force",
            data=json.dumps(call).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=5) as answer:
            result = json.loads(answer.read())
        if "error" in result:
            raise RuntimeError(f"force failed: {result['error']}")
        buildset = result["result"][0]
        for _ in range(600):  # a build takes about a second here
            try:
                requests = self.get(f"/api/v2/buildrequests?buildsetid={buildset}")["buildrequests"]
                if requests and requests[0]["complete"]:
                    found = self.get(f"/api/v2/buildrequests/{requests[0]['buildrequestid']}/builds")["builds"]
                    if found and found[-1]["complete"]:
                        return dict(found[-1])
            except (OSError, http.client.HTTPException):
                pass  # an answer cut short on a busy machine (IncompleteRead): asked again at the next poll
            time.sleep(0.1)
        raise RuntimeError(f"build of {revision} did not finish: {self.console()}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
