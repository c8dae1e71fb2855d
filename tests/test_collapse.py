"""A resumed session is summarised again under nearly the same title. The two summaries are
one memory only where the newer one says everything the prompt asks about: the first day's
findings that the resumed session did not restate stay findable, and one issue in two
exports is still one hit."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, searched, summary

NOW = "2026-12-02T09:00:00+09:00"


@pytest.fixture
def sessions(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    summaries = tmp_path / "summaries"
    summary(
        summaries,
        "2026-11-08",
        "aaaa0001",
        "検索反映遅延の調査",
        "- refresh_interval は30秒のまま(1秒にするとインデックス負荷が高い)\n"
        "- 検索反映の遅れはポーリング間隔が原因",
    )
    summary(
        summaries,
        "2026-11-09",
        "aaaa0002",
        "検索反映遅延の調査と方針",
        "- 前日の続き。検索反映の遅れはアウトボックス方式で解消する方針",
    )
    for n in range(12):
        summary(summaries, f"2026-10-{n + 10}", f"bbbb{n:04d}", f"定例{n}", "- 議事録を書いた")
    vault = tmp_path / "vault"
    diary(vault)
    issues = [
        {
            "id": "bd-ex01",
            "title": "Export drops the close reason",
            "description": "The close reason is missing after a round trip.",
            "status": "open",
            "updated_at": "2026-10-01T10:00:00Z",
        },
        *chores(),
    ]
    old = export(tmp_path / "old" / ".beads" / "issues.jsonl", issues).parent
    issues[0] = dict(
        issues[0],
        description="Fixed: the exporter writes it.",
        status="closed",
        updated_at="2026-11-01T10:00:00Z",
    )
    new = export(tmp_path / "new" / ".beads" / "issues.jsonl", issues).parent
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(summaries))
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", f"{old.parent}:{new.parent}")
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_the_first_days_finding_stays_when_the_resumed_summary_lacks_it(
    sessions: Path, engine: str
) -> None:
    hits = searched("refresh_interval を1秒にして検索反映を速くしたい", engine).hits
    refs = [h.ref for h in hits]
    assert refs[:1] == ["2026/11/2026-11-08-aaaa0001.md"], refs
    assert "2026/11/2026-11-09-aaaa0002.md" in refs


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_what_both_say_is_one_memory_and_the_newer_stays(sessions: Path, engine: str) -> None:
    refs = [h.ref for h in searched("検索反映遅延の調査", engine).hits if "2026/11" in h.ref]
    assert refs == ["2026/11/2026-11-09-aaaa0002.md"]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_one_issue_in_two_exports_is_one_hit(sessions: Path, engine: str) -> None:
    # The old export's text matches "missing", the new one's does not: still one issue.
    hits = searched("close reason missing after export", engine).hits
    assert [h.ref for h in hits].count("bd-ex01") == 1
