"""The shipped glossary carries a Japanese prompt to the English issue that says the same thing
in other words: 白黒 / モノクロ to "no color", 依存関係のループ to a dependency cycle, ページ送り
to a pager, 複製データ型 to CRDT, インメモリ to in-memory, 重要度 to priority, 出てこない to
"shows empty", 秘密鍵 to an ssh key, 墓標 to a tombstone, 別名 to an alias, 斜め文字 to italic;
an issue tracker's own words: 件名 to title, 種別 to issue type, 放置 to stale.
A bare everyday word (ループ in "for ループ") stays itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, export, searched

ISSUES = [
    {
        "id": "bd-c010",
        "title": "No color showing in iTerm and Terminal.app",
        "description": "Status columns print without ANSI colours on macOS terminals.",
        "status": "closed",
    },
    {
        "id": "bd-cyc1",
        "title": "DetectCycles query never reports a dependency cycle",
        "description": "The path filter forbids returning to the start node.",
        "status": "closed",
    },
    {
        "id": "bd-pg01",
        "title": "Pager support for long lists",
        "description": "Pipe long lists through less; BD_PAGER overrides.",
        "status": "open",
    },
    {
        "id": "bd-crdt",
        "title": "v2 idea: rebuild storage on CRDTs",
        "description": "Merge without conflicts by construction.",
        "status": "open",
    },
    {
        "id": "bd-mem1",
        "title": 'In-memory databases fail with "no such table"',
        "description": "A shared cache with several pooled connections loses the schema.",
        "status": "closed",
    },
    {
        "id": "bd-rty1",
        "title": "Retry once after a timeout",
        "description": "A slow disk makes the first write of the export time out.",
        "status": "open",
    },
    # Each shares every other word of its prompt with the round-ten issue above it.
    {
        "id": "bd-tbl2",
        "title": "Database table not found after a rename",
        "description": "The DB says the table is not found: the migration renamed the table.",
        "status": "closed",
    },
    {
        "id": "bd-rty2",
        "title": "Export times out on large repositories",
        "description": "The export takes minutes and times out; the export then stops.",
        "status": "open",
    },
    {
        "id": "bd-rec1",
        "title": "Recurring tasks due on the 31st",
        "description": "Fixed in the date parser.",
        "status": "open",
    },
    {
        "id": "bd-rec2",
        "title": "Completed tasks skip the next month",
        "description": "Completing a task skips the next month: completed tasks skip months.",
        "status": "open",
    },
    # Round eleven, each followed by an issue sharing the prompt's other words.
    {
        "id": "bd-imp1",
        "title": "bd import hangs on a small JSONL",
        "description": "Importing 208 issues never returns.",
        "status": "closed",
    },
    {
        "id": "bd-imp2",
        "title": "bd import counts of the JSONL",
        "description": "bd import prints how many JSONL lines it read.",
        "status": "open",
    },
    {
        "id": "bd-pri1",
        "title": "Claude sends 'medium' as the priority",
        "description": "Then the command fails.",
        "status": "closed",
    },
    {
        "id": "bd-pri2",
        "title": "Claude errors loop",
        "description": "Claude repeats the same errors, errors again.",
        "status": "open",
    },
    {
        "id": "bd-blk1",
        "title": "bd blocked shows empty",
        "description": "Issues whose status is blocked are missing.",
        "status": "closed",
    },
    {
        "id": "bd-blk2",
        "title": "Blocked issues in the status view",
        "description": "The status view counts blocked issues.",
        "status": "open",
    },
    {
        "id": "bd-ssh1",
        "title": "Use the host's ssh key during docker build",
        "description": "Mount it with --mount=type=ssh to clone a private repository.",
        "status": "closed",
    },
    {
        "id": "bd-ssh2",
        "title": "Clone private repositories for the image",
        "description": "The image clones every private repository.",
        "status": "open",
    },
    {
        "id": "bd-rb01",
        "title": "Rollback plan for the December release",
        "description": "Revert the image tag; migrations stay.",
        "status": "closed",
    },
    {
        "id": "bd-rb02",
        "title": "Image size of the worker",
        "description": "The image grew; shrink the image.",
        "status": "open",
    },
    {
        "id": "bd-tmb1",
        "title": "Tombstones are dropped by a merge",
        "description": "A deleted issue comes back.",
        "status": "closed",
    },
    {
        "id": "bd-tmb2",
        "title": "Merge keeps closed issues",
        "description": "The merge driver keeps both sides of a merge.",
        "status": "open",
    },
    {
        "id": "bd-ntf1",
        "title": "Clear Notification Center banners from a script",
        "description": "AppleScript closes them all at once on macOS.",
        "status": "closed",
    },
    {
        "id": "bd-ntf2",
        "title": "A script for macOS window layouts",
        "description": "It moves the windows.",
        "status": "open",
    },
    {
        "id": "bd-rfi1",
        "title": "Keep refresh_interval at 30s",
        "description": "One second loads the cluster too much.",
        "status": "closed",
    },
    {
        "id": "bd-rfi2",
        "title": "Index size grows every week",
        "description": "The index doubles; shrink the index.",
        "status": "open",
    },
    {
        "id": "bd-crt1",
        "title": "カートの割引表示がずれる",
        "description": "定率クーポンの端数。",
        "status": "closed",
    },
    {
        "id": "bd-crt2",
        "title": "Wrong discount on the invoice",
        "description": "The invoice shows the wrong discount.",
        "status": "open",
    },
    {
        "id": "bd-ctx1",
        "title": "Context menu on a Kanban card",
        "description": "Offer the edit item only for a task.",
        "status": "open",
    },
    {
        "id": "bd-ctx2",
        "title": "Kanban card colours",
        "description": "A card shows its colour; cards in a column share it.",
        "status": "open",
    },
    {
        "id": "bd-nf01",
        "title": "bd delete: issues not found",
        "description": "Closed ones fail.",
        "status": "open",
    },
    {
        "id": "bd-nf02",
        "title": "Bulk delete of closed issues",
        "description": "Delete many closed issues at once; closed issues only.",
        "status": "open",
    },
    {
        "id": "bd-cb01",
        "title": "Code block under a task is hidden",
        "description": "Indented under the checkbox.",
        "status": "open",
    },
    {
        "id": "bd-cb02",
        "title": "Indent of a task under a checkbox",
        "description": "The checkbox indent is lost; indent twice.",
        "status": "open",
    },
    {
        "id": "bd-js01",
        "title": "Smoke test: JS setting disabled",
        "description": "These queries should fail.",
        "status": "open",
    },
    {
        "id": "bd-js02",
        "title": "Query settings page",
        "description": "Group the query settings; settings for queries.",
        "status": "open",
    },
    {
        "id": "bd-hd12",
        "title": "Group headings by weekday and week number",
        "description": "Tasks grouped under headings per due date.",
        "status": "open",
    },
    {
        "id": "bd-ok12",
        "title": "Count success and error per api path",
        "description": "One query, success next to error.",
        "status": "open",
    },
    {
        "id": "bd-cs12",
        "title": "Write a page for customer support about the new discounts",
        "description": "Examples of percentage discount with a flat discount.",
        "status": "open",
    },
    {
        "id": "bd-ut12",
        "title": "Sync deletes untracked files",
        "description": "Files outside .beads are removed.",
        "status": "open",
    },
    # Round thirteen: names of symbols and shapes, each after an issue sharing the other words.
    {
        "id": "bd-al13",
        "title": "Add a short alias for the comments add command",
        "description": "Typing the full command is tedious.",
        "status": "closed",
    },
    {
        "id": "bd-cm13",
        "title": "The comments add command is slow",
        "description": "Adding a comment takes seconds; the command waits on the lock.",
        "status": "open",
    },
    {
        "id": "bd-dm13",
        "title": "Diamond dependencies print once in the dependency tree",
        "description": "A child with two parents shows under the first parent only.",
        "status": "open",
    },
    {
        "id": "bd-tr13",
        "title": "Dependency tree of dependencies is too deep to read",
        "description": "The dependency tree nests dependencies twenty levels deep, once per level.",
        "status": "open",
    },
    {
        "id": "bd-it13",
        "title": "Group headings turn italic when a file name has underscores",
        "description": "Markdown reads the underscores as emphasis.",
        "status": "closed",
    },
    {
        "id": "bd-fn13",
        "title": "Group headings show the file name",
        "description": "Headings name the file of each group.",
        "status": "open",
    },
    {
        "id": "bd-ls13",
        "title": "Checklist items starting with an asterisk or a plus sign",
        "description": "Only hyphen bullets were parsed as tasks.",
        "status": "closed",
    },
    {
        "id": "bd-cl13",
        "title": "Checklist items lose their indentation",
        "description": "Checklist items in nested lists start at the left margin.",
        "status": "open",
    },
    {
        "id": "bd-tn13",
        "title": "Go has no ternary operator",
        "description": "Write an if statement or a small helper function instead.",
        "status": "open",
    },
    {
        "id": "bd-gn13",
        "title": "Go has no generics before 1.18",
        "description": "Go 1.17 has no type parameters: why Go code repeats itself.",
        "status": "open",
    },
    {
        "id": "bd-ch13",
        "title": "Run the chaos tests only for a release",
        "description": "The external PR adds tests that run for every push.",
        "status": "closed",
    },
    {
        "id": "bd-rl13",
        "title": "Run the integration tests for a release",
        "description": "Tests that run for every push take too long; run tests for a release.",
        "status": "open",
    },
    {
        "id": "bd-go13",
        "title": "Split the Issue god object into embedded structs",
        "description": "One struct per concern.",
        "status": "open",
    },
    {
        "id": "bd-st13",
        "title": "Issue struct fields in the JSON",
        "description": "The Issue struct marshals every field; the struct is large.",
        "status": "open",
    },
    # Round fourteen: an issue tracker's own fields and states, each beside a decoy that
    # shares the prompt's other words.
    {
        "id": "bd-ti14",
        "title": "Events carry the issue title",
        "description": "Adding a label emits an event without it.",
        "status": "closed",
    },
    {
        "id": "bd-lb14",
        "title": "Label events in the activity feed",
        "description": "Adding a label emits an event.",
        "status": "open",
    },
    {
        "id": "bd-ty14",
        "title": "Change an issue type after creation",
        "description": "bd update cannot change it once the issue exists.",
        "status": "open",
    },
    {
        "id": "bd-pr14",
        "title": "Change the priority after creation",
        "description": "bd update cannot change it once the issue exists.",
        "status": "open",
    },
    {
        "id": "bd-sl14",
        "title": "A command to list stale issues",
        "description": "Issues nobody updated for 30 days.",
        "status": "open",
    },
    {
        "id": "bd-rd14",
        "title": "A command to list ready issues",
        "description": "Issues nobody claimed yet.",
        "status": "open",
    },
    {
        "id": "bd-wi14",
        "title": "Ephemeral issues leak into the export",
        "description": "The JSONL export writes them to git.",
        "status": "open",
    },
    {
        "id": "bd-cl14",
        "title": "Closed issues leak into the export",
        "description": "The JSONL export writes them to git.",
        "status": "open",
    },
    {
        "id": "bd-sd14",
        "title": "Put the git tests' scratch directory on a shared runner",
        "description": "The tests are I/O bound.",
        "status": "open",
    },
    {
        "id": "bd-rm14",
        "title": "Put the git tests' scratch directory on tmpfs",
        "description": "The tests are I/O bound.",
        "status": "open",
    },
    {
        "id": "bd-f0r1",
        "title": "Speed up the main for loop in the exporter",
        "description": "The loop walks every issue twice.",
        "status": "open",
    },
]


@pytest.fixture
def project(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", ISSUES + chores()).parent
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize(
    ("prompt", "issue"),
    [
        ("Mac だと bd の出力が白黒のままなんだよね", "bd-c010"),
        ("ターミナルで出力がモノクロになる件", "bd-c010"),
        ("依存関係のループがあっても検出されない", "bd-cyc1"),
        ("循環検出のクエリが何も返さない", "bd-cyc1"),
        ("一覧が長すぎるのでページ送りしながら読みたい", "bd-pg01"),
        ("競合しない複製データ型で作り直す案", "bd-crdt"),
        # Round ten.
        ("インメモリの DB だとテーブルが見つからないと言われる", "bd-mem1"),
        ("the export should try again after it times out", "bd-rty1"),
        ("繰り返しのタスクを完了すると次の月を飛ばしてしまう", "bd-rec1"),
        # Round eleven.
        ("JSONL を bd import で取り込むといつまでも終わらない", "bd-imp1"),
        ("Claude が重要度を変な言葉で渡してくる", "bd-pri1"),
        ("ステータスが blocked の issue がコマンドに出てこない", "bd-blk1"),
        ("イメージのビルド中に秘密鍵でプライベートリポジトリを clone したい", "bd-ssh1"),
        ("切り戻しはイメージを戻すだけでいい?", "bd-rb01"),
        ("墓標がマージで消える", "bd-tmb1"),
        # An inflection the glossary does not list finds the group of the one it does.
        ("the carts show a wrong discount", "bd-crt1"),
        ("right-clicking a Kanban card", "bd-ctx1"),
        ("which queries break with JavaScript turned off in the settings", "bd-js01"),
        ("closed の issue を delete すると見つからないと言われる", "bd-nf01"),
        ("チェックボックスの下にインデントしたコードスニペットが消える", "bd-cb01"),
        ("Kanban のカードを右クリックしたとき", "bd-ctx1"),
        ("macOS のお知らせバナーをスクリプトで全部消したい", "bd-ntf1"),
        ("インデックスの更新間隔をもっと短くできない?", "bd-rfi1"),
        # Round twelve.
        ("期限日で週番号の見出しを分けて曜日で並べたい", "bd-hd12"),
        ("パスごとに成功の件数を出すクエリ", "bd-ok12"),
        ("カスタマーサポート向けに定率と定額の割引の例をまとめた件", "bd-cs12"),
        ("同期で管理外のファイルが消える", "bd-ut12"),
        # Round thirteen.
        ("コメント追加のコマンドに短い別名を付けた件", "bd-al13"),
        ("依存ツリーでひし形の依存が一回しか表示されない", "bd-dm13"),
        ("ファイル名にアンダーバーがあるとグループ見出しが斜め文字になる", "bd-it13"),
        ("行頭が星印やプラス記号のチェックリスト", "bd-ls13"),
        ("Go に三項演算子がないのはなぜ", "bd-tn13"),
        ("わざと障害を起こすテストはリリースのときだけ回す", "bd-ch13"),
        ("Issue 構造体が何でも詰め込んだ巨大な型になってる", "bd-go13"),
        # Round fourteen.
        ("ラベルを足したときのイベントに件名が出てこない", "bd-ti14"),
        ("作ったあとで issue の種別を変えたい", "bd-ty14"),
        ("放置されてる issue を一覧にするコマンド", "bd-sl14"),
        ("使い捨ての issue がエクスポートに漏れてる", "bd-wi14"),
        ("git のテストの作業ディレクトリをラムディスクに置く案", "bd-rm14"),
    ],
)
def test_a_japanese_prompt_finds_the_english_issue(
    project: Path, engine: str, prompt: str, issue: str
) -> None:
    refs = [hit.ref for hit in searched(prompt, engine).hits]
    assert refs[:1] == [issue], refs


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_an_everyday_loop_is_not_a_dependency_cycle(project: Path, engine: str) -> None:
    refs = [hit.ref for hit in searched("この for ループを速くしたい", engine).hits]
    assert "bd-cyc1" not in refs


def test_an_inflection_takes_the_group_of_the_form_the_glossary_lists(isolated_home: Path) -> None:
    from memrecall.config import load_settings
    from memrecall.glossary import add_inflections, glossary_files, load_synonyms

    paths = glossary_files(load_settings())
    groups = load_synonyms(paths, {"pinned", "carts", "folks"})
    # The glossary lists `pinning` and `cart`, never `pinned` or `carts`.
    assert "pinned" not in groups and "carts" not in groups
    add_inflections(paths, ["pinned", "carts", "folks"], groups)
    assert "バージョン固定" in groups["pinned"]
    assert "カート" in groups["carts"]
    assert "folks" not in groups
