"""Stopword tuning from the recall log: find keywords that fire often but bring nothing.

The effective list is the shipped `stopwords.txt` plus `$MEMRECALL_HOME/stopwords.txt`
(`tokenize.effective_stopwords`); this module only ever writes the user's file. Words are
compared the way `keywords.load_stopwords` reads them: NFKC, case-folded.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from .atomic import locked, write_atomic
from .config import Settings
from .errors import MemrecallError, UsageError
from .recall_log import dict_field, read_numbered
from .resources import shipped_stopwords

ADDED_MARK = "# added "


def normalize(word: str) -> str:
    return unicodedata.normalize("NFKC", word).strip().casefold()


def _file_words(path: Path) -> list[str]:
    """Words of one stopwords file in order (first spelling of each), comments stripped."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    words: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        word = line.split("#", 1)[0].strip()
        if word and normalize(word) not in seen:
            seen.add(normalize(word))
            words.append(unicodedata.normalize("NFKC", word))
    return words


@dataclass
class StopwordEntry:
    word: str
    source: str  # shipped | user | shipped+user


def effective_list(settings: Settings) -> list[StopwordEntry]:
    shipped = _file_words(shipped_stopwords())
    user = _file_words(settings.user_stopwords)
    user_keys = {normalize(w) for w in user}
    shipped_keys = {normalize(w) for w in shipped}
    entries = [
        StopwordEntry(w, "shipped+user" if normalize(w) in user_keys else "shipped")
        for w in shipped
    ]
    entries += [StopwordEntry(w, "user") for w in user if normalize(w) not in shipped_keys]
    return entries


def _validate(words: Iterable[str]) -> list[str]:
    clean: list[str] = []
    for raw in words:
        word = unicodedata.normalize("NFKC", raw).strip()
        if not word:
            raise UsageError("a stopword cannot be empty")
        if "#" in word or "\n" in word or "\r" in word:
            raise UsageError(f"a stopword cannot contain '#' or a line break: {raw!r}")
        if normalize(word) not in {normalize(w) for w in clean}:
            clean.append(word)
    if not clean:
        raise UsageError("give at least one word")
    return clean


@dataclass
class AddResult:
    path: Path
    added: list[str]
    already: dict[str, str]  # word → where it already is (shipped | user)


def add_words(settings: Settings, words: Iterable[str], today: datetime) -> AddResult:
    """Append new words under a dated comment; words already in either list are reported."""
    clean = _validate(words)
    path = settings.user_stopwords
    with locked(path):
        shipped = {normalize(w) for w in _file_words(shipped_stopwords())}
        user = {normalize(w) for w in _file_words(path)}
        already = {}
        added = []
        for word in clean:
            key = normalize(word)
            if key in user:
                already[word] = "user"
            elif key in shipped:
                already[word] = "shipped"
            else:
                added.append(word)
        if added:
            try:
                existing = path.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                existing = (
                    "# Your memrecall stopwords: one word a line, `#` starts a comment.\n"
                    "# They add to the shipped list; `memrecall stopwords list` shows both.\n"
                )
            if existing and not existing.endswith("\n"):
                existing += "\n"
            block = (
                f"{ADDED_MARK}{today.date().isoformat()} by `memrecall stopwords add`\n"
                + "".join(w + "\n" for w in added)
            )
            write_atomic(path, existing + block)
    return AddResult(path, added, already)


def remove_words(settings: Settings, words: Iterable[str]) -> tuple[Path, list[str]]:
    """Remove words from the user's file. All or nothing: an unknown word changes nothing."""
    clean = _validate(words)
    path = settings.user_stopwords
    with locked(path):
        user = {normalize(w) for w in _file_words(path)}
        shipped = {normalize(w) for w in _file_words(shipped_stopwords())}
        for word in clean:
            key = normalize(word)
            if key in user:
                continue
            if key in shipped:
                raise MemrecallError(
                    f"{word!r} is a shipped stopword; only words in {path} can be removed"
                )
            raise MemrecallError(f"{word!r} is not in the stopword list")
        keys = {normalize(w) for w in clean}
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        kept = [
            line
            for line in lines
            if not line.split("#", 1)[0].strip() or normalize(line.split("#", 1)[0]) not in keys
        ]
        write_atomic(path, "\n".join(_drop_orphan_marks(kept)) + "\n")
    return path, clean


def _drop_orphan_marks(lines: list[str]) -> list[str]:
    """A dated `# added …` comment whose words were all removed says nothing any more."""
    result: list[str] = []
    for index, line in enumerate(lines):
        if line.startswith(ADDED_MARK):
            rest = [l for l in lines[index + 1 :] if l.strip()]
            if not rest or rest[0].startswith(ADDED_MARK):
                continue
        result.append(line)
    return result


# --- suggestions ------------------------------------------------------------------------


