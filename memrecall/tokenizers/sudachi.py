"""SudachiPy backend: split mode C for whole compounds, mode-A pieces for recall."""

from __future__ import annotations

from ..errors import BackendUnavailable
from .base import Term
from .morph import Morph, terms_from_morphs


class SudachiAnalyzer:
    name = "sudachi"

    def __init__(self) -> None:
        try:
            from sudachipy import Dictionary, SplitMode
        except ImportError as exc:
            raise BackendUnavailable(
                "the sudachi backend needs SudachiPy: pip install 'sudachipy==0.7.0' "
                "'sudachidict-core==20261015'"
            ) from exc
        try:
            # `Dictionary.create()` is deprecated in 0.7; a tokenizer per mode is the API.
            dictionary = Dictionary(dict="core")
        except Exception as exc:  # sudachipy raises its own untyped errors for a missing dict
            raise BackendUnavailable(
                f"SudachiPy cannot load its core dictionary ({exc}): pip install sudachidict-core"
            ) from exc
        self._mode_a = SplitMode.A
        self._tokenizer = dictionary.tokenizer(SplitMode.C)

    def analyze(self, text: str) -> list[Term]:
        morphs = []
        for m in self._tokenizer.tokenize(text):
            pos = m.part_of_speech()
            pieces = []
            if pos[0] == "名詞" and len(m.surface()) >= 4:
                pieces = [p.surface() for p in m.split(self._mode_a)]
                if len(pieces) < 2:
                    pieces = []
            # surface(), never normalized_form(): notes are searched as written.
            morphs.append(Morph(m.surface(), m.begin(), m.end(), pos[0], pos[1], pos[2], pieces))
        return terms_from_morphs(morphs)
