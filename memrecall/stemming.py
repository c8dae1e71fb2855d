"""English stemming for index terms and query terms alike, with tantivy's own Snowball
stemmer (already loaded for the index, so no second library). Cached: a vault repeats the
same few thousand words."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_ANALYZER: list[Any] = []


def _analyzer() -> Any:
    if not _ANALYZER:
        import tantivy

        _ANALYZER.append(
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )
    return _ANALYZER[0]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """`word` must already be lower-case ASCII letters."""
    tokens = _analyzer().analyze(word)
    return tokens[0] if tokens else word
