"""Numbered names beside a taken one: what an archive, a backup or a second memory is called."""

from __future__ import annotations

from pathlib import Path

import pytest

from memrecall.atomic import free_name, numbered


def test_a_free_name_is_used_as_it_is(tmp_path: Path) -> None:
    assert free_name(tmp_path / "note.md") == tmp_path / "note.md"


def test_a_taken_name_gets_the_first_free_number_before_its_suffix(tmp_path: Path) -> None:
    for name in ["note.md", "note.1.md", "note.2.md"]:
        (tmp_path / name).write_text("taken", encoding="utf-8")
    assert free_name(tmp_path / "note.md") == tmp_path / "note.3.md"
    assert (tmp_path / "note.md").read_text(encoding="utf-8") == "taken"


def test_a_dangling_symlink_takes_its_name(tmp_path: Path) -> None:
    (tmp_path / "note.md").symlink_to(tmp_path / "gone.md")
    assert free_name(tmp_path / "note.md") == tmp_path / "note.1.md"


def test_the_styles_the_callers_use() -> None:
    memory = [p.name for p in numbered(Path("m/retry-loop.md"), first=2, last=3, sep="-")]
    assert memory == ["retry-loop.md", "retry-loop-2.md", "retry-loop-3.md"]
    summary = [p.name for p in numbered(Path("2026-01-05-aaaaaaaa.md"), first=2, last=3)]
    assert summary == [
        "2026-01-05-aaaaaaaa.md",
        "2026-01-05-aaaaaaaa.2.md",
        "2026-01-05-aaaaaaaa.3.md",
    ]
    backup = [p.name for p in numbered(Path("settings.json.bak"), last=2, keep_suffix=False)]
    assert backup == ["settings.json.bak", "settings.json.bak.1", "settings.json.bak.2"]


def test_no_free_name_left_is_an_error_naming_the_file(tmp_path: Path) -> None:
    for name in ["note.md", "note.1.md", "note.2.md"]:
        (tmp_path / name).write_text("taken", encoding="utf-8")
    with pytest.raises(FileExistsError) as raised:
        free_name(tmp_path / "note.md", last=2)
    assert raised.value.filename == str(tmp_path / "note.md")
