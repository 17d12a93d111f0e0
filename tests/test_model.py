"""model.py on plain values: the rules that derive a claim's state, ids, handles and times."""

from __future__ import annotations

import json
import secrets
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_continuity import constants
from git_continuity.errors import UserError
from git_continuity.model import (
    Claim,
    Derived,
    Evidence,
    Handle,
    Observation,
    Result,
    ago,
    derive_state,
    new_id,
    parse_handle,
    parse_stamp,
    shown,
    sortable_name,
    stamp,
)

SCHEMA = Path(__file__).resolve().parent.parent / "schema"
AT = datetime(2026, 11, 30, 10, 0, 0, tzinfo=timezone.utc)
DAY = timedelta(hours=24)
TRACKING = "refs/remotes/origin/main"
OLD_TIP = "a" * 40
NEW_TIP = "b" * 40


def claim(handle: str | None = "pushed:" + "c" * 40 + "@origin/main") -> Claim:
    return Claim(
        id="c-k7m2qx",
        text="the fix is pushed",
        added_at="2026-11-29T09:00:00.000Z",
        added_by="Ada <ada@example.com>",
        host="box",
        handle=handle,
    )


def evidence(
    result: Result = "verified",
    *,
    checked: datetime = AT - timedelta(hours=1),
    depends_on: dict[str, str] | None = None,
) -> Evidence:
    return Evidence(
        id="e-abcdef",
        claim="c-k7m2qx",
        handle=claim().handle or "",
        result=result,
        observed="origin/main is at aaaaaaa, which contains ccccccc",
        verifier="git",
        verifier_version="0.1.0",
        checked_at=stamp(checked),
        host="box",
        depends_on={TRACKING: OLD_TIP} if depends_on is None else depends_on,
    )


def derive(
    c: Claim, live: Observation | None = None, ev: Evidence | None = None, moved: dict[str, str | None] | None = None
) -> Derived:
    return derive_state(c, live, ev, at=AT, moved=moved or {}, max_age=DAY)


# -- derive_state ---------------------------------------------------------------------------


def test_a_claim_without_a_handle_is_prose_whatever_else_is_known() -> None:
    live = Observation("verified", "x", "git", "1")
    assert derive(claim(None), live, evidence()) == Derived("prose", "no handle: shown, never trusted", None)


@pytest.mark.parametrize("result", ["verified", "contradicted", "unknown"])
def test_a_live_dereference_wins_over_old_evidence_and_is_timed_now(result: Result) -> None:
    live = Observation(result, f"live says {result}", "git", "1")
    got = derive(claim(), live, evidence("contradicted" if result == "verified" else "verified"))
    assert got == Derived(result, f"live says {result}", "2026-11-30T10:00:00.000Z")


def test_a_handle_never_dereferenced_is_unchecked() -> None:
    assert derive(claim()) == Derived("unchecked", "never dereferenced: run git continuity verify", None)


@pytest.mark.parametrize("result", ["verified", "contradicted", "unknown"])
def test_recent_evidence_whose_dependencies_did_not_move_gives_its_result(result: Result) -> None:
    ev = evidence(result)
    assert derive(claim(), ev=ev, moved={TRACKING: OLD_TIP}) == Derived(
        result,
        "origin/main is at aaaaaaa, which contains ccccccc",
        "2026-11-30T09:00:00.000Z",
    )


def test_evidence_turns_stale_when_what_it_depended_on_moved() -> None:
    got = derive(claim(), ev=evidence(), moved={TRACKING: NEW_TIP})
    assert got == Derived(
        "stale",
        "refs/remotes/origin/main moved since it was verified 1 hour ago: "
        "origin/main is at aaaaaaa, which contains ccccccc",
        "2026-11-30T09:00:00.000Z",
    )


def test_evidence_turns_stale_when_what_it_depended_on_is_gone() -> None:
    got = derive(claim(), ev=evidence("contradicted"), moved={TRACKING: None})
    assert got.state == "stale"
    assert got.observed == (
        "refs/remotes/origin/main moved since it was contradicted 1 hour ago: "
        "origin/main is at aaaaaaa, which contains ccccccc"
    )


