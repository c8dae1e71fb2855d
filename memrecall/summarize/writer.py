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
from pathlib import Path

from ..atomic import write_atomic
from ..redact import redact

_CHECKSUM_LINE = re.compile(r"^checksum: *(\S+) *\n", re.M)
# YAML plain scalars that need no quoting (and that frontmatter_lite reads back unchanged).
_PLAIN = re.compile(r"^[^\s\-?:,\[\]{}#&*!|>'\"%@`][^,\[\]{}#'\"]*(?<![\s:])$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "~"}


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


def _scalar(value: str) -> str:
    value = " ".join(str(value).split())
    if not value:
        return "''"
    if _PLAIN.match(value) and value.lower() not in _YAML_WORDS and ": " not in value and not re.fullmatch(r"[\d.:+\-eE]+", value):
        return value
    # Single quotes: YAML's only escape there is '' (no backslash rules to get wrong).
    return "'" + value.replace("'", "''") + "'"


def _flow(items: list[str]) -> str:
    # frontmatter_lite splits flow lists on commas, so a comma inside an item would break
    # it in two for the hook; items are one-line words or paths, a comma in them is noise.
    cleaned = [" ".join(str(i).replace(",", " ").split()) for i in items]
    return "[" + ", ".join(_scalar(i) for i in cleaned if i) + "]"


def _iso(moment: datetime | None) -> str:
    return moment.astimezone().isoformat(timespec="seconds") if moment else ""


def _clean(value: str) -> str:
    # Every field that came from the session (a folder named after a key, a branch holding
    # a token, a title) is redacted like the body: recall and search show these fields.
    return redact(str(value))[0]


def render_frontmatter(meta: SummaryMeta) -> str:
    lines = [
        "---",
        f"title: {_scalar(_clean(meta.title))}",
        f"date: {_iso(meta.date)}",
        f"session_id: {_scalar(meta.session_id)}",
        f"project: {_scalar(_clean(meta.project))}",
        f"cwd: {_scalar(_clean(meta.cwd))}",
        f"git_branch: {_scalar(_clean(meta.git_branch))}",
        f"tags: {_flow([_clean(t) for t in meta.tags])}",
        f"files: {_flow([_clean(f) for f in meta.files])}",
        f"backend: {_scalar(meta.backend)}",
        f"source_transcript: {_scalar(_clean(meta.source_transcript))}",
        f"recalled: {_flow([_clean(r) for r in meta.recalled])}",
    ]
    if meta.language:
        lines.append(f"language: {meta.language}")
    if meta.summarized:
        lines.append(f"summarized: {_iso(meta.summarized)}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def _digest(text_without_checksum: str) -> str:
    return "sha256:" + hashlib.sha256(text_without_checksum.encode("utf-8")).hexdigest()[:32]


def render_file(meta: SummaryMeta, body: str) -> str:
    """The whole file, checksum included (the checksum line goes last in the frontmatter)."""
    front = render_frontmatter(meta)
    text = front + "\n" + body.strip() + "\n"
    digest = _digest(text)
    return text.replace("\n---\n", f"\nchecksum: {digest}\n---\n", 1)


def is_pristine(text: str) -> bool:
    """True when `text` is exactly what memrecall wrote (no person has touched it)."""
    found = _CHECKSUM_LINE.search(text)
    if not found:
        return False
    without = text[: found.start()] + text[found.end():]
    return _digest(without) == found.group(1)


def summary_path(root: Path, start: datetime | None, fallback: datetime, session_id: str) -> Path:
    """`<root>/YYYY/MM/YYYY-MM-DD-<sid8>.md`, dated by the session's start in local time."""
    moment = (start or fallback).astimezone()
    sid8 = re.sub(r"[^0-9A-Za-z]", "", session_id)[:8] or "session"
    return root / f"{moment:%Y}" / f"{moment:%m}" / f"{moment:%Y-%m-%d}-{sid8}.md"


def _beside(path: Path, index: int) -> Path:
    return path.with_name(f"{path.stem}.{index}.md")


def _session_of(text: str) -> str:
    found = re.search(r"^session_id: *'?([^'\n]*)'?\s*$", text, re.M)
    return found.group(1).strip() if found else ""


def choose_target(preferred: Path, session_id: str) -> tuple[Path, bool]:
    """Where to write: `preferred` unless a person edited it; then the first free `.N` file.

    Returns (path, edited_found). A pristine memrecall file of the same session is ours to
    replace; one of another session (two ids sharing 8 characters) is left alone.
    """
    edited = False
    candidates = [preferred] + [_beside(preferred, i) for i in range(2, 100)]
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
