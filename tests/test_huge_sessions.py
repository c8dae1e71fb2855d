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
        common = {
            "sessionId": SID,
            "cwd": "/home/dev/shop",
            "entrypoint": "cli",
            "isSidechain": False,
            "timestamp": stamp,
        }
        lines.append(
            {
                **common,
                "type": "user",
                "uuid": f"u{n}",
                "message": {"role": "user", "content": prompt},
            }
        )
        lines.append(
            {
                **common,
                "type": "assistant",
                "uuid": f"a{n}",
                "message": {
                    "id": f"m{n}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": reply}],
                },
            }
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8"
    )
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
def test_a_long_session_keeps_its_start_and_end_within_the_cap(
    lang: str, tmp_path: Path, small_caps: None
) -> None:
    paste = (
        "在庫同期バッチのログ ERROR timeout retry=3\n"
        if lang == "ja"
        else "sync batch log ERROR timeout retry=3\n"
    ) * 60
    prompts = [
        f"prompt {n:03d} {'を見て' if lang == 'ja' else 'look at this'}\n{paste}"
        for n in range(200)
    ]
    session = parse_session(_write(tmp_path / "p" / f"{SID}.jsonl", prompts))
    kept = _kept(session)
    assert (
        kept <= transcripts.SESSION_KEEP_CHARS + transcripts.EVENT_KEEP_CHARS
    )  # the cap, not the file
    assert session.dropped_chars > 0 and session.dropped_events > 0
    humans = [e.text for e in session.human_turns]
    assert humans[0].startswith("prompt 000") and humans[-1].startswith(
        "prompt 199"
    )  # both ends stay
    assert not any(h.startswith("prompt 100") for h in humans)  # the middle goes
    order = [int(h[7:10]) for h in humans]
    assert order == sorted(order)  # in order, one gap


def test_a_huge_prompt_keeps_head_and_tail_and_never_half_a_secret(
    tmp_path: Path, small_caps: None
) -> None:
    keep = transcripts.EVENT_KEEP_CHARS
    head_cut = keep * 2 // 3
    # A key placed across the point where the head is cut.
    filler = "x " * (head_cut // 2 - 8)
    prompt = (
        "最初の質問: 決済タイムアウト "
        + filler
        + KEY
        + " "
        + "ログ " * 20_000
        + " 最後の質問: どう直す？"
    )
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
def test_an_opt_out_in_text_the_cap_leaves_out_still_opts_out(
    marker: str, where: str, tmp_path: Path, small_caps: None
) -> None:
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
    session = parse_session(
        _write(tmp_path / "p" / f"{SID}.jsonl", prompts), optout_marker="#memrecall:off"
    )
    assert session.dropped_chars > 0
    assert session_reason(session, load_settings()) == "opted-out-marker"


def test_summarize_says_a_session_was_capped(
    tmp_path: Path, isolated_home: Path, small_caps: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memrecall.config import load_settings
    from memrecall.summarize.pipeline import SummarizeOptions, run_summarize

    projects = tmp_path / "projects"
    prompts = [
        f"PAY-{n} の決済タイムアウトを調べて\n" + "ログ行 error=timeout\n" * 200 for n in range(100)
    ]
    _write(projects / "-home-dev-shop" / f"{SID}.jsonl", prompts)
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(tmp_path / "summaries"))
    settings = load_settings()
    settings.summarize.backend = "extractive"
    report = run_summarize(settings, SummarizeOptions())
    assert report.summarized == 1
    assert any(SID[:8] in note and "left out" in note for note in report.notes)
    record = json.loads(
        (isolated_home / "state" / "summarize-run.json").read_text(encoding="utf-8")
    )
    assert record["capped"][SID] > 0
    summary = next((tmp_path / "summaries").rglob("*.md")).read_text(encoding="utf-8")
    assert "PAY-0" in summary or "PAY-99" in summary  # its start or its end was summarized


def test_the_real_caps_bound_what_a_long_paste_session_keeps(tmp_path: Path) -> None:
    """Without shrinking: ~12 MB of pasted prompts keep no more than the session cap (time and
    memory of redaction follow the characters kept, not the file size)."""
    paste = (
        "ログ行 2026-11-30 ERROR payment timeout retry=3 在庫同期バッチ失敗 order=12345\n" * 1200
    )
    path = _write(tmp_path / "p" / f"{SID}.jsonl", [f"これを見て {n}\n{paste}" for n in range(120)])
    assert path.stat().st_size > 10_000_000
    session = parse_session(path)
    assert _kept(session) <= transcripts.SESSION_KEEP_CHARS + transcripts.EVENT_KEEP_CHARS
    assert all(len(e.text) <= transcripts.EVENT_KEEP_CHARS + 100 for e in session.events)
    assert session.dropped_chars > 5_000_000


# --- a long session's extractive summary says as much as a short one's ---------------------


def _session_records(steps: list[dict[str, object]]) -> list[dict[str, object]]:
    """Claude Code records from steps: {"user": text} | {"say": text} | {"bash": cmd, "out": text,
    "error": bool} | {"edit": path}."""
    base = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)
    out: list[dict[str, object]] = []
    for n, step in enumerate(steps):
        common = {
            "sessionId": SID,
            "cwd": "/home/dev/shop",
            "entrypoint": "cli",
            "isSidechain": False,
            "timestamp": (base + timedelta(seconds=30 * n)).isoformat(),
            "uuid": f"r{n}",
        }
        if "user" in step:
            out.append(
                {**common, "type": "user", "message": {"role": "user", "content": step["user"]}}
            )
        elif "say" in step:
            out.append(
                {
                    **common,
                    "type": "assistant",
                    "message": {
                        "id": f"m{n}",
                        "role": "assistant",
                        "content": [{"type": "text", "text": step["say"]}],
                    },
                }
            )
        else:
            tool, key = ("Bash", "command") if "bash" in step else ("Edit", "file_path")
            value = step.get("bash") or f"/home/dev/shop/{step['edit']}"
            out.append(
                {
                    **common,
                    "type": "assistant",
                    "message": {
                        "id": f"m{n}",
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": f"t{n}", "name": tool, "input": {key: value}}
                        ],
                    },
                }
            )
            out.append(
                {
                    **common,
                    "uuid": f"r{n}b",
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"t{n}",
                                "is_error": bool(step.get("error")),
                                "content": str(step.get("out") or "ok"),
                            }
                        ],
                    },
                }
            )
    return out


