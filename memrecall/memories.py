"""Memories Claude pulls and writes on request: `memrecall show` and `memrecall save`.

show: a ref as `search --json` gives it (a vault note, a summary, a beads id), or a file inside
a configured store, rendered compressed (headings and the lines that matter) or whole. Nothing
outside the configured stores is ever read, and what is shown is redacted and inert.

save: a markdown note becomes `<memories>/<project>/<YYYY-MM-DD>-<slug>.md` with frontmatter
made for later search (title, date, project, tags, a one-line summary). Secrets are redacted
the way summarize redacts, a near-duplicate is refused (with the ref to `--append` to), files
are created atomically and never replace one, and the index is refreshed so the very next
prompt can recall the note.

Library only: nothing here prints.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO, Iterator

from . import textcut
from .config import Settings
from .errors import MemrecallError, UsageError

# A memory is a note, not a log: past this it is refused before it is read any further.
MAX_NOTE_BYTES = 1_000_000
# Notes are shown (and compared) by their first part only, as the index reads them.
SHOW_MAX_BYTES = 2 << 20
# `fuzz.ratio` of two memories' texts at or above this: the same memory written twice.
SIMILAR_PERCENT = 85.0
# Texts are compared by their first part: enough to tell two memories apart, and it keeps
# the check a few milliseconds per note whatever their length.
SIMILARITY_CHARS = 4000
TITLE_MAX_CHARS = 120
SUMMARY_MAX_CHARS = 160
SLUG_MAX_CHARS = 60
# File names are at most 255 bytes; a Japanese character takes 3, and the date and a
# `-N` suffix need room too.
SLUG_MAX_BYTES = 150
MEMORY_TAG = "memory"
SOURCE = "memrecall-save"
# Keys of a piped note's frontmatter that ours replace (or that would say it twice).
_REPLACED_KEYS = {"source", "tag", "description", "alias"}
# An outline shows a short note whole, and at most this many lines of a long one.
SHORT_NOTE_LINES = 15
OUTLINE_MAX_LINES = 150
OUTLINE_LINE_CHARS = 240
BEADS_FIELD_LINES = 12
MAX_LINKS = 40

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"(!?)\[\[([^\[\]|#^\n]*)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# Ticket ids (`PAY-1234`) and beads ids (`bd-a1b2`, `shop-x9z.1`): lines naming one matter.
_ID = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Z][A-Z0-9]{1,9}-\d+|[a-z][a-z0-9]{0,15}-(?=[a-z]*\d)[0-9a-z]{3,8}(?:\.\d+)*)"
    r"(?![A-Za-z0-9_])"
)
_ATTACHMENTS = {
    ".png",
    ".jpg",
    ".jpeg",
    ".gif",
    ".svg",
    ".webp",
    ".bmp",
    ".pdf",
    ".mp3",
    ".mp4",
    ".webm",
    ".mov",
    ".wav",
    ".ogg",
    ".canvas",
    ".base",
    ".excalidraw",
    ".zip",
}
_SENTENCE = re.compile(r"^(.+?(?:[。．！？]|[.!?](?=\s|$)))")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+>]\s+|\d+[.)]\s+|\[[ xX]\]\s+)+")
# Windows refuses these names whatever the extension.
_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    *(f"com{n}" for n in range(10)),
    *(f"lpt{n}" for n in range(10)),
}
_BEADS_FIELDS = (
    ("description", "Description"),
    ("design", "Design"),
    ("acceptance_criteria", "Acceptance criteria"),
    ("notes", "Notes"),
)
# Shown in the header or a section of their own; every other field goes under "Other fields".
_BEADS_SHOWN = {
    "id",
    "issue_id",
    "title",
    "status",
    "priority",
    "issue_type",
    "labels",
    "assignee",
    "owner",
    "created_at",
    "updated_at",
    "closed_at",
    "close_reason",
    "dependencies",
    "comments",
    *(name for name, _ in _BEADS_FIELDS),
}


class MemoryNotFound(MemrecallError):
    """No memory answers to the ref."""


class RefRefused(MemrecallError):
    """The ref points outside every configured store, or at a file search never reads."""

    exit_code = 2


class NoteRejected(UsageError):
    """What was piped in cannot be a memory note (empty, binary, too big)."""


class SimilarMemory(MemrecallError):
    """A memory with the same title or nearly the same text exists already."""

    def __init__(self, ref: str, percent: float | None) -> None:
        how = "same title" if percent is None else f"{percent:.0f}% similar"
        super().__init__(
            f"similar memory exists: {ref} ({how}); use --append {ref} to extend it"
            " or --force to save anyway"
        )
        self.ref = ref
        self.percent = percent


# --- where a memory lives ---------------------------------------------------------------------


@dataclass
class _Root:
    store: str  # obsidian | summaries
    path: Path
    label: str  # what the refs of its notes start with ("" for none)


def _markdown_roots(settings: Settings) -> list[_Root]:
    roots = [_Root("obsidian", path, label) for path, label in settings.vaults()]
    roots.append(_Root("summaries", settings.summaries, ""))
    return roots


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _relative_parts(path: Path, root: Path) -> tuple[str, ...] | None:
    """`path` (symlinks resolved) relative to `root`, or None when it lies outside."""
    real, base = _real(path), _real(root)
    if not _within(real, base):
        return None
    return Path(os.path.relpath(real, base)).parts if real != base else ()


def _searched(parts: tuple[str, ...]) -> bool:
    """A file search reads: markdown, outside dot-folders (.obsidian, .trash, .git)."""
    return bool(parts) and parts[-1].endswith(".md") and not any(p.startswith(".") for p in parts)


def ref_for(path: Path, settings: Settings) -> str:
    """The ref `search` gives the note at `path` (what `show` and `save --append` take)."""
    for root in _markdown_roots(settings):
        parts = _relative_parts(path, root.path)
        if parts:
            rel = "/".join(parts)
            return f"{root.label}/{rel}" if root.label else rel
    return str(path)


@dataclass
class Memory:
    store: str  # obsidian | summaries | beads
    ref: str
    path: Path
    root: Path | None = None  # markdown: the store folder the note lives in
    text: str = ""  # markdown: the file's text (its first SHOW_MAX_BYTES)
    cut: bool = False  # the file is longer than what was read
    issue: dict[str, Any] | None = None
    # beads: the issues this one depends on, and those that depend on it (id, title, status, type)
    depends: list[tuple[str, str, str, str]] = field(default_factory=list)
    dependents: list[tuple[str, str, str, str]] = field(default_factory=list)


def locate(ref: str, settings: Settings, cwd: Path | None = None) -> Memory:
    """The memory a ref names: a beads id, a store-relative ref (vault-label-prefixed when
    several vaults), or a path to a file inside a configured store."""
    text = ref.strip()
    if not text or "\0" in text:
        raise _not_found(ref)
    if _looks_like_id(text):
        found = _find_issue(text, settings)
        if found is not None:
            return found
    refused = ""
    for root in _markdown_roots(settings):
        rel = text
        if root.label:
            if not text.startswith(root.label + "/"):
                continue
            rel = text[len(root.label) + 1 :]
        if not rel or os.path.isabs(rel) or rel.startswith("~"):
            continue
        candidate = root.path / rel
        memory, why = _markdown_at(candidate, root, settings)
        if memory is not None:
            return memory
        refused = refused or why
    path = Path(os.path.expanduser(text))
    typed_absolute = path.is_absolute()
    if not typed_absolute:
        path = (cwd or Path.cwd()) / path
    roots = _markdown_roots(settings)
    owner = next((r for r in roots if _relative_parts(path, r.path) is not None), None)
    if owner is not None:
        memory, why = _markdown_at(path, owner, settings)
        if memory is not None:
            return memory
        refused = refused or why
    elif typed_absolute or os.path.lexists(path):
        refused = refused or "outside"
    if refused == "outside":
        raise RefRefused(f"refused: {_shown(ref)} is outside every configured memory store")
    if refused == "not-searched":
        raise RefRefused(
            f"refused: {_shown(ref)} is not a note memrecall searches"
            " (markdown outside dot-folders)"
        )
    raise _not_found(ref)


def _not_found(ref: str, where: str = "") -> MemoryNotFound:
    hint = "try memrecall search 'words' to find its ref"
    return MemoryNotFound(f"no memory {_shown(ref)}{where} ({hint})")


def _shown(ref: str) -> str:
    from .redact import redact_fast
    from .sanitize import clean

    return clean(redact_fast(ref))[:200] or "''"


def _markdown_at(candidate: Path, root: _Root, settings: Settings) -> tuple[Memory | None, str]:
    """The note at `candidate`, or None and why not: "" (no such file), "outside" (the path,
    symlinks resolved, leaves the store), "not-searched" (not a note search reads)."""
    parts = _relative_parts(candidate, root.path)
    if parts is None:
        return None, "outside"
    if not os.path.lexists(candidate):
        return None, ""
    if not _searched(parts):
        return None, "not-searched"
    real = Path(_real(candidate))
    try:
        st = os.stat(real)
    except OSError:
        return None, ""
    if not stat.S_ISREG(st.st_mode):  # a FIFO named x.md would block the read
        return None, "not-searched"
    try:
        with open(real, "rb") as handle:
            data = handle.read(SHOW_MAX_BYTES + 1)
    except OSError:
        return None, ""
    rel = "/".join(parts)
    ref = f"{root.label}/{rel}" if root.label else rel
    return Memory(
        root.store,
        ref,
        real,
        root=Path(_real(root.path)),
        text=data[:SHOW_MAX_BYTES].decode("utf-8", errors="replace"),
        cut=len(data) > SHOW_MAX_BYTES,
    ), ""


def _looks_like_id(text: str) -> bool:
    return "/" not in text and "\\" not in text and not text.endswith(".md") and "-" in text


def _find_issue(ref: str, settings: Settings) -> Memory | None:
    """The issue with this id in the configured exports (its latest line when an export lists
    it twice), with the issues it depends on and those depending on it."""
    import json

    from .stores.beads import issue_from_record, resolve_files

    wanted = ref.casefold()
    needle = ref.encode("utf-8").lower()
    for location in settings.beads:
        for export in resolve_files(location):
            issue: dict[str, Any] | None = None
            dependents: list[tuple[str, str, str, str]] = []
            for raw in _lines_holding(export, [needle]):
                try:
                    record = issue_from_record(json.loads(raw))
                except (ValueError, RecursionError):
                    continue
                if record is None:
                    continue
                own = str(record.get("id") or record.get("issue_id"))
                if own.casefold() == wanted:
                    issue = record
                    continue
                for dep in _dependencies(record):
                    if str(dep.get("depends_on_id", "")).casefold() == wanted:
                        title = str(record.get("title", ""))
                        status, kind = str(record.get("status") or ""), str(dep.get("type") or "")
                        dependents.append((own, title, status, kind))
            if issue is None:
                continue
            own_id = str(issue.get("id") or issue.get("issue_id"))
            memory = Memory("beads", own_id, export, issue=issue, dependents=dependents)
            deps = _dependencies(issue)
            targets = [(str(d.get("depends_on_id", "")), str(d.get("type") or "")) for d in deps]
            targets = [(t, kind) for t, kind in targets if t and t.casefold() != wanted]
            known = _issue_titles(export, [t for t, _ in targets])
            memory.depends = [(t, *known.get(t, ("", "")), kind) for t, kind in targets]
            return memory
    return None


def _dependencies(record: dict[str, Any]) -> list[dict[str, Any]]:
    deps = record.get("dependencies")
    return [d for d in deps if isinstance(d, dict)] if isinstance(deps, list) else []


def _lines_holding(path: Path, needles: list[bytes]) -> Iterator[bytes]:
    """The lines of an export holding one of `needles` (case-folded): an export can hold
    thousands of issues, and only these few are worth parsing."""
    try:
        with open(path, "rb") as handle:
            for raw in handle:
                folded = raw.lower()
                if any(n in folded for n in needles):
                    yield raw
    except OSError:
        return


def _issue_titles(export: Path, ids: list[str]) -> dict[str, tuple[str, str]]:
    import json

    from .stores.beads import issue_from_record

    if not ids:
        return {}
    found: dict[str, tuple[str, str]] = {}
    for raw in _lines_holding(export, [i.encode("utf-8").lower() for i in ids]):
        try:
            record = issue_from_record(json.loads(raw))
        except (ValueError, RecursionError):
            continue
        if record is not None and str(record.get("id") or record.get("issue_id")) in ids:
            found[str(record.get("id") or record.get("issue_id"))] = (
                str(record.get("title", "")),
                str(record.get("status") or ""),
            )
    return found


# --- reading a memory ---------------------------------------------------------------------------


@dataclass
class Shown:
    """A memory as `show` prints it: every field redacted and free of control characters."""

    store: str
    ref: str
    path: str
    title: str
    date: str | None
    summary: str
    tags: list[str]
    mode: str  # outline | full
    text: str
    links: list[tuple[str, str | None]] = field(default_factory=list)  # [[target]] → ref or None
    status: str | None = None
    priority: int | None = None

    def render(self) -> str:
        where = (self.store, (self.date or "")[:10], self.ref)
        lines = [self.title, " · ".join(p for p in where if p)]
        lines.append(f"path: {self.path}")
        if self.summary:
            lines.append(f"summary: {self.summary}")
        if self.tags:
            lines.append("tags: " + ", ".join(self.tags))
        lines += ["", self.text.rstrip("\n")]
        if self.links:
            lines += ["", "Links:"]
            lines += [f"- [[{target}]] → {ref or '(no such note)'}" for target, ref in self.links]
        return "\n".join(lines).rstrip("\n") + "\n"

    def as_json(self) -> dict[str, Any]:
        return {
            "store": self.store,
            "ref": self.ref,
            "path": self.path,
            "title": self.title,
            "date": self.date,
            "summary": self.summary,
            "tags": self.tags,
            "status": self.status,
            "priority": self.priority,
            "mode": self.mode,
            "text": self.text,
            "links": [{"target": target, "ref": ref} for target, ref in self.links],
        }


def show(memory: Memory, settings: Settings, full: bool = False, query: str | None = None) -> Shown:
    if memory.issue is not None:
        shown = _show_issue(memory, full)
    else:
        shown = _show_note(memory, settings, full, query)
    return _inert(shown)


def _inert(shown: Shown) -> Shown:
    """Secrets redacted as search redacts them, then no escape, control or bidi character."""
    from .redact import redact_fast
    from .sanitize import clean

    def one(text: str) -> str:
        return clean(redact_fast(text))

    shown.ref, shown.path = one(shown.ref), one(shown.path)
    shown.title, shown.summary = one(shown.title), one(shown.summary)
    shown.tags = [one(t) for t in shown.tags if one(t)]
    shown.text = clean(redact_fast(shown.text), one_line=False)
    shown.links = [(one(target), one(ref) if ref else None) for target, ref in shown.links]
    return shown


def _note_meta(memory: Memory) -> tuple[Any, dict[str, Any], str]:
    from . import frontmatter_lite
    from .stores.base import Document
    from .stores.markdown import fill_note

    doc = Document(memory.store, memory.ref, memory.path)
    body = fill_note(doc, memory.text)
    front, _, _ = frontmatter_lite.split(memory.text)
    meta = frontmatter_lite.parse(front) if front else {}
    return doc, meta, body


def _one_line(value: Any, limit: int | None = None) -> str:
    if isinstance(value, (list, tuple)):
        value = " ".join(str(v) for v in value)
    return textcut.one_line(str(value or ""), limit)


def summary_line(path: Path) -> str:
    """A note's own one-line summary: its frontmatter `summary` or `description` ("" when it
    has none, or cannot be read). `search --json` shows it beside each hit."""
    from . import frontmatter_lite
    from .stores.base import read_head

    front, _, _ = frontmatter_lite.split(read_head(path))
    if not front:
        return ""
    meta = frontmatter_lite.parse(front)
    return _one_line(meta.get("summary") or meta.get("description"), 300)


def _show_note(memory: Memory, settings: Settings, full: bool, query: str | None) -> Shown:
    doc, meta, body = _note_meta(memory)
    date = doc.date
    if date is None:
        try:
            date = datetime.fromtimestamp(memory.path.stat().st_mtime, timezone.utc)
        except OSError:
            date = None
    if full:
        text = memory.text
        if memory.cut:
            text += f"\n… (cut at {SHOW_MAX_BYTES >> 20} MB)\n"
    else:
        keys = _query_keys(query, settings) if query else []
        text = _outline(body, keys)
        if memory.cut:
            text += f"\n… (only the first {SHOW_MAX_BYTES >> 20} MB was read)"
    return Shown(
        store=memory.store,
        ref=memory.ref,
        path=str(memory.path),
        title=doc.title,
        date=date.astimezone().isoformat(timespec="seconds") if date else None,
        summary=_one_line(meta.get("summary") or meta.get("description"), 300),
        tags=list(doc.tags),
        mode="full" if full else "outline",
        text=text,
        links=_links(body, memory, settings),
    )


def _query_keys(query: str, settings: Settings) -> list[str]:
    from .tokenize import tokenize_text

    keywords, _ = tokenize_text(query, settings.tokenizer, settings)
    return [k.key for k in keywords if k.key.strip()]


def _outline(body: str, keys: list[str]) -> str:
    """Every heading, plus the lines that matter: those holding a query keyword, or (without
    a query) the first line under each heading and the lines stating an outcome or naming an
    id. A gap is one `…`; a short note is shown whole."""
    from .search import _MARKUP_ONLY, _TELLING

    lines = body.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if sum(1 for line in lines if line.strip()) <= SHORT_NOTE_LINES and not keys:
        return "\n".join(line.rstrip() for line in lines).strip("\n")
    keep: list[int] = []
    in_code = False
    first_pending = True
    for number, line in enumerate(lines):
        stripped = line.strip()
        folded = stripped.casefold()
        matches = bool(keys) and any(k in folded for k in keys)
        if _FENCE.match(line):
            in_code = not in_code
            if matches:
                keep.append(number)
            continue
        if in_code:
            if matches:
                keep.append(number)
            continue
        if _HEADING.match(line):
            keep.append(number)
            first_pending = True
            continue
        if not stripped or _MARKUP_ONLY.match(stripped):
            continue
        if keys:
            if matches:
                keep.append(number)
        elif first_pending or _TELLING.search(stripped) or _ID.search(stripped):
            keep.append(number)
        first_pending = False
    out: list[str] = []
    previous = -1
    for number in keep:
        if any(lines[n].strip() for n in range(previous + 1, number)):
            out.append("…")
        out.append(textcut.cut(lines[number].rstrip(), OUTLINE_LINE_CHARS))
        previous = number
        if len(out) >= OUTLINE_MAX_LINES:
            break
    rest = sum(1 for n in range(previous + 1, len(lines)) if lines[n].strip())
    if rest:
        full = len(out) >= OUTLINE_MAX_LINES
        out.append(f"… ({rest} more lines: --full shows them)" if full else "…")
    return "\n".join(out)


def _links(body: str, memory: Memory, settings: Settings) -> list[tuple[str, str | None]]:
    """`[[wikilinks]]` of a note and the ref each resolves to, the way Obsidian resolves them:
    a path from the vault's root, else the note of that name nearest to this one."""
    targets: list[str] = []
    in_code = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            continue
        for embed, target in _LINK.findall(line):
            target = target.strip()
            name = target.removesuffix(".md")
            if embed or not name or Path(name).suffix.casefold() in _ATTACHMENTS:
                continue  # an embedded image or an attachment, not a note
            if name not in targets:
                targets.append(name)
            if len(targets) >= MAX_LINKS:
                break
    if not targets:
        return []
    roots = [r for r in _markdown_roots(settings) if r.store == "obsidian"]
    own = next((r for r in roots if _real(r.path) == str(memory.root)), None)
    if own is not None:
        roots = [own] + [r for r in roots if r is not own]
    by_name: dict[str, dict[str, Path]] | None = None
    resolved: list[tuple[str, str | None]] = []
    for name in targets:
        found: Path | None = None
        for root in roots:
            direct = root.path / f"{name}.md"
            parts = _relative_parts(direct, root.path)
            if parts and _searched(parts) and direct.is_file():
                found = direct
                break
        if found is None and "/" not in name:
            if by_name is None:
                by_name = _notes_by_name(roots)
            for root in roots:
                candidates = by_name.get(str(root.path), {})
                if name.casefold() in candidates:
                    found = candidates[name.casefold()]
                    break
        resolved.append((name, ref_for(found, settings) if found is not None else None))
    return resolved


