"""Which files under a store's folder memrecall reads: one walk for every reader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memrecall.__main__ import main
from memrecall.walk import walk_files


def _names(root: Path, suffixes: tuple[str, ...] | None = (".md",)) -> list[str]:
    return [path.relative_to(root).as_posix() for path, _ in walk_files(root, suffixes)]


def _write(path: Path, text: str = "# note\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_dot_folders_dot_files_and_other_suffixes_are_never_read(tmp_path: Path) -> None:
    for name in [
        "a.md",
        "b.txt",
        ".hidden.md",
        ".obsidian/x.md",
        ".git/y.md",
        ".trash/z.md",
        "sub/.archive/old.md",
        "sub/c.md",
    ]:
        _write(tmp_path / name)
    assert _names(tmp_path) == ["a.md", "sub/c.md"]
    assert _names(tmp_path, None) == ["a.md", "b.txt", "sub/c.md"]


def test_files_come_top_down_in_name_order(tmp_path: Path) -> None:
    for name in ["z.md", "b/2.md", "b/1.md", "a/deep/x.md", "a/y.md", "m.md"]:
        _write(tmp_path / name)
    assert _names(tmp_path) == ["m.md", "z.md", "a/y.md", "a/deep/x.md", "b/1.md", "b/2.md"]


def test_symlinks_are_never_followed_out_of_the_root(tmp_path: Path) -> None:
    vault, outside = tmp_path / "vault", tmp_path / "outside"
    _write(vault / "mine.md")
    secret = _write(outside / "secret.md", "# secret\n")
    (vault / "linked.md").symlink_to(secret)
    (vault / "folder").symlink_to(outside, target_is_directory=True)
    (vault / "loop").symlink_to(vault, target_is_directory=True)
    (vault / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    assert _names(vault) == ["mine.md"]


def test_a_root_that_is_a_symlink_is_what_the_user_chose(tmp_path: Path) -> None:
    _write(tmp_path / "real" / "note.md")
    (tmp_path / "vault").symlink_to(tmp_path / "real", target_is_directory=True)
    assert _names(tmp_path / "vault") == ["note.md"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_fifo_named_like_a_note_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    _write(tmp_path / "note.md")
    found = list(walk_files(tmp_path))
    assert [path.name for path, _ in found] == ["note.md"]
    assert found[0][1].st_size == len("# note\n")


def test_a_missing_or_unreadable_root_is_no_files(tmp_path: Path) -> None:
    assert _names(tmp_path / "missing") == []
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert _names(tmp_path / "loop") == []
    assert _names(_write(tmp_path / "file.md")) == []


def test_prune_leaves_a_linked_summary_where_it_points(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    isolated_home: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Search never reads a linked file, so prune never moves or deletes one either.
    summaries, elsewhere = tmp_path / "summaries", tmp_path / "elsewhere"
    text = "---\ndate: 2026-01-05\nsession_id: aaaaaaaa-1111\n---\n## what\n- x\n"
    target = _write(elsewhere / "2026-01-05-aaaaaaaa.md", text)
    (summaries / "2026" / "01").mkdir(parents=True)
    (summaries / "2026" / "01" / "2026-01-05-aaaaaaaa.md").symlink_to(target)
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(summaries))
    monkeypatch.setenv("MEMRECALL_NOW", "2026-12-02T09:00:00+09:00")
    assert main(["prune", "--delete"]) == 0
    assert target.read_text(encoding="utf-8") == text
    assert (summaries / "2026" / "01" / "2026-01-05-aaaaaaaa.md").is_symlink()
    assert capsys.readouterr().err.startswith("Nothing older than")
