"""English for katakana, for kanji and for Japanese compounds: a Japanese prompt
("マージドライバの件") finds English memories ("merge driver") through the loanword table UniDic
records (loanwords.tsv, made by scripts/build_loanwords.py), a word of kanji ("階層の深さ")
through JMdict's glosses ("hierarchy", "depth": glosses.tsv, made by scripts/build_glosses.py),
and a compound whose every piece has English (在庫同期 → "inventory sync") through its pieces.

On the hook's path: no import beyond the standard library, and no parsing of the table's
18,000 lines (8 ms) — a binary search over its sorted text finds a word in microseconds.
The hand-written glossary (synonyms.txt) wins: its groups carry the software sense
(キャッシュ is `cache` there, `cash` in UniDic), so only words it lacks come here.
"""

from __future__ import annotations

import mmap
from functools import lru_cache
from pathlib import Path
from typing import AbstractSet

from . import regexcache

_KATAKANA = regexcache.compile(r"[ァ-ヶー・]+")
_ENGLISH_WORD = regexcache.compile(r"[A-Za-z][a-z]{2,}(?:-[a-z]+)?")
# Longer katakana runs are pasted text, not a word worth splitting.
MAX_WORD_CHARS = 16
# Pieces of a compound: at least two characters (a lone ア or ル means nothing alone).
_MIN_PIECE = 2
# Readings of a compound whose pieces have several origins (each is one more query term).
MAX_READINGS = 4


# Resolved once: japanese() looks up to five forms of a word, each in this folder.
_HERE = Path(__file__).resolve().parent


def table_path() -> Path:
    return _HERE / "loanwords.tsv"


def glosses_path() -> Path:
    return _HERE / "glosses.tsv"


@lru_cache(maxsize=2)
def _table(path: Path) -> tuple[bytes | mmap.mmap, int]:
    """A sorted table's bytes (mapped, not read: the glosses are 3 MB and a prompt looks up
    a handful of words), and where its lines start (after the comment header). Bytes, not
    text: UTF-8 sorts as code points do, so the binary search works on the bytes as well."""
    try:
        with open(path, "rb") as handle:
            data: bytes | mmap.mmap = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # missing, or empty (mmap refuses a file of 0 bytes)
        return b"", 0
    start = 0
    while data[start : start + 1] == b"#":
        start = data.find(b"\n", start) + 1
        if start == 0:
            return b"", 0
    return data, start


def _search(path: Path, word: str) -> list[str]:
    """The values of one word in a sorted `word<TAB>a|b` table, or [] (binary search)."""
    data, lo = _table(path)
    if not data:
        return []
    target = word.encode("utf-8")
    hi = len(data)
    while lo < hi:
        mid = (lo + hi) // 2
        start = max(data.rfind(b"\n", lo, mid) + 1, lo)
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line_key, _, values = data[start:end].partition(b"\t")
        if line_key == target:
            return values.decode("utf-8").split("|")
        if line_key < target:
            lo = end + 1
        else:
            hi = start
    return []


def key(katakana: str) -> str:
    """ドライバー and ドライバ are one word: the long-vowel mark at the end is optional in
    technical writing, and the table has none."""
    return katakana.replace("・", "").rstrip("ー")


def lookup(word: str) -> list[str]:
    """The English origins of one katakana word, or []."""
    wanted = key(word)
    if len(wanted) < _MIN_PIECE:
        return []
    return _search(table_path(), wanted)


def _has_kanji(word: str) -> bool:
    # Not a regular expression: compiling one over the CJK range costs the hook ~3 ms.
    return any("\u3400" <= ch <= "\u9fff" or ch == "々" for ch in word)


def glosses_en_path() -> Path:
    return _HERE / "glosses_en.tsv"


def japanese(word: str) -> list[str]:
    """Japanese for an English word (`overwrite` → オーバーライト, 上書き), or []: the reverse
    of both tables (scripts/build_glosses.py). The dictionaries write the plain form: a plural
    or a tense is stripped to find it (`hierarchies`, `muted`). Not a stemmer: `does` is not
    `doe`, `uniting` is not `unit`."""
    if not _ENGLISH_WORD.fullmatch(word):
        return []
    folded = word.casefold()
    for form in (folded, *_plain_forms(folded)):
        found = _search(glosses_en_path(), form)
        if found:
            return found
    return []


def _plain_forms(word: str) -> list[str]:
    if word.endswith("ies"):
        return [word[:-3] + "y"]
    if word.endswith("ing"):
        return [word[:-3], word[:-3] + "e"]
    if word.endswith("ed"):
        return [word[:-2], word[:-1]]
    if word.endswith("es"):
        return [word[:-2], word[:-1]]
    if word.endswith("s") and not word.endswith("ss"):
        return [word[:-1]]
    return []


def glosses(word: str) -> list[str]:
    """The English of a word written in kanji (起動 → startup, activation …), or []: the
    JMdict table made by scripts/build_glosses.py."""
    if len(word) > MAX_WORD_CHARS or not _has_kanji(word):
        return []
    return _search(glosses_path(), word)