def _notes_by_name(roots: list[_Root]) -> dict[str, dict[str, Path]]:
    """Per vault: note name (case-folded, no `.md`) → its path, shallowest path first."""
    from .walk import walk_files

    found: dict[str, dict[str, Path]] = {}
    for root in roots:
        names: dict[str, Path] = {}
        for path, _ in sorted(walk_files(root.path), key=lambda item: len(item[0].parts)):
            names.setdefault(path.stem.casefold(), path)
        found[str(root.path)] = names
    return found


def _show_issue(memory: Memory, full: bool) -> Shown:
    from .stores.base import parse_date

    issue = memory.issue or {}
    title = str(issue.get("title", "")).strip()
    status = str(issue.get("status") or "open")
    priority = issue.get("priority")
    priority = priority if isinstance(priority, int) and not isinstance(priority, bool) else None
    labels = [str(x) for x in issue.get("labels") or [] if isinstance(x, (str, int))]
    updated = parse_date(issue.get("updated_at") or issue.get("created_at"))
    facts = [f"status: {status}"]
    if priority is not None:
        facts.append(f"priority: P{priority}")
    for key, name in (("issue_type", "type"), ("assignee", "assignee"), ("owner", "owner")):
        if issue.get(key):
            facts.append(f"{name}: {_one_line(issue[key])}")
    lines = [" · ".join(facts)]
    if labels:
        lines.append("labels: " + ", ".join(labels))
    moments = (("created_at", "created"), ("updated_at", "updated"), ("closed_at", "closed"))
    dates = [f"{name}: {_day(issue.get(key))}" for key, name in moments if issue.get(key)]
    if dates:
        lines.append(" · ".join(dates))
    for key, name in _BEADS_FIELDS:
        value = issue.get(key)
        if isinstance(value, str) and value.strip():
            lines += ["", f"## {name}", _field_text(value, full)]
    reason = issue.get("close_reason")
    if isinstance(reason, str) and reason.strip():
        lines += ["", "## Close reason", _field_text(reason, full)]
    if memory.depends:
        lines += ["", "## Depends on"]
        lines += [_dep_line(d) for d in memory.depends]
    if memory.dependents:
        lines += ["", "## Dependents"]
        lines += [_dep_line(d) for d in memory.dependents]
    comments = [
        c
        for c in issue.get("comments") or []
        if isinstance(c, dict) and isinstance(c.get("text"), str)
    ]
    if comments:
        shown = comments if full else comments[-3:]
        which = "" if full or len(comments) <= 3 else ", the last 3"
        lines += ["", f"## Comments ({len(comments)}){which}"]
        for comment in shown:
            who = _one_line(comment.get("author") or comment.get("created_by") or "")
            head = " ".join(p for p in (who, _day(comment.get("created_at"))) if p)
            text = _field_text(comment["text"], full, one_line=not full)
            lines.append(f"- {head}: {text}" if head else f"- {text}")
    if full:
        other = {
            k: v for k, v in issue.items() if k not in _BEADS_SHOWN and v not in (None, "", [], {})
        }
        if other:
            lines += ["", "## Other fields"]
            lines += [
                f"- {k}: {_compact(v) if isinstance(v, dict) else _one_line(v)}"
                for k, v in other.items()
            ]
    return Shown(
        store="beads",
        ref=memory.ref,
        path=str(memory.path),
        title=f"{memory.ref} · {title}",
        date=updated.isoformat(timespec="seconds") if updated else None,
        summary="",
        tags=labels,
        mode="full" if full else "outline",
        text="\n".join(lines),
        status=status,
        priority=priority,
    )


