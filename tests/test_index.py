"""The indexed recall engine, end to end: what a user notices when the index answers,
when it is refreshed, when it is damaged, and when ripgrep has to stand in for it.

Library calls run in-process for speed (MEMRECALL_INDEX=manual, so nothing starts in the
background); every hook contract runs the real `python -m memrecall recall` process.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import _index_fixtures as fx
import pytest

from memrecall import index as index_mod
from memrecall.config import load_settings
from memrecall.index import MANIFEST_NAME, META_NAME, root_tag
from memrecall.search import search
from memrecall.tokenize import tokenize_text


@pytest.fixture
def stores(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    return fx.build_stores(tmp_path, isolated_home, monkeypatch)


@pytest.fixture(autouse=True)
def _no_writer_outlives_the_test(isolated_home: Path):  # type: ignore[no-untyped-def]
    yield
    fx.wait_for_background(isolated_home)


def _settings(engine: str = "manual", **env: str):  # type: ignore[no-untyped-def]
    return load_settings(environ={**os.environ, "MEMRECALL_INDEX": engine, **env})


def _search(query: str, engine: str = "manual", limit: int = 10, **env: str):  # type: ignore[no-untyped-def]
    settings = _settings(engine, **env)
    keywords, _ = tokenize_text(query, settings.tokenizer, settings)
    assert keywords, f"no keywords in {query!r}"
    return search(keywords, settings, limit=limit)


def _refs(query: str, engine: str = "manual", **env: str) -> list[str]:
    outcome = _search(query, engine, **env)
    if engine == "manual":
        assert outcome.engine == "index", outcome.fallback
    return [h.ref for h in outcome.hits]


def _build(**env: str) -> index_mod.RefreshReport:
    return index_mod.refresh(_settings(**env))


def _rebuild(**env: str) -> index_mod.RefreshReport:
    return index_mod.refresh(_settings(**env), full=True)


def _vault_docs(vault: Path) -> int:
    return sum(
        1
        for p in vault.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(vault).parts)
    )


def _expected_docs(stores: dict[str, Path]) -> int:
    return (
        _vault_docs(stores["vault"]) + len(fx.ISSUES) + len(list(stores["summaries"].rglob("*.md")))
    )


def _live_generation(home: Path) -> Path:
    name = (home / "index" / "CURRENT").read_text(encoding="utf-8").strip()
    return home / "index" / name


def _generations(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "index").glob("gen-*"))


def _edit(path: Path, text: str) -> None:
    """A user's edit. The mtime moves on explicitly: on a coarse-clock filesystem two writes
    within one tick would otherwise look unchanged (sizes differ here too)."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