def _long_run() -> list[dict[str, object]]:
    """One request, then two hours of autonomous work (as in the real corpus: 1 prompt, 400
    replies), with what matters in its middle: a decision, a failed and then fixed test run,
    a milestone, files edited."""
    steps: list[dict[str, object]] = [
        {"user": "INV-88 の在庫同期バッチを差分同期に書き換えて、終わるまで続けて"}
    ]
    for n in range(60):
        steps.append({"say": f"次に sync_worker の {n} 番目の処理を確認します。"})
        steps.append({"edit": f"internal/inventory/step_{n % 5}.go"})
        if n == 20:
            steps.append({"say": "全件同期は残さず、差分同期に一本化することにしました。"})
        if n == 30:
            steps.append(
                {
                    "bash": "go test ./internal/inventory/...",
                    "error": True,
                    "out": (
                        "Exit code 1\n--- FAIL: TestDiffSync (0.01s)\n"
                        "    sync_test.go:42: want 3 got 2"
                    ),
                }
            )
            steps.append({"say": "境界条件のバグを直しました。"})
            steps.append(
                {"bash": "go test ./internal/inventory/...", "out": "ok  internal/inventory 0.2s"}
            )
            steps.append({"say": "在庫同期のテストがすべて通りました。"})
    steps.append({"say": "差分同期への書き換えが完了しました。INV-88 はクローズできます。"})
    return steps


def _extractive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, steps: list[dict[str, object]]
) -> str:
    from memrecall.config import load_settings
    from memrecall.summarize.pipeline import SummarizeOptions, run_summarize

    projects = tmp_path / "projects"
    path = projects / "-home-dev-shop" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _session_records(steps)),
        encoding="utf-8",
    )
    os.utime(path, (time.time() - 7200, time.time() - 7200))
    monkeypatch.setenv("MEMRECALL_HOME", str(tmp_path / "home"))  # a ledger of its own
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(tmp_path / "summaries"))
    settings = load_settings()
    settings.summarize.backend = "extractive"
    settings.summarize.min_chars = 0  # short sessions too
    report = run_summarize(settings, SummarizeOptions())
    assert report.summarized == 1, report.rows
    return next((tmp_path / "summaries").rglob("*.md")).read_text(encoding="utf-8")


def _section(text: str, name: str) -> list[str]:
    body = text.split(f"## {name}\n", 1)[1].split("\n## ", 1)[0]
    return [line for line in body.splitlines() if line.startswith("- ")]


