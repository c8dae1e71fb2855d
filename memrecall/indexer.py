"""Building and refreshing the search index (`memrecall index`, summarize, prune, and the
detached refresh a hook starts). The hook itself only reads: `index.py`.

A full build writes a new generation and switches CURRENT only once it is committed, so a
build that is killed or runs out of disk leaves the previous index in use; a refresh
re-reads only changed, added and removed files (a beads export: its changed issues).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from .atomic import read_json, write_atomic, write_json_atomic
from .config import Settings
from .index import (
    _TOKENIZER,
    MAX_FILE_BYTES,
    META_NAME,
    SCHEMA_VERSION,
    Root,
    _current,
    _register,
    _tantivy,
    cjk_grams,
    configured_roots,
    index_home,
)
from .walk import walk_files

MANIFEST_NAME = "manifest.json"
WRITER_HEAP = 64_000_000


@dataclass
class SourceDoc:
    store: str
    root: str
    ref: str
    path: str
    title: str
    head: str
    body: str
    date: int
    date_source: str = ""
    # beads: the issue's 1-based line and its byte offset in the export
    line: int = 0
    offset: int = 0
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    status: str = ""
    priority: int = -1
    # Everything this document can show (path parts, id, title, its whole text), one part a
    # line: checked with the hook's own redaction when analysed (the index's `clean` field).
    shown: str = field(default="", repr=False)
    # What the file was when indexed (markdown: size and mtime; beads: CRC of the JSON line):
    # the hook trusts `clean` only while the text it reads back is that same text.
    stamp: str = ""

    @property
    def key(self) -> str:
        return f"{self.store}\x1f{self.root}\x1f{self.ref}"


def _read_text(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def markdown_doc(root: Root, path: Path, st: os.stat_result) -> SourceDoc | None:
    from .stores.base import Document
    from .stores.markdown import SUMMARY_NAME, fill_note, settle_date

    if root.store == "summaries" and not SUMMARY_NAME.match(path.name):
        return None
    text = _read_text(path)
    if text is None:
        return None
    relative = path.relative_to(root.path).as_posix()
    ref = f"{root.label}/{relative}" if root.label else relative
    # Read exactly as the ripgrep path reads a note (title, tags, aliases, date).
    note = Document(root.store, ref, path)
    body = fill_note(note, text)
    settle_date(note, st.st_mtime)
    assert note.date is not None  # settle_date had an mtime
    return SourceDoc(
        # Path parts one a line: a whole absolute path is one long token to redaction's gate.
        shown="\n".join([*path.parts, root.label, text]),
        stamp=f"{st.st_size}:{st.st_mtime_ns}",
        store=root.store,
        root=str(root.path),
        ref=ref,
        path=str(path),
        title=note.title,
        head=" ".join([note.title, path.stem, *note.tags, *note.aliases]),
        body=body,
        date=int(note.date.timestamp()),
        date_source=note.date_source,
        tags=note.tags,
        aliases=note.aliases,
        recalled=note.recalled,
    )


def beads_docs(root: Root) -> dict[str, tuple[str, SourceDoc]]:
    """issue id → (its state: a hash of its JSON line and where the line starts, document).
    A duplicate id keeps its last line: an export appends the newer state of an issue."""
    import zlib

    from .stores.beads import issue_document, issue_from_record

    found: dict[str, tuple[str, SourceDoc]] = {}
    try:
        handle = open(root.path, "rb")
    except OSError:
        return found
    with handle:
        offset = 0
        for number, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            try:
                issue = issue_from_record(json.loads(raw))
            except (ValueError, RecursionError):
                continue
            if issue is None:
                continue
            doc = issue_document(root.path, issue, number)
            shown = "\n".join(
                [*root.path.parts, doc.ref, doc.title, *doc.tags, *doc.lines.values()]
            )
            found[doc.ref] = (
                # Where it starts is part of its state: an issue written above it moves it,
                # and the index must learn its new line and offset (the hook reads it there).
                f"{hashlib.sha1(raw).hexdigest()[:16]}@{start}",
                SourceDoc(
                    store="beads",
                    root=str(root.path),
                    ref=doc.ref,
                    path=str(root.path),
                    title=doc.title,
                    head=" ".join([doc.ref, doc.title, *doc.tags]),
                    body="\n".join(doc.lines.values()),
                    date=int(doc.date.timestamp()) if doc.date else 0,
                    date_source=doc.date_source,
                    line=number,
                    offset=start,
                    tags=doc.tags,
                    status=doc.status or "open",
                    priority=doc.priority if doc.priority is not None else -1,
                    shown=shown,
                    stamp=f"{zlib.crc32(raw):08x}",
                ),
            )
    return found


# --- the tantivy side ----------------------------------------------------------------------


def _schema() -> Any:
    tv = _tantivy()
    builder = tv.SchemaBuilder()
    builder.add_text_field("key", stored=True, tokenizer_name="raw")
    builder.add_text_field("store", stored=True, tokenizer_name="raw")
    builder.add_text_field("root", stored=True, tokenizer_name="raw")
    builder.add_text_field("ref", stored=True, tokenizer_name="raw")
    builder.add_text_field("path", stored=True, tokenizer_name="raw")
    builder.add_text_field("title", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("tags", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("recalled", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("status", stored=True, tokenizer_name="raw")
    builder.add_text_field("date_source", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("head", stored=True, tokenizer_name=_TOKENIZER, index_option="freq")
    builder.add_text_field("body", stored=False, tokenizer_name=_TOKENIZER, index_option="freq")
    builder.add_text_field(
        "grams", stored=False, tokenizer_name=_TOKENIZER, index_option="position"
    )
    builder.add_integer_field("date", stored=True, indexed=True, fast=True)
    builder.add_integer_field("line", stored=True)
    builder.add_integer_field("offset", stored=True)
    builder.add_integer_field("priority", stored=True)
    builder.add_integer_field("clean", stored=True)
    builder.add_text_field("stamp", stored=True, tokenizer_name="raw", index_option="basic")
    return builder.build()


def analyse(head: str, body: str, shown: str, analyzer: Any) -> tuple[str, str, str, bool]:
    """A document's index text — head terms, body terms (head included), CJK bigrams — and
    whether the hook's own redaction finds nothing in all it can show: then the hook shows
    its lines as they are (while the file is unchanged) instead of redacting every hit anew."""
    from .keywords import index_terms
    from .redact import redact_fast

    head_terms = index_terms(head, analyzer)
    body_terms = index_terms(body, analyzer)
    return (
        " ".join(head_terms),
        " ".join(head_terms + body_terms),
        " ".join(cjk_grams(head) + cjk_grams(body)),
        bool(shown) and redact_fast(shown) == shown,
    )


def _to_document(doc: SourceDoc, analysed: tuple[str, str, str, bool]) -> Any:
    tv = _tantivy()
    head, body, grams, clean = analysed
    return tv.Document(
        key=doc.key,
        store=doc.store,
        root=doc.root,
        ref=doc.ref,
        path=doc.path,
        title=doc.title,
        tags=doc.tags or [""],
        recalled=doc.recalled or [""],
        status=doc.status,
        head=head,
        body=body,
        grams=grams,
        date=doc.date,
        date_source=doc.date_source,
        line=doc.line,
        offset=doc.offset,
        priority=doc.priority,
        clean=int(clean),
        stamp=doc.stamp,
    )


# --- analysis in parallel: the analyser is the build's cost (≈ 90 % of its time) -----------

_WORKER: list[Any] = []
# Documents analysed per batch; a batch is spread over the worker processes.
BATCH = 800
PARALLEL_FROM = 400


def _worker_init(tokenizer: str) -> None:
    from .tokenizers import resolve

    _WORKER.append(resolve(tokenizer)[0])


def _worker_analyse(texts: list[tuple[str, str, str]]) -> list[tuple[str, str, str, bool]]:
    return [analyse(head, body, shown, _WORKER[0]) for head, body, shown in texts]


class _Adder:
    """Queues new documents and adds them to the writer in analysed batches: inline for a
    few, in worker processes (spawned, one per core) for a build."""

    def __init__(self, writer: Any, analyzer: Any, tokenizer: str, expected: int) -> None:
        self.writer = writer
        self.analyzer = analyzer
        self.pending: list[SourceDoc] = []
        self.pool: Any = None
        workers = min(os.cpu_count() or 1, 8)
        if expected >= PARALLEL_FROM and workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # spawn, never fork: the writer already runs tantivy threads in this process.
            self.pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_worker_init,
                initargs=(tokenizer,),
            )
            self.workers = workers

    def add(self, doc: SourceDoc) -> None:
        self.pending.append(doc)
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        docs, self.pending = self.pending, []
        if not docs:
            return
        texts = [(d.head, d.body, d.shown) for d in docs]
        if self.pool is None:
            analysed = [analyse(head, body, shown, self.analyzer) for head, body, shown in texts]
        else:
            size = max(1, len(texts) // (self.workers * 4))
            chunks = [texts[i : i + size] for i in range(0, len(texts), size)]
            analysed = [item for part in self.pool.map(_worker_analyse, chunks) for item in part]
        for doc, result in zip(docs, analysed):
            self.writer.add_document(_to_document(doc, result))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


# --- generations and metadata ----------------------------------------------------------------


@dataclass
class Status:
    exists: bool
    path: Path | None = None
    documents: int = 0
    bytes: int = 0
    backend: str = ""
    built_at: str = ""
    refreshed_at: str = ""
    age_seconds: float | None = None
    problem: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "exists": self.exists,
            "path": str(self.path) if self.path else None,
            "documents": self.documents,
            "bytes": self.bytes,
            "backend": self.backend,
            "built_at": self.built_at,
            "refreshed_at": self.refreshed_at,
            "age_seconds": None if self.age_seconds is None else round(self.age_seconds, 1),
            "problem": self.problem,
        }


def status(settings: Settings) -> Status:
    home = index_home(settings)
    gen = _current(home)
    if gen is None or not gen.is_dir():
        return Status(False, problem="no index yet (memrecall index build)")
    meta = read_json(gen / META_NAME, None)
    result = Status(True, gen)
    result.bytes = sum(f.stat().st_size for f in gen.iterdir() if f.is_file())
    if not isinstance(meta, dict):
        result.problem = "index metadata missing or corrupt"
        return result
    result.backend = str(meta.get("backend", ""))
    result.built_at = str(meta.get("built_at", ""))
    result.refreshed_at = str(meta.get("refreshed_at", ""))
    result.documents = int(meta.get("documents", 0))
    try:
        result.age_seconds = time.time() - (gen / META_NAME).stat().st_mtime
    except OSError:
        pass
    if meta.get("schema") != SCHEMA_VERSION:
        result.problem = f"index schema {meta.get('schema')} ≠ {SCHEMA_VERSION}: rebuild needed"
    return result


# --- building and refreshing ----------------------------------------------------------------


@dataclass
class RefreshReport:
    mode: str  # build | refresh | skipped
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    documents: int = 0
    files_scanned: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    path: str = ""
    # path → size, mtime and the documents it gave: the next refresh's manifest
    files: dict[str, Any] = field(default_factory=dict, repr=False)

    def as_json(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "mode",
                "added",
                "updated",
                "removed",
                "unchanged",
                "documents",
                "files_scanned",
                "seconds",
                "warnings",
                "path",
            )
        }


Progress = Callable[[int, int], None]


def _scan(roots: list[Root]) -> dict[str, tuple[Root, os.stat_result]]:
    """Every file the index should hold: path → (its root, stat)."""
    files: dict[str, tuple[Root, os.stat_result]] = {}
    for root in roots:
        if root.store == "beads":
            try:
                st = os.stat(root.path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                files[str(root.path)] = (root, st)
            continue
        if not root.path.is_dir():
            continue
        for path, st in walk_files(root.path):
            files.setdefault(str(path), (root, st))
    return files


def refresh(
    settings: Settings,
    full: bool = False,
    progress: Progress | None = None,
    wait: float = 600.0,
) -> RefreshReport:
    """Bring the index up to date with the stores: only changed, added and removed files are
    re-read (a beads export: only its changed issues). `full` builds a new generation from
    scratch. Raises LockTimeout when another writer holds the lock for longer than `wait`."""
    from .atomic import run_lock

    home = index_home(settings)
    # Private to the user, like the notes it is made from (the files inside inherit nothing,
    # but a folder nobody else can enter is enough).
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    with run_lock(home / "write", timeout=wait):
        return _refresh_locked(settings, home, full, progress)


def _refresh_locked(
    settings: Settings, home: Path, full: bool, progress: Progress | None
) -> RefreshReport:
    from .tokenizers import resolve

    started = time.monotonic()
    tv = _tantivy()
    analyzer, notes = resolve(settings.tokenizer)
    report = RefreshReport("refresh", warnings=list(notes))
    roots = configured_roots(settings, report.warnings)
    current = _current(home)
    meta = read_json(current / META_NAME, None) if current else None
    usable = (
        not full
        and current is not None
        and isinstance(meta, dict)
        and meta.get("schema") == SCHEMA_VERSION
        and meta.get("backend") == analyzer.name
    )
    index = None
    if usable:
        assert current is not None
        damaged = verify_checksums(current)
        if damaged:
            report.warnings.append(f"index damaged ({damaged}); rebuilt")
        else:
            try:
                index = tv.Index.open(str(current))
                _register(index)
                index.searcher()
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # corrupt or from another tantivy: start over
                report.warnings.append(f"index unreadable ({exc.__class__.__name__}); rebuilt")
                index = None
    if index is None:
        report.mode = "build"
        meta = {}
        target = home / f"gen-{int(time.time() * 1000):x}-{os.getpid():x}"
        target.mkdir()
        try:
            index = tv.Index(_schema(), path=str(target))
            _register(index)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
    else:
        assert current is not None
        target = current
    assert isinstance(meta, dict)
    old_files: dict[str, Any] = {}
    if report.mode == "refresh":
        loaded = read_json(target / MANIFEST_NAME, {})
        old_files = loaded if isinstance(loaded, dict) else {}

    try:
        _apply(index, analyzer, roots, old_files, report, progress, settings.tokenizer)
        now_iso = datetime.now(timezone.utc).isoformat()
        new_meta = {
            "schema": SCHEMA_VERSION,
            "backend": analyzer.name,
            "built_at": meta.get("built_at", now_iso) if report.mode == "refresh" else now_iso,
            "refreshed_at": now_iso,
            "documents": report.documents,
            "roots": [[r.store, str(r.path)] for r in roots],
        }
        # The manifest (every file's size and mtime) is only for refreshes; the hook reads
        # the small metadata file alone. Manifest first: a refresh killed between the two
        # writes re-reads a few files next time, nothing worse.
        write_atomic(target / MANIFEST_NAME, json.dumps(report.files, ensure_ascii=False))
        write_atomic(home / ALIASES_NAME, alias_groups(report.files))
        write_json_atomic(target / META_NAME, new_meta)
        if report.mode == "build":
            write_atomic(home / "CURRENT", target.name + "\n")
    except BaseException:
        if report.mode == "build":
            shutil.rmtree(target, ignore_errors=True)  # the previous generation stays live
        raise
    if report.mode == "build":
        _remove_old_generations(home, keep=target)
    report.seconds = round(time.monotonic() - started, 3)
    report.path = str(target)
    return report


ALIASES_NAME = "aliases.txt"
# Aliases longer than this are sentences, not names: no synonym for search.
ALIAS_MAX_CHARS = 40


def alias_groups(files: dict[str, Any]) -> str:
    """Every note's title and frontmatter `aliases` as one synonym group (synonyms.txt's
    format): a prompt saying `k8s` also finds summaries that say `Kubernetes` when a note
    lists one as the other's alias. Rebuilt from the manifest at every refresh."""
    lines = ["# Written by `memrecall index`: each note's title and aliases. Do not edit."]
    for entry in files.values():
        names = entry.get("aliases") if isinstance(entry, dict) else None
        if not isinstance(names, list):
            continue
        group = []
        for name in names:
            text = " ".join(str(name).replace(",", " ").replace("|", " ").replace("#", " ").split())
            if 3 <= len(text) <= ALIAS_MAX_CHARS and text not in group:
                group.append(text)
        if len(group) >= 2:
            lines.append(", ".join(group))
    return "\n".join(lines) + "\n"


