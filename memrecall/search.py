"""The search engine shared by `memrecall search` and the hook.

keywords → patterns (plus synonyms) → one ripgrep pass per store root, all at once →
per-document matched keywords, lines and document frequencies → scores → near-duplicates
collapsed. The engine sits behind `search()`; an indexed engine for very large vaults can
replace `grep.grep` without touching ranking or the hook.
"""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import AbstractSet, Any, Iterable

from . import ranking, regexcache
from .config import Settings
from .glossary import add_inflections, glossary_files, load_synonyms, predicate_forms
from .katakana import is_katakana, stands_alone
from .keywords import Keyword, forge_ref_forms, quantity_forms
from .redact import redact_fast
from .stores.base import Document, Store, read_lines
from .stores.rules import rules_for
from .stores.rules import similarity as similarity  # memories.py asks search for it

STORE_NAMES = ("beads", "obsidian", "summaries")
# Documents whose headers are read for the final score: the rest cannot reach the top.
LOAD_LIMIT = 40
SNIPPET_CHARS = 200


@dataclass
class Pattern:
    text: str
    keyword: str  # case-folded canonical keyword
    synonym: bool
    matcher: regexcache.LazyPattern | None  # ASCII words need word edges; Japanese ones none
    # A katakana word is not found inside a longer one (ログ in ブログ): katakana.stands_alone.
    katakana: bool = False
    # A dictionary gloss of a word of kanji (階層 → hierarchy, loanwords.glosses): it ranks a
    # memory like any synonym but is no evidence for the gate on its own.
    gloss: bool = False

    @property
    def how(self) -> str:
        """How a memory that holds this pattern matched its keyword (`_Candidate.via`)."""
        return "gloss" if self.gloss else "synonym" if self.synonym else "direct"


@dataclass
class Hit:
    store: str
    ref: str
    path: Path
    title: str
    date: datetime | None
    score: float
    matched: list[str]
    line: int
    snippet: str
    lines: list[tuple[int, str]]
    status: str | None = None
    priority: int | None = None
    distinctive: bool = False
    # A beads id in the prompt is this issue's own id.
    exact_id: bool = False
    # × the score when ordering (Score.proximity): keywords that meet in one place.
    proximity: float = 1.0
    # A summary's `recalled:` list (`store:ref` of memories injected into its session).
    recalled: list[str] = field(default_factory=list)
    close_reason: str = ""
    # The weighted share of the prompt's keywords this memory matched (1.0: all of them).
    coverage: float = 0.0
    # Per matched prompt keyword: how rare, where (title or text): what the recall gate weighs.
    evidence: list[Evidence] = field(default_factory=list)
    # Keyword that contributed most: stopword tuning reads it from the recall log.
    main_keyword: str = ""
    # The prompt's top-level keywords this hit matched: a compound and its own pieces
    # (型エラー, エラー) are one topic, so they cannot pass the "several keywords" gate alone.
    topics: list[str] = field(default_factory=list)
    # The best matching lines, unredacted, until the hit is returned (then cleared).
    best: list[tuple[int, str, set[str]]] = field(default_factory=list, repr=False)
    # Set by the recall gate: the session-accumulated score and why it fired.
    acc: float = 0.0
    why: str = ""
    # The store root the memory lives under (a vault folder, a beads export): two vaults
    # with a `設計/a.md` each, or two projects with a `bd-1` each, are different memories.
    root: str = ""
    # Why it matched, for the recall log: keyword → "head" (title, tags, id) or "body".
    fields: dict[str, str] = field(default_factory=dict)
    # Known (from the index) to hold nothing redaction would touch.
    clean: bool = False
    # Frontmatter tags and inline #tags of a note, a beads issue's labels.
    tags: list[str] = field(default_factory=list)
    # Where `date` came from (stores.base.Document.date_source): "mtime" is shown as such.
    date_source: str = ""

    def date_label(self) -> str:
        """The date as people and Claude are shown it: a file's mtime (a clone or a copy sets
        it) never passes for the note's own date."""
        if self.date is None:
            return "undated"
        return self.date.date().isoformat() + (" (modified)" if self.date_source == "mtime" else "")

    @property
    def key(self) -> str:
        if not self.root:
            return f"{self.store}:{self.ref}"
        from .index import root_tag

        return f"{self.store}:{root_tag(self.root)}:{self.ref}"

    def as_json(self) -> dict[str, Any]:
        from .memories import summary_line

        # Redacted here, not with the title: only `search --json` shows them.
        redact = (lambda text: text) if self.clean else redact_fast
        summary = "" if rules_for(self.store).by_id else summary_line(self.path)
        return {
            "store": self.store,
            "ref": self.ref,
            "title": self.title,
            "score": round(self.score, 3),
            "matched": self.matched,
            "path": str(self.path),
            "line": self.line,
            "snippet": self.snippet,
            "date": self.date.isoformat() if self.date else None,
            "date_source": self.date_source or None,
            "status": self.status,
            "priority": self.priority,
            "close_reason": self.close_reason or None,
            # What a reader picks candidates by: the note's own one-line summary, else the
            # line that matched best.
            "summary": redact(summary) or self.snippet,
            "tags": [redact(tag) for tag in self.tags],
        }


@dataclass
class SearchOutcome:
    hits: list[Hit] = field(default_factory=list)
    # keyword → store → number of documents containing it
    df: dict[str, dict[str, int]] = field(default_factory=dict)
    candidates: dict[str, int] = field(default_factory=dict)
    doc_counts: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    timed_out: bool = False
    engine: str = "rg"
    # Why the index was not used for this search (then ripgrep answered), if it was not.
    fallback: str = ""
    # Whether a background index refresh or build was started by this search.
    refresh_started: bool = False
    # Where the search's time went (ms): the recall log keeps it.
    phase_ms: dict[str, float] = field(default_factory=dict)

    def mark(self, phase: str, since: float) -> float:
        now = time.monotonic()
        self.phase_ms[phase] = round((now - since) * 1000, 1)
        return now


