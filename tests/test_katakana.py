"""A katakana keyword is a word, not a substring: "ログ" never finds a note about a ブログ,
"ファイル" never a プロファイル, while "テスト" still finds ユニットテスト (a compound of it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched

from memrecall.katakana import is_katakana, stands_alone

# One loanword that happens to hold another: never a match.
INSIDE_ANOTHER_WORD = [
    ("ブログを移行した", "ログ"),
    ("カタログの価格", "ログ"),
    ("確認ダイアログが出る", "ログ"),
    ("プロファイルを切り替える", "ファイル"),
    ("メモリが足りない", "メモ"),
    ("コンテストに出る", "テスト"),
    ("ブロックされた", "ロック"),
    ("ログインできない", "ログ"),
]

# A compound written without a space, a word followed by kanji or kana, an English ending.
STANDS_ALONE = [
    ("ユニットテストを書く", "テスト"),
    ("ロックファイルを消す", "ファイル"),
    ("ロックファイルを消す", "ロック"),
    ("ログ出力を増やす", "ログ"),
    ("アクセストークンの期限", "トークン"),
    ("メモリーリーク", "メモリ"),
    ("デプロイメントを更新", "デプロイ"),
    ("ブログとログ", "ログ"),  # one occurrence inside a word, one standing alone
    ("メモ", "メモ"),
]


@pytest.mark.parametrize(("text", "word"), INSIDE_ANOTHER_WORD)
def test_a_katakana_word_inside_a_longer_one_is_no_match(text: str, word: str) -> None:
    assert word in text
    assert not stands_alone(text, word)


@pytest.mark.parametrize(("text", "word"), STANDS_ALONE)
def test_a_katakana_word_of_its_own_or_in_a_compound_matches(text: str, word: str) -> None:
    assert stands_alone(text, word)


def test_only_all_katakana_keywords_are_checked() -> None:
    assert is_katakana("ログ") and is_katakana("メモリー")
    assert not is_katakana("ログ出力") and not is_katakana("log") and not is_katakana("設定")


@pytest.fixture
def stores(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    vault = tmp_path / "vault"
    note(vault, "note/ブログの移行.md", "# ブログの移行\n\nブログを静的サイトに移した。\n")
    note(vault, "note/プロファイル.md", "# プロファイル\n\nAWS のプロファイルを切り替える。\n")
    note(vault, "note/ログの保存期間.md", "# ログの保存期間\n\nログは 30 日で消す。\n")
    diary(vault)
    issues = [
        {
            "id": "bd-kt1",
            "title": "Memory grows without bound",
            "description": "ブロックが 2GB を超えて OOM で落ちる。",
            "status": "open",
        },
        {
            "id": "bd-kt2",
            "title": "Release checklist",
            "description": "リリース前のロック: タグを打ってから changelog を書く。",
            "status": "open",
        },
    ] + chores()
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize(
    ("prompt", "found", "never"),
    [
        ("ログの保存期間って何日だっけ", "note/ログの保存期間.md", "note/ブログの移行.md"),
        ("ファイルの権限", None, "note/プロファイル.md"),
        ("リリースのロックどこ？", "bd-kt2", "bd-kt1"),
    ],
)
def test_search_finds_katakana_words_not_their_look_alikes(
    stores: Path, engine: str, prompt: str, found: str | None, never: str
) -> None:
    refs = [hit.ref for hit in searched(prompt, engine).hits]
    assert never not in refs
    if found is not None:
        assert refs[:1] == [found]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_snippet_never_quotes_the_look_alike_line(stores: Path, engine: str) -> None:
    hits = {hit.ref: hit for hit in searched("ロック", engine).hits}
    assert "bd-kt1" not in hits
    assert "ロック:" in hits["bd-kt2"].snippet