def _apply(
    index: Any,
    analyzer: Any,
    roots: list[Root],
    old_files: dict[str, Any],
    report: RefreshReport,
    progress: Progress | None,
    tokenizer: str,
) -> None:
    files = _scan(roots)
    report.files_scanned = len(files)
    new_files: dict[str, Any] = {}
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
    adder = None
    try:
        # Files gone from disk (or from the configuration): every document they gave goes.
        for path, entry in old_files.items():
            if path not in files:
                for key in _entry_keys(entry):
                    writer.delete_documents_by_term("key", key)
                    report.removed += 1
        todo = [
            (path, root, st)
            for path, (root, st) in files.items()
            if not _same_file(old_files.get(path), st)
        ]
        for path, (root, st) in files.items():
            if _same_file(old_files.get(path), st):
                new_files[path] = old_files[path]
                report.unchanged += len(_entry_keys(old_files[path]))
        total = len(todo)
        expected = sum(1 for _, root, _ in todo if root.store != "beads") + sum(
            st.st_size // 800 for _, root, st in todo if root.store == "beads"
        )
        adder = _Adder(writer, analyzer, tokenizer, expected)
        for done, (path, root, st) in enumerate(todo, start=1):
            old = old_files.get(path)
            if root.store == "beads":
                new_files[path] = _apply_beads(writer, adder, root, st, old, report)
            else:
                new_files[path] = _apply_markdown(writer, adder, root, Path(path), st, old, report)
            if progress is not None and (done % 50 == 0 or done == total):
                progress(done, total)
        adder.flush()
        if progress is not None and not total:
            progress(0, 0)
        writer.commit()
        writer.wait_merging_threads()
    except BaseException:
        try:
            writer.rollback()
        except Exception:  # the original error is the one worth raising
            pass
        raise
    finally:
        if adder is not None:
            adder.close()
    index.reload()
    report.documents = index.searcher().num_docs
    report.files = new_files


