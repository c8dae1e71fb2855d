"""Prompt → keywords: NFKC, an identifier pass, a Japanese analyser, English words, stopwords.

The identifier pass runs first and masks what it found, because every morphological
analyser cuts `PAY-1234`, `retry_count` or `internal/payment/client.go` into useless pieces.
Python's `\\b` is useless next to Japanese (`PAY-1234の` has no boundary), so every ASCII
rule uses explicit ASCII lookarounds.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator

from . import regexcache
from .tokenizers.base import Analyzer, Term, is_junk

_L = r"(?<![A-Za-z0-9_])"

# A number with a unit, spelt any way in either language, is one term: `5秒` in a prompt meets
# "bd ready takes 5 seconds", `30日` meets "a 30-day TTL", `12月` meets "the December release".
# canonical unit → its spellings; bare letters (`5s`, `5m`) only written without a space.
QUANTITY_UNITS = {
    "ms": ("ms", "msec", "msecs", "millisecond", "milliseconds", "ミリ秒"),
    "s": ("s", "sec", "secs", "second", "seconds", "秒", "秒間"),
    "min": ("m", "min", "mins", "minute", "minutes", "分", "分間"),
    "h": ("h", "hr", "hrs", "hour", "hours", "時間"),
    "d": ("d", "day", "days", "日", "日間"),
    "wk": ("week", "weeks", "週間"),
    "mo": ("month", "months", "ヶ月", "か月", "カ月", "ヵ月", "ケ月", "ヶ月間", "か月間"),
    "y": ("year", "years", "年間"),
    "kb": ("kb", "kib", "キロバイト"),
    "mb": ("mb", "mib", "メガバイト"),
    "gb": ("gb", "gib", "ギガバイト"),
    "tb": ("tb", "tib", "テラバイト"),
    "ch": ("char", "chars", "character", "characters", "文字"),
}
# Not `may` and `march`: they are an English verb far more often than a month.
MONTH_NAMES = (
    "january february _ april _ june july august september october november december".split()
)
_UNIT_OF = {spelling: unit for unit, spellings in QUANTITY_UNITS.items() for spelling in spellings}
_SPELLINGS = sorted(_UNIT_OF, key=len, reverse=True)
# `5M` is five million and `5S` nobody's unit: a one-letter unit counts in lower case only.
_ONE_LETTER = frozenset(u for u in _SPELLINGS if len(u) == 1)
_LETTERS = "|".join(sorted(_ONE_LETTER))
_ASCII_WORDS = "|".join(re.escape(u) for u in _SPELLINGS if u.isascii() and len(u) > 1)
_JA_UNITS = "|".join(re.escape(u) for u in _SPELLINGS if not u.isascii())
_QUANTITY = (
    r"(?:1[0-2]|0?[1-9])月"
    r"|(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:"
    rf"\s?\+?(?:{_JA_UNITS})"
    rf"|\+?(?:(?i:{_ASCII_WORDS})|{_LETTERS})(?![A-Za-z0-9_])"
    rf"|\+?[\s-](?i:{_ASCII_WORDS})(?![A-Za-z0-9_]))"
)
_BD_COMMAND_TEXT = r"bd [a-z][a-z-]{1,20}[a-z]"
_QUANTITY_PARTS = regexcache.compile(r"([\d,]+(?:\.\d+)?)\s?\+?[\s-]?(.+)")
_R = r"(?![A-Za-z0-9_])"
_SEG = r"[A-Za-z0-9_.@+-]+"

_IDENTIFIER = regexcache.compile(
    "|".join(
        [
            # One-character spans (`x`) match too, then are dropped: skipping them would pair
            # their closing backtick with the next span's opening one (`x` と `y` → "と").
            r"`(?P<code>[^`\n]{1,80})`",
            r"(?P<url>https?://[^\s<>\"'`()\[\]{}、。「」（）]+)",
            _L + rf"(?P<path>(?:~|\.{{1,2}})?/?(?:{_SEG}/)+{_SEG})" + _R,
            # A tracker's ticket (`PAY-1234`), or an issue of a forge as trackers cite it
            # (`GH#523`, `gh#523`, `PR#88`, `GH #523`: one id, its space dropped).
            _L
            + r"(?P<ticket>[A-Z][A-Z0-9]{1,9}-\d+(?:-\d+)*|[A-Za-z][A-Za-z0-9]{1,9}#\d+"
            + r"|[A-Z][A-Z0-9]{1,9} #\d+)"
            + _R,
            # 5秒, 5 seconds, 5-second, 5s, 1.5 GiB, 12月: one term whatever the spelling.
            r"(?<![A-Za-z0-9_.,/月])(?P<quantity>" + _QUANTITY + ")",
            _L + r"(?P<version>v?\d+(?:\.\d+)+(?:[-+][0-9A-Za-z.]+)?)" + _R,
            _L
            + r"(?P<beads>[a-z][a-z0-9]{0,15}(?:-[a-z0-9]+)*-(?=[a-z]*\d)[0-9a-z]{3,8}(?:\.\d+)*)"
            + _R,
            # Typed in capitals (`BD-7F3A`): a hash of letters and digits, which no ticket has.
            _L
            + (
                r"(?P<beads_upper>[A-Z][A-Z0-9]{0,15}-"
                r"(?=[A-Z]*\d)(?=\d*[A-Z])[0-9A-Z]{3,8}(?:\.\d+)*)"
            )
            + _R,
            # Hyphens allowed before the first dot: `docker-compose.yml` is one file name.
            _L
            + r"(?P<dotted>[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
            + _R,
            # Leading/trailing underscores belong to the name: `_private_func`, `__dunder__`.
            _L
            + r"(?P<snake>_*[A-Za-z0-9]+(?:_+[A-Za-z0-9]+)+_*|_+[A-Za-z0-9]+_*|[A-Za-z0-9]+_+)"
            + _R,
            _L + r"(?P<kebab>[a-z][a-z0-9]*(?:-[a-z0-9]+){2,})" + _R,
            _L
            + (
                r"(?P<camel>[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"
                r"|[A-Z]{2,}[a-z][A-Za-z0-9]*)"
            )
            + _R,
            # beads' CLI is `bd` whatever prefix an export's ids carry: `bd sync`, `bd list`
            # name one command, where `sync` and `list` alone are every project's words.
            r"(?<![A-Za-z0-9_./-])(?P<command>" + _BD_COMMAND_TEXT + r")(?![A-Za-z0-9_-])",
            _L + r"(?P<alnum>\d+[A-Za-z]+[A-Za-z0-9]*|[A-Za-z]+\d+[A-Za-z0-9]*)" + _R,
            _L + r"(?P<number>\d{3,})" + _R,
            _L + r"(?P<word>[A-Za-z][A-Za-z']*[A-Za-z]|[A-Z])" + _R,
        ]
    )
)
# Prefixes of names shaped like tickets (`UTF-8`) that are standards, encodings, protocols.
STANDARD_NAMES = frozenset(
    "UTF UCS SHA MD ISO IEC JIS EUC CP WIN IEEE RFC PEP ECMA ES IPV HTTP TLS SSL AES RSA "
    "CRC DES SHIFT GPT COVID H MPEG MP X Y HMAC".split()
)
# Two-letter words kept as keywords: shell commands a prompt names bare ("cp の上書き確認で
# 固まる"); every other two-letter word (`is`, `to`, `go`) is prose.
SHORT_COMMANDS = frozenset("cp mv rm ls ln ps df du dd jq gh nc vi".split())
_CAMEL_PART = regexcache.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_EXTENSION = regexcache.compile(r"\.[A-Za-z0-9]{1,8}$")
_TRIVIAL_CODE = regexcache.compile(r"^[\s\W_]*$|^\s*\S\s*$")

# Identifier kinds weigh more in ranking; `tokenize --json` shows the finer kind as `subkind`.
IDENTIFIER_KINDS = {
    "code",
    "url",
    "path",
    "ticket",
    "version",
    "beads",
    "dotted",
    "snake",
    "kebab",
    "camel",
    "alnum",
    "number",
    "quantity",
    "month",
    "command",
}


@dataclass(frozen=True)
class Keyword:
    text: str
    kind: str  # identifier | noun | proper_noun | compound | part | word | external
    subkind: str
    backend: str

    @property
    def key(self) -> str:
        # Ranking asks for this thousands of times per prompt; compute it once.
        try:
            return self.__dict__["_key"]
        except KeyError:
            value = self.text.casefold()
            object.__setattr__(self, "_key", value)
            return value

    def as_dict(self) -> dict[str, str]:
        return {
            "text": self.text,
            "kind": self.kind,
            "subkind": self.subkind,
            "backend": self.backend,
        }


def list_file_lines(paths: Iterable[Path]) -> Iterator[str]:
    """Lines of the user-editable word lists (stopwords, synonyms), `#` comments removed;
    a missing or unreadable file is simply empty."""
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                yield line


def load_stopwords(paths: Iterable[Path]) -> set[str]:
    return {unicodedata.normalize("NFKC", word).casefold() for word in list_file_lines(paths)}


def _path_like(text: str) -> bool:
    # `and/or`, `TCP/IP` are not paths; a path has an extension, two slashes or an anchor.
    # `./...` (every Go package) and `../..` name no file at all.
    if not any(c.isalnum() for c in text):
        return False
    if text.startswith(("/", "./", "../", "~/")):
        return True
    return text.count("/") >= 2 or bool(_EXTENSION.search(text.rsplit("/", 1)[-1]))


@lru_cache(maxsize=8)
def beads_id_pattern(prefixes: frozenset[str]) -> re.Pattern[str] | None:
    """Ids of the configured beads projects in any shape: `bd-1` (sequential), `bd-kpy`
    (a hash of letters only), `bd-0134cc5a`, `bd-2b34.1` (a child), in any case. Only known
    prefixes: `utf-8` or `well-known` must stay words."""
    usable = sorted(
        (p for p in prefixes if re.fullmatch(r"[a-z][a-z0-9_-]{0,30}", p)), key=len, reverse=True
    )
    if not usable:
        return None
    alternatives = "|".join(re.escape(p) for p in usable)
    # beads writes a wisp's, a molecule's and an ephemeral issue's kind into the id
    # (`bd-wisp-046b8`, `bd-mol-wba`): that id is whole, not `bd-mol` followed by a word. Any other
    # tail is not the id's (`bd-123-fix-login` is a branch named after bd-123).
    return re.compile(
        r"(?<![A-Za-z0-9_\-])(?:"
        + alternatives
        + r")-(?:(?:wisp|mol|eph)-)?[a-z0-9]{1,16}(?:\.\d+)*(?![A-Za-z0-9_])",
        re.IGNORECASE,
    )


_MASKED_RUN = regexcache.compile(" *\u3000+ *")


def _identifier_terms(
    prompt: str, known_ids: re.Pattern[str] | None = None
) -> tuple[list[Term], str]:
    """Find identifier-like spans; return them and the prompt with those spans masked."""
    terms: list[Term] = []
    masked = list(prompt)
    if known_ids is not None:
        for match in known_ids.finditer(prompt):
            terms.append(Term(match.group().lower(), "beads", match.start()))
            masked[match.start() : match.end()] = "\u3000" * (match.end() - match.start())
        prompt = "".join(masked)
    for match in _IDENTIFIER.finditer(prompt):
        group = match.lastgroup or "word"
        text = match.group(group)
        start = match.start()
        if group == "quantity" and text.endswith("月"):
            group = "month"  # a date, not an amount: the gate weighs them differently
        if group == "beads_upper":
            # An id of a configured project was found above whatever its case; what is left
            # is an acronym pair (`HMAC-SHA256`, `UTF-16LE`), never an issue to speak about.
            standard = known_ids is not None or text.split("-", 1)[0] in STANDARD_NAMES
            group, text = ("alnum", text) if standard else ("beads", text.lower())
        elif group == "ticket" and " #" in text:
            text = text.replace(" ", "")
        elif group == "word" and text[-2:].lower() == "'s" and len(text) > 3:
            text = text[:-2]  # the card processor's endpoint: `processor`, as notes write it
        elif group == "ticket" and text.split("-", 1)[0] in STANDARD_NAMES:
            # `UTF-8`, `SHA-256`, `ISO-8601` name a standard every project uses, not a ticket
            # of one tracker: not distinctive, never an id that makes recall speak alone.
            group = "alnum"
        if group == "path" and not _path_like(text):
            # Re-scan the pieces of a slash pair (`feature/CPN-90`) as separate identifiers.
            inner, _ = _identifier_terms(text.replace("/", " "), known_ids)
            terms.extend(Term(t.text, t.kind, start + t.start, t.rank) for t in inner)
        elif group == "code":
            # An id inside the span was taken above and masked: the command is what is left
            # around it (`bd show bd-12 --json` → `bd show --json`), not a run of blanks.
            text = _MASKED_RUN.sub(" ", text)
            if not _TRIVIAL_CODE.match(text):
                terms.append(Term(text.strip(), "code", start))
                inner, _ = _identifier_terms(text, known_ids)
                # Its plain words too: `git push origin` and `property('workdate')` name
                # `push` and `workdate` as much as prose does, and a note that writes its
                # commands in backticks must be found by them.
                terms.extend(
                    Term(t.text, "part", start, i + 1)
                    for i, t in enumerate(inner)
                    if t.text != text.strip() and (t.kind != "word" or _code_word(t.text))
                )
        else:
            text = text.rstrip(".") if group in ("url", "dotted", "version") else text
            terms.append(Term(text, group, start))
            terms.extend(_identifier_parts(group, text, start))
        for i in range(match.start(), match.end()):
            masked[i] = "\u3000"
    terms.sort(key=lambda t: (t.start, t.rank))
    return terms, "".join(masked)


# What follows `bd` in prose without being a subcommand: "every bd command", "the bd binary".
_NOT_SUBCOMMANDS = frozenset(
    "command commands subcommand subcommands process processes binary binaries executable "
    "cli tool user users file files agent agents issue issues database repo repos".split()
)


# beads' own subcommands: after `bd` they are the command even where the word alone is a
# stopword (`bd show`, `bd update`).
BD_SUBCOMMANDS = frozenset(
    "create list show update close reopen ready blocked dep sync init doctor compact export "
    "import stats prime pin unpin delete label comments comment config daemon onboard migrate "
    "restore merge duplicates epic search status edit setup upgrade cleanup admin info version "
    "hooks mol cook gate backup".split()
)


def _code_word(text: str) -> bool:
    return len(text) >= 3 or text in SHORT_COMMANDS


def _commands_only(terms: list[Term], stopwords: set[str]) -> list[Term]:
    """`bd <word>` where the word is prose (`bd command`, `bd is`) is that word, not a command."""
    kept: list[Term] = []
    prose: set[int] = set()
    for term in terms:
        if term.kind == "command":
            word = term.text.split(" ", 1)[1]
            if word not in BD_SUBCOMMANDS and (word in _NOT_SUBCOMMANDS or word in stopwords):
                prose.add(term.start)
                kept.append(Term(word, "word", term.start + 3))
                continue
        elif term.kind == "part" and term.start in prose:
            continue
        kept.append(term)
    return kept


def _identifier_parts(group: str, text: str, start: int) -> list[Term]:
    parts: list[str] = []
    if group == "path":
        base = text.rstrip("/").rsplit("/", 1)[-1]
        parts = [base, _EXTENSION.sub("", base)]
    elif group == "snake":
        parts = [p for p in text.split("_") if len(p) >= 4]
    elif group in ("camel", "kebab"):
        pieces = _CAMEL_PART.findall(text) if group == "camel" else text.split("-")
        parts = [p for p in pieces if len(p) >= 4]
    elif group == "dotted" and _EXTENSION.search(text):
        parts = [_EXTENSION.sub("", text)]
    elif group == "command":
        parts = [text.split(" ", 1)[1]]  # `sync` of `bd sync`: the word stays a word of the text
    elif group == "quantity":
        # The unit stays a word of the text: "dies a few seconds after" still meets
        # "exits 10 seconds after its parent".
        unit = _QUANTITY_PARTS.fullmatch(text)
        word = unit.group(2).lower() if unit else ""
        parts = [word] if word.isascii() and word.isalpha() and len(word) >= 4 else []
    unique = []
    for part in parts:
        if (len(part) >= 3 or group == "command") and part != text and part not in unique:
            unique.append(part)
    return [Term(p, "part", start, i + 1) for i, p in enumerate(unique)]


_ODD_HYPHEN = regexcache.compile(
    r"(?<=[A-Za-z0-9])[\u2010-\u2015\u2212\u30fc\uff70](?=[A-Za-z0-9])"
)
_JAPANESE_CHAR = regexcache.compile(r"[\u3041-\u30ff\u3400-\u9fff]")


def _name_in_japanese(text: str, term: Term) -> bool:
    """A capitalised two-letter word next to Japanese is a name (`Go のサービス`, `Vue で`);
    in English prose it starts a sentence ("Go to the page")."""
    if len(term.text) != 2 or not term.text.istitle():
        return False
    after = text[term.start + 2 : term.start + 4].lstrip(" ")
    before = text[max(0, term.start - 2) : term.start].rstrip(" ")
    return bool(_JAPANESE_CHAR.match(after[:1]) or _JAPANESE_CHAR.match(before[-1:]))


def _go_in_prose(text: str, term: Term) -> bool:
    """`Go` capitalised inside an English sentence is the language ("in Go, how do I …", "a
    newer Go release"); at a sentence's start it is the verb ("Go to the page", "OK, Go on")."""
    if term.text != "Go":
        return False
    before = text[: term.start].rstrip()
    return bool(before) and before[-1] not in ".!?;:,\n\"'`(「『"


# Inflections a two-word glossary phrase may be typed with ("logged out", "rolling back",
# "race conditions"): a stemmer would cost the prompt path an import; these suffice.
_VERB_ENDINGS = (("ied", "y"), ("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("s", ""))


def _base_forms(word: str, endings: tuple[tuple[str, str], ...]) -> list[str]:
    forms = [word]
    for ending, restore in endings:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            base = word[: -len(ending)] + restore
            forms.append(base)
            if not restore and len(base) >= 3 and base[-1] == base[-2]:
                forms.append(base[:-1])  # logged → logg → log
    return list(dict.fromkeys(forms))


_DEPENDS_ON = regexcache.compile(r"depend(?:s|ed|ing)? (?:up)?on (?:the |their |its )?$")
_DEPENDS_FILLER = frozenset({"on", "upon", "the", "their", "its"})


def _dependent_on(text: str, english: list[Term]) -> list[tuple[Term, Term, list[str]]]:
    """"depends on the order" says what "order-dependent" says: the glossary may list the
    compound (順序依存) where a prompt spells it out."""
    found = []
    for index, term in enumerate(english):
        if not term.text.lower().startswith("depend"):
            continue
        for later in english[index + 1 : index + 5]:
            between = text[term.start : later.start].lower()
            if _DEPENDS_ON.fullmatch(between) and later.text.lower() not in _DEPENDS_FILLER:
                found.append((term, later, [f"{later.text.lower()}-dependent"]))
                break
    return found


def _phrase_terms(
    text: str, english: list[Term], known_phrases: Callable[[set[str]], set[str]]
) -> list[tuple[Term, Term, str]]:
    """Two adjacent English words that the glossary lists as one entry ("log out", "race
    condition", "dead letter"), in the glossary's own spelling: (first, second, phrase).
    A hyphenated pair is also tried closed up, as one word the glossary lists: `re-send` is
    resend, `roll-back` rollback, `web-hook` webhook."""
    pairs = []
    for first, second in zip(english, english[1:]):
        gap = text[first.start + len(first.text) : second.start]
        if gap != " " and gap != "-":
            continue
        heads = _base_forms(first.text.lower(), _VERB_ENDINGS)
        tails = _base_forms(second.text.lower(), (("s", ""), ("es", "")))
        candidates = [f"{h} {t}" for h in heads for t in tails]
        if gap == "-":
            whole = first.text.lower()
            candidates += [f"{whole}{t}" for t in tails]
        pairs.append((first, second, candidates))
    pairs += _dependent_on(text, english)
    if not pairs:
        return []
    known = known_phrases({c for _, _, candidates in pairs for c in candidates})
    found = []
    for first, second, candidates in pairs:
        phrase = next((c for c in candidates if c in known), None)
        if phrase is not None:
            found.append((first, second, phrase))
    return found


def _public_kind(term_kind: str) -> tuple[str, str]:
    if term_kind in IDENTIFIER_KINDS:
        return "identifier", term_kind
    return term_kind, term_kind


def _encodable(text: str) -> str:
    """Lone surrogates (`\\ud800`, from a JSON escape) cannot reach a C analyser (MeCab raises)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def extract(
    prompt: str,
    analyzer: Analyzer,
    stopwords: set[str],
    limit: int | None = None,
    id_prefixes: frozenset[str] = frozenset(),
    known_predicates: Callable[[set[str]], set[str]] | None = None,
    known_phrases: Callable[[set[str]], set[str]] | None = None,
    japanese_phrases: Callable[[str], list[str]] | None = None,
) -> list[Keyword]:
    """Keywords in order of first appearance, without duplicates or stopwords.
    `id_prefixes`: the beads projects' id prefixes (`bd`), so `bd-1` is an id, not a word.
    `known_predicates`: which verbs and adjectives (dictionary forms) to keep — those the
    glossary or the dictionary can turn into other words (`固まる` → hang, stuck; `消す` →
    delete); none without it.
    `known_phrases`: which two-word phrases the glossary lists ("log out" → ログアウト); a
    phrase found is a keyword, and its words become its pieces.
    `japanese_phrases`: the glossary's Japanese phrases written in a text (`閉じた理由`,
    `起動しない`), which the analyser splits; each is a keyword, with its nouns as pieces."""
    text = unicodedata.normalize("NFKC", _encodable(prompt))
    # Typographic apostrophes (phones, word processors): `didn’t` is `didn't`, not `didn`.
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    # A hyphen typed through a Japanese input method or pasted from a document (`bdーndyz`,
    # `PAY‐1234`, `bd–12`) joins an id as `-` does.
    text = _ODD_HYPHEN.sub("-", text)
    id_terms, masked = _identifier_terms(text, beads_id_pattern(id_prefixes))
    id_terms = _commands_only(id_terms, stopwords)
    english = [t for t in id_terms if t.kind == "word"]
    id_terms = [t for t in id_terms if t.kind != "word"]
    words = [
        Term(t.text, "word", t.start)
        for t in english
        if len(t.text) >= 3 or (t.text.isupper() and len(t.text) >= 2) or t.text in SHORT_COMMANDS
    ]
    # Kept even when the word is a stopword: `Go のサービス` is the language, not the verb.
    names = {t.start for t in english if _name_in_japanese(text, t) or _go_in_prose(text, t)}
    words += [Term(t.text, "word", t.start) for t in english if t.start in names]
    if known_phrases is not None and len(english) >= 2:
        phrases = _phrase_terms(text, english, known_phrases)
        inside = {t.start for first, second, _ in phrases for t in (first, second)}
        words = [Term(t.text, "part", t.start, 1) if t.start in inside else t for t in words]
        words += [Term(phrase, "phrase", first.start) for first, _, phrase in phrases]
    in_phrases = {t.start for t in words if t.kind != "word"}
    pairs = [
        (first, second)
        for first, second in zip(english, english[1:])
        if text[first.start + len(first.text) : second.start] == "-"
        and first.start not in in_phrases
        and second.start not in in_phrases
    ]
    if pairs:
        # A hyphenated name (`container-diff`, `cert-manager`, `pre-commit`) is one term, as
        # the index holds it: its words alone are what every note about containers says.
        inside = {t.start for pair in pairs for t in pair}
        words = [Term(t.text, "part", t.start, 1) if t.start in inside else t for t in words]
        words += [
            Term(f"{first.text}-{second.text}".lower(), "compound", first.start)
            for first, second in pairs
        ]
    japanese = analyzer.analyze(masked) if masked.strip("\u3000 \n\t") else []
    # Same floor for every backend, `command:` programs included: no blanks, single kana, numerals.
    japanese = [t for t in japanese if not is_junk(t.text)]
    lemmas = {t.text for t in japanese if t.kind == "predicate"}
    if lemmas:
        kept = known_predicates(lemmas) if known_predicates else set()
        japanese = [t for t in japanese if t.kind != "predicate" or t.text in kept]
    if japanese_phrases is not None and masked.strip("\u3000 \n\t"):
        from .glossary import phrase_at

        for phrase in japanese_phrases(masked):
            at = phrase_at(masked, phrase)
            end = at + len(phrase)
            # A verb inside the phrase (切り戻す in 切り戻し, 閉じる in 閉じた理由) is the phrase's
            # meaning already; kept apart, it would take the phrase's synonyms as its own and
            # leave the phrase matching nothing.
            japanese = [
                Term(t.text, "part", t.start, t.rank + 1)
                if at <= t.start and t.start + len(t.text) <= end
                else t
                for t in japanese
                if t.kind != "predicate" or not at <= t.start < end
            ]
            japanese.append(Term(phrase, "compound", at))
    terms = sorted(id_terms + words + japanese, key=lambda t: (t.start, t.rank))
    seen: set[str] = set()
    keywords: list[Keyword] = []
    for term in terms:
        surface = term.text.strip()
        if term.kind in ("word", "part") and surface.isascii() and not surface.isupper():
            surface = surface.lower()
        key = surface.casefold()
        if not surface or key in seen or (key in stopwords and term.start not in names):
            continue
        seen.add(key)
        kind, subkind = _public_kind(term.kind)
        keywords.append(Keyword(surface, kind, subkind, analyzer.name))
        if limit is not None and len(keywords) >= limit:
            break
    return keywords


# --- index side ---------------------------------------------------------------------------

_PLAIN_WORD = regexcache.compile(r"[a-z]+")
_HYPHENATED = regexcache.compile(
    r"(?<![A-Za-z0-9_\-])[A-Za-z][A-Za-z0-9]{0,30}(?:-[A-Za-z0-9]{1,16}){1,4}(?:\.\d+)*(?![A-Za-z0-9_\-])"
)


# A forge's issue or pull request however a text cites it: `#903`, `GH#903`, `PR #903`, a link
# ending in `/pull/903` or `/issues/903`. The index holds each also as `#903`, which a prompt's
# `PR #903` asks for (forge_ref_forms): one number, whichever way it was written down.
_FORGE_NUMBER = regexcache.compile(
    r"(?:(?<![A-Za-z0-9&#/])#|(?<=[A-Za-z0-9])#|/(?:pull|pulls|issues|merge_requests)/)"
    r"(\d{1,7})(?![0-9A-Za-z_])"
)


def forge_ref_forms(keyword: Keyword) -> list[str]:
    """What a forge ticket (`PR#903`, `GH#523`) is also written as: `#903` (the form the index
    holds for every citation) and the tails of its links, which ripgrep finds as typed."""
    if keyword.subkind != "ticket" or "#" not in keyword.text:
        return []
    number = keyword.text.rsplit("#", 1)[1]
    if not number.isdigit():
        return []
    return [f"#{number}", f"pull/{number}", f"issues/{number}"]


def term_key(text: str) -> str:
    """The form a keyword takes in the search index: case-folded, and English words stemmed
    (`coupons` meets `coupon`). Identifiers, numbers and Japanese stay as they are: `PAY-1234`
    must never meet `PAY-12`, and a stemmer knows nothing about `在庫同期`."""
    key = text.casefold()
    if key.startswith("bd ") and _BD_COMMAND.fullmatch(key):
        return key.replace(" ", ":")  # one index term; the index splits terms at spaces
    if key[:1].isdigit() or key in _MONTH_KEYS:
        return _amount_key(text) or key
    if _PLAIN_WORD.fullmatch(key):
        from .stemming import stem

        return stem(key)
    return key


_BD_COMMAND = regexcache.compile(_BD_COMMAND_TEXT)
_MONTH_KEYS = {name: f"month{n}" for n, name in enumerate(MONTH_NAMES, 1) if name != "_"}


def _amount(text: str) -> tuple[str, str] | None:
    """(number, canonical unit) of a quantity (`5 Seconds` → ("5", "s")), a month as
    (number, "month") (`12月`, `December` → ("12", "month")); None for anything else."""
    month = _MONTH_KEYS.get(text.casefold())
    if month is not None:
        return month[5:], "month"
    if text.endswith("月") and text[:-1].isdigit():
        return str(int(text[:-1])), "month"
    parts = _QUANTITY_PARTS.fullmatch(text) if text[:1].isdigit() else None
    if parts is None:
        return None
    unit = parts.group(2) if len(parts.group(2)) == 1 else parts.group(2).casefold()
    if unit not in _UNIT_OF:
        return None
    number = parts.group(1).replace(",", "")
    number = number.rstrip("0").rstrip(".") if "." in number else str(int(number))
    return number, _UNIT_OF[unit]


def _amount_key(text: str) -> str | None:
    """The index term of an amount: `5s`, `month12`."""
    amount = _amount(text)
    if amount is None:
        return None
    number, unit = amount
    return f"month{number}" if unit == "month" else number + unit


def quantity_forms(text: str) -> list[str]:
    """Every spelling of a quantity or a month (`5秒` → 5s, 5 seconds, 5-second …), for
    finding the lines that hold it; [] for anything else."""
    amount = _amount(text)
    if amount is None:
        return []
    number, unit = amount
    if unit == "month":
        name = MONTH_NAMES[int(number) - 1]
        return list(dict.fromkeys([text, f"{number}月"] + ([] if name == "_" else [name])))
    forms = [text, number + unit]
    for spelling in QUANTITY_UNITS[unit]:
        if not spelling.isascii():
            forms.append(number + spelling)
        elif len(spelling) > 1:
            forms.append(f"{number} {spelling}")
            forms.append(f"{number}-{spelling}" if len(spelling) >= 4 else number + spelling)
    return list(dict.fromkeys(forms))


def index_terms(text: str, analyzer: Analyzer) -> list[str]:
    """Every term of a stored document, repeats kept (term frequency counts), produced by the
    very passes a prompt goes through: identifiers and their parts, the analyser's nouns,
    compounds and pieces, English words. Stopwords stay in the index, so editing the stopword
    list never needs a rebuild: they are dropped from prompts only."""
    text = unicodedata.normalize("NFKC", text)
    id_terms, masked = _identifier_terms(text)
    surfaces = [t.text for t in id_terms if t.kind != "word" or len(t.text) >= 2]
    # Every hyphenated token also whole: a prompt reads `bd-1` or `bd-kpy` as a beads id when
    # its prefix is a configured project's, and the index must hold the very same term
    # whatever projects were configured when it was built.
    whole = {(t.start, t.text.casefold()) for t in id_terms}
    surfaces += [
        m.group()
        for m in _HYPHENATED.finditer(text)
        if (m.start(), m.group().casefold()) not in whole
    ]
    surfaces += ["#" + m.group(1) for m in _FORGE_NUMBER.finditer(text)]
    if masked.strip("\u3000 \n\t"):
        surfaces += [
            t.text
            for t in analyzer.analyze(masked)
            if t.kind != "predicate" and not is_junk(t.text)
        ]
    return [term_key(s.strip()) for s in surfaces if s.strip()]
