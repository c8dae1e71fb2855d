"""`memrecall stopwords`: suggestions computed from a generated recall log; add / remove / list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memrecall.__main__ import main
from memrecall.recall_log import append
from memrecall.config import load_settings
from memrecall.times import parse_instant as parse_now

REPO = Path(__file__).resolve().parent.parent
NOW = "2026-12-02T09:00:00+09:00"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def entry(
    keywords: list[str],
    df: dict[str, dict[str, int]],
    docs: dict[str, int],
    injected: list[dict] | None = None,
    ts: str = "2026-11-20T10:00:00+09:00",
) -> dict:
    return {
        "ts": ts,
        "session": "s1",
        "prompt_chars": 30,
        "decision": "inject" if injected else "quiet",
        "reason": "",
        "keywords": keywords,
        "dropped": [],
        "df": df,
        "candidates": {s: 1 for s in docs},
        "doc_counts": docs,
        "engine": "rg",
        "top": [],
        "injected": injected or [],
        "chars": 100 if injected else 0,
        "elapsed_ms": 40.0,
    }


@pytest.fixture
def log(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Four prompts: `設定` is everywhere and carries one injection on its own; `PAY-1234`
    is rare."""
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(tmp_path / "no-transcripts"))
    docs = {"summaries": 50, "obsidian": 150}
    logs = isolated_home / "logs"
    when = parse_now("2026-11-20T10:00:00+09:00")
    rows = [
        entry(
            ["設定", "PAY-1234"],
            {"設定": {"summaries": 20, "obsidian": 60}, "PAY-1234": {"summaries": 2}},
            docs,
            [
                {
                    "store": "summaries",
                    "ref": "2026/11/a.md",
                    "title": "a",
                    "score": 3.0,
                    "acc": 3.0,
                    "matched": ["PAY-1234", "設定"],
                    "main": "PAY-1234",
                }
            ],
        ),
        entry(
            ["設定", "ログ"],
            {"設定": {"summaries": 20, "obsidian": 60}, "ログ": {"obsidian": 10}},
            docs,
            [
                {
                    "store": "obsidian",
                    "ref": "x.md",
                    "title": "x",
                    "score": 2.1,
                    "acc": 2.1,
                    "matched": ["設定"],
                    "main": "設定",
                }
            ],
        ),
        entry(["設定"], {"設定": {"summaries": 10, "obsidian": 30}}, docs),
        entry(
            ["ログ", "設定"],
            {"ログ": {"obsidian": 10}, "設定": {"summaries": 30, "obsidian": 70}},
            docs,
        ),
        {"ts": "2026-11-20T10:05:00+09:00", "decision": "trivial", "reason": "acknowledgement"},
        {
            "ts": "2026-01-05T10:00:00+09:00",
            **{
                k: v
                for k, v in entry(["古い"], {"古い": {"summaries": 50}}, docs).items()
                if k != "ts"
            },
        },
    ]
    for row in rows:
        append(logs, parse_now(row["ts"]) if row.get("ts") else when, row)
    (logs / "recall-2026-11.jsonl").open("a", encoding="utf-8").write("{broken line\n")
    return logs


