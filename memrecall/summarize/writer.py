"""Summary files: `<summaries>/YYYY/MM/YYYY-MM-DD-<sid8>.md` with DESIGN.md's frontmatter.

Every file memrecall writes carries `checksum:` — a hash of the file without that line. A
file whose content no longer matches its checksum (or that has none) was edited by a person
and is never overwritten: the new summary goes beside it (`…-<sid8>.2.md`, `.3.md`, …), a name
the summaries store reads like any other.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..atomic import numbered, write_atomic
from ..redact import redact

_CHECKSUM_LINE = re.compile(r"^checksum: *(\S+) *\n", re.M)
# One line per field however long: a folded line would send the hook's fast reader
# (frontmatter_lite) to PyYAML for every summary it reads.
_NO_WRAP = 1 << 30


@dataclass
class SummaryMeta:
    title: str
    date: datetime | None
    session_id: str
    project: str
    cwd: str
    git_branch: str
    tags: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    backend: str = ""
    source_transcript: str = ""
    recalled: list[str] = field(default_factory=list)
    language: str = ""
    summarized: datetime | None = None


def _text(value: str) -> str:
    # Every field that came from the session (a folder named after a key, a branch holding
    # a token, a title) is redacted like the body: recall and search show these fields.
    return " ".join(redact(str(value))[0].split())


def _items(values: list[str]) -> list[str]:
    return [item for item in (_text(v) for v in values) if item]


def _moment(value: datetime | None) -> datetime | str:
    return value.astimezone().replace(microsecond=0) if value else ""


def _metadata(meta: SummaryMeta) -> dict[str, Any]:
    """The frontmatter fields in the order DESIGN.md shows them."""
    data: dict[str, Any] = {
        "title": _text(meta.title),
        "date": _moment(meta.date),
        "session_id": " ".join(meta.session_id.split()),
        "project": _text(meta.project),
        "cwd": _text(meta.cwd),
        "git_branch": _text(meta.git_branch),
        "tags": _items(meta.tags),
        "files": _items(meta.files),
        "backend": meta.backend,
        "source_transcript": _text(meta.source_transcript),
        "recalled": _items(meta.recalled),
    }
    if meta.language:
        data["language"] = meta.language
    if meta.summarized:
        data["summarized"] = _moment(meta.summarized)
    return data


@lru_cache(maxsize=1)
def _dumper() -> type:
    """PyYAML's safe dumper, writing an instant as plain ISO 8601 (`2026-11-20T19:01:00+09:00`,
    what a person and Obsidian read as a date) rather than PyYAML's `2026-11-20 19:01:00+09:00`."""
    import yaml

    class SummaryDumper(yaml.SafeDumper):
        pass

    def instant(dumper: yaml.SafeDumper, value: datetime) -> yaml.Node:
        return dumper.represent_scalar("tag:yaml.org,2002:timestamp", value.isoformat())

    SummaryDumper.add_representer(datetime, instant)
    return SummaryDumper


def _digest(text_without_checksum: str) -> str:
    return "sha256:" + hashlib.sha256(text_without_checksum.encode("utf-8")).hexdigest()[:32]


def render_file(meta: SummaryMeta, body: str) -> str:
    """The whole file, checksum included (the checksum line goes last in the frontmatter)."""
    import frontmatter  # pulls in yaml: only summarize writes summaries

    post = frontmatter.Post(body.strip(), **_metadata(meta))
    text = frontmatter.dumps(post, Dumper=_dumper(), sort_keys=False, width=_NO_WRAP) + "\n"
    digest = _digest(text)
    return text.replace("\n---\n", f"\nchecksum: {digest}\n---\n", 1)


def is_pristine(text: str) -> bool:
    """True when `text` is exactly what memrecall wrote (no person has touched it)."""
    found = _CHECKSUM_LINE.search(text)
    if not found:
        return False
    without = text[: found.start()] + text[found.end() :]
    return _digest(without) == found.group(1)


def summary_path(root: Path, start: datetime | None, fallback: datetime, session_id: str) -> Path:
    """`<root>/YYYY/MM/YYYY-MM-DD-<sid8>.md`, dated by the session's start in local time."""
    moment = (start or fallback).astimezone()
    sid8 = re.sub(r"[^0-9A-Za-z]", "", session_id)[:8] or "session"
    return root / f"{moment:%Y}" / f"{moment:%m}" / f"{moment:%Y-%m-%d}-{sid8}.md"


def _session_of(text: str) -> str:
    found = re.search(r"^session_id: *'?([^'\n]*)'?\s*$", text, re.M)
    return found.group(1).strip() if found else ""


def choose_target(preferred: Path, session_id: str) -> tuple[Path, bool]:
    """Where to write: `preferred` unless a person edited it; then the first free `.N` file.

    Returns (path, edited_found). A pristine memrecall file of the same session is ours to
    replace; one of another session (two ids sharing 8 characters) is left alone.
    """
    edited = False
    candidates = list(numbered(preferred, first=2, last=99))
    for candidate in candidates:
        try:
            existing = candidate.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return candidate, edited
        except OSError:
            edited = True
            continue
        if is_pristine(existing):
            if _session_of(existing) == session_id:
                return candidate, edited
            continue
        edited = True
    return candidates[-1], edited


def base_path(path: Path) -> Path:
    """`…-<sid8>.3.md` → `…-<sid8>.md` (the name the session's summary would have)."""
    match = re.match(r"^(.*)\.\d+\.md$", path.name)
    return path.with_name(match.group(1) + ".md") if match else path


def write_summary(target: Path, meta: SummaryMeta, body: str) -> None:
    write_atomic(target, render_file(meta, body))
