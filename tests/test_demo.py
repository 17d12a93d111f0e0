"""The guided tour (issue 11): the short story in at most 150 lines, each chapter alone, the
whole tour, and what the runner prints (commands as typed, JSON answers indented)."""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import Ran, at_a_terminal

from git_continuity.commands.demo import NAMES, pretty, typed

ID = r"[2-9a-hjkmnp-z]{6}"
STARTED = datetime.now(timezone.utc).replace(second=0, microsecond=0)


@functools.cache  # each tour told once for all the tests that read it
def demo(*args: str) -> Ran:
    done = subprocess.run([sys.executable, "-m", "git_continuity", "demo", *args], capture_output=True, text=True)
    return Ran(done.returncode, done.stdout, done.stderr)


def steady(text: str) -> str:
    """Ids, object ids, times and the throwaway folder replaced by stable words."""
    text = re.sub(r"/\S*/git-continuity-demo-[^/\s]+", "ROOT", text)
    text = re.sub(rf"\b([a-z])-{ID}\b", r"\1-ID", text)
    text = re.sub(r"\b[0-9a-f]{40}\b", "<oid>", text)
    text = re.sub(r"\b[0-9a-f]{7}\b", "<short>", text)
    text = re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?Z?( UTC)?", "TIME", text)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


def steps(text: str) -> list[str]:
    """The commands shown, as typed after their prompt."""
    return [line[2:] for line in text.splitlines() if re.match(r"^  [\w-]*\$ ", line)]


