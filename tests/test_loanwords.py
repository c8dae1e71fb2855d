"""Katakana in a Japanese prompt finds the English memory that uses the word it comes from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memrecall import loanwords
from memrecall.config import load_settings
from memrecall.search import search
from memrecall.tokenize import tokenize_text


@pytest.mark.parametrize(
    ("katakana", "english"),
    [
        ("エクスポート", "export"),
        ("コンフリクト", "conflict"),
        ("ドライバー", "driver"),
        ("ドライバ", "driver"),  # the long-vowel mark at the end is optional
        ("ワーカー", "worker"),
    ],
)
def test_a_loanword_gives_its_english(katakana: str, english: str) -> None:
    assert english in loanwords.english(katakana)


@pytest.mark.parametrize(
    ("compound", "phrase", "joined"),
    [
        ("マージドライバ", "merge driver", "mergedriver"),
        ("プレースホルダー", "place holder", "placeholder"),
        ("サーキットブレーカー", "circuit breaker", "circuitbreaker"),
        ("タイムスタンプ", "time stamp", "timestamp"),
    ],
)
def test_a_compound_gives_its_pieces_as_a_phrase_and_as_one_word(
    compound: str, phrase: str, joined: str
) -> None:
    found = loanwords.english(compound)
    assert phrase in found and joined in found


@pytest.mark.parametrize("text", ["設定", "merge", "ア", "ー", "ドライバ設定", "ア" * 40, ""])
def test_no_english_for_what_is_not_a_katakana_word(text: str) -> None:
    assert loanwords.english(text) == []


def test_every_line_of_the_table_is_found_by_the_lookup() -> None:
    lines = [
        line
        for line in loanwords.table_path().read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    assert len(lines) > 10_000
    assert lines == sorted(lines, key=lambda line: line.partition("\t")[0])
    for line in lines[:: max(1, len(lines) // 500)] + lines[:3] + lines[-3:]:
        word, _, origins = line.partition("\t")
        assert loanwords.lookup(word) == origins.split("|")
    assert loanwords.lookup("ンンンンン") == []


def test_the_glossary_wins_over_the_table() -> None:
    # UniDic's キャッシュ is money (cash); the glossary's is a cache.
    synonyms = {"キャッシュ": {"キャッシュ", "cache"}}
    loanwords.add_origins(
        [("キャッシュ", "キャッシュ"), ("マージドライバ", "マージドライバ")], synonyms
    )
    assert synonyms["キャッシュ"] == {"キャッシュ", "cache"}
    assert "merge driver" in synonyms["マージドライバ"]


def _tracker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, issues: list[dict]) -> Path:
    """A beads export holding `issues` and 30 unrelated chores, the only store configured."""
    beads = tmp_path / "proj" / ".beads"
    beads.mkdir(parents=True)
    chores = [
        {
            "id": f"bd-x{n:03d}",
            "title": f"Unrelated chore {n}",
            "description": "Tidy the release notes and bump the version.",
            "status": "open",
        }
        for n in range(30)
    ]
    (beads / "issues.jsonl").write_text(
        "".join(json.dumps(issue) + "\n" for issue in issues + chores), encoding="utf-8"
    )
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    return beads


def _top_ref(prompt: str, engine: str) -> str | None:
    """The first hit's ref for `prompt`, searched through `engine` (the index built first)."""
    settings = load_settings()
    if engine == "index":
        from memrecall.index import refresh

        refresh(settings)
    keywords, _ = tokenize_text(prompt, settings.tokenizer, settings)
    outcome = search(keywords, settings)
    assert outcome.engine == engine
    return outcome.hits[0].ref if outcome.hits else None