def test_a_long_autonomous_session_says_what_was_done_decided_and_fixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memrecall.summarize.extractive import (
        BULLET_CHARS,
        MAX_ERRORS,
        MAX_MILESTONES,
        MAX_REQUESTS,
    )

    text = _extractive(tmp_path, monkeypatch, _long_run())
    did = _section(text, "何をしてた")
    # The request and how it ended, not just the prompt.
    assert (
        did[0].startswith("- INV-88 の在庫同期バッチを差分同期に書き換えて")
        and "完了しました" in did[0]
    )
    # From the middle of the run: a milestone, and the error that was fixed.
    assert any("テストがすべて通りました" in line for line in did)
    assert any(
        "go test ./internal/inventory/..." in line and "TestDiffSync" in line and "解決" in line
        for line in did
    )
    assert _section(text, "決まったこと") == [
        "- 全件同期は残さず、差分同期に一本化することにしました。"
    ]
    assert "- internal/inventory/step_0.go" in _section(text, "触ったファイル")
    # Within the summary's limits however long the session.
    assert len(did) <= MAX_REQUESTS + MAX_MILESTONES + MAX_ERRORS
    assert all(len(line) <= BULLET_CHARS + 2 for line in did)
    assert "[[INV-88]]" in text


def test_a_long_session_says_as_much_as_a_short_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, "what we did" listed prompts only: two prompts and four hundred replies gave two
    lines, the same as a session of two small questions."""
    short: list[dict[str, object]] = [
        {"user": "INV-88 の在庫同期バッチを差分同期に書き換えて"},
        {"edit": "internal/inventory/sync.go"},
        {"say": "差分同期に書き換えました。"},
        {"user": "全件同期は残さず、差分同期に一本化することにしよう"},
        {"say": "了解です。"},
        {"user": "テストも回して"},
        {"bash": "go test ./internal/inventory/...", "out": "ok"},
        {"say": "テストがすべて通りました。"},
    ]
    short_text = _extractive(tmp_path / "short", monkeypatch, short)
    long_text = _extractive(tmp_path / "long", monkeypatch, _long_run())
    for name in ("何をしてた", "決まったこと"):
        assert len(_section(long_text, name)) >= len(_section(short_text, name)), name
    assert len(_section(long_text, "何をしてた")) >= 3


def test_a_pasted_log_does_not_stand_in_for_the_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paste = "2026-11-30 ERROR payment timeout retry=3 在庫同期バッチ失敗 order=12345\n" * 300
    steps: list[dict[str, object]] = [
        {"user": f"このログを見て\n{paste}なぜ order=12345 だけ落ちる？"},
        {"say": "タイムアウト設定が原因です。"},
        {"user": "じゃあ直して"},
        {"edit": "internal/payment/client.go"},
        {"say": "タイムアウトを延ばしました。"},
        {"user": "ありがとう、PAY-1234 に記録しておいて"},
        {"say": "PAY-1234 に記録しました。"},
    ]
    text = _extractive(tmp_path, monkeypatch, steps)
    did = _section(text, "何をしてた")
    assert (
        did[0] == "- このログを見て … なぜ order=12345 だけ落ちる？ → タイムアウト設定が原因です。"
    )
    assert "ERROR payment" not in "\n".join(did)


def test_corpus_long_sessions_are_summarized_informatively(
    corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real long sessions of the corpus (1,600–2,400 records, one or two prompts each)."""
    import shutil

    from memrecall.config import load_settings
    from memrecall.summarize.pipeline import SummarizeOptions, run_summarize

    source = corpus / "claude-transcripts" / "spotter" / "test" / "fixtures" / "transcripts"
    projects = tmp_path / "projects" / "-home-USER-projects-spotter"
    projects.mkdir(parents=True)
    for sid in (
        "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
        "8463c716-a2ea-4c14-9efa-87158ebd9f20",
        "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
    ):
        shutil.copy(source / f"{sid}.jsonl", projects / f"{sid}.jsonl")
        os.utime(projects / f"{sid}.jsonl", (time.time() - 7200, time.time() - 7200))
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(tmp_path / "projects"))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(tmp_path / "summaries"))
    settings = load_settings()
    settings.summarize.backend = "extractive"
    assert run_summarize(settings, SummarizeOptions()).summarized == 3
    for path in (tmp_path / "summaries").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        did = _section(text, "What we did")
        assert len(did) >= 5, (path.name, did)  # requests, milestones and errors, not 1–3 prompts
        assert any("pass" in line for line in did), (path.name, did)  # the test runs' outcome
        assert any(line.startswith("- Error `") for line in did), (path.name, did)
        links = text.split("## Topics\n", 1)[1].split("\n", 1)[0]
        assert links.count("[[") >= 5, links
