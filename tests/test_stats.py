"""`memrecall stats` over a generated recall log and summarize run record."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from _transcripts import Clock, Transcript

from memrecall.__main__ import main
from memrecall.recall_log import append
from memrecall.stats import percentile
from memrecall.times import parse_instant as parse_now

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
        row: dict = {
            "ts": ts,
            "session": f"s{i % 3}",
            "prompt_chars": 40,
            "elapsed_ms": float(10 * (i + 1)),
        }
        if i < 4:
            row.update(
                decision="inject",
                keywords=["PAY-1234", "タイムアウト"],
                candidates={"summaries": 2, "obsidian": 1},
                doc_counts={"summaries": 60, "obsidian": 120},
                chars=900 + i * 100,
                backend="sudachi",
                injected=[
                    {
                        "store": "summaries",
                        "ref": "2026/10/2026-10-01-abcd1234.md",
                        "title": "決済タイムアウト",
                        "score": 3.2,
                        "acc": 3.2,
                        "matched": ["PAY-1234"],
                        "main": "PAY-1234",
                    }
                ],
            )
            if i == 0:
                row["injected"].append(
                    {
                        "store": "obsidian",
                        "ref": "notes/pay.md",
                        "title": "pay",
                        "score": 2.5,
                        "acc": 2.5,
                        "matched": ["タイムアウト"],
                        "main": "タイムアウト",
                    }
                )
        elif i < 14:
            zero = i < 7
            row.update(
                decision="quiet",
                reason="no candidates" if zero else "below threshold",
                keywords=["README"] if zero else ["タイムアウト"],
                candidates={"summaries": 0, "obsidian": 0}
                if zero
                else {"summaries": 1, "obsidian": 0},
                doc_counts={} if zero else {"summaries": 60},
                backend="sudachi",
                injected=[],
            )
        elif i < 19:
            row.update(decision="trivial", reason="acknowledgement")
        else:
            row.update(decision="error", error="OSError: disk full")
        rows.append(row)
    rows.append(
        {
            "ts": "2026-06-01T10:00:00+09:00",
            "decision": "quiet",
            "keywords": ["古い"],
            "candidates": {"summaries": 0},
            "elapsed_ms": 5000.0,
        }
    )
    for row in rows:
        append(home / "logs", parse_now(row["ts"]), row)


@pytest.fixture
def home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    write_log(isolated_home)
    return isolated_home


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(10, 210, 10)]
    assert (percentile(values, 0.5), percentile(values, 0.95), percentile([], 0.5)) == (
        100.0,
        190.0,
        None,
    )


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
        "store": "summaries",
        "ref": "2026/10/2026-10-01-abcd1234.md",
        "title": "決済タイムアウト",
        "injected": 4,
        "used": 0,
        "mentioned": 0,  # no transcript of these sessions: unknown
    }
    assert data["stores"]["summaries"] == {
        "searched": 14,
        "with_candidates": 11,
        "injected": 4,
        "documents": 60,
    }
    assert data["stores"]["obsidian"]["injected"] == 1
    assert data["last_error"] == {"ts": "2026-11-19T10:19:00+09:00", "error": "OSError: disk full"}
    assert data["summarize"] is None


def test_stats_without_since_reads_everything(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(run(capsys, "stats", "--json")[1])
    assert data["prompts"] == 21 and data["hook_ms"]["max"] == 5000.0
    data = json.loads(run(capsys, "stats", "--json", "--since", "30d")[1])
    assert data["prompts"] == 20


def test_stats_table_and_summarize_record(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = {
        "started": "2026-12-02T04:17:00+09:00",
        "finished": "2026-12-02T04:19:30+09:00",
        "backend": "claude",
        "summarized": 3,
        "skipped": {"too small": 5, "headless": 2},
        "failed": [{"session": "5c0375b4", "reason": "timeout"}],
        "chars_sent": 41000,
        "raw_bytes": 900000,
        "oldest_unsummarized": "2026-11-29T10:00:00+09:00",
        "pending": 1,
    }
    (home / "state").mkdir(exist_ok=True)
    (home / "state" / "summarize-run.json").write_text(json.dumps(record), encoding="utf-8")
    code, out, err = run(capsys, "stats", "--since", "2026-11-01")
    assert (code, err) == (0, "")
    for text in (
        "prompts seen",
        "20",
        "fire rate",
        "20% of all, 27% of non-trivial",
        "21% of 14 searches",
        "p50 100 ms, p95 190 ms",
        "決済タイムアウト",
        "last summarize run",
        "2026-12-02T04:19:30+09:00",
        "too small 5, headless 2",
        "1: 5c0375b4 (timeout)",
    ):
        assert text in out, text


def test_stats_with_no_log_and_no_run(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "stats")
    assert (code, err) == (0, "")
    assert out == f"No recall log entries in {isolated_home / 'logs'}.\nsummarize: never run\n"


def test_bad_since_is_a_usage_error(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "stats", "--since", "last tuesday")
    assert (code, out) == (2, "")
    assert err == (
        "Error: invalid --since 'last tuesday': use an age such as 12h, 7d, 2w, 3m or 1y, "
        "a date such as 2026-11-01 (local midnight) or an ISO time\n"
    )


# --- use of what was injected ------------------------------------------------------------------

SUMMARY = "2026/10/2026-10-01-abcd1234.md"
ISSUE = "bd-7q2k"


def _context(home: Path, items: list[tuple[str, str, str]]) -> str:
    """The context as recall renders it, for (store, ref, title) items."""
    blocks = []
    for n, (store, ref, title) in enumerate(items, start=1):
        if store == "beads":
            blocks.append(
                f"[{n}] beads · 2026-11-25 · {title} ({ref}, open, P1)\n    matched: flag\n"
                f"    > An outage of the flag service blocks every deploy."
            )
        else:
            blocks.append(
                f"[{n}] {store} · 2026-10-01 · {title}\n    {home / 'summaries' / ref}:6\n"
                f"    matched: PAY-1234\n    > PAY-1234 のタイムアウトは 5 秒から 10 秒に延ばした"
            )
    return (
        "<memrecall-context>\nmemrecall found stored memories.\n\n"
        + "\n\n".join(blocks)
        + "\n</memrecall-context>"
    )


@pytest.fixture
def judged(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Five injections over three weeks, each followed in its transcript by a different act:
    week 1 the summary is read (used) and ignored; week 2 its title is named (mentioned)
    and a session has no transcript (unknown); week 3 `bd show` on the issue (used)."""
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(isolated_home / "summaries"))
    projects = tmp_path / "projects"
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    cwd = tmp_path / "shop"
    summary = ("summaries", SUMMARY, "決済タイムアウト調査")
    issue = ("beads", ISSUE, "Feature flags: fail open")
    plan = [  # (day, session, item, reason, what Claude does)
        ("2026-11-09", "u1", summary, "names PAY-1234 itself", ("Read", SUMMARY)),
        (
            "2026-11-10",
            "u2",
            summary,
            "2 specific keyword(s) (PAY-1234, タイムアウト), evidence 2.10",
            None,
        ),
        (
            "2026-11-17",
            "u3",
            summary,
            "1 specific keyword(s) (タイムアウト), evidence 1.00, came up in 2 prompts",
            ("say", "前回の決済タイムアウト調査では 10 秒にしました。"),
        ),
        ("2026-11-18", "u4", summary, "names PAY-1234 itself", "no transcript"),
        (
            "2026-11-24",
            "u5",
            issue,
            "distinctive flag-service (in 1 memory)",
            ("Bash", f"bd show {ISSUE}"),
        ),
    ]
    for day, sid, (store, ref, title), reason, act in plan:
        ts = f"{day}T10:00:05+09:00"
        key = f"{store}:{ref}"
        append(
            isolated_home / "logs",
            parse_now(ts),
            {
                "ts": ts,
                "session": sid,
                "decision": "inject",
                "reason": f"{key}: {reason}",
                "keywords": ["PAY-1234", "タイムアウト"],
                "candidates": {store: 1},
                "chars": 600,
                "injected": [
                    {
                        "store": store,
                        "ref": ref,
                        "title": title,
                        "key": key,
                        "matched": ["PAY-1234"],
                    }
                ],
            },
        )
        append(
            isolated_home / "logs",
            parse_now(ts),
            {
                "ts": ts,
                "session": sid,
                "decision": "quiet",
                "keywords": ["README"],
                "candidates": {store: 0},
            },
        )
        if act == "no transcript":
            continue
        clock = Clock(datetime.fromisoformat(f"{day}T10:00:00+09:00"))
        t = Transcript(projects, cwd, sid, clock).prompt(
            "PAY-1234 のタイムアウトは？", _context(isolated_home, [(store, ref, title)])
        )
        if act is None:
            t.say("調べます。").tool("Read", {"file_path": str(cwd / "client.go")}).say(
                "10 秒です。"
            )
        elif act[0] == "Read":
            t.tool("Read", {"file_path": str(isolated_home / "summaries" / act[1])}).say(
                "10 秒です。"
            )
        elif act[0] == "Bash":
            t.tool("Bash", {"command": act[1]}).say("Still open.")
        else:
            t.say(act[1])
        t.end_turn().write()
    return isolated_home