def _ascii_matcher(text: str) -> regexcache.LazyPattern | None:
    if not text.isascii():
        return None
    # Left edge always (`rapid` must not match `API`). Right edge: an identifier is a whole
    # token (`PAY-12` never meets `PAY-1234`, `bd-1` never `bd-12`); a word may take an
    # English ending (`timeout` finds `timeouts`) but is not a prefix (`fetch` ≠ `fetchProduct`).
    if re.search(r"[^A-Za-z]", text) or len(text) <= 3:
        right = r"(?![A-Za-z0-9_])"
    else:
        right = r"(?:s|es|ed|d|ing|er|ers)?(?![A-Za-z0-9_])"
    # `#903` is also the tail of `GH#903`.
    left = "" if text.startswith("#") else r"(?<![A-Za-z0-9])"
    # Compiled only when a line holds the text (_match_line tests that first): most of a
    # prompt's 20–40 words and synonyms are on no candidate's line, and each costs ~0.3 ms.
    # ASCII case folding: the text is ASCII, and Unicode folding would make every letter class
    # take in `ſ` and the Kelvin sign, a map of 65,536 characters to build.
    return regexcache.LazyPattern(
        left + re.escape(text) + right, re.IGNORECASE | re.ASCII, kept=False
    )


def build_patterns(
    keywords: list[Keyword],
    synonyms: dict[str, set[str]],
    glossed: AbstractSet[str] = frozenset(),
) -> list[Pattern]:
    """`glossed`: the keywords whose synonyms are dictionary glosses (loanwords.add_origins)."""
    patterns: list[Pattern] = []
    seen: set[str] = set()
    # A word two keywords share (`export` for エクスポート and 書き出す) is found for the first
    # that asks for it; a noun asks first, because only nouns count towards how much of the
    # prompt a memory covers, and a verb that took them all would leave the noun matching
    # nothing.
    # A piece (`diff` of `git diff --stat`, `環境` of `本番環境`) asks last, after every
    # whole keyword's synonyms: `diff` is the translation of a `差分` typed in the prompt
    # before it is a word of the command, which its other words find anyway.
    ordered = sorted(keywords, key=lambda k: k.kind == "predicate")
    texts: list[tuple[Keyword, str, bool]] = []
    for group in (
        [k for k in ordered if k.kind != "part"],
        [k for k in ordered if k.kind == "part"],
    ):
        for keyword in group:
            # A predicate is found in any of its conjugations, and so is a synonym that is
            # one. A quantity or a month in each of its spellings (5秒, 5 seconds, 5s; 12月).
            own = (
                predicate_forms(keyword.text)
                if keyword.kind == "predicate"
                else quantity_forms(keyword.text) or [keyword.text]
            )
            texts += [(keyword, form, False) for form in own]
        for keyword in group:
            texts += [(keyword, form, True) for form in forge_ref_forms(keyword)]
            for word in sorted(synonyms.get(keyword.key, ())):
                if word.casefold() != keyword.key:
                    texts += [(keyword, form, True) for form in predicate_forms(word)]
    for keyword, text, is_synonym in texts:
        folded = text.casefold()
        if folded in seen:
            continue
        seen.add(folded)
        patterns.append(
            Pattern(
                text,
                keyword.key,
                is_synonym,
                _ascii_matcher(text),
                is_katakana(text),
                gloss=is_synonym and keyword.key in glossed,
            )
        )
    return patterns


# --- stores -----------------------------------------------------------------------------


def open_stores(settings: Settings, only: Iterable[str] | None = None) -> list[Store]:
    from .stores.beads import BeadsStore
    from .stores.markdown import SummaryStore, VaultStore

    wanted = set(only or STORE_NAMES)
    cache = settings.state_dir
    stores: list[Store] = []
    if "beads" in wanted and settings.beads:
        stores.append(BeadsStore(settings.beads))
    vaults = settings.vaults() if "obsidian" in wanted else []
    if vaults:
        stores.append(VaultStore(vaults, cache))
    if "summaries" in wanted:
        stores.append(
            SummaryStore(settings.summaries, settings.now, settings.retention_days, cache)
        )
    return stores


def missing_stores(settings: Settings, only: Iterable[str] | None = None) -> list[str]:
    """One line per configured vault or beads location that is not there: otherwise a
    mistyped path is silent (`search` says "No results", the hook stays quiet). A stat per
    root, a few for a beads folder: cheap enough for the hook."""
    from .stores.beads import resolve_files

    wanted = set(only or STORE_NAMES)
    missing: list[str] = []
    if "obsidian" in wanted:
        for vault in settings.obsidian:
            if not vault.is_dir():
                what = "is not a folder" if vault.exists() else "does not exist"
                missing.append(
                    f"obsidian vault {vault} {what} (MEMRECALL_OBSIDIAN / obsidian in config.toml)"
                )
    if "beads" in wanted:
        for location in settings.beads:
            if not location.exists():
                what = f"beads location {location} does not exist"
            elif not resolve_files(location):
                what = f"no beads export (issues.jsonl) found at {location}"
            else:
                continue
            missing.append(f"{what} (MEMRECALL_BEADS / beads in config.toml)")
    return missing


# --- matching and scoring ---------------------------------------------------------------


@dataclass
class _Candidate:
    doc: Document
    # canonical keyword → "direct" | "synonym"
    via: dict[str, str] = field(default_factory=dict)
    # line number → canonical keywords matched on it
    line_keys: dict[int, set[str]] = field(default_factory=dict)
    prelim: float = 0.0
    # canonical keyword → BM25 term-frequency factor (index engine only)
    tf: dict[str, float] = field(default_factory=dict)
    root: str = ""
    # Where an indexed beads issue's JSON line starts in its export.
    offset: int = 0
    clean: bool = False
    stamp: str = ""
    # The patterns the index matched this document on, with their term-frequency factors.
    index_matches: list[tuple[Pattern, float]] = field(default_factory=list)
    # It holds a stretch of the prompt word for word (an error message, a title).
    verbatim: bool = False
    read: bool = False
    gone: bool = False  # its file changed or went away since it was indexed


def _match_line(text: str, patterns: list[Pattern]) -> dict[str, str]:
    folded = text.casefold()
    found: dict[str, str] = {}
    for pattern in patterns:
        if pattern.text.casefold() not in folded:
            continue
        if pattern.matcher is not None and not pattern.matcher.search(text):
            continue
        if pattern.katakana and not stands_alone(folded, pattern.text.casefold()):
            continue
        if found.get(pattern.keyword) != "direct":
            found[pattern.keyword] = pattern.how
    return found


