"""`memrecall stats` over a generated recall log and summarize run record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrecall.__main__ import main
from memrecall.times import parse_instant as parse_now
from memrecall.recall_log import append
from memrecall.stats import percentile

NOW = "2026-12-02T09:00:00+09:00"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_log(home: Path) -> None:
    rows = []
    # 20 prompts in November: 4 inject, 10 quiet (3 with no candidates), 5 trivial, 1 error.
    for i in range(20):
        ts = f"2026-11-{10 + i % 10:02d}T10:{i:02d}:00+09:00"
        row: dict = {"ts": ts, "session": f"s{i % 3}", "prompt_chars": 40, "elapsed_ms": float(10 * (i + 1))}
        if i < 4:
            row.update(decision="inject", keywords=["PAY-1234", "タイムアウト"], candidates={"summaries": 2, "obsidian": 1},
                       doc_counts={"summaries": 60, "obsidian": 120}, chars=900 + i * 100, backend="sudachi",
                       injected=[{"store": "summaries", "ref": "2026/10/2026-10-01-abcd1234.md", "title": "決済タイムアウト",
                                  "score": 3.2, "acc": 3.2, "matched": ["PAY-1234"], "main": "PAY-1234"}])
            if i == 0:
                row["injected"].append({"store": "obsidian", "ref": "notes/pay.md", "title": "pay", "score": 2.5,
                                        "acc": 2.5, "matched": ["タイムアウト"], "main": "タイムアウト"})
        elif i < 14:
            zero = i < 7
            row.update(decision="quiet", reason="no candidates" if zero else "below threshold",
                       keywords=["README"] if zero else ["タイムアウト"],
                       candidates={"summaries": 0, "obsidian": 0} if zero else {"summaries": 1, "obsidian": 0},
                       doc_counts={} if zero else {"summaries": 60}, backend="sudachi", injected=[])
        elif i < 19:
            row.update(decision="trivial", reason="acknowledgement")
        else:
            row.update(decision="error", error="OSError: disk full")
        rows.append(row)
    rows.append({"ts": "2026-06-01T10:00:00+09:00", "decision": "quiet", "keywords": ["古い"], "candidates": {"summaries": 0},
                 "elapsed_ms": 5000.0})
    for row in rows:
        append(home / "logs", parse_now(row["ts"]), row)


@pytest.fixture
def home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    write_log(isolated_home)
    return isolated_home


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(10, 210, 10)]
    assert (percentile(values, 0.5), percentile(values, 0.95), percentile([], 0.5)) == (100.0, 190.0, None)


def test_stats_json_since(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stats", "--since", "2026-11-01", "--json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["prompts"] == 20
    assert data["decisions"] == {"inject": 4, "quiet": 10, "trivial": 5, "error": 1}
    assert data["fire_rate"] == pytest.approx(0.2)
    assert data["fire_rate_considered"] == pytest.approx(4 / 15)
    assert data["searched"] == 14 and data["zero_candidate_rate"] == pytest.approx(3 / 14)
    assert data["hook_ms"] == {"p50": 100.0, "p95": 190.0, "max": 200.0}
    assert data["injected_chars_avg"] == pytest.approx(1050)
    assert data["top_keywords"][0] == {"keyword": "タイムアウト", "prompts": 11}
    assert data["top_memories"][0] == {
        "store": "summaries", "ref": "2026/10/2026-10-01-abcd1234.md", "title": "決済タイムアウト", "injected": 4,
    }
    assert data["stores"]["summaries"] == {"searched": 14, "with_candidates": 11, "injected": 4, "documents": 60}
    assert data["stores"]["obsidian"]["injected"] == 1
    assert data["last_error"] == {"ts": "2026-11-19T10:19:00+09:00", "error": "OSError: disk full"}
    assert data["summarize"] is None


def test_stats_without_since_reads_everything(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(run(capsys, "stats", "--json")[1])
    assert data["prompts"] == 21 and data["hook_ms"]["max"] == 5000.0
    data = json.loads(run(capsys, "stats", "--json", "--since", "30d")[1])
    assert data["prompts"] == 20


def test_stats_table_and_summarize_record(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = {
        "started": "2026-12-02T04:17:00+09:00", "finished": "2026-12-02T04:19:30+09:00", "backend": "claude",
        "summarized": 3, "skipped": {"too small": 5, "headless": 2}, "failed": [{"session": "5c0375b4", "reason": "timeout"}],
        "chars_sent": 41000, "raw_bytes": 900000, "oldest_unsummarized": "2026-11-29T10:00:00+09:00", "pending": 1,
    }
    (home / "state").mkdir(exist_ok=True)
    (home / "state" / "summarize-run.json").write_text(json.dumps(record), encoding="utf-8")
    code, out, err = run(capsys, "stats", "--since", "2026-11-01")
    assert (code, err) == (0, "")
    for text in ("prompts seen", "20", "fire rate", "20% of all, 27% of non-trivial", "21% of 14 searches",
                 "p50 100 ms, p95 190 ms", "決済タイムアウト", "last summarize run", "2026-12-02T04:19:30+09:00",
                 "too small 5, headless 2", "1: 5c0375b4 (timeout)"):
        assert text in out, text


def test_stats_with_no_log_and_no_run(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stats")
    assert (code, err) == (0, "")
    assert out == f"No recall log entries in {isolated_home / 'logs'}.\nsummarize: never run\n"


def test_bad_since_is_a_usage_error(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stats", "--since", "last tuesday")
    assert (code, out) == (2, "")
    assert err == ("Error: invalid --since 'last tuesday': use an age such as 12h, 7d, 2w, 3m or 1y, "
                   "a date such as 2026-11-01 (local midnight) or an ISO time\n")