def test_only_the_dependencies_that_moved_are_named() -> None:
    ev = evidence(depends_on={TRACKING: OLD_TIP, "refs/tags/v1": OLD_TIP, "refs/heads/x": OLD_TIP})
    got = derive(claim(), ev=ev, moved={TRACKING: OLD_TIP, "refs/tags/v1": NEW_TIP, "refs/heads/x": None})
    assert got.observed.startswith("refs/tags/v1, refs/heads/x moved since it was verified")


def test_a_dependency_that_was_not_looked_up_does_not_make_evidence_stale() -> None:
    # verify.assess only looks up refs/...; other keys (a service's etag, say) are not "moved".
    ev = evidence(depends_on={"https://ci.example/run/1": "etag-1"})
    assert derive(claim(), ev=ev, moved={}).state == "verified"


def test_evidence_older_than_the_maximum_age_is_stale() -> None:
    ev = evidence(checked=AT - timedelta(days=2, minutes=5))
    assert derive(claim(), ev=ev, moved={TRACKING: OLD_TIP}) == Derived(
        "stale",
        "too old to trust: it was verified 2 days ago: origin/main is at aaaaaaa, which contains ccccccc",
        "2026-11-28T09:55:00.000Z",
    )


def test_evidence_exactly_at_the_maximum_age_still_counts() -> None:
    assert derive(claim(), ev=evidence(checked=AT - DAY)).state == "verified"
    assert derive(claim(), ev=evidence(checked=AT - DAY - timedelta(milliseconds=1))).state == "stale"


def test_a_moved_dependency_is_reported_before_age() -> None:
    ev = evidence(checked=AT - timedelta(days=3))
    assert derive(claim(), ev=ev, moved={TRACKING: NEW_TIP}).observed.startswith("refs/remotes/origin/main moved since")


# -- ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "prefix"), [("claim", "c"), ("blocker", "b"), ("journal", "j"), ("evidence", "e"), ("objective", "o")]
)
def test_new_ids_have_the_kinds_prefix_and_the_typable_form(kind: str, prefix: str) -> None:
    ids = {new_id(kind) for _ in range(200)}
    assert len(ids) == 200
    for i in ids:
        assert constants.ID_RE.match(i), i
        assert i.startswith(prefix + "-")
        assert not set(i[2:]) & set("01ilo"), i


def test_the_id_form_is_the_one_the_schemas_accept() -> None:
    claim_schema = json.loads((SCHEMA / "claim.schema.json").read_text())
    assert claim_schema["properties"]["id"]["pattern"] == constants.ID_RE.pattern


def test_new_id_draws_again_while_the_id_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    draws = iter("222222222222333333444444")
    monkeypatch.setattr(secrets, "choice", lambda alphabet: next(draws))
    assert new_id("claim", {"c-222222", "c-333333"}) == "c-444444"


def test_new_id_of_an_unknown_kind_is_a_bug() -> None:
    with pytest.raises(KeyError):
        new_id("thing")


# -- handles --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "handle"),
    [
        ("commit:HEAD", Handle("commit", "HEAD")),
        ("clean:", Handle("clean", "")),
        ("ref:refs/heads/main=HEAD", Handle("ref", "refs/heads/main=HEAD")),
        ("github:pr/o/r#1=merged", Handle("github", "pr/o/r#1=merged")),
        ("cmd:make test: all", Handle("cmd", "make test: all")),
        ("x-1:y", Handle("x-1", "y")),
    ],
)
def test_parse_handle_splits_at_the_first_colon(text: str, handle: Handle) -> None:
    assert parse_handle(text) == handle
    assert parse_handle(text).text == text


def test_a_scheme_in_the_wrong_case_is_refused_with_the_one_meant() -> None:
    with pytest.raises(UserError) as raised:
        parse_handle("Commit:HEAD")
    assert str(raised.value) == (
        "handle 'Commit:HEAD' is not of the form scheme:address, e.g. commit:HEAD or tag:v1.2\n"
        "(schemes are lower case: did you mean commit:HEAD?)"
    )


