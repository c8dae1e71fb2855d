"""One instant parser and one `--since` grammar for every command."""

from __future__ import annotations

import time
from datetime import date, datetime, timedelta, timezone

import pytest

from memrecall.cli import run_app
from memrecall.errors import UsageError
from memrecall.times import instant_or_none, parse_age, parse_instant, parse_since

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)


@pytest.fixture
def tokyo(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("spec", "back"),
    [
        ("12h", timedelta(hours=12)),
        ("7d", timedelta(days=7)),
        ("2w", timedelta(weeks=2)),
        ("7", timedelta(days=7)),
        (" 3D ", timedelta(days=3)),
    ],
)
def test_ages(spec: str, back: timedelta) -> None:
    assert parse_since(spec, NOW) == NOW - back
    assert parse_age(spec, NOW) == NOW - back


def test_calendar_months_and_years_clamp_the_day() -> None:
    assert parse_since("3m", datetime(2026, 5, 31, tzinfo=timezone.utc)).date() == date(2026, 2, 28)
    assert parse_since("1y", NOW).date() == date(2025, 11, 20)


def test_a_bare_date_typed_by_a_person_is_local_midnight(tokyo: None) -> None:
    since = parse_since("2026-11-01", NOW)
    assert since == datetime(2026, 11, 1, tzinfo=timezone(timedelta(hours=9)))
    assert since.astimezone(timezone.utc) == datetime(2026, 10, 31, 15, 0, tzinfo=timezone.utc)


def test_stored_times_without_an_offset_are_utc(tokyo: None) -> None:
    assert parse_instant("2026-11-01") == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert parse_instant("2026-11-01 09:30") == datetime(2026, 11, 1, 9, 30, tzinfo=timezone.utc)
    assert parse_instant("2026-11-01T09:30:00Z") == datetime(
        2026, 11, 1, 9, 30, tzinfo=timezone.utc
    )
    offset = parse_instant("2026-11-01T09:30+09:00")
    assert offset.astimezone(timezone.utc).hour == 0


def test_instant_or_none_takes_every_stored_shape() -> None:
    assert instant_or_none(date(2026, 11, 1)) == datetime(2026, 11, 1, tzinfo=timezone.utc)
    assert instant_or_none(datetime(2026, 11, 1, 8)) == datetime(
        2026, 11, 1, 8, tzinfo=timezone.utc
    )
    assert instant_or_none("'2026-11-01'") == datetime(2026, 11, 1, tzinfo=timezone.utc)
    for nothing in (None, "", "  ", "soon", 20261101, ["2026-11-01"]):
        assert instant_or_none(nothing) is None


@pytest.mark.parametrize(
    "bad", ["last tuesday", "0d", "-3d", "12x", "2026-13-01", "", "99999999999y"]
)
def test_bad_values_are_one_usage_error(bad: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_since(bad, NOW)
    assert "\n" not in str(caught.value) and "--since" in str(caught.value)


@pytest.mark.parametrize(
    "argv",
    [
        ["stats", "--since", "12h"],
        ["stats", "--since", "2w", "--json"],
        ["stopwords", "suggest", "--since", "3m"],
        ["summarize", "--dry-run", "--backend", "extractive", "--since", "2w"],
        ["summarize", "--dry-run", "--backend", "extractive", "--since", "12h"],
        ["summarize", "--dry-run", "--backend", "extractive", "--since", "2026-11-01"],
        ["prune", "--dry-run", "--older-than", "12w"],
    ],
)
def test_every_command_accepts_the_same_grammar(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_app(argv)
    err = capsys.readouterr().err
    assert "invalid" not in err, err
    assert code in (0, 1), err  # 1: "nothing in the log" is fine; 2 would be a usage error


@pytest.mark.parametrize(
    "argv",
    [
        ["stats", "--since", "yesterday"],
        ["summarize", "--dry-run", "--since", "yesterday"],
        ["stopwords", "suggest", "--since", "yesterday"],
    ],
)
def test_every_command_rejects_the_same_way(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_app(argv) == 2
    assert capsys.readouterr().err.startswith(
        "Error: invalid --since 'yesterday': use an age such as 12h"
    )