@dataclass
class Suggestion:
    keyword: str
    extracted: int  # prompts whose kept keywords included it
    searched: int  # of those, prompts where the search reported its document frequency
    avg_df: float  # documents containing it, summed over stores, averaged over those prompts
    doc_share: float  # avg_df / documents in the stores that reported counts
    injections: int  # injected memories whose matched keywords included it
    main: int  # injected memories it carried (the keyword that scored most)
    only: int  # injected memories it was the only matched keyword of
    quiet: int  # prompts it was extracted from that injected nothing
    # Of the injected memories it matched: Claude used or mentioned them / ignored them
    # (usage.py; the rest have no verdict yet).
    used: int = 0
    ignored: int = 0

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["avg_df"] = round(self.avg_df, 2)
        data["doc_share"] = round(self.doc_share, 4)
        return data


@dataclass
class SuggestReport:
    prompts: int  # log entries read
    with_keywords: int
    suggestions: list[Suggestion]
    considered: int  # distinct keywords seen


def suggest(
    settings: Settings,
    since: datetime | None = None,
    min_count: int = 3,
    min_share: float = 0.1,
    limit: int = 20,
    never_used: bool = False,
) -> SuggestReport:
    """Candidates, most noise first. Default: keywords extracted from at least `min_count`
    prompts and found in at least `min_share` of the documents, by prompts × share.
    `never_used`: keywords that matched at least `min_count` injected memories with a verdict
    and none of them was used or mentioned, by how many were ignored (`min_share` still
    applies; pass 0 to see them all)."""
    from .usage import load

    verdicts = load(settings)
    current = {normalize(e.word) for e in effective_list(settings)}
    spelling: dict[str, Counter[str]] = {}
    extracted: Counter[str] = Counter()
    searched: Counter[str] = Counter()
    df_sum: Counter[str] = Counter()
    share_sum: dict[str, float] = {}
    injections: Counter[str] = Counter()
    main: Counter[str] = Counter()
    only: Counter[str] = Counter()
    quiet: Counter[str] = Counter()
    used: Counter[str] = Counter()
    ignored: Counter[str] = Counter()
    prompts = with_keywords = 0
    for entry_id, entry in read_numbered(settings.logs_dir, since):
        prompts += 1
        keywords = [k for k in entry.get("keywords") or [] if isinstance(k, str)]
        if not keywords:
            continue
        with_keywords += 1
        df = dict_field(entry, "df")
        counts = dict_field(entry, "doc_counts")
        injected = [i for i in entry.get("injected") or [] if isinstance(i, dict)]
        for text in dict.fromkeys(keywords):
            key = normalize(text)
            spelling.setdefault(key, Counter())[text] += 1
            extracted[key] += 1
            if not injected:
                quiet[key] += 1
            per_store = df.get(text)
            if isinstance(per_store, dict):
                searched[key] += 1
                docs = sum(int(v) for v in per_store.values() if isinstance(v, (int, float)))
                df_sum[key] += docs
                # Share of the documents in the stores that had any candidates at all.
                total = sum(v for v in counts.values() if isinstance(v, (int, float)))
                share_sum[key] = share_sum.get(key, 0.0) + (
                    min(1.0, docs / total) if total else 0.0
                )
        for item in injected:
            matched = [normalize(m) for m in item.get("matched") or [] if isinstance(m, str)]
            row = verdicts.get((entry_id, str(item.get("store", "?")), str(item.get("ref", "?"))))
            for key in set(matched):
                injections[key] += 1
                if row is not None and row.verdict in ("used", "mentioned"):
                    used[key] += 1
                elif row is not None and row.verdict == "ignored":
                    ignored[key] += 1
            if isinstance(item.get("main"), str) and item["main"]:
                main[normalize(item["main"])] += 1
            if len(set(matched)) == 1:
                only[matched[0]] += 1
    suggestions = []
    for key, count in extracted.items():
        if key in current or not searched[key]:
            continue
        if never_used:
            if used[key] or ignored[key] < min_count:
                continue
        elif count < min_count:
            continue
        share = share_sum.get(key, 0.0) / searched[key]
        if share < min_share:
            continue
        suggestions.append(
            Suggestion(
                keyword=spelling[key].most_common(1)[0][0],
                extracted=count,
                searched=searched[key],
                avg_df=df_sum[key] / searched[key],
                doc_share=share,
                injections=injections[key],
                main=main[key],
                only=only[key],
                quiet=quiet[key],
                used=used[key],
                ignored=ignored[key],
            )
        )
    if never_used:
        # Most ignored first: each is an injection that cost context and brought nothing.
        suggestions.sort(key=lambda s: (-s.ignored, -s.injections, -s.doc_share, s.keyword))
    else:
        # Most noise first: common in prompts × common in the stores.
        suggestions.sort(key=lambda s: (-(s.extracted * s.doc_share), -s.doc_share, s.keyword))
    return SuggestReport(prompts, with_keywords, suggestions[:limit], len(extracted))