def _entry_keys(entry: Any) -> list[str]:
    if not isinstance(entry, dict):
        return []
    if "issues" in entry:
        return [v[1] for v in entry["issues"].values() if isinstance(v, list) and len(v) == 2]
    return [k for k in entry.get("keys", []) if isinstance(k, str)]


def _same_file(entry: Any, st: os.stat_result) -> bool:
    return (
        isinstance(entry, dict)
        and entry.get("mtime") == st.st_mtime_ns
        and entry.get("size") == st.st_size
    )


def _apply_markdown(
    writer: Any,
    adder: _Adder,
    root: Root,
    path: Path,
    st: os.stat_result,
    old: Any,
    report: RefreshReport,
) -> dict[str, Any]:
    for key in _entry_keys(old):
        writer.delete_documents_by_term("key", key)
    doc = markdown_doc(root, path, st)
    keys = []
    if doc is not None:
        adder.add(doc)
        keys.append(doc.key)
        if old:
            report.updated += 1
        else:
            report.added += 1
    elif old:
        report.removed += 1
    entry: dict[str, Any] = {"mtime": st.st_mtime_ns, "size": st.st_size, "keys": keys}
    if doc is not None and doc.aliases:
        entry["aliases"] = [doc.title, *doc.aliases]
    return entry


