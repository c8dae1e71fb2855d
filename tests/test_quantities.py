"""A number with a unit is one keyword whatever its spelling or language: "5秒待たされる"
finds the issue that says "takes 5 seconds", "30-day TTL" the note that says "TTL 30日", and
"the December release" the summary titled 12月リリース. Other numbers never meet them, and a
value in a work order ("make the timeout 30 seconds") is everyday, not a memory cue."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched, summary

from memrecall.gate import generic_keys, judge, prompt_shape
from memrecall.keywords import index_terms, quantity_forms, term_key
from memrecall.search import Evidence, Hit
from memrecall.tokenizers import resolve


@pytest.mark.parametrize(
    "spellings",
    [
        ["5秒", "5 秒", "5s", "5 sec", "5secs", "5 seconds", "5-second", "5+ seconds", "5 Seconds"],
        ["200ms", "200 ms", "200ミリ秒", "200 milliseconds", "200msec"],
        ["30日", "30日間", "30 days", "30-day", "30d"],
        ["3ヶ月", "3か月", "3カ月", "3 months", "3-month"],
        ["1.5GB", "1.5 GiB", "1.50 gb", "1.5ギガバイト"],
        ["12月", "December", "december"],
        ["104文字", "104 chars", "104-char", "104 characters"],
    ],
)
def test_every_spelling_of_a_quantity_is_one_term(spellings: list[str]) -> None:
    keys = {term_key(text) for text in spellings}
    assert len(keys) == 1, keys


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("5秒", "15秒"),
        ("5秒", "0.5秒"),
        ("5秒", "5分"),
        ("5s", "5ms"),
        ("1GB", "1MB"),
        ("12月", "2月"),
    ],
)
def test_different_amounts_never_meet(one: str, other: str) -> None:
    assert term_key(one) != term_key(other)


def test_may_and_march_are_verbs_first() -> None:
    assert quantity_forms("may") == [] and quantity_forms("March") == []
    assert term_key("may") != term_key("5月")


def test_a_capital_letter_is_no_unit() -> None:
    # 5M rows, 3D secure, 2H: a one-letter unit counts in lower case only.
    assert term_key("5M") != term_key("5m")
    assert quantity_forms("5M") == []


def _terms(text: str) -> list[str]:
    analyzer, _ = resolve("sudachi", None)
    return index_terms(text, analyzer)


def test_stored_text_holds_the_quantity_and_keeps_the_unit_word() -> None:
    terms = _terms("bd ready takes 5 seconds after the daemon dies")
    assert term_key("5秒") in terms
    # "dies a few seconds after it starts" still meets this issue through the word.
    assert term_key("seconds") in terms


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("12月3日にリリース", "3日"),  # a date, not three days
        ("毎月31日に実行", "31日"),  # the 31st of every month
    ],
)
def test_a_date_is_no_duration(text: str, absent: str) -> None:
    assert term_key(absent) not in _terms(text)


def test_grouped_digits_are_one_number() -> None:
    assert _terms("1,000ms かかる")[:1] == [term_key("1000 milliseconds")]


@pytest.fixture
def stores(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    issues = [
        {
            "id": "bd-f1ve",
            "title": "bd ready takes 5 seconds on every call",
            "description": "A stale daemon.lock makes every command wait for the dial timeout.",
            "status": "closed",
            "close_reason": "Stat the socket before dialing.",
        },
        {
            "id": "bd-f15e",
            "title": "bd sync takes 15 seconds on big repos",
            "description": "Export walks every issue twice.",
            "status": "open",
        },
    ] + chores()
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent
    vault = tmp_path / "vault"
    note(vault, "note/削除済みデータの保持.md", "# 削除済みデータの保持\n\nTTL は 30日 にした。\n")
    note(vault, "note/キャッシュの保持.md", "# キャッシュの保持\n\nTTL は 3日 にした。\n")
    diary(vault)
    summaries = tmp_path / "summaries"
    summary(summaries, "2026-12-01", "aaaa1111", "12月リリース前の確認作業", "12/3 の10:00。")
    summary(summaries, "2026-11-02", "bbbb2222", "11月リリースの振り返り", "11/5 だった。")
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(summaries))
    monkeypatch.setenv("MEMRECALL_NOW", "2026-12-02T09:00:00+09:00")
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize(
    ("prompt", "answer", "not_above"),
    [
        ("bd ready が毎回5秒待たされるやつ", "bd-f1ve", "bd-f15e"),
        ("Why did we pick a 30-day TTL for deleted rows?", "note/削除済みデータの保持.md", None),
        ("What's the plan for the December release?", "2026/12/2026-12-01-aaaa1111.md", None),
    ],
)
def test_a_quantity_finds_its_memory_in_the_other_spelling(
    stores: Path, engine: str, prompt: str, answer: str, not_above: str | None
) -> None:
    outcome = searched(prompt, engine)
    refs = [hit.ref for hit in outcome.hits]
    assert refs and refs[0] == answer, refs
    if not_above is not None and not_above in refs:
        assert refs.index(answer) < refs.index(not_above)


def _hit(*evidence: Evidence) -> Hit:
    return Hit(
        "beads", "bd-f1ve", Path("x"), "t", None, 5.0, [], 1, "", [],
        coverage=1.0, evidence=list(evidence),
    )  # fmt: skip


@pytest.mark.parametrize(
    "prompt",
    [
        "Turn the hard-coded 30-second timeout into an env var",
        "タイムアウトを30秒にして",
        "make the cache TTL 30 days",
    ],
)
def test_a_quantity_in_a_work_order_is_the_new_value(prompt: str) -> None:
    assert prompt_shape(prompt) == "code"
    daemon = Evidence("daemon", "word", 1.0, 0.9, 3, True)
    amount = Evidence("30秒", "quantity", 1.0, 0.9, 2, True)
    # The same memory: told as a symptom or asked about, the amount is the incident's.
    assert judge(_hit(daemon, amount), "plain", set(), 9.0, 2.0, 1).fire
    assert judge(_hit(daemon, amount), "cue", set(), 9.0, 2.0, 1).fire
    # Ordered as the new code's value, it is no evidence that a memory helps.
    assert not judge(_hit(daemon, amount), "code", set(), 9.0, 2.0, 1).fire


def test_a_quantity_is_no_everyday_word() -> None:
    from memrecall.keywords import Keyword

    keyword = Keyword("5秒", "identifier", "quantity", "sudachi")
    assert generic_keys([keyword], frozenset()) == set()


@pytest.mark.parametrize(
    "prompt",
    [
        "Wasn't a leftover lock the cause?",
        "Didn't we fix the daemon crash already?",
        "ビルドキャッシュが効いてなかったやつ、どう直した?",
        "あのデッドロック、どうやって回避したんだっけ",
    ],
)
def test_a_question_about_a_past_fix_is_a_cue(prompt: str) -> None:
    assert prompt_shape(prompt) == "cue"


def test_wasnt_inside_a_report_is_no_cue() -> None:
    assert prompt_shape("the export wasn't written, fix it") == "code"
