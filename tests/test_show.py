"""`memrecall show REF` and the pull path's candidates (`search --json`'s summary and tags).

What Claude sees when it reads a memory it picked: the headings and the lines that matter of
a long note (or the whole of it on request), a beads issue as a person would read it, the
links it can follow, nothing outside the configured stores, no secret and no terminal escape.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from _index_fixtures import build_stores, export, note, summary

from memrecall.__main__ import main

Stores = dict[str, Path]
Capsys = pytest.CaptureFixture[str]

LONG = """---
title: 在庫同期バッチの設計
summary: 夜間の在庫同期バッチをどう組んだか。
tags: [inventory, batch]
aliases: [stock sync]
---
# 在庫同期バッチの設計

夜間に倉庫システムから在庫を取り込むバッチ。
取り込みは 15 分ごとの差分と夜間の全件の二本立て。
差分は更新日時で絞る。
全件は日曜だけ。

## 背景
倉庫側の API は 1 分に 60 回まで。
ページングは cursor 方式。
古い API は offset 方式だった。
移行は 2026 年 10 月に終わった。

## 決まったこと
- リトライは 3 回まで、指数バックオフ。
- 二重加算の原因は INV-4521 のリトライだったので、冪等キーを入れることにした。
- ログは info で十分。
- 通知は Slack に出す。

## 手順
```sh
sync_inventory --full --dry-run
sync_inventory --full
```
実行前に在庫ロックを確認する。
ロックは 10 分で切れる。