def test_suggest_json_gives_the_evidence(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stopwords", "suggest", "--json", "--min-count", "2")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert data["prompts"] == 6 and data["prompts_with_keywords"] == 5
    (first, *rest) = data["suggestions"]
    assert first == {
        "keyword": "設定",
        "extracted": 4,
        "searched": 4,
        "avg_df": 75.0,
        "doc_share": 0.375,
        "injections": 2,
        "main": 1,
        "only": 1,
        "quiet": 2,
        "used": 0,
        "ignored": 0,  # no transcript of session s1: no verdict
    }
    # ログ: 10 of 200 documents = 5 % < the default 10 % floor; PAY-1234 and 古い: too few prompts.
    assert rest == []


def test_suggest_thresholds_and_since(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(
        run(capsys, "stopwords", "suggest", "--json", "--min-count", "1", "--min-share", "0.04")[1]
    )
    assert [s["keyword"] for s in data["suggestions"]] == ["設定", "古い", "ログ"]
    data = json.loads(
        run(
            capsys,
            "stopwords",
            "suggest",
            "--json",
            "--min-count",
            "1",
            "--min-share",
            "0.04",
            "--since",
            "2026-11-01",
        )[1]
    )
    assert [s["keyword"] for s in data["suggestions"]] == ["設定", "ログ"]


def test_suggest_table_on_stdout(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stopwords", "suggest", "--min-count", "2")
    assert code == 0
    assert "設定" in out and "38%" in out and "75.0" in out
    assert (
        err
        == "1 candidates from 6 prompts. Add the ones that bring nothing: "
        "memrecall stopwords add WORD…\n"
    )


def test_suggest_without_a_log(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "stopwords", "suggest")
    assert (code, out) == (0, "")
    assert err == f"No recall log entries in {isolated_home / 'logs'}.\n"


def test_add_then_suggest_and_tokenize_skip_it(
    log: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "stopwords", "add", "設定", "ＡＰＩ設計", "設定")
    path = isolated_home / "stopwords.txt"
    assert (code, out) == (0, "")
    assert err == f"Added 2 stopwords to {path}: 設定, API設計\n"
    text = path.read_text(encoding="utf-8")
    assert "# added 2026-12-02 by `memrecall stopwords add`\n設定\nAPI設計\n" in text
    assert (
        json.loads(run(capsys, "stopwords", "suggest", "--json", "--min-count", "2")[1])[
            "suggestions"
        ]
        == []
    )

    from memrecall.tokenize import tokenize_text

    keywords, _ = tokenize_text("設定を見直す", "regex", load_settings())
    assert "設定" not in [k.text for k in keywords]


def test_add_reports_words_already_listed(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "stopwords", "add", "foo")
    code, _, err = run(capsys, "stopwords", "add", "FOO", "処理")
    assert code == 0
    assert err == "Already a stopword (user): FOO\nAlready a stopword (shipped): 処理\n"
    assert (isolated_home / "stopwords.txt").read_text(encoding="utf-8").count("foo") == 1


@pytest.mark.parametrize("word", ["a#b", " ", "x\ny"])
def test_add_rejects_unusable_words(
    isolated_home: Path, word: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "stopwords", "add", word)
    assert code == 2 and err.startswith("Error: ")
    assert not (isolated_home / "stopwords.txt").exists()


def test_remove_is_all_or_nothing(isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "stopwords", "add", "alpha", "beta")
    path = isolated_home / "stopwords.txt"
    before = path.read_bytes()
    code, _, err = run(capsys, "stopwords", "remove", "alpha", "処理")
    assert code == 1
    assert err == f"Error: '処理' is a shipped stopword; only words in {path} can be removed\n"
    code, _, err = run(capsys, "stopwords", "remove", "gamma")
    assert (code, err) == (1, "Error: 'gamma' is not in the stopword list\n")
    assert path.read_bytes() == before

    code, _, err = run(capsys, "stopwords", "remove", "ALPHA")
    assert (code, err) == (0, f"Removed 1 stopwords from {path}: ALPHA\n")
    assert "alpha" not in path.read_text(encoding="utf-8") and "beta" in path.read_text(
        encoding="utf-8"
    )
    run(capsys, "stopwords", "remove", "beta")
    # The dated comment goes with its last word; the header stays.
    assert "# added" not in path.read_text(encoding="utf-8")


def test_list_marks_shipped_and_user(
    isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "stopwords", "add", "自作語", "処理")
    code, out, err = run(capsys, "stopwords", "list")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert "処理\tshipped" in lines and "自作語\tuser" in lines
    assert run(capsys, "stopwords", "list", "--source", "user")[1] == "自作語\tuser\n"
    data = json.loads(run(capsys, "stopwords", "list", "--json")[1])
    assert {"word": "自作語", "source": "user"} in data
    code, _, err = run(capsys, "stopwords", "list", "--source", "mine")
    assert (code, err) == (2, "Error: unknown --source 'mine'; choose shipped or user\n")


@pytest.mark.parametrize(
    "env", [{"PYTHONIOENCODING": "cp932"}, {"LANG": "C", "LC_ALL": "C"}], ids=["cp932", "C"]
)
def test_utf8_regardless_of_locale(isolated_home: Path, env: dict[str, str]) -> None:
    word = "𠮷野家"  # 𠮷 is not in cp932: a console encoding would raise or mangle it
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONIOENCODING", "LANG", "LC_ALL", "PYTHONUTF8")
    }
    full = {**base, **env, "PYTHONUTF8": "0"}
    added = subprocess.run(
        [sys.executable, "-m", "memrecall", "stopwords", "add", word],
        capture_output=True,
        env=full,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    assert (
        added.stderr.decode("utf-8")
        == f"Added 1 stopwords to {isolated_home / 'stopwords.txt'}: {word}\n"
    )
    listed = subprocess.run(
        [sys.executable, "-m", "memrecall", "stopwords", "list", "--source", "user"],
        capture_output=True,
        env=full,
        cwd=REPO,
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.decode("utf-8") == f"{word}\tuser\n"


@pytest.fixture
def judged_log(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Six injections, each in its own session with a transcript: the three `設定` carried
    were ignored, the two `PAY-1234` carried were read, one `ログ` one ignored."""
    from datetime import datetime

    from _transcripts import Clock, Transcript

    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    projects = tmp_path / "projects"
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    vault = tmp_path / "vault"
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    docs = {"obsidian": 100}
    plan = [
        ("設定", "settings-a.md", False),
        ("設定", "settings-b.md", False),
        ("設定", "settings-c.md", False),
        ("PAY-1234", "pay.md", True),
        ("PAY-1234", "pay.md", True),
        ("ログ", "logs.md", False),
    ]
    for n, (keyword, ref, read) in enumerate(plan):
        ts = f"2026-11-2{n}T10:00:05+09:00"
        row = entry(
            [keyword],
            {keyword: {"obsidian": 2 if keyword == "PAY-1234" else 40}},
            docs,
            [
                {
                    "store": "obsidian",
                    "ref": ref,
                    "title": ref[:-3],
                    "score": 2.0,
                    "acc": 2.0,
                    "matched": [keyword],
                    "main": keyword,
                }
            ],
            ts=ts,
        )
        row["session"] = f"s{n}"
        append(isolated_home / "logs", parse_now(ts), row)
        context = (
            f"<memrecall-context>\n[1] obsidian · 2026-11-01 · {ref[:-3]}\n    {vault / ref}:3\n"
            f"    matched: {keyword}\n    > something about {keyword}\n</memrecall-context>"
        )
        t = Transcript(
            projects,
            tmp_path / "shop",
            f"s{n}",
            Clock(datetime.fromisoformat(f"2026-11-2{n}T10:00:00+09:00")),
        )
        t.prompt(f"{keyword} を見て", context)
        if read:
            t.tool("Read", {"file_path": str(vault / ref)})
        t.say("はい。").end_turn().write()
    return isolated_home


def test_suggest_never_used_ranks_keywords_whose_memories_were_ignored(
    judged_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "stopwords", "suggest", "--json", "--never-used", "--min-count", "1"
    )
    assert (code, err) == (0, "")
    ranked = [
        (s["keyword"], s["injections"], s["used"], s["ignored"])
        for s in json.loads(out)["suggestions"]
    ]
    # PAY-1234's memories were read: never a candidate; the most ignored comes first.
    assert ranked == [("設定", 3, 0, 3), ("ログ", 1, 0, 1)]
    data = json.loads(run(capsys, "stopwords", "suggest", "--json", "--never-used")[1])
    assert [s["keyword"] for s in data["suggestions"]] == ["設定"]  # --min-count 3 ignored memories
    # The default ranking is unchanged, and now says how its candidates' memories fared.
    data = json.loads(run(capsys, "stopwords", "suggest", "--json", "--min-count", "2")[1])
    assert [(s["keyword"], s["used"], s["ignored"]) for s in data["suggestions"]] == [
        ("設定", 0, 3)
    ]
    code, out, err = run(capsys, "stopwords", "suggest", "--never-used", "--min-count", "1")
    assert code == 0 and "設定" in out and "ignored" in out and "PAY-1234" not in out
