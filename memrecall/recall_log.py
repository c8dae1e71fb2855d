"""The recall log: one JSON line per hook run, in monthly files under `$MEMRECALL_HOME/logs/`.

Monthly files keep trimming (prune) a matter of deleting whole files, and appends are
locked so that concurrent Claude Code sessions never interleave lines. The raw prompt is
not stored unless `recall.log_prompt = true`.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from .atomic import append_line
from .times import parse_instant

LOG_PREFIX = "recall-"


def log_path(logs_dir: Path, now: datetime) -> Path:
    return logs_dir / f"{LOG_PREFIX}{now:%Y-%m}.jsonl"


def append(logs_dir: Path, now: datetime, entry: dict[str, Any]) -> None:
    logs_dir.mkdir(parents=True, exist_ok=True)
    from .sanitize import dumps

    # Lossless, and inert when someone `tail`s the log: bidi and C1 characters are escaped.
    line = dumps(entry, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate from somewhere: keep the line, lose the char
        line = line.encode("utf-8", "replace").decode("utf-8")
    append_line(log_path(logs_dir, now), line)


def log_files(logs_dir: Path) -> list[Path]:
    if not logs_dir.is_dir():
        return []
    return sorted(p for p in logs_dir.glob(f"{LOG_PREFIX}*.jsonl") if p.is_file())


def read_entries(logs_dir: Path, since: datetime | None = None) -> Iterator[dict[str, Any]]:
    """Every well-formed entry, oldest first; broken lines (a crash mid-write) are skipped."""
    for _, entry in read_numbered(logs_dir, since):
        yield entry


def read_numbered(
    logs_dir: Path, since: datetime | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """`read_entries` with each entry's id, `<file stem>:<line number>`: logs are only ever
    appended to (and deleted whole by prune), so an id names one hook run for good, even
    when `MEMRECALL_NOW` gives every run the same time."""
    for path in log_files(logs_dir):
        if since is not None and path.stem[len(LOG_PREFIX):] < f"{since:%Y-%m}":
            continue
        try:
            handle = open(path, encoding="utf-8", errors="replace")
        except OSError:
            continue
        with handle:
            for number, line in enumerate(handle, start=1):
                try:
                    entry = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                if not isinstance(entry, dict):
                    continue
                if since is not None:
                    try:
                        if parse_instant(str(entry.get("ts"))) < since:
                            continue
                    except ValueError:
                        continue
                yield f"{path.stem}:{number}", entry


def dict_field(entry: dict[str, Any], name: str) -> dict[str, Any]:
    """A log entry's mapping field, or {} when an older or damaged entry lacks it."""
    value = entry.get(name)
    return value if isinstance(value, dict) else {}