関連: [[監視設計]] [[設計/認証フロー]] [[存在しないノート]] ![[diagram.png]]
"""

ISSUES: list[dict[str, Any]] = [
    {
        "id": "shop-a1b2",
        "title": "決済タイムアウトの再試行",
        "status": "closed",
        "priority": 1,
        "issue_type": "bug",
        "labels": ["payment", "timeout"],
        "assignee": "hanako",
        "description": "PAY-1234: 決済 API が 10 秒でタイムアウトする。\n"
        "再試行で二重決済になる恐れ。",
        "design": "冪等キーを決済リクエストに付ける。",
        "acceptance_criteria": "二重決済がゼロ。",
        "notes": "ステージングで 1 週間観察した。",
        "close_reason": "冪等キーで解決",
        "created_at": "2026-11-01T10:00:00Z",
        "updated_at": "2026-11-20T10:00:00Z",
        "closed_at": "2026-11-20T10:00:00Z",
        "dependencies": [{"issue_id": "shop-a1b2", "depends_on_id": "shop-c3d4", "type": "blocks"}],
        "comments": [
            {"author": "taro", "text": "再現手順を追加", "created_at": "2026-11-02T10:00:00Z"},
        ],
        "external_ref": "PAY-1234",
    },
    {
        "id": "shop-c3d4",
        "title": "決済クライアントの更新",
        "status": "open",
        "priority": 2,
        "description": "新しい SDK に上げる。",
        "updated_at": "2026-11-10T10:00:00Z",
    },
    {
        "id": "shop-e5f6",
        "title": "請求書の再発行",
        "status": "open",
        "priority": 3,
        "description": "再発行の API。",
        "updated_at": "2026-11-11T10:00:00Z",
        "dependencies": [
            {"issue_id": "shop-e5f6", "depends_on_id": "shop-a1b2", "type": "related"}
        ],
    },
]


@pytest.fixture
def stores(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Stores:
    found = build_stores(tmp_path, isolated_home, monkeypatch)
    note(found["vault"], "設計/在庫同期バッチ.md", LONG)
    export(found["beads"], ISSUES)
    return found


def show(capsys: Capsys, *args: str) -> tuple[int, str, str]:
    code = main(["show", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def show_json(capsys: Capsys, *args: str) -> dict[str, Any]:
    code, out, err = show(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def search_json(capsys: Capsys, *args: str) -> list[dict[str, Any]]:
    code = main(["search", *args, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


# --- markdown -----------------------------------------------------------------------------------


def test_outline_is_every_heading_and_the_lines_that_matter(
    stores: Stores,
    capsys: Capsys,
) -> None:
    code, out, err = show(capsys, "設計/在庫同期バッチ.md")
    assert code == 0, err
    head = out.split("\n\n", 1)[0].split("\n")
    assert head[0] == "在庫同期バッチの設計"
    assert head[1].startswith("obsidian · ") and head[1].endswith(" · 設計/在庫同期バッチ.md")
    assert head[2] == f"path: {stores['vault'] / '設計' / '在庫同期バッチ.md'}"
    assert head[3:] == ["summary: 夜間の在庫同期バッチをどう組んだか。", "tags: inventory, batch"]
    for heading in ("# 在庫同期バッチの設計", "## 背景", "## 決まったこと", "## 手順"):
        assert f"\n{heading}\n" in out
    # The first line under each heading, and lines stating a decision or naming an id.
    assert "夜間に倉庫システムから在庫を取り込むバッチ。" in out
    assert "倉庫側の API は 1 分に 60 回まで。" in out
    assert "二重加算の原因は INV-4521 のリトライだったので、冪等キーを入れることにした。" in out
    # The rest is left out, each gap shown once.
    fillers = ("全件は日曜だけ。", "ページングは cursor 方式。", "ログは info で十分。")
    for filler in (*fillers, "sync_inventory --full\n"):
        assert filler not in out
    assert "\n…\n" in out and "…\n…" not in out
    assert "frontmatter" not in out and "aliases:" not in out


def test_query_keeps_the_lines_holding_its_words(stores: Stores, capsys: Capsys) -> None:
    code, out, _ = show(capsys, "設計/在庫同期バッチ.md", "--query", "在庫ロック")
    assert code == 0
    assert "実行前に在庫ロックを確認する。" in out and "## 手順" in out and "## 背景" in out
    assert "倉庫側の API は 1 分に 60 回まで。" not in out


def test_full_is_the_whole_note_with_its_frontmatter(
    stores: Stores,
    capsys: Capsys,
) -> None:
    for args in (("--full",), ("--full", "--query", "在庫ロック")):
        code, out, _ = show(capsys, "設計/在庫同期バッチ.md", *args)
        assert code == 0
        body = out.split("\n\n", 1)[1]
        assert body.startswith(LONG.rstrip("\n"))


def test_outline_and_full_exclude_each_other(stores: Stores, capsys: Capsys) -> None:
    code, out, err = show(capsys, "設計/在庫同期バッチ.md", "--outline", "--full")
    assert (code, out) == (2, "") and err == "Error: --outline and --full exclude each other\n"


def test_a_short_note_is_shown_whole(stores: Stores, capsys: Capsys) -> None:
    code, out, _ = show(capsys, "notes/在庫同期バッチ.md", "--outline")
    assert code == 0
    assert out.endswith(
        "\n\n# 在庫同期バッチ\n"
        "在庫同期バッチで SKU が二重に加算されるバグがあった。\n"
        "原因は `sync_inventory_batch` のリトライ。\n"
    )


def test_links_are_listed_with_the_ref_each_resolves_to(
    stores: Stores,
    capsys: Capsys,
) -> None:
    code, out, _ = show(capsys, "設計/在庫同期バッチ.md")
    assert code == 0
    assert out.endswith(
        "\nLinks:\n- [[監視設計]] → notes/監視設計.md\n- [[設計/認証フロー]] → 設計/認証フロー.md\n"
        "- [[存在しないノート]] → (no such note)\n"
    )
    shown = show_json(capsys, "設計/在庫同期バッチ.md")
    assert shown["links"] == [
        {"target": "監視設計", "ref": "notes/監視設計.md"},
        {"target": "設計/認証フロー", "ref": "設計/認証フロー.md"},
        {"target": "存在しないノート", "ref": None},
    ]
    # Each ref leads on.
    assert show_json(capsys, shown["links"][0]["ref"])["title"] == "監視設計"


def test_json_has_every_field(stores: Stores, capsys: Capsys) -> None:
    shown = show_json(capsys, "設計/在庫同期バッチ.md")
    keys = ("store", "ref", "title", "summary", "tags", "mode", "status", "priority")
    assert {k: shown[k] for k in keys} == {
        "store": "obsidian",
        "ref": "設計/在庫同期バッチ.md",
        "title": "在庫同期バッチの設計",
        "summary": "夜間の在庫同期バッチをどう組んだか。",
        "tags": ["inventory", "batch"],
        "mode": "outline",
        "status": None,
        "priority": None,
    }
    assert shown["path"] == str(stores["vault"] / "設計" / "在庫同期バッチ.md")
    assert "## 決まったこと" in shown["text"] and "Links:" not in shown["text"]
    assert show_json(capsys, "設計/在庫同期バッチ.md", "--full")["mode"] == "full"


def test_a_summary_is_shown_by_its_ref(stores: Stores, capsys: Capsys) -> None:
    code, out, _ = show(capsys, "2026/11/2026-11-28-aaaa1111.md")
    assert code == 0
    assert out.startswith("決済タイムアウト値の見直し\nsummaries · 2026-11-2")
    assert "PAY-1234 の決済タイムアウトを 5 秒、リトライ 1 回に変更した。" in out
    full = show_json(capsys, "2026/11/2026-11-28-aaaa1111.md", "--full")
    assert full["store"] == "summaries"
    assert full["text"].startswith("---\ntitle: 決済タイムアウト値の見直し\n")


def test_a_path_to_a_file_inside_a_store_works_too(
    stores: Stores,
    capsys: Capsys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    absolute = stores["vault"] / "設計" / "在庫同期バッチ.md"
    assert show_json(capsys, str(absolute))["ref"] == "設計/在庫同期バッチ.md"
    monkeypatch.chdir(stores["vault"] / "notes")
    assert show_json(capsys, "../設計/在庫同期バッチ.md")["ref"] == "設計/在庫同期バッチ.md"


# --- beads ----------------------------------------------------------------------------------------


def test_a_beads_issue_is_rendered_readably(stores: Stores, capsys: Capsys) -> None:
    code, out, _ = show(capsys, "shop-a1b2")
    assert code == 0
    assert out.startswith("shop-a1b2 · 決済タイムアウトの再試行\nbeads · 2026-11-20 · shop-a1b2\n")
    for line in (
        "status: closed · priority: P1 · type: bug · assignee: hanako",
        "labels: payment, timeout",
        (
            "## Description\nPAY-1234: 決済 API が 10 秒でタイムアウトする。\n"
            "再試行で二重決済になる恐れ。"
        ),
        "## Design\n冪等キーを決済リクエストに付ける。",
        "## Acceptance criteria\n二重決済がゼロ。",
        "## Notes\nステージングで 1 週間観察した。",
        "## Close reason\n冪等キーで解決",
        "## Depends on\n- shop-c3d4 (blocks): 決済クライアントの更新 · open",
        "## Dependents\n- shop-e5f6 (related): 請求書の再発行 · open",
        "## Comments (1)\n- taro 2026-11-02",
    ):
        assert line in out, line
    assert "created: 2026-11-0" in out and "closed: 2026-11-2" in out
    assert '"id"' not in out and "{" not in out  # never a raw JSON line
    assert "external_ref" not in out
    full = show_json(capsys, "SHOP-A1B2", "--full")  # typed in capitals
    assert (full["store"], full["ref"]) == ("beads", "shop-a1b2")
    assert (full["status"], full["priority"]) == ("closed", 1)
    assert full["tags"] == ["payment", "timeout"] and "- external_ref: PAY-1234" in full["text"]


def test_a_long_issue_field_is_cut_in_the_outline_and_whole_in_full(
    stores: Stores,
    capsys: Capsys,
) -> None:
    export(
        stores["beads"],
        [
            {
                "id": "shop-l0ng",
                "title": "長い説明",
                "status": "open",
                "description": "\n".join(f"行 {n}" for n in range(40)),
            }
        ],
    )
    outline = show_json(capsys, "shop-l0ng")["text"]
    assert "行 11" in outline and "行 12" not in outline and "… (28 more lines: --full)" in outline
    assert "行 39" in show_json(capsys, "shop-l0ng", "--full")["text"]


# --- refs from search -----------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_every_ref_search_gives_can_be_shown(
    stores: Stores,
    capsys: Capsys,
    engine: str,
) -> None:
    if engine == "index":
        assert main(["index", "build"]) == 0
        capsys.readouterr()
    hits = search_json(capsys, "決済 タイムアウト 在庫同期", "--limit", "20")
    assert {h["store"] for h in hits} == {"beads", "obsidian", "summaries"}
    for hit in hits:
        shown = show_json(capsys, hit["ref"])
        assert (shown["store"], shown["ref"]) == (hit["store"], hit["ref"])


def test_refs_of_several_vaults_and_of_saved_memories_carry_their_label(
    stores: Stores,
    tmp_path: Path,
    capsys: Capsys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    second = tmp_path / "private-vault"
    note(second, "ideas/在庫同期の改善案.md", "# 在庫同期の改善案\n差分は 5 分ごと。\n")
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", os.pathsep.join([str(stores["vault"]), str(second)]))
    memories = stores["home"] / "memories" / "shop"
    note(
        memories,
        "2026-12-01-在庫同期メモ.md",
        "---\ntitle: 在庫同期メモ\ntags: [memory]\n---\n在庫同期は冪等に。\n",
    )
    refs = {h["ref"] for h in search_json(capsys, "在庫同期", "--limit", "30")}
    assert {
        "vault/設計/在庫同期バッチ.md",
        "private-vault/ideas/在庫同期の改善案.md",
        "memories/shop/2026-12-01-在庫同期メモ.md",
    } <= refs
    for ref in refs:
        assert show_json(capsys, ref)["ref"] == ref


# --- refused and unknown --------------------------------------------------------------------


def test_refs_escaping_the_stores_are_refused(
    stores: Stores,
    tmp_path: Path,
    capsys: Capsys,
) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("# outside\nAKIAQ7RX4MZP2VKDBRCH\n", encoding="utf-8")
    (stores["vault"] / "notes" / "link.md").symlink_to(outside)
    (stores["vault"] / "dot.env").write_text("TOKEN=x\n", encoding="utf-8")
    for ref in (
        "../../etc/passwd",
        "/etc/passwd",
        str(outside),
        "notes/../../secret.md",
        "notes/link.md",
        "2026/../../secret.md",
        "/nonexistent/anywhere.md",
    ):
        code, out, err = show(capsys, ref)
        assert (code, out) == (2, ""), ref
        assert err.startswith("Error: refused: "), ref
        assert err.endswith(" is outside every configured memory store\n"), ref
    hidden = stores["vault"] / ".obsidian" / "workspace.md"
    for ref in (".obsidian/workspace.md", "dot.env", str(hidden)):
        code, out, err = show(capsys, ref)
        assert (code, out) == (2, ""), ref
        assert err.startswith("Error: refused: ") and "not a note" in err, ref


@pytest.mark.parametrize(
    "ref",
    ["bd-zzzz", "notes/no-such-note.md", "2026/11/2026-11-30-zzzz9999.md", "nothing"],
)
def test_an_unknown_ref_is_one_line(stores: Stores, capsys: Capsys, ref: str) -> None:
    code, out, err = show(capsys, ref)
    assert (code, out) == (1, "")
    assert err == f"Error: no memory {ref} (try memrecall search 'words' to find its ref)\n"


# --- what is shown is inert -----------------------------------------------------------------


def test_secrets_are_redacted_and_escapes_removed(
    stores: Stores,
    capsys: Capsys,
) -> None:
    aws, github = "AKIAQ7RX4MZP2VKDBRCH", "ghp_CwdFolder7Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9P"
    password = "S3cr3t-Pa55w0rd-Z9"
    note(
        stores["vault"],
        "notes/hostile.md",
        f"---\ntitle: \x1b]8;;http://evil\x07key {aws}\x1b]8;;\x07\nsummary: see {github}\n---\n"
        f"# \u202eevil\n\x1b[31mred\x1b[0m postgres://app:{password}@db:5432/x\n",
    )
    for args in ((), ("--full",), ("--json",), ("--full", "--json")):
        code, out, _ = show(capsys, "notes/hostile.md", *args)
        assert code == 0
        for bad in ("\x1b", "\x07", "\u202e", aws, github, password):
            assert bad not in out, (args, bad)
        assert "[REDACTED:" in out


# --- search --json: what the pull path picks candidates by ----------------------------------


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_search_json_gives_a_summary_and_tags_per_hit(
    stores: Stores,
    capsys: Capsys,
    engine: str,
) -> None:
    summary(
        stores["summaries"],
        "2026-11-29",
        "ffff6666",
        "在庫同期の監視",
        "在庫同期バッチの監視を足した。",
        "[在庫同期, monitoring]",
    )
    if engine == "index":
        assert main(["index", "build"]) == 0
        capsys.readouterr()
    hits = {h["ref"]: h for h in search_json(capsys, "在庫同期バッチ", "--limit", "20")}
    own = hits["設計/在庫同期バッチ.md"]
    assert own["summary"] == "夜間の在庫同期バッチをどう組んだか。"
    assert own["tags"] == ["inventory", "batch"]
    # No summary of its own: the best matching line.
    plain = hits["notes/在庫同期バッチ.md"]
    line = "在庫同期バッチで SKU が二重に加算されるバグがあった。"
    assert plain["summary"] == plain["snippet"] == line
    assert plain["tags"] == ["inventory"]
    assert hits["2026/11/2026-11-29-ffff6666.md"]["tags"] == ["在庫同期", "monitoring"]
    issue = {h["ref"]: h for h in search_json(capsys, "決済タイムアウトの再試行")}["shop-a1b2"]
    assert issue["tags"] == ["payment", "timeout"] and issue["summary"] == issue["snippet"]