@pytest.mark.parametrize("text", ["", "HEAD", ":HEAD", "1commit:x", "com mit:x", "-commit:x", "c_o:x", "commit HEAD"])
def test_parse_handle_refuses_what_is_not_scheme_colon_address(text: str) -> None:
    with pytest.raises(UserError) as raised:
        parse_handle(text)
    assert str(raised.value) == (
        f"handle {text!r} is not of the form scheme:address, e.g. commit:HEAD or tag:v1.2\n"
        "(git continuity plugins lists the schemes this machine knows)"
    )


@pytest.mark.parametrize("text", ["@api:", "@api:HEAD", "@api:Commit HEAD"])
def test_a_scoped_handle_with_nothing_valid_after_the_sibling_is_named_whole(text: str) -> None:
    with pytest.raises(UserError) as raised:
        parse_handle(text)
    assert str(raised.value) == (
        f"handle {text!r} names sibling 'api' but no handle of the form scheme:address after it, "
        "e.g. @api:pushed:HEAD@origin/main\n(git continuity plugins lists the schemes this machine knows)"
    )


# -- times ----------------------------------------------------------------------------------


def test_stamp_is_utc_to_the_millisecond_and_parses_back() -> None:
    moment = datetime(2026, 11, 30, 12, 15, 2, 123999, tzinfo=timezone(timedelta(hours=2)))
    assert stamp(moment) == "2026-11-30T10:15:02.123Z"
    assert parse_stamp("2026-11-30T10:15:02.123Z") == datetime(2026, 11, 30, 10, 15, 2, 123000, tzinfo=timezone.utc)


def test_parse_stamp_takes_a_hand_written_time_without_a_fraction() -> None:
    assert parse_stamp("2026-11-30T10:15:02Z") == datetime(2026, 11, 30, 10, 15, 2, tzinfo=timezone.utc)


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(timezone.utc)))
def test_stamp_round_trips_every_time_to_the_millisecond(moment: datetime) -> None:
    truncated = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    assert parse_stamp(stamp(moment)) == truncated
    assert stamp(parse_stamp(stamp(moment))) == stamp(moment)


def test_stamps_sort_in_time_order() -> None:
    moments = [AT + timedelta(milliseconds=n * 7) for n in range(300)]
    assert sorted(stamp(m) for m in reversed(moments)) == [stamp(m) for m in moments]


def test_shown_and_sortable_name() -> None:
    moment = datetime(2026, 11, 30, 10, 15, 2, 123456, tzinfo=timezone.utc)
    assert shown(stamp(moment)) == "2026-11-30 10:15:02"
    assert sortable_name(moment, "j-k7m2qx") == "20261130T101502.123456Z-j-k7m2qx"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-1, "in the future (check the clocks)"),
        (0, "just now"),
        (59, "just now"),
        (60, "1 minute ago"),
        (119, "1 minute ago"),
        (120, "2 minutes ago"),
        (3599, "59 minutes ago"),
        (3600, "1 hour ago"),
        (7200, "2 hours ago"),
        (86399, "23 hours ago"),
        (86400, "1 day ago"),
        (3 * 86400 + 5000, "3 days ago"),
    ],
)
def test_ago(seconds: int, text: str) -> None:
    assert ago(AT - timedelta(seconds=seconds), AT) == text


def test_the_thread_id_pattern_is_the_same_everywhere_it_is_written() -> None:
    import re
    from pathlib import Path

    from git_continuity.hooks import guards

    assert "".join(c for c in map(chr, range(128)) if re.fullmatch(constants.ID_CHARS, c)) == constants.ID_ALPHABET
    assert guards.THREAD_ID.pattern == constants.THREAD_ID.pattern  # type: ignore[attr-defined]
    # The commit-msg and post-commit hooks match it in the shell, in either case.
    either = set(constants.ID_ALPHABET) | set(constants.ID_ALPHABET.upper())
    for name in ("commit-msg", "post-commit"):
        hook = (Path(__file__).resolve().parents[1] / "hooks" / name).read_text()
        (one,) = set(re.findall(r"\[tT\]-(\[[^]]*\])", hook))
        assert "".join(c for c in map(chr, range(128)) if re.fullmatch(one, c)) == "".join(sorted(either)), name
        assert f"[tT]-{one * 6}" in hook, name
