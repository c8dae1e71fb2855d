"""`memrecall tokenize`: prompt on stdin, keywords on stdout (stdlib-only path)."""

from __future__ import annotations

import json

from .config import Settings
from .keywords import Keyword, extract, load_stopwords
from .resources import shipped_stopwords
from .tokenizers import resolve


def effective_stopwords(settings: Settings) -> set[str]:
    return load_stopwords([shipped_stopwords(), settings.user_stopwords])


def tokenize_text(
    text: str, backend: str, settings: Settings, timeout: float | None = None
) -> tuple[list[Keyword], list[str]]:
    """Return keywords and notes (fallbacks taken) for `text`."""
    if not text.strip():
        return [], []
    from .stores.beads import id_prefixes

    analyzer, notes = resolve(backend, timeout)

    def known_phrases(words: set[str]) -> set[str]:
        from .glossary import glossary_files, known_words

        return known_words(glossary_files(settings), words)

    def known_predicates(lemmas: set[str]) -> set[str]:
        # A verb the dictionary translates (消す → delete) finds the English memory that says
        # it; like every dictionary word it ranks and is never evidence (loanwords.add_origins).
        from .loanwords import glosses

        known = known_phrases(lemmas)
        return known | {lemma for lemma in lemmas - known if glosses(lemma)}

    def japanese_phrases(text: str) -> list[str]:
        from .glossary import glossary_files, japanese_phrases_in

        return japanese_phrases_in(glossary_files(settings), text)

    keywords = extract(
        text,
        analyzer,
        effective_stopwords(settings),
        id_prefixes=id_prefixes(settings.beads),
        known_predicates=known_predicates,
        known_phrases=known_phrases,
        japanese_phrases=japanese_phrases,
    )
    return keywords, notes


def render(keywords: list[Keyword], as_json: bool) -> str:
    if as_json:
        return "".join(json.dumps(k.as_dict(), ensure_ascii=False) + "\n" for k in keywords)
    return "".join(k.text + "\n" for k in keywords)
