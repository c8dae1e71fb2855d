"""Privacy switches: `#memrecall:off` and `<private>…</private>` in every spelling a person
(or a Japanese IME) types, honoured by recall and summarize alike; what the recall log keeps
when `log_prompt = false`.

The spellings are classes, not strings: full-width `＃` `：` `＜` `＞` `／` and letters, case,
spaces inside, zero-width characters inside, CJK angle brackets.
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memrecall.config import load_settings
from memrecall.recall import parse_hook_input, recall
from memrecall.redact import has_optout, strip_private
from memrecall.summarize.pipeline import SummarizeOptions, run_summarize
from memrecall.transcripts import parse_lines

MARKER = "#memrecall:off"

OPTOUT_SPELLINGS = [
    "#memrecall:off",
    "＃memrecall：off",  # IME full-width punctuation
    "＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ",  # full-width everything
    "#MemRecall:OFF",
    "# memrecall : off",
    "#mem\u200brecall:off",  # a zero-width space inside
    "＃ＭＥＭＲＥＣＡＬＬ ： ｏｆｆ",
]
NOT_OPTOUT = [
    "#memrecall:on",
    "memrecall off",
    "#memrecall-off",
    "#memrecal:off",
    "オフにして #memrecall",
]

PRIVATE_SPELLINGS = [
    "<private>{}</private>",
    "＜private＞{}＜／private＞",
    "＜ｐｒｉｖａｔｅ＞{}＜／ｐｒｉｖａｔｅ＞",
    "< PRIVATE >{}</ Private >",
    "<Private>{}<／private>",
    "〈private〉{}〈/private〉",
    "<pri\u200bvate>{}</private\u2060>",
]


@pytest.mark.parametrize("spelling", OPTOUT_SPELLINGS)
def test_optout_marker_is_found_in_every_spelling(spelling: str) -> None:
    assert has_optout(f"この件は記録しないで {spelling} お願い", MARKER)
    assert has_optout(f"{spelling}\nplease keep this out", MARKER)


@pytest.mark.parametrize("text", NOT_OPTOUT)
def test_near_misses_are_not_the_marker(text: str) -> None:
    assert not has_optout(text, MARKER)


def test_a_configured_marker_is_matched_the_same_way() -> None:
    assert has_optout("ここは ＃ＮＯＭＥＭ です", "#nomem")
    assert not has_optout("ここは #nomem2 です", "#nomem3")
    assert not has_optout("anything at all", "")


@pytest.mark.parametrize("spelling", PRIVATE_SPELLINGS)
def test_private_span_is_removed_in_every_spelling(spelling: str) -> None:
    text = "前半（ＰＡＹ－１）です " + spelling.format("社外秘の hunter-Blue 値") + " 後半 tail"
    out = strip_private(text)
    assert "社外秘" not in out and "hunter" not in out
    # Text outside the span stays exactly as typed, full-width characters included.
    assert out.startswith("前半（ＰＡＹ－１）です ") and out.endswith(" 後半 tail")


def test_unclosed_and_repeated_private_spans() -> None:
    assert strip_private("keep ＜private＞ secret to the end\nmore secret") == "keep "
    out = strip_private("a <private>x1</private> b ＜private＞x2＜／private＞ c")
    assert out == "a  b  c"
    assert strip_private("no switches here: private matters") == "no switches here: private matters"


# --- recall honours both switches -------------------------------------------------------------


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "決済.md").write_text(
        "# 決済タイムアウト\nPAY-4321: 決済 API のタイムアウトを 10 秒にした。在庫同期も確認。\n",
        encoding="utf-8",
    )
    for n in range(6):
        (vault / "notes" / f"daily-{n}.md").write_text(f"# Daily {n}\nレビュー\n", encoding="utf-8")
    return vault


def _recall(prompt: str, session: str = "s1") -> tuple[Any, list[list[str]], list[list[str]]]:
    """Run the hook's core in-process; return the result, every rg argv and every keyword
    list handed to the search."""
    import memrecall.grep as grep
    import memrecall.search as search

    argvs: list[list[str]] = []
    searched: list[list[str]] = []
    real_argv, real_search = grep._rg_argv, search.search

    def spy_argv(*args: Any, **kwargs: Any) -> list[str]:
        argv = real_argv(*args, **kwargs)
        argvs.append(list(argv))
        return argv

    def spy_search(keywords: Any, *args: Any, **kwargs: Any) -> Any:
        searched.append([k.text for k in keywords])
        return real_search(keywords, *args, **kwargs)

    grep._rg_argv, search.search = spy_argv, spy_search
    try:
        hook = parse_hook_input(json.dumps({"session_id": session, "prompt": prompt}))
        # Roomy deadline: this test is about what is read, not about time.
        result = recall(hook, load_settings(), deadline=time.monotonic() + 60, backend="regex")
    finally:
        grep._rg_argv, search.search = real_argv, real_search
    return result, argvs, searched


def _state_texts(home: Path) -> str:
    folder = home / "state" / "sessions"
    return (
        "".join(p.read_text(encoding="utf-8") for p in folder.glob("*.json"))
        if folder.is_dir()
        else ""
    )


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(_vault(tmp_path)))
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(tmp_path / "none"))
    monkeypatch.setenv("MEMRECALL_NOW", "2026-12-02T09:00:00+09:00")
    (isolated_home / "config.toml").write_text("[recall]\nlog_prompt = true\n", encoding="utf-8")
    return isolated_home


@pytest.mark.parametrize("spelling", OPTOUT_SPELLINGS[:4])
def test_opted_out_prompt_leaves_no_trace(stores: Path, spelling: str) -> None:
    prompt = f"PAY-4321 の決済タイムアウト、{spelling} OptOutWord-Kq7 も見て"
    result, argvs, searched = _recall(prompt)
    assert result.context is None
    assert result.log["decision"] == "opted-out"
    assert not searched and not argvs  # nothing was searched at all
    logged = json.dumps(result.log, ensure_ascii=False)
    # Not even with log_prompt = true: no prompt text, no keyword.
    for word in ("PAY-4321", "OptOutWord", "決済"):
        assert word not in logged
    assert "keywords" not in result.log and "prompt" not in result.log


@pytest.mark.parametrize("spelling", PRIVATE_SPELLINGS[:5])
def test_private_span_never_becomes_a_keyword(stores: Path, spelling: str) -> None:
    secret_part = spelling.format("PrivateWord-Zx9 と 秘密計画 PAY-9999")
    result, argvs, searched = _recall(f"PAY-4321 の決済タイムアウト {secret_part} を確認して")
    assert result.log["decision"] == "inject"  # the public part still recalls
    assert "PAY-4321" in result.log["keywords"]
    places = {
        "log": json.dumps(result.log, ensure_ascii=False),
        "argv": json.dumps(argvs, ensure_ascii=False),
        "keywords": json.dumps(searched, ensure_ascii=False),
        "state": _state_texts(stores),
        "context": result.context or "",
    }
    for where, text in places.items():
        for word in ("PrivateWord", "秘密計画", "PAY-9999"):
            assert word not in text, (where, word)


def test_log_without_log_prompt_keeps_no_word_order(stores: Path) -> None:
    (stores / "config.toml").write_text(
        "[recall]\nlog_prompt = false\nmax_keywords = 8\n", encoding="utf-8"
    )
    words = [
        "zebra",
        "quartz",
        "melon",
        "anchor",
        "violet",
        "harbor",
        "copper",
        "lantern",
        "meadow",
        "falcon",
        "garnet",
        "island",
        "jasmine",
        "kettle",
    ]
    prompt = "PAY-4321 " + " ".join(words) + " の決済タイムアウト"
    result, _, searched = _recall(prompt)
    log = result.log
    assert "prompt" not in log
    kept = log["keywords"]
    assert kept == sorted(set(kept)) and 0 < len(kept) <= 8
    assert searched and set(kept) == set(searched[0])  # what was searched, only reordered
    # Dropped keywords are counted, never named.
    assert all(set(item) == {"why", "count"} for item in log["dropped"])
    assert sum(item["count"] for item in log["dropped"]) >= len(words) + 1 - 8
    assert list(log.get("df", {})) == sorted(log.get("df", {}))
    line = json.dumps(log, ensure_ascii=False)
    present = [w for w in words if w in line]
    assert len(present) >= 2
    # Wherever the kept words appear, they appear sorted, not in the order they were typed.
    assert sorted(present, key=line.find) == sorted(present)
    assert "zebra quartz" not in line


def test_log_prompt_true_logs_the_cleaned_prompt(stores: Path) -> None:
    result, _, _ = _recall(
        "PAY-4321 の決済 ＜private＞InnerWord-77＜／private＞ パスワードはKx9-Pw-Zz1です"
    )
    logged = result.log["prompt"]
    assert "PAY-4321" in logged and "InnerWord" not in logged and "Kx9-Pw-Zz1" not in logged
    assert "[REDACTED:" in logged


# --- summarize honours both switches ----------------------------------------------------------


def _records(
    sid: str, prompts: list[str], title: str = "", custom: str = ""
) -> list[dict[str, Any]]:
    base = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
    out: list[dict[str, Any]] = []
    for n, prompt in enumerate(prompts):
        common = {
            "sessionId": sid,
            "cwd": "/home/dev/shop",
            "gitBranch": "main",
            "version": "2.1.332",
            "entrypoint": "cli",
            "isSidechain": False,
            "timestamp": (base + timedelta(minutes=n)).isoformat(),
        }
        out.append(
            {
                **common,
                "uuid": f"u{n}",
                "type": "user",
                "message": {"role": "user", "content": prompt},
                "promptSource": "typed",
            }
        )
        out.append(
            {
                **common,
                "uuid": f"a{n}",
                "type": "assistant",
                "message": {
                    "id": f"m{n}",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": "了解です。タイムアウトは10秒、リトライは3回で進めます。" * 3,
                        }
                    ],
                },
            }
        )
    if title:
        out.append({"type": "ai-title", "aiTitle": title, "sessionId": sid})
    if custom:
        out.append({"type": "custom-title", "customTitle": custom, "sessionId": sid})
    return out


PROMPTS = [
    "在庫同期バッチのタイムアウト方針を決めたい。",
    "リトライは3回、タイムアウトは10秒にしよう。",
    "PAY-4321 はこれで完了にして、テストも追加して。",
    "ありがとう、これで決まり。",
]


@pytest.fixture
def projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    folder = tmp_path / "projects"
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(folder))
    monkeypatch.setenv(
        "MEMRECALL_NOW", (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    )
    return folder


def _write(projects: Path, sid: str, records: list[dict[str, Any]]) -> None:
    folder = projects / "-home-dev-shop"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sid}.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8"
    )


def _summarize(home: Path) -> tuple[Any, str]:
    settings = load_settings()
    settings.summarize.backend = "extractive"
    report = run_summarize(settings, SummarizeOptions())
    texts = "".join(p.read_text(encoding="utf-8") for p in (home / "summaries").rglob("*.md"))
    return report, texts


@pytest.mark.parametrize(
    "spelling", ["＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ", "＃memrecall：off", "# MemRecall : Off"]
)
def test_opted_out_session_is_never_summarized(
    projects: Path, isolated_home: Path, spelling: str
) -> None:
    prompts = list(PROMPTS)
    prompts[1] = f"{prompts[1]} {spelling}"
    _write(
        projects,
        "0b7e0000-0000-4000-8000-000000000001",
        _records("0b7e0000-0000-4000-8000-000000000001", prompts, title="OptTitle-Qq1 の件"),
    )
    report, texts = _summarize(isolated_home)
    assert report.summarized == 0 and report.skipped == {"opted-out-marker": 1}
    assert "OptTitle" not in texts


@pytest.mark.parametrize("spelling", PRIVATE_SPELLINGS[:4])
def test_private_session_lends_no_title(projects: Path, isolated_home: Path, spelling: str) -> None:
    prompts = list(PROMPTS)
    prompts[0] = prompts[0] + " " + spelling.format("買収計画 PrivWord-Qq2")
    sid = "9f1a0000-0000-4000-8000-000000000002"
    _write(
        projects,
        sid,
        _records(sid, prompts, title="買収計画 PrivTitle-Qq3 の検討", custom="CustomPriv-Qq4"),
    )
    report, texts = _summarize(isolated_home)
    assert report.summarized == 1
    for word in ("買収計画", "PrivWord", "PrivTitle", "CustomPriv"):
        assert word not in texts, word
    assert "在庫同期" in texts  # the rest of the session is summarized as usual


def test_public_session_keeps_its_title(projects: Path, isolated_home: Path) -> None:
    sid = "7e570000-0000-4000-8000-000000000003"
    _write(projects, sid, _records(sid, PROMPTS, title="在庫同期タイムアウトの方針"))
    _, texts = _summarize(isolated_home)
    assert "title: 在庫同期タイムアウトの方針" in texts


def test_parser_marks_private_sessions() -> None:
    lines = [
        json.dumps(r, ensure_ascii=False)
        for r in _records("s", ["a ＜ｐｒｉｖａｔｅ＞b＜／private＞ c", "d"], title="t")
    ]
    session = parse_lines(lines, Path("s.jsonl"))
    assert session.private and session.title_hint() == ""
    assert session.human_turns[0].text == "a  c"
    public = parse_lines(
        [json.dumps(r) for r in _records("p", ["a", "b"], title="t")], Path("p.jsonl")
    )
    assert not public.private and public.title_hint() == "t"
