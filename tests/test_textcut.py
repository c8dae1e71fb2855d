"""Cutting text to a length: what a reader sees where a cut falls."""

from __future__ import annotations

import pytest

from memrecall.textcut import cut, cut_head, cut_noted, cut_tail, one_line

SENTENCE = "Fixed the payment client retry loop in internal/payment/client.go after review"
KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


def test_text_that_fits_is_left_alone() -> None:
    assert cut(SENTENCE, len(SENTENCE)) == SENTENCE
    assert one_line("a  short\n\tline", 80) == "a short line"
    assert cut_noted(SENTENCE, len(SENTENCE)) == SENTENCE


@pytest.mark.parametrize("keep_end", [False, True])
@pytest.mark.parametrize("whole_tokens", [False, True])
def test_a_cut_is_never_longer_than_asked_and_shows_where_it_fell(
    keep_end: bool, whole_tokens: bool
) -> None:
    for limit in range(len(SENTENCE)):
        shown = cut(SENTENCE, limit, keep_end=keep_end, whole_tokens=whole_tokens)
        assert len(shown) <= limit
        if limit:
            assert shown.startswith("…") if keep_end else shown.endswith("…")


def test_the_start_is_kept_and_no_space_sits_before_the_ellipsis() -> None:
    assert cut(SENTENCE, 20) == "Fixed the payment c…"
    assert cut(SENTENCE, 19) == "Fixed the payment…"


def test_keep_end_keeps_a_paths_file_name() -> None:
    path = "/home/someone/projects/memrecall/notes/2024/05/2024-05-01-retry-loop.md"
    assert cut(path, 30, keep_end=True) == "…4/05/2024-05-01-retry-loop.md"


def test_a_key_straddling_the_cut_is_dropped_whole_not_halved() -> None:
    text = f"the key was {KEY} and it leaked"
    for inside in range(1, len(KEY)):
        shown = cut(text, len("the key was ") + inside + 1, whole_tokens=True)
        assert shown == "the key was…"
        shown = cut(text, len(" and it leaked") + inside + 1, keep_end=True, whole_tokens=True)
        assert shown == "…and it leaked"
    assert "sk-ant" in cut(text, 20)  # a plain cut is for text already redacted


def test_japanese_has_no_spaces_and_is_cut_anywhere() -> None:
    assert cut_head("日本語のテキストです", 4) == "日本語の"
    assert cut_tail("日本語のテキストです", 3) == "トです"
    assert cut("日本語のテキストです", 5, whole_tokens=True) == "日本語の…"


def test_one_line_puts_a_multi_line_command_on_one_line() -> None:
    command = "cd /repo &&\n    go test ./...\n\n    && git status"
    assert one_line(command) == "cd /repo && go test ./... && git status"
    assert one_line(command, 20) == "cd /repo && go test…"


def test_a_noted_cut_says_how_much_is_missing_and_keeps_both_ends() -> None:
    text = "start " + "middle " * 100 + "end"
    shown = cut_noted(text, 60, tail=20)
    assert shown.startswith("start middle")
    assert shown.endswith("middle end")
    assert f"…[{len(text) - 60} chars cut]…" in shown
    assert cut_noted(text, 60).endswith(f"middle …[{len(text) - 60} chars cut]")


def test_a_noted_cut_never_shows_half_a_key() -> None:
    text = f"{KEY} in the middle of {KEY}"
    shown = cut_noted(text, 40, tail=10)
    assert "sk-ant" not in shown
    assert "chars cut" in shown
