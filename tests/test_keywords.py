"""Keyword-extraction contract, run identically over every backend.

Each case is a developer prompt with the keywords a user expects (in order of first
appearance) and words that must not come out. The same cases run against regex, sudachi,
mecab and a `command:` backend (a tiny external analyser written to a temp dir), because
the caller must never be able to tell which analyser is behind `memrecall tokenize`.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

from memrecall.config import load_settings
from memrecall.keywords import Keyword, extract, load_stopwords
from memrecall.resources import shipped_stopwords
from memrecall.tokenize import effective_stopwords
from memrecall.tokenizers import Analyzer, resolve
from memrecall.tokenizers.base import HAS_JAPANESE, SINGLE_KANA

# An external analyser obeying the stdin → one-keyword-a-line contract: runs of kanji or
# katakana, the script-runs of mixed compounds and 2-kanji chunks of long kanji runs.
COMMAND_SCRIPT = r"""
import re, sys
K = "\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u3005-\u3007"
T = "\u30A1-\u30FA\u30FC-\u30FF"
text = sys.stdin.buffer.read().decode("utf-8")
out = []
for run in re.findall(f"[{K}{T}]+", text):
    out.append(run)
    for piece in re.findall(f"[{K}]+|[{T}]+", run):
        out.append(piece)
        if re.fullmatch(f"[{K}]{{4,}}", piece):
            out += [piece[i:i + 2] for i in range(0, len(piece) - 1, 2)]
