"""Keywords that meet in one place of a memory (a line and the two after it) order it ahead
of a memory that holds the same words scattered over its length; the recall gate still weighs
the score without that boost (ranking.PROXIMITY_BOOST)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _index_fixtures import chores, diary, export, note, searched

FILLER = "\n".join(f"手順{n}: 画面のボタンを押して次へ進む。" for n in range(6))

# The same words, the same number of times, in notes of the same length; only where the
# prompt's words stand differs. The scattered note sorts first by name, so a tie would put it
# first.
TOGETHER = f"# 調査メモ\n\n{FILLER}\n\n{FILLER}\n\nレプリカの遅延が朝だけ増える。\n"
APART = f"# 調査メモ\n\nレプリカ。\n\n{FILLER}\n\n遅延。\n\n{FILLER}\n\n朝だけ増える。\n"

ISSUE_TOGETHER = {
    "id": "bd-tg01",
    "title": "Nightly job notes",
    "description": "The webhook retries pile up behind the rate limiter.\n\n"
    + "\n".join(f"Step {n}: click through the wizard." for n in range(12)),
    "status": "open",
}
ISSUE_APART = {
    "id": "bd-ap01",
    "title": "Nightly job notes",
    "description": "The webhook fires twice.\n\n"
    + "\n".join(f"Step {n}: click through the wizard." for n in range(12))
    + "\n\nRetries wait for the rate limiter.",
    "status": "open",
}


# Either note first by name and by writing order: a tie broken either way cannot pass.
NAMINGS = [("a-apart", "b-together"), ("b-apart", "a-together")]


@pytest.fixture(params=NAMINGS, ids=["apart-first", "together-first"])
def vault(
    request: pytest.FixtureRequest,
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[str, str]:
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "sudachi")
    root = tmp_path / "vault"
    diary(root)
    apart, together = request.param
    written = [(apart, APART), (together, TOGETHER)]
    for name, text in written if apart < together else reversed(written):
        note(root, f"note/{name}.md", text)
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(root))
    return f"note/{apart}.md", f"note/{together}.md"


@pytest.fixture
def tracker(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    beads = export(
        tmp_path / "proj" / ".beads" / "issues.jsonl", [ISSUE_APART, ISSUE_TOGETHER, *chores()]
    ).parent
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    return beads


def _by_ref(outcome: object, ref: str) -> object:
    return next(hit for hit in outcome.hits if hit.ref == ref)  # type: ignore[attr-defined]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_words_that_meet_in_one_place_rank_first(vault: tuple[str, str], engine: str) -> None:
    apart, together = vault
    refs = [hit.ref for hit in searched("レプリカの遅延が増えたのって前に調べたっけ", engine).hits]
    assert refs.index(together) < refs.index(apart), refs


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_an_english_issue_whose_words_meet_leads(tracker: Path, engine: str) -> None:
    outcome = searched("did the webhook retries hit the rate limiter before?", engine)
    assert [hit.ref for hit in outcome.hits][:2] == ["bd-tg01", "bd-ap01"]


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_the_gate_weighs_the_score_without_the_boost(vault: tuple[str, str], engine: str) -> None:
    apart_ref, together_ref = vault
    outcome = searched("レプリカの遅延が増えたのって前に調べたっけ", engine)
    together, apart = _by_ref(outcome, together_ref), _by_ref(outcome, apart_ref)
    assert together.score == pytest.approx(apart.score)  # type: ignore[attr-defined]
    assert together.proximity > 1.0 == apart.proximity  # type: ignore[attr-defined]


def test_one_matched_word_is_no_proximity(vault: tuple[str, str]) -> None:
    outcome = searched("レプリカって何だっけ", "rg")
    assert outcome.hits
    assert {hit.proximity for hit in outcome.hits} == {1.0}


def _hit(ref: str, score: float, proximity: float, recalled: list[str] | None = None) -> object:
    from memrecall.search import Hit

    store = "summaries" if recalled else "obsidian"
    return Hit(
        store=store,
        ref=ref,
        path=Path(ref),
        title=ref,
        date=None,
        score=score,
        matched=["レプリカ"],
        line=1,
        snippet="",
        lines=[],
        proximity=proximity,
        recalled=recalled or [],
    )


@pytest.mark.parametrize(
    ("original_score", "copy_score", "copy_proximity", "gate_score"),
    [
        # Stronger to the gate, only ordered below by the copy's proximity: ahead of it, and
        # its score left as it was (neither lowered to the copy's nor raised by proximity).
        (2.0, 1.9, 1.5, 2.0),
        # Weaker: as strong as the copy to the gate, as before proximity.
        (1.0, 2.0, 1.0, 2.02),
        (1.0, 2.0, 1.4, 2.02),
    ],
)
def test_an_original_leads_its_copy_and_the_gate_sees_no_proximity(
    original_score: float, copy_score: float, copy_proximity: float, gate_score: float
) -> None:
    from memrecall.search import _originals_first

    original = _hit("note/a.md", original_score, 1.0)
    copy = _hit("2026/11/s.md", copy_score, copy_proximity, recalled=["obsidian:note/a.md"])
    ordered = _originals_first([copy, original])
    assert [h.ref for h in ordered] == ["note/a.md", "2026/11/s.md"]  # type: ignore[attr-defined]
    assert original.score == pytest.approx(gate_score)  # type: ignore[attr-defined]
