"""beads (`bd`) issues from their JSONL export, across every format era.

A hit is one issue, never a raw JSON line: ripgrep finds candidate lines, each is parsed
as JSON, and the keyword must then occur in the issue's text fields (not in a field name
or a timestamp).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from .. import regexcache
from ..grep import GrepJob
from .base import Document, parse_date, read_lines

_NAMES = ("issues.jsonl", "beads.jsonl", "bd.jsonl")
_TEXT_FIELDS = ("description", "design", "acceptance_criteria", "notes", "close_reason")
# Infrastructure records of agent frameworks, not work items (bd export skips them too).
_SKIP_TYPES = {
    "event",
    "agent",
    "role",
    "rig",
    "message",
    "molecule",
    "gate",
    "convoy",
    "slot",
    "queue",
    "merge-request",
}


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path`, symlinks resolved, lies inside `folder` (also resolved)."""
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop
        return False


def resolve_files(location: Path, warnings: list[str] | None = None) -> list[Path]:
    """A location may be a project root, its `.beads/` folder or a `.jsonl` file.

    `.beads/metadata.json` comes with the repository, so whoever wrote the repository chose
    it: the export it names must lie inside that `.beads/` folder (symlinks resolved), or it
    could make memrecall read and inject `~/.ssh/…` or `../../other-project/secrets`."""
    if location.is_file():
        return [location]
    folder = location if location.name == ".beads" else location / ".beads"
    if not folder.is_dir():
        folder = location
    named: str | None = None
    try:
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
        if isinstance(meta, dict) and isinstance(meta.get("jsonl_export"), str):
            named = meta["jsonl_export"]
    except (OSError, ValueError, RecursionError):
        pass
    if named:
        candidate = folder / named
        if not _inside(candidate, folder):
            if warnings is not None:
                warnings.append(
                    f"{folder / 'metadata.json'}: jsonl_export {named!r} "
                    f"points outside {folder}; ignored"
                )
        elif candidate.is_file():
            return [candidate]
    present = [
        folder / name
        for name in _NAMES
        if (folder / name).is_file() and _inside(folder / name, folder)
    ]
    if present:
        # Old repos renamed the export; the most recently written one is current.
        return [max(present, key=lambda p: p.stat().st_mtime)]
    backup = folder / "backup" / "issues.jsonl"
    return [backup] if backup.is_file() and _inside(backup, folder) else []


_ID_FIELD = regexcache.compile(
    rb'"(?:id|issue_id)"\s*:\s*"([A-Za-z][A-Za-z0-9_-]{0,40})-[A-Za-z0-9]{1,16}(?:\.\d+)*"'
)
_PREFIX_SETTING = regexcache.compile(
    r"^\s*issue-prefix\s*:\s*[\"']?([A-Za-z][A-Za-z0-9_-]{0,30})[\"']?\s*(?:#.*)?$", re.MULTILINE
)
# Enough of an export's head to see every project an export mixes, little enough for the hook.
_PREFIX_SAMPLE_BYTES = 64 * 1024


def id_prefixes(locations: Iterable[Path]) -> frozenset[str]:
    """The id prefixes (`bd` of `bd-kpy`) of the configured beads projects, from the ids at
    the head of each export and `issue-prefix` in `.beads/config.yaml`: what makes `bd-1`
    and `bd-kpy` in a prompt ids rather than words. A few file reads, cheap enough for the hook."""
    found: set[str] = set()
    for location in locations:
        for export in resolve_files(location):
            try:
                with open(export, "rb") as handle:
                    head = handle.read(_PREFIX_SAMPLE_BYTES)
            except OSError:
                continue
            found.update(m.group(1).decode().lower() for m in _ID_FIELD.finditer(head))
            try:
                config = (export.parent / "config.yaml").read_text(
                    encoding="utf-8", errors="replace"
                )
            except OSError:
                continue
            found.update(
                m.group(1).lower() for m in _PREFIX_SETTING.finditer(config[:_PREFIX_SAMPLE_BYTES])
            )
    return frozenset(found)