def _compact(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)[:500]


def _day(value: Any) -> str:
    from .stores.base import parse_date

    moment = parse_date(value)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M") if moment else _one_line(value)


def _field_text(value: str, full: bool, one_line: bool = False) -> str:
    if one_line:
        return _one_line(value, 300)
    lines = [line.rstrip() for line in value.strip("\n").split("\n")]
    if full or len(lines) <= BEADS_FIELD_LINES:
        return "\n".join(lines)
    more = len(lines) - BEADS_FIELD_LINES
    return "\n".join(lines[:BEADS_FIELD_LINES] + [f"… ({more} more lines: --full)"])


def _dep_line(dep: tuple[str, str, str, str]) -> str:
    other, title, status, kind = dep
    extra = " · ".join(p for p in (title, status) if p)
    return f"- {other}" + (f" ({kind})" if kind else "") + (f": {extra}" if extra else "")


# --- saving a memory ------------------------------------------------------------------------------


@dataclass
class SaveRequest:
    body: str
    title: str | None = None
    tags: list[str] = field(default_factory=list)
    project: str | None = None
    summary: str | None = None
    aliases: list[str] = field(default_factory=list)
    append: str | None = None
    force: bool = False
    cwd: Path | None = None


@dataclass
class SaveResult:
    path: Path
    ref: str
    title: str
    tags: list[str]
    redacted: int
    appended: bool
    # `<private>` spans dropped before anything was written.
    private_removed: bool = False
    # Why the index was not refreshed ("" when it was, or when there is none to refresh).
    index_note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "ref": self.ref,
            "title": self.title,
            "tags": self.tags,
            "redacted": self.redacted,
            "appended": self.appended,
        }