@pytest.fixture
def english_tracker(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    merge_driver = {
        "id": "bd-m3rg",
        "title": "Merge driver configured with invalid placeholders",
        "description": "git config merge.beads.driver used %L %R; use %O %A %B instead.",
        "status": "closed",
        "close_reason": "Fixed the driver line and migrate existing clones on bd init.",
    }
    return _tracker(tmp_path, monkeypatch, [merge_driver])


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_japanese_prompt_finds_the_english_issue(english_tracker: Path, engine: str) -> None:
    assert _top_ref("マージドライバのプレースホルダーの件", engine) == "bd-m3rg"


def test_a_japanese_compound_of_translatable_pieces_gets_its_english() -> None:
    synonyms = {
        "在庫": {"在庫", "inventory", "stock"},
        "同期": {"同期", "sync", "synchronize"},
    }
    keywords = [
        ("在庫同期", "在庫同期", "compound"),
        ("在庫", "在庫", "part"),
        ("同期", "同期", "part"),
        ("バッチ化", "バッチ化", "compound"),  # 化 has no English: left alone
        ("バッチ", "バッチ", "part"),
        ("化", "化", "part"),
    ]
    loanwords.add_compound_english(keywords, synonyms)
    assert {"inventory sync", "stock sync"} <= synonyms["在庫同期"]
    assert "バッチ化" not in synonyms
    # Katakana pieces come from the loanword table: マージ + ドライバ + 設定 (glossary).
    synonyms = {"設定": {"設定", "config", "settings"}}
    keywords = [
        ("マージドライバ設定", "マージドライバ設定", "compound"),
        ("マージ", "マージ", "part"),
        ("ドライバ", "ドライバ", "part"),
        ("設定", "設定", "part"),
    ]
    loanwords.add_compound_english(keywords, synonyms)
    assert "merge driver config" in synonyms["マージドライバ設定"]


def test_the_glossary_lookup_merges_groups_that_share_a_whole_word(tmp_path: Path) -> None:
    from memrecall.search import load_synonyms

    table = tmp_path / "synonyms.txt"
    table.write_text(
        "ロールバック, rollback\n巻き戻し, rollback, revert\nロール, role\nログイン, login\n",
        encoding="utf-8",
    )
    groups = load_synonyms([table], {"巻き戻し", "ログ"})
    assert groups["巻き戻し"] == {"巻き戻し", "rollback", "revert", "ロールバック"}
    # `ロール` sits inside `ロールバック` but is not one of its words: no merge.
    assert "role" not in groups["rollback"]
    # A prompt word inside a longer glossary word (`ログ` in `ログイン`) is not that word.
    assert "ログ" not in groups


# --- words of kanji: JMdict's glosses (glosses.tsv, scripts/build_glosses.py) ---------------


@pytest.mark.parametrize(
    ("word", "english"),
    [
        ("退避", "backup"),
        ("階層", "hierarchy"),
        ("深さ", "depth"),  # kanji with okurigana
        ("識別子", "identifier"),  # no priority list marks it; short words are kept anyway
        ("設定", "configuration"),  # the computing sense, not "setting (of a novel)"
        ("複製", "duplication"),
    ],
)
def test_a_word_of_kanji_gives_its_dictionary_english(word: str, english: str) -> None:
    assert english in loanwords.glosses(word)


@pytest.mark.parametrize("word", ["関係", "計画", "登録", "普通"])
def test_everyday_japanese_words_get_no_english(word: str) -> None:
    # 関係 → "relation" would tie a Japanese prompt to every English issue using the word.
    assert loanwords.glosses(word) == []


@pytest.mark.parametrize("word", ["ドライバ", "ignore", "いる", "設", ""])
def test_words_without_kanji_or_of_one_character_have_no_glosses(word: str) -> None:
    assert loanwords.glosses(word) == []


def test_the_glosses_table_is_sorted_for_its_binary_search() -> None:
    lines = [
        line
        for line in loanwords.glosses_path().read_text(encoding="utf-8").splitlines()
        if not line.startswith("#")
    ]
    assert len(lines) > 50_000
    assert [line.encode() for line in lines] == sorted(line.encode() for line in lines)
    for line in lines[:: len(lines) // 200]:
        word, _, english = line.partition("\t")
        found = loanwords.glosses(word) or loanwords.katakana_glosses(word)
        assert found == english.split("|")


def test_the_glossary_wins_over_the_dictionary() -> None:
    synonyms = {"設定": {"設定", "config", "settings"}}
    glossed = loanwords.add_origins([("設定", "設定"), ("階層", "階層")], synonyms)
    assert synonyms["設定"] == {"設定", "config", "settings"}
    assert "hierarchy" in synonyms["階層"]
    # Only the dictionary's words are glosses (rank, never fire); a glossary word is evidence.
    assert glossed == {"階層"}


@pytest.fixture
def hierarchy_tracker(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    issues = [
        {
            "id": "bd-hd1",
            "title": "Child issues stop at three levels: hierarchy depth setting ignored",
            "description": "The configured max depth of the hierarchy is never read.",
            "status": "closed",
            "close_reason": "Read hierarchy.max-depth from the configuration file.",
        },
        # Decoys that share the prompt's other words (issue, 設定 → config).
        {
            "id": "bd-cf2",
            "title": "Config file reload drops comments",
            "description": "Saving the config file from bd config set loses comments.",
            "status": "open",
        },
        {
            "id": "bd-cf3",
            "title": "Child issue ids collide after config change",
            "description": "Changing the id prefix in the config renumbers child issues.",
            "status": "open",
        },
    ]
    return _tracker(tmp_path, monkeypatch, issues)


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize(
    "prompt",
    [
        "階層の深さの上限が効かない",
        "設定した階層の深さが効かない",
    ],
)
def test_a_japanese_prompt_in_kanji_finds_the_english_issue(
    hierarchy_tracker: Path, engine: str, prompt: str
) -> None:
    assert _top_ref(prompt, engine) == "bd-hd1"


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_compound_found_only_through_its_pieces_glosses_is_no_evidence(
    hierarchy_tracker: Path, engine: str
) -> None:
    # 階層深度 is in no dictionary; its pieces are: 階層 → hierarchy, 深度 → depth.
    assert _top_ref("階層深度の件", engine) == "bd-hd1"
    settings = load_settings()
    keywords, _ = tokenize_text("階層深度の件", settings.tokenizer, settings)
    hit = search(keywords, settings).hits[0]
    assert [(e.keyword, e.gloss) for e in hit.evidence] == [("階層深度", True)]


# --- English words: the reverse table (glosses_en.tsv) --------------------------------------


@pytest.mark.parametrize(
    ("word", "japanese"),
    [
        ("hierarchy", "階層"),  # JMdict
        ("hierarchies", "階層"),  # a plural or a tense is stripped to find the plain form
        ("containers", "コンテナ"),
        ("identifier", "識別子"),
        ("shortcut", "ショートカット"),  # the loanword table, read backwards
        ("Processor", "プロセッサ"),
    ],
)
def test_an_english_word_gives_its_japanese(word: str, japanese: str) -> None:
    assert japanese in loanwords.japanese(word)


@pytest.mark.parametrize("word", ["PAY-1234", "setup.py", "ab", "sync_inventory", "日本語"])
def test_ids_files_and_short_words_get_no_japanese(word: str) -> None:
    assert loanwords.japanese(word) == []


def test_the_words_of_an_identifier_get_no_japanese() -> None:
    # `batch` of `sync_inventory_batch` is a piece of a name, not the バッチ of a note.
    synonyms: dict[str, set[str]] = {}
    keys = [("sync_inventory_batch", "sync_inventory_batch"), ("batch", "batch")]
    loanwords.add_origins(keys, synonyms, pieces={"batch"})
    assert "batch" not in synonyms
    loanwords.add_origins(keys, synonyms)
    assert "バッチ" in synonyms["batch"]


@pytest.mark.parametrize("word", ["add", "read", "remove"])
def test_an_english_word_many_japanese_words_translate_gets_none(word: str) -> None:
    # "add" is 加算, 追加, 付加, 増設, 混入 …: it would tie a prompt to half of a Japanese vault.
    assert loanwords.japanese(word) == []


@pytest.fixture
def japanese_vault(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "子タスクの階層.md").write_text(
        "# 子タスクの階層\n\n子タスクの階層は 3 段までで、それ以上は設定で変えられない。\n",
        encoding="utf-8",
    )
    for n in range(12):
        (vault / f"タスク整理{n}.md").write_text(
            f"# タスク整理 {n}\n\n今週のタスクを整理した。task の期限を見直す。\n", encoding="utf-8"
        )
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    return vault


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_an_english_prompt_finds_the_japanese_note(japanese_vault: Path, engine: str) -> None:
    top = _top_ref("why does the task hierarchy stop at three levels?", engine)
    assert top is not None and top.endswith("子タスクの階層.md")


# --- verbs: JMdict's glosses of a verb in dictionary form (消す → delete) ------------------


@pytest.mark.parametrize(
    ("verb", "english"),
    [("消す", "delete"), ("書き換える", "overwrite"), ("落ちる", "crash"), ("消える", "vanish")],
)
def test_a_verb_gives_its_dictionary_english(verb: str, english: str) -> None:
    assert english in loanwords.glosses(verb)


@pytest.mark.parametrize("verb", ["見る", "使う", "作る", "思う", "言う"])
def test_everyday_verbs_get_no_english(verb: str) -> None:
    assert loanwords.glosses(verb) == []


@pytest.mark.parametrize(("word", "verb"), [("deleted", "消す"), ("overwrite", "書き換える")])
def test_an_english_verb_gives_the_japanese_verb(word: str, verb: str) -> None:
    assert verb in loanwords.japanese(word)


@pytest.fixture
def deletion_tracker(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    issues = [
        # Decoys first, and richer in the prompt's nouns: only the verb tells them apart.
        {
            "id": "bd-cm1",
            "title": "Sync commits notes outside the tracker folder",
            "description": "Running sync stages notes outside the tracker and commits them.",
            "status": "open",
        },
        {
            "id": "bd-mv2",
            "title": "Sync moves notes outside the tracker folder",
            "description": "Running sync moves notes outside the tracker into .beads/.",
            "status": "open",
        },
        {
            "id": "bd-dl3",
            "title": "Sync deleted notes outside the tracker folder",
            "description": "Running sync deleted the notes under docs/ and committed that.",
            "status": "closed",
            "close_reason": "Sync now stages only paths under .beads/.",
        },
    ]
    return _tracker(tmp_path, monkeypatch, issues)


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize(
    "prompt",
    ["同期したらトラッカーの外のノートが消された", "同期でトラッカーの外のノートを消してしまう"],
)
def test_a_japanese_verb_finds_the_english_issue_that_says_it(
    deletion_tracker: Path, engine: str, prompt: str
) -> None:
    assert _top_ref(prompt, engine) == "bd-dl3"
    # Like every dictionary word, the verb ranks the issue but is no evidence for the gate.
    settings = load_settings()
    keywords, _ = tokenize_text(prompt, settings.tokenizer, settings)
    hit = search(keywords, settings).hits[0]
    assert ("消す", True) in [(e.keyword, e.gloss) for e in hit.evidence]


# --- katakana UniDic lacks: JMdict's kana-only entries ---------------------------------------


@pytest.mark.parametrize(
    ("katakana", "english"), [("フラグ", "flag"), ("スニペット", "snippet"), ("キー", "key")]
)
def test_a_loanword_unidic_lacks_gets_jmdicts_english(katakana: str, english: str) -> None:
    assert loanwords.english(katakana) == []  # not in UniDic's table: the test is not vacuous
    assert loanwords.katakana_glosses(katakana)[0] == english


def test_jmdicts_katakana_english_ranks_but_is_no_evidence() -> None:
    synonyms: dict[str, set[str]] = {}
    glossed = loanwords.add_origins([("フラグ", "フラグ"), ("マージ", "マージ")], synonyms)
    assert "flag" in synonyms["フラグ"] and "merge" in synonyms["マージ"]
    # UniDic's loanword origin is the word itself (evidence); JMdict's gloss is a dictionary's.
    assert glossed == {"フラグ"}


@pytest.fixture
def flag_tracker(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    issues = [
        {
            "id": "bd-tab1",
            "title": "Legacy tab toggles linger in the product API",
            "description": "The old show_review_tab toggles are still returned by the API.",
            "status": "open",
        },
        {
            "id": "bd-flg2",
            "title": "Remove the legacy tab flags from the product API",
            "description": "Old clients read the flags; drop them after the forced upgrade.",
            "status": "open",
        },
    ]
    return _tracker(tmp_path, monkeypatch, issues)


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_japanese_prompt_with_such_a_loanword_finds_the_english_issue(
    flag_tracker: Path, engine: str
) -> None:
    assert _top_ref("古いタブのフラグを API から消す件", engine) == "bd-flg2"
