"""Dictionary-free backend: runs of kanji and katakana, with the pieces of mixed compounds."""

from __future__ import annotations

import re

from .. import regexcache
from .base import KANJI, KATAKANA, Term, is_junk

_RUN = regexcache.compile(f"[{KANJI}{KATAKANA}]+")
_SCRIPT_RUN = regexcache.compile(f"[{KANJI}]+|[{KATAKANA}]+")
_KANJI_ONLY = regexcache.compile(f"^[{KANJI}]+$")


def _kanji_chunks(run: str) -> list[str]:
    # Without a dictionary, 2-character chunks are the best guess at the words of a long
    # kanji compound (本番環境 → 本番, 環境): most Japanese technical nouns are two kanji.
    return [run[i : i + 2] for i in range(0, len(run) - 1, 2)]


class RegexAnalyzer:
    name = "regex"

    def analyze(self, text: str) -> list[Term]:
        terms: list[Term] = []
        for match in _RUN.finditer(text):
            # A lone kanji beside katakana is nearly always a verb stem or counter
            # (バグ直した, 3件): cut it off instead of inventing `バグ直`.
            pieces = [p for p in _SCRIPT_RUN.finditer(match.group()) if len(p.group()) >= 2]
            for group in _adjacent_groups(pieces):
                start = match.start() + group[0].start()
                run = "".join(p.group() for p in group)
                if is_junk(run):
                    continue
                kind = "compound" if len(group) > 1 else "noun"
                terms.append(Term(run, kind, start))
                rank = 0
                for piece in group:
                    word = piece.group()
                    sub = (
                        _kanji_chunks(word)
                        if _KANJI_ONLY.match(word) and len(word) >= 4
                        else [word]
                    )
                    for part in sub:
                        if len(part) >= 2 and part != run:
                            rank += 1
                            terms.append(Term(part, "part", start, rank))
        return terms


def _adjacent_groups(pieces: list[re.Match[str]]) -> list[list[re.Match[str]]]:
    groups: list[list[re.Match[str]]] = []
    for piece in pieces:
        if groups and groups[-1][-1].end() == piece.start():
            groups[-1].append(piece)
        else:
            groups.append([piece])
    return groups
