"""Scores for matched documents. The README's "Ranking" section describes these numbers.

score = Σ_k credit(k) · kind_weight(k) · rarity(k) · field_boost(k)
        × (0.5 + coverage) × store factor

- rarity(k) = min(1, ln(1 + N/df) / ln(1 + min(N, 1000))): 1.0 for a keyword found in one
  document, near 0 for one found everywhere; N is the store's document count, so thresholds
  do not depend on the size of the vault, and big stores are not penalised.
- credit: 1 for a direct match, 0.7 through a synonym, 0.5 when only a piece of a compound
  matched (`本番` of `本番環境`).
- field_boost: ×1.6 when the keyword (or a synonym it matched through) is in the title, tags,
  aliases or the issue id; ×2 more (and distinctive) when a beads id in the prompt is the
  issue's own id.
- proximity (orders hits; the gate weighs the score without it): × (1 + 0.5 · share) when two
  or more matched keywords meet within three lines; share is the rarity-weighted part of the
  matched keywords found there (`PROXIMITY_BOOST`).
- tf (index engine): BM25's term-frequency saturation with length normalisation, mapped to
  0.6…1.48 (`tf_factor`).
- coverage: the weighted share of the prompt's keywords the document matched.
- store factor (each store's `score_factor` in stores/rules.py): summaries
  1 + 0.15·e^(−age/60 days) (newer first); beads in_progress ×1.15, open ×1.1, closed ×0.9.
"""

from __future__ import annotations

import math

KIND_WEIGHTS = {
    "ticket": 3.0,
    "beads": 3.0,
    "path": 2.0,
    "url": 2.0,
    "code": 2.0,
    "snake": 2.0,
    "camel": 2.0,
    "dotted": 2.0,
    "kebab": 2.0,
    "version": 1.5,
    "alnum": 1.2,
    # A bare number (`100` of "CPU 100%", `404`, a count) names many things; with a unit it
    # is a quantity.
    "number": 0.6,
    "quantity": 1.0,
    # A beads command (`bd sync`): a compound's weight.
    "command": 1.5,
    "month": 1.0,
    "proper_noun": 1.5,
    "compound": 1.5,
    "noun": 1.0,
    "external": 1.0,
    "word": 0.8,
    # Two English words the glossary lists as one entry ("race condition", "log out"): a
    # word's weight, since what it adds is the glossary's other words for it (ログアウト).
    "phrase": 0.8,
    "part": 0.5,
    # A verb or adjective the glossary knows or JMdict translates (`固まる`, `消す`): it ranks,
    # never makes a memory fire (the gate counts it as everyday) and is left out of coverage.
    "predicate": 0.6,
}
# Identifiers rare enough to fire on their own (the gate in recall.py).
DISTINCTIVE_SUBKINDS = {
    "ticket",
    "beads",
    "path",
    "snake",
    "camel",
    "dotted",
    "code",
    "url",
    "kebab",
}
DISTINCTIVE_MAX_DF = 5

# A beads id typed in the prompt that is this issue's own id.
EXACT_ID_BOOST = 2.0

# A match through the glossary: 0.8 against 0.7 gave 14 more right injections over the 735
# related development prompts with the same false fires; 0.9 added 5 generic false fires.
SYNONYM_CREDIT = 0.8
PART_CREDIT = 0.5
FIELD_BOOST = 1.6
# A memory that holds a stretch of the prompt word for word: an error message or a title
# pasted whole (search.verbatim_phrases).
VERBATIM_BOOST = 2.0
# Keywords that meet in one place of a memory (a line and the two after it) are about one
# thing; scattered over a long note they may each be there for another reason. A memory whose
# best such place holds two or more of the keywords it matched is ordered by its score × (1 +
# this × the rarity-weighted share of its matched keywords found there). It orders the hits
# only: on the score the gate weighs it added 6 generic false fires. On the development sets
# (1,069 related prompts) it put 28 more right memories first and 3 more in the top three;
# 0.5 was the best of 0.1–1.2 in a replay of their top 30 hits.
PROXIMITY_BOOST = 0.5
PROXIMITY_LINES = 3


def kind_weight(subkind: str) -> float:
    return KIND_WEIGHTS.get(subkind, 1.0)


def tf_factor(tf_norm: float) -> float:
    """BM25's term-frequency part (tf·(k1+1)/(tf + k1·length norm), 1.0 for one mention in
    a document of average length, at most 2.2) mapped to 0.6…1.48: repetition and short
    documents count, but never outweigh which keywords matched."""
    return 0.6 + 0.4 * min(max(tf_norm, 0.0), 2.2)


# Stores larger than this are normalised as if they had this many documents: a word in 1 %
# of the documents is as rare in a 5,000-issue tracker as in a 900-note vault (dividing by
# ln(1 + N) would make every word of a big store look commoner than it is).
RARITY_REFERENCE_DOCS = 1000


def rarity(df: int, total: int) -> float:
    total = max(total, df, 1)
    if df <= 0:
        return 0.0
    return min(1.0, math.log1p(total / df) / math.log1p(min(total, RARITY_REFERENCE_DOCS)))
