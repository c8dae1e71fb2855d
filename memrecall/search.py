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
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from . import ranking
from .config import Settings
from .grep import grep
from .keywords import Keyword, list_file_lines
from .redact import redact_fast
from .stores.base import Document, Store, read_lines

STORE_NAMES = ("beads", "obsidian", "summaries")
# Documents whose headers are read for the final score: the rest cannot reach the top.
LOAD_LIMIT = 40
SNIPPET_CHARS = 200


@dataclass
class Pattern:
    text: str
    keyword: str  # case-folded canonical keyword
    synonym: bool
    matcher: re.Pattern[str] | None  # ASCII keywords need word edges; Japanese never has them


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
    coverage: float = 0.0
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

    @property
    def key(self) -> str:
        return f"{self.store}:{self.ref}"

    def as_json(self) -> dict[str, Any]:
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
            "status": self.status,
            "priority": self.priority,
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


# --- synonyms ---------------------------------------------------------------------------

def load_synonyms(paths: Iterable[Path]) -> dict[str, set[str]]:
    """Groups from the shipped table and the user's; every word maps to its whole group."""
    groups: dict[str, set[str]] = {}
    for line in list_file_lines(paths):
        words = [unicodedata.normalize("NFKC", w).strip() for w in re.split(r"[,|]", line)]
        words = [w for w in words if w]
        if len(words) < 2:
            continue
        merged = set(words)
        for word in words:
            merged |= groups.get(word.casefold(), set())
        for word in merged:
            groups[word.casefold()] = merged
    return groups


def _ascii_matcher(text: str) -> re.Pattern[str] | None:
    if not text.isascii():
        return None
    # Left edge always (`rapid` must not match `API`); right edge only for short words, so
    # `timeout` still finds `timeouts`, but `CI` does not find `CIs`-free `decision`.
    right = r"(?![A-Za-z0-9])" if len(text) <= 3 else ""
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(text) + right, re.IGNORECASE)


def build_patterns(keywords: list[Keyword], synonyms: dict[str, set[str]]) -> list[Pattern]:
    patterns: list[Pattern] = []
    seen: set[str] = set()
    for keyword in keywords:
        texts = [(keyword.text, False)]
        texts += [(s, True) for s in sorted(synonyms.get(keyword.key, ())) if s.casefold() != keyword.key]
        for text, is_synonym in texts:
            folded = text.casefold()
            if folded in seen:
                continue
            seen.add(folded)
            patterns.append(Pattern(text, keyword.key, is_synonym, _ascii_matcher(text)))
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
    if "obsidian" in wanted and settings.obsidian:
        stores.append(VaultStore(settings.obsidian, cache))
    if "summaries" in wanted:
        stores.append(SummaryStore(settings.summaries, settings.now, settings.retention_days, cache))
    return stores


# --- matching and scoring ---------------------------------------------------------------

@dataclass
class _Candidate:
    doc: Document
    # canonical keyword → "direct" | "synonym"
    via: dict[str, str] = field(default_factory=dict)
    # line number → canonical keywords matched on it
    line_keys: dict[int, set[str]] = field(default_factory=dict)
    prelim: float = 0.0


def _match_line(text: str, patterns: list[Pattern]) -> dict[str, str]:
    folded = text.casefold()
    found: dict[str, str] = {}
    for pattern in patterns:
        if pattern.text.casefold() not in folded:
            continue
        if pattern.matcher is not None and not pattern.matcher.search(text):
            continue
        if found.get(pattern.keyword) != "direct":
            found[pattern.keyword] = "synonym" if pattern.synonym else "direct"
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
                        candidate.via[pattern.keyword] = "synonym" if pattern.synonym else "direct"
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


