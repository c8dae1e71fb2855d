"""The search index: one tantivy index over every configured store, a cache of the files.

The files stay the truth. The index is rebuilt from them at any time, is safe to delete, and
is never written by the hook. Layout under `$MEMRECALL_HOME/index/`:

    CURRENT          name of the live generation, replaced atomically
    gen-<id>/        tantivy's files + memrecall.json (schema, analyser, per-file manifest)
    write.lock       one writer at a time: build, refresh, rebuild (filelock)
    refresh.stamp    its mtime: when a hook last asked for a background refresh

A full build writes a new generation and switches CURRENT only once it is committed, so a
build that is killed or runs out of disk leaves the previous index in use. A refresh adds
to the live generation: tantivy commits are atomic and readers keep the last commit they
opened, so hooks read while a refresh writes.

Fields: `head` (title, aliases, tags, issue id, file name), `body` (the text without its
frontmatter; head terms too, so one field gives document frequencies), both made of the
terms the prompt analyser produces (`keywords.index_terms`); `grams`, CJK character bigrams
with positions, so a Japanese keyword is found inside a longer word as ripgrep would; stored
`key`, `store`, `root`, `ref`, `path`, `line` (a beads issue's line in its export), `title`,
`tags`, `status`, `priority`, `date_source`, and `date` (epoch seconds, a fast field:
retention is a query clause, not a refresh).
"""

from __future__ import annotations

import json
import os
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from . import regexcache
from .config import Settings

# Building and refreshing live in `indexer.py`, off the hook's path; these names are
# re-exported lazily so `memrecall.index` stays the one place to look.
_BUILDER = {
    "refresh",
    "refresh_if_present",
    "status",
    "Status",
    "RefreshReport",
    "SourceDoc",
    "markdown_doc",
    "beads_docs",
    "MANIFEST_NAME",
}