sys.stdout.write("".join(w + "\n" for w in out if len(w) >= 2))
"""

BACKENDS = ["regex", "sudachi", "mecab", "command"]
PARTICLES = {"は", "が", "を", "に", "で", "と", "の", "も"}


def _write_script(directory: Path, name: str, source: str) -> str:
    script = directory / name
    script.write_text(source, encoding="utf-8")
    return f"command:{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


@pytest.fixture(scope="module", params=BACKENDS)
def analyzer(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Analyzer:
    name = request.param
    if name == "command":
        name = _write_script(tmp_path_factory.mktemp("analyser"), "analyser.py", COMMAND_SCRIPT)
    found, notes = resolve(name)
    assert notes == []
    return found


@pytest.fixture(scope="module")
def shipped() -> set[str]:
    return load_stopwords([shipped_stopwords()])


def texts(prompt: str, analyzer: Analyzer, stopwords: set[str]) -> list[str]:
    return [k.text for k in extract(prompt, analyzer, stopwords)]


# (prompt, expected keywords in order of first appearance, keywords that must not appear)
CASES: list[tuple[str, list[str], list[str]]] = [
    (
        "PAY-1234 の決済タイムアウト、前回どう直した？",
        ["PAY-1234", "決済", "タイムアウト"],
        ["PAY", "1234", "前回", "タイム", "アウト", "直し"],
    ),
    (
        "INV-88の在庫同期が失敗する件",
        ["INV-88", "在庫同期", "失敗"],
        ["INV", "88", "件", "INV-88の"],
    ),
    (
        "bd-a1b2 と bd-a1b2.1 の進捗を教えて",
        ["bd-a1b2", "bd-a1b2.1", "進捗"],
        ["bd", "a1b2", "教え", "教えて"],
    ),
    ("retry_count を 3 から 5 に変えた", ["retry_count"], ["3", "5", "から", "変え"]),
    ("getUserById が null を返す", ["getUserById", "null"], ["get", "返す"]),
    (
        "PaymentClient のリトライ設定を見直したい",
        ["PaymentClient", "リトライ", "設定"],
        ["トライ", "見直し"],
    ),
    ("os.path.join が Windows で壊れる", ["os.path.join", "windows"], ["join", "path"]),
    (
        "internal/payment/client.go のタイムアウト",
        ["internal/payment/client.go", "client.go", "タイムアウト"],
        ["internal", "payment", "go"],
    ),
    (
        "v1.2.3 から 2.0.0-rc.1 にアップグレードした",
        ["v1.2.3", "2.0.0-rc.1", "アップグレード"],
        ["1", "2", "3", "rc", "v1"],
    ),
    ("`kubectl rollout restart` を実行した", ["kubectl rollout restart", "実行"], []),
    (
        "https://github.com/acme/shop/pull/42 のレビューで指摘された",
        ["https://github.com/acme/shop/pull/42", "レビュー", "指摘"],
        ["github", "https", "42"],
    ),
    ("決済 タイムアウト 在庫同期", ["決済", "タイムアウト", "在庫同期"], []),
    ("ＡＰＩ のレスポンスが遅い", ["API", "レスポンス"], ["ＡＰＩ", "遅い"]),
    ("PROJ-123の決済", ["PROJ-123", "決済"], ["PROJ", "123", "PROJ-123の"]),
    (
        "本番環境の在庫同期バッチが落ちた",
        ["本番環境", "本番", "環境", "在庫", "同期", "バッチ"],
        ["落ち"],
    ),
    (
        "Let's fix the flaky test in payment_service_test.py please",
        ["flaky", "test", "payment_service_test.py"],
        ["let's", "fix", "the", "please", "in"],
    ),
    ("ThisIsPascal と XMLHttpRequest の違いを調べた", ["ThisIsPascal", "XMLHttpRequest"], []),
    ("README.md と docs/index.md を更新した", ["README.md", "docs/index.md", "更新"], ["docs"]),
    (
        "ユーザー認証トークンの有効期限が切れる",
        ["ユーザー認証トークン", "認証", "トークン", "期限"],
        ["切れる"],
    ),
    (
        "docker-compose.yml の volumes を消した",
        ["docker-compose.yml", "volumes"],
        ["docker", "compose.yml"],
    ),
    ("_private_func と __dunder__ を rename した", ["_private_func", "__dunder__", "rename"], []),
    ("node_modules を消して npm install し直す", ["node_modules", "npm", "install"], []),
    ("これはバグですか？それとも仕様ですか？", ["バグ", "仕様"], ["これ", "それ", "です"]),
    ("feature/CPN-90 ブランチで再現する", ["CPN-90", "ブランチ", "再現"], ["CPN", "90"]),
    ("`x` と `y` の状態を管理する", ["状態", "管理"], ["x", "y"]),
    (
        "Error: ECONNREFUSED 127.0.0.1:5432 でDB接続失敗",
        ["ECONNREFUSED", "127.0.0.1", "5432", "DB", "接続", "失敗"],
        ["127"],
    ),
    # `Go` inside an English sentence is the language; at a sentence's start, the verb.
    ("did a newer Go release change that?", ["newer", "go", "release"], []),
    ("in Go, how do I read the caller", ["go", "caller"], []),
    ("Go to the settings page", ["settings", "page"], ["go", "Go"]),
    ("OK, Go on with the export", ["export"], ["go", "Go"]),
    # A possessive is its noun, as the notes write it.
    ("the card processor's endpoint timed out", ["card", "processor", "endpoint"], ["processor's"]),
    (
        "the Worker's queue and Redis's memory",
        ["worker", "queue", "redis"],
        ["worker's", "redis's"],
    ),
    # What the prompt calls the memory itself names no topic: every note titled "…メモ" would
    # match it. The word it hides in stays whole.
    ("メモリが足りなくて落ちる件のメモ", ["メモリ"], ["メモ"]),
    ("Did we ever finish the memo about webhook retries?", ["webhook"], ["finish", "memo"]),
    ("the finished memos of the export job", ["export"], ["finished", "memos"]),
]


def _case_id(index: int, prompt: str) -> str:
    ascii_words = re.findall(r"[A-Za-z0-9_.-]{2,}", prompt)
    return f"{index:02d}-{ascii_words[0] if ascii_words else 'ja'}"


@pytest.mark.parametrize(
    ("prompt", "expected", "forbidden"), CASES, ids=[_case_id(i, c[0]) for i, c in enumerate(CASES)]
)
def test_prompt_keywords(
    analyzer: Analyzer, shipped: set[str], prompt: str, expected: list[str], forbidden: list[str]
) -> None:
    got = texts(prompt, analyzer, shipped)
    missing = [e for e in expected if e not in got]
    assert not missing, f"{analyzer.name}: {missing} missing from {got}"
    positions = [got.index(e) for e in expected]
    assert positions == sorted(positions), f"{analyzer.name}: not in order of appearance: {got}"
    leaked = [f for f in forbidden if f in got]
    assert not leaked, f"{analyzer.name}: {leaked} should not be keywords: {got}"
    assert not PARTICLES & set(got)
    assert all(k and k == k.strip() and not SINGLE_KANA.match(k) for k in got), got


def test_function_words_alone_give_nothing(analyzer: Analyzer, shipped: set[str]) -> None:
    # Pronouns, particles, auxiliaries, numerals and a counter: nothing worth searching.
    assert texts("私はそれを3つ直しました", analyzer, shipped) == []
    assert texts("please fix it and then check the file", analyzer, shipped) == []


def test_identifiers_are_never_split(analyzer: Analyzer, shipped: set[str]) -> None:
    prompt = (
        "PAY-1234とINV-88とbd-a1b2.1とretry_countとgetUserByIdとos.path.joinと"
        "internal/payment/client.goとv1.2.3の件"
    )
    got = texts(prompt, analyzer, shipped)
    whole = [
        "PAY-1234",
        "INV-88",
        "bd-a1b2.1",
        "retry_count",
        "getUserById",
        "os.path.join",
        "internal/payment/client.go",
        "v1.2.3",
    ]
    assert [w for w in whole if w not in got] == [], got
    # No fragment of an identifier leaks out as a token of its own.
    assert not {"PAY", "1234", "INV", "88", "a1b2", "os", "internal", "go", "v1"} & set(got)


@pytest.mark.parametrize("prompt", ["go test ./... が落ちる", "cd ../.. して make", "ls ./ と ../"])
def test_a_path_of_dots_and_slashes_names_no_file(
    analyzer: Analyzer, shipped: set[str], prompt: str
) -> None:
    # `./...` is every Go module's package pattern: it found "the" memory that happened to
    # write it. A path keyword needs a name in it.
    got = texts(prompt, analyzer, shipped)
    assert not [k for k in got if not any(c.isalnum() for c in k)], got
    assert "./scripts/run.sh" in texts("./scripts/run.sh が落ちる", analyzer, shipped)


def test_no_duplicates_case_insensitive(analyzer: Analyzer, shipped: set[str]) -> None:
    got = texts("API の api と Api、決済の決済、PAY-1234 と PAY-1234", analyzer, shipped)
    assert got.count("API") == 1 and "api" not in got and "Api" not in got
    assert got.count("決済") == 1 and got.count("PAY-1234") == 1
    assert len({k.casefold() for k in got}) == len(got)


def test_order_of_first_appearance(analyzer: Analyzer, shipped: set[str]) -> None:
    got = texts("タイムアウト PAY-1234 決済 retry_count レビュー", analyzer, shipped)
    assert got == ["タイムアウト", "PAY-1234", "決済", "retry_count", "retry", "count", "レビュー"]


def test_nfkc_full_width_and_half_width(analyzer: Analyzer, shipped: set[str]) -> None:
    got = texts("ＰＡＹ－１２３４ のﾀｲﾑｱｳﾄとＡＰＩ", analyzer, shipped)
    assert got == ["PAY-1234", "タイムアウト", "API"]


def test_shipped_stopwords_removed(analyzer: Analyzer, shipped: set[str]) -> None:
    got = texts("処理 ファイル 問題 please fix the file 決済", analyzer, shipped)
    assert got == ["決済"]
    # Without the stoplist the same words do come out: the test above is not vacuous.
    assert {"処理", "ファイル", "please"} <= set(
        texts("処理 ファイル please 決済", analyzer, set())
    )


@pytest.mark.parametrize(
    "prompt",
    [
        "what did we decide yesterday about the webhook retries",
        "the webhook retries we changed recently",
        "which webhook retries did we touch this week, or last month",
        "webhook retries came up a few times earlier this year",
    ],
)
def test_english_words_of_when_are_no_keywords(
    analyzer: Analyzer, shipped: set[str], prompt: str
) -> None:
    # 昨日, 先週 and 最近 never become keywords of a Japanese prompt; their English neither.
    got = texts(prompt, analyzer, shipped)
    assert got[:2] == ["webhook", "retries"], got
    when = {"yesterday", "recently", "week", "month", "times", "earlier", "year"}
    assert not when & set(got), got


def test_user_stopwords_file_applies(
    analyzer: Analyzer, isolated_home: Path, shipped: set[str]
) -> None:
    prompt = "決済 timeout 在庫同期 ＡＰＩ"
    before = texts(prompt, analyzer, effective_stopwords(load_settings()))
    assert {"決済", "timeout", "API"} <= set(before)
    (isolated_home / "stopwords.txt").write_text(
        "# team noise\n決済\nTimeout   # case does not matter\nＡＰＩ\n", encoding="utf-8"
    )
    after = texts(prompt, analyzer, effective_stopwords(load_settings()))
    assert "決済" not in after and "timeout" not in after and "API" not in after
    assert "在庫同期" in after


def test_identifier_kinds_in_json_shape(analyzer: Analyzer, shipped: set[str]) -> None:
    keywords = extract("PAY-1234 の決済 retry_count", analyzer, shipped)
    by_text = {k.text: k for k in keywords}
    assert by_text["PAY-1234"].as_dict() == {
        "text": "PAY-1234",
        "kind": "identifier",
        "subkind": "ticket",
        "backend": analyzer.name,
    }
    assert by_text["retry_count"].kind == "identifier"
    assert by_text["決済"].kind in {"noun", "proper_noun", "compound", "external"}


def test_names_of_standards_are_not_tickets(analyzer: Analyzer, shipped: set[str]) -> None:
    # A ticket id may make recall speak on its own; UTF-8 is in every other memory.
    keywords = extract("UTF-8 と SHA-256 と ISO-8601、PAY-1234 と OPS-4", analyzer, shipped)
    kinds = {k.text: k.subkind for k in keywords}
    assert {kinds["UTF-8"], kinds["SHA-256"], kinds["ISO-8601"]} == {"alnum"}
    assert kinds["PAY-1234"] == kinds["OPS-4"] == "ticket"


def test_limit_keeps_the_first_keywords(analyzer: Analyzer, shipped: set[str]) -> None:
    full = texts("PAY-1234 の決済タイムアウト、在庫同期 retry_count", analyzer, shipped)
    assert [
        k.text
        for k in extract(
            "PAY-1234 の決済タイムアウト、在庫同期 retry_count", analyzer, shipped, limit=3
        )
    ] == full[:3]


@pytest.mark.parametrize("name", ["sudachi", "mecab"])
@pytest.mark.parametrize(
    ("prompt", "kept", "dropped"),
    [
        ("一覧を10件表示にしたい", "表示", "件表示"),
        ("毎月31日指定のタスクが飛ぶ", "指定", "日指定"),
        ("3回目のリトライで落ちる", "リトライ", "回目"),
    ],
)
def test_a_counter_after_its_number_heads_no_compound(
    name: str, shipped: set[str], prompt: str, kept: str, dropped: str
) -> None:
    analyzer, _ = resolve(name)
    got = texts(prompt, analyzer, shipped)
    assert kept in got and dropped not in got, got


@pytest.mark.parametrize("name", ["sudachi", "mecab"])
def test_analysers_find_hiragana_nouns(name: str, shipped: set[str]) -> None:
    # The regex backend cannot see nouns spelt with hiragana; the dictionaries can.
    got = texts("しきい値の設定ミスで取り込み処理が遅い", resolve(name)[0], shipped)
    assert "しきい値" in got and "取り込み" in got, got


def test_command_backend_output_is_cleaned(tmp_path: Path, shipped: set[str]) -> None:
    # A careless external analyser: blank lines, particles, numerals, duplicates, stopwords.
    noisy = _write_script(
        tmp_path,
        "noisy.py",
        "import sys\nsys.stdin.read()\n"
        "print('の\\n\\n決済\\n 3 \\nは\\n決済\\n処理\\nタイムアウト\\n')\n",
    )
    analyzer, _ = resolve(noisy)
    assert texts("PAY-1234 の決済処理のタイムアウト", analyzer, shipped) == [
        "PAY-1234",
        "決済",
        "タイムアウト",
    ]


def test_command_backend_failure_is_a_memrecall_error(tmp_path: Path, shipped: set[str]) -> None:
    from memrecall.errors import BackendUnavailable

    failing = _write_script(tmp_path, "fail.py", "import sys\nsys.exit('analyser broke')\n")
    analyzer, _ = resolve(failing)
    with pytest.raises(BackendUnavailable, match="analyser broke"):
        extract("決済のタイムアウト", analyzer, shipped)


# --- real Japanese text ---------------------------------------------------------------------

_IDENT = re.compile(
    r"(?<![A-Za-z0-9_.\-/])"
    r"(?:[a-z]+(?:[A-Z][a-z0-9]+)+|[a-z0-9]+(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]+-\d+)"
    r"(?![A-Za-z0-9_\-/])"
)


def _corpus_lines(root: Path, limit: int) -> list[str]:
    lines: list[str] = []
    for path in sorted(root.rglob("*.md")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if HAS_JAPANESE.search(line) and 10 <= len(line) <= 400:
                lines.append(line)
    # Every n-th line, so the sample spans all files, not just the first few.
    step = max(1, len(lines) // limit)
    return lines[::step][:limit]


@pytest.mark.corpus
@pytest.mark.parametrize("folder", ["vue-docs-ja/src", "obsidian-ja-ikorihn/content"])
def test_real_japanese_text(
    corpus: Path, analyzer: Analyzer, shipped: set[str], folder: str
) -> None:
    root = corpus / folder
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    limit = 60 if analyzer.name.startswith("command:") else 400
    lines = _corpus_lines(root, limit)
    assert len(lines) >= limit // 2
    with_japanese_keyword = 0
    for line in lines:
        got = texts(line, analyzer, shipped)
        assert all(k for k in got), (line, got)
        assert all(k == k.strip() for k in got), (line, got)
        assert not PARTICLES & set(got), (line, got)
        assert not [k for k in got if SINGLE_KANA.match(k)], (line, got)
        assert len({k.casefold() for k in got}) == len(got), (line, got)
        with_japanese_keyword += any(HAS_JAPANESE.search(k) for k in got)
    # Sane output is not empty output: most Japanese lines yield a Japanese noun.
    assert with_japanese_keyword >= 0.8 * len(lines)


@pytest.mark.corpus
@pytest.mark.parametrize("folder", ["vue-docs-ja/src", "obsidian-ja-ikorihn/content"])
def test_real_text_identifiers_survive_whole(
    corpus: Path, analyzer: Analyzer, shipped: set[str], folder: str
) -> None:
    root = corpus / folder
    if not root.is_dir():
        pytest.skip(f"{root} is absent")
    lines = [line for line in _corpus_lines(root, 5000) if _IDENT.search(line)]
    lines = lines[:: max(1, len(lines) // (20 if analyzer.name.startswith("command:") else 150))]
    assert len(lines) >= 10
    broken = []
    for line in lines:
        got = [k.casefold() for k in texts(line, analyzer, shipped)]
        for ident in _IDENT.findall(line):
            # Whole, possibly inside a longer keyword (a path, a code span); dedupe is by case.
            if not any(ident.casefold() in k for k in got):
                broken.append((ident, line[:80]))
    assert broken == []


def test_a_two_letter_name_beside_japanese_is_a_keyword(
    analyzer: Analyzer, shipped: set[str]
) -> None:
    # `go` is a stopword (the verb) and two letters are prose, but `Go の`/`はGoで` is the language.
    assert "go" in texts("Go のサービスが CPU を食う", analyzer, shipped)
    assert "go" in texts("これはGoで書いた", analyzer, shipped)
    assert "go" not in texts("Go to the page and reload it", analyzer, shipped)
    assert "go" not in texts("テストを go run で回す", analyzer, shipped)


@pytest.mark.parametrize(
    "hyphen", ["\u2010", "\u2011", "\u2013", "\u2014", "\u2212", "\u30fc", "\uff0d", "\uff70"]
)
def test_an_id_typed_with_another_hyphen_is_the_same_id(
    analyzer: Analyzer, shipped: set[str], hyphen: str
) -> None:
    # An input method or a word processor turns `-` into a look-alike: the id is still one.
    got = texts(f"PAY{hyphen}1234 と bd{hyphen}a1b2 の件", analyzer, shipped)
    assert "PAY-1234" in got and "bd-a1b2" in got, got
    # Between Japanese letters the long-vowel mark stays a letter.
    assert "コーヒー" in texts("コーヒーの件", analyzer, shipped)
