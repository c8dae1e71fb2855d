"""What differs between the stores once their documents are found: ranking, duplicates,
reading an indexed document back, and how a hit is named.

Search, ranking and recall ask `rules_for(store)` and never test a store's name; a new
store is one more entry in `RULES`. Hot path: standard library only, imports are lazy.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..search import Hit
    from .base import Document

# A fresh summary gets up to +15 %, fading over about two months: enough to order two
# summaries of one topic, not enough to lift a weaker match over a stronger one.
RECENCY_BONUS = 0.15
RECENCY_DAYS = 60
# Work in progress is what a prompt is most likely about; a closed issue is history.
BEADS_STATUS_FACTOR = {"in_progress": 1.15, "open": 1.1, "closed": 0.9}


def similarity(a: str, b: str) -> float:
    """rapidfuzz's `fuzz.ratio` (Indel similarity, 200·LCS/(len a + len b)), computed with
    the bit-parallel LCS of Allison–Dix/Hyyrö on Python's big integers: a few microseconds
    per pair of titles, where importing rapidfuzz costs the hook 12–30 ms (measured here).
    tests/test_search_similarity.py checks it against rapidfuzz itself."""
    if not a or not b:
        return 100.0 if a == b else 0.0
    masks: dict[str, int] = {}
    for position, char in enumerate(a):
        masks[char] = masks.get(char, 0) | (1 << position)
    everything = (1 << len(a)) - 1
    row = everything
    for char in b:
        matched = row & masks.get(char, 0)
        row = ((row + matched) | (row - matched)) & everything
    lcs = len(a) - row.bit_count()
    return 200.0 * lcs / (len(a) + len(b))


def ratio_at_least(a: str, b: str, threshold: float) -> bool:
    longest = len(a) + len(b)
    if not longest or 200 * min(len(a), len(b)) / longest < threshold:
        return False
    return similarity(a, b) >= threshold


class StoreRules(Protocol):
    name: str
    # Documents are issues named by their id (with a status and a priority, on a line of a
    # shared export), not notes with a file of their own.
    by_id: bool
    # Of two documents on one topic with similar scores, the newer leads: it may say that an
    # older decision was reversed.
    newer_leads: bool

    def is_own_id(self, ref: str, key: str) -> bool:
        """A keyword (case-folded) that is this memory's own id: equality, never a prefix."""
        ...

    def is_header_line(self, doc: Document, number: int) -> bool:
        """Lines that repeat the document's head (frontmatter, the JSON record): poor snippets."""
        ...

    def score_factor(self, date: datetime | None, status: str | None, now: datetime) -> float: ...

    def near_duplicate(self, a: Hit, b: Hit) -> bool:
        """Two hits of this store that are one memory (copies, re-exports, re-summaries)."""
        ...

    def reread(self, doc: Document, offset: int, stamp: str) -> bool | None:
        """Read an indexed document's text back into `doc.lines` (the index stores no text).
        None: the file no longer holds it; else whether it is unchanged since indexed
        (`stamp`), so that what the index knew about its secrets still holds."""
        ...


class NoteRules:
    name = "obsidian"
    by_id = False
    newer_leads = False

    def is_own_id(self, ref: str, key: str) -> bool:
        return False

    def is_header_line(self, doc: Document, number: int) -> bool:
        return number <= doc.body_start

    def score_factor(self, date: datetime | None, status: str | None, now: datetime) -> float:
        return 1.0

    def near_duplicate(self, a: Hit, b: Hit) -> bool:
        return ratio_at_least(a.title, b.title, 90) and ratio_at_least(a.snippet, b.snippet, 80)

    def reread(self, doc: Document, offset: int, stamp: str) -> bool | None:
        import os

        from .. import frontmatter_lite
        from ..index import MAX_FILE_BYTES

        try:
            with open(doc.path, "rb") as handle:
                st = os.fstat(handle.fileno())
                text = handle.read(MAX_FILE_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return None
        _, _, doc.body_start = frontmatter_lite.split(text)
        doc.lines = {number: line for number, line in enumerate(text.split("\n"), start=1)}
        return f"{st.st_size}:{st.st_mtime_ns}" == stamp


class SummaryRules(NoteRules):
    name = "summaries"
    newer_leads = True

    def score_factor(self, date: datetime | None, status: str | None, now: datetime) -> float:
        if date is None:
            return 1.0
        age_days = max(0.0, (now - date).total_seconds() / 86400)
        return 1.0 + RECENCY_BONUS * math.exp(-age_days / RECENCY_DAYS)

    def near_duplicate(self, a: Hit, b: Hit) -> bool:
        # A resumed session summarised again: near-identical title, a few days apart.
        # (Body similarity does not separate Japanese summaries of one project; titles do.)
        close = a.date is None or b.date is None or abs((a.date - b.date).days) <= 7
        return close and ratio_at_least(a.title, b.title, 80)


class BeadsRules:
    name = "beads"
    by_id = True
    newer_leads = False

    def is_own_id(self, ref: str, key: str) -> bool:
        return key == ref.casefold()

    def is_header_line(self, doc: Document, number: int) -> bool:
        return number == 1

    def score_factor(self, date: datetime | None, status: str | None, now: datetime) -> float:
        return BEADS_STATUS_FACTOR.get(status or "", 1.0)

    def near_duplicate(self, a: Hit, b: Hit) -> bool:
        # The same issue exported by two eras of a tracker, or copied between projects.
        if a.ref == b.ref:
            return ratio_at_least(a.title, b.title, 90)
        return ratio_at_least(a.title, b.title, 97) and ratio_at_least(a.snippet, b.snippet, 90)

    def reread(self, doc: Document, offset: int, stamp: str) -> bool | None:
        import json
        import zlib

        from .beads import issue_document, issue_from_record

        try:
            with open(doc.path, "rb") as handle:
                handle.seek(offset)
                raw = handle.readline(8 << 20)
            issue = issue_from_record(json.loads(raw))
        except (OSError, ValueError, RecursionError):
            return None
        # Another issue there now: the export was rewritten since the index last saw it.
        if issue is None or str(issue.get("id") or issue.get("issue_id")) != doc.ref:
            return None
        fresh = issue_document(doc.path, issue)
        doc.lines, doc.close_reason = fresh.lines, fresh.close_reason
        return f"{zlib.crc32(raw):08x}" == stamp


RULES: dict[str, StoreRules] = {r.name: r for r in (BeadsRules(), NoteRules(), SummaryRules())}


def rules_for(store: str) -> StoreRules:
    # An unknown name (a log or index from a newer version) is read as plain notes.
    return RULES.get(store, RULES["obsidian"])