def test_stats_json_use_per_store_reason_keyword_and_week(
    judged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "stats", "--json")
    assert (code, err) == (0, "")
    use = json.loads(out)["use"]
    assert {k: use[k] for k in ("injected", "used", "mentioned", "ignored", "unknown")} == {
        "injected": 5,
        "used": 2,
        "mentioned": 1,
        "ignored": 1,
        "unknown": 1,
    }
    assert use["used_rate"] == pytest.approx(2 / 4) and use["engaged_rate"] == pytest.approx(3 / 4)
    assert use["by_store"]["summaries"]["ignored"] == 1 and use["by_store"]["beads"]["used"] == 1
    assert {
        name: (r["injected"], r["used"], r["mentioned"]) for name, r in use["by_reason"].items()
    } == {"distinctive id": (3, 2, 0), "several keywords": (1, 0, 0), "repeated topic": (1, 0, 1)}
    assert use["by_keyword"][0]["keyword"] == "PAY-1234" and use["by_keyword"][0]["injected"] == 5
    weeks = [
        (w["week"], w["prompts"], w["fired"], w["injected"], w["used"], w["mentioned"])
        for w in use["weekly"]
    ]
    assert weeks == [
        ("2026-11-09", 4, 2, 2, 1, 0),
        ("2026-11-16", 4, 2, 2, 0, 1),
        ("2026-11-23", 2, 1, 1, 1, 0),
    ]
    assert use["weekly"][0]["fire_rate"] == pytest.approx(0.5)
    memories = {
        m["ref"]: (m["injected"], m["used"], m["mentioned"])
        for m in json.loads(out)["top_memories"]
    }
    assert memories == {SUMMARY: (4, 1, 1), ISSUE: (1, 1, 0)}
    # The evidence behind each verdict, newest first.
    listed = json.loads(run(capsys, "usage", "--json")[1])
    assert [(r["session"], r["verdict"]) for r in listed] == [
        ("u5", "used"),
        ("u4", "unknown"),
        ("u3", "mentioned"),
        ("u2", "ignored"),
        ("u1", "used"),
    ]
    assert listed[0]["evidence"] == [f"Bash: bd show {ISSUE}"]
    assert "決済タイムアウト調査" in listed[2]["evidence"][0]


