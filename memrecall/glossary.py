"""The synonym glossary (shipped, the user's, the index's note aliases): groups of words that
mean the same thing, and the Japanese predicates it knows.

Stdlib only: `memrecall tokenize` asks it which verbs and adjectives are keywords, and the hook
reads it twice per prompt (tokenize, then search), so each file is read and folded once per
process.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from . import regexcache

if TYPE_CHECKING:
    from .config import Settings

MAX_SYNONYM_GROUP = 16

# Endings of a Japanese predicate's dictionary form: the u-row of verbs, `い` of adjectives.
_PREDICATE_END = "うくぐすつぬぶむるい"
_PREDICATE_SHAPE = regexcache.compile(
    r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u3041-\u3096\u30a1-\u30fa\u30fc]+"
    f"[{_PREDICATE_END}]$"
)
_KATAKANA_STEM = regexcache.compile(r"^[\u30a1-\u30fa\u30fc]+$")
_HAS_KANJI = regexcache.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005]")
# A godan verb's ending → its a-row and i-row kana and its euphonic (音便) stem ending.
_GODAN = {
    "う": "わいっ",
    "く": "かきい",
    "ぐ": "がぎい",
    "す": "さし",
    "つ": "たちっ",
    "ぬ": "なにん",
    "ぶ": "ばびん",
    "む": "まみん",
}

_cache: dict[tuple[str, int, int], list[tuple[str, str]]] = {}


def glossary_files(settings: Settings) -> list[Path]:
    """The shipped glossary and the user's (search adds the index's note aliases)."""
    from .resources import shipped_synonyms

    return [shipped_synonyms(), settings.user_synonyms]


def _file_lines(path: Path) -> list[tuple[str, str]]:
    """(line, NFKC-folded line) of one glossary file, comments dropped; read once per process
    (the key holds the file's mtime and size, so an edited file is read again), and taken from
    the glossary cache file when an earlier hook read the same file."""
    from .keywords import list_file_lines

    try:
        stat = path.stat()
    except OSError:
        return []
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _cache:
        kept = _kept_entry(key)
        if kept is not None:
            _cache[key] = kept[0]
            if kept[1] is not None:
                _phrases_cache[id(kept[0])] = kept[1]
        else:
            _cache[key] = [
                (line, unicodedata.normalize("NFKC", line).casefold())
                for line in list_file_lines([path])
            ]
    return _cache[key]


# --- the glossary cache ------------------------------------------------------------------
# Reading and folding the shipped glossary's ~1,400 lines and listing its Japanese phrases
# cost every hook process 20–30 ms, the same work each time. An earlier hook's result is kept
# in `$MEMRECALL_HOME/cache/glossary-<python>.marshal`, keyed by each file's path, mtime and
# size and stamped with this code (glossary.py's and keywords.py's own mtime and size, which
# derive it) and the Python version: an edited glossary or a new memrecall is a miss. Like
# the pattern cache, only the hook writes it, and a damaged file is a miss, never an error.
_GLOSSARY_CACHE_FORMAT = 1
_FileKey = tuple[str, int, int]
_kept: dict[_FileKey, tuple[list[tuple[str, str]], list[str] | None]] | None = None


def glossary_cache_path(home: Path | None = None) -> Path:
    return regexcache.cache_file("glossary", home)


def _code_stamp() -> tuple[object, ...]:
    import sys

    here = Path(__file__)
    stats = []
    for source in (here, here.with_name("keywords.py")):
        try:
            stat = source.stat()
            stats.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stats.append((0, 0))
    return (_GLOSSARY_CACHE_FORMAT, sys.version, tuple(stats))


def _valid_entry(entry: object) -> bool:
    if not (isinstance(entry, tuple) and len(entry) == 2):
        return False
    lines, phrases = entry
    return (
        isinstance(lines, list)
        and all(
            isinstance(pair, tuple)
            and len(pair) == 2
            and isinstance(pair[0], str)
            and isinstance(pair[1], str)
            for pair in lines
        )
        and (
            phrases is None
            or (isinstance(phrases, list) and all(isinstance(p, str) for p in phrases))
        )
    )


def _kept_entries() -> dict[_FileKey, tuple[list[tuple[str, str]], list[str] | None]]:
    global _kept
    if _kept is None:
        _kept = regexcache.read_stamped(glossary_cache_path(), _code_stamp())
    return _kept


def _kept_entry(key: _FileKey) -> tuple[list[tuple[str, str]], list[str] | None] | None:
    entry = _kept_entries().get(key)
    return entry if _valid_entry(entry) else None


def save_cache(home: Path | None = None) -> None:
    """Write the cache if this process read a glossary file it lacked, or listed phrases it
    lacked; never fails (a cache is optional). Only the hook calls it, after a prompt it
    answered."""
    kept = _kept_entries()
    current = {
        key: (lines, _phrases_cache.get(id(lines))) for key, lines in _cache.items() if lines
    }
    if all(kept.get(key) == entry for key, entry in current.items()):
        return
    # Only the files this process read: an edited file's old entry goes.
    regexcache.write_stamped(glossary_cache_path(home), _code_stamp(), current)


# A glossary word of several Japanese morphemes (`起動しない`, `閉じた理由`): kana with kanji or
# katakana, four characters or more; or four kanji or more, which an analyser may cut where no
# reader would (三項演算子 → 三 + 項 + 演算子). A prompt finds it by its text.
_JAPANESE_PHRASE = regexcache.compile(
    r"^(?=.*[\u3041-\u309f])(?=.*[\u3400-\u9fff\u30a1-\u30fa])[^\sA-Za-z0-9]{4,}$"
    r"|^[\u3400-\u9fff]{4,}$"
)
# A noun made a verb with する (`起動しない`, `接続できない`): the analyser's lemma is する.
_SURU_VERB = regexcache.compile(r"[\u3400-\u9fff\u30a1-\u30fa](?:し|でき|され|させ)")
_NON_ASCII_RUN = regexcache.compile(r"[^\x00-\x7f,|]{4,}")
# A negated predicate (`終わらない`, `繋がらない`): the analyser's lemma (終わる) drops the
# negation the symptom is made of, so the text itself is looked for, in any tense.
NEGATED_ENDINGS = ("ない", "なく", "なかっ")
# By the identity of a file's cached lines (`_cache` keeps them alive, and an edited file
# gets new ones).
_phrases_cache: dict[int, list[str]] = {}


def japanese_phrases_in(paths: Iterable[Path], text: str) -> list[str]:
    """The glossary's Japanese phrases written in `text` (NFKC): not its verbs and adjectives
    in dictionary form (`固まる`), which the analyser finds in any conjugation, but a noun made
    a verb with する (`起動しない`), which it does not."""
    found: list[str] = []
    for path in paths:
        lines = _file_lines(path)
        if not lines:
            continue  # a missing file's [] is not cached: its identity means nothing
        key = id(lines)
        phrases = _phrases_cache.get(key)
        if phrases is None:
            # One regex pass over the joined file finds the whole non-ASCII words: splitting
            # every line into its ~5,000 words cost the hook 3.5 ms a prompt.
            joined = "\n".join(folded for _, folded in lines)
            phrases = sorted(
                {
                    m.group()
                    for m in _NON_ASCII_RUN.finditer(joined)
                    if _edge(joined, m.start() - 1, -1)
                    and _edge(joined, m.end(), 1)
                    and _JAPANESE_PHRASE.match(m.group())
                    and (
                        not is_predicate(m.group())
                        or _SURU_VERB.search(m.group())
                        or m.group().endswith("ない")
                    )
                }
            )
            _phrases_cache[key] = phrases
        found += [phrase for phrase in phrases if phrase_at(text, phrase) >= 0]
    return found


def phrase_at(text: str, phrase: str) -> int:
    """Where `text` writes a glossary phrase: as listed, or, for a negated predicate, in
    another tense (`終わらなかった`, `繋がらなくて` for `終わらない`, `繋がらない`); -1 if
    nowhere."""
    if not phrase.endswith("ない"):
        return text.find(phrase)
    stem = phrase[:-2]
    for ending in NEGATED_ENDINGS:
        at = text.find(stem + ending)
        if at >= 0:
            return at
    return -1


class _Table:
    """Every line of the given files, joined, for one `str.find` per word."""

    def __init__(self, files: list[list[tuple[str, str]]]) -> None:
        pairs = [pair for lines in files for pair in lines]
        self.lines = [line for line, _ in pairs]
        self.folded_lines = [folded for _, folded in pairs]
        self.folded = "\n".join(self.folded_lines)
        self.starts = [0]
        for folded in self.folded_lines[:-1]:
            self.starts.append(self.starts[-1] + len(folded) + 1)

    def lines_holding(self, word: str, whole: bool) -> set[int]:
        from bisect import bisect_right

        found: set[int] = set()
        at = self.folded.find(word)
        while at >= 0:
            end = at + len(word)
            if not whole or (_edge(self.folded, at - 1, -1) and _edge(self.folded, end, 1)):
                found.add(bisect_right(self.starts, at) - 1)
            at = self.folded.find(word, end)
        return found


# By the identities of the files' cached lines, like `_phrases_cache`: a prompt looks words
# up several times (keywords, synonyms, inflections), and joining the table each time was
# repeated work. A missing file's [] counts as nothing, its identity meaning nothing.
_tables: dict[tuple[int, ...], _Table] = {}


def _table(paths: Iterable[Path]) -> _Table:
    files = [_file_lines(path) for path in paths]
    key = tuple(id(lines) if lines else 0 for lines in files)
    table = _tables.get(key)
    if table is None:
        table = _tables[key] = _Table(files)
    return table


def load_synonyms(
    paths: Iterable[Path], wanted: Iterable[str] | None = None
) -> dict[str, set[str]]:
    """Groups from the shipped table and the user's; every word maps to its whole group.

    `wanted` (case-folded keywords): only the lines that can matter for them are parsed — the
    lines holding one of them, and the lines sharing a word with those (groups that share a
    word merge). The hook needs a handful of groups out of a thousand, and would otherwise
    parse them all on every prompt."""
    table = _table(paths)
    lines = table.lines
    if wanted is not None:
        lines = _lines_for(table, {w for w in wanted if w})
    groups: dict[str, set[str]] = {}
    for line in lines:
        words = [unicodedata.normalize("NFKC", w).strip() for w in re.split(r"[,|]", line)]
        words = [w for w in words if w]
        if len(words) < 2:
            continue
        merged = set(words)
        for word in words:
            merged |= groups.get(word.casefold(), set())
        if len(merged) > MAX_SYNONYM_GROUP:
            # Chains of shared words (`Go` in many notes' aliases) would make one group of
            # everything: a line too entangled stands alone.
            merged = set(words)
        for word in merged:
            groups[word.casefold()] = merged
    return groups


_PLAIN_ENGLISH = regexcache.compile(r"[a-z]+")


def add_inflections(
    paths: Iterable[Path], keys: Iterable[str], groups: dict[str, set[str]]
) -> None:
    """An English word typed in another inflection than the glossary lists (`carts`,
    `flipped`) takes the group of the form it does list (`cart`, `flip`): the same stem, as
    the index counts it. Only words with no group of their own."""
    from .keywords import term_key

    paths = list(paths)
    missing: dict[str, str] = {}
    for key in keys:
        if key in groups or not _PLAIN_ENGLISH.fullmatch(key):
            continue
        stem = term_key(key)
        if stem != key:
            missing[key] = stem
    if not missing:
        return  # a Japanese prompt, or English words each listed as typed
    # Most inflected words of a prompt have no group in any form: looking for the listed
    # words that begin with the stem spares parsing every line that merely holds it (`show`
    # is inside many).
    stems = set(missing.values())
    table = _table(paths)
    listed = {word for stem in stems for word in _words_from(table, stem)}
    listed = {word for word in listed if term_key(word) in stems}
    if not listed:
        return
    found = load_synonyms(paths, listed)
    by_stem: dict[str, set[str]] = {}
    for word, group in found.items():
        if _PLAIN_ENGLISH.fullmatch(word):
            by_stem.setdefault(term_key(word), group)
    for key, stem in missing.items():
        if stem in by_stem:
            groups[key] = by_stem[stem]


def _words_from(table: _Table, stem: str) -> set[str]:
    """The glossary's whole English words that begin with `stem` (`pinning` for `pin`)."""
    text = table.folded
    words: set[str] = set()
    at = text.find(stem)
    while at >= 0:
        end = at + len(stem)
        if _edge(text, at - 1, -1):
            while end < len(text) and "a" <= text[end] <= "z":
                end += 1
            if _edge(text, end, 1):
                words.add(text[at:end])
        at = text.find(stem, at + 1)
    return words


def known_words(paths: Iterable[Path], words: Iterable[str]) -> set[str]:
    """Which of `words` (case-folded) the glossary lists as a whole word of some group."""
    table = _table(paths)
    return {word for word in words if word and table.lines_holding(word, whole=True)}


def _lines_for(table: _Table, wanted: set[str]) -> list[str]:
    """The lines holding a wanted word (anywhere: Japanese words sit inside longer ones), and
    the lines sharing a whole word with those (groups sharing a word merge). One pass of
    `str.find` per word over the joined table: testing every line against every word cost
    the hook ~10 ms a prompt once the glossary passed 600 groups."""
    chosen: set[int] = set()
    for word in wanted:
        chosen |= table.lines_holding(word, whole=False)
    # One more hop: a line sharing a whole word with a chosen line merges with it.
    words = {
        w.strip() for i in chosen for w in re.split(r"[,|]", table.folded_lines[i]) if w.strip()
    }
    for word in words:
        chosen |= table.lines_holding(word, whole=True)
    return [table.lines[i] for i in sorted(chosen)]


def _edge(text: str, at: int, step: int) -> bool:
    """Whether a word of a synonym line ends here: only spaces, then a separator or the end."""
    while 0 <= at < len(text) and text[at] == " ":
        at += step
    return not 0 <= at < len(text) or text[at] in ",|\n"


# --- predicates -------------------------------------------------------------------------


def is_predicate(word: str) -> bool:
    """Whether a glossary word is a Japanese verb or adjective in dictionary form (`固まる`,
    `遅い`, `動作が重い`, `ずれる`, `コケる`): kanji and kana, ending in a verb's u-row hiragana
    or `い`; kana alone only from three characters (`ずれる`, not `ない`)."""
    shaped = bool(_PREDICATE_SHAPE.match(word))
    if shaped and word.endswith("する") and _KATAKANA_STEM.match(word[:-2]):
        return False  # フリーズする: a loanword noun and する, which analysers split
    return shaped and (len(word) >= 3 or bool(_HAS_KANJI.search(word)))


def predicate_forms(word: str) -> list[str]:
    """What to look for in text to find every conjugation of a dictionary form: notes say
    `固まった`, `遅くて`, `待たされる`, never only `固まる`.

    The stem alone where it holds a kanji and is two characters or more (`固ま`, `漏れ`,
    `溜ま`); a one-kanji stem alone (`遅`, `待`) would find `遅延` and `期待`, so then the
    few forms a text uses (`遅い`, `遅く`, `遅かっ`)."""
    if not is_predicate(word):
        return [word]
    stem, ending = word[:-1], word[-1]
    if len(stem) >= 2 and _HAS_KANJI.search(stem):
        return [stem]
    if ending == "い":
        return [word, stem + "く", stem + "かっ", stem + "さ"]
    if ending == "る":
        # Godan (`切る`: 切ら, 切っ) or ichidan (`見る`: 見て, 見た): both, the dictionary form
        # first.
        return [word, stem + "っ", stem + "て", stem + "た", stem + "ら", stem + "り"]
    return [word] + [stem + kana for kana in _GODAN.get(ending, "")]
