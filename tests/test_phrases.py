"""Two English words the glossary lists as one entry are one keyword, in the glossary's
spelling, however they are inflected: "we hit a race condition" finds the note titled
競合状態, "users get logged out" the issue about ログアウト. A phrasal verb is never searched
as its two words anywhere in a document ("timed out" + "log" is no logout)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched

from memrecall.config import load_settings
from memrecall.tokenize import tokenize_text


@pytest.fixture
def glossary_home(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    (isolated_home / "synonyms.txt").write_text(
        (
            "race condition, 競合状態\nlog out, logout, ログアウト\nroll back, rollback, 切り戻し\n"
            "resend, resent, 再送\nwebhook, webhooks, ウェブフック\n"
            "order-dependent, order dependent, 順序依存\n"
        ),
        encoding="utf-8",
    )
    return isolated_home


def _keywords(prompt: str) -> list[tuple[str, str]]:
    settings = load_settings()
    keywords, _ = tokenize_text(prompt, settings.tokenizer, settings)
    return [(k.text, k.kind) for k in keywords]


@pytest.mark.parametrize(
    ("prompt", "phrase"),
    [
        ("we hit a race condition in the worker", "race condition"),
        ("two race conditions in the worker", "race condition"),
        ("users get logged out after the redirect", "log out"),
        ("the job keeps logging out the admin", "log out"),
        ("rolled back the deploy twice", "roll back"),
        ("Rolling-back the deploy failed", "roll back"),
        # A hyphenated pair closed up is the one word the glossary lists.
        ("what is our re-send policy", "resend"),
        ("we Re-Sent the invoice", "resent"),
        ("the web-hooks fired twice", "webhook"),
        ("a roll-back of the deploy", "roll back"),
        # Spelled out, "X-dependent" is "depends on the X".
        ("tests fail depending on the order they run in", "order-dependent"),
        ("the output depends on order", "order-dependent"),
        ("Results Depended upon their order", "order-dependent"),
    ],
)
def test_a_glossary_phrase_is_one_keyword_in_any_inflection(
    glossary_home: Path, prompt: str, phrase: str
) -> None:
    from memrecall.glossary import glossary_files, load_synonyms

    found = _keywords(prompt)
    phrases = [text for text, kind in found if kind == "phrase"]
    assert len(phrases) == 1, found
    # In whichever spelling the glossary holds it (the shipped one has "rolling back" too).
    groups = load_synonyms(glossary_files(load_settings()))
    assert phrase in groups[phrases[0].casefold()]
    # Its words stay, as pieces of it: a memory holding only `race` matches less.
    words = prompt.lower().replace("-", " ").split()
    pieces = [text for text, kind in found if kind == "part"]
    assert pieces and all(piece in words for piece in pieces)


def test_words_the_glossary_does_not_pair_stay_words(glossary_home: Path) -> None:
    found = _keywords("the race results and the condition flag")
    assert ("race condition", "phrase") not in found
    assert ("race", "word") in found and ("condition", "word") in found
    # "depends on" a word the glossary has no "-dependent" for stays as it was.
    found = _keywords("whether it works depends on the platform")
    assert ("platform", "word") in found and ("depends", "word") in found
    # Closed up, `co-worker` is no word of the glossary: no phrase; it is one hyphenated
    # name, its words the pieces of it.
    found = _keywords("my co-worker saw the race")
    assert not [text for text, kind in found if kind == "phrase"], found
    assert ("co-worker", "compound") in found and ("worker", "part") in found


@pytest.fixture
def stores(glossary_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    note(
        vault,
        "note/ワーカーの競合状態.md",
        "# ワーカーの競合状態\n\n二つのワーカーが同じ行を更新する。\n",
    )
    note(vault, "note/ワーカーの並列数.md", "# ワーカーの並列数\n\nワーカーは四つにした。\n")
    note(vault, "note/Webhook の再送.md", "# Webhook の再送\n\n再送は3回まで、間隔は倍々にする。\n")
    note(
        vault,
        "note/テストの順序依存.md",
        "# テストの順序依存\n\ngo test -shuffle=on で洗い出した。timeNow を戻していなかった。\n",
    )
    note(vault, "note/テストの並列実行.md", "# テストの並列実行\n\nt.Parallel を付けて速くした。\n")
    note(vault, "note/Webhook の署名.md", "# Webhook の署名\n\n署名は HMAC で検証する。\n")
    diary(vault)
    issues = [
        {
            "id": "bd-l0g1",
            "title": "ログアウトされる after the payment redirect",
            "description": "The session cookie is dropped on the cross-site POST.",
            "status": "closed",
        },
        {
            "id": "bd-l0g2",
            "title": "Export job timed out",
            "description": "It stops after 30 seconds; see the log for the request that hung.",
            "status": "open",
        },
    ] + chores()
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return tmp_path


def _search(prompt: str, engine: str) -> dict[str, list[str]]:
    """ref → the prompt keywords it matched, best first."""
    outcome = searched(prompt, engine)
    return {hit.ref: [e.keyword for e in hit.evidence] for hit in outcome.hits}


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_an_english_phrase_finds_the_japanese_note(stores: Path, engine: str) -> None:
    refs = list(_search("we hit a race condition in the worker again", engine))
    assert refs[:1] == ["note/ワーカーの競合状態.md"]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_hyphenated_word_finds_the_note_written_in_japanese(stores: Path, engine: str) -> None:
    assert list(_search("what did we decide about the re-send of failed webhooks", engine))[
        :1
    ] == ["note/Webhook の再送.md"]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_depending_on_the_order_finds_the_order_dependence_note(
    stores: Path, engine: str
) -> None:
    found = _search("some tests fail depending on the order they run in, what was it", engine)
    assert list(found)[:1] == ["note/テストの順序依存.md"]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_phrasal_verb_is_not_its_words_anywhere(stores: Path, engine: str) -> None:
    matched = _search("customers get logged out after paying", engine)
    assert list(matched)[:1] == ["bd-l0g1"]
    assert "log out" in matched["bd-l0g1"]
    # `log` and `out` both occur in bd-l0g2, but never as "log out".
    assert "log out" not in matched.get("bd-l0g2", [])


# --- Japanese phrases the analyser splits ----------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "phrase", "piece"),
    [
        ("サーバーが起動しない件", "起動しない", "起動"),
        ("DB に接続できないときのリトライ", "接続できない", "接続"),
        ("閉じた理由が消えてた", "閉じた理由", "理由"),
    ],
)
def test_a_japanese_glossary_phrase_is_one_keyword_with_its_nouns_as_pieces(
    isolated_home: Path, prompt: str, phrase: str, piece: str
) -> None:
    settings = load_settings()
    keywords, _ = tokenize_text(prompt, "sudachi", settings)
    found = {(k.text, k.subkind) for k in keywords}
    assert (phrase, "compound") in found
    assert (piece, "compound") not in found and (piece, "noun") not in found


@pytest.mark.parametrize("engine", ["sudachi", "mecab"])
@pytest.mark.parametrize(
    ("prompt", "phrase"),
    [
        ("bd import がいつまでも終わらない", "終わらない"),
        ("昨日の移行は朝まで終わらなかった", "終わらない"),
        ("終わらなくて困ってる", "終わらない"),
        ("VPN 越しだと DB に繋がらない", "繋がらない"),
        ("ステージングに繋がらなかったのはなぜ", "繋がらない"),
        ("新しい SDK とは互換性がない", "互換性がない"),
    ],
)
def test_a_negated_glossary_predicate_is_found_in_any_tense(
    isolated_home: Path, engine: str, prompt: str, phrase: str
) -> None:
    # The analysers' lemma (終わる, 繋がる) drops the negation that makes it a symptom.
    settings = load_settings()
    keywords, _ = tokenize_text(prompt, engine, settings)
    assert (phrase, "compound") in {(k.text, k.subkind) for k in keywords}


@pytest.mark.parametrize("engine", ["sudachi", "mecab"])
def test_a_verb_inside_a_glossary_phrase_does_not_stand_for_it(
    isolated_home: Path, engine: str
) -> None:
    # 切り戻し is the analysers' 切り戻す: kept apart, the verb took the phrase's synonyms
    # (rollback) and a note saying rollback matched the phrase not at all.
    settings = load_settings()
    keywords, _ = tokenize_text("切り戻しはイメージを戻すだけ", engine, settings)
    found = {(k.text, k.subkind) for k in keywords}
    assert ("切り戻し", "compound") in found
    assert not [text for text, subkind in found if subkind == "predicate" and "切り" in text]


def test_an_affirmative_predicate_is_not_its_negation(isolated_home: Path) -> None:
    settings = load_settings()
    keywords, _ = tokenize_text("移行が朝までに終わった", "sudachi", settings)
    assert "終わらない" not in {k.text for k in keywords}


def test_a_dictionary_form_verb_stays_a_predicate_not_a_phrase(isolated_home: Path) -> None:
    settings = load_settings()
    keywords, _ = tokenize_text("bd list が固まった", "sudachi", settings)
    assert ("固まる", "predicate") in {(k.text, k.subkind) for k in keywords}
    assert all(k.subkind != "compound" or "固ま" not in k.text for k in keywords)


def test_a_users_japanese_phrase_counts_too(isolated_home: Path) -> None:
    settings = load_settings()
    settings.user_synonyms.parent.mkdir(parents=True, exist_ok=True)
    settings.user_synonyms.write_text("請求書の締め日, billing cutoff\n", encoding="utf-8")
    keywords, _ = tokenize_text("請求書の締め日を変えた件", "sudachi", settings)
    assert ("請求書の締め日", "compound") in {(k.text, k.subkind) for k in keywords}


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_noun_and_a_verb_of_one_meaning_both_count(stores: Path, engine: str) -> None:
    # 書き出す and エクスポート both mean export: the verb no longer takes the word `export`
    # for itself, which left the noun matching nothing and the memory covering less.
    matched = _search("ログを書き出すとエクスポートがタイムアウトする", engine)
    assert "エクスポート" in matched["bd-l0g2"]