def _context(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    payload = json.loads(done.stdout.decode("utf-8"))
    return payload["hookSpecificOutput"]["additionalContext"]


# --- 1. build, and each store answers --------------------------------------------------------


def test_build_holds_every_document_of_every_store(stores: dict[str, Path]) -> None:
    report = _build()
    assert report.mode == "build"
    assert report.documents == report.added == _expected_docs(stores)
    gen = _live_generation(stores["home"])
    meta = json.loads((gen / META_NAME).read_text(encoding="utf-8"))
    assert meta["backend"] == "sudachi" and meta["documents"] == report.documents
    assert {tuple(r) for r in meta["roots"]} >= {
        ("obsidian", str(stores["vault"])),
        ("beads", str(stores["beads"])),
        ("summaries", str(stores["summaries"])),
    }
    manifest = json.loads((gen / MANIFEST_NAME).read_text(encoding="utf-8"))
    assert str(stores["beads"]) in manifest
    assert not any("/.obsidian/" in path for path in manifest)  # dot-folders are not notes


@pytest.mark.parametrize(
    ("query", "store", "ref"),
    [
        ("在庫同期バッチのバグ", "obsidian", "notes/在庫同期バッチ.md"),
        (
            "Kafka consumer lag after the partition change",
            "obsidian",
            "notes/Kafka consumer lag.md",
        ),
        ("認証フローのリフレッシュトークン", "obsidian", "設計/認証フロー.md"),
        ("請求書PDFの文字化け", "beads", "bd-4e5f"),
        ("flaky login_spec on CI", "beads", "bd-6a70"),
        ("決済タイムアウト値の見直し", "summaries", "2026/11/2026-11-28-aaaa1111.md"),
        ("blue/green rollback_window_minutes", "summaries", "2026/11/2026-11-15-bbbb2222.md"),
    ],
)
def test_the_index_finds_the_right_memory_in_each_store(
    stores: dict[str, Path], query: str, store: str, ref: str
) -> None:
    _build()
    outcome = _search(query)
    assert outcome.engine == "index" and outcome.fallback == ""
    assert outcome.hits, query
    top = outcome.hits[0]
    assert (top.store, top.ref) == (store, ref)
    assert top.path.is_file() and top.line >= 1 and top.snippet
    if store != "beads":  # a note's quoted line is that line of the file
        lines = top.path.read_text(encoding="utf-8").splitlines()
        assert " ".join(lines[top.line - 1].split()) in top.snippet.replace("…", "")


@pytest.mark.parametrize(
    "query",
    [
        "在庫同期バッチのバグ",
        "PAY-1234 の決済タイムアウト",
        "bd-7f3a",
        "Kafka consumer lag",
        "請求書の文字化け",
        "sync_inventory_batch はどこ？",
        "マイクロサービス基盤の監視",
        "blue/green deploy of the search service",
    ],
)
def test_index_and_ripgrep_agree_on_the_top_hit(stores: dict[str, Path], query: str) -> None:
    _build()
    indexed, scanned = _search(query, "manual"), _search(query, "off")
    assert (indexed.engine, scanned.engine) == ("index", "rg")
    assert scanned.fallback == "index disabled"
    assert indexed.hits and scanned.hits
    top_i, top_r = indexed.hits[0], scanned.hits[0]
    assert (top_i.store, top_i.ref, top_i.key) == (top_r.store, top_r.ref, top_r.key)


def test_ripgrep_answers_the_same_search_when_no_index_exists(stores: dict[str, Path]) -> None:
    outcome = _search("bd-7f3a の状況")
    assert outcome.engine == "rg" and outcome.fallback.startswith("no index")
    assert outcome.hits[0].ref == "bd-7f3a"
    assert not outcome.refresh_started  # manual: the hook never starts a build


def test_dot_folders_are_not_searched_by_the_index(stores: dict[str, Path]) -> None:
    _build()
    assert not any(".obsidian" in ref for ref in _refs("hidden 在庫同期 PAY-1234"))


# --- 2. matching: stems, Japanese inside words, whole identifiers, frontmatter, exact ids ------


@pytest.mark.parametrize(
    ("query", "ref"),
    [
        ("coupons", "notes/coupon-policy.md"),  # the note says "coupon"
        ("discounts stacking", "notes/coupon-policy.md"),  # "discount", "stacks"
        ("deploying", "2026/11/2026-11-15-bbbb2222.md"),  # "deployed", "Deploying"
        ("switches", "2026/11/2026-11-15-bbbb2222.md"),  # "switching"
        ("consumers", "notes/Kafka consumer lag.md"),
    ],
)
def test_english_words_meet_their_other_forms(
    stores: dict[str, Path], query: str, ref: str
) -> None:
    _build()
    assert ref in _refs(query)


@pytest.mark.parametrize(
    ("query", "ref"),
    [
        ("在庫同期", "notes/在庫同期バッチ.md"),
        ("同期バッチ", "notes/在庫同期バッチ.md"),
        ("サービス基盤", "notes/監視設計.md"),  # inside マイクロサービス基盤
        ("監視ダッシュ", "notes/監視設計.md"),  # a cut-off word, as a user types it
        ("発行バッチ", "bd-4e5f"),  # inside 請求書発行バッチ
    ],
)
def test_a_japanese_keyword_is_found_inside_a_longer_word(
    stores: dict[str, Path], query: str, ref: str
) -> None:
    _build()
    refs = _refs(query)
    assert refs and refs[0] == ref


def test_a_japanese_compound_outranks_its_scattered_pieces(stores: dict[str, Path]) -> None:
    fx.note(
        stores["vault"], "notes/在庫の話.md", "# 在庫の話\n在庫は月末に数える。同期は夜間に回す。\n"
    )
    _build()
    refs = _refs("在庫同期")
    assert refs[0] == "notes/在庫同期バッチ.md"


@pytest.mark.parametrize(
    ("query", "absent"),
    [
        ("PAY-12", "notes/PAY-1234 決済.md"),
        ("PAY-12 の件", "notes/PAY-1234 決済.md"),
        ("PAY-123", "2026/11/2026-11-28-aaaa1111.md"),
        ("bd-7f3", "bd-7f3a"),
        ("what is bd-7f3?", "bd-7f3a"),
    ],
)
def test_an_identifier_never_matches_a_longer_one(
    stores: dict[str, Path], query: str, absent: str
) -> None:
    _build()
    assert absent not in _refs(query)


@pytest.mark.parametrize(
    ("query", "ref"),
    [
        ("PAY-1234", "notes/PAY-1234 決済.md"),
        ("PAY-1234 の件", "notes/PAY-1234 決済.md"),
        ("bd-7f3a", "bd-7f3a"),
    ],
)
def test_the_whole_identifier_is_found(stores: dict[str, Path], query: str, ref: str) -> None:
    _build()
    assert _refs(query)[0] == ref


@pytest.mark.parametrize(
    "query", ["title", "status", "project", "git_branch", "session_id", "tags の設定"]
)
def test_frontmatter_keys_are_not_text(stores: dict[str, Path], query: str) -> None:
    # Every summary has `title`, `project`, `git_branch`, `session_id`, `tags` keys and the
    # coupon note has `status`; none of them says those words in its text.
    _build()
    refs = _refs(query)
    assert not [r for r in refs if r.startswith("2026/") or r == "notes/coupon-policy.md"], refs


def test_a_word_in_the_text_is_found_though_it_is_also_a_frontmatter_key(
    stores: dict[str, Path],
) -> None:
    _build()
    assert _refs("git_branch")[:1] == ["notes/branch-naming.md"]


@pytest.mark.parametrize(
    "query",
    ["bd-7f3a", "bd-7f3a の状況を教えて", "what happened to bd-7f3a?", "bd-7f3a が再発した"],
)
def test_an_exact_issue_id_ranks_that_issue_first(stores: dict[str, Path], query: str) -> None:
    # bd-9c1e and bd-2b8d each mention bd-7f3a three times; bd-7f3a never repeats its id.
    _build()
    refs = _refs(query)
    assert refs[0] == "bd-7f3a"
    assert {"bd-9c1e", "bd-2b8d"} <= set(refs[1:])


def test_the_recall_log_says_which_field_and_line_matched(stores: dict[str, Path]) -> None:
    _build()
    for n, (prompt, ref, keyword, where, text) in enumerate(
        [
            ("bd-7f3a の状況は？", "bd-7f3a", "bd-7f3a", "head", None),
            (
                "sync_inventory_batch はどこで呼ばれてる？",
                "notes/在庫同期バッチ.md",
                "sync_inventory_batch",
                "body",
                "原因は `sync_inventory_batch` のリトライ。",
            ),
        ]
    ):
        done = fx.hook(prompt, f"why{n}")
        assert ref in _context(done)
        entry = fx.last_log(stores["home"], f"why{n}")
        assert entry["engine"] == "index" and "index_fallback" not in entry
        assert any(k.startswith("search.") for k in entry["phase_ms"])
        hit = entry["injected"][0]
        assert hit["ref"] == ref and hit["fields"][keyword] == where
        store, tag, rest = hit["key"].split(":", 2)
        assert (store, rest) == (hit["store"], ref) and len(tag) == 8
        if text is not None:
            lines = (stores["vault"] / ref).read_text(encoding="utf-8").splitlines()
            assert lines[hit["line"] - 1] == text


# --- 3. incremental refresh ---------------------------------------------------------------------


def test_an_edited_note_is_refreshed_alone_and_its_new_text_replaces_the_old(
    stores: dict[str, Path],
) -> None:
    total = _build().documents
    kafka = stores["vault"] / "notes" / "Kafka consumer lag.md"
    assert "notes/Kafka consumer lag.md" in _refs("partition change")
    _edit(
        kafka,
        "# Kafka consumer lag\n"
        "A rebalance storm stalled the orders consumer; 再平衡が原因だった。\n",
    )
    report = _build()
    assert (report.mode, report.updated, report.added, report.removed) == ("refresh", 1, 0, 0)
    assert report.unchanged == total - 1 and report.documents == total
    assert "notes/Kafka consumer lag.md" in _refs("rebalance storm")
    assert "notes/Kafka consumer lag.md" in _refs("再平衡")
    assert "notes/Kafka consumer lag.md" not in _refs("partition change")


def test_a_refresh_with_nothing_changed_reads_nothing(stores: dict[str, Path]) -> None:
    total = _build().documents
    report = _build()
    assert (report.mode, report.added, report.updated, report.removed, report.unchanged) == (
        "refresh",
        0,
        0,
        0,
        total,
    )


def test_an_added_note_is_found_after_a_refresh(stores: dict[str, Path]) -> None:
    total = _build().documents
    fx.note(
        stores["vault"],
        "notes/新規/棚卸しジョブ.md",
        "# 棚卸しジョブ\nstocktake_job は毎月 1 日に走る。\n",
    )
    fx.note(
        stores["vault"],
        "notes/release-train.md",
        "# Release train\nWe cut release branches every Tuesday.\n",
    )
    report = _build()
    assert (report.added, report.updated, report.removed, report.documents) == (2, 0, 0, total + 2)
    assert _refs("棚卸しジョブ")[0] == "notes/新規/棚卸しジョブ.md"
    assert _refs("stocktake_job")[0] == "notes/新規/棚卸しジョブ.md"
    assert _refs("release branches")[0] == "notes/release-train.md"


def test_a_deleted_note_is_gone_before_and_after_the_refresh(stores: dict[str, Path]) -> None:
    total = _build().documents
    (stores["vault"] / "notes" / "監視設計.md").unlink()
    (stores["vault"] / "notes" / "Kafka consumer lag.md").unlink()
    # Before the refresh: the index still names the files, but nothing deleted is shown.
    assert "notes/監視設計.md" not in _refs("マイクロサービス基盤の監視")
    assert "notes/Kafka consumer lag.md" not in _refs("Kafka consumer")
    report = _build()
    assert (report.removed, report.added, report.updated, report.documents) == (2, 0, 0, total - 2)
    assert "notes/監視設計.md" not in _refs("マイクロサービス基盤の監視")
    assert "notes/Kafka consumer lag.md" not in _refs("Kafka consumer")


def test_a_renamed_note_is_found_under_its_new_name_only(stores: dict[str, Path]) -> None:
    total = _build().documents
    old = stores["vault"] / "設計" / "認証フロー.md"
    new = stores["vault"] / "設計" / "auth" / "認証フロー v2.md"
    new.parent.mkdir()
    old.rename(new)
    report = _build()
    assert (report.added, report.removed, report.documents) == (1, 1, total)
    for query in ("認証フローのリフレッシュトークン", "OAuth refresh token"):
        refs = _refs(query)
        assert refs[0] == "設計/auth/認証フロー v2.md"
        assert "設計/認証フロー.md" not in refs


def test_one_changed_issue_in_an_export_is_the_only_one_reindexed(stores: dict[str, Path]) -> None:
    total = _build().documents
    issues = [dict(i) for i in fx.ISSUES]
    issues[4]["description"] = "login_spec はタイムゾーン依存で落ちる。TZ=UTC で固定した。"
    issues[4]["status"] = "closed"
    _edit(stores["beads"], "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in issues))
    report = _build()
    assert (report.updated, report.added, report.removed) == (1, 0, 0)
    assert report.unchanged == total - 1
    hits = _search("タイムゾーン依存").hits
    assert hits and (hits[0].ref, hits[0].status) == ("bd-6a70", "closed")
    assert "bd-6a70" not in _refs("once in twenty runs")


def test_issues_added_to_and_dropped_from_an_export(stores: dict[str, Path]) -> None:
    total = _build().documents
    issues = [i for i in fx.ISSUES if i["id"] != "bd-4e5f"]
    issues.append(
        {
            "id": "bd-e0e0",
            "title": "配送料の計算ミス",
            "status": "open",
            "priority": 1,
            "description": "shipping_fee_calc rounds down on 999 yen orders.",
        }
    )
    _edit(stores["beads"], "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in issues))
    report = _build()
    # bd-6a70 moved up a line when bd-4e5f went: the index learns where it is now.
    assert (report.added, report.removed, report.updated, report.documents) == (1, 1, 1, total)
    assert _refs("shipping_fee_calc")[0] == "bd-e0e0"
    assert _refs("配送料の計算ミス")[0] == "bd-e0e0"
    assert "bd-4e5f" not in _refs("請求書PDFの文字化け")
    assert _refs("flaky login_spec on CI")[0] == "bd-6a70"


def _export_line(export: Path, issue_id: str) -> int:
    lines = export.read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, start=1) if json.loads(line)["id"] == issue_id)


@pytest.mark.parametrize("engine", ["manual", "off"])
def test_a_beads_hit_is_at_its_line_of_the_export(stores: dict[str, Path], engine: str) -> None:
    filler = [
        {
            "id": f"bd-f{n:03d}",
            "title": f"Filler chore {n}",
            "status": "open",
            "description": "Routine work.",
        }
        for n in range(40)
    ]
    fx.export(stores["beads"], [*filler, *fx.ISSUES])
    if engine == "manual":
        _build()
    outcome = _search("請求書PDFの文字化け", engine)
    assert outcome.engine == ("index" if engine == "manual" else "rg"), outcome.fallback
    top = outcome.hits[0]
    assert top.ref == "bd-4e5f"
    assert top.line == _export_line(stores["beads"], "bd-4e5f") == 44
    assert top.as_json()["line"] == 44


def test_an_issue_moved_by_one_written_above_it_is_found_at_its_new_line(
    stores: dict[str, Path],
) -> None:
    _build()
    assert [(h.ref, h.line) for h in _search("請求書PDFの文字化け").hits][:1] == [("bd-4e5f", 4)]
    newcomer = {
        "id": "bd-0a0a",
        "title": "Newest issue",
        "status": "open",
        "description": "Filed today.",
    }
    _edit(
        stores["beads"],
        "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in [newcomer, *fx.ISSUES]),
    )
    report = _build()
    assert (report.added, report.removed) == (1, 0)
    outcome = _search("請求書PDFの文字化け")
    assert outcome.engine == "index"
    # Before, the moved issue kept its old offset in the index: the hook read another
    # issue there and dropped the hit until a full rebuild.
    assert [(h.ref, h.line) for h in outcome.hits][:1] == [("bd-4e5f", 5)]


def test_a_deleted_store_root_takes_its_documents_with_it(stores: dict[str, Path]) -> None:
    total = _build().documents
    in_vault = _vault_docs(stores["vault"])
    shutil.rmtree(stores["vault"])
    report = _build()
    assert report.removed == in_vault and report.documents == total - in_vault
    assert not [h for h in _search("在庫同期バッチ Kafka 認証フロー").hits if h.store == "obsidian"]
    shutil.rmtree(stores["project"])
    report = _build()
    assert report.removed == len(fx.ISSUES) and report.documents == total - in_vault - len(
        fx.ISSUES
    )
    assert _search("bd-7f3a 請求書").hits == []
    # What is left still answers.
    assert _refs("決済タイムアウト値の見直し")[0] == "2026/11/2026-11-28-aaaa1111.md"


# --- 4. retention and removed stores act at query time ------------------------------------------


def test_retention_is_applied_at_query_time_without_a_refresh(
    stores: dict[str, Path], isolated_home: Path
) -> None:
    _build()
    deploy = "2026/11/2026-11-15-bbbb2222.md"
    payment = "2026/11/2026-11-28-aaaa1111.md"
    assert deploy in _refs("blue/green deploy")
    # 97 days after the deploy summary, 84 after the payment one: no refresh in between.
    later = {"MEMRECALL_NOW": "2027-02-20T09:00:00+09:00"}
    assert deploy not in _refs("blue/green deploy", **later)
    assert deploy not in _refs("rollback_window_minutes", **later)
    assert payment in _refs("決済タイムアウト値の見直し", **later)
    # An old summary is in the index, only hidden: a longer window shows it at once.
    assert "2026/07/2026-07-01-cccc3333.md" not in _refs("redis_failover_drill")
    (isolated_home / "config.toml").write_text(
        "retention_days = 365\n" + fx.ROOMY, encoding="utf-8"
    )
    assert _refs("redis_failover_drill") == ["2026/07/2026-07-01-cccc3333.md"]
    assert deploy in _refs("blue/green deploy", **later)


def test_a_store_removed_from_the_configuration_vanishes_at_once(
    stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _build()
    assert _refs("sync_inventory_batch")[0] == "notes/在庫同期バッチ.md"
    monkeypatch.delenv("MEMRECALL_OBSIDIAN")
    outcome = _search("sync_inventory_batch 在庫同期 Kafka consumer")
    assert outcome.engine == "index"
    assert not [h for h in outcome.hits if h.store == "obsidian"]
    assert _refs("bd-7f3a")[0] == "bd-7f3a"
    monkeypatch.delenv("MEMRECALL_BEADS")
    outcome = _search("bd-7f3a 請求書の文字化け")
    assert outcome.engine == "index" and outcome.hits == []
    # And through the hook: the vault note is never injected.
    done = fx.hook("sync_inventory_batch はどこ？", "gone")
    assert done.returncode == 0 and b"sync_inventory_batch" not in done.stdout


def test_one_of_two_vaults_removed_leaves_the_other_answering(
    stores: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "work-vault"
    fx.note(other, "runbooks/障害対応.md", "# 障害対応\nincident_pager_rotation は週替わり。\n")
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", os.pathsep.join([str(stores["vault"]), str(other)]))
    _build()
    assert any(h.root == str(other) for h in _search("incident_pager_rotation").hits)
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(stores["vault"]))
    outcome = _search("incident_pager_rotation 障害対応")
    assert outcome.engine == "index" and not [h for h in outcome.hits if h.root == str(other)]
    assert _search("sync_inventory_batch").hits[0].root == str(stores["vault"])


# --- 5. faults: the hook answers through ripgrep, a refresh heals the index ----------------------


def _garbage_over_tantivy(gen: Path) -> None:
    for path in gen.iterdir():
        if path.is_file() and path.name not in (META_NAME, MANIFEST_NAME):
            path.write_bytes(b"\x00\xffnot a tantivy file\x00" * 8)


def _garbage_over_segments(gen: Path) -> None:
    # tantivy's own meta.json stays readable: the damage shows only when segments are read.
    for path in gen.iterdir():
        if path.is_file() and path.name not in (
            META_NAME,
            MANIFEST_NAME,
            "meta.json",
            ".managed.json",
        ):
            path.write_bytes(b"\x00\xffnot a segment\x00" * 8)


def _bitrot_in_one_file(gen: Path) -> None:
    # Same size, same name, flipped bytes in the middle: what a bad disk sector does.
    victim = max(
        (p for p in gen.iterdir() if p.is_file() and p.suffix in (".idx", ".term", ".store")),
        key=lambda p: p.stat().st_size,
    )
    data = bytearray(victim.read_bytes())
    for i in range(len(data) // 4, len(data) // 2):
        data[i] ^= 0x5A
    victim.write_bytes(bytes(data))


def _truncate_meta(gen: Path) -> None:
    raw = (gen / META_NAME).read_bytes()
    (gen / META_NAME).write_bytes(raw[: len(raw) // 2])


def _missing_generation(gen: Path) -> None:
    (gen.parent / "CURRENT").write_text("gen-0badc0de-1\n", encoding="utf-8")


def _current_escapes(gen: Path) -> None:
    (gen.parent / "CURRENT").write_text("../../../etc\n", encoding="utf-8")


def _schema_mismatch(gen: Path) -> None:
    meta = json.loads((gen / META_NAME).read_text(encoding="utf-8"))
    meta["schema"] = 999
    (gen / META_NAME).write_text(json.dumps(meta), encoding="utf-8")


def _meta_not_an_object(gen: Path) -> None:
    (gen / META_NAME).write_text("[1, 2, 3]", encoding="utf-8")


FAULTS = {
    "garbage-over-index-files": _garbage_over_tantivy,
    "garbage-over-segments": _garbage_over_segments,
    "bitrot-inside-one-file": _bitrot_in_one_file,
    "truncated-memrecall-json": _truncate_meta,
    "memrecall-json-not-an-object": _meta_not_an_object,
    "current-names-missing-folder": _missing_generation,
    "current-escapes-index-folder": _current_escapes,
    "schema-mismatch": _schema_mismatch,
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_damaged_index_falls_back_to_ripgrep_and_a_refresh_heals_it(
    stores: dict[str, Path], fault: str
) -> None:
    _build()
    FAULTS[fault](_live_generation(stores["home"]))
    done = fx.hook("bd-7f3a の状況は？", f"{fault}-1")
    assert done.returncode == 0 and done.stderr == b""
    assert "Checkout returns 500" in _context(done)  # the memory is still injected
    entry = fx.last_log(stores["home"], f"{fault}-1")
    assert entry["decision"] == "inject" and entry["engine"] == "rg"
    assert entry["index_fallback"], entry
    healed = fx.cli("index", "refresh")
    assert healed.returncode == 0, healed.stderr.decode("utf-8", "replace")
    status = index_mod.status(_settings())
    assert status.exists and status.problem == "" and status.documents == _expected_docs(stores)
    done = fx.hook("sync_inventory_batch はどこで呼ばれてる？", f"{fault}-2")
    assert "在庫同期バッチ" in _context(done)
    entry = fx.last_log(stores["home"], f"{fault}-2")
    assert entry["engine"] == "index" and "index_fallback" not in entry
    assert entry["injected"][0]["ref"] == "notes/在庫同期バッチ.md"


def test_hooks_read_the_index_while_a_writer_holds_its_lock(stores: dict[str, Path]) -> None:
    from filelock import FileLock

    _build()
    with FileLock(str(stores["home"] / "index" / "write.lock")).acquire(timeout=10):
        for n, (prompt, text) in enumerate(
            [
                ("bd-7f3a の状況は？", "Checkout returns 500"),
                ("what about sync_inventory_batch?", "在庫同期バッチ"),
            ]
        ):
            done = fx.hook(prompt, f"locked{n}")
            assert text in _context(done)
            assert fx.last_log(stores["home"], f"locked{n}")["engine"] == "index"


def test_an_index_built_by_another_analyser_is_not_used_until_rebuilt(
    stores: dict[str, Path],
) -> None:
    built = fx.cli("index", "build", env={"MEMRECALL_TOKENIZER": "regex"})
    assert built.returncode == 0, built.stderr.decode("utf-8", "replace")
    assert (
        fx.cli_json("index", "status", env={"MEMRECALL_TOKENIZER": "regex"})["backend"] == "regex"
    )
    for n, (prompt, text) in enumerate(
        [
            ("bd-7f3a の状況は？", "Checkout returns 500"),
            ("what about sync_inventory_batch?", "在庫同期バッチ"),
        ]
    ):
        done = fx.hook(prompt, f"analyser{n}")
        assert text in _context(done)
        entry = fx.last_log(stores["home"], f"analyser{n}")
        assert entry["engine"] == "rg" and "regex" in entry["index_fallback"], entry
    assert fx.cli("index", "refresh").returncode == 0
    assert fx.cli_json("index", "status")["backend"] == "sudachi"
    done = fx.hook("bd-7f3a の状況は？", "analyser-after")
    assert "Checkout returns 500" in _context(done)
    assert fx.last_log(stores["home"], "analyser-after")["engine"] == "index"


def test_a_vault_added_to_the_configuration_is_searched_by_ripgrep_until_indexed(
    stores: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _build()
    other = tmp_path / "new-vault"
    fx.note(other, "ideas/検索改善.md", "# 検索改善\nquery_rewrite_rules を試す。\n")
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", os.pathsep.join([str(stores["vault"]), str(other)]))
    outcome = _search("query_rewrite_rules")
    assert outcome.engine == "rg" and str(other) in outcome.fallback
    assert outcome.hits and outcome.hits[0].root == str(other)
    assert _build().added >= 1
    outcome = _search("query_rewrite_rules")
    assert outcome.engine == "index" and outcome.hits[0].root == str(other)


# --- 6. failed builds and two builds at once -----------------------------------------------------


def _builder() -> Any:
    """The module that writes the index (memrecall.index re-exports its `refresh`)."""
    return sys.modules[index_mod.refresh.__module__]


def _fail_after(monkeypatch: pytest.MonkeyPatch, documents: int) -> None:
    """The disk fills up after `documents` documents were handed to tantivy."""
    builder = _builder()
    real = builder._to_document
    seen = [0]

    def flaky(*args: Any, **kwargs: Any) -> Any:
        seen[0] += 1
        if seen[0] > documents:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(builder, "_to_document", flaky)


def test_a_rebuild_failing_midway_leaves_the_previous_index_live(stores: dict[str, Path]) -> None:
    total = _build().documents
    home = stores["home"]
    current = (home / "index" / "CURRENT").read_text(encoding="utf-8")
    before = _generations(home)
    fx.note(stores["vault"], "notes/late.md", "# late\nlate_arrival_marker\n")
    with pytest.MonkeyPatch.context() as patch, pytest.raises(OSError):
        _fail_after(patch, 5)
        _rebuild()
    assert (home / "index" / "CURRENT").read_text(encoding="utf-8") == current
    assert _generations(home) == before  # no half-built generation left behind
    assert fx.cli_json("index", "status")["documents"] == total
    assert _refs("bd-7f3a")[0] == "bd-7f3a"
    assert _refs("late_arrival_marker") == []  # nothing of the broken build went live


def test_a_failed_first_build_leaves_nothing_and_ripgrep_answers(stores: dict[str, Path]) -> None:
    with pytest.MonkeyPatch.context() as patch, pytest.raises(OSError):
        _fail_after(patch, 3)
        _build()
    home = stores["home"]
    assert _generations(home) == [] and not (home / "index" / "CURRENT").exists()
    outcome = _search("bd-7f3a")
    assert outcome.engine == "rg" and outcome.hits[0].ref == "bd-7f3a"
    assert _build().documents == _expected_docs(stores)


def test_a_refresh_failing_midway_keeps_the_last_committed_index(stores: dict[str, Path]) -> None:
    total = _build().documents
    for n in range(4):
        fx.note(stores["vault"], f"notes/new-{n}.md", f"# new {n}\nfresh_marker_{n} 追加メモ\n")
    with pytest.MonkeyPatch.context() as patch, pytest.raises(OSError):
        _fail_after(patch, 2)
        _build()
    outcome = _search("bd-7f3a")
    assert outcome.engine == "index" and outcome.hits[0].ref == "bd-7f3a"
    assert fx.cli_json("index", "status")["documents"] == total
    report = _build()  # the next refresh picks up every file the failed one did not finish
    assert (report.added, report.documents) == (4, total + 4)
    assert _refs("fresh_marker_3")[0] == "notes/new-3.md"


def test_a_failure_while_writing_the_metadata_leaves_the_previous_index_live(
    stores: dict[str, Path],
) -> None:
    # A full disk shows up at the last step too: the metadata of the new generation.
    total = _build().documents
    home = stores["home"]
    current = (home / "index" / "CURRENT").read_text(encoding="utf-8")
    before = _generations(home)
    builder = _builder()
    real_write, real_json = builder.write_atomic, builder.write_json_atomic

    def full_disk(real: Any) -> Any:
        def write(path: Path, data: Any) -> None:
            if path.parent.name.startswith("gen-"):
                raise OSError(errno.ENOSPC, "No space left on device")
            real(path, data)

        return write

    with pytest.MonkeyPatch.context() as patch, pytest.raises(OSError):
        patch.setattr(builder, "write_atomic", full_disk(real_write))
        patch.setattr(builder, "write_json_atomic", full_disk(real_json))
        _rebuild()
    assert (home / "index" / "CURRENT").read_text(encoding="utf-8") == current
    assert _generations(home) == before, "a half-written generation was left behind"
    assert _search("bd-7f3a").engine == "index"
    assert fx.cli_json("index", "status")["documents"] == total


def test_a_generation_left_by_a_killed_build_is_ignored_and_cleaned_up(
    stores: dict[str, Path],
) -> None:
    _build()
    home = stores["home"]
    stray = home / "index" / "gen-0000dead-1"
    stray.mkdir()
    (stray / "meta.json").write_text("{", encoding="utf-8")
    assert _refs("bd-7f3a")[0] == "bd-7f3a"
    _rebuild()
    assert _generations(home) == [_live_generation(home).name]


def test_two_rebuilds_at_once_both_end_and_leave_one_sound_index(stores: dict[str, Path]) -> None:
    _build()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memrecall", "index", "rebuild", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for proc, (out, err) in zip(procs, results):
        assert proc.returncode == 0, err.decode("utf-8", "replace")
        assert json.loads(out)["mode"] == "build"
    home = stores["home"]
    live = _live_generation(home)
    assert live.is_dir() and _generations(home) == [live.name]
    status = fx.cli_json("index", "status")
    assert status["problem"] == "" and status["documents"] == _expected_docs(stores)
    assert _refs("bd-7f3a")[0] == "bd-7f3a"
    assert _refs("在庫同期")[0] == "notes/在庫同期バッチ.md"


def test_a_background_refresh_gives_up_at_once_while_another_writer_holds_the_lock(
    stores: dict[str, Path],
) -> None:
    from filelock import FileLock

    _build()
    lock = FileLock(str(stores["home"] / "index" / "write.lock"))
    with lock.acquire(timeout=10):
        quiet = fx.cli("index", "refresh", "--background")
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, b"", b"")
    assert fx.cli("index", "refresh").returncode == 0


# --- 7. hooks read while a refresh writes --------------------------------------------------------


@pytest.mark.parametrize("writer", ["refresh", "rebuild"])
def test_hooks_running_while_the_index_is_written_never_fail(
    stores: dict[str, Path], writer: str
) -> None:
    _build()
    for n in range(40):  # something for the writer to do
        fx.note(
            stores["vault"],
            f"bulk/{n:03d}.md",
            f"# bulk {n}\n在庫同期の記録 {n}。stock sync log {n}.\n",
        )
    _edit(
        stores["vault"] / "notes" / "Kafka consumer lag.md",
        "# Kafka consumer lag\nlag_alert_threshold は 5 分。\n",
    )
    prompts = [
        "bd-7f3a の状況は？",
        "sync_inventory_batch はどこ？",
        "what about PAY-1234?",
        "lag_alert_threshold いくつ？",
        "今日の天気はどう？",
        "bd-4e5f 請求書の文字化け",
    ]
    writing = subprocess.Popen(
        [sys.executable, "-m", "memrecall", "index", writer],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    hooks = [fx.start_hook(p, f"{writer}-{n}") for n, p in enumerate(prompts)]
    outputs = [h.communicate(timeout=120) for h in hooks]
    _, werr = writing.communicate(timeout=600)
    assert writing.returncode == 0, werr.decode("utf-8", "replace")
    for proc, (out, _) in zip(hooks, outputs):
        assert proc.returncode == 0
        if out:
            payload = json.loads(out.decode("utf-8"))  # exactly one JSON object, nothing else
            assert (
                isinstance(payload, dict)
                and "<memrecall-context>" in payload["hookSpecificOutput"]["additionalContext"]
            )
    entries = [
        e
        for e in fx.log_lines(stores["home"])
        if str(e.get("session", "")).startswith(f"{writer}-")
    ]
    assert len(entries) == len(prompts)
    assert {e["decision"] for e in entries} <= {"inject", "quiet", "deadline"}, entries
    assert all(e.get("engine") in ("index", "rg") for e in entries if e["decision"] != "deadline")
    # After the writer: the index is whole and holds the new notes.
    assert fx.cli_json("index", "status")["documents"] == _expected_docs(stores)
    assert _refs("lag_alert_threshold")[0] == "notes/Kafka consumer lag.md"


# --- 8. the hook starts a background refresh ------------------------------------------------------


def test_a_hook_without_an_index_starts_one_in_the_background(
    stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.delenv("MEMRECALL_INDEX")
    (isolated_home / "config.toml").write_text(
        fx.ROOMY + "[index]\nrefresh_seconds = 1\n", encoding="utf-8"
    )
    try:
        done = fx.hook("bd-7f3a の状況は？", "bg-0")
        assert "Checkout returns 500" in _context(done)
        entry = fx.last_log(isolated_home, "bg-0")
        assert entry["engine"] == "rg" and entry["index_fallback"].startswith("no index")
        assert entry["index_refresh"] == "started"
        assert fx.poll(lambda: index_mod.status(_settings("on")).exists, timeout=120), (
            "no index was built"
        )
        fx.wait_for_background(isolated_home)
        assert index_mod.status(_settings("on")).documents == _expected_docs(stores)

        fx.note(stores["vault"], "notes/後から.md", "# 後から追加\nlate_note_marker を書いた。\n")
        found: list[dict[str, Any]] = []

        def findable() -> bool:
            n = len(found)
            done = fx.hook("late_note_marker はどこ？", f"bg-{n + 1}")
            assert done.returncode == 0
            entry = fx.last_log(isolated_home, f"bg-{n + 1}")
            assert entry["decision"] in ("inject", "quiet", "deadline"), entry
            found.append(entry)
            return entry.get("engine") == "index" and fx.injected_refs(entry)[:1] == [
                "notes/後から.md"
            ]

        assert fx.poll(findable, timeout=120, every=1.1), found[-3:]
        assert any(e.get("index_refresh") == "started" for e in found), (
            "no stale-triggered refresh was logged"
        )
    finally:
        fx.wait_for_background(isolated_home)


def test_manual_mode_never_starts_a_background_process(
    stores: dict[str, Path], isolated_home: Path
) -> None:
    done = fx.hook("bd-7f3a の状況は？", "manual")
    assert "Checkout returns 500" in _context(done)
    entry = fx.last_log(isolated_home, "manual")
    assert entry["engine"] == "rg" and "index_refresh" not in entry
    assert fx.background_refreshes(isolated_home) == []
    assert not (isolated_home / "index" / "CURRENT").exists()


def test_one_background_refresh_per_interval(
    stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    monkeypatch.delenv("MEMRECALL_INDEX")
    (isolated_home / "config.toml").write_text(
        fx.ROOMY + "[index]\nrefresh_seconds = 3600\n", encoding="utf-8"
    )
    try:
        for n in range(3):
            fx.hook("bd-7f3a の状況は？", f"once-{n}")
        started = [e for e in fx.log_lines(isolated_home) if e.get("index_refresh") == "started"]
        assert len(started) == 1
    finally:
        fx.wait_for_background(isolated_home)


# --- 9. status and an empty configuration ---------------------------------------------------------


def test_status_before_and_after_a_build(stores: dict[str, Path]) -> None:
    before = fx.cli_json("index", "status")
    assert before["exists"] is False and before["documents"] == 0 and before["problem"]
    plain = fx.cli("index", "status")
    assert plain.returncode == 1 and b"No index" in plain.stdout
    report = fx.cli_json("index", "build")
    assert report["mode"] == "build" and report["documents"] == _expected_docs(stores)
    after = fx.cli_json("index", "status")
    assert after["exists"] is True and after["enabled"] is True
    assert after["documents"] == _expected_docs(stores) and after["backend"] == "sudachi"
    assert after["problem"] == "" and after["bytes"] > 0 and Path(after["path"]).is_dir()
    assert fx.cli("index", "status").returncode == 0
    off = fx.cli_json("index", "status", env={"MEMRECALL_INDEX": "off"})
    assert off["enabled"] is False


def test_build_with_no_store_configured_has_no_documents(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    monkeypatch.setenv("MEMRECALL_INDEX", "manual")
    (isolated_home / "config.toml").write_text(fx.ROOMY, encoding="utf-8")
    report = fx.cli_json("index", "build")
    assert report["documents"] == 0 and report["added"] == 0
    status = fx.cli_json("index", "status")
    assert status["exists"] is True and status["documents"] == 0 and status["problem"] == ""
    done = fx.hook("bd-7f3a の状況は？", "empty")
    assert (done.returncode, done.stdout) == (0, b"")
    assert fx.last_log(isolated_home, "empty")["decision"] == "quiet"
    again = fx.cli_json("index", "rebuild")
    assert again["documents"] == 0


def test_index_off_means_ripgrep_even_with_an_index(
    stores: dict[str, Path], isolated_home: Path
) -> None:
    _build()
    done = fx.hook("bd-7f3a の状況は？", "off", env={"MEMRECALL_INDEX": "off"})
    assert "Checkout returns 500" in _context(done)
    entry = fx.last_log(isolated_home, "off")
    assert entry["engine"] == "rg" and "index_refresh" not in entry


# --- 10. identity: same names in different roots are different memories ------------------------


@pytest.mark.parametrize("engine", ["manual", "off"])
def test_two_vaults_with_the_same_folder_name_are_two_memories(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    first, second = tmp_path / "a" / "team", tmp_path / "b" / "team"
    fx.note(first, "設計/a.md", "# 設計メモ\nAUTH-4711: セッションは Redis に 24 時間保存する。\n")
    fx.note(
        second,
        "設計/a.md",
        "# Key rotation\nAUTH-4711 rollout: tokens move to the new KMS key next quarter.\n",
    )
    for env_name, value in {
        "MEMRECALL_OBSIDIAN": os.pathsep.join([str(first), str(second)]),
        "MEMRECALL_SUMMARIES": str(tmp_path / "none"),
        "MEMRECALL_NOW": fx.NOW,
        "MEMRECALL_TOKENIZER": "sudachi",
        "MEMRECALL_INDEX": engine,
    }.items():
        monkeypatch.setenv(env_name, value)
    (isolated_home / "config.toml").write_text(fx.ROOMY, encoding="utf-8")
    if engine == "manual":
        assert _build().documents == 2
    hits = _search("AUTH-4711", engine).hits
    assert len({h.key for h in hits}) == 2 and {h.root for h in hits} == {str(first), str(second)}
    keys, contexts = set(), ""
    for prompt in ("AUTH-4711 の件どうなった？", "AUTH-4711 again, please"):
        done = fx.hook(prompt, "twins")
        if done.stdout:
            contexts += _context(done)
        keys |= {i["key"] for i in fx.last_log(isolated_home, "twins")["injected"]}
    assert keys == {
        f"obsidian:{root_tag(str(first))}:team/設計/a.md",
        f"obsidian:{root_tag(str(second))}:team/設計/a.md",
    }
    assert "Redis" in contexts and "KMS" in contexts
    assert fx.last_log(isolated_home, "twins")["engine"] == (
        "index" if engine == "manual" else "rg"
    )


@pytest.mark.parametrize("engine", ["manual", "off"])
def test_two_beads_projects_with_the_same_issue_id_are_two_memories(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    shop = fx.export(
        tmp_path / "shop" / ".beads" / "issues.jsonl",
        [
            {
                "id": "bd-a1b2",
                "title": "カート画面が遅い",
                "status": "open",
                "description": "cart_render_ms が 900 を超える。",
            }
        ],
    )
    blog = fx.export(
        tmp_path / "blog" / ".beads" / "issues.jsonl",
        [
            {
                "id": "bd-a1b2",
                "title": "RSS feed drops drafts",
                "status": "open",
                "description": "feed_builder skips drafts.",
            }
        ],
    )
    for env_name, value in {
        "MEMRECALL_BEADS": os.pathsep.join([str(shop.parent.parent), str(blog.parent.parent)]),
        "MEMRECALL_SUMMARIES": str(tmp_path / "none"),
        "MEMRECALL_NOW": fx.NOW,
        "MEMRECALL_TOKENIZER": "sudachi",
        "MEMRECALL_INDEX": engine,
    }.items():
        monkeypatch.setenv(env_name, value)
    (isolated_home / "config.toml").write_text(fx.ROOMY, encoding="utf-8")
    if engine == "manual":
        assert _build().documents == 2
    keys, contexts = set(), ""
    for prompt in ("bd-a1b2 の状況は？", "what about bd-a1b2?"):
        done = fx.hook(prompt, "ids")
        if done.stdout:
            contexts += _context(done)
        keys |= {i["key"] for i in fx.last_log(isolated_home, "ids")["injected"]}
    assert keys == {f"beads:{root_tag(str(shop))}:bd-a1b2", f"beads:{root_tag(str(blog))}:bd-a1b2"}
    assert "カート画面が遅い" in contexts and "RSS feed drops drafts" in contexts


# --- 11. containment: an export named outside .beads/ is never read ------------------------------


def _outside_export(tmp_path: Path) -> Path:
    return fx.export(
        tmp_path / "elsewhere" / "secret.jsonl",
        [
            {
                "id": "bd-leak",
                "title": "LEAK-7788 漏洩してはいけない",
                "status": "open",
                "description": "private_key_material LEAK-7788",
            }
        ],
    )


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink", "default-name-symlink"])
@pytest.mark.parametrize("engine", ["manual", "off"])
def test_an_export_outside_the_beads_folder_is_not_read(
    tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, how: str, engine: str
) -> None:
    outside = _outside_export(tmp_path)
    beads = tmp_path / "repo" / ".beads"
    beads.mkdir(parents=True)
    if how == "relative":
        (beads / "metadata.json").write_text(
            json.dumps({"jsonl_export": "../../elsewhere/secret.jsonl"}), encoding="utf-8"
        )
    elif how == "absolute":
        (beads / "metadata.json").write_text(
            json.dumps({"jsonl_export": str(outside)}), encoding="utf-8"
        )
    elif how == "symlink":
        (beads / "export.jsonl").symlink_to(outside)
        (beads / "metadata.json").write_text(
            json.dumps({"jsonl_export": "export.jsonl"}), encoding="utf-8"
        )
    else:
        (beads / "issues.jsonl").symlink_to(outside)
    # A second, honest project proves the store is read at all.
    honest = tmp_path / "honest" / ".beads"
    fx.export(
        honest / "custom.jsonl",
        [
            {
                "id": "bd-ok",
                "title": "LEAK-7788 の対策",
                "status": "open",
                "description": "leak_guard を入れた。",
            }
        ],
    )
    (honest / "metadata.json").write_text(
        json.dumps({"jsonl_export": "custom.jsonl"}), encoding="utf-8"
    )
    for env_name, value in {
        "MEMRECALL_BEADS": os.pathsep.join([str(beads.parent), str(honest.parent)]),
        "MEMRECALL_SUMMARIES": str(tmp_path / "none"),
        "MEMRECALL_NOW": fx.NOW,
        "MEMRECALL_TOKENIZER": "sudachi",
        "MEMRECALL_INDEX": engine,
    }.items():
        monkeypatch.setenv(env_name, value)
    (isolated_home / "config.toml").write_text(fx.ROOMY, encoding="utf-8")
    if engine == "manual":
        report = _build()
        assert report.documents == 1
        if how != "default-name-symlink":
            assert any("outside" in w for w in report.warnings), report.warnings
    for query in ("LEAK-7788", "private_key_material", "bd-leak", "漏洩してはいけない"):
        outcome = _search(query, engine)
        assert outcome.engine == ("index" if engine == "manual" else "rg")
        assert not [h for h in outcome.hits if h.ref == "bd-leak" or "secret" in str(h.path)], query
    assert [h.ref for h in _search("LEAK-7788 leak_guard", engine).hits] == ["bd-ok"]
    done = fx.hook("LEAK-7788 private_key_material bd-leak", "contain")
    assert (
        done.returncode == 0
        and b"private_key_material" not in done.stdout
        and b"bd-leak" not in done.stdout
    )


# --- secrets: the index's "nothing to redact here" mark is never trusted past an edit ---------

# Keys are test ids, hence part of pytest's tmp path: plain letters the gate does not watch.
SECRETS = {
    "c": "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "u": "接続先は postgres://app:p@ss/w0rd:x@db.internal:5432/shop です",
    "j": "本番DBのパスワードは Kx9-mQ2-pL7zR4 です",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_a_note_holding_a_secret_is_redacted_when_injected(
    stores: dict[str, Path], kind: str
) -> None:
    fx.note(
        stores["vault"],
        "notes/在庫同期の秘密.md",
        f"# 在庫同期の秘密\n在庫同期バッチ sync_inventory_batch の接続: {SECRETS[kind]}\n",
    )
    _build()
    done = fx.hook("sync_inventory_batch の在庫同期の接続設定は？", f"secret-{kind}")
    context = _context(done)
    assert "在庫同期" in context and "REDACTED" in context
    assert (
        "wJalrXUtnFEMI" not in context
        and "p@ss/w0rd" not in context
        and "Kx9-mQ2-pL7zR4" not in context
    )


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_late(stores: dict[str, Path], kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Indexed clean (nothing redaction would touch), then a secret is pasted in: the hook reads
    # the file back for its lines and must not trust the stale mark.
    # (Short test names: pytest puts them in the tmp path, and a path part of 20+ letters
    # looks like a token to the redaction gate.)
    # (A vault of its own: `vault` itself is a word the gate watches, for HashiCorp's CLI.)
    mine = stores["vault"].parent / "mem"
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", os.pathsep.join([str(stores["vault"]), str(mine)]))
    path = fx.note(
        mine, "notes/在庫同期の接続.md", "# 在庫同期の接続\n在庫同期バッチ の接続メモ。\n"
    )
    _build()
    first = next(
        h for h in _search("在庫同期 接続メモ").hits if h.ref.endswith("在庫同期の接続.md")
    )
    assert first.clean, "the note must be indexed as clean for this test to mean anything"
    path.write_text(
        path.read_text(encoding="utf-8") + f"在庫同期バッチの接続メモ {SECRETS[kind]}\n",
        encoding="utf-8",
    )
    # A memory cue, so that the hook speaks whatever the rest of the prompt weighs.
    done = fx.hook("前に書いた在庫同期バッチの接続メモを見たい", f"late-{kind}")
    context = _context(done)
    assert fx.last_log(stores["home"], f"late-{kind}")["engine"] == "index"
    assert (
        "wJalrXUtnFEMI" not in context
        and "p@ss/w0rd" not in context
        and "Kx9-mQ2-pL7zR4" not in context
    )


def test_late_bd(stores: dict[str, Path]) -> None:
    _build()
    lines = stores["beads"].read_text(encoding="utf-8").splitlines()
    issue = json.loads(lines[0])
    issue["description"] = (issue.get("description") or "") + " " + SECRETS["c"]
    # Same length on disk is not required: the line is found again by its offset and checked.
    stores["beads"].write_text(
        "\n".join([json.dumps(issue, ensure_ascii=False), *lines[1:]]) + "\n", encoding="utf-8"
    )
    done = fx.hook(f"{issue['id']} の状況は？", "late-beads")
    out = done.stdout.decode("utf-8")
    assert done.returncode == 0 and "wJalrXUtnFEMI" not in out


def test_the_index_folder_is_private(stores: dict[str, Path]) -> None:
    _build()
    mode = (stores["home"] / "index").stat().st_mode & 0o777
    assert mode == 0o700, oct(mode)


@pytest.mark.parametrize("engine", ["manual", "off"])
def test_an_issue_listed_twice_in_one_export_is_one_memory(
    stores: dict[str, Path], engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An export appends an issue's newer state; the older line stays. One memory, shown once.
    issues = [json.loads(line) for line in stores["beads"].read_text(encoding="utf-8").splitlines()]
    older = {
        "id": "bd-d0c5",
        "title": "請求書PDFの再発行手順",
        "status": "open",
        "priority": 2,
        "description": "請求書PDFの再発行は管理画面から行う。",
        "updated_at": "2026-11-01T10:00:00Z",
    }
    newer = {
        **older,
        "status": "closed",
        "description": "請求書PDFの再発行は管理画面から行う。API も追加した。",
        "updated_at": "2026-11-25T10:00:00Z",
    }
    fx.export(stores["beads"], [*issues, older, newer])
    monkeypatch.setenv("MEMRECALL_INDEX", engine)
    if engine == "manual":
        _build()
    done = fx.hook("bd-d0c5 の請求書PDFの再発行手順は？", f"dup-{engine}")
    context = _context(done)
    assert context.count("(bd-d0c5,") == 1, context
    entry = fx.last_log(stores["home"], f"dup-{engine}")
    assert [i["ref"] for i in entry["injected"]].count("bd-d0c5") == 1, entry


def test_without_tantivy_ripgrep_answers_and_no_build_starts(
    stores: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A platform with no tantivy wheel: recall must still work, and no background build that
    # could never succeed is started on every prompt.
    monkeypatch.setitem(sys.modules, "tantivy", None)  # `import tantivy` raises ImportError
    settings = _settings(engine="on")
    keywords, _ = tokenize_text("sync_inventory_batch はどこ？", settings.tokenizer, settings)
    from memrecall.search import search

    outcome = search(keywords, settings)
    assert outcome.engine == "rg" and "tantivy" in outcome.fallback
    assert not outcome.refresh_started
    assert not (stores["home"] / "index" / "refresh.stamp").exists()
    assert any(h.ref.endswith("在庫同期バッチ.md") for h in outcome.hits)