def read_note(stream: BinaryIO, limit: int = MAX_NOTE_BYTES) -> str:
    """The note piped in, as text; a note too big is refused after reading one byte past the
    limit, never read whole."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise NoteRejected(f"the note is over {limit // 1_000_000} MB; save a shorter note")
    if b"\0" in data:
        raise NoteRejected("the note is binary (it holds NUL bytes); pipe markdown text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NoteRejected(
            f"the note is not UTF-8 text (invalid byte at offset {exc.start})"
        ) from None
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise NoteRejected("nothing to save: the note is empty")
    return text


class _Redactor:
    """summarize's redaction (memrecall's rules plus detect-secrets), counting what it did."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, text: str) -> str:
        from .redact import redact

        cleaned, found = redact(text)
        self.count += found
        return cleaned


def save(request: SaveRequest, settings: Settings) -> SaveResult:
    from .atomic import LockTimeout, locked
    from .redact import has_private, strip_private

    front, body = _split_input(request.body)
    private = has_private(body)
    if private:
        body = strip_private(body)
    if not body.strip():
        raise NoteRejected("nothing to save: the note is empty")
    redact = _Redactor()
    body = redact(body.strip("\n")) + "\n"
    # Saves are serialised: two saves of one memory at once must see each other.
    try:
        with locked(settings.state_dir / "memories-save", timeout=30):
            if request.append:
                result = _append(request, settings, body, redact)
            else:
                result = _create(request, settings, front, body, redact)
    except LockTimeout:
        raise MemrecallError("another memrecall save is still writing; try again") from None
    result.private_removed = private
    result.index_note = _refresh_index(settings)
    return result