def __getattr__(name: str) -> Any:
    if name in _BUILDER:
        from . import indexer

        return getattr(indexer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SCHEMA_VERSION = 10  # 5: date_source; 6: quantities (5秒 = 5 seconds = 5s); 7: bd commands;
# 8: forge issue refs (GH#523) are one term; 9: words inside code spans, `#903` for every
# citation of a forge number (`PR #903`, `.../pull/903`); 10: compounds without a relational
# suffix (`サーバー側` is `サーバー`)


META_NAME = "memrecall.json"
# Bigger files are indexed (and quoted) by their first part only: a pasted log is not a note.
MAX_FILE_BYTES = 2 << 20


_TOKENIZER = "mr_ws"


_CJK_RUN = regexcache.compile(
    r"[\u3041-\u3096\u30A1-\u30FA\u30FC-\u30FF\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u3005-\u3007]+"
)


class IndexUnavailable(Exception):
    """No usable index: the caller falls back to ripgrep and logs this reason. `rebuildable`
    is False when no build could help (tantivy itself is missing), so none is started."""

    def __init__(self, reason: str, rebuildable: bool = True) -> None:
        super().__init__(reason)
        self.rebuildable = rebuildable


def index_home(settings: Settings) -> Path:
    return settings.home / "index"


def cjk_grams(text: str) -> list[str]:
    grams: list[str] = []
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            grams.append(run)
        grams += [run[i : i + 2] for i in range(len(run) - 1)]
    return grams


def has_cjk(text: str) -> bool:
    return bool(_CJK_RUN.search(text))


def root_tag(root: str) -> str:
    """A short, stable name for a store root: two vaults with a `設計/a.md` each, or two
    beads projects with a `bd-1` each, are different memories."""
    import zlib  # already loaded by the interpreter; hashlib would cost the hook ~3 ms

    return f"{zlib.crc32(root.encode('utf-8', 'surrogatepass')):08x}"


# --- what the stores hold ----------------------------------------------------------------


class Root:
    # Plain classes on the hook's path: each dataclass costs ~0.5 ms to create at import.
    __slots__ = ("store", "path", "label")

    def __init__(self, store: str, path: Path, label: str) -> None:
        self.store = store
        self.path = path  # a folder (vaults, summaries) or one beads export file
        self.label = label  # ref prefix when a store has several roots ("" otherwise)


def configured_roots(settings: Settings, warnings: list[str] | None = None) -> list[Root]:
    from .stores.beads import resolve_files

    roots: list[Root] = []
    for location in settings.beads:
        for found in resolve_files(location, warnings):
            if not any(r.path == found for r in roots):
                roots.append(Root("beads", found, ""))
    for vault, label in settings.vaults():
        roots.append(Root("obsidian", vault, label))
    roots.append(Root("summaries", settings.summaries, ""))
    return roots


def _tantivy() -> Any:
    import tantivy

    return tantivy


def _register(index: Any) -> None:
    tv = _tantivy()
    # Terms arrive already analysed (Japanese segmentation, identifiers, stems): split on
    # whitespace, nothing else; long garbage tokens (base64 blobs) are dropped.
    analyzer = (
        tv.TextAnalyzerBuilder(tv.Tokenizer.whitespace()).filter(tv.Filter.remove_long(80)).build()
    )
    index.register_tokenizer(_TOKENIZER, analyzer)


def _current(home: Path) -> Path | None:
    try:
        name = (home / "CURRENT").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not re.fullmatch(r"gen-[0-9a-f-]+", name):
        return None
    return home / name


def maybe_start_refresh(settings: Settings, reason: str, rebuild: bool = False) -> bool:
    """Start a detached `memrecall index refresh` (`rebuild` when the index failed a query:
    damage a refresh could keep) unless one was asked for within the refresh interval.
    Returns whether one was started. Never raises."""
    home = index_home(settings)
    stamp = home / "refresh.stamp"
    try:
        if time.time() - stamp.stat().st_mtime < settings.index.refresh_seconds:
            return False
    except OSError:
        pass
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        stamp.write_text(reason + "\n", encoding="utf-8")
        import subprocess
        import sys

        kwargs: dict[str, Any] = {}
        if os.name == "nt":
            kwargs["creationflags"] = (
                0x00000008 | 0x00000200
            )  # DETACHED_PROCESS | NEW_PROCESS_GROUP
        else:
            kwargs["start_new_session"] = True
        log = open(home / "refresh.log", "ab")
        try:
            # `-P` and a cwd of our own: `python -m` would otherwise import a `memrecall/`
            # package from the prompt's project folder, i.e. run a cloned repository's code.
            subprocess.Popen(
                [
                    sys.executable,
                    "-P",
                    "-m",
                    "memrecall",
                    "index",
                    "rebuild" if rebuild else "refresh",
                    "--background",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                close_fds=True,
                cwd=str(home),
                **kwargs,
            )
        finally:
            log.close()
        return True
    except Exception:
        return False


# --- reading --------------------------------------------------------------------------------


class IndexedHit:
    """One candidate document straight from the index, with which query terms it holds."""

    def __init__(self, stored: Any) -> None:
        self.key: str = stored.get_first("key")
        self.store: str = stored.get_first("store")
        self.root: str = stored.get_first("root")
        self.ref: str = stored.get_first("ref")
        self.path: str = stored.get_first("path")
        self.title: str = stored.get_first("title") or ""
        self.tags: list[str] = [t for t in stored.get_all("tags") if t]
        self.recalled: list[str] = [r for r in stored.get_all("recalled") if r]
        self.head: str = stored.get_first("head") or ""
        self.status: str = stored.get_first("status") or ""
        priority = stored.get_first("priority")
        self.priority: int | None = (
            priority if isinstance(priority, int) and priority >= 0 else None
        )
        date = stored.get_first("date")
        self.date: datetime | None = datetime.fromtimestamp(date, timezone.utc) if date else None
        self.date_source: str = (stored.get_first("date_source") or "") if date else ""
        self.line: int = stored.get_first("line") or 0
        self.offset: int = stored.get_first("offset") or 0
        self.clean: bool = stored.get_first("clean") == 1
        self.stamp: str = stored.get_first("stamp") or ""
        # query term position → BM25 term-frequency factor (1.0 when unknown)
        self.terms: dict[int, float] = {}


class QueryTerm:
    __slots__ = ("text", "term", "boost", "cjk")

    def __init__(self, text: str, term: str, boost: float, cjk: bool) -> None:
        self.text = text  # the pattern as typed
        self.term = term  # its index form
        self.boost = boost
        self.cjk = cjk


class IndexAnswer:
    __slots__ = ("hits", "df", "totals", "stale")

    def __init__(
        self, hits: list[IndexedHit], df: list[dict[str, int]], totals: dict[str, int], stale: bool
    ) -> None:
        self.hits = hits
        self.df = df  # per query term: store → documents holding it
        self.totals = totals  # store → documents
        self.stale = stale


class IndexReader:
    def __init__(self, settings: Settings, backend: str) -> None:
        try:
            tv = _tantivy()
        except ImportError as exc:  # a platform without a tantivy wheel: ripgrep only
            raise IndexUnavailable(
                f"tantivy cannot be imported ({exc})", rebuildable=False
            ) from None
        home = index_home(settings)
        gen = _current(home)
        if gen is None:
            raise IndexUnavailable("no index yet")
        meta_path = gen / META_NAME
        try:
            raw = meta_path.read_bytes()
            meta_stat = os.stat(meta_path)
        except OSError:
            raise IndexUnavailable("index metadata missing") from None
        meta = _meta_head(raw)
        if meta.get("schema") != SCHEMA_VERSION:
            raise IndexUnavailable(f"index schema {meta.get('schema')!r} is not {SCHEMA_VERSION}")
        if meta.get("backend") != backend:
            raise IndexUnavailable(
                f"index built with {meta.get('backend')!r}, prompts use {backend!r}"
            )
        self.configured = {(r.store, str(r.path)) for r in configured_roots(settings)}
        indexed = {tuple(r) for r in meta.get("roots", []) if isinstance(r, list)}
        self.missing_roots = self.configured - indexed
        self.age = time.time() - meta_stat.st_mtime
        try:
            self.index = tv.Index.open(str(gen))
            _register(self.index)
            self.searcher = self.index.searcher()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:
            raise IndexUnavailable(
                f"index unreadable: {exc.__class__.__name__}: {str(exc)[:200]}"
            ) from None
        self.schema = self.index.schema
        self.settings = settings

    def _term_query(self, qt: QueryTerm, field_name: str = "body") -> Any:
        tv = _tantivy()
        if qt.cjk and field_name == "body":
            grams = cjk_grams(qt.text)
            if len(grams) == 1:
                return tv.Query.term_query(self.schema, "grams", grams[0])
            return tv.Query.phrase_query(self.schema, "grams", grams)
        words = qt.term.split()
        if len(words) > 1:
            # A phrase of a synonym group ("circuit breaker"): the fields keep no positions,
            # so every word of it, stemmed as the index stems them.
            from .keywords import term_key

            return tv.Query.boolean_query(
                [
                    (tv.Occur.Must, tv.Query.term_query(self.schema, field_name, term_key(word)))
                    for word in words
                ]
            )
        return tv.Query.term_query(self.schema, field_name, qt.term)

    def _filters(self, stores: set[str] | None) -> list[tuple[Any, Any]]:
        tv = _tantivy()
        occur = tv.Occur
        clauses = []
        cutoff = (
            int((self.settings.now - timedelta(days=self.settings.retention_days)).timestamp())
            if self.settings.retention_days < 365 * 5000
            else None
        )
        if cutoff is not None:
            # Retention is a query clause: a summary past the window is invisible the moment
            # it passes, before any refresh or prune.
            old = tv.Query.boolean_query(
                [
                    (occur.Must, tv.Query.term_query(self.schema, "store", "summaries")),
                    (
                        occur.Must,
                        tv.Query.range_query(
                            self.schema, "date", tv.FieldType.Integer, None, cutoff - 1
                        ),
                    ),
                ]
            )
            clauses.append((occur.MustNot, old))
        if stores is not None:
            clauses.append(
                (occur.Must, tv.Query.term_set_query(self.schema, "store", sorted(stores)))
            )
        return clauses

    def query(
        self, terms: list[QueryTerm], limit: int, stores: set[str] | None = None
    ) -> IndexAnswer:
        import math

        tv = _tantivy()
        occur = tv.Occur
        searcher = self.searcher
        total = max(1, searcher.num_docs)
        # Document frequencies per store, as rarity has always been counted: a word in every
        # beads issue can still be rare among the notes. One count per term and store.
        store_names = sorted(stores) if stores is not None else ["beads", "obsidian", "summaries"]
        totals = {name: searcher.doc_freq("store", name) for name in store_names}
        store_names = [name for name in store_names if totals[name]]
        df: list[dict[str, int]] = []
        for qt in terms:
            query = self._term_query(qt)
            counts: dict[str, int] = {}
            # Most synonyms of a glossary group occur nowhere: one lookup (a dictionary read
            # for a plain term, one count for a phrase) spares a query per store.
            if not qt.cjk and " " not in qt.term:
                present = searcher.doc_freq("body", qt.term) > 0
            else:
                present = (
                    len(store_names) < 2 or searcher.search(query, limit=1, count=True).count > 0
                )
            if not present:
                df.append(counts)
                continue
            for name in store_names:
                in_store = tv.Query.boolean_query(
                    [
                        (occur.Must, query),
                        (occur.Must, tv.Query.term_query(self.schema, "store", name)),
                    ]
                )
                count = searcher.search(in_store, limit=1, count=True).count
                if count:
                    counts[name] = count
            df.append(counts)
        should = []
        for qt, freq in zip(terms, df):
            if not freq:
                continue
            should.append((occur.Should, tv.Query.boost_query(self._term_query(qt), qt.boost)))
            if not qt.cjk:
                should.append(
                    (occur.Should, tv.Query.boost_query(self._term_query(qt, "head"), qt.boost * 2))
                )
        if not should:
            return IndexAnswer([], df, totals, self.age > self.settings.index.refresh_seconds)
        filters = self._filters(stores)
        main = tv.Query.boolean_query([(occur.Must, tv.Query.boolean_query(should)), *filters])
        found = searcher.search(main, limit=limit).hits
        hits: dict[tuple[int, int], IndexedHit] = {}
        keys: list[str] = []
        for _, address in found:
            hit = IndexedHit(searcher.doc(address))
            if (hit.store, hit.root) not in self.configured:
                continue  # a store removed from the configuration is gone at once
            hits[(address.segment_ord, address.doc)] = hit
            keys.append(hit.key)
        if hits:
            only = tv.Query.const_score_query(
                tv.Query.term_set_query(self.schema, "key", keys), 0.0
            )
            for position, (qt, freq) in enumerate(zip(terms, df)):
                if not freq:
                    continue
                member = tv.Query.boolean_query(
                    [(occur.Must, self._term_query(qt)), (occur.Must, only)]
                )
                every = sum(freq.values())
                idf = math.log(1 + (total - every + 0.5) / (every + 0.5))
                for score, address in searcher.search(member, limit=len(hits)).hits:
                    holder = hits.get((address.segment_ord, address.doc))
                    if holder is None:
                        continue
                    # BM25's term-frequency part: 1.0 for one mention in a document of
                    # average length, up to 2.2 for many, less in a long document.
                    holder.terms[position] = 1.0 if qt.cjk or idf <= 0 else score / idf
        return IndexAnswer(
            list(hits.values()), df, totals, self.age > self.settings.index.refresh_seconds
        )


def _meta_head(raw: bytes) -> dict[str, Any]:
    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError):
        raise IndexUnavailable("index metadata corrupt") from None
    if not isinstance(meta, dict):
        raise IndexUnavailable("index metadata corrupt")
    return meta
