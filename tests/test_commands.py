"""`bd list`, `bd sync`, `bd pin` name one command of beads' CLI, where `list` and `sync`
alone are every project's words: the pair is one keyword, specific for the gate, and finds the
issue about that command before the issues that merely say "list"."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, export, searched

from memrecall.config import load_settings
from memrecall.gate import generic_keys, load_generic
from memrecall.keywords import index_terms, term_key
from memrecall.resources import shipped_generic
from memrecall.tokenize import tokenize_text
from memrecall.tokenizers import resolve


def _keywords(prompt: str) -> list[tuple[str, str]]:
    settings = load_settings()
    keywords, _ = tokenize_text(prompt, "sudachi", settings)
    return [(k.text, k.subkind) for k in keywords]


@pytest.mark.parametrize(
    ("prompt", "command"),
    [
        ("bd list を叩いたら固まった", "bd list"),
        ("after bd sync the issues vanished", "bd sync"),
        ("bd pin で固定したのに外れる", "bd pin"),
    ],
)
def test_a_bd_subcommand_is_one_keyword(isolated_home: Path, prompt: str, command: str) -> None:
    found = _keywords(prompt)
    assert (command, "command") in found
    # Its word stays, as a piece: an issue saying only "list" still matches, for less.
    assert (command.split()[1], "part") in found


@pytest.mark.parametrize(
    ("prompt", "command"),
    [
        ("bd show しただけで pin が外れる", "bd show"),
        ("Why does bd update reset the assignee?", "bd update"),
        ("bd list とか bd show みたいな読むだけのコマンド", "bd show"),
    ],
)
def test_a_subcommand_whose_word_is_a_stopword_is_still_a_command(
    isolated_home: Path, prompt: str, command: str
) -> None:
    assert (command, "command") in _keywords(prompt)


def test_a_command_inside_backticks_is_a_piece_of_the_span(isolated_home: Path) -> None:
    found = _keywords("`bd doctor --fix` を実行したら")
    assert ("bd doctor --fix", "code") in found and ("bd doctor", "part") in found


@pytest.mark.parametrize(
    "prompt", ["every bd command stalls", "the bd binary is too old", "bd is slow on big repos"]
)
def test_prose_after_bd_is_no_command(isolated_home: Path, prompt: str) -> None:
    assert all(kind != "command" for _, kind in _keywords(prompt))


def test_a_command_is_specific_where_its_word_is_everyday(isolated_home: Path) -> None:
    settings = load_settings()
    keywords, _ = tokenize_text("bd list が固まる", "sudachi", settings)
    generic = generic_keys(keywords, load_generic([shipped_generic()]))
    assert "bd list" not in generic


def test_stored_text_holds_the_command_and_its_word() -> None:
    analyzer, _ = resolve("sudachi", None)
    terms = index_terms("Running bd list hangs forever.", analyzer)
    assert term_key("bd list") in terms and "list" in terms


@pytest.fixture
def stores(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    issues = [
        {
            "id": "bd-h4n9",
            "title": "bd list can hang indefinitely",
            "description": "No timeout on the RPC call.",
            "status": "closed",
        },
        {
            "id": "bd-l1st",
            "title": "Sort the list of labels",
            "description": "The list view should sort labels and hang them off the title.",
            "status": "open",
        },
    ] + chores()
    beads = export(tmp_path / "proj" / ".beads" / "issues.jsonl", issues).parent
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return tmp_path


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_the_command_finds_its_issue_first(stores: Path, engine: str) -> None:
    refs = [hit.ref for hit in searched("bd list が固まって返ってこない", engine).hits]
    assert refs[:1] == ["bd-h4n9"]