def _split_input(text: str) -> tuple[dict[str, Any], str]:
    """A note piped in with frontmatter of its own: its fields are defaults for ours."""
    from . import frontmatter_lite

    front, body, _ = frontmatter_lite.split(text)
    if front is None:
        return {}, text
    meta = frontmatter_lite.parse(front)
    return (meta if isinstance(meta, dict) else {}), body


def _create(
    request: SaveRequest,
    settings: Settings,
    front: dict[str, Any],
    body: str,
    redact: _Redactor,
) -> SaveResult:
    from .sanitize import clean

    def field_text(value: Any) -> str:
        return clean(redact(_one_line(value)))

    explicit_title = request.title or front.get("title")
    title = field_text(explicit_title) if explicit_title else _title_from(body)
    title = textcut.cut(title.lstrip("#").strip(), TITLE_MAX_CHARS) or "memory"
    summary_source = request.summary or front.get("summary") or front.get("description")
    if summary_source:
        summary = textcut.cut(field_text(summary_source), SUMMARY_MAX_CHARS)
    else:
        summary = _first_sentence(body)
    from .frontmatter_lite import as_list

    tags = _tags([*as_list(front.get("tags", front.get("tag"))), *request.tags], redact)
    aliases = [field_text(a) for a in [*as_list(front.get("aliases")), *request.aliases]]
    aliases = [a for a in aliases if a]
    project_source = (
        request.project or front.get("project") or _project_of(request.cwd or Path.cwd())
    )
    project = _safe_name(field_text(project_source), lower=False) or "general"
    if explicit_title and not _HEADING.match(body.lstrip("\n").split("\n", 1)[0]):
        body = f"# {title}\n\n{body.lstrip(chr(10))}"
    memories = settings.memories_dir
    if not request.force:
        _refuse_duplicate(title, body, memories, project, settings)
    now = settings.now.astimezone()
    meta: dict[str, Any] = {
        "title": title,
        "date": now.isoformat(timespec="seconds"),
        "project": project,
        "tags": tags,
        "summary": summary,
    }
    if aliases:
        meta["aliases"] = aliases
    for key, value in front.items():
        if isinstance(key, str) and key not in meta and key not in _REPLACED_KEYS:
            meta[key] = _clean_value(value, redact)
    meta["source"] = SOURCE
    text = _render(meta, body)
    folder = memories / project
    path = _write_new(folder, f"{now:%Y-%m-%d}-{_slug(title)}", text, memories)
    return SaveResult(path, ref_for(path, settings), title, tags, redact.count, appended=False)


