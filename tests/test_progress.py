"""Forward progress and stop-loss (issue 14): attempts recorded by every dereference of a
thread's checks that ends not verified, progress and stalls derived from them, budgets, the
stop-loss, the progress command, and what orient leads with."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import conftest
import pytest
from conftest import Ran, git, stop_hook

from git_continuity.clone.noise import normalize
from git_continuity.errors import UserError
from git_continuity.store.attempts import Attempt, AttemptCheck, Budget, course, fingerprint, parse_budget

Run = Callable[..., Ran]
# The same failure each time (not the machine running out: tests/test_machine_limit.py).
FAILING = "echo building at /tmp/tmpab12cd34 in 0.3s; echo layer too large; exit 2"


class Cli(conftest.Cli):
    def attempts(self, cwd: Path, thread: str | None = None) -> list[dict[str, object]]:
        """Every attempt entry on the state ref (of one thread), oldest first."""
        names = git(cwd, "ls-tree", "-r", "--name-only", "refs/continuity/main", ".continuity/attempts/").split()
        found = [json.loads(git(cwd, "show", f"refs/continuity/main:{n}")) for n in sorted(names) if n]
        return [a for a in found if thread is None or a["thread"] == thread]


@pytest.fixture
def gc(inproc: Run) -> Cli:
    return Cli(inproc)


@pytest.fixture
def started(gc: Cli, repo: Path) -> Path:
    gc.ok(repo, "init")
    gc.ok(repo, "objective", "set", "Ship the image", "--why", "the release needs it")
    conftest.approve(repo, FAILING)
    return repo


def as_session(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("GIT_CONTINUITY_SESSION", name)


# -- fingerprints -----------------------------------------------------------------------------


def test_a_process_id_is_noise_however_small() -> None:
    """In a container the pids are small: "pid 77" and "pid 88" are one failure (only numbers
    of four digits or more were taken for pids)."""
    for one, two, shown in (
        ("worker pid 77 died", "worker pid 88 died", "worker pid <n> died"),
        ("[pid 77] killed", "[PID 123] killed", "[pid <n>] killed"),
        ("Killed process 88 (python)", "Killed process 9 (python)", "Killed process <n> (python)"),
        ("pid=42 exited", "pid=7 exited", "pid=<n> exited"),
    ):
        assert normalize(one).lower() == normalize(two).lower() == shown.lower()
    assert normalize("exit 2 after 3 retries") == "exit 2 after 3 retries"  # other small numbers are kept


def test_two_runs_of_one_failure_have_one_fingerprint() -> None:
    one = (
        "exit 2 in 0.3s on work tree 4b825dc; output:\n"
        "wrote /tmp/pytest-of-ada/pytest-7/x0/out.log\npid 48213 at 2026-12-01T10:04:45.967Z\nimage too large"
    )
    two = (
        "exit 2 in 12.9s on work tree 9c1e7f3; output:\n"
        "wrote /tmp/pytest-of-ada/pytest-9/x3/out.log\npid 50177 at 2026-12-02T08:00:01Z\nimage too large"
    )
    assert (
        normalize(one)
        == normalize(two)
        == ("exit 2 in <duration> on work tree <hex>; output:\nwrote <tmp>\npid <n> at <time>\nimage too large")
    )
    assert fingerprint("cmd:make image", "contradicted", one) == fingerprint("cmd:make image", "contradicted", two)
    # What says something else is another observation: another exit code, another message.
    other = one.replace("exit 2", "exit 1")
    assert fingerprint("cmd:make image", "contradicted", other) != fingerprint("cmd:make image", "contradicted", one)
    assert fingerprint("cmd:make image", "contradicted", one.replace("image too large", "bad layer")) != fingerprint(
        "cmd:make image", "contradicted", one
    )
    # Every failure that says the machine ran out is one kind (machine.exhaustion): retrying
    # it on the same machine is the same attempt again, whatever else it printed.
    oom = one.replace("image too large", "OOMKilled")
    assert fingerprint("cmd:make image", "contradicted", oom) == fingerprint(
        "cmd:make image", "contradicted", oom.replace("exit 2", "exit 1")
    )


# -- attempts: recorded by verify, the Stop gate and a refused close (check writes nothing) -------


def test_every_dereference_that_ends_not_verified_appends_an_attempt(
    gc: Cli, started: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    as_session(monkeypatch, "s-first1")
    tid = gc.thread(started, "Docker build passes", f"cmd:{FAILING}")
    assert gc.run(started, "verify").code == 1
    assert gc.run(started, "check", "--closing").code == 1  # says why, and writes nothing
    assert stop_hook(started)[0]["decision"] == "block"
    assert gc.run(started, "thread", "close", tid).code == 1
    found = gc.attempts(started, tid)
    assert [a["via"] for a in found] == ["verify", "stop", "close"]
    # The same failure three times: one fingerprint.
    assert len({a["checks"][0]["fingerprint"] for a in found}) == 1  # type: ignore[index]
    head = git(started, "rev-parse", "HEAD")
    tree = git(started, "rev-parse", "HEAD^{tree}")
    claim = json.loads(gc.ok(started, "thread", "show", tid, "--json"))["thread"]["checks"][0]["id"]
    first = found[0]
    checks = first.pop("checks")
    assert isinstance(checks, list)
    (check,) = checks
    assert re.fullmatch(r"a-[2-9a-hjkmnp-z]{6}", str(first.pop("id")))
    assert re.fullmatch(r"e-[2-9a-hjkmnp-z]{6}", check.pop("evidence"))
    first.pop("at")
    assert first.pop("host")
    assert first == {
        "thread": tid,
        "via": "verify",
        "session": "s-first1",
        "commit": head,
        "tree": tree,
    }
    assert re.sub(r"^exit 2 in \d+\.\ds", "exit 2 in Ts", check.pop("observed")) == (
        f"exit 2 in Ts on work tree {tree[:7]}; output:\nbuilding at /tmp/tmpab12cd34 in 0.3s\nlayer too large"
    )
    assert check == {
        "claim": claim,
        "handle": f"cmd:{FAILING}",
        "result": "contradicted",
        "fingerprint": found[1]["checks"][0]["fingerprint"],  # type: ignore[index]
    }


def test_a_thread_that_verifies_or_has_no_checks_makes_no_attempt(gc: Cli, started: Path) -> None:
    gc.thread(started, "Readme is there", "file:README")
    gc.thread(started, "Nothing to check yet")
    assert gc.run(started, "verify").code == 0
    assert gc.run(started, "check", "--closing").code == 1  # the thread without checks holds the gate
    assert gc.attempts(started) == []


def test_attempts_from_two_clones_merge_as_a_union(
    gc: Cli, remote_and_clone: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, ours = remote_and_clone
    gc.ok(ours, "init")
    conftest.approve(ours, FAILING)
    tid = gc.thread(ours, "Docker build passes", f"cmd:{FAILING}")
    gc.ok(ours, "push")
    theirs = tmp_path / "theirs"
    git(tmp_path, "clone", "-q", str(bare), str(theirs))
    gc.ok(theirs, "pull")
    conftest.approve(theirs, FAILING)
    as_session(monkeypatch, "s-theirs")
    assert gc.run(theirs, "verify").code == 1
    as_session(monkeypatch, "s-oursxx")
    assert gc.run(ours, "verify").code == 1
    gc.ok(theirs, "push")
    gc.ok(ours, "sync")
    gc.ok(theirs, "pull")
    for clone in (ours, theirs):
        assert sorted(str(a["session"]) for a in gc.attempts(clone, tid)) == ["s-oursxx", "s-theirs"]


# -- progress derived -----------------------------------------------------------------------


def _attempt(n: int, session: str, seen: str, at: str | None = None) -> Attempt:
    check = AttemptCheck("c-aaaaaa", "cmd:make", "contradicted", fingerprint("cmd:make", "contradicted", seen), seen)
    return Attempt(
        f"a-{n}aaaaa", "t-aaaaaa", at or f"2026-12-0{n}T10:00:00.000Z", "verify", "h", (check,), session=session
    )


def test_stalled_is_the_same_failing_set_for_n_attempts_over_m_sessions() -> None:
    def derive(*made: Attempt) -> tuple[bool, int, int]:
        c = course(made, budget=Budget(), budget_from=None, stall_attempts=3, stall_sessions=2)
        return c.stalled, len(c.changes), len(c.run)

    same = "OOMKilled"
    assert derive(_attempt(1, "s-a", same), _attempt(2, "s-a", same)) == (False, 1, 2)
    assert derive(_attempt(1, "s-a", same), _attempt(2, "s-a", same), _attempt(3, "s-a", same)) == (False, 1, 3)
    assert derive(_attempt(1, "s-a", same), _attempt(2, "s-b", same), _attempt(3, "s-a", same)) == (True, 1, 3)
    # A change of what is observed is progress: the count starts again.
    assert derive(_attempt(1, "s-a", same), _attempt(2, "s-b", "no space"), _attempt(3, "s-c", "no space")) == (
        False,
        2,
        2,
    )
    # A clone whose clock is far off: ordered by what is known, never a crash.
    late = _attempt(4, "s-d", same, at="1999-01-01T00:00:00.000Z")
    assert derive(_attempt(1, "s-a", same), _attempt(2, "s-b", same), late) == (True, 1, 3)


def test_a_budget_is_spent_by_attempts_sessions_or_time() -> None:
    made = [_attempt(1, "s-a", "x"), _attempt(2, "s-b", "x"), _attempt(3, "s-b", "y")]
    spent = course(
        made, budget=parse_budget("attempts=3,sessions=3,time=2d"), budget_from=None, stall_attempts=3, stall_sessions=2
    ).spent
    assert spent == ("attempts 3 of 3", "time 2d of 2d")
    after = course(
        made,
        budget=parse_budget("attempts=3"),
        budget_from="2026-12-02T00:00:00.000Z",
        stall_attempts=3,
        stall_sessions=2,
    )
    assert (after.spent, after.used()) == ((), {"attempts": 2, "sessions": 1, "time": "1d"})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("tries=3", "--budget: unknown key 'tries' in 'tries=3' (known: attempts, sessions, time)"),
        ("attempts=-1", "--budget: attempts=-1 is negative; a budget is 1 or more"),
        ("sessions=two", "--budget: sessions=two is not a whole number from 1 to 99999"),
        (
            "attempts=99999999999999999999",
            "--budget: attempts=99999999999999999999 is not a whole number from 1 to 99999",
        ),
        ("time=-8h", "--budget: time=-8h is negative; a budget is 1 or more"),
        ("time=8 hours", "--budget: time=8 hours is not a duration such as 30m, 8h or 2d (at most 99999 of a unit)"),
        ("attempts", "--budget: attempts needs a value, e.g. attempts=3"),
        ("", "--budget: give at least one of attempts=N, sessions=N, time=8h"),
    ],
)
def test_a_bad_budget_is_named(text: str, said: str) -> None:
    with pytest.raises(UserError) as raised:
        parse_budget(text)
    assert str(raised.value) == said


# -- the scenario of issue 14: the same failure in three sessions ------------------------------


def _session(gc: Cli, cwd: Path, note: str) -> tuple[str, Ran]:
    """One session: orient, verify, handoff. Returns the brief it started with and verify."""
    brief = gc.ok(cwd, "orient")
    tried = gc.run(cwd, "verify")
    gc.ok(cwd, "handoff", "--note", note)
    return brief, tried


def test_the_same_failure_in_three_sessions_stops_the_loss(gc: Cli, started: Path) -> None:
    tid = gc.thread(started, "Docker build passes", f"cmd:{FAILING}")
    assert gc.ok(started, "thread", "set", tid, "open", "--budget", "attempts=3,sessions=3") == (
        f"Thread {tid} is open.\n  its budget (attempts=3,sessions=3) counts attempts from now on\n"
    )
    outs = [_session(gc, started, f"try {n}") for n in (1, 2, 3)]
    for _, ran in outs:
        assert ran.code == 1
    assert "Stop-loss" not in outs[1][1].out
    assert outs[2][1].out.endswith(
        f'\nStop-loss: {tid} "Docker build passes" is now blocked: its budget is spent (attempts 3 of 3, sessions 3 '
        f"of 3).\n  Stop retrying it. Reopen it only with a new approach: git continuity thread set {tid} open "
        "--budget attempts=N (or add a new check).\n"
    )
    # Session 2 started with no stall yet (one attempt); the next session starts with it.
    assert "Stalled" not in outs[1][0]
    brief = gc.ok(started, "orient")
    lead = brief.split("\n\n")[1]
    assert conftest.normalize(lead) == (
        "## Stalled: stop retrying these\n"
        f"- **{tid} made no progress in 3 attempts over 3 sessions since TIME UTC (just now); same observation "
        'each time: "layer too large"; budget spent (attempts 3 of 3, sessions 3 of 3), blocked by the stop-loss; ways '
        f"on: change the approach (git continuity thread set {tid} open --budget …, or a new check) or leave it "
        'blocked and say why (git continuity journal add "…")**'
    )
    # The thread is blocked with the reason, the attempts and the evidence it rests on.
    shown = json.loads(gc.ok(started, "thread", "show", tid, "--json"))["thread"]
    blocked = shown["blocked"]
    tried = gc.attempts(started, tid)
    assert (shown["status"], blocked["reason"], blocked["spent"], blocked["attempts"], blocked["observed"]) == (
        "blocked",
        "stop-loss",
        ["attempts 3 of 3", "sessions 3 of 3"],
        [a["id"] for a in tried],
        "layer too large",
    )
    assert blocked["evidence"] == [tried[-1]["checks"][0]["evidence"]]  # type: ignore[index]
    status = gc.ok(started, "status")
    assert conftest.normalize(status.split("Threads ")[1].split("\n")[2]) == (
        '    stop-loss TIME UTC: budget spent (attempts 3 of 3, sessions 3 of 3) after 3 attempts: "layer too large"; '
        f"reopen with a new approach: git continuity thread set {tid} open --budget …"
    )
    # The gate no longer holds the agent for it; verifying again counts, but blocks nothing new.
    assert gc.run(started, "check", "--closing").out == "No open threads: none waits to be closed.\n"
    # Reopening is explicit, and starts the count again.
    gc.ok(started, "thread", "set", tid, "open", "--budget", "attempts=5")
    again = json.loads(gc.ok(started, "progress", tid, "--json"))["threads"][0]
    assert (again["status"], again["blocked"], again["used"]["attempts"], again["spent"]) == ("open", None, 0, [])
    assert again["stalled"] is True  # what it fails has not changed: still stalled until it does


def _stop(cwd: Path, active: bool) -> dict[str, object]:
    done = subprocess.run(
        ["git-continuity-hook", "agent", "claude", "stop"],
        input=json.dumps({"session_id": "conv-1", "cwd": str(cwd), "stop_hook_active": active}),
        capture_output=True,
        text=True,
    )
    assert (done.returncode, done.stderr) == (0, "")
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def test_once_the_budget_is_spent_the_stop_gate_asks_for_a_handoff_and_lets_the_agent_stop(
    gc: Cli, started: Path
) -> None:
    tid = gc.thread(started, "Docker build passes", f"cmd:{FAILING}")
    gc.ok(started, "thread", "set", tid, "open", "--budget", "attempts=2")
    first = _stop(started, False)
    assert first["decision"] == "block"
    assert str(first["reason"]).startswith("git-continuity: you may not stop yet")
    assert "Stop-loss" not in str(first["reason"])
    second = _stop(started, True)
    assert second == {
        "decision": "block",
        "reason": f'git-continuity: Stop-loss: {tid} "Docker build passes" is now blocked: its budget is spent '
        f"(attempts 2 of 2).\n  Stop retrying it. Reopen it only with a new approach: git continuity thread set "
        f"{tid} open --budget attempts=N (or add a new check).\nDo not retry it in this session. Record a handoff "
        f'that names the reason, then stop:\n  git continuity handoff --note "{tid} stopped by the stop-loss '
        '(attempts 2 of 2): what was tried, and what a new approach needs"',
    }
    assert [a["via"] for a in gc.attempts(started, tid)] == ["stop", "stop"]
    # The thread is blocked now: the gate no longer sends the agent back for it.
    assert _stop(started, True) == {}
    assert len(gc.attempts(started, tid)) == 2


def test_a_bad_budget_on_the_command_line_is_exit_2_and_writes_nothing(gc: Cli, started: Path) -> None:
    before = conftest.state_refs(started)
    refused = gc.run(started, "thread", "add", "Docker build passes", "--check", "file:README", "--budget", "tries=3")
    assert (refused.code, refused.out, refused.err) == (
        2,
        "",
        "git-continuity: error: --budget: unknown key 'tries' in 'tries=3' (known: attempts, sessions, time)\n",
    )
    tid = gc.thread(started, "Docker build passes", "file:README")
    before = conftest.state_refs(started)
    refused = gc.run(started, "thread", "set", tid, "open", "--budget", "attempts=3,sessions=-2")
    assert (refused.code, refused.err) == (
        2,
        "git-continuity: error: --budget: sessions=-2 is negative; a budget is 1 or more\n",
    )
    assert conftest.state_refs(started) == before
    added = gc.ok(
        started, "thread", "add", "Image is small", "--check", "file:README", "--budget", "time=8h,attempts=4"
    )
    assert "  budget attempts=4,time=8h: the stop-loss blocks it once that is spent\n" in added


def test_progress_says_a_thread_without_checks_makes_no_attempts(gc: Cli, started: Path) -> None:
    tid = gc.thread(started, "Think about the cache")
    other = gc.thread(started, "Readme is there", "file:README")
    assert gc.ok(started, "progress") == (
        f"{tid}  Think about the cache  (open)\n"
        "  no checks: nothing is tried, so it makes no attempts and never stalls\n\n"
        f"{other}  Readme is there  (open)\n"
        "  no attempts yet: its checks never failed when dereferenced\n"
    )
    data = json.loads(gc.ok(started, "progress", tid, "--json"))
    assert data["threads"][0]["note"] == "no checks: nothing is tried, so it makes no attempts and never stalls"
    refused = gc.run(started, "progress", "t-zzzzzz")
    assert (refused.code, refused.err) == (
        2,
        f"git-continuity: error: no thread 't-zzzzzz' in stream 'main' (threads: {', '.join(sorted([tid, other]))})\n",
    )


def test_a_malformed_attempt_is_named_and_nothing_is_written_on_top(gc: Cli, started: Path) -> None:
    tid = gc.thread(started, "Docker build passes", f"cmd:{FAILING}")
    path = f".continuity/attempts/{tid}/20261201T100000.000000Z-a-2222aa.json"
    bad = {"id": "a-2222aa", "thread": tid, "at": "2026-12-01T10:00:00.000Z", "via": "guess", "host": "h", "checks": []}
    conftest.write_state(started, {path: json.dumps(bad, indent=2) + "\n"})
    refused = gc.run(started, "verify")
    assert refused.code == 2
    assert refused.err.splitlines()[1:3] == [
        f"  {path} line 7: checks: [] should be non-empty",
        f"  {path} line 5: via: 'guess' is not one of ['verify', 'check', 'stop', 'close']",
    ]


def test_the_policy_sets_when_a_thread_stalls_and_the_default_budget(gc: Cli, started: Path) -> None:
    (started / ".continuity.yaml").write_text("stalled: {attempts: 2, sessions: 1}\nbudget: {attempts: 2}\n")
    tid = gc.thread(started, "Docker build passes", f"cmd:{FAILING}")
    assert gc.run(started, "verify").code == 1
    first = json.loads(gc.ok(started, "progress", "--json"))
    assert (first["stalled_after"], first["threads"][0]["stalled"]) == ({"attempts": 2, "sessions": 1}, False)
    assert first["threads"][0]["budget"] == {"attempts": 2}
    assert "Stop-loss" in gc.run(started, "verify").out
    after = json.loads(gc.ok(started, "progress", "--json"))["threads"][0]
    assert (after["stalled"], after["status"], after["spent"]) == (True, "blocked", ["attempts 2 of 2"])
    (started / ".continuity.yaml").write_text("budget: {tries: 2}\n")
    refused = gc.run(started, "verify")
    assert (refused.code, refused.err) == (
        2,
        f"git-continuity: error: {started / '.continuity.yaml'} line 1: budget.tries: unknown key 'tries'\n",
    )
    assert tid


# -- the picture ----------------------------------------------------------------------------


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI") == "true":  # as the agent tests do: under CI a missing tool fails
            pytest.fail("chromium is not installed (Debian package chromium)")
        pytest.skip("chromium is not installed (Debian package chromium)")
    return found


def test_the_html_page_renders_in_chromium_with_a_mark_per_attempt_and_the_stop_loss(
    gc: Cli, started: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = _chromium()
    tid = gc.thread(started, "Docker build passes <b>now</b>", f"cmd:{FAILING}")
    gc.ok(started, "thread", "set", tid, "open", "--budget", "attempts=3")
    other = gc.thread(started, "Readme is there", "file:README")
    for n in (1, 2, 3):
        as_session(monkeypatch, f"s-sess{n}x")
        gc.run(started, "verify")
    page = tmp_path / "out" / "progress.html"
    page.parent.mkdir()
    assert gc.ok(started, "progress", "--html", str(page)) == f"Wrote {page}: 2 threads, 3 attempts.\n"
    text = page.read_text()
    assert "<b>" not in text and "&lt;b&gt;now" in text  # state is data, never markup
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)  # self-contained: nothing fetched
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--window-size=1000,400"]
    shot = tmp_path / "progress.png"
    env = {**os.environ, "HOME": str(tmp_path / "chromium-home")}
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, env=env, check=True
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, env=env, check=True
    ).stdout
    rendered = re.search(r'<pre id="rendered" hidden="">([^<]*)</pre>', dom)  # kept for programs, not shown
    assert rendered is not None, dom[-500:]
    assert rendered.group(1).splitlines() == [f"{tid} marks=3 stop-loss=1", f"{other} marks=0 stop-loss=0"]


def test_the_html_page_goes_only_into_a_folder_that_exists(gc: Cli, started: Path, tmp_path: Path) -> None:
    gc.thread(started, "Readme is there", "file:README")
    missing = tmp_path / "no" / "such" / "progress.html"
    assert gc.run(started, "progress", "--html", str(missing)) == Ran(
        2,
        "",
        f"git-continuity: error: --html {missing}: the folder {missing.parent} does not exist; nothing was written\n",
    )
    assert not (tmp_path / "no").exists()
    (tmp_path / "a-file").write_text("x\n")
    under_file = tmp_path / "a-file" / "progress.html"
    assert gc.run(started, "progress", "--html", str(under_file)) == Ran(
        2, "", f"git-continuity: error: --html {under_file}: {under_file.parent} is not a folder; nothing was written\n"
    )