def narration(text: str) -> str:
    """What the tour says between the commands and their output."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("  "))


@pytest.fixture
def story() -> Ran:
    return demo()


def test_the_short_story_is_told_in_at_most_150_lines(story: Ran) -> None:
    assert (story.code, story.err) == (0, "")
    assert len(story.out.splitlines()) <= 150, len(story.out.splitlines())
    # Commands as a person types them (no '"'"' re-quoting); each clone with its own prompt.
    assert steps(steady(story.out)) == [
        "work$ git continuity init --no-fetch-refspecs",
        'work$ git continuity objective set "Fix the login loop" --why "users bounce back to /login"',
        "work$ git continuity trust team join",
        "work$ git add .continuity.yaml",
        'work$ git commit -q -m "Join the signers"',
        'work$ git commit -q -am "Fix the login loop"',
        'mate$ git commit -q -am "Add release notes"',
        "mate$ git push -q",
        "work$ git push -q",
        'work$ git continuity claim add "the fix is pushed" --check pushed:HEAD@origin/main',
        'work$ git continuity claim add "the reviewers are happy"',
        "work$ git continuity orient --max-tokens 260",
        "work$ git pull -q --rebase",
        "work$ git push -q",
        'work$ git continuity claim add "the rebased fix is pushed" --check pushed:HEAD@origin/main',
        'work$ git continuity claim retract c-ID --why "rejected; c-ID replaces it"',
        "work$ git continuity hooks install",
        'work$ git continuity thread add "The login loop is fixed" --check file:test_login.py',
        'work$ git commit -q -am "Tidy login(); closes t-ID"',
        "work$ git log --oneline -1",
        "work$ git add test_login.py",
        'work$ git commit -q -am "Tidy login(); closes t-ID"',
        "work$ git continuity thread show t-ID",
        "work$ git push -q",
        "work$ git continuity push",
        "mate$ git pull -q",
        "mate$ git continuity trust team",
        "mate$ git continuity trust team accept",
        "mate$ git continuity pull",
        "mate$ git continuity status",
    ]
    assert "'\"'\"'" not in story.out
    assert story.out.count("states derived now, not stored") <= 1
    assert "stale" not in story.out


def test_the_push_that_was_rejected_is_seen_contradicted_then_retracted(story: Ran) -> None:
    out = steady(story.out)
    assert "  work$ git push -q\n    To ROOT/origin.git\n     ! [rejected]        main -> main (fetch first)\n" in out
    stale = re.search(
        rf"  work\$ git continuity claim add \"the fix is pushed\" --check pushed:HEAD@origin/main\n"
        rf"    Recorded claim (c-{ID}): the fix is pushed\n",
        story.out,
    )
    assert stale, story.out
    claim = stale[1]
    assert (
        "      now     contradicted: origin/main is at <short> (as pushed from here just now), which does not contain"
        " <short>\n" in out
    )
    # The fresh session's brief leads with it ...
    brief = story.out[story.out.index("work$ git continuity orient") :]
    assert f'    ## Do not act on these: not true now\n    - **{claim}** "the fix is pushed" ' in brief
    # ... and once retracted, no later brief carries it: the teammate's status names it only in the journal.
    assert f"\n    Claim {claim} retracted; the journal keeps what it said and why.\n" in story.out
    teammate = story.out[story.out.index("mate$ git continuity status") :]
    claims, journal = teammate.split("\n    Journal ")
    assert claim not in claims
    assert f'retracted claim {claim} "the fix is pushed"' in journal


def test_a_false_close_is_refused_at_the_commit_being_made(story: Ran) -> None:
    out = steady(story.out)
    refused = out[out.index('  work$ git commit -q -am "Tidy login(); closes t-ID"') :]
    assert refused.startswith(
        '  work$ git commit -q -am "Tidy login(); closes t-ID"\n'
        '    git-continuity: this commit closes t-ID ("The login loop is fixed"), '
        "but 1 of 1 checks is not verified now:\n"
        "      contradicted  c-ID  file:test_login.py\n"
        "                    test_login.py is not in the commit being made (tree <short>)\n"
    )
    # No commit was made: the last one is still the rebased fix.
    assert "\n  work$ git log --oneline -1\n    <short> Fix the login loop\n" in refused
    # With the test in it, the same commit goes through, and the close names it.
    closed = refused[refused.index("  work$ git add test_login.py\n") :]
    assert closed.startswith(
        "  work$ git add test_login.py\n"
        '  work$ git commit -q -am "Tidy login(); closes t-ID"\n'
        '    git-continuity: t-ID "The login loop is fixed": every check verified now; the thread is done.\n'
    )
    assert "\n      status  done\n" in closed
    assert re.search(r"\n      closed  TIME \(just now\) by commit <short>\n", closed), closed


def test_a_teammate_with_a_key_of_her_own_accepts_the_teams_list_and_takes_the_state_in(story: Ran) -> None:
    out = steady(story.out)
    teammate = out[out.index("\nSession 3, on the teammate's machine.") :]
    listed = teammate[teammate.index("  mate$ git continuity trust team\n") :]
    key = re.search(r"agent@demo.invalid  (SHA256:\S{43}) \(desk\)  not trusted here\n", listed)
    assert key, listed
    assert (
        "  mate$ git continuity trust team accept\n"
        "    Accepted the team's list of signers at <short> (.continuity.yaml at HEAD):\n"
        f"      trusted now      agent@demo.invalid  {key[1]}\n"
        "    Kept in ROOT/mate-home/config/git-continuity/allowed_signers; the next pull takes in what these keys"
        " signed.\n"
    ) in teammate
    assert "  mate$ git continuity pull\n    From origin:\n      main: new here (<short>)\n" in teammate
    assert (
        "      done       t-ID  [signed by agent@demo.invalid] The login loop is fixed  (1 of 1 checks verified;"
        " closed by <short>)\n"
    ) in teammate
    assert "      verified  c-ID  [signed by agent@demo.invalid] the rebased fix is pushed\n" in teammate
    assert "      prose     c-ID  [signed by agent@demo.invalid] the reviewers are happy\n" in teammate


def test_each_term_is_explained_where_it_is_first_said(story: Ran) -> None:
    said = narration(story.out)
    for term, explained in (
        ("stream", "its line of work (a stream, `main` by default)"),
        ("packet", "the packet, that current state"),
        ("claim", "records a claim: a statement plus a handle, an address that\nre-derives it"),
        ("dereference", "Checking a handle is a dereference"),
        ("prose", "One without a handle is\nprose: shown, never trusted."),
        ("orient", "It starts with orient (a brief"),
        ("thread", "a thread, a piece of work\nthat is done only when its acceptance checks verify"),
        ("evidence", "the evidence (the record of each dereference)"),
    ):
        first = re.search(rf"\b{term}\b", said)
        assert first, term
        at = said.index(explained)
        assert at <= first.start() < at + len(explained), (term, said[first.start() - 60 : first.start() + 20])


# What each chapter told alone must show: (a line of its output, a step that came before it).
CHAPTERS = {
    "story": ("    Claim c-ID retracted; the journal keeps what it said and why.", "claim retract"),
    "sync": ('                other  "announce 1.2 on the mailing list"  (TIME, <short>)', "conflict list"),
    "agents": (
        '      "reason": "git-continuity: you may not stop yet: an open thread is finished only when its checks '
        "verify now.\\n",
        "stop",
    ),
    "ci": ("                    PR #830 was merged at TIME by reviewer (merge commit <short>)", "--online"),
    "handoff": ("    - origin/remember-me: new at <short>", "orient"),
    "progress": (
        '    Stop-loss: t-ID "Docker build passes" is now blocked: its budget is spent '
        "(attempts 3 of 3, sessions 3 of 3).",
        "verify",
    ),
    "planning": (
        "      P0  t-ID  Fix the session timeout  (claimed by Demo Agent <agent@demo.invalid> on desk)",
        "ready",
    ),
    "places": (
        "    git-continuity: this is a donor checkout (branch old-parser): copy from it, commit nothing. Work happens"
        " in the home: the checkout of branch main, in ROOT/work.",
        'commit -q -am "Parse the old way"',
    ),
    "siblings": (
        '    Thread t-ID "The consumer shows the token field" is done: every check verified now; the evidence is '
        "recorded.",
        "thread close",
    ),
    "doctor": (
        "    Repair it: git continuity doctor --fix (moves the malformed files aside in a new commit on top), "
        "then git continuity push origin (a fast-forward).",
        "pull",
    ),
}


def test_every_chapter_has_its_key_line_here() -> None:
    assert sorted(CHAPTERS) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_chapter_is_told_alone(name: str) -> None:
    told = demo("--chapter", name)
    assert (told.code, told.err) == (0, ""), told.out
    out = steady(told.out)
    line, step = CHAPTERS[name]
    before = out[: out.index(line + "\n")]
    assert step in before.rsplit("$ ", 1)[1].split("\n")[0], before[-400:]
    if name != "story":
        assert out.startswith("\nThe setting, built quietly (the short story shows it step by step)")


def test_the_agent_hooks_answers_are_indented_json() -> None:
    told = steady(demo("--chapter", "agents").out)
    stopping = told[told.index("When it would stop with the release thread still open") :]
    assert (
        "    {\n"
        '      "decision": "block",\n'
        '      "reason": "git-continuity: you may not stop yet: an open thread is finished only when its checks '
        "verify now.\\n\n"
        "         Not done: 1 open thread (t-ID) not verified now.\\n\n"
    ) in stopping
    assert stopping.split("git-continuity-hook agent claude stop\n")[2].startswith(
        '    {\n      "systemMessage": "git-continuity: t-ID verifies now; close it with: '
        'git continuity thread close t-ID"\n'
    )


def test_the_pr_chapter_merges_the_pr_during_the_tour() -> None:
    told = demo("--chapter", "ci")
    assert told.code == 0, told.out + told.err
    merged = re.search(r"PR #830 was merged at (\d{4}-\d\d-\d\dT\d\d:\d\dZ) by reviewer", told.out)
    assert merged, told.out
    # The merge happens during the tour, after the claim was seen open: never a date in the past.
    assert datetime.strptime(merged[1], "%Y-%m-%dT%H:%MZ").replace(tzinfo=timezone.utc) >= STARTED
    assert "a LOCAL STAND-IN for GitHub's API\nanswers on http://127.0.0.1:PORT" in steady(told.out)
    assert "      now     verified: `tests` passed (exit 0) just now on <short>\n" in steady(told.out)
    # A thread waiting on the review is not retried; once the PR is merged, it closes.
    assert (
        "    Nothing to retry: 1 open thread (t-ID) waiting on someone else.\n"
        '    t-ID "PR 830 is merged": waiting on review since TIME (just now); don\'t retry\n'
    ) in steady(told.out)
    assert '\n    Thread t-ID "PR 830 is merged" is done: every check verified now' in steady(told.out)


def test_the_handoff_chapter_orients_on_a_second_clone() -> None:
    told = steady(demo("--chapter", "handoff").out)
    chapter = told[told.index("\nChapter handoff.") :]
    assert steps(chapter) == [
        "work$ git continuity orient",
        'work$ git continuity objective set "Ship 1.3: stay signed in" --why "1.2 is out; users ask"',
        'work$ git continuity next "finish the remember-me cookie on branch remember-me"',
        "work$ git switch -q -c remember-me",
        "work$ git add remember.py",
        'work$ git commit -q -m "Remember the user for 30 days"',
        'work$ git continuity thread add "Release 1.3" --check tag:v1.3',
        'work$ git continuity handoff --note "forget() is a stub; the cookie must be HttpOnly"',
        "work$ git push -q origin remember-me",
        "work$ git continuity push",
        "$ git clone -q origin.git laptop",
        "laptop$ git continuity orient",
        "laptop$ git continuity pull",
        "laptop$ git switch -q remember-me",
        "laptop$ git continuity orient",
    ]
    for said in (
        "    - uncommitted: 1 unstaged: remember.py\n",
        "    No continuity state for stream 'main' in this clone: refs/continuity/main does not exist here.",
        '    - on branch remember-me at <short> "Remember the user for 30 days"\n    - no uncommitted changes\n',
        "    - origin/remember-me: new at <short>\n",
        "    ## Since the last session: handoff h-ID, TIME by Demo Agent on desk (session s-ID)\n",
    ):
        assert said in chapter, said


def test_the_progress_chapter_leads_the_next_brief_with_the_stall() -> None:
    told = steady(demo("--chapter", "progress").out)
    lead = told[told.index("The next session's brief leads with it") :]
    assert "    ## Stalled: stop retrying these\n    - **t-ID made no progress in 3 attempts over 3 sessions" in lead
    assert "\n  work$ git continuity progress t-ID\n    t-ID  Docker build passes  (blocked)\n" in lead


def rows(table: str) -> list[list[str]]:
    """A thread's table of checks by repository: each row's repository and state."""
    return [line.split()[:2] for line in table.splitlines() if re.match(r"^      (here|api|consumer) ", line)]


def test_the_siblings_chapter_closes_only_when_each_repository_holds() -> None:
    told = steady(demo("--chapter", "siblings").out)
    chapter = told[told.index("\nChapter siblings.") :]
    refused = chapter[chapter.index("cannot close: 3 of 3 checks are not verified now.") :]
    refused = refused[: refused.index("\n\n")]
    assert rows(refused) == [
        ["here", "contradicted"],
        ["api", "contradicted"],
        ["consumer", "unknown"],
    ]
    assert (
        "not approved in consumer (ROOT/consumer) (approving a command there is a person's act, at their terminal)"
        in refused
    )
    closed = chapter[chapter.index("is done: every check verified now") :]
    assert rows(closed) == [
        ["here", "verified"],
        ["api", "verified"],
        ["consumer", "verified"],
    ]


def test_the_doctor_chapter_repairs_the_remote_as_a_fast_forward() -> None:
    told = steady(demo("--chapter", "doctor").out)
    chapter = told[told.index("\nChapter doctor.") :]
    assert steps(chapter) == [
        "mate$ git worktree add -q --detach ../mate-state refs/continuity/main",
        "mate-state$ git add .continuity/claims/c-ID.json",
        'mate-state$ git commit -q -m "Hand edit"',
        "mate-state$ git push -q origin HEAD:refs/continuity/main",
        "work$ git continuity pull",
        "work$ git continuity doctor",
        "work$ git continuity doctor --fix",
        "work$ git continuity push",
        "work$ git continuity doctor",
        "mate$ git continuity pull",
    ]
    for said in (
        "      origin's main (<short>): .continuity/claims/c-ID.json: not valid JSON: ",
        ".continuity/claims/c-ID.json moved into .continuity/quarantine/\n",
        "    doctor: nothing wrong (state refs, notes, tracking refs, locks, refspecs, git hooks, agent hooks, "
        "trust store, policy file, signing read)\n",
    ):
        assert said in chapter, said
    # The repair went on top of what the teammate pushed: no force push, the teammate fast-forwards.
    assert chapter.count("main: fast-forward <short>..<short>") == 2, chapter


def test_a_chapter_that_does_not_exist_is_named_with_the_ones_that_do() -> None:
    assert demo("--chapter", "tour") == Ran(
        2,
        "",
        "git-continuity: error: demo: no chapter 'tour'; the chapters are story, sync, agents, ci, handoff, "
        "progress, planning, places, siblings, doctor (git continuity demo -h says what each shows)\n",
    )


def test_the_help_lists_the_chapters() -> None:
    helped = demo("-h")
    assert helped.code == 0
    listed = helped.out[helped.out.index("chapters (--full tells them all, in this order):\n") :].splitlines()[1:]
    rows = [line for line in listed if not line.startswith("   ")]  # a folded row goes on under its column
    assert [line.split()[0] for line in rows] == list(NAMES)


@pytest.mark.slow
def test_the_whole_tour_tells_every_chapter_in_order() -> None:
    told = demo("--full")
    assert (told.code, told.err) == (0, ""), told.out[-3000:]
    heads = [line.split(".")[0] for line in told.out.splitlines() if line.startswith("Chapter ")]
    assert heads == [f"Chapter {name}" for name in NAMES if name != "story"]
    assert "The setting, built quietly" not in told.out  # each chapter goes on from the one before
    assert told.out.endswith(
        "\nThat is the whole tour. In your own repository: git continuity init, then git continuity help.\n"
    )


def test_the_tours_steps_are_served_by_the_clones_helper_even_when_the_tour_runs_at_a_terminal(tmp_path: Path) -> None:
    """Each step is `git continuity` as a script runs it, away from the terminal the tour may
    run at: the clones' helpers serve them (a step in a process of its own costs 0.3 s, and
    the whole tour was 30 s instead of 15)."""
    import shutil

    told = at_a_terminal(tmp_path, "demo", "--keep", timeout=120)
    assert told.code == 0, told.out[-2000:]
    root = Path(told.out.rsplit("The demo folder is kept: ", 1)[1].split()[0])
    try:
        assert len(list((root / "work" / ".git" / "continuity").glob("helper-*.sock"))) == 1
    finally:
        shutil.rmtree(root)  # its helpers leave once their repository is gone


# -- how the tour prints -------------------------------------------------------------------------


def test_commands_are_shown_as_a_person_types_them() -> None:
    assert typed(["git", "commit", "-m", "Claude Code runs git-continuity's hooks"]) == (
        'git commit -m "Claude Code runs git-continuity\'s hooks"'
    )
    assert typed(["git", "log", "--format=%h %s"]) == 'git log "--format=%h %s"'
    assert typed(["claim", "add", 'say "hi" $HOME', "--check", "cmd:true"]) == (
        "claim add 'say \"hi\" $HOME' --check cmd:true"
    )
    assert typed(["next", ""]) == 'next ""'


def test_json_answers_are_indented_with_their_texts_broken_after_each_newline() -> None:
    answer = {"decision": "block", "reason": 'one\n  "two"\n', "n": [1, {}], "empty": ""}
    assert pretty(answer) == [
        "{",
        '  "decision": "block",',
        '  "reason": "one\\n',
        '       \\"two\\"\\n',  # the text's own two spaces kept
        '     ",',
        '  "n": [',
        "    1,",
        "    {}",
        "  ],",
        '  "empty": ""',
        "}",
    ]