def _render(meta: dict[str, Any], body: str) -> str:
    import yaml

    front = yaml.safe_dump(
        meta, allow_unicode=True, sort_keys=False, default_flow_style=False, width=1_000_000
    )
    return f"---\n{front}---\n\n{body.strip(chr(10))}\n"


def _clean_value(value: Any, redact: _Redactor) -> Any:
    """A field of the piped note's own frontmatter, kept, with its text redacted."""
    from .sanitize import clean

    if isinstance(value, str):
        return clean(redact(value))
    if isinstance(value, (list, tuple)):
        return [_clean_value(v, redact) for v in value]
    if isinstance(value, dict):
        return {str(k): _clean_value(v, redact) for k, v in value.items()}
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return clean(redact(str(value)))


def _title_from(body: str) -> str:
    from .sanitize import clean

    first = ""
    for line in body.split("\n"):
        heading = _HEADING.match(line)
        if heading and len(heading.group(1)) == 1 and heading.group(2).strip():
            return clean(heading.group(2))
        if not first and line.strip() and not _FENCE.match(line):
            first = clean(_LIST_MARKER.sub("", line.lstrip("#").strip()))
    return first


def _first_sentence(body: str) -> str:
    """The body's first sentence of prose: what the note says, in one line."""
    from .sanitize import clean
    from .search import _MARKUP_ONLY

    in_code = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        stripped = line.strip()
        if in_code or not stripped or _HEADING.match(line) or _MARKUP_ONLY.match(stripped):
            continue
        if stripped.startswith("|"):
            continue  # a table row
        text = clean(_LIST_MARKER.sub("", stripped))
        sentence = _SENTENCE.match(text)
        return textcut.cut(sentence.group(1) if sentence else text, SUMMARY_MAX_CHARS)
    return textcut.cut(clean(_title_from(body)), SUMMARY_MAX_CHARS)