def _scan_lines(candidate: _Candidate, patterns: list[Pattern]) -> None:
    """Which keyword is on which line, from whole lines (ASCII keywords need word edges)."""
    candidate.via.clear()
    candidate.line_keys.clear()
    folded_patterns = [p.text.casefold() for p in patterns]
    for number, text in candidate.doc.lines.items():
        folded = text.casefold()
        if not any(p in folded for p in folded_patterns):
            continue
        found = _match_line(text, patterns)
        if not found:
            continue
        candidate.line_keys[number] = set(found)
        for key, how in found.items():
            if candidate.via.get(key) != "direct":
                candidate.via[key] = how


def _candidates(docs: Iterable[Document], patterns: list[Pattern]) -> list[_Candidate]:
    by_text: dict[str, list[Pattern]] = {}
    for pattern in patterns:
        by_text.setdefault(pattern.text.casefold(), []).append(pattern)
    result = []
    for doc in docs:
        candidate = _Candidate(doc)
        if doc.found:
            # Straight from grep's matches: no text to scan. Word edges of ASCII keywords
            # are checked later, on the few documents that get loaded (_verify).
            for number, text in doc.found:
                for pattern in by_text.get(text.casefold(), ()):
                    candidate.line_keys.setdefault(number, set()).add(pattern.keyword)
                    if candidate.via.get(pattern.keyword) != "direct":
                        candidate.via[pattern.keyword] = pattern.how
        else:
            _scan_lines(candidate, patterns)
        if candidate.via:
            result.append(candidate)
    return result


def _verify(candidate: _Candidate, patterns: list[Pattern]) -> bool:
    """Read the matched lines of a loaded document and recount its keywords exactly."""
    doc = candidate.doc
    if doc.found and not doc.lines:
        doc.lines = read_lines(doc.path, candidate.line_keys)
        _scan_lines(candidate, patterns)
    return bool(candidate.via)


@dataclass
class Evidence:
    """One prompt keyword (a topic: a compound and its own pieces are one) a memory matched."""

    keyword: str  # as typed in the prompt
    subkind: str
    credit: float  # 1 direct, 0.7 via a synonym, 0.5 through a piece of the compound
    rarity: float  # 1.0 in one document of the store, near 0 in all of them
    df: int  # documents of the store holding it
    head: bool  # in the title, tags, aliases or id; else only in the text
    gloss: bool = False  # matched only through a dictionary gloss (Pattern.gloss)


@dataclass
class Score:
    value: float
    coverage: float
    distinctive: bool
    main: str  # the keyword key that contributed most
    topics: list[str]
    # The prompt names this very issue (a beads id equal to its own): it ranks first.
    exact_id: bool = False
    evidence: list[Evidence] = field(default_factory=list)
    # How much its keywords meet in one place (ranking.PROXIMITY_BOOST): it orders the
    # memories, and leaves `value`, what the recall gate weighs, as it is.
    proximity: float = 1.0


class _Scorer:
    def __init__(
        self, keywords: list[Keyword], now: datetime, patterns: list[Pattern] | None = None
    ) -> None:
        self.now = now
        # Stretches of the prompt that a memory may hold word for word (verbatim_phrases).
        self.phrases: list[str] = []
        # What the prompt quotes (「…」, "…", `…`): a memory whose title it is leads.
        self.quoted: set[str] = set()
        # A title that holds a synonym of the keyword (起動 for 立ち上がり, startup for 起動)
        # is about it as much as one that holds the keyword itself.
        self.synonym_forms: dict[str, list[Pattern]] = {}
        for pattern in patterns or ():
            if pattern.synonym:
                self.synonym_forms.setdefault(pattern.keyword, []).append(pattern)
        self.by_key = {k.key: k for k in keywords}
        # A piece (`本番`) belongs to the earlier compound that contains it (`本番環境`).
        self.parent: dict[str, str] = {}
        tops = [k for k in keywords if k.kind != "part"]
        for keyword in keywords:
            if keyword.kind == "part":
                owner = next((t for t in tops if keyword.key in t.key), None)
                if owner is not None:
                    self.parent[keyword.key] = owner.key
        self.tops = [k for k in keywords if k.key not in self.parent]
        self.children: dict[str, list[str]] = {}
        for piece, owner_key in self.parent.items():
            self.children.setdefault(owner_key, []).append(piece)
        self.total_weight = (
            sum(ranking.kind_weight(k.subkind) for k in self.tops if k.kind != "predicate") or 1.0
        )
        # How a keyword may be spelt in a title: `5秒` as "5 seconds", December as 12月.
        # The commands pasted in backticks that a memory may hold whole (credit_held_code).
        self.code_phrases = {
            phrase: k.key
            for k in self.tops
            if k.subkind == "code" and len(phrase := " ".join(k.key.split())) >= CODE_PHRASE_MIN
        }
        self.head_forms = {
            k.key: [form.casefold() for form in quantity_forms(k.text)] or [k.key] for k in keywords
        }

    def credit_held_code(self, cand: _Candidate) -> None:
        """A command or expression the prompt pasted in backticks, held whole by this memory,
        is matched as typed: the index found it only through its words."""
        for phrase, key in self.code_phrases.items():
            if key not in cand.via and _holds_phrase(cand.doc, [phrase]):
                cand.via[key] = "direct"

    def score(self, cand: _Candidate, df: dict[str, int], total: int, with_fields: bool) -> Score:
        doc = cand.doc
        result = Score(0.0, 0.0, False, "", [])
        raw = 0.0
        covered = 0.0
        best_value = -1.0
        matched_rarity: dict[str, float] = {}
        for top in self.tops:
            weight = ranking.kind_weight(top.subkind)
            credit, key, gloss = 0.0, top.key, cand.via.get(top.key) == "gloss"
            if top.key in cand.via:
                credit = 1.0 if cand.via[top.key] == "direct" else ranking.SYNONYM_CREDIT
            else:
                pieces = [p for p in self.children.get(top.key, ()) if p in cand.via]
                if pieces:
                    key = max(pieces, key=lambda p: ranking.rarity(df.get(p, 1), total))
                    credit = ranking.PART_CREDIT
                    # 階層深度 found as "hierarchy" and "depth" only through the dictionary.
                    gloss = all(cand.via[p] == "gloss" for p in pieces)
                    share = len(pieces) / len(self.children[top.key])
                    if top.subkind == "code":
                        # A command is found as far as its words are: `git` alone is not
                        # `git diff --ignore-matching-lines`.
                        credit *= share
                    elif top.kind == "compound" and "-" in top.key and top.key.isascii():
                        # `hard-deleting` is "hard delete" written apart as much as together.
                        credit = share
            if not credit:
                continue
            result.topics.append(top.key)
            rarity = ranking.rarity(df.get(key, 1), total)
            value = credit * weight * rarity
            if key in cand.tf:
                value *= ranking.tf_factor(cand.tf[key])
            in_head = with_fields and (
                any(_holds(doc.heading_text, form) for form in self.head_forms.get(key, (key,)))
                or (
                    credit == ranking.SYNONYM_CREDIT
                    and bool(_match_line(doc.heading_text, self.synonym_forms.get(key, [])))
                )
            )
            if in_head:
                value *= ranking.FIELD_BOOST
            if credit == 1.0 and rules_for(doc.store).is_own_id(doc.ref, key):
                # The prompt names this very issue: it leads every issue that mentions it.
                value *= ranking.EXACT_ID_BOOST
                result.distinctive = result.exact_id = True
            result.evidence.append(
                Evidence(top.text, top.subkind, credit, rarity, df.get(key, 1), in_head, gloss)
            )
            matched_rarity[top.key] = rarity
            raw += value
            if top.kind != "predicate":
                covered += credit * weight
            if value > best_value:
                result.main, best_value = key, value
            if (
                credit == 1.0
                and top.subkind in ranking.DISTINCTIVE_SUBKINDS
                and df.get(key, 1) <= ranking.DISTINCTIVE_MAX_DF
            ):
                result.distinctive = True
        result.coverage = covered / self.total_weight
        if with_fields:
            result.proximity = 1.0 + ranking.PROXIMITY_BOOST * self._proximity(cand, matched_rarity)
        if cand.verbatim or (self.quoted and with_fields and _titled(doc, self.quoted)):
            raw *= ranking.VERBATIM_BOOST
        factor = 1.0
        if with_fields:
            factor = rules_for(doc.store).score_factor(doc.date, doc.status, self.now)
        result.value = raw * (0.5 + result.coverage) * factor
        return result

    def _proximity(self, cand: _Candidate, matched_rarity: dict[str, float]) -> float:
        """The rarity-weighted share of the matched keywords (a piece counts for its
        compound) found together in the memory's best stretch of PROXIMITY_LINES lines; 0
        unless two or more meet there."""
        total = sum(matched_rarity.values())
        if len(matched_rarity) < 2 or not total:
            return 0.0
        numbers = sorted(cand.line_keys)
        best = 0.0
        for i, first in enumerate(numbers):
            together: set[str] = set()
            for number in numbers[i : i + ranking.PROXIMITY_LINES]:
                if number - first >= ranking.PROXIMITY_LINES:
                    break
                together |= {self.parent.get(k, k) for k in cand.line_keys[number]}
            together &= matched_rarity.keys()
            if len(together) >= 2:
                best = max(best, sum(matched_rarity[k] for k in together) / total)
        return best