def katakana_glosses(word: str) -> list[str]:
    """The English of a katakana word UniDic's loanword table lacks (フラグ → flag, スニペット →
    snippet), or []: JMdict's entries written in kana only, in the same table as the kanji."""
    if not is_katakana(word) or len(word) > MAX_WORD_CHARS:
        return []
    return _search(glosses_path(), word)


def is_katakana(text: str) -> bool:
    return bool(_KATAKANA.fullmatch(text))


def english(word: str) -> list[str]:
    """English for a katakana word: its own origins, else the origins of the fewest pieces
    it splits into ("マージドライバ" → "merge driver" and "mergedriver": English writes a
    compound either way, `placeholder` as one word, `merge driver` as two)."""
    if not is_katakana(word) or len(word) > MAX_WORD_CHARS:
        return []
    whole = lookup(word)
    if whole:
        return whole
    text = word.replace("・", "")
    # best[i]: the fewest pieces covering text[:i], each as its origins.
    best: list[list[list[str]] | None] = [[]] + [None] * len(text)
    for end in range(_MIN_PIECE, len(text) + 1):
        for start in range(0, end - _MIN_PIECE + 1):
            before = best[start]
            if before is None or text[start] == "ー":
                continue
            known = best[end]
            if known is not None and len(known) <= len(before) + 1:
                continue
            origins = lookup(text[start:end])
            if origins:
                best[end] = before + [origins]
    pieces = best[len(text)]
    if not pieces or len(pieces) < 2:
        return []
    return [form for r in _readings(pieces) for form in (" ".join(r), "".join(r))]


def _readings(choices: list[list[str]]) -> list[list[str]]:
    """The first few ways to read pieces that each may come from two words (タイム: thyme,
    time): every combination of each piece's first two words, at most MAX_READINGS."""
    readings: list[list[str]] = [[]]
    for words in choices:
        readings = [r + [w] for r in readings for w in words[:2]][:MAX_READINGS]
    return readings


def add_origins(
    keys_and_texts: list[tuple[str, str]],
    synonyms: dict[str, set[str]],
    pieces: AbstractSet[str] = frozenset(),
) -> set[str]:
    """Give every keyword the glossary does not know its other language as synonyms: a
    loanword its English origin (or, where UniDic has none, JMdict's), a word of kanji its
    dictionary glosses, an English word the Japanese those tables translate by it. Returns
    the keys given dictionary words: their everyday senses (展開 "extraction", 要望 "request")
    find more than the developer meant, so those rank memories but make none fire. `pieces`
    (the words of an identifier or a compound) get no Japanese: `batch` of
    `sync_inventory_batch` is no バッチ of a note."""
    glossed = set()
    for keyword_key, text in keys_and_texts:
        if keyword_key in synonyms:
            continue
        found = english(text)
        if not found:
            if is_katakana(text):
                found = katakana_glosses(text)
            else:
                found = glosses(text) or ([] if keyword_key in pieces else japanese(text))
            if found:
                glossed.add(keyword_key)
        if found:
            synonyms[keyword_key] = {text, *found}
    return glossed


def _english_words(text: str, synonyms: dict[str, set[str]]) -> tuple[list[str], bool]:
    """One-word English for a piece: the glossary's (shortest first: `auto` before
    `automatically`), else the loanword table's, else the dictionary's glosses (then True)."""
    from .keywords import term_key

    group = synonyms.get(text.casefold(), ())
    words = sorted(
        {w.casefold() for w in group if w.isascii() and w.isalpha()}, key=lambda w: (len(w), w)
    )
    words = words or [w for w in english(text) if " " not in w]
    from_gloss = False
    if not words and not is_katakana(text):
        words = [w for w in glosses(text) if " " not in w]
        from_gloss = bool(words)
    # The index stems every word: `merge` and `merges` would be one query twice.
    stems: dict[str, str] = {}
    for word in words:
        stems.setdefault(term_key(word), word)
    return list(stems.values()), from_gloss


def add_compound_english(
    keywords: list[tuple[str, str, str]], synonyms: dict[str, set[str]]
) -> set[str]:
    """A Japanese compound whose every piece has English gets the English compound as a
    synonym: 自動取り込み (自動 auto + 取り込み import) → "auto import", 循環依存 → "circular
    dependency". `keywords` are (key, text, kind) in prompt order: a compound is followed by
    its pieces (kind `part`). Returns the keys whose English took a dictionary gloss."""
    glossed = set()
    for i, (key_, text, kind) in enumerate(keywords):
        if kind == "part" or key_ in synonyms or text.isascii():
            continue
        pieces = []
        for _, piece, piece_kind in keywords[i + 1 :]:
            if piece_kind != "part":
                break
            pieces.append(piece)
        if len(pieces) < 2 or "".join(pieces) != text:
            continue
        found = [_english_words(piece, synonyms) for piece in pieces]
        choices = [words for words, _ in found]
        if all(choices):
            synonyms[key_] = {text, *(" ".join(r) for r in _readings(choices))}
            if any(from_gloss for _, from_gloss in found):
                glossed.add(key_)
    return glossed