def issue_from_record(record: Any) -> dict[str, Any] | None:
    """The record as an issue, or None for tombstones, wisps, memories and infra types."""
    if not isinstance(record, dict):
        return None
    if record.get("_type") not in (None, "issue"):
        return None
    issue_id = record.get("id") or record.get("issue_id")
    if not isinstance(issue_id, str) or not isinstance(record.get("title"), str):
        return None
    if record.get("status") == "tombstone" or record.get("ephemeral") is True:
        return None
    if issue_id.startswith("bd-wisp-") or record.get("issue_type") in _SKIP_TYPES:
        return None
    return record


def issue_text(issue: dict[str, Any]) -> list[str]:
    """Searchable lines of an issue below its title: text fields, labels, comments."""
    lines: list[str] = []
    for name in _TEXT_FIELDS:
        value = issue.get(name)
        if isinstance(value, str) and value.strip():
            lines += [line for line in value.split("\n") if line.strip()]
    labels = issue.get("labels")
    if isinstance(labels, list) and labels:
        lines.append("labels: " + ", ".join(str(label) for label in labels))
    for comment in issue.get("comments") or []:
        if isinstance(comment, dict) and isinstance(comment.get("text"), str):
            lines += [line for line in comment["text"].split("\n") if line.strip()]
    return lines


def issue_document(path: Path, issue: dict[str, Any], source_line: int = 0) -> Document:
    """`source_line`: the issue's 1-based line in the export `path` (0: unknown)."""
    issue_id = str(issue.get("id") or issue.get("issue_id"))
    # Line 1 carries the id so that `bd-a1b2` in a prompt finds its issue.
    text_lines = [f"{issue_id} {issue.get('title', '')}".strip(), *issue_text(issue)]
    date: datetime | None = parse_date(issue.get("updated_at") or issue.get("created_at"))
    labels = [str(label) for label in issue.get("labels") or [] if isinstance(label, str)]
    priority = issue.get("priority")
    return Document(
        "beads",
        issue_id,
        path,
        title=str(issue.get("title", "")).strip(),
        date=date,
        date_source="issue" if date else "",
        tags=labels,
        status=str(issue.get("status") or "open"),
        close_reason=" ".join(str(issue.get("close_reason") or "").split())
        if issue.get("status") == "closed"
        else "",
        priority=priority if isinstance(priority, int) and not isinstance(priority, bool) else None,
        source_line=source_line,
        lines={i + 1: line for i, line in enumerate(text_lines)},
        heading_text=" ".join([issue_id, str(issue.get("title", "")), *labels]).casefold(),
        loaded=True,
    )


class BeadsStore:
    name = "beads"

    def __init__(self, locations: list[Path]) -> None:
        self.files: list[Path] = []
        self.warnings: list[str] = []
        for location in locations:
            for found in resolve_files(location, self.warnings):
                if found not in self.files:
                    self.files.append(found)
        self._counts: dict[Path, int] = {}

    def jobs(self) -> list[GrepJob]:
        return [GrepJob(self.files)] if self.files else []

    def documents(self, lines: dict[Path, list[tuple[int, str]]]) -> Iterable[Document]:
        for path, found in lines.items():
            # grep reports matches; the issue is the whole JSON line they are on.
            raw_lines = read_lines(path, sorted({number for number, _ in found}))
            for number, raw in sorted(raw_lines.items()):
                try:
                    issue = issue_from_record(json.loads(raw))
                except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
                    continue  # a line truncated mid-JSON is skipped, not fatal
                if issue is None:
                    continue
                yield issue_document(path, issue, number)

    def load(self, doc: Document) -> bool:
        return True

    def root_of(self, path: Path) -> str:
        return str(path)  # the export file itself is the root

    def doc_count(self) -> int:
        total = 0
        for path in self.files:
            if path not in self._counts:
                try:
                    with open(path, "rb") as handle:
                        self._counts[path] = sum(
                            chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b"")
                        )
                except OSError:
                    self._counts[path] = 0
            total += self._counts[path]
        return total
