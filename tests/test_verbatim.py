"""An error message or a title pasted whole leads: the memory that holds those words in that
order ranks before memories that merely share them, on either engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched

from memrecall.search import quoted_spans, verbatim_phrases


@pytest.mark.parametrize(
    ("prompt", "phrase"),
    [
        ("Error: no beads database found ってエラーが出る", "no beads database found"),
        (
            "Was 'bd create --help creates an actual issue' ever fixed?",
            "bd create --help creates an actual issue",
        ),
        ("「Refactor sqlite.go into modules」の件", "refactor sqlite.go into modules"),
        ("panic: assignment to entry in nil map\n\tat main.go", "assignment to entry in nil map"),
    ],
)
def test_a_pasted_run_of_words_is_a_phrase(prompt: str, phrase: str) -> None:
    assert phrase in verbatim_phrases(prompt)


@pytest.mark.parametrize(
    "prompt",
    [
        "DB 接続がタイムアウトする",
        "fix the flaky test",
        "CI が落ちる: go vet で",
        "README を直して",
        "assignment to entry\nin nil map",  # a line break ends a run
    ],
)
def test_short_runs_and_japanese_are_no_phrase(prompt: str) -> None:
    assert verbatim_phrases(prompt) == []


@pytest.fixture
def stores(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    vault = tmp_path / "vault"
    note(vault, "note/clone.md", "# clone\n\nA shallow clone is enough for CI.\n")
    diary(vault)
    # Issues that share every word of the message, in their titles too, but not the message.
    lookalikes = [
        {
            "id": f"bd-db{n}",
            "title": f"beads database not found after {place}",
            "description": f"The beads database is not found when {place}; no error is shown.",
            "status": "open",
        }
        for n, place in enumerate(["a clone", "a rebase", "an upgrade", "a worktree switch"])
    ]
    pasted = {
        "id": "bd-msg1",
        "title": "Confusing message on a fresh checkout",
        "description": "Running bd list prints:\n\nError: no beads database found\n\nat first run.",
        "status": "open",
    }
    issues = lookalikes + [pasted] + chores()
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_the_memory_holding_the_pasted_message_ranks_first(stores: Path, engine: str) -> None:
    prompt = "Error: no beads database found ってエラーが出た。前にも見た気がする"
    refs = [hit.ref for hit in searched(prompt, engine).hits]
    assert refs[:1] == ["bd-msg1"], refs


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_the_same_words_in_another_order_win_nothing(stores: Path, engine: str) -> None:
    prompt = "found no database for beads ってエラーが出た"
    refs = [hit.ref for hit in searched(prompt, engine).hits]
    assert refs and refs[0] != "bd-msg1", refs


# --- a quoted title -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prompt", "spans"),
    [
        ("「Issue 2」の件、どうなったっけ", {"issue 2"}),
        ("前に書いた『雑記13』のメモ", {"雑記13"}),
        ("what happened to “Performance  Test 4”?", {"performance test 4"}),
        ('the "Reuse instructions" page and `bd sync`', {"reuse instructions", "bd sync"}),
        ("Did we finish 'Rapid 3'?", {"rapid 3"}),
        # An apostrophe inside a word quotes nothing.
        ("don't touch the user's config, it's fine", set()),
    ],
)
def test_what_a_prompt_quotes(prompt: str, spans: set[str]) -> None:
    assert quoted_spans(prompt) == spans


@pytest.fixture
def numbered(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Six issues and twenty notes whose titles differ only in a number."""
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    vault = tmp_path / "vault"
    diary(vault)
    issues = [
        {
            "id": f"bd-pf{n}",
            "title": f"Performance test {n}",
            "description": "Measure the export with a large database.",
            "status": "open",
        }
        for n in range(1, 7)
    ]
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues + chores()).parent
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
@pytest.mark.parametrize(
    ("prompt", "ref"),
    [
        ("「Performance test 4」の件、どうなったっけ", "bd-pf4"),
        ("Whatever happened to 'performance test 5'?", "bd-pf5"),
        ("前に書いた『雑記13』のメモ、なんだっけ", "note/雑記13.md"),
    ],
)
def test_the_memory_whose_title_is_quoted_leads(
    numbered: Path, engine: str, prompt: str, ref: str
) -> None:
    refs = [hit.ref for hit in searched(prompt, engine).hits]
    assert refs[:1] == [ref], refs
