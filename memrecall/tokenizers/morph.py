"""Shared noun-run merging for the morphological analysers (Sudachi and MeCab/UniDic).

Verbs and adjectives come out as `predicate` terms in their dictionary form; only the ones the
glossary knows or the dictionary translates become keywords (`keywords.extract`), and the index
never holds them.

Both analysers use UniDic-style part-of-speech tags. Analysers split compounds differently
(UniDic short units cut `タイムアウト` into `タイム|アウト`, `不具合` into `不|具合`), so
adjacent nominal pieces are joined back into one compound, and the useful pieces of a kanji
compound (`認証トークン` → `認証`, `トークン`) are kept too for recall.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import regexcache
from .base import KANJI, KATAKANA, Term, is_junk

_HAS_KANJI = regexcache.compile(f"[{KANJI}]")
_ALL_KATAKANA = regexcache.compile(f"^[{KATAKANA}]+$")
# Nouns that only make sense inside a compound (前, 時, 件, 度 …).
_BOUND_NOUN_POS3 = {"副詞可能", "助数詞可能"}
# Verbs and adjectives, helpers (`非自立可能`: いる, ない, 遅れる) included: only the ones the
# glossary lists or the dictionary translates become keywords, and neither gives English to a
# helper that carries no topic.
PREDICATE_POS = ("動詞", "形容詞")


@dataclass
class Morph:
    surface: str
    begin: int
    end: int
    pos1: str
    pos2: str
    pos3: str
    # Finer pieces of this morpheme (Sudachi mode-A split of a mode-C unit).
    pieces: list[str] = field(default_factory=list)
    # A verb's or adjective's dictionary form (`固まる` of `固まっ`); empty for the rest.
    lemma: str = ""

    @property
    def is_content_noun(self) -> bool:
        return self.pos1 == "名詞" and self.pos2 in ("普通名詞", "固有名詞")

    @property
    def is_joinable(self) -> bool:
        if self.is_content_noun:
            return True
        if self.pos1 == "接頭辞":
            return True
        if self.pos1 == "接尾辞" and self.pos2 == "名詞的":
            return True
        return self.pos1 == "形状詞"

    @property
    def stands_alone(self) -> bool:
        return self.is_content_noun and self.pos3 not in _BOUND_NOUN_POS3


def _runs(morphs: list[Morph]) -> list[list[Morph]]:
    runs: list[list[Morph]] = []
    current: list[Morph] = []
    previous: Morph | None = None
    for morph in morphs:
        counted, previous = _counts(previous, morph), morph
        # `10件表示`, `31日指定`: a counter after its number is a count, not the head of a
        # compound (`件表示` is no word a memory holds); `表示` stays a keyword. `毎回ログイン`,
        # `何日更新`: the adverb belongs to the verb; the noun after it is the keyword.
        if counted or morph.surface in _ADVERBIAL_NOUNS:
            if current:
                runs.append(current)
            current = []
            continue
        if morph.is_joinable and (not current or current[-1].end == morph.begin):
            current.append(morph)
            continue
        if current:
            runs.append(current)
        current = [morph] if morph.is_joinable else []
    if current:
        runs.append(current)
    return runs


# Nouns a sentence uses as adverbs of how often or how much (毎回 every time, 全部 all of it,
# 何日 how many days, 一回 once), and determiners (別 another, 全 every, 各 each): they carry
# no topic, and glued to the next noun they made compounds no memory holds.
_ADVERBIAL_NOUNS = frozenset(
    "毎回 毎度 全部 何回 何度 何日 何件 何個 何時間 何分 何秒 何年 今回 前回 次回 一旦 一回 "
    "一度 数回 いつも 普段".split()
    + "別 全 各 両 他 同 毎 諸".split()
)


def _counts(previous: Morph | None, morph: Morph) -> bool:
    return (
        previous is not None
        and previous.pos2 == "数詞"
        and previous.end == morph.begin
        and morph.pos3 == "助数詞可能"
    )


# Suffixes that say where or when the noun before them applies (`パスごと` per path,
# `サーバー側` on the server side, `会議中` during the meeting, `テスト用` for tests,
# `起動時` at startup), or that it is only roughly the topic (`決済まわり` payments and the
# like, `ジョブ系`, `ビルド関連`, `設定全般`): the topic is the noun, and a memory writes it
# without them. Not 関係: `依存関係` is a word of its own.
_RELATIONAL_SUFFIXES = frozenset(
    "ごと 毎 側 中 内 用 別 向け 時 後".split()
    + "まわり 周り 回り 周辺 あたり 辺り 系 関連 全般 絡み 界隈".split()
)


def _trim(run: list[Morph]) -> list[Morph]:
    # A compound neither starts with a suffix nor ends with a prefix, a bare adjective stem
    # or a relational suffix.
    while run and run[0].pos1 == "接尾辞":
        run = run[1:]
    while run and (
        run[-1].pos1 in ("接頭辞", "形状詞")
        or (len(run) > 1 and run[-1].surface in _RELATIONAL_SUFFIXES)
    ):
        run = run[:-1]
    return run


def _useful_piece(piece: str, compound: str) -> bool:
    if len(piece) < 2 or piece == compound or is_junk(piece):
        return False
    # Loanword compounds are split by UniDic at meaningless places (タイム|アウト).
    return not (_ALL_KATAKANA.match(compound) and _ALL_KATAKANA.match(piece))


def terms_from_morphs(morphs: list[Morph]) -> list[Term]:
    terms = [Term(m.lemma, "predicate", m.begin) for m in morphs if m.lemma]
    for run in _runs(morphs):
        run = _trim(run)
        if not run or not any(m.is_content_noun for m in run):
            continue
        start = run[0].begin
        if len(run) == 1:
            morph = run[0]
            if not morph.stands_alone or len(morph.surface) < 2 or is_junk(morph.surface):
                continue
            kind = "proper_noun" if morph.pos2 == "固有名詞" else "noun"
            terms.append(Term(morph.surface, kind, start))
            for rank, piece in enumerate(morph.pieces, start=1):
                if _useful_piece(piece, morph.surface) and _HAS_KANJI.search(morph.surface):
                    terms.append(Term(piece, "part", start, rank))
            continue
        compound = "".join(m.surface for m in run)
        terms.append(Term(compound, "compound", start))
        rank = 0
        for morph in run:
            candidates = [morph.surface] if morph.stands_alone else []
            if morph.pieces and _HAS_KANJI.search(morph.surface):
                candidates += morph.pieces
            for piece in candidates:
                if _useful_piece(piece, compound):
                    rank += 1
                    terms.append(Term(piece, "part", start, rank))
    return terms
