"""Recall quality (issue 12), as a user notices it: the right memory for an id, silence on
everyday coding requests, the lines worth quoting, originals before their copies.

Every store is tiny and written here. Search and recall behaviour that is meant to hold for
both engines runs twice: once answered by ripgrep (no index built) and once by the index.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from memrecall.config import load_settings
from memrecall.recall import HookInput, RecallResult, recall
from memrecall.search import SearchOutcome, search
from memrecall.tokenize import tokenize_text

NOW = "2026-12-02T09:00:00+09:00"
ENGINES = ("rg", "index")


# --- tiny stores ---------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _export(path: Path, issues: list[dict[str, Any]]) -> Path:
    return _write(path, "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in issues))


def _summary(root: Path, day: str, sid: str, front: str, body: str) -> Path:
    return _write(
        root / day[:4] / day[5:7] / f"{day}-{sid}.md",
        f"---\ndate: {day}T10:00:00+09:00\nsession_id: {sid}-0000-4000-8000-000000000000\n"
        f"project: shop\ngit_branch: main\n{front}---\n{body}",
    )


def _daily(vault: Path, count: int = 12) -> None:
    """Background notes, so that how rare a keyword is means something."""
    for n in range(count):
        _write(
            vault / "daily" / f"{n:02d}.md",
            f"# Daily {n}\nレビューと会議。\nStandup, nothing else.\n",
        )


def _point(monkeypatch: pytest.MonkeyPatch, **stores: Path) -> None:
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    names = {
        "obsidian": "MEMRECALL_OBSIDIAN",
        "beads": "MEMRECALL_BEADS",
        "summaries": "MEMRECALL_SUMMARIES",
    }
    for name, path in stores.items():
        monkeypatch.setenv(names[name], str(path))
    if "summaries" not in stores:
        # Never the user's real summaries folder.
        monkeypatch.setenv(
            "MEMRECALL_SUMMARIES", str(Path(os.environ["MEMRECALL_HOME"]) / "no-summaries")
        )


def _engine(engine: str) -> None:
    """`index`: build the index now (the search must then answer from it); `rg`: no index,
    so ripgrep answers (MEMRECALL_INDEX=manual never starts a build behind the test's back)."""
    if engine == "index":
        from memrecall.index import refresh

        refresh(load_settings())


def _search(query: str, engine: str, limit: int = 10) -> SearchOutcome:
    settings = load_settings()
    keywords, _ = tokenize_text(query, settings.tokenizer, settings)
    assert keywords, f"no keywords in {query!r}"
    outcome = search(keywords, settings, limit=limit)
    assert outcome.engine == engine, outcome.fallback
    return outcome


def _refs(query: str, engine: str, limit: int = 10) -> list[str]:
    return [h.ref for h in _search(query, engine, limit).hits]


def _recall(prompt: str, session: str) -> RecallResult:
    return recall(
        HookInput(session_id=session, prompt=prompt),
        load_settings(),
        deadline=time.monotonic() + 30,
    )


def _injected(result: RecallResult) -> list[str]:
    return [item["ref"] for item in result.log.get("injected", [])]


def _keywords(text: str) -> list[tuple[str, str]]:
    settings = load_settings()
    keywords, _ = tokenize_text(text, settings.tokenizer, settings)
    return [(k.text, k.subkind) for k in keywords]


def _quoted(context: str) -> list[str]:
    """The stored lines an injected context quotes (`    > …`)."""
    return [line.strip()[2:] for line in context.splitlines() if line.strip().startswith("> ")]


# --- 1. beads ids in every shape -----------------------------------------------------------

TARGETS = {
    "bd-1": "Login page crashes on an empty password",
    "bd-12": "Cart badge shows a stale count",
    "bd-kpy": "Search results ignore the locale",
    "bd-0134cc5a": "Nightly export job times out",
    "bd-2b34": "Refund workflow",
    "bd-2b34.1": "Refund email template",
}
SHOP_TARGETS = {"shop-a1": "在庫引当の上限", "shop-x9z": "Gift wrapping option"}
# The bulk of an export from before the project switched its prefix to `shop`: the new ids
# sit past the head memrecall samples, so only `.beads/config.yaml` tells that `shop` is one.
PADDING_BYTES = 80 * 1024


def _noise(ids: list[str]) -> str:
    return " ".join(f"See {i}; {i} again; blocked by {i}." for i in ids)


@pytest.fixture
def beads_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "shop"
    old_ids = list(TARGETS)
    issues: list[dict[str, Any]] = [
        {
            "id": ref,
            "title": title,
            "status": "open",
            "priority": 2,
            "description": f"What {title.lower()} means for the customer.",
            "updated_at": "2026-11-01T10:00:00Z",
        }
        for ref, title in TARGETS.items()
    ]
    # Issues that mention every id far more often than the issue itself does, titles included.
    issues += [
        {
            "id": f"bd-9e0{n}",
            "title": f"Follow-up of {' '.join(old_ids)}",
            "status": "open",
            "priority": 1,
            "description": _noise([i for i in old_ids if i != "bd-12"]) * 2,
            "updated_at": "2026-11-20T10:00:00Z",
        }
        for n in range(1, 5)
    ]
    n = 0
    while sum(len(json.dumps(i)) for i in issues) < PADDING_BYTES:
        n += 1
        issues.append(
            {
                "id": f"bd-f{n:03d}",
                "title": f"Chore number {n}",
                "status": "closed",
                "priority": 4,
                "description": "Routine maintenance of the storefront. " * 6,
                "updated_at": "2026-06-01T10:00:00Z",
            }
        )
    issues += [
        {
            "id": ref,
            "title": title,
            "status": "open",
            "priority": 2,
            "description": f"{title} の仕様を決める。",
            "updated_at": "2026-11-25T10:00:00Z",
        }
        for ref, title in SHOP_TARGETS.items()
    ]
    issues += [
        {
            "id": f"shop-n{n}",
            "title": f"Follow-up of {' '.join(SHOP_TARGETS)}",
            "status": "open",
            "priority": 1,
            "description": _noise(list(SHOP_TARGETS)) * 2,
            "updated_at": "2026-11-26T10:00:00Z",
        }
        for n in range(1, 5)
    ]
    _export(project / ".beads" / "issues.jsonl", issues)
    _write(project / ".beads" / "config.yaml", 'issue-prefix: "shop"\n')
    _point(monkeypatch, beads=project)
    return project


ID_PROMPTS = [
    ("bd-1 の状況を教えて", "bd-1"),
    ("what is the status of bd-12?", "bd-12"),
    ("bd-kpy を進めたい", "bd-kpy"),
    ("BD-KPY is blocking the release", "bd-kpy"),
    ("bd-kpyの件", "bd-kpy"),
    ("ｂｄ－ｋｐｙ を見て", "bd-kpy"),  # typed with the IME in full width
    ("bd-0134cc5a はもう直った？", "bd-0134cc5a"),
    ("let's pick up bd-2b34.1 today", "bd-2b34.1"),
    ("bd-2b34 の子タスクは全部終わった？", "bd-2b34"),
    ("shop-a1 の仕様を確認したい", "shop-a1"),
    ("who owns shop-x9z?", "shop-x9z"),
]


def test_every_id_shape_is_a_beads_keyword(beads_project: Path) -> None:
    for prompt, ref in ID_PROMPTS:
        assert (ref, "beads") in _keywords(prompt), prompt


def test_the_prefix_from_config_yaml_is_what_makes_shop_ids_ids(beads_project: Path) -> None:
    from memrecall.stores.beads import id_prefixes

    assert id_prefixes([beads_project]) == {"bd", "shop"}
    (beads_project / ".beads" / "config.yaml").unlink()
    # Without the setting, `shop-a1` is past the sampled head of the export: not an id.
    assert ("shop-a1", "beads") not in _keywords("shop-a1 の仕様を確認したい")


def test_hyphenated_words_stay_words(beads_project: Path) -> None:
    keywords = _keywords("utf-8 で e-mail の well-known パスを読む、bd-kpy も")
    assert [text for text, kind in keywords if kind == "beads"] == ["bd-kpy"], keywords
    words = {text for text, kind in keywords if kind == "word"}
    assert {"utf", "mail"} <= words, keywords
    # A hyphenated pair of words is one compound keyword, its words its pieces; never an id.
    assert ("well-known", "compound") in keywords and ("known", "part") in keywords, keywords


@pytest.mark.parametrize(
    ("prompt", "ids"),
    [
        # beads writes a wisp's, a molecule's and an ephemeral issue's kind into its id.
        ("bd-mol-wba の件どうなった？", ["bd-mol-wba"]),
        ("`bd close bd-wisp-046b8` says not found", ["bd-wisp-046b8"]),
        ("BD-EPH-9Q2 is still open", ["bd-eph-9q2"]),
        ("shop-mol-x1.2 を閉じたい", ["shop-mol-x1.2"]),
        # Any other tail is not the id's: a branch named after an issue names the issue.
        ("bd-123-fix-login ブランチを見て", ["bd-123"]),
        ("checked out bd-kpy-hotfix yesterday", ["bd-kpy"]),
    ],
)
def test_an_id_is_taken_whole_with_its_kind_and_never_with_a_branch_tail(
    beads_project: Path, prompt: str, ids: list[str]
) -> None:
    keywords = _keywords(prompt)
    assert [text for text, kind in keywords if kind == "beads"] == ids, keywords
    # `bd-mol` alone would match every molecule any issue mentions.
    assert ("bd-mol", "beads") not in keywords and ("bd-wisp", "beads") not in keywords


@pytest.mark.parametrize(
    ("prompt", "command", "ids"),
    [
        (
            "`bd list --filter-parent bd-mol-wba` で unknown flag",
            "bd list --filter-parent",
            ["bd-mol-wba"],
        ),
        ("`bd show bd-12 --json` prints nothing", "bd show --json", ["bd-12"]),
        ("`bd dep add bd-1 bd-2b34.1` が失敗する", "bd dep add", ["bd-1", "bd-2b34.1"]),
        ("`bd close bd-kpy` がエラー", "bd close", ["bd-kpy"]),
    ],
)
def test_a_pasted_command_keeps_its_words_around_the_ids_in_it(
    beads_project: Path, prompt: str, command: str, ids: list[str]
) -> None:
    """The ids are keywords of their own; the command is what is left, never a run of
    blanks where they were."""
    keywords = _keywords(prompt)
    assert (command, "code") in keywords, keywords
    assert [text for text, kind in keywords if kind == "beads"] == ids, keywords
    assert not any("\u3000" in text for text, _ in keywords), keywords


@pytest.mark.parametrize("engine", ENGINES)
def test_an_issue_named_by_its_id_ranks_first(beads_project: Path, engine: str) -> None:
    _engine(engine)
    for prompt, ref in ID_PROMPTS:
        hits = _search(prompt, engine).hits
        assert hits, prompt
        assert hits[0].ref == ref and hits[0].exact_id, (prompt, [h.ref for h in hits])
        # The issues that mention it are still found, behind it.
        assert len(hits) > 1, prompt
        assert [h.ref for h in hits if h.exact_id] == [ref], prompt


@pytest.mark.parametrize("engine", ENGINES)
def test_bd_1_never_finds_bd_12(beads_project: Path, engine: str) -> None:
    _engine(engine)
    refs = _refs("bd-1 の状況を教えて", engine)
    assert refs[0] == "bd-1"
    assert "bd-12" not in refs


@pytest.mark.parametrize("engine", ENGINES)
def test_a_prompt_naming_an_issue_injects_that_issue(beads_project: Path, engine: str) -> None:
    _engine(engine)
    result = _recall("bd-kpyの件、どうなった？", f"ids-{engine}")
    assert _injected(result)[:1] == ["bd-kpy"], result.log
    assert "names bd-kpy" in result.log["reason"]


# --- 2. whole-token ticket ids -------------------------------------------------------------


@pytest.fixture
def tickets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    _write(
        vault / "notes" / "決済タイムアウト.md",
        "# 決済タイムアウト\nPAY-1234: 決済 API が 10 秒でタイムアウトする。\n",
    )
    _write(
        vault / "notes" / "retry budget.md",
        "# Retry budget\nPAY-1234 and PAY-1299 share one retry budget.\n",
    )
    _write(
        vault / "notes" / "締め日.md", "# 請求書の締め日\nPAY-12 で請求書の締め日を月末に変えた。\n"
    )
    _daily(vault)
    _point(monkeypatch, obsidian=vault)
    return vault


@pytest.mark.parametrize("engine", ENGINES)
def test_a_ticket_id_never_matches_a_longer_one(tickets: Path, engine: str) -> None:
    _engine(engine)
    assert _refs("PAY-12", engine) == ["notes/締め日.md"]
    assert _refs("PAY-12 の締め日", engine)[0] == "notes/締め日.md"
    assert "notes/締め日.md" not in _refs("PAY-1234", engine)
    result = _recall("PAY-12 のタイムアウトを見直したい", f"pay-{engine}")
    assert not {"notes/決済タイムアウト.md", "notes/retry budget.md"} & set(_injected(result))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_forge_issue_ref_is_one_id_in_every_spelling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    project = tmp_path / "proj"
    _export(
        project / ".beads" / "issues.jsonl",
        [
            {"id": "bd-dvw8", "title": "Import drops labels (GH#523)", "status": "closed",
             "description": "Reported in GH#523.", "close_reason": "labels copied on import"},
            {"id": "bd-k2m4", "title": "Export order (GH#52)", "status": "open",
             "description": "See GH#5230 too."},
        ],
    )
    _point(monkeypatch, beads=project)
    _engine(engine)
    spellings = {
        "GH#523 ってどんな件だったっけ？": "GH#523",
        "what was gh#523 about?": "gh#523",
        "GH #523 again?": "GH#523",
    }
    for prompt, ref in spellings.items():
        assert (ref, "ticket") in _keywords(prompt)
        # Never GH#52 or GH#5230: the whole id, as for PAY-12.
        assert _refs(prompt, engine) == ["bd-dvw8"], prompt
    assert _injected(_recall("GH#523 ってどんな件だったっけ？", f"gh-{engine}")) == ["bd-dvw8"]


# --- 3 and 4. the gate: quiet on everyday requests, speaks for a memory ----------------------


@pytest.fixture
def everyday(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Notes full of everyday coding vocabulary, and two notes worth remembering."""
    vault = tmp_path / "vault"
    notes = {
        "テスト方針": "ユニットテストは pytest で書く。テストの設定は pyproject.toml に置く。\n"
        "テストではログを出さない。空のリストのテストも書く。",
        "ログ設定": "ログの設定は環境変数 LOG_LEVEL で切り替える。"
        "ログの出力先は標準出力で、詳細なログは debug のときだけ。",
        "環境変数の一覧": "設定は環境変数から読み込む。"
        "README に環境変数の説明とインストール手順を書いた。",
        "README の書き方": "README にはディレクトリ構成、"
        "インストール手順、設定ファイルの説明を書く。",
        "エラーハンドリング": "関数のエラーハンドリングは例外を投げて呼び出し側で警告を表示する。"
        "ハンドラーでログ出力する。",
        "Unit tests": "Every handler gets a unit test; the test config lives in conftest.py.\n"
        "Add a test for the empty list case when you touch a handler, "
        "and rename helpers with care.",
        "Error handler": "The error handler logs the request "
        "and returns a JSON error response with a warning.",
        "Config loading": "The config is read from environment variables first, "
        "then from the settings file.\n"
        "A missing config file prints a warning. The database settings live there too.",
        "Logging": "Make the log output verbose with the debug log level in the config.\n"
        "The request handler is async and logs every request.",
        "Repo layout": "The repo layout: src for code, tests for tests, "
        "docs for documentation folder.",
        "在庫同期の二重加算": "在庫同期バッチで SKU の在庫が二重に加算されていた。\n"
        "原因は sync_inventory_batch のリトライで、冪等キーを入れて直した。",
        "Kafka consumer lag": "We decided to scale the orders consumer to 6 partitions "
        "after the lag incident.",
        "PAY-1234 決済": "PAY-1234: 決済 API が 10 秒でタイムアウトするので 5 秒に縮めた。",
    }
    for title, body in notes.items():
        _write(vault / "notes" / f"{title}.md", f"# {title}\n{body}\n")
    _daily(vault)
    _point(monkeypatch, obsidian=vault)
    return vault


# Written for this test: ordinary requests about the code at hand that no note here answers.
GENERIC_JA = [
    "このリポジトリのディレクトリ構成を説明して",
    "環境変数から設定を読み込むようにして",
    "空のリストの場合のユニットテストを追加して",
    "ログの出力をもっと詳細にしたい",
    "READMEにインストール手順を追記してください",
    "この関数のエラーハンドリングを改善して",
    "設定ファイルが見つからないときは警告を表示して",
    "テストが失敗する原因を調べて",
    "ハンドラーにログ出力を追加して",
]
GENERIC_EN = [
    "give me a quick tour of this repo's folder layout",
    "load the database settings from environment variables instead of the yaml file",
    "add a unit test covering the empty list case",
    "make the log output more verbose when debugging",
    "add a config option for the log level",
    "write a handler that returns a JSON error response",
    "rename the helper function and update its tests",
    "print a warning when the config file is missing",
    "refactor the request handler to use async",
]
QUIET_REASONS = ("only everyday words", "too little specific evidence")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("language", ["ja", "en"])
def test_the_gate_stays_quiet_on_everyday_coding_requests(
    everyday: Path, engine: str, language: str
) -> None:
    _engine(engine)
    prompts = GENERIC_JA if language == "ja" else GENERIC_EN
    fired, unexplained = [], []
    for n, prompt in enumerate(prompts):
        result = _recall(prompt, f"generic-{language}-{engine}-{n}")
        log = result.log
        # Each request does meet notes (everyday words are everywhere): the gate decides.
        assert log.get("top"), (prompt, log.get("reason"))
        if result.context is not None or log["decision"] != "quiet":
            fired.append((prompt, _injected(result), log["reason"]))
        elif not log["reason"].startswith(QUIET_REASONS):
            unexplained.append((prompt, log["reason"]))
        for entry in log["top"]:
            assert entry["verdict"], (prompt, entry)
    assert fired == []
    assert unexplained == []


@pytest.mark.parametrize("engine", ENGINES)
def test_the_quiet_reason_names_the_everyday_words(everyday: Path, engine: str) -> None:
    _engine(engine)
    result = _recall("ハンドラーにログ出力を追加して", f"names-{engine}")
    assert result.context is None
    assert {"ハンドラー", "ログ"} <= set(result.log["generic"]), result.log
    assert result.log["reason"].startswith("only everyday words")
    assert "ログ" in result.log["reason"] or "ハンドラー" in result.log["reason"]


CUES = [
    ("前に在庫同期の二重加算を直したっけ？", "notes/在庫同期の二重加算.md"),
    ("what did we decide about the kafka consumer lag?", "notes/Kafka consumer lag.md"),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("prompt", "ref"), CUES)
def test_the_gate_fires_on_a_memory_cue(everyday: Path, engine: str, prompt: str, ref: str) -> None:
    _engine(engine)
    result = _recall(prompt, f"cue-{engine}")
    assert result.log["shape"] == "cue"
    assert _injected(result)[:1] == [ref], result.log["reason"]
    assert result.context is not None and Path(ref).stem in result.context


@pytest.mark.parametrize("engine", ENGINES)
def test_the_gate_fires_on_a_distinctive_id(everyday: Path, engine: str) -> None:
    _engine(engine)
    result = _recall("PAY-1234 のタイムアウトを3秒にしてほしい", f"id-{engine}")
    assert result.log["shape"] == "code"
    assert _injected(result) == ["notes/PAY-1234 決済.md"], result.log["reason"]
    assert "distinctive PAY-1234" in result.log["reason"]


@pytest.mark.parametrize(
    ("prompt", "shape"),
    [
        ("前に在庫同期の二重加算を直したっけ？", "cue"),
        ("did we ever settle the retry budget for payments", "cue"),
        ("在庫同期の件どうなった", "cue"),
        ("この関数のエラーハンドリングを改善して", "code"),
        ("add a unit test covering the empty list case", "code"),
        ("refactor this file into two modules", "code"),
        ("在庫同期の二重加算の原因は何", "plain"),
        ("how does the kafka consumer handle rebalancing", "plain"),
    ],
)
def test_the_prompt_shape_is_logged(everyday: Path, prompt: str, shape: str) -> None:
    result = _recall(prompt, "shape")
    assert result.log["shape"] == shape, result.log


@pytest.mark.parametrize("engine", ENGINES)
def test_a_users_own_everyday_word_stops_counting(
    everyday: Path, isolated_home: Path, engine: str
) -> None:
    _engine(engine)
    prompt = "kafka consumer lag って前に話したっけ"
    before = _recall(prompt, f"own-before-{engine}")
    assert _injected(before) == ["notes/Kafka consumer lag.md"], before.log["reason"]
    # This team says "kafka", "consumer" and "lag" all day: they are everyday words here.
    (isolated_home / "generic.txt").write_text("# ours\nKafka\nconsumer\nlag\n", encoding="utf-8")
    result = _recall(prompt, f"own-after-{engine}")
    assert result.context is None
    assert {"kafka", "consumer", "lag"} <= set(result.log["generic"])
    assert result.log["reason"].startswith("only everyday words"), result.log["reason"]
    assert "kafka" in result.log["reason"]


# --- 5. snippet lines ------------------------------------------------------------------------

DECISION = (
    "We decided that coupon stacking is allowed once per order, because refunds broke otherwise."
)
POOR_LINES = (
    "summary: coupon stacking rules in the frontmatter",
    "Coupon stacking",
    "https://wiki.example.com/coupon-stacking",
    "[[coupon stacking]] [[footer]]",
)


@pytest.fixture
def snippet_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    _write(
        vault / "notes" / "coupon-stacking.md",
        "---\ntitle: Coupon stacking\nsummary: coupon stacking rules in the frontmatter\n"
        "tags: [pricing]\n---\n"
        "# Coupon stacking\n"
        "Coupon stacking\n"
        "https://wiki.example.com/coupon-stacking\n"
        "Background: marketing asked for it in spring.\n"
        f"{DECISION}\n"
        "\n"
        "[[coupon stacking]] [[footer]]\n",
    )
    _daily(vault)
    _point(monkeypatch, obsidian=vault)
    return vault


@pytest.mark.parametrize("engine", ENGINES)
def test_snippets_quote_the_decision_not_frontmatter_footers_urls_or_the_title(
    snippet_note: Path, engine: str
) -> None:
    _engine(engine)
    hits = _search("前に coupon stacking をどう決めたっけ", engine).hits
    assert hits and hits[0].ref == "notes/coupon-stacking.md"
    quoted = [text for _, text in hits[0].lines]
    assert any("once per order" in text for text in quoted), quoted
    assert not [t for t in quoted if t.strip() in POOR_LINES], quoted
    assert "once per order" in hits[0].snippet

    result = _recall("前に coupon stacking をどう決めたっけ", f"snippet-{engine}")
    assert result.context is not None, result.log["reason"]
    shown = _quoted(result.context)
    assert any("once per order" in line for line in shown), result.context
    assert not [line for line in shown if line.strip() in POOR_LINES], result.context


# --- 6. a closed issue says why it was closed ----------------------------------------------

CLOSE_REASON = "Fixed by capping retries at 3 in the payment client; verified on staging."


@pytest.fixture
def closed_issue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project = tmp_path / "pay"
    issues = [
        {
            "id": "bd-c10s",
            "title": "決済リトライが無限に続く",
            "status": "closed",
            "priority": 1,
            "description": "決済クライアントのリトライ上限がなく、障害時に無限にリトライしていた。",
            "close_reason": CLOSE_REASON,
            "updated_at": "2026-11-10T10:00:00Z",
        },
        {
            "id": "bd-0pen",
            "title": "Refund report is slow",
            "status": "open",
            "priority": 2,
            "description": "The monthly refund report takes minutes.",
            "close_reason": "should never show",
            "updated_at": "2026-11-11T10:00:00Z",
        },
    ]
    _export(project / ".beads" / "issues.jsonl", issues)
    _point(monkeypatch, beads=project)
    return project


@pytest.mark.parametrize("engine", ENGINES)
def test_a_closed_issue_is_shown_with_its_close_reason(closed_issue: Path, engine: str) -> None:
    _engine(engine)
    result = _recall("bd-c10s って結局どうなった？", f"closed-{engine}")
    assert result.context is not None, result.log["reason"]
    closed = [
        line.strip() for line in result.context.splitlines() if line.strip().startswith("closed:")
    ]
    assert closed and "capping retries at 3" in closed[0], result.context
    assert "決済リトライが無限に続く (bd-c10s, closed, P1)" in result.context  # the hit's head line

    # An open issue never shows a stale close reason.
    other = _recall("bd-0pen の refund report はまだ遅い？", f"open-{engine}")
    assert other.context is not None
    assert "closed:" not in other.context and "should never show" not in other.context


@pytest.mark.parametrize("engine", ENGINES)
def test_an_issue_named_by_its_id_quotes_its_description_not_its_title_again(
    closed_issue: Path, engine: str
) -> None:
    _engine(engine)
    hit = _search("bd-c10s って結局どうなった？", engine).hits[0]
    assert hit.ref == "bd-c10s"
    assert [text for _, text in hit.lines if "リトライ上限" in text], hit.lines
    result = _recall("bd-c10s って結局どうなった？", f"quote-{engine}")
    assert result.context is not None
    assert not [
        line for line in _quoted(result.context) if line.endswith("決済リトライが無限に続く")
    ], result.context


@pytest.mark.parametrize("engine", ENGINES)
def test_search_json_carries_the_close_reason(closed_issue: Path, engine: str) -> None:
    _engine(engine)
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "search", "bd-c10s", "--json"],
        capture_output=True,
        timeout=120,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    hits = json.loads(done.stdout)
    assert hits[0]["ref"] == "bd-c10s"
    assert hits[0]["status"] == "closed"
    assert hits[0]["close_reason"] == CLOSE_REASON


# --- 7. originals over copies -------------------------------------------------------------

ORIGINAL = "在庫同期は 15 分ごと、SKU 単位で差分だけ送る。二重加算を避けるため冪等キーを付ける。\n"


@pytest.fixture
def original_and_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    vault = tmp_path / "vault"
    _write(vault / "notes" / "x.md", f"---\ntags: [inventory]\n---\n# 在庫同期の方針\n{ORIGINAL}")
    _write(vault / "notes" / "warehouse.md", "# 倉庫\n在庫の棚卸しは月末。\n")
    _daily(vault)
    summaries = tmp_path / "summaries"
    _point(monkeypatch, obsidian=vault, summaries=summaries)
    return {"vault": vault, "summaries": summaries}


def _copy(summaries: Path, recalled: bool) -> Path:
    front = "title: 在庫同期の冪等キーと二重加算\ntags: [在庫同期, 冪等キー, 二重加算]\n"
    if recalled:
        front += "recalled: [obsidian:notes/x.md]\n"
    # A second-hand copy that says it all more often, and in its title and tags.
    return _summary(
        summaries,
        "2026-11-30",
        "c0ffee01",
        front,
        f"## 在庫同期の冪等キーと二重加算\n{ORIGINAL}{ORIGINAL}"
        "在庫同期の二重加算は冪等キーで防ぐ。\n",
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_the_original_ranks_right_before_a_summary_that_recalled_it(
    original_and_copy: dict[str, Path], engine: str
) -> None:
    copy_ref = "2026/11/2026-11-30-c0ffee01.md"
    query = "在庫同期の二重加算と冪等キー"
    _copy(original_and_copy["summaries"], recalled=False)
    _engine(engine)
    before = _refs(query, engine)
    # The copy does say it more strongly: on its own it outranks the original.
    assert before.index(copy_ref) < before.index("notes/x.md"), before

    _copy(original_and_copy["summaries"], recalled=True)
    _engine(engine)
    after = _refs(query, engine)
    assert after.index("notes/x.md") + 1 == after.index(copy_ref), after


# --- 8. English morphology (the index engine) ------------------------------------------------


@pytest.fixture
def english(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    vault = tmp_path / "vault"
    _write(
        vault / "notes" / "coupon-stacking.md",
        "# Stacking rules\nCoupon-stacking is allowed once per order.\n",
    )
    _write(
        vault / "notes" / "product page.md",
        "# Product page\nThe page calls fetchProduct.ts on load.\n",
    )
    _write(vault / "notes" / "remote fetch.md", "# Remote sync\nWe fetch the remote every hour.\n")
    _daily(vault)
    summaries = tmp_path / "summaries"
    _summary(
        summaries,
        "2026-11-20",
        "abcd1234",
        "title: Checkout copy\n",
        "## Checkout copy\nReworded the checkout button.\n",
    )
    _summary(
        summaries,
        "2026-11-21",
        "abcd5678",
        "title: Git hooks\n",
        "## Git hooks\nThe git pre-commit hook runs ruff.\n",
    )
    _point(monkeypatch, obsidian=vault, summaries=summaries)
    return {"vault": vault, "summaries": summaries}


def test_a_plural_finds_the_hyphenated_singular_on_the_index(english: dict[str, Path]) -> None:
    _engine("index")
    assert "notes/coupon-stacking.md" in _refs("coupons", "index")
    assert "notes/coupon-stacking.md" in _refs("stacked coupons", "index")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_word_is_not_a_prefix_of_a_code_name(english: dict[str, Path], engine: str) -> None:
    _engine(engine)
    refs = _refs("fetch", engine)
    assert "notes/remote fetch.md" in refs
    assert "notes/product page.md" not in refs


@pytest.mark.parametrize("engine", ENGINES)
def test_git_does_not_match_the_git_branch_key_of_every_summary(
    english: dict[str, Path], engine: str
) -> None:
    _engine(engine)
    refs = _refs("git", engine)
    assert refs == ["2026/11/2026-11-21-abcd5678.md"], refs


# --- 9. opt-out and private spans --------------------------------------------------------------


def test_an_opted_out_prompt_is_neither_searched_nor_logged(everyday: Path) -> None:
    result = _recall("#memrecall:off 前に在庫同期の二重加算を直したっけ？", "off")
    assert result.context is None
    assert result.log["decision"] == "opted-out"
    assert not result.log.get("keywords")
    text = json.dumps(result.log, ensure_ascii=False)
    assert "在庫同期" not in text and "二重加算" not in text


@pytest.mark.parametrize("engine", ENGINES)
def test_private_spans_give_no_keywords(everyday: Path, engine: str) -> None:
    _engine(engine)
    result = _recall(
        "前に <private>zebrafish の ohlcv_feed 鍵</private> 在庫同期の二重加算を直したっけ？",
        f"priv-{engine}",
    )
    # The rest of the prompt is recalled as usual; nothing of the private span is anywhere.
    assert _injected(result) == ["notes/在庫同期の二重加算.md"], result.log["reason"]
    text = json.dumps(result.log, ensure_ascii=False).casefold()
    for word in ("zebrafish", "ohlcv", "feed", "鍵"):
        assert word not in text, word

    # A private span naming a stored memory does not find it.
    only_private = _recall(
        "what did we settle on for <private>the kafka consumer lag</private>?", f"priv2-{engine}"
    )
    assert only_private.context is None
    log = only_private.log
    said = [*log["keywords"], *log.get("df", {}), *log.get("generic", [])]
    said += [word for entry in log.get("top", []) for word in entry["matched"]]
    assert not {"kafka", "consumer", "lag"} & {w.casefold() for w in said}, said


def test_the_hook_log_of_an_opted_out_prompt_holds_none_of_its_words(
    everyday: Path, isolated_home: Path
) -> None:
    prompt = "＃ｍｅｍｒｅｃａｌｌ：ｏｆｆ what did we decide about the kafka consumer lag?"
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "recall"],
        input=json.dumps({"session_id": "hook-off", "prompt": prompt}).encode(),
        capture_output=True,
        timeout=120,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0 and done.stdout == b""
    logs = list((isolated_home / "logs").glob("recall-*.jsonl"))
    text = "".join(p.read_text("utf-8") for p in logs)
    assert '"opted-out"' in text
    assert "kafka" not in text.casefold() and "consumer" not in text.casefold()


# --- 9. a synonym in a title -----------------------------------------------------------------


@pytest.fixture
def startup_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    vault = tmp_path / "vault"
    # Both notes hold the prompt word's synonym once; only the first has it in its title. The
    # second is shorter, so on the text alone it would rank first.
    _write(
        vault / "notes" / "zshの起動を速くした.md",
        "# zshの起動を速くした\nzprof で測って compinit を一度だけにした。"
        "プラグインの読み込みも遅延させた。計測は time zsh -i -c exit で行う。\n",
    )
    _write(vault / "notes" / "週次メモ.md", "# 週次メモ\n起動のログを見た。\n")
    _write(
        vault / "notes" / "Startup.md",
        "# Startup\nThe service took nine seconds before it answered; we now load the "
        "catalogue lazily and warm the cache after the first request has been served.\n",
    )
    _write(vault / "notes" / "weekly.md", "# Weekly\nRead the startup logs.\n")
    _daily(vault)
    _point(monkeypatch, obsidian=vault)
    return vault


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("prompt", "titled", "passing"),
    [
        ("シェルの立ち上がりを速くした方法", "notes/zshの起動を速くした.md", "notes/週次メモ.md"),
        ("アプリの起動を速くした方法", "notes/Startup.md", "notes/weekly.md"),
    ],
)
def test_a_title_holding_a_synonym_ranks_above_a_passing_mention(
    startup_notes: Path, engine: str, prompt: str, titled: str, passing: str
) -> None:
    _engine(engine)
    refs = _refs(prompt, engine)
    assert titled in refs and passing in refs
    assert refs.index(titled) < refs.index(passing)


# --- 10. a bare number ---------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bare_number_weighs_less_than_the_topic_in_a_title(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    vault = tmp_path / "vault"
    title = "GoでCPU使用率が上がるとき"
    _write(vault / "notes" / f"{title}.md", f"# {title}\nGC を見る。\n")
    # The topic word in passing, beside the prompt's number counting something else.
    _write(
        vault / "notes" / "週報.md",
        "# 週報\nCPU の割り当てを見直した。バッチのジョブを 100 件流して、結果を表にまとめた。"
        "来週はレビューの続きと、会議の準備と、資料の整理をする予定。\n",
    )
    for n in range(6):
        _write(vault / "go" / f"{n}.md", f"# Go メモ {n}\nGo のモジュールの話。\n")
    _daily(vault)
    _point(monkeypatch, obsidian=vault)
    _engine(engine)
    refs = _refs("Go の CPU が 100% に張り付く", engine)
    assert refs[0] == "notes/GoでCPU使用率が上がるとき.md"


# --- 11. newer first, older right behind -----------------------------------------------------


def _ranked(store: str, ref: str, day: int, score: float, matched: list[str]) -> Any:
    from datetime import datetime, timezone

    from memrecall.search import Hit

    return Hit(
        store=store,
        ref=ref,
        path=Path(ref),
        title=ref,
        date=datetime(2026, 11, day, tzinfo=timezone.utc),
        score=score,
        matched=matched,
        line=1,
        snippet="",
        lines=[],
    )


def test_a_newer_summary_leads_and_the_older_follows_right_behind_it() -> None:
    from memrecall.search import _newer_first

    older = _ranked("summaries", "older.md", 1, 1.00, ["商品", "検索結果"])
    issue = _ranked("beads", "bd-1", 2, 0.98, ["商品", "差分"])
    note = _ranked("obsidian", "note.md", 3, 0.96, ["差分"])
    newer = _ranked("summaries", "newer.md", 20, 0.94, ["商品", "検索結果"])
    order = [h.ref for h in _newer_first([older, issue, note, newer])]
    # The newer may reverse the older's decision, so it leads; the older is not pushed below
    # the issue and the note that ranked between them.
    assert order == ["newer.md", "older.md", "bd-1", "note.md"]


@pytest.mark.parametrize("engine", ENGINES)
def test_blank_lines_and_line_numbers_cross_languages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    vault = tmp_path / "vault"
    _write(
        vault / "notes" / "stale line numbers.md",
        "# Reading mode line numbers not updated\nDelete two blank lines, then toggle a task.\n",
    )
    _write(vault / "notes" / "行.md", "# 行の数え方\n行頭と行末の話。\n")
    _daily(vault)
    _point(monkeypatch, obsidian=vault)
    _engine(engine)
    assert _refs("空行を消したら行番号がずれる", engine)[0] == "notes/stale line numbers.md"