def _tags(raw: list[str], redact: _Redactor) -> list[str]:
    """Obsidian tags: no spaces, only letters, digits, `_`, `-`, `/`, never only digits;
    `memory` always among them."""
    tags: list[str] = []
    for item in raw:
        for piece in re.split(r"[,、\s]+", redact(str(item))):
            tag = re.sub(r"[^\w/-]+", "-", piece.strip().lstrip("#")).strip("-/")
            if tag and not tag.isdigit() and tag.casefold() not in (t.casefold() for t in tags):
                tags.append(tag)
    if MEMORY_TAG not in (t.casefold() for t in tags):
        tags.append(MEMORY_TAG)
    return tags


def _project_of(cwd: Path) -> str:
    """The folder name of the git work tree holding `cwd` (or of `cwd` itself)."""
    here = cwd.resolve() if cwd.exists() else cwd
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder.name
    return here.name


def _safe_name(text: str, lower: bool = True) -> str:
    """A file or folder name from any text: letters and digits of every script kept,
    anything a file system or a shell could read as structure gone (a title that is a path
    becomes a plain name, never a path)."""
    import unicodedata

    # NFKC: half-width katakana and full-width letters become their usual forms.
    name = unicodedata.normalize("NFKC", text)
    name = name.lower() if lower else name
    name = re.sub(r"[^\w]+", "-", name).strip("-_")
    chars = name[:SLUG_MAX_CHARS]
    while len(chars.encode("utf-8")) > SLUG_MAX_BYTES:
        chars = chars[:-1]
    chars = chars.strip("-_")
    if chars.casefold() in _RESERVED:
        chars += "-note"
    return chars


def _slug(title: str) -> str:
    return _safe_name(title) or "memory"


