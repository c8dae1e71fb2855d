"""Two ways a developer names a thing exactly, and memrecall must find it by: the words of a
command or expression written in backticks (`git diff --ignore-matching-lines`,
`{{query.file.property('workdate')}}`), and a forge's pull request or issue number however
it was written down (`PR #903` in the prompt, a link ending in `/pull/903` in the memory)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched, summary

from memrecall.config import load_settings
from memrecall.keywords import Keyword, extract, index_terms
from memrecall.recall import HookInput, looks_secret, recall
from memrecall.search import build_patterns
from memrecall.tokenizers import resolve

NOW = "2026-12-02T09:00:00+09:00"


def _use_vault(monkeypatch: pytest.MonkeyPatch, vault: Path) -> None:
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")


@pytest.fixture
def stores(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    diary(vault)
    note(
        vault,
        "Git hunkのサイズを変更する.md",
        "# Git hunkのサイズを変更する\n\n"
        "`git diff --ignore-matching-lines=<pattern>` で特定の行を除外しようとしたが"
        "うまくいかない。hunk 単位でパターンが適用される。\n",
    )
    note(vault, "git入門.md", "# git入門\n\n`git status` と `git log` を覚える。\n")
    note(
        vault,
        "workdate Example.md",
        "---\nworkdate: 2024-04-01\n---\n# workdate Example\n\n"
        "```tasks\ndue before {{query.file.property('workdate')}}\n```\n",
    )
    note(
        vault,
        "スキーマ文書.md",
        "# スキーマ文書\n\nテーブル定義書は `tbls doc --rm-dist` で作り直す。\n",
    )
    note(
        vault,
        "期限の例.md",
        "# 期限の例\n\n期限を絞る。\n```tasks\ndue before {{query.file.property('status')}}\n```\n",
    )
    summaries = tmp_path / "summaries"
    summary(
        summaries,
        "2026-10-01",
        "aaaa0903",
        "決済タイムアウトの見直し",
        "- 決済APIのタイムアウトを5秒にしてリトライを入れた\n"
        "- https://github.com/example/shop/pull/903 — PR: タイムアウト5秒化とリトライ",
    )
    summary(
        summaries,
        "2026-10-06",
        "dddd1006",
        "クーポン期限の型変更",
        "- クーポンの ends_at を DATE から DATETIME に変更\n"
        "- db/migrations/20261006_coupon_ends_at_datetime.sql を追加",
    )
    summary(
        summaries,
        "2026-10-02",
        "bbbb9030",
        "在庫同期の修正",
        "- 在庫同期のバッチを直した (PR #9030)\n- GH#93 は別件",
    )
    for n in range(10):
        summary(summaries, f"2026-09-{n + 10}", f"cccc{n:04d}", f"定例{n}", "- 議事録を書いた")
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(summaries))
    _use_vault(monkeypatch, vault)
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize("prompt", ["PR #903 って何を変えたやつだっけ?", "what did GH#903 change?"])
def test_a_pull_request_number_finds_the_memory_that_links_it(
    stores: Path, engine: str, prompt: str
) -> None:
    hits = searched(prompt, engine).hits
    assert hits, "nothing found"
    assert hits[0].ref == "2026/10/2026-10-01-aaaa0903.md"
    assert "pull/903" in hits[0].snippet
    # A number is whole: #903 is neither #9030 nor #93.
    assert all("bbbb9030" not in hit.ref for hit in hits)


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_command_in_backticks_finds_the_note_holding_the_whole_command_first(
    stores: Path, engine: str
) -> None:
    refs = [h.ref for h in searched("`git diff --ignore-matching-lines` が効かない", engine).hits]
    assert refs[:1] == ["Git hunkのサイズを変更する.md"], refs


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_word_quoted_inside_an_expression_is_searched(stores: Path, engine: str) -> None:
    prompt = "`{{query.file.property('workdate')}}` で期限を絞る例ってあった?"
    refs = [h.ref for h in searched(prompt, engine).hits]
    assert refs[:1] == ["workdate Example.md"], refs


def test_a_note_is_found_by_the_words_of_a_command_it_writes_in_backticks(stores: Path) -> None:
    refs = [h.ref for h in searched("tbls で定義書を作るには", "index").hits]
    assert refs[:1] == ["スキーマ文書.md"], refs


def test_the_index_holds_every_citation_of_a_forge_number_also_as_hash_number() -> None:
    analyzer, _ = resolve("regex", None)
    text = (
        "see https://github.com/o/r/pull/903 and https://gitlab.com/o/r/-/issues/77, "
        "GH#12, PR #5, bare #44"
    )
    terms = index_terms(text, analyzer)
    for number in ("#903", "#77", "#12", "#5", "#44"):
        assert number in terms, (number, terms)


@pytest.mark.parametrize("text", ["&#123; is an entity", "path/a#3x", "C# 10 records"])
def test_what_only_looks_like_a_forge_number_is_not_one(text: str) -> None:
    analyzer, _ = resolve("regex", None)
    assert not [t for t in index_terms(text, analyzer) if t.startswith("#")]


@pytest.mark.parametrize("name", ["HMAC-SHA256", "UTF-16LE", "HMAC-SHA512"])
@pytest.mark.parametrize("prefixes", [frozenset(), frozenset({"bd"})])
def test_an_acronym_pair_in_capitals_is_not_a_beads_id(name: str, prefixes: frozenset[str]) -> None:
    analyzer, _ = resolve("regex", None)
    keywords = extract(f"{name} で署名を照合する", analyzer, set(), id_prefixes=prefixes)
    found = {k.text: k.subkind for k in keywords}
    assert found.get(name) == "alnum", found


def test_an_id_typed_in_capitals_is_still_an_id() -> None:
    analyzer, _ = resolve("regex", None)
    for prefixes in (frozenset(), frozenset({"bd"})):
        keywords = extract("BD-7F3A の件", analyzer, set(), id_prefixes=prefixes)
        assert [(k.text, k.subkind) for k in keywords][:1] == [("bd-7f3a", "beads")]


def _keyword(text: str, kind: str) -> Keyword:
    return Keyword(text, kind, kind, "sudachi")


def test_a_word_typed_in_the_prompt_is_its_own_not_a_pieces_translation() -> None:
    keywords = [
        _keyword("署名検証", "compound"),
        _keyword("署名", "part"),
        _keyword("signature", "word"),
    ]
    patterns = {p.text: p for p in build_patterns(keywords, {"署名": {"signature"}})}
    assert patterns["signature"].keyword == "signature"
    assert not patterns["signature"].synonym


def test_a_whole_keyword_owns_a_translation_before_a_piece_of_a_command() -> None:
    keywords = [
        _keyword("git diff --stat", "code"),
        _keyword("diff", "part"),
        _keyword("差分", "noun"),
    ]
    patterns = {p.text: p for p in build_patterns(keywords, {"差分": {"diff"}})}
    assert patterns["diff"].keyword == "差分"


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_note_sharing_one_word_of_a_command_is_not_that_command(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    vault = tmp_path / "vault"
    diary(vault)
    note(
        vault,
        "gitのメモ.md",
        "# gitのメモ\n\n`git status` `git log` `git stash` をよく使う。git の設定は別ノート。\n",
    )
    _use_vault(monkeypatch, vault)
    prompt = "前に `git worktree prune --expire=now` を試したメモってあったっけ?"
    hits = searched(prompt, engine).hits
    assert hits and hits[0].ref == "gitのメモ.md"
    # Found through `git` alone: one word of five is a fifth of the command, not all of it.
    assert hits[0].coverage < 0.25, hits[0].coverage


NAMES = [
    "20261006_coupon_ends_at_datetime",
    "computeDependencyCounts",
    "TestChildParentDependencies_PreservesParentChildType",
    "V20240101__create_orders_table",
    "user_sessions_v2_backfill",
    "HandleWebhookEvent2024",
]
RANDOM_TOKENS = [
    "q8Zt3LmX0pW7vR2kYc9NbF4s",  # base62
    "k3jd9hw2qpo0eir7utyb5nx1",  # lower case and digits
    "9f86d081884c7d659a2feaa0c55ad015",  # hex
    "dGhpcyBpcyBhIHNlY3JldCB0b2tlbg",  # base64
    "Vx7_pQ2-mK9.zR4_tL8wB3nJ",  # separators do not make it a name
]


@pytest.mark.parametrize("name", NAMES)
def test_a_long_name_made_of_words_is_a_keyword_not_a_secret(name: str) -> None:
    assert not looks_secret(name)


@pytest.mark.parametrize("token", RANDOM_TOKENS)
def test_a_random_token_is_still_kept_out_of_keywords(token: str) -> None:
    assert looks_secret(token)


def test_the_hook_finds_the_session_that_added_a_migration_file_named_in_the_prompt(
    stores: Path,
) -> None:
    settings = load_settings()
    result = recall(
        HookInput(
            session_id="s-migration",
            prompt="What did the migration 20261006_coupon_ends_at_datetime.sql change?",
        ),
        settings,
        deadline=time.monotonic() + 30,  # not a test of time
    )
    # Searched and logged as the name it is, not dropped as "looks like a secret".
    assert "20261006_coupon_ends_at_datetime" in result.log["keywords"]
    assert not result.log.get("dropped")
    assert [hit["ref"] for hit in result.log["injected"]][:1] == [
        "2026/10/2026-10-06-dddd1006.md"
    ], result.log["reason"]


@pytest.mark.parametrize(
    ("prompt", "name"),
    [
        ("GoogleContainerTools/container-diff is archived now", "container-diff"),
        ("cert-manager が証明書を更新しない", "cert-manager"),
        ("pre-commit のフックが動かない", "pre-commit"),
    ],
)
def test_a_hyphenated_name_is_one_keyword_with_its_words_as_pieces(
    prompt: str, name: str
) -> None:
    analyzer, _ = resolve("sudachi", None)
    kinds = {k.text: k.kind for k in extract(prompt, analyzer, set())}
    assert kinds.get(name) == "compound", kinds
    first, second = name.split("-")
    assert kinds.get(second) == "part", kinds


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_hyphenated_tool_name_finds_its_note_before_notes_holding_one_of_its_words(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    vault = tmp_path / "vault"
    diary(vault)
    title = "イメージ比較ツール"
    note(vault, f"{title}.md", f"# {title}\n\ncontainer-diff で二つのイメージを比べる。\n")
    for n in range(3):
        note(vault, f"container {n}.md", f"# container {n}\n\ncontainer image を作る。\n")
        note(vault, f"diff {n}.md", f"# diff {n}\n\ngit の diff を見る。\n")
    _use_vault(monkeypatch, vault)
    hits = searched("container-diff is archived now, what should I use?", engine).hits
    assert [h.ref for h in hits][:1] == [f"{title}.md"], [h.ref for h in hits]


@pytest.mark.parametrize(
    ("prompt", "doc"),
    [
        ("After hard-deleting an issue I could not reuse its id", "Hard delete keeps the id"),
        ("the pure-Go driver is slow", "We use the pure Go driver"),
    ],
)
@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_hyphenated_pair_still_meets_the_words_written_apart(
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    engine: str,
    prompt: str,
    doc: str,
) -> None:
    vault = tmp_path / "vault"
    diary(vault)
    note(vault, "apart.md", f"# notes\n\n{doc}.\n")
    note(vault, "half.md", f"# notes\n\n{doc.split()[1]} only.\n")
    _use_vault(monkeypatch, vault)
    hits = searched(prompt, engine).hits
    assert hits and hits[0].ref == "apart.md", [h.ref for h in hits]


def test_a_hyphenated_pair_written_apart_in_the_memory_is_evidence_enough_to_speak(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    issues = [
        {
            "id": "bd-hd01",
            "title": "Hard delete keeps the id reserved",
            "description": "After a hard delete, create with the same id fails: the id stays"
            " in the deletions manifest.",
            "status": "closed",
            "close_reason": "Fixed: hard delete releases the id.",
            "updated_at": "2026-11-01T10:00:00Z",
        },
        *chores(),
    ]
    project = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent.parent
    monkeypatch.setenv("MEMRECALL_BEADS", str(project))
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    result = recall(
        HookInput(
            session_id="s-hard",
            prompt="After hard-deleting an issue I couldn't create a new one with the same id."
            " Did we fix that?",
        ),
        load_settings(),
        deadline=time.monotonic() + 30,  # not a test of time
    )
    assert [hit["ref"] for hit in result.log["injected"]][:1] == ["bd-hd01"], result.log["reason"]
