"""Retention: summaries older than the window leave the search, old logs and state go.

A summary's age is its frontmatter `date`, else the date in its file name, else its mtime
(the same rule the summaries store applies, so prune never disagrees with search). By
default old summaries are moved into `<summaries>/.archive/<same relative path>`: search
never reads dot-folders, and nothing a person may still want is destroyed. Only files that
are provably memrecall summaries are touched (see `is_memrecall_summary`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .config import Settings
from .errors import MemrecallError
from .recall_log import LOG_PREFIX, log_files
from .stores.base import date_from_name, parse_date, read_head
from .walk import walk_files

ARCHIVE_DIR = ".archive"
# `YYYY-MM-DD-<sid8>.md`, optionally `.N` when two runs summarised one session.
SUMMARY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-([0-9A-Za-z]+)(?:\.\d+)?\.md$")


# --- what is a memrecall summary --------------------------------------------------------


@dataclass
class SummaryInfo:
    path: Path
    rel: str
    date: datetime
    date_source: str  # frontmatter | filename | mtime


def is_memrecall_summary(path: Path, meta: dict[str, Any]) -> bool:
    """Name `YYYY-MM-DD-<sid8>.md` AND frontmatter `session_id` starting with that `<sid8>`.

    Both come from the summary writer; a person's own note that happens to live in the
    folder would need a matching session id by accident, which does not happen.
    """
    match = SUMMARY_NAME.match(path.name)
    if not match:
        return False
    session = meta.get("session_id")
    if not isinstance(session, str) or not session.strip():
        return False
    return session.strip().lower().startswith(match[4].lower())


def read_frontmatter(text: str) -> dict[str, Any]:
    """A file's frontmatter fields via python-frontmatter (prune is off the hook's hot path,
    where frontmatter_lite reads them); none, or malformed, gives {}."""
    import frontmatter  # pulls in yaml: imported only when prune reads a file

    try:
        meta, _ = frontmatter.parse(text.removeprefix("\ufeff"))
    except Exception:  # a person's malformed note must not stop prune: it is not a summary
        return {}
    return meta if isinstance(meta, dict) else {}


def summary_info(path: Path, root: Path) -> SummaryInfo | None:
    meta = read_frontmatter(read_head(path))
    if not is_memrecall_summary(path, meta):
        return None
    rel = path.relative_to(root).as_posix()
    date = parse_date(meta.get("date"))
    if date is not None:
        return SummaryInfo(path, rel, date, "frontmatter")
    date = date_from_name(path.name)
    if date is not None:
        return SummaryInfo(path, rel, date, "filename")
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return SummaryInfo(path, rel, datetime.fromtimestamp(mtime, timezone.utc), "mtime")


def iter_summary_files(root: Path) -> list[Path]:
    """Every `*.md` under the root that search reads (the archive, a dot-folder, is not),
    sorted; symlinks are left alone as search leaves them (see `memrecall.walk`)."""
    return [path for path, _ in walk_files(root)]


# --- the plan ---------------------------------------------------------------------------


@dataclass
class PruneItem:
    kind: str  # summary | recall-log | session-state
    action: str  # archive | delete
    path: Path
    date: datetime
    date_source: str
    target: Path | None = None
    rel: str = ""


@dataclass
class PrunePlan:
    cutoff: datetime
    delete: bool
    summaries_root: Path
    items: list[PruneItem] = field(default_factory=list)
    kept_summaries: int = 0
    not_summaries: list[Path] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for item in self.items if item.kind == kind)

    def as_json(self) -> dict[str, Any]:
        return {
            "cutoff": self.cutoff.isoformat(),
            "mode": "delete" if self.delete else "archive",
            "items": [
                {
                    "kind": i.kind,
                    "action": i.action,
                    "path": str(i.path),
                    "date": i.date.isoformat(),
                    "date_source": i.date_source,
                    "target": str(i.target) if i.target else None,
                }
                for i in self.items
            ],
            "kept_summaries": self.kept_summaries,
            "not_summaries": [str(p) for p in self.not_summaries],
        }


def _month_end(stem: str) -> datetime | None:
    match = re.fullmatch(re.escape(LOG_PREFIX) + r"(\d{4})-(\d{2})", stem)
    if not match:
        return None
    year, month = int(match[1]), int(match[2])
    if not 1 <= month <= 12:
        return None
    nxt = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc)
    return nxt - timedelta(microseconds=1)


def plan_prune(settings: Settings, cutoff: datetime, delete: bool = False) -> PrunePlan:
    root = settings.summaries
    plan = PrunePlan(cutoff=cutoff, delete=delete, summaries_root=root)
    archive = root / ARCHIVE_DIR
    for path in iter_summary_files(root):
        info = summary_info(path, root)
        if info is None:
            plan.not_summaries.append(path)
            continue
        if info.date >= cutoff:
            plan.kept_summaries += 1
            continue
        plan.items.append(
            PruneItem(
                "summary",
                "delete" if delete else "archive",
                path,
                info.date,
                info.date_source,
                None if delete else archive / info.rel,
                info.rel,
            )
        )
    # A monthly log goes only when its whole month is older than the window.
    for path in log_files(settings.logs_dir):
        end = _month_end(path.stem)
        if end is not None and end < cutoff:
            plan.items.append(
                PruneItem("recall-log", "delete", path, end, "filename", rel=path.name)
            )
    sessions = settings.state_dir / "sessions"
    if sessions.is_dir():
        for entry in sorted(sessions.iterdir(), key=lambda p: p.name):
            if not entry.is_file() or entry.suffix != ".json":
                continue
            try:
                moment = datetime.fromtimestamp(entry.stat().st_mtime, timezone.utc)
            except OSError:
                continue
            if moment < cutoff:
                plan.items.append(
                    PruneItem("session-state", "delete", entry, moment, "mtime", rel=entry.name)
                )
    return plan


@dataclass
class PruneResult:
    archived: int = 0
    deleted: int = 0
    # kind → how many were actually removed or moved
    done: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # Session states the plan found stale but a session used between plan and apply.
    kept_live: list[Path] = field(default_factory=list)


def _remove_empty_parents(path: Path, stop: Path) -> None:
    folder = path.parent
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()  # only succeeds when empty
        except OSError:
            return
        folder = folder.parent


def apply_prune(plan: PrunePlan, settings: Settings) -> PruneResult:
    """Carry out the plan under the prune run lock; one failing file never stops the rest.

    A session state is checked again as it is deleted (under its session's lock): one a
    session wrote since the plan, or is writing now, stays (`kept_live`)."""
    from .atomic import LockTimeout, free_name, run_lock

    result = PruneResult()
    try:
        with run_lock(settings.state_dir / "prune", timeout=0):
            for item in plan.items:
                try:
                    if (
                        item.kind == "summary"
                        and item.action == "archive"
                        and item.target is not None
                    ):
                        # Never over an archived copy: `x.1.md`, `x.2.md`… beside it.
                        target = free_name(item.target, last=9999)
                        target.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(item.path, target)
                        item.target = target
                        result.archived += 1
                    elif item.kind == "session-state":
                        from .session import remove_idle_state

                        outcome = remove_idle_state(item.path, plan.cutoff.timestamp())
                        if outcome == "gone":
                            continue
                        if outcome != "removed":
                            result.kept_live.append(item.path)
                            continue
                        result.deleted += 1
                    else:
                        item.path.unlink()
                        result.deleted += 1
                        # The lock sidecar of a removed log is dead weight.
                        sidecar = Path(str(item.path) + ".lock")
                        if item.kind != "summary" and sidecar.exists():
                            sidecar.unlink()
                    result.done[item.kind] = result.done.get(item.kind, 0) + 1
                    if item.kind == "summary":
                        _remove_empty_parents(item.path, plan.summaries_root)
                except FileNotFoundError:
                    continue  # gone already (another process): nothing to do
                except OSError as exc:
                    result.errors.append(f"{item.path}: {exc.strerror or exc}")
    except LockTimeout:
        raise MemrecallError("another memrecall prune is running; try again later") from None
    return result