class _Scorer:
    def __init__(self, keywords: list[Keyword], now: datetime) -> None:
        self.now = now
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
        for piece, owner in self.parent.items():
            self.children.setdefault(owner, []).append(piece)
        self.total_weight = sum(ranking.kind_weight(k.subkind) for k in self.tops) or 1.0

    def score(
        self, cand: _Candidate, df: dict[str, int], total: int, with_fields: bool
    ) -> tuple[float, float, bool, str, list[str]]:
        doc = cand.doc
        topics: list[str] = []
        raw = 0.0
        covered = 0.0
        distinctive = False
        best_key, best_value = "", -1.0
        for top in self.tops:
            weight = ranking.kind_weight(top.subkind)
            credit, key = 0.0, top.key
            if top.key in cand.via:
                credit = 1.0 if cand.via[top.key] == "direct" else ranking.SYNONYM_CREDIT
            else:
                pieces = [p for p in self.children.get(top.key, ()) if p in cand.via]
                if pieces:
                    key = max(pieces, key=lambda p: ranking.rarity(df.get(p, 1), total))
                    credit = ranking.PART_CREDIT
            if not credit:
                continue
            topics.append(top.key)
            value = credit * weight * ranking.rarity(df.get(key, 1), total)
            if with_fields and key in doc.heading_text:
                value *= ranking.FIELD_BOOST
            raw += value
            covered += credit * weight
            if value > best_value:
                best_key, best_value = key, value
            if (
                credit == 1.0
                and top.subkind in ranking.DISTINCTIVE_SUBKINDS
                and df.get(key, 1) <= ranking.DISTINCTIVE_MAX_DF
            ):
                distinctive = True
        coverage = covered / self.total_weight
        factor = ranking.store_factor(doc.store, doc.date, doc.status, self.now) if with_fields else 1.0
        return raw * (0.5 + coverage) * factor, coverage, distinctive, best_key, topics


def _snippet(text: str, keys: set[str]) -> str:
    line = " ".join(text.split())
    if len(line) <= SNIPPET_CHARS:
        return line
    folded = line.casefold()
    positions = [folded.find(k) for k in keys if folded.find(k) >= 0]
    start = max(0, min(positions, default=0) - SNIPPET_CHARS // 3)
    piece = line[start : start + SNIPPET_CHARS]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET_CHARS < len(line) else "")


def _best_lines(cand: _Candidate, limit: int = 3) -> list[tuple[int, str, set[str]]]:
    doc = cand.doc
    body_start = doc.body_start
    ordered = sorted(
        cand.line_keys.items(),
        # Body text before frontmatter and headings (they repeat the title shown anyway),
        # then the most keywords, then earliest.
        key=lambda item: (
            item[0] <= body_start or doc.lines.get(item[0], "").lstrip().startswith("#"),
            -len(item[1]),
            item[0],
        ),
    )
    return [(n, doc.lines.get(n, ""), keys) for n, keys in ordered[:limit]]


def _ratio_at_least(a: str, b: str, threshold: float) -> bool:
    """rapidfuzz's ratio, with its length bound checked first: most pairs of hits can never
    reach the threshold, and then the hook need not import rapidfuzz (~10 ms) at all."""
    longest = len(a) + len(b)
    if not longest or 200 * min(len(a), len(b)) / longest < threshold:
        return False
    # The ratio is 200·LCS/(len a + len b), and the LCS is at most the shared characters.
    shared = sum((Counter(a) & Counter(b)).values())
    if 200 * shared / longest < threshold:
        return False
    from rapidfuzz import fuzz

    return fuzz.ratio(a, b) >= threshold


def _near_duplicate(a: Hit, b: Hit) -> bool:
    if a.store != b.store:
        return False
    if a.store == "beads":
        # The same issue exported by two eras of a tracker, or copied between projects.
        if a.ref == b.ref:
            return _ratio_at_least(a.title, b.title, 90)
        return _ratio_at_least(a.title, b.title, 97) and _ratio_at_least(a.snippet, b.snippet, 90)
    if a.store == "summaries":
        # A resumed session summarised again: near-identical title, a few days apart.
        # (Body similarity does not separate Japanese summaries of one project; titles do.)
        close = a.date is None or b.date is None or abs((a.date - b.date).days) <= 7
        return close and _ratio_at_least(a.title, b.title, 80)
    return _ratio_at_least(a.title, b.title, 90) and _ratio_at_least(a.snippet, b.snippet, 80)


