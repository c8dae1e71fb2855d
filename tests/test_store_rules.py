"""Each store's own rules (stores/rules.py): the one place that knows how a beads issue, a
note and a session summary differ once found. Search, ranking and recall ask the registry."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

import memrecall
from memrecall.search import Hit
from memrecall.stores.base import Document
from memrecall.stores.rules import RULES, rules_for

NOW = datetime(2026, 12, 1, tzinfo=timezone.utc)


def _hit(store: str, title: str, snippet: str = "", ref: str = "x", days_ago: int = 0) -> Hit:
    return Hit(
        store=store,
        ref=ref,
        path=Path("/m") / ref,
        title=title,
        date=NOW - timedelta(days=days_ago),
        score=1.0,
        matched=[],
        line=1,
        snippet=snippet,
        lines=[],
    )


def test_an_issue_id_is_its_own_only_by_equality() -> None:
    beads = rules_for("beads")
    assert beads.is_own_id("bd-12", "bd-12")
    assert beads.is_own_id("BD-7F3A", "bd-7f3a")
    assert not beads.is_own_id("bd-123", "bd-12")  # a prefix is another issue
    assert not rules_for("obsidian").is_own_id("bd-12", "bd-12")  # a note named bd-12.md


def test_work_in_progress_outranks_history_and_fresh_summaries_lead() -> None:
    beads = rules_for("beads")
    assert (
        beads.score_factor(None, "in_progress", NOW)
        > beads.score_factor(None, "open", NOW)
        > beads.score_factor(None, "closed", NOW)
    )
    summaries = rules_for("summaries")
    fresh = summaries.score_factor(NOW - timedelta(days=1), None, NOW)
    old = summaries.score_factor(NOW - timedelta(days=80), None, NOW)
    assert 1.0 < old < fresh <= 1.15
    assert rules_for("obsidian").score_factor(NOW - timedelta(days=400), None, NOW) == 1.0


def test_what_counts_as_one_memory_twice_differs_by_store() -> None:
    summaries = rules_for("summaries")
    # A resumed session summarised again, two days later, under a near-identical title.
    assert summaries.near_duplicate(
        _hit("summaries", "在庫同期バッチの再試行を修正", "a", days_ago=2),
        _hit("summaries", "在庫同期バッチの再試行を修正した", "b"),
    )
    # The same title a month apart is another session on the same topic.
    assert not summaries.near_duplicate(
        _hit("summaries", "在庫同期の修正", "a", days_ago=30),
        _hit("summaries", "在庫同期の修正", "a"),
    )
    beads = rules_for("beads")
    assert beads.near_duplicate(
        _hit("beads", "Login fails on Safari", ref="bd-1"),
        _hit("beads", "Login fails on Safari.", ref="bd-1"),
    )
    assert not beads.near_duplicate(
        _hit("beads", "Login fails on Safari", "x", ref="bd-1"),
        _hit("beads", "Login fails on Safari", "y", ref="bd-2"),
    )
    notes = rules_for("obsidian")
    same = "冪等キーを入れて再試行で二重に加算されないようにした"
    assert notes.near_duplicate(
        _hit("obsidian", "在庫同期バッチ", same), _hit("obsidian", "在庫同期バッチ", same + "。")
    )
    assert not notes.near_duplicate(
        _hit("obsidian", "在庫同期バッチ", same), _hit("obsidian", "在庫同期バッチ", "会議の議事録")
    )


def test_the_header_lines_a_snippet_never_quotes() -> None:
    issue = Document("beads", "bd-1", Path("/p/issues.jsonl"))
    assert rules_for("beads").is_header_line(issue, 1)
    assert not rules_for("beads").is_header_line(issue, 2)
    note = Document("obsidian", "n.md", Path("/v/n.md"))
    note.body_start = 4  # frontmatter on lines 1-4
    assert rules_for("obsidian").is_header_line(note, 4)
    assert not rules_for("obsidian").is_header_line(note, 5)


def test_an_unknown_store_is_read_as_plain_notes() -> None:
    assert rules_for("from-a-newer-version") is RULES["obsidian"]
    assert {"beads", "obsidian", "summaries"} <= set(RULES)


@pytest.mark.parametrize(
    "module", ["search.py", "ranking.py", "recall.py", "gate.py", "commands/search.py"]
)
def test_ranking_and_display_never_test_a_store_by_name(module: str) -> None:
    source = (Path(memrecall.__file__).parent / module).read_text(encoding="utf-8")
    tests = re.findall(r"""store\s*[!=]=\s*["'](?:beads|obsidian|summaries)["']""", source)
    assert tests == [], f"{module} decides by store name: {tests}; ask stores.rules.rules_for"
