"""Obsidian vaults and memrecall's own summaries: folders of markdown with frontmatter."""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterable

from .. import frontmatter_lite, regexcache
from ..grep import GrepJob
from .base import Document, date_from_name, parse_date, read_head
from .counts import cached_count

_INLINE_TAG = regexcache.compile(
    r"(?<![\w/#&])#([^\s#.,;:!?()\[\]{}\"'`、。]*[^\d\s#.,;:!?()\[\]{}\"'`、。][^\s#.,;:!?()\[\]{}\"'`、。]*)"
)
_FENCE = regexcache.compile(r"^\s*(```|~~~)")
SUMMARY_NAME = regexcache.compile(r"^\d{4}-\d{2}-\d{2}-[0-9A-Za-z]+(?:\.\d+)?\.md$")
_DATE_KEYS = (
    "date",
    "created",
    "updated",
    "lastmod",
    "last-modified",
    "creation date",
    "updated-date",
)


def inline_tags(body: str) -> list[str]:
    tags: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if (
            in_fence
            or "#" not in line
            or line.lstrip().startswith("#" + " ")
            or line.startswith("    ")
        ):
            continue
        line = re.sub(r"`[^`]*`|https?://\S+", " ", line)
        tags += [t for t in _INLINE_TAG.findall(line) if t not in tags]
    return tags


def fill_note(doc: Document, text: str) -> str:
    """Title, tags (frontmatter and inline), aliases and date of a note from its text, into
    `doc`; returns the body (the text without its frontmatter). The index reads notes the same
    way."""
    front_text, body, doc.body_start = frontmatter_lite.split(text)
    meta = frontmatter_lite.parse(front_text) if front_text else {}
    title = meta.get("title")
    doc.title = str(title).strip() if title else doc.path.stem
    doc.tags = frontmatter_lite.as_list(meta.get("tags", meta.get("tag")))
    for tag in inline_tags(body):
        if tag not in doc.tags:
            doc.tags.append(tag)
    doc.aliases = frontmatter_lite.as_list(meta.get("aliases", meta.get("alias")))
    doc.recalled = [str(r) for r in frontmatter_lite.as_list(meta.get("recalled")) if ":" in str(r)]
    for key in _DATE_KEYS:
        if meta.get(key):
            doc.date = parse_date(meta[key])
            if doc.date:
                doc.date_source = "frontmatter"
                break
    doc.heading_text = " ".join([doc.title, doc.path.stem, *doc.tags, *doc.aliases]).casefold()
    doc.loaded = True
    return body


def settle_date(doc: Document, mtime: float | None) -> None:
    """A note whose frontmatter gave no date: the date in its file name (a daily note's
    `2026-11-02.md`), else the file's modification time, marked as such: a clone, a copy or
    a sync sets it, so it may say when the file arrived rather than when it was written.
    Only summaries rank by recency, and they are named by date; a note's mtime only breaks
    a near-duplicate tie, as it always has."""
    if doc.date is not None:
        return
    doc.date = date_from_name(doc.path.name)
    if doc.date is not None:
        doc.date_source = "name"
    elif mtime is not None:
        doc.date, doc.date_source = datetime.fromtimestamp(mtime, timezone.utc), "mtime"


def _mtime(path: Path) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


class VaultStore:
    """An Obsidian vault. Dot-folders (.obsidian, .trash, .git) and non-markdown are skipped."""

    name = "obsidian"

    def __init__(self, vaults: list[tuple[Path, str]], cache_dir: Path) -> None:
        """`vaults`: each folder with the label its refs start with ("" for none)."""
        self.roots = [root for root, _ in vaults]
        self._labels = {root: label for root, label in vaults}
        self._cache_dir = cache_dir

    def jobs(self) -> list[GrepJob]:
        return [GrepJob([root], globs=["*.md"]) for root in self.roots if root.is_dir()]

    def _root_of(self, path: Path) -> Path:
        # rg prints paths under the root exactly as it was given, so a prefix test suffices.
        parts = path.parts
        for root in self.roots:
            if parts[: len(root.parts)] == root.parts:
                return root
        return path.parent

    def root_of(self, path: Path) -> str:
        return str(self._root_of(path))

    def documents(self, lines: dict[Path, list[tuple[int, str]]]) -> Iterable[Document]:
        for path, found in lines.items():
            root = self._root_of(path)
            relative = path.parts[len(root.parts) :]
            if any(part.startswith(".") for part in relative):
                continue
            ref = "/".join(relative) if relative else path.name
            if self._labels.get(root):
                ref = f"{self._labels[root]}/{ref}"
            yield Document(self.name, ref, path, title=path.stem, found=found)

    def load(self, doc: Document) -> bool:
        fill_note(doc, read_head(doc.path))
        if doc.date is None:
            settle_date(doc, _mtime(doc.path))
        return True

    def doc_count(self) -> int:
        return sum(
            cached_count(root, "*.md", self._cache_dir) for root in self.roots if root.is_dir()
        )


class SummaryStore:
    """memrecall's daily summaries: `<root>/YYYY/MM/YYYY-MM-DD-<sid8>.md`.

    A summary older than the retention window is invisible here even before `prune` runs.
    """

    name = "summaries"

    def __init__(self, root: Path, now: datetime, retention_days: int, cache_dir: Path) -> None:
        self.root = root
        self.now = now
        self.cutoff = now - timedelta(days=retention_days)
        self._cache_dir = cache_dir

    def jobs(self) -> list[GrepJob]:
        if not self.root.is_dir():
            return []
        # Only month folders that can hold in-window summaries; the rest is not even read.
        months = []
        try:
            years = sorted(p for p in self.root.iterdir() if p.is_dir() and p.name.isdigit())
        except OSError:
            return []
        for year in years:
            for month in sorted(p for p in year.iterdir() if p.is_dir() and p.name.isdigit()):
                try:
                    start = datetime(int(year.name), int(month.name), 1, tzinfo=timezone.utc)
                except ValueError:
                    continue
                if start + timedelta(days=32) >= self.cutoff:
                    months.append(month)
        return [GrepJob(months, globs=["*.md"])] if months else []

    def root_of(self, path: Path) -> str:
        return str(self.root)

    def documents(self, lines: dict[Path, list[tuple[int, str]]]) -> Iterable[Document]:
        for path, found in lines.items():
            if not SUMMARY_NAME.match(path.name):
                continue
            name_date = date_from_name(path.name)
            # Filename dates are a cheap pre-filter; frontmatter decides in load().
            if name_date is not None and name_date < self.cutoff - timedelta(days=2):
                continue
            try:
                ref = path.relative_to(self.root).as_posix()
            except ValueError:
                ref = path.name
            yield Document(self.name, ref, path, title=path.stem, date=name_date, found=found)

    def load(self, doc: Document) -> bool:
        doc.date = None  # the name's date was a pre-filter; frontmatter comes first
        fill_note(doc, read_head(doc.path))
        if doc.date is None:
            settle_date(doc, _mtime(doc.path))
        return doc.date is not None and doc.date >= self.cutoff

    def doc_count(self) -> int:
        if not self.root.is_dir():
            return 0
        return cached_count(self.root, "*.md", self._cache_dir)
