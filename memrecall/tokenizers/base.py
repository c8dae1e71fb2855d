"""What every keyword analyser returns, and the Unicode ranges they share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .. import regexcache

# Explicit code-point ranges, never `[ァ-ヿ]`-style shorthands: those break under some
# locales in other tools and silently include `・` (U+30FB).
KANJI = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005-\u3007"
KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"
HIRAGANA = "\u3041-\u3096\u309d-\u309f"

SINGLE_KANA = regexcache.compile(f"^[{KATAKANA}{HIRAGANA}]$")
HAS_JAPANESE = regexcache.compile(f"[{KANJI}{KATAKANA}{HIRAGANA}]")


@dataclass(frozen=True)
class Term:
    """One keyword candidate. `start` orders output by first appearance in the prompt."""

    text: str
    kind: str
    start: int
    # Sub-parts of a compound sort right after it: (start, rank).
    rank: int = 0


class Analyzer(Protocol):
    """Turns the prompt's non-identifier text into noun-like terms."""

    name: str

    def analyze(self, text: str) -> list[Term]: ...


def is_junk(surface: str) -> bool:
    text = surface.strip()
    return not text or bool(SINGLE_KANA.match(text)) or text.isdigit()
