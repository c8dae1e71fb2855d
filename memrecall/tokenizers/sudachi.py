"""SudachiPy backend: split mode C for whole compounds, mode-A pieces for recall."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import BackendUnavailable
from .base import Term
from .morph import PREDICATE_POS, Morph, terms_from_morphs


@lru_cache(maxsize=1)
def core_dictionary() -> Any:
    """SudachiPy's core dictionary, loaded once per process (about 20 ms each time): the
    analyser and the katakana word check share it."""
    from sudachipy import Dictionary

    # `Dictionary.create()` is deprecated in 0.7; a tokenizer per mode is the API.
    return Dictionary(dict="core")


class SudachiAnalyzer:
    name = "sudachi"

    def __init__(self) -> None:
        try:
            from sudachipy import SplitMode
        except ImportError as exc:
            raise BackendUnavailable(
                "the sudachi backend needs SudachiPy: pip install 'sudachipy==0.7.0' "
                "'sudachidict-core==20261015'"
            ) from exc
        try:
            dictionary = core_dictionary()
        except Exception as exc:  # sudachipy raises its own untyped errors for a missing dict
            raise BackendUnavailable(
                f"SudachiPy cannot load its core dictionary ({exc}): pip install sudachidict-core"
            ) from exc
        self._mode_a = SplitMode.A
        self._tokenizer = dictionary.tokenizer(SplitMode.C)

    def analyze(self, text: str) -> list[Term]:
        morphs = []
        # SudachiPy refuses input over 49,149 UTF-8 bytes ("Input is too long"): a long
        # pasted log made the hook, `tokenize` and `search` fail. Analyse in pieces.
        for offset, piece in _pieces(text):
            for m in self._tokenizer.tokenize(piece):
                pos = m.part_of_speech()
                pieces = []
                if pos[0] == "名詞" and len(m.surface()) >= 4:
                    pieces = [p.surface() for p in m.split(self._mode_a)]
                    if len(pieces) < 2:
                        pieces = []
                # surface(), never normalized_form(): notes are searched as written.
                lemma = m.dictionary_form() if pos[0] in PREDICATE_POS else ""
                morphs.append(
                    Morph(
                        m.surface(),
                        offset + m.begin(),
                        offset + m.end(),
                        pos[0],
                        pos[1],
                        pos[2],
                        pieces,
                        lemma,
                    )
                )
        return terms_from_morphs(morphs)


# Well under SudachiPy's 49,149-byte input limit, in characters (≤ 4 UTF-8 bytes each).
PIECE_CHARS = 10_000


def _pieces(text: str) -> list[tuple[int, str]]:
    """(offset, piece) of at most PIECE_CHARS characters, cut after a newline, a full stop
    or a space when one is near the end, so few words are cut in two."""
    out: list[tuple[int, str]] = []
    start = 0
    while len(text) - start > PIECE_CHARS:
        end = start + PIECE_CHARS
        window = text[end - PIECE_CHARS // 5 : end]
        for sep in ("\n", "。", " ", "\u3000"):
            cut = window.rfind(sep)
            if cut >= 0:
                end = end - len(window) + cut + 1
                break
        out.append((start, text[start:end]))
        start = end
    out.append((start, text[start:]))
    return out
