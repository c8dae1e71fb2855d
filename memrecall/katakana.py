"""Whole-word matching for katakana keywords.

Japanese has no spaces, so a Japanese keyword is found as a substring. That is right for
compounds (テスト in ユニットテスト, ロック in ロックファイル) and wrong where one loanword merely
holds another: ログ in ブログ or カタログ, ファイル in プロファイル, メモ in メモリ, テスト in
コンテスト, ロック in ブロック. SudachiPy's finest split (mode A) tells the two apart: a
compound splits at the keyword's edges, a single word does not. Only katakana runs that are
longer than the keyword are split, and each run once per process.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from . import regexcache
from .tokenizers.base import KATAKANA

_ALL_KATAKANA = regexcache.compile(f"[{KATAKANA}]+")
_KATAKANA_CHAR = regexcache.compile(f"[{KATAKANA}]")
# English endings written in katakana after a whole word: デプロイ in デプロイメント,
# エクスポート in エクスポーター, メモリ in メモリー (a long-vowel spelling).
_ENDINGS = frozenset({"ー", "メント", "ング"})
_lock = threading.Lock()


def is_katakana(text: str) -> bool:
    return bool(_ALL_KATAKANA.fullmatch(text))


def stands_alone(text: str, word: str) -> bool:
    """Whether the katakana `word` occurs in `text` as a word or a compound's part, rather
    than only inside a longer word."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        left, right = start, end
        while left > 0 and _KATAKANA_CHAR.match(text[left - 1]):
            left -= 1
        while right < len(text) and _KATAKANA_CHAR.match(text[right]):
            right += 1
        run = text[left:right]
        if run == word:
            return True
        cuts = _cuts(run)
        tail = end - left
        ends = {tail} | {tail + len(e) for e in _ENDINGS if run.startswith(e, tail)}
        if cuts is None or (start - left in cuts and ends & cuts):
            return True
        start = text.find(word, start + 1)
    return False


@lru_cache(maxsize=4096)
def _cuts(run: str) -> frozenset[int] | None:
    """Offsets where mode A splits `run`; None without SudachiPy (then substrings match,
    as before)."""
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    with _lock:  # one tokenizer object; the hook searches stores from several threads
        ends = [m.end() for m in tokenizer.tokenize(run)]
    return frozenset([0, *ends])


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    try:
        from sudachipy import SplitMode

        from .tokenizers.sudachi import core_dictionary

        return core_dictionary().tokenizer(SplitMode.A)
    except Exception:  # no SudachiPy or no dictionary: keep substring matching
        return None
