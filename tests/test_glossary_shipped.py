"""The shipped glossary carries a Japanese prompt to the English issue that says the same thing
in other words: 白黒 / モノクロ to "no color", 依存関係のループ to a dependency cycle, ページ送り
to a pager, 複製データ型 to CRDT, インメモリ to in-memory. A bare everyday word (ループ in
"for ループ") stays itself."""

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
