"""Verbs and adjectives the glossary knows are keywords: "ビルドが固まった" finds the note that
says 固まってしまう and the issue that says "hangs"; they rank memories but never make one
fire on their own."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched

from memrecall.config import load_settings
from memrecall.gate import generic_keys
from memrecall.glossary import is_predicate, predicate_forms
from memrecall.keywords import index_terms
from memrecall.tokenize import tokenize_text
from memrecall.tokenizers import resolve


@pytest.mark.parametrize(
    ("word", "forms"),
    [
        ("固まる", ["固ま"]),  # a stem of two characters finds 固まった, 固まって, 固まらない
        ("溜まる", ["溜ま"]),
        ("漏れる", ["漏れ"]),
        ("動作が重い", ["動作が重"]),
    ],
)
def test_a_stem_of_two_characters_stands_for_every_form(word: str, forms: list[str]) -> None:
    assert predicate_forms(word) == forms


@pytest.mark.parametrize(
    ("word", "text", "unrelated"),
    [
        ("遅い", "起動が遅くて困る", "遅延"),
        ("遅い", "前は遅かった", "遅刻"),
        ("重い", "画面が重くなる", "重要"),
        ("待つ", "ロックを待っている", "期待"),
        ("待つ", "応答を待たずに返す", "待機"),
        ("弾く", "リクエストが弾かれる", "弾丸"),
        ("ずれる", "表示がずれてしまう", "いずれ"),
    ],
)
def test_a_one_kanji_stem_finds_its_forms_but_not_other_words(
    word: str, text: str, unrelated: str
) -> None:
    forms = predicate_forms(word)
    assert any(form in text for form in forms)
    assert not any(form in unrelated for form in forms)


@pytest.mark.parametrize("word", ["固まる", "遅い", "動作が重い", "ずれる", "待たす", "コケる"])
def test_dictionary_forms_are_predicates(word: str) -> None:
    assert is_predicate(word)


@pytest.mark.parametrize("word", ["設定", "ハング", "フリーズする", "timeout", "ない", "漏れ"])
def test_nouns_katakana_and_english_are_not_predicates(word: str) -> None:
    assert not is_predicate(word)
    assert predicate_forms(word) == [word]


@pytest.fixture
def glossary_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    (isolated_home / "synonyms.txt").write_text(
        "固まる, hang, hangs, hung, stuck\n遅い, slow, sluggish\n", encoding="utf-8"
    )
    return isolated_home


def _keywords(prompt: str) -> list[tuple[str, str]]:
    settings = load_settings()
    keywords, _ = tokenize_text(prompt, settings.tokenizer, settings)
    return [(k.text, k.kind) for k in keywords]


def test_a_verb_the_glossary_knows_is_a_keyword_in_its_dictionary_form(
    glossary_home: Path,
) -> None:
    found = _keywords("テスト実行が固まっちゃう件、前はどうしたっけ")
    assert ("固まる", "predicate") in found
    assert ("遅い", "predicate") in _keywords("ビルドが遅かった")


@pytest.mark.parametrize("prompt", ["ログを見た", "この関数を使ってみて", "テストを作ると思う"])
def test_an_everyday_verb_neither_the_glossary_nor_the_dictionary_knows_is_no_keyword(
    glossary_home: Path, prompt: str
) -> None:
    assert all(kind != "predicate" for _, kind in _keywords(prompt))


def test_a_verb_the_dictionary_translates_is_a_keyword(glossary_home: Path) -> None:
    # JMdict: 消す → erase, delete (scripts/build_glosses.py); the glossary does not list it.
    assert ("消す", "predicate") in _keywords("同期したらファイルが消された")


def test_the_index_never_holds_predicates() -> None:
    analyzer, _ = resolve("sudachi", None)
    terms = index_terms("ビルドが固まって遅かった", analyzer)
    assert "ビルド" in terms
    assert "固まる" not in terms and "遅い" not in terms


def test_a_predicate_is_everyday_for_the_gate(glossary_home: Path) -> None:
    settings = load_settings()
    keywords, _ = tokenize_text("デプロイが固まった", settings.tokenizer, settings)
    generic = generic_keys(keywords, frozenset())
    assert "固まる" in generic and "デプロイ" not in generic


@pytest.fixture
def stores(glossary_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    note(
        vault,
        "note/テスト実行が固まる問題.md",
        "# テスト実行が固まる問題\n\nテスト実行が途中で固まってしまう。\n"
        "原因はロックの取り合いだった。\n",
    )
    note(
        vault, "note/テスト実行の並列化.md", "# テスト実行の並列化\n\nテスト実行を四並列にした。\n"
    )
    diary(vault)
    issues = [
        {
            "id": "bd-h4ng",
            "title": "Test run hangs forever on the lock file",
            "description": "The runner gets stuck waiting for the lock.",
            "status": "closed",
        }
    ] + chores()
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return vault


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_conjugated_verb_finds_the_note_and_the_english_issue(stores: Path, engine: str) -> None:
    outcome = searched("テスト実行が固まった件", engine)
    refs = [hit.ref for hit in outcome.hits]
    # The note that says the prompt's verb outranks the one sharing only the noun.
    assert refs.index("note/テスト実行が固まる問題.md") < refs.index("note/テスト実行の並列化.md")
    assert "bd-h4ng" in refs
    hang = next(hit for hit in outcome.hits if hit.ref == "bd-h4ng")
    assert any(e.keyword == "固まる" for e in hang.evidence)


@pytest.mark.parametrize(
    ("prompt", "command"),
    [("cp の上書き確認で固まる", "cp"), ("rm -i が効いてる", "rm"), ("jq で抜き出す", "jq")],
)
def test_a_bare_two_letter_command_is_a_keyword(
    glossary_home: Path, prompt: str, command: str
) -> None:
    assert (command, "word") in _keywords(prompt)


def test_other_two_letter_words_are_prose(glossary_home: Path) -> None:
    texts = [text for text, _ in _keywords("go to the page and do it in an hour")]
    assert not {"go", "to", "do", "it", "in", "an"} & set(texts)


@pytest.mark.parametrize("prompt", ["Why didn’t the export run?", "What’s wrong with the export?"])
def test_contractions_with_either_apostrophe_are_no_keywords(
    glossary_home: Path, prompt: str
) -> None:
    texts = {text.casefold() for text, _ in _keywords(prompt)}
    assert texts == {"export"} | ({"run"} if "run" in prompt else set())


def test_a_katakana_verb_is_found_in_its_forms(glossary_home: Path) -> None:
    # Developer slang (テストがコケた: the test failed) is written in katakana.
    assert ("コケる", "predicate") in _keywords("夜中にジョブがコケても誰も気づかない")
    forms = predicate_forms("コケる")
    assert any(form in "ビルドがコケた" for form in forms)
    assert not any(form in "コケコッコー" for form in forms)
