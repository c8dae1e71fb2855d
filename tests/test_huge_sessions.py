"""summarize on very long sessions: what one session may cost is capped while the transcript is
read (memrecall/transcripts.py), and the run says so. The caps are shrunk here so small files
show the behaviour; the real sizes are measured in the report, not asserted on time.

A cap must never cost privacy: an opt-out typed in text the cap leaves out still opts the
session out, a `<private>` span cut in two stays private, and a secret straddling a cut is
not half-kept.
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memrecall import transcripts
from memrecall.transcripts import parse_session

SID = "abcdef12-1111-4222-8333-444444444444"
KEY = "AKIAZ7QW3ERTY5UIOP2A"  # an AWS key id: the pattern redaction knows


def _write(path: Path, prompts: list[str], reply: str = "了解しました。調べます。") -> Path:
    base = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    lines = []
    for n, prompt in enumerate(prompts):
        stamp = (base + timedelta(minutes=n)).isoformat()
        common = {"sessionId": SID, "cwd": "/home/dev/shop", "entrypoint": "cli", "isSidechain": False,
                  "timestamp": stamp}
        lines.append({**common, "type": "user", "uuid": f"u{n}", "message": {"role": "user", "content": prompt}})
        lines.append({**common, "type": "assistant", "uuid": f"a{n}",
                      "message": {"id": f"m{n}", "role": "assistant", "content": [{"type": "text", "text": reply}]}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8")
    os.utime(path, (time.time() - 7200, time.time() - 7200))
    return path


@pytest.fixture
def small_caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transcripts, "EVENT_KEEP_CHARS", 3_000)
    monkeypatch.setattr(transcripts, "SESSION_KEEP_CHARS", 30_000)
    monkeypatch.setattr(transcripts, "LINE_MAX_BYTES", 200_000)


def _kept(session: transcripts.Session) -> int:
    return sum(len(e.text) for e in session.events)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_a_long_session_keeps_its_start_and_end_within_the_cap(lang: str, tmp_path: Path, small_caps: None) -> None:
    paste = ("在庫同期バッチのログ ERROR timeout retry=3\n" if lang == "ja" else "sync batch log ERROR timeout retry=3\n") * 60
    prompts = [f"prompt {n:03d} {'を見て' if lang == 'ja' else 'look at this'}\n{paste}" for n in range(200)]
    session = parse_session(_write(tmp_path / "p" / f"{SID}.jsonl", prompts))
    kept = _kept(session)
    assert kept <= transcripts.SESSION_KEEP_CHARS + transcripts.EVENT_KEEP_CHARS  # the cap, not the file
    assert session.dropped_chars > 0 and session.dropped_events > 0
    humans = [e.text for e in session.human_turns]
    assert humans[0].startswith("prompt 000") and humans[-1].startswith("prompt 199")  # both ends stay
    assert not any(h.startswith("prompt 100") for h in humans)  # the middle goes
    order = [int(h[7:10]) for h in humans]
    assert order == sorted(order)  # in order, one gap


def test_a_huge_prompt_keeps_head_and_tail_and_never_half_a_secret(tmp_path: Path, small_caps: None) -> None:
    keep = transcripts.EVENT_KEEP_CHARS
    head_cut = keep * 2 // 3
    # A key placed across the point where the head is cut.
    filler = "x " * (head_cut // 2 - 8)
    prompt = "最初の質問: 決済タイムアウト " + filler + KEY + " " + "ログ " * 20_000 + " 最後の質問: どう直す？"
    session = parse_session(_write(tmp_path / "p" / f"{SID}.jsonl", [prompt]))
    text = session.human_turns[0].text
    assert len(text) < keep + 200 and session.dropped_chars > 0
    assert text.startswith("最初の質問") and text.endswith("最後の質問: どう直す？")
    for piece in (KEY[:6], KEY[-6:]):
        assert piece not in text  # dropped whole, not cut in half past every detector


def test_a_private_span_cut_in_two_stays_private(tmp_path: Path, small_caps: None) -> None:
    secret = "社外秘の顧客名リスト"
    prompt = "前半 <private>" + f"{secret} " * 3000 + "</private> 後半の質問"
    session = parse_session(_write(tmp_path / "p" / f"{SID}.jsonl", [prompt]))
    assert secret not in session.human_turns[0].text and "後半の質問" in session.human_turns[0].text


MARKERS = ["#memrecall:off", "＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ", "# MemRecall : Off"]


@pytest.mark.parametrize("marker", MARKERS)
@pytest.mark.parametrize("where", ["dropped-prompt", "cut-middle", "skipped-line"])
def test_an_opt_out_in_text_the_cap_leaves_out_still_opts_out(marker: str, where: str, tmp_path: Path,
                                                               small_caps: None) -> None:
    from memrecall.config import load_settings
    from memrecall.summarize.discover import session_reason

    paste = "ログ行 error=timeout\n" * 200
    prompts = [f"質問 {n}\n{paste}" for n in range(100)]
    if where == "dropped-prompt":
        prompts[50] = f"これは記録しないで {marker}\n{paste}"
    elif where == "cut-middle":
        prompts[3] = "見て\n" + "ログ " * 5000 + f" {marker} " + "ログ " * 5000
    else:
        prompts[3] = "巨大な貼り付け " + "データ" * 100_000 + f" {marker} " + "データ" * 100_000
    session = parse_session(_write(tmp_path / "p" / f"{SID}.jsonl", prompts), optout_marker="#memrecall:off")
    assert session.dropped_chars > 0
    assert session_reason(session, load_settings()) == "opted-out-marker"


def test_summarize_says_a_session_was_capped(tmp_path: Path, isolated_home: Path, small_caps: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from memrecall.config import load_settings
    from memrecall.summarize.pipeline import SummarizeOptions, run_summarize

    projects = tmp_path / "projects"
    prompts = [f"PAY-{n} の決済タイムアウトを調べて\n" + "ログ行 error=timeout\n" * 200 for n in range(100)]
    _write(projects / "-home-dev-shop" / f"{SID}.jsonl", prompts)
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(tmp_path / "summaries"))
    settings = load_settings()
    settings.summarize.backend = "extractive"
    report = run_summarize(settings, SummarizeOptions())
    assert report.summarized == 1
    assert any(SID[:8] in note and "left out" in note for note in report.notes)
    record = json.loads((isolated_home / "state" / "summarize-run.json").read_text(encoding="utf-8"))
    assert record["capped"][SID] > 0
    summary = next((tmp_path / "summaries").rglob("*.md")).read_text(encoding="utf-8")
    assert "PAY-0" in summary or "PAY-99" in summary  # its start or its end was summarized


def test_the_real_caps_bound_what_a_long_paste_session_keeps(tmp_path: Path) -> None:
    """Without shrinking: ~12 MB of pasted prompts keep no more than the session cap (time and
    memory of redaction follow the characters kept, not the file size)."""
    paste = "ログ行 2026-11-30 ERROR payment timeout retry=3 在庫同期バッチ失敗 order=12345\n" * 1200
    path = _write(tmp_path / "p" / f"{SID}.jsonl", [f"これを見て {n}\n{paste}" for n in range(120)])
    assert path.stat().st_size > 10_000_000
    session = parse_session(path)
    assert _kept(session) <= transcripts.SESSION_KEEP_CHARS + transcripts.EVENT_KEEP_CHARS
    assert all(len(e.text) <= transcripts.EVENT_KEEP_CHARS + 100 for e in session.events)
    assert session.dropped_chars > 5_000_000