def _holds(text: str, form: str) -> bool:
    return form in text and (not is_katakana(form) or stands_alone(text, form))


def _snippet(text: str, keys: set[str]) -> str:
    line = " ".join(text.split())
    if len(line) <= SNIPPET_CHARS:
        return line
    folded = line.casefold()
    positions = [folded.find(k) for k in keys if folded.find(k) >= 0]
    start = max(0, min(positions, default=0) - SNIPPET_CHARS // 3)
    piece = line[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(line) else "")


# Lines that say nothing a reader can use: a keyword footer (`[[INV-88]] [[在庫同期]]`,
# `#tag #tag`), a bare URL, a list marker or rule with nothing after it.
_MARKUP_ONLY = regexcache.compile(
    r"^(?:\s|[-*+>#|:=~`_.,;、。・]|\d+\.|\[\[[^\]]*\]\]|#[^\s#]+|https?://\S+"
    r"|\[[ xX]\]|\[[^\]]*\]\([^)]*\))*$"
)
# Lines that state an outcome: what a memory is for.
_TELLING = regexcache.compile(
    r"決定|決め|結論|原因|対策|方針|理由|注意|ハマ|落とし穴|解決|回避|結果|採用|やめ|変更し|にした|"
    r"decid|conclu|because|root cause|fix|workaround|gotcha|caveat|instead|chose|"
    r"must|never|always|→|=>",
    re.IGNORECASE,
)
_CODE_CHARS = regexcache.compile(r"[{}();=<>$\[\]]")


def _code_lines(doc: Document) -> set[int]:
    """Lines inside fenced code blocks (only known when the whole text is loaded)."""
    inside, found = False, set()
    for number in sorted(doc.lines):
        if doc.lines[number].lstrip().startswith(("```", "~~~")):
            inside = not inside
            found.add(number)
        elif inside:
            found.add(number)
    return found


def _repeats_header(doc: Document, number: int) -> bool:
    """Frontmatter, or a beads issue's first line (its id and title, shown in the header)."""
    return rules_for(doc.store).is_header_line(doc, number)


def _line_rank(number: int, text: str, keys: set[str], code: set[int]) -> tuple[int, ...]:
    """Sort key, best first, among lines that do not repeat the header: text before
    headings, then the most keywords, a stated outcome, prose over code, then the earliest."""
    stripped = text.strip()
    heading = stripped.startswith("#")
    is_code = (
        number in code
        or stripped.startswith("    ")
        or len(_CODE_CHARS.findall(stripped)) * 8 > len(stripped)
    )
    return (heading, -len(keys), not _TELLING.search(stripped), is_code, len(stripped) < 12, number)


def _quoted_form(text: str) -> str:
    """A line as a reader compares it: case, spacing and list or heading markers ignored."""
    return " ".join(text.casefold().split()).lstrip("-*+># ")


def _best_lines(cand: _Candidate, limit: int = 3) -> list[tuple[int, str, set[str]]]:
    doc = cand.doc
    code = _code_lines(doc) if len(doc.lines) > len(cand.line_keys) else set()
    # Shown anyway: the title in the header, a closed issue's reason on its own line.
    seen = {" ".join(doc.title.casefold().split()), " ".join(doc.close_reason.casefold().split())}
    usable = []
    for number, keys in cand.line_keys.items():
        text = doc.lines.get(number, "")
        if not (_repeats_header(doc, number) or _MARKUP_ONLY.match(text)):
            usable.append((number, text, keys, _quoted_form(text)))
    usable.sort(key=lambda item: _line_rank(item[0], item[1], item[2], code))
    chosen: list[tuple[int, str, set[str]]] = []
    for number, text, keys, normal in usable:
        if normal in seen:
            continue
        seen.add(normal)
        chosen.append((number, text, keys))
        if len(chosen) == limit:
            break
    if not chosen:
        # Only the title, frontmatter or a footer matched: quote the first line worth reading.
        for number in sorted(doc.lines):
            text = doc.lines[number]
            if (
                not _repeats_header(doc, number)
                and text.strip()
                and not _MARKUP_ONLY.match(text)
                and not text.lstrip().startswith("#")
            ):
                if " ".join(text.casefold().split()) not in seen:
                    return [(number, text, set())]
        first = min(cand.line_keys, default=None)
        if first is not None:
            return [(first, doc.lines.get(first, ""), cand.line_keys[first])]
    return chosen


def _near_duplicate(a: Hit, b: Hit) -> bool:
    return a.store == b.store and rules_for(a.store).near_duplicate(a, b)


def _collapse(hits: list[Hit]) -> list[Hit]:
    """Drop near-duplicates; the newer copy stays, at the better of the two ranks. An older
    memory that matched what the newer one does not say (a resumed session's summary leaves
    out the first day's findings) is no duplicate for this prompt: both stay. One issue in
    two exports is one issue whatever each says: its newer state stays alone."""
    kept: list[Hit] = []
    for hit in hits:
        twin = next((k for k in kept if _near_duplicate(hit, k)), None)
        if twin is None:
            kept.append(hit)
            continue
        newer_is_hit = bool(hit.date and twin.date and hit.date > twin.date)
        older, newer = (twin, hit) if newer_is_hit else (hit, twin)
        if older.ref != newer.ref and not set(older.matched) <= set(newer.matched):
            kept.append(hit)
        elif newer_is_hit:
            kept[kept.index(twin)] = hit
    return kept


def _originals_first(hits: list[Hit]) -> list[Hit]:
    """A summary repeats what was injected into its session: the memory it got that from
    ranks just ahead of it (and so stays eligible), never below its second-hand copy."""
    position = {f"{h.store}:{h.ref}": i for i, h in enumerate(hits)}
    lifted = False
    for copy in hits:
        for ref in copy.recalled:
            i = position.get(ref)
            if i is not None and _ranked(hits[i]) < _ranked(copy):
                # Ahead of the copy in the order; to the gate, as strong as the copy (never
                # weaker than it was): proximity orders, it never makes a memory speak.
                original = hits[i]
                original.score = max(original.score, copy.score * 1.01)
                original.proximity = max(original.proximity, copy.proximity)
                lifted = True
    if lifted:
        hits.sort(key=_rank_order, reverse=True)
    return hits


def _rank_order(hit: Hit) -> tuple[bool, float]:
    """An issue the prompt names by its id comes first, whatever mentions it more often."""
    return hit.exact_id, _ranked(hit)


def _ranked(hit: Hit) -> float:
    """The score that orders the hits; the gate weighs `score` itself."""
    return hit.score * hit.proximity


def _newer_first(hits: list[Hit]) -> list[Hit]:
    """When two summaries cover the same ground with similar scores, the newer one leads:
    it may say that an older decision was reversed. The older follows right behind it, never
    below the hits that ranked between them."""
    ordered = list(hits)
    for i in range(len(ordered)):
        for j in range(i + 1, len(ordered)):
            a, b = ordered[i], ordered[j]
            if a.store != b.store or not rules_for(a.store).newer_leads or not (a.date and b.date):
                continue
            shared = set(a.matched) & set(b.matched)
            if (
                b.date > a.date
                and _ranked(b) * 1.25 >= _ranked(a)
                and len(shared) * 2 >= len(a.matched)
            ):
                ordered.insert(i, ordered.pop(j))
    return ordered


def search(
    keywords: list[Keyword],
    settings: Settings,
    stores: list[Store] | None = None,
    deadline: float | None = None,
    limit: int = 10,
    synonyms: dict[str, set[str]] | None = None,
    only: Iterable[str] | None = None,
    text: str = "",
) -> SearchOutcome:
    """Best hits first. The index answers when there is a usable one; otherwise ripgrep
    (and `outcome.fallback` says why). Passing `stores` forces ripgrep over exactly those.
    `text`, the prompt the keywords came from, lets a line quoted whole rank first."""
    outcome = SearchOutcome()
    if not keywords:
        return outcome
    if stores is None:
        outcome.warnings += missing_stores(settings, only)
    glossed: set[str] = set()
    if synonyms is None:
        paths = glossary_files(settings)
        if settings.index.enabled and stores is None:
            from .index import index_home

            paths.append(index_home(settings) / "aliases.txt")  # notes' titles and aliases
        synonyms = load_synonyms(paths, {k.key for k in keywords})
        add_inflections(paths, [k.key for k in keywords], synonyms)
        from .loanwords import add_compound_english, add_origins

        pieces = {k.key for k in keywords if k.kind == "part"}
        glossed = add_origins([(k.key, k.text) for k in keywords], synonyms, pieces)
        glossed |= add_compound_english([(k.key, k.text, k.kind) for k in keywords], synonyms)
    patterns = build_patterns(keywords, synonyms, glossed)
    scorer = _Scorer(keywords, settings.now, patterns)
    scorer.phrases = verbatim_phrases(text)
    scorer.quoted = quoted_spans(text)
    hits: list[Hit] | None = None
    if stores is None and settings.index.enabled:
        hits = _search_index(keywords, patterns, scorer, settings, outcome, limit, only, deadline)
    elif stores is None:
        outcome.fallback = "index disabled"
    if hits is None:
        stores = open_stores(settings, only) if stores is None else stores
        hits = _search_rg(patterns, scorer, stores, outcome, deadline)
    hits.sort(key=_rank_order, reverse=True)
    # One memory, one hit: an export that lists an issue twice (its old and new state).
    unique: dict[str, Hit] = {}
    for hit in hits:
        unique.setdefault(hit.key, hit)
    hits = list(unique.values())
    hits = _originals_first(hits)
    mark = time.monotonic()
    outcome.hits = _newer_first(_collapse(hits[: limit * 3]))[:limit]
    mark = outcome.mark("collapse", mark)
    for hit in outcome.hits:
        _redact_shown(hit)
    outcome.mark("redact", mark)
    return outcome


def _make_hit(
    store: str, cand: _Candidate, scorer: _Scorer, df: dict[str, int], total: int
) -> Hit | None:
    score = scorer.score(cand, df, total, with_fields=True)
    best = _best_lines(cand)
    if not best:
        return None
    order = list(scorer.by_key)
    matched_keys = sorted(cand.via, key=lambda k: order.index(k) if k in order else 99)
    heading = cand.doc.heading_text
    return Hit(
        store=store,
        ref=cand.doc.ref,
        path=cand.doc.path,
        title=cand.doc.title,
        date=cand.doc.date,
        date_source=cand.doc.date_source,
        score=score.value,
        matched=[scorer.by_key[k].text if k in scorer.by_key else k for k in matched_keys],
        # A beads issue is found at its line of the export; its quoted lines number its text.
        line=cand.doc.source_line or best[0][0],
        # Unredacted, for near-duplicate checks only; _redact_shown sets the
        # snippet and `lines` shown, once the hit is among those returned.
        snippet=_snippet(best[0][1], best[0][2]),
        lines=[],
        status=cand.doc.status,
        priority=cand.doc.priority,
        distinctive=score.distinctive,
        exact_id=score.exact_id,
        proximity=score.proximity,
        coverage=score.coverage,
        evidence=score.evidence,
        recalled=cand.doc.recalled,
        close_reason=cand.doc.close_reason,
        main_keyword=scorer.by_key[score.main].text if score.main in scorer.by_key else score.main,
        topics=score.topics,
        best=best,
        root=cand.root,
        clean=cand.clean,
        tags=list(cand.doc.tags),
        fields={
            (scorer.by_key[k].text if k in scorer.by_key else k): (
                "head" if k in heading else "body"
            )
            for k in matched_keys
        },
    )


def _search_rg(
    patterns: list[Pattern],
    scorer: _Scorer,
    stores: list[Store],
    outcome: SearchOutcome,
    deadline: float | None,
) -> list[Hit]:
    from .grep import grep

    jobs = [(store, job) for store in stores for job in store.jobs()]
    results = grep([job for _, job in jobs], [p.text for p in patterns], deadline)
    for store in stores:
        outcome.warnings += getattr(store, "warnings", [])
    hits: list[Hit] = []
    for store in stores:
        lines: dict[Path, list[tuple[int, str]]] = {}
        for (owner, _), result in zip(jobs, results):
            if owner is not store:
                continue
            outcome.timed_out |= result.timed_out
            outcome.engine = result.engine
            outcome.warnings += result.errors
            for path, found in result.lines.items():
                lines.setdefault(path, []).extend(found)
        candidates = _candidates(store.documents(lines), patterns)
        outcome.candidates[store.name] = len(candidates)
        df: dict[str, int] = {}
        for cand in candidates:
            for key in cand.via:
                df[key] = df.get(key, 0) + 1
        for key, count in df.items():
            outcome.df.setdefault(key, {})[store.name] = count
        if not candidates:
            continue
        total = store.doc_count() or len(candidates)
        outcome.doc_counts[store.name] = total
        for cand in candidates:
            cand.prelim = scorer.score(cand, df, total, with_fields=False).value
        candidates.sort(key=lambda c: c.prelim, reverse=True)
        for cand in candidates[:LOAD_LIMIT]:
            if deadline is not None and time.monotonic() > deadline:
                outcome.timed_out = True
                break
            if not cand.doc.loaded and not store.load(cand.doc):
                continue
            if not cand.doc.loaded:
                cand.doc.loaded = True
            if not _verify(cand, patterns):
                continue
            cand.root = store.root_of(cand.doc.path)
            cand.verbatim = _holds_phrase(cand.doc, scorer.phrases)
            if cand.verbatim:
                scorer.credit_held_code(cand)
            hit = _make_hit(store.name, cand, scorer, df, total)
            if hit is not None:
                hits.append(hit)
    return hits


# Candidates the index ranks (BM25 over head and body) before memrecall's own scoring.
INDEX_CANDIDATES = 100


def _search_index(
    keywords: list[Keyword],
    patterns: list[Pattern],
    scorer: _Scorer,
    settings: Settings,
    outcome: SearchOutcome,
    limit: int,
    only: Iterable[str] | None,
    deadline: float | None = None,
) -> list[Hit] | None:
    """The index engine, or None (with `outcome.fallback` set) when ripgrep must answer."""
    from .index import IndexReader, IndexUnavailable, QueryTerm, has_cjk, maybe_start_refresh
    from .keywords import term_key

    background = settings.index.background
    mark = time.monotonic()

    def fall_back(reason: str, rebuild: bool = False) -> None:
        outcome.fallback = reason
        if background:
            outcome.refresh_started = maybe_start_refresh(settings, reason, rebuild)

    try:
        reader = IndexReader(settings, keywords[0].backend)
    except IndexUnavailable as exc:
        if exc.rebuildable:
            fall_back(str(exc))
        else:
            outcome.fallback = str(exc)
        return None
    mark = outcome.mark("open", mark)
    if reader.missing_roots:
        names = ", ".join(sorted(str(path) for _, path in reader.missing_roots))[:300]
        fall_back(f"store not indexed yet: {names}")
        return None
    patterns = [p for p in _distinct_index_patterns(patterns) if not _phrasal_verb(p.text)]
    terms = []
    for pattern in patterns:
        by = scorer.by_key.get(pattern.keyword)
        weight = ranking.kind_weight(by.subkind) if by else 1.0
        credit = ranking.SYNONYM_CREDIT if pattern.synonym else 1.0
        if by is not None and by.kind == "part":
            credit *= ranking.PART_CREDIT
        term = term_key(pattern.text)
        # On the index form: `5秒` is the plain term `5s`, not a bigram of Japanese text.
        terms.append(QueryTerm(pattern.text, term, weight * credit, has_cjk(term)))
    try:
        answer = reader.query(terms, INDEX_CANDIDATES, set(only) if only else None)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a damaged segment; tantivy's panics are BaseExceptions
        fall_back(f"index query failed: {exc.__class__.__name__}: {str(exc)[:200]}", rebuild=True)
        return None
    outcome.engine = "index"
    mark = outcome.mark("query", mark)
    if answer.stale and background:
        outcome.refresh_started = maybe_start_refresh(settings, "index older than refresh_seconds")

    df_by_store: dict[str, dict[str, int]] = {}
    for pattern, counts in zip(patterns, answer.df):
        for name, count in counts.items():
            per = df_by_store.setdefault(name, {})
            if not pattern.synonym:
                # A predicate's forms are patterns of one keyword: the commonest counts. They
                # come before the keyword's synonyms (build_patterns), so none is counted yet.
                per[pattern.keyword] = max(per.get(pattern.keyword, 0), count)
            else:
                per.setdefault(pattern.keyword, count)
    for name, per in df_by_store.items():
        for key, count in per.items():
            outcome.df.setdefault(key, {})[name] = count
    outcome.doc_counts = dict(answer.totals)
    candidates: list[_Candidate] = []
    for found in answer.hits:
        doc = Document(
            found.store,
            found.ref,
            Path(found.path),
            title=found.title,
            date=found.date,
            date_source=found.date_source,
            source_line=found.line if rules_for(found.store).by_id else 0,
            tags=found.tags,
            status=found.status or None,
            priority=found.priority,
            recalled=found.recalled,
            heading_text=" ".join(
                [found.title, Path(found.ref).stem, found.ref, *found.tags, found.head]
            ).casefold(),
            loaded=True,
        )
        cand = _Candidate(
            doc, root=found.root, offset=found.offset, clean=found.clean, stamp=found.stamp
        )
        cand.index_matches = [(patterns[position], tf) for position, tf in found.terms.items()]
        _credit_index_matches(cand)
        if cand.via:
            candidates.append(cand)
            outcome.candidates[found.store] = outcome.candidates.get(found.store, 0) + 1
    for cand in candidates:
        store_df = df_by_store.get(cand.doc.store, {})
        cand.prelim = scorer.score(
            cand, store_df, answer.totals.get(cand.doc.store, 1), with_fields=True
        ).value
    candidates.sort(key=lambda c: c.prelim, reverse=True)
    mark = outcome.mark("rank", mark)
    scan = _scan_patterns(patterns, [term.term for term in terms])
    hits: list[Hit] = []
    gone = False
    if scorer.phrases:
        # The index keeps no word order: read more candidates back to find the one that
        # holds the pasted error message or title, and let it lead.
        for cand in candidates[:PHRASE_CANDIDATES]:
            if deadline is not None and time.monotonic() > deadline:
                break
            if _read_back(cand, scan) and _holds_phrase(cand.doc, scorer.phrases):
                cand.verbatim = True
                cand.prelim *= ranking.VERBATIM_BOOST
                scorer.credit_held_code(cand)
        candidates.sort(key=lambda c: c.prelim, reverse=True)
    # A few more than asked for: near-duplicates collapse and files gone since indexing drop out.
    for cand in candidates[: limit + 5]:
        if deadline is not None and time.monotonic() > deadline:
            outcome.timed_out = True
            break
        if not _read_back(cand, scan):
            gone = gone or cand.gone
            continue
        name = cand.doc.store
        hit = _make_hit(name, cand, scorer, df_by_store.get(name, {}), answer.totals.get(name, 1))
        if hit is not None:
            hits.append(hit)
    if gone and background and not outcome.refresh_started:
        outcome.refresh_started = maybe_start_refresh(settings, "indexed file changed or gone")
    outcome.mark("lines", mark)
    return hits


# The index keeps no word positions: a phrase is found as its words anywhere in a document.
# "dependency cycle" so is a fair clue; "log out" or "time out" is any text with `out` in it.
_PARTICLES = frozenset("out up in on off back down over away into through".split())


def _phrasal_verb(text: str) -> bool:
    words = text.casefold().split()
    return (
        len(words) == 2
        and text.isascii()
        and all(w.isalpha() for w in words)
        and any(w in _PARTICLES for w in words)
    )


def _distinct_index_patterns(patterns: list[Pattern]) -> list[Pattern]:
    """Patterns the index would answer alike, dropped (each costs a query per store): forms of
    one English stem (`deploy`, `deployed`, `deployment`), and a Japanese synonym holding a
    shorter one of the same keyword (`起動時` when `起動` is searched: its bigram phrase
    already matches every `起動時`). Direct patterns come first and are always kept."""
    from .index import has_cjk
    from .keywords import term_key

    kept: list[Pattern] = []
    seen: set[tuple[str, str]] = set()
    cjk_by_keyword: dict[str, list[str]] = {}
    for pattern in patterns:
        form = term_key(pattern.text)
        if (pattern.keyword, form) in seen:
            continue
        if pattern.synonym and has_cjk(form):
            if any(shorter in form for shorter in cjk_by_keyword.get(pattern.keyword, ())):
                continue
        seen.add((pattern.keyword, form))
        if has_cjk(form):
            cjk_by_keyword.setdefault(pattern.keyword, []).append(form)
        kept.append(pattern)
    return kept


def _scan_patterns(patterns: list[Pattern], index_terms: list[str]) -> list[Pattern]:
    """Patterns for finding snippet lines: as typed, plus the stem the index matched on
    (`coupons` was found through `coupon`); `index_terms` are the patterns' index forms."""
    extra = []
    for pattern, stem in zip(patterns, index_terms):
        if stem != pattern.text.casefold() and len(stem) >= 3:
            extra.append(
                Pattern(
                    stem,
                    pattern.keyword,
                    pattern.synonym,
                    _ascii_matcher(stem),
                    gloss=pattern.gloss,
                )
            )
    return patterns + extra


def _read_back(cand: _Candidate, patterns: list[Pattern]) -> bool:
    """`_index_lines` then `_katakana_confirmed`, once per candidate."""
    if not cand.read:
        cand.read = True
        cand.verbatim = False
        cand.gone = not _index_lines(cand, patterns)
        if cand.gone:
            cand.via.clear()
            return False
        _katakana_confirmed(cand)
    return bool(cand.via)


# Of the candidates the index ranks first, how many are read back for a pasted phrase.
PHRASE_CANDIDATES = 40
_PHRASE_SPLIT = regexcache.compile(r"[^\x20-\x7e]+|['\"`]|[.?!;:,](?:\s|$)")
_SPACES = regexcache.compile(r"\s+")


def verbatim_phrases(text: str) -> list[str]:
    """Stretches of a prompt that a memory may hold word for word: runs of at least four
    ASCII words between quotes, Japanese text and sentence ends. An error message or an
    issue title pasted whole ("Error: no beads database found") is such a run; the index
    sees only its words, which every issue about the database shares."""
    found = []
    for piece in _PHRASE_SPLIT.split(text):
        words = piece.split()
        if len(words) >= 4 and len(piece.strip()) >= 20:
            found.append(" ".join(words).casefold())
    # A command or expression pasted in backticks (`{{query.file.property('workdate')}}`,
    # `git diff --ignore-matching-lines`): the index sees its words, which every note about
    # git or queries shares; the one memory that holds it whole is the one asked about.
    for match in _CODE_SPAN.finditer(text):
        span = " ".join(match.group(1).split()).casefold()
        if len(span) >= CODE_PHRASE_MIN:
            found.append(span)
    return found


# Shorter spans (`git status`, `npm ci`) are what every note about the tool holds.
CODE_PHRASE_MIN = 16


_CODE_SPAN = regexcache.compile(r"`([^`\n]+)`")


_QUOTED = regexcache.compile(
    r"「([^「」]+)」|『([^『』]+)』|“([^“”]+)”|\"([^\"]+)\"|`([^`]+)`"
    r"|(?<![A-Za-z0-9])'([^']+)'(?![A-Za-z0-9])"
)


def quoted_spans(text: str) -> set[str]:
    """What a prompt quotes, case-folded with its spaces collapsed: 「Issue 2」の件, "Rapid
    3", 'Reuse instructions across the vault'. Quoting a title names the memory as plainly
    as its id does, even where the title is all everyday words and numbers."""
    if not text:
        return set()
    spans = set()
    for match in _QUOTED.finditer(unicodedata.normalize("NFKC", text)):
        span = _folded_name(next(g for g in match.groups() if g is not None))
        if 2 <= len(span) <= 200:
            spans.add(span)
    return spans


def _folded_name(text: str) -> str:
    """A title as quoted_spans compares it: NFKC, spaces collapsed, case-folded."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text)).strip().casefold()


def _titled(doc: Document, quoted: set[str]) -> bool:
    """Whether the prompt quotes this memory's title (or a note's file name) whole."""
    names = (doc.title, doc.path.stem if doc.path.suffix == ".md" else "")
    return any(_folded_name(name) in quoted for name in names if name)


def _holds_phrase(doc: Document, phrases: list[str]) -> bool:
    if not phrases:
        return False
    lines = [doc.heading_text, *doc.lines.values()]
    return any(p in _SPACES.sub(" ", line).casefold() for line in lines for p in phrases)


def _credit_index_matches(cand: _Candidate) -> None:
    cand.via.clear()
    cand.tf.clear()
    for pattern, tf in cand.index_matches:
        if cand.via.get(pattern.keyword) != "direct":
            cand.via[pattern.keyword] = pattern.how
        cand.tf[pattern.keyword] = max(tf, cand.tf.get(pattern.keyword, 0.0))


def _katakana_confirmed(cand: _Candidate) -> bool:
    """The index holds Japanese as character pairs, so it finds ログ inside ブログ: once the
    text is read back, a katakana pattern seen only inside longer words no longer counts.
    False when nothing the prompt said is left."""
    doc = cand.doc

    def seen(word: str) -> bool:
        return stands_alone(doc.heading_text, word) or any(
            stands_alone(line.casefold(), word) for line in doc.lines.values() if word in line
        )

    kept = [(p, tf) for p, tf in cand.index_matches if not p.katakana or seen(p.text.casefold())]
    if len(kept) < len(cand.index_matches):
        cand.index_matches = kept
        _credit_index_matches(cand)
    return bool(cand.via)


def _index_lines(cand: _Candidate, patterns: list[Pattern]) -> bool:
    """Read an indexed document's text back for its snippet lines. False when the file no
    longer holds it (deleted, or a beads issue whose line moved)."""
    doc = cand.doc
    unchanged = rules_for(doc.store).reread(doc, cand.offset, cand.stamp)
    if unchanged is None:
        return False
    # Written since it was indexed: what the index knew about its secrets is stale.
    cand.clean = cand.clean and unchanged
    via, tf = dict(cand.via), dict(cand.tf)
    _scan_lines(cand, patterns)
    # The index decided which keywords matched (whole words, stems, segmentation); the scan
    # only finds the lines to quote.
    cand.via, cand.tf = via, tf
    if not cand.line_keys:
        body = [n for n in sorted(doc.lines) if n > doc.body_start and doc.lines[n].strip()]
        if body:
            cand.line_keys[body[0]] = set()
    return True


def _redact_shown(hit: Hit) -> None:
    """A secret in a user's own note is redacted in everything shown: the injected context
    goes to the model API, titles go to the recall log. Only the hits that are returned are
    redacted (the gate is cheap, but not free on 40 loaded candidates), and before the
    snippet is cut: a cut key no longer looks like one."""
    redact = (lambda text: text) if hit.clean else redact_fast
    hit.title = redact(hit.title)
    hit.close_reason = redact(hit.close_reason)
    # A file named after a key, or a beads id holding one, is shown redacted too (the
    # state's de-dup key follows: the same file always redacts the same way).
    hit.ref = redact(hit.ref)
    hit.path = Path(redact(str(hit.path)))
    best, hit.best = hit.best, []
    if best:
        hit.snippet = _snippet(redact(best[0][1]), best[0][2])
        hit.lines = [(n, _snippet(redact(t), keys)) for n, t, keys in best]
