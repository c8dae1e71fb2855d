"""The near-duplicate check's hand-rolled similarity must be rapidfuzz's ratio, exactly."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memrecall.stores.rules import similarity

rapidfuzz = pytest.importorskip("rapidfuzz")
from rapidfuzz import fuzz  # noqa: E402

TEXT = st.text(alphabet="abcdeあいう決済タイム -_", max_size=80)


@given(TEXT, TEXT)
@settings(max_examples=400, deadline=None)
def test_similarity_is_rapidfuzz_ratio(a: str, b: str) -> None:
    assert similarity(a, b) == pytest.approx(fuzz.ratio(a, b), abs=1e-9)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("決済APIのタイムアウト方針", "決済APIのタイムアウト方針（改訂）"),
        ("GH#146: No color showing in terminal", "GH#146: No colour showing in the terminal"),
        ("", "x"),
        ("same", "same"),
        ("x" * 300, "x" * 150 + "y" * 150),  # longer than a machine word
    ],
)
def test_similarity_on_real_titles(a: str, b: str) -> None:
    assert similarity(a, b) == pytest.approx(fuzz.ratio(a, b), abs=1e-9)