def _collapse(hits: list[Hit]) -> list[Hit]:
    """Drop near-duplicates; the newer copy stays, at the better of the two ranks."""
    kept: list[Hit] = []
    for hit in hits:
        twin = next((k for k in kept if _near_duplicate(hit, k)), None)
        if twin is None:
            kept.append(hit)
        elif hit.date and twin.date and hit.date > twin.date:
            kept[kept.index(twin)] = hit
    return kept


def _newer_first(hits: list[Hit]) -> list[Hit]:
    """When two summaries cover the same ground with similar scores, the newer one leads:
    it may say that an older decision was reversed."""
    ordered = list(hits)
    for i in range(len(ordered)):
        for j in range(i + 1, len(ordered)):
            a, b = ordered[i], ordered[j]
            if a.store != "summaries" or b.store != "summaries" or not (a.date and b.date):
                continue
            shared = set(a.matched) & set(b.matched)
            if b.date > a.date and b.score * 1.25 >= a.score and len(shared) * 2 >= len(a.matched):
                ordered[i], ordered[j] = b, a
    return ordered


def search(
    keywords: list[Keyword],
    settings: Settings,
    stores: list[Store] | None = None,
    deadline: float | None = None,
    limit: int = 10,
    synonyms: dict[str, set[str]] | None = None,
) -> SearchOutcome:
    from .resources import shipped_synonyms

    outcome = SearchOutcome()
    if not keywords:
        return outcome
    if synonyms is None:
        synonyms = load_synonyms([shipped_synonyms(), settings.user_synonyms])
    patterns = build_patterns(keywords, synonyms)
    stores = open_stores(settings) if stores is None else stores
    jobs = [(store, job) for store in stores for job in store.jobs()]
    results = grep([job for _, job in jobs], [p.text for p in patterns], deadline)
    scorer = _Scorer(keywords, settings.now)

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
            cand.prelim = scorer.score(cand, df, total, with_fields=False)[0]
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
            score, coverage, distinctive, main, topics = scorer.score(cand, df, total, with_fields=True)
            best = _best_lines(cand)
            if not best:
                continue
            matched_keys = sorted(cand.via, key=lambda k: list(scorer.by_key).index(k) if k in scorer.by_key else 99)
            hits.append(
                Hit(
                    store=store.name,
                    ref=cand.doc.ref,
                    path=cand.doc.path,
                    title=cand.doc.title,
                    date=cand.doc.date,
                    score=score,
                    matched=[scorer.by_key[k].text if k in scorer.by_key else k for k in matched_keys],
                    line=best[0][0],
                    # Unredacted, for near-duplicate checks only; _redact_shown sets the
                    # snippet and `lines` shown, once the hit is among those returned.
                    snippet=_snippet(best[0][1], best[0][2]),
                    lines=[],
                    status=cand.doc.status,
                    priority=cand.doc.priority,
                    distinctive=distinctive,
                    coverage=coverage,
                    main_keyword=scorer.by_key[main].text if main in scorer.by_key else main,
                    topics=topics,
                    best=best,
                )
            )
    hits.sort(key=lambda h: h.score, reverse=True)
    outcome.hits = _newer_first(_collapse(hits[: limit * 3]))[:limit]
    for hit in outcome.hits:
        _redact_shown(hit)
    return outcome


def _redact_shown(hit: Hit) -> None:
    """A secret in a user's own note is redacted in everything shown: the injected context
    goes to the model API, titles go to the recall log. Only the hits that are returned are
    redacted (the gate is cheap, but not free on 40 loaded candidates), and before the
    snippet is cut: a cut key no longer looks like one."""
    hit.title = redact_fast(hit.title)
    best, hit.best = hit.best, []
    if best:
        hit.snippet = _snippet(redact_fast(best[0][1]), best[0][2])
        hit.lines = [(n, _snippet(redact_fast(t), keys)) for n, t, keys in best]