def _write_new(folder: Path, stem: str, text: str, memories: Path) -> Path:
    """Create `<stem>.md` (else `<stem>-2.md`, `-3`, …) atomically, never replacing a file;
    on failure nothing is left behind: no temp file, no folder made for it."""
    from .atomic import numbered, write_atomic

    made = _missing_folders(folder, memories)
    try:
        for path in numbered(folder / f"{stem}.md", first=2, sep="-"):
            try:
                write_atomic(path, text, exclusive=True)
            except FileExistsError:
                continue
            return path
        raise MemrecallError(f"too many memories named {stem} in {folder}")
    except OSError as exc:
        _remove_folders(made)
        raise MemrecallError(f"cannot write in {folder}: {exc.strerror or exc}") from None
    except BaseException:
        _remove_folders(made)
        raise


def _missing_folders(folder: Path, top: Path) -> list[Path]:
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            break
        missing.append(candidate)
        if candidate == top:
            break
    return missing


def _remove_folders(folders: list[Path]) -> None:
    for folder in folders:  # deepest first
        try:
            folder.rmdir()
        except OSError:
            break


def _refuse_duplicate(
    title: str,
    body: str,
    memories: Path,
    project: str,
    settings: Settings,
) -> None:
    """Same title anywhere among the memories, or nearly the same text in the project's."""
    if not memories.is_dir():
        return
    from .search import similarity
    from .stores.base import Document, read_head
    from .stores.markdown import fill_note
    from .walk import walk_files

    wanted = " ".join(title.split()).casefold()
    mine = _comparable(body)
    project_folder = _real(memories / project)
    best: tuple[float, Path] | None = None
    for path, _ in sorted(walk_files(memories)):
        doc = Document("obsidian", "", path)
        other_body = fill_note(doc, read_head(path, 64 * 1024))
        if " ".join(doc.title.split()).casefold() == wanted:
            raise SimilarMemory(ref_for(path, settings), None)
        if not _within(_real(path), project_folder):
            continue
        theirs = _comparable(other_body)
        at_most = 200 * min(len(mine), len(theirs)) / (len(mine) + len(theirs) or 1)
        if not theirs or at_most < SIMILAR_PERCENT:
            continue  # lengths alone rule it out
        percent = similarity(mine, theirs)
        if percent >= SIMILAR_PERCENT and (best is None or percent > best[0]):
            best = (percent, path)
    if best is not None:
        raise SimilarMemory(ref_for(best[1], settings), best[0])


def _comparable(body: str) -> str:
    return " ".join(body.split()).casefold()[:SIMILARITY_CHARS]


def _append(request: SaveRequest, settings: Settings, body: str, redact: _Redactor) -> SaveResult:
    """The body under a dated heading at the end of a memory `save` wrote; the user's own
    vault notes are never touched."""
    from .atomic import write_atomic

    target = _appendable(request.append or "", settings)
    try:
        with open(target, "rb") as handle:
            old = handle.read(MAX_NOTE_BYTES * 4 + 1)
    except OSError as exc:
        raise MemrecallError(f"cannot read {target}: {exc.strerror or exc}") from None
    if len(old) > MAX_NOTE_BYTES * 4:
        size = MAX_NOTE_BYTES * 4 // 1_000_000
        raise MemrecallError(
            f"{ref_for(target, settings)} is over {size} MB; save a new memory instead"
        )
    text = old.decode("utf-8", errors="replace")
    day = settings.now.astimezone().strftime("%Y-%m-%d")
    new = f"{text.rstrip()}\n\n## {day}\n\n{body.strip(chr(10))}\n"
    try:
        write_atomic(target, new)
    except OSError as exc:
        raise MemrecallError(f"cannot write {target}: {exc.strerror or exc}") from None
    from .stores.base import Document
    from .stores.markdown import fill_note

    doc = Document("obsidian", "", target)
    fill_note(doc, new)
    ref = ref_for(target, settings)
    return SaveResult(target, ref, doc.title, list(doc.tags), redact.count, appended=True)


def _appendable(ref: str, settings: Settings) -> Path:
    """The saved memory a ref names (its search ref, a path relative to the memories folder,
    or a file path); any other memory, or anything outside, is refused."""
    memories = settings.memories_dir
    text = ref.strip()
    if text and not os.path.isabs(os.path.expanduser(text)):
        memory, _ = _markdown_at(memories / text, _Root("obsidian", memories, ""), settings)
        if memory is not None:
            return memory.path
    try:
        memory = locate(text, settings)
    except MemoryNotFound:
        raise _not_found(ref, f" in {memories}") from None
    if memory.issue is not None or not _within(str(memory.path), _real(memories)):
        raise RefRefused(
            f"refused: {_shown(ref)} is not in {memories};"
            " only memories memrecall save wrote can be appended to"
        )
    return memory.path


def _refresh_index(settings: Settings) -> str:
    """So the very next prompt finds the note (with no index, ripgrep reads the files)."""
    from .index import refresh_if_present

    _, why = refresh_if_present(settings, wait=30)
    return "" if why in ("", "no index yet", "index disabled") else why
