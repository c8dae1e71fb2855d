"""What a store hands the ranking: documents with the lines that matched."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Protocol

from .. import regexcache
from ..times import instant_or_none

if TYPE_CHECKING:
    from ..grep import GrepJob


@dataclass
class Document:
    store: str
    ref: str
    path: Path
    title: str = ""
    date: datetime | None = None
    # Where `date` came from: "frontmatter", "name" (a YYYY-MM-DD in the file name), "mtime"
    # (the file's modification time: a clone or a copy sets it, so it is shown as such),
    # "issue" (a beads issue's updated_at or created_at); "" while there is no date.
    date_source: str = ""
    tags: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)
    # A summary's `recalled:` (`store:ref` of the memories injected into its session): it
    # repeats them, and must not push them out of recall (search lifts the originals).
    recalled: list[str] = field(default_factory=list)
    # A closed beads issue's close reason: shown with the hit.
    close_reason: str = ""
    status: str | None = None
    priority: int | None = None
    # A beads issue's 1-based line in its export (its `lines` are the issue's own text).
    source_line: int = 0
    # line number → text of the lines that matched (1-based; beads: lines of the issue text).
    # Markdown documents start with `found` only and get `lines` once they rank high enough.
    lines: dict[int, str] = field(default_factory=dict)
    # (line number, matched text) straight from the grep pass.
    found: list[tuple[int, str]] = field(default_factory=list)
    # Text that counts as a title/id hit (title, tags, aliases, id), case-folded.
    heading_text: str = ""
    # Lines 1..body_start are frontmatter: poor snippets.
    body_start: int = 0
    # Set once the store has read the document's header (frontmatter, dates).
    loaded: bool = False


class Store(Protocol):
    name: str

    def jobs(self) -> list[GrepJob]: ...

    def documents(self, lines: dict[Path, list[tuple[int, str]]]) -> Iterable[Document]: ...

    def load(self, doc: Document) -> bool:
        """Fill title/date/tags; False when the document must be dropped (e.g. too old)."""
        ...

    def doc_count(self) -> int: ...

    def root_of(self, path: Path) -> str:
        """The store root a document lives under: part of the memory's identity."""
        ...


_DATE_IN_NAME = regexcache.compile(r"(\d{4})-(\d{2})-(\d{2})")


def parse_date(value: object) -> datetime | None:
    """Frontmatter dates come as strings, dates or datetimes, with or without offsets; a
    text that is no ISO time may still hold a `YYYY-MM-DD` (`2026-11-02 (Mon)`)."""
    moment = instant_or_none(value)
    if moment is not None or value is None:
        return moment
    match = _DATE_IN_NAME.search(str(value))
    if not match:
        return None
    try:
        return datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=timezone.utc)
    except ValueError:
        return None


def date_from_name(name: str) -> datetime | None:
    match = _DATE_IN_NAME.search(name)
    if not match:
        return None
    try:
        return datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=timezone.utc)
    except ValueError:
        return None


def read_lines(path: Path, numbers: Iterable[int], limit: int = 8 << 20) -> dict[int, str]:
    """The given 1-based lines of a file (what grep reported), decoded leniently."""
    wanted = set(numbers)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit)
    except OSError:
        return {}
    lines: dict[int, str] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number in wanted:
            lines[number] = raw.decode("utf-8", errors="replace").rstrip("\r")
            if len(lines) == len(wanted):
                break
    return lines


def read_head(path: Path, limit: int = 16384) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""
