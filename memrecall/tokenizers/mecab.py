"""MeCab backend through fugashi, with unidic-lite's dictionary passed explicitly."""

from __future__ import annotations

import os

from .. import regexcache
from ..errors import BackendUnavailable
from .base import KATAKANA, Term
from .morph import PREDICATE_POS, Morph, terms_from_morphs

_ALL_KATAKANA = regexcache.compile(f"^[{KATAKANA}]+$")


class MecabAnalyzer:
    name = "mecab"

    def __init__(self) -> None:
        try:
            import fugashi
            import unidic_lite
        except ImportError as exc:
            raise BackendUnavailable(
                "the mecab backend needs fugashi and unidic-lite: pip install fugashi unidic-lite"
            ) from exc
        dicdir = unidic_lite.DICDIR
        # fugashi prefers a full `unidic` when importable, which may lack its downloaded data.
        args = f'-d "{dicdir}" -r "{os.path.join(dicdir, "mecabrc")}"'
        try:
            self._tagger = fugashi.Tagger(args)
        except RuntimeError as exc:
            raise BackendUnavailable(f"MeCab cannot load unidic-lite ({exc})") from exc

    def analyze(self, text: str) -> list[Term]:
        morphs: list[Morph] = []
        offset = 0
        for node in self._tagger(text):
            # MeCab folds preceding spaces into white_space; track offsets ourselves.
            offset += len(node.white_space)
            surface = node.surface
            feature = node.feature
            begin = text.find(surface, offset) if surface else offset
            if begin < 0:
                begin = offset
            end = begin + len(surface)
            offset = end
            morph = Morph(
                surface, begin, end, feature.pos1 or "", feature.pos2 or "", feature.pos3 or ""
            )
            if morph.pos1 in PREDICATE_POS:
                morph.lemma = feature.orthBase or ""
            previous = morphs[-1] if morphs else None
            if (
                previous
                and previous.end == begin
                and _katakana_noun(previous)
                and _katakana_noun(morph)
            ):
                # UniDic short units cut loanwords (タイム|アウト, リ|トライ); inside a mixed
                # compound the pieces would otherwise come out as keywords of their own.
                morphs[-1] = Morph(
                    previous.surface + surface,
                    previous.begin,
                    end,
                    morph.pos1,
                    morph.pos2,
                    morph.pos3,
                )
            else:
                morphs.append(morph)
        return terms_from_morphs(morphs)


def _katakana_noun(morph: Morph) -> bool:
    return morph.is_content_noun and bool(_ALL_KATAKANA.match(morph.surface))