def test_stats_table_shows_use_and_a_weekly_chart_in_80_columns(
    judged: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "stats")
    assert (code, err) == (0, "")
    assert max(len(line) for line in out.splitlines()) <= 80, out
    for text in (
        "memories injected",
        "5: used 2 (50%), mentioned 1 (25%), ignored 1 (25%),",
        "unknown 1",
        "use rate",
        "75% used or mentioned, 50% used",
        "use of injected memories",
        "distinctive id",
        "repeated topic",
        "█ used",
        "░ ignored",
    ):
        assert text in out, text
    chart = {line[:10]: line for line in out.splitlines() if line[:4] == "2026" and "fire" in line}
    assert sorted(chart) == ["2026-11-09", "2026-11-16", "2026-11-23"]
    # Week 1: one used, one ignored, of two: the bar is half used, half ignored.
    assert chart["2026-11-09"].count("█") == chart["2026-11-09"].count("░") > 0
    assert chart["2026-11-09"].endswith("2  fire  50%  use  50%")
    assert chart["2026-11-23"].endswith("1  fire  50%  use 100%")


def test_usage_lists_evidence_and_filters(
    judged: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = run(capsys, "usage", "--verdict", "used")
    assert (code, err) == (0, "")
    assert f"bd show {ISSUE}" in out and "Read" in out and "ignored" not in out
    code, out, err = run(capsys, "usage", "--verdict", "sometimes")
    assert (code, out) == (2, "")
    assert err == "Error: unknown --verdict 'sometimes'; choose used, mentioned, ignored, unknown\n"


def test_stats_no_refresh_reads_no_transcript(
    judged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(run(capsys, "stats", "--json", "--no-refresh")[1])
    assert data["use"]["unknown"] == 5  # never judged: counted as unknown, nothing was read
    assert not (judged / "state" / "usage.jsonl").exists()
