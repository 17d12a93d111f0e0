"""What each coding agent's hook costs as the agent runs it, at 1,000 claims (issue 24's budgets).

The repository of status_bench.py (commits, a state of 1,000 claims with local git handles and
journal entries) with an open thread, the hooks installed by `agent install claude` and
`agent install codex`; each hook's command is run exactly as it was written into the settings
file, through `sh -c`, with no controlling terminal and the agent's JSON on stdin, in turn:

  - SessionStart (Claude Code): the brief;
  - Stop (Claude Code): the closure gate at every turn's end, twice: after a turn that changed
    nothing since SessionStart (a question answered: let go at once) and after one that
    changed the work tree (the gate judges every open thread);
  - PostToolUse (Codex, after every shell command) and PostToolUseFailure (Claude Code):
    the loop notice, which runs in its own process either way (cli/hook_entry.py: handing it to
    the helper costs more than it saves);
  - UserPromptSubmit: no hook is installed for it (the row says so);

each in its own process (GIT_CONTINUITY_HELPER=0, as at a terminal) and handed to the
repository's helper (as an agent without a terminal runs it), beside the floors measured in
the same run and through the same shell: `python -c pass` and `python -c "import pygit2"`.

    python benchmarks/agent_hooks_bench.py [--runs 15] [--commits 10000] [--journal 10000] [--claims 1000]

Budgets, helper on, at 1,000 claims: Stop 60 ms, SessionStart 100 ms, PostToolUse 30 ms,
UserPromptSubmit 30 ms. Printed with --runs 5 on a 2-core machine (load average 2.1 at the
end; python -c pass 12 ms, import pygit2 91 ms), helper on / own process: SessionStart 96.8 /
200.8 ms, Stop 63.7 / 160.7 ms, PostToolUse (codex) 21.3 / 21.5 ms, PostToolUseFailure
(claude) 28.8 / 27.3 ms.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from status_bench import ENV, build_state, make_history, one_size_parser, sh

ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # installed packages carry their bytecode
OWN = {**ENV, "GIT_CONTINUITY_HELPER": "0"}
HELPED = {**ENV, "GIT_CONTINUITY_HELPER": "1"}
BUDGETS = {"SessionStart": 100.0, "Stop": 60.0, "PostToolUse": 30.0, "UserPromptSubmit": 30.0}


def installed(work: Path, settings: str, event: str) -> str | None:
    groups = json.loads((work / settings).read_text())["hooks"].get(event, [])
    commands = [h["command"] for g in groups for h in g["hooks"]]
    return str(commands[0]) if commands else None


def timed(command: str, cwd: Path, env: dict[str, str], stdin: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        ["sh", "-c", command], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, start_new_session=True
    )
    elapsed = (time.perf_counter() - started) * 1000
    assert done.returncode == 0, done.stderr
    return elapsed


def main() -> int:
    args = one_size_parser(__doc__).parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "history"
        t0 = time.perf_counter()
        revs = make_history(base, args.commits)
        work = Path(tmp) / "work"
        sh(Path(tmp), "git", "clone", "-q", "--no-local", str(base), str(work))
        build_state(work, revs, args.claims, args.journal)
        cont = ["git", "continuity"]
        sh(work, *cont, "thread", "add", "Ship it", "--check", f"reachable:{revs[-1]}@refs/heads/main")
        sh(work, *cont, "agent", "install", "claude")
        sh(work, *cont, "agent", "install", "codex")
        print(
            f"repository: {args.commits} commits, {args.claims} claims, {args.journal} journal entries; "
            f"built in {time.perf_counter() - t0:.1f}s"
        )
        said = {"session_id": "bench", "cwd": str(work)}
        for env in (OWN, HELPED):  # as Claude Code sets it for its hooks
            env["CLAUDE_PROJECT_DIR"] = str(work)
        failed = {"tool_name": "Bash", "tool_input": {"command": "make"}, "error": "Exit code 2\nOOMKilled"}
        passed = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": "app.py\n"}
        python = shlex.quote(sys.executable)
        rows: dict[str, tuple[str | None, dict[str, object]]] = {
            "floor: python -c pass": (f"{python} -c pass", {}),
            "floor: python -c 'import pygit2'": (f"{python} -c 'import pygit2'", {}),
            "SessionStart (claude)": (
                installed(work, ".claude/settings.json", "SessionStart"),
                {"hook_event_name": "SessionStart", "source": "startup"},
            ),
            "Stop (claude)": (
                installed(work, ".claude/settings.json", "Stop"),
                {"hook_event_name": "Stop", "stop_hook_active": False},
            ),
            "Stop, work changed (claude)": (
                installed(work, ".claude/settings.json", "Stop"),
                {"hook_event_name": "Stop", "stop_hook_active": False},
            ),
            "PostToolUse (codex)": (
                installed(work, ".codex/hooks.json", "PostToolUse"),
                {"hook_event_name": "PostToolUse", **passed},
            ),
            "PostToolUseFailure (claude)": (
                installed(work, ".claude/settings.json", "PostToolUseFailure"),
                {"hook_event_name": "PostToolUseFailure", **failed},
            ),
            "UserPromptSubmit (claude)": (
                installed(work, ".claude/settings.json", "UserPromptSubmit"),
                {"hook_event_name": "UserPromptSubmit", "prompt": "go on"},
            ),
        }
        timed(f"{python} -c pass", work, HELPED, "")
        subprocess.run([*cont, "status"], cwd=work, env=HELPED, capture_output=True, start_new_session=True)
        time.sleep(2)  # the helper the first run started is listening
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in rows}
        for _ in range(args.runs):
            for name, (command, data) in rows.items():
                if command is None:
                    continue
                stdin = json.dumps({**said, **data}) if data else ""
                for kept, env in zip(times[name], (OWN, HELPED), strict=True):
                    if "changed" in name:  # the session's turn changed the work tree
                        (work / "notes.txt").write_text(f"turn {time.perf_counter()}\n")
                    kept.append(timed(command, work, env, stdin))
        print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
        print(f"{'median of ' + str(args.runs):<34} {'own process':>12} {'helper':>9} {'budget':>8}")
        for name, (own, helped) in times.items():
            limit = BUDGETS.get(name.split(" ")[0].rstrip(",").removesuffix("Failure"))
            budget = f"{limit:.0f} ms" if limit else ""
            if not own:
                print(f"{name:<34} {'no hook installed: the agent runs nothing':>44}")
                continue
            print(f"{name:<34} {statistics.median(own):>9.1f} ms {statistics.median(helped):>6.1f} ms {budget:>8}")
        hanging(work, rows["SessionStart (claude)"], said, args.runs)
    return 0


def hanging(work: Path, session_start: tuple[str | None, dict[str, object]], said: dict[str, str], runs: int) -> None:
    """The brief's fresh look (#33) when a remote never answers: a second remote whose server
    takes the connection and says nothing. SessionStart and orient then take the look's bound
    (continuity.freshLook, a second) plus their budget at most, and say what was not reached."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def take() -> None:
        while True:
            held.append(server.accept()[0])

    threading.Thread(target=take, daemon=True).start()
    sh(work, "git", "remote", "add", "mirror", f"git://127.0.0.1:{server.getsockname()[1]}/cli.git")
    command, data = session_start
    assert command is not None
    stdin = json.dumps({**said, **data})
    orient = "git continuity orient"
    found: dict[str, tuple[list[float], list[float]]] = {"SessionStart (claude)": ([], []), "orient": ([], [])}
    for _ in range(runs):
        for name, line, text in (("SessionStart (claude)", command, stdin), ("orient", orient, "")):
            for kept, env in zip(found[name], (OWN, HELPED), strict=True):
                kept.append(timed(line, work, env, text))
    said_now = subprocess.run(
        ["git", "continuity", "orient"], cwd=work, env=HELPED, capture_output=True, text=True, check=True
    ).stdout
    (line,) = [x for x in said_now.splitlines() if x.startswith("Fresh look: mirror")]
    print(f"a second remote that never answers; the brief says: {line.split(': ', 1)[1].split(';')[0]}")
    for name, (own, helped) in found.items():
        limit = 1000 + (BUDGETS["SessionStart"] if name.startswith("SessionStart") else 200)
        shown = f"{name.split(' ')[0]}, a remote hangs"
        print(f"{shown:<34} {statistics.median(own):>9.1f} ms {statistics.median(helped):>6.1f} ms {limit:>5.0f} ms")
    print("budget with a remote that hangs: the fresh look's bound (1 s) + the hook's or orient's own budget")
    server.close()


if __name__ == "__main__":
    raise SystemExit(main())