def _apply_beads(
    writer: Any, adder: _Adder, root: Root, st: os.stat_result, old: Any, report: RefreshReport
) -> dict[str, Any]:
    previous: dict[str, Any] = old.get("issues", {}) if isinstance(old, dict) else {}
    issues: dict[str, list[str]] = {}
    for ref, (digest, doc) in beads_docs(root).items():
        issues[ref] = [digest, doc.key]
        before = previous.get(ref)
        if isinstance(before, list) and before and before[0] == digest:
            report.unchanged += 1
            continue
        writer.delete_documents_by_term("key", doc.key)
        adder.add(doc)
        if before:
            report.updated += 1
        else:
            report.added += 1
    for ref, before in previous.items():
        if ref not in issues and isinstance(before, list) and len(before) == 2:
            writer.delete_documents_by_term("key", before[1])
            report.removed += 1
    return {"mtime": st.st_mtime_ns, "size": st.st_size, "issues": issues}


def verify_checksums(gen: Path) -> str:
    """Check every tantivy file against the CRC-32 in its footer (tantivy writes one:
    `<json {"version":…,"crc":n}><u32 json length><u32 magic 1337>`). Opening an index reads
    only headers, so flipped bytes in a segment would otherwise surface one query at a time.
    Returns the first damaged file's name, or "" when all are intact."""
    import struct
    import zlib

    try:
        meta = json.loads((gen / "meta.json").read_text(encoding="utf-8"))
        committed = {str(seg["segment_id"]).replace("-", "") for seg in meta["segments"]}
    except (OSError, ValueError, KeyError, TypeError):
        return "meta.json"
    # Only the committed segments' files: a refresh that failed may leave half-written
    # files of its own, which tantivy never reads and collects later.
    for path in sorted(gen.iterdir()):
        name = path.name
        if name.split(".", 1)[0] not in committed:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            return name
        if len(data) < 8:
            return name
        footer_len, magic = struct.unpack("<II", data[-8:])
        if magic != 1337 or footer_len + 8 > len(data):
            return name
        try:
            crc = json.loads(data[-8 - footer_len : -8]).get("crc")
        except (ValueError, AttributeError):
            return name
        if zlib.crc32(memoryview(data)[: len(data) - 8 - footer_len]) != crc:
            return name
    return ""


def _remove_old_generations(home: Path, keep: Path) -> None:
    # A hook may still hold an old generation open: on POSIX its files stay readable after
    # removal; on Windows removal fails and is simply tried again after the next build.
    for entry in home.iterdir():
        if entry.is_dir() and entry.name.startswith("gen-") and entry != keep:
            shutil.rmtree(entry, ignore_errors=True)


# --- background refresh (the hook never waits for it) ------------------------------------------


def refresh_if_present(settings: Settings, wait: float = 60.0) -> tuple[RefreshReport | None, str]:
    """After a command changed the stores (summarize, prune): bring an existing index up
    to date. Returns the report, or None and why nothing was done. Never raises: the
    stores are already written, and the next hook refreshes a stale index anyway."""
    from .atomic import LockTimeout

    if not settings.index.enabled:
        return None, "index disabled"
    if _current(index_home(settings)) is None:
        return None, "no index yet"
    try:
        return refresh(settings, wait=wait), ""
    except LockTimeout:
        return None, "another refresh is running"
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the stores were written; the index is only a cache
        return None, f"index refresh failed: {exc.__class__.__name__}: {str(exc)[:200]}"
