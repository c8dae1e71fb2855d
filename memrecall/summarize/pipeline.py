"""One `memrecall summarize` run: discover → exclude → condense → summarize → post-filter → write.

State lives in two files under `$MEMRECALL_HOME/state/`:

- `summarized.json`, the ledger, keyed by session id (the transcript's file stem, which
  Claude Code keeps equal to `sessionId`): the size the session had when it was last
  handled, the outcome, attempts, and where its summary is. A session whose size changed is
  looked at again; an unchanged one is not even parsed.
- `summarize-run.json`, the run record that `doctor` and `stats` read.

Crash safety: the summary file is written (atomically) before the ledger says "done", and a
summary path is a pure function of the session (or taken from the ledger), so a rerun after
a kill rewrites the same file: nothing lost, nothing duplicated. The ledger is saved after
every session, so at most one session's work is redone.

Library code: no printing. The command renders the `RunReport` and drives the progress bar
through the `progress` callback.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from ..atomic import LockTimeout, read_json, run_lock, write_json_atomic
from ..config import Settings
from ..errors import BackendUnavailable, MemrecallError, SummarizeError
from ..redact import redact_fast
from ..transcripts import Session, TranscriptError, parse_session
from . import discover
from .condense import Condensed, condense
from .discover import PENDING_REASONS, STRUCTURAL_REASONS, Found
from .postfilter import Rejected, postfilter
from .writer import SummaryMeta, base_path, choose_target, summary_path, write_summary

LEDGER_NAME = "summarized.json"
RUN_RECORD_NAME = "summarize-run.json"
# Rough cost of the merge call of a chunked session (n chunk summaries of ~this size each).
_MERGE_PER_PART = 1500

Progress = Callable[[str, int, int], None]


class SummarizeBusy(MemrecallError):
    """Another summarize run holds the lock."""


class SessionsFailed(MemrecallError):
    """At least one session failed in this run (the CLI exits 1)."""


@dataclass
class SummarizeOptions:
    dry_run: bool = False
    since: datetime | None = None
    limit: int | None = None


@dataclass
class SessionRow:
    """One file found, what was decided for it, and why."""

    session_id: str
    project: str
    path: Path
    modified: datetime
    raw_bytes: int
    decision: str  # summarized | would-summarize | skipped | failed
    reason: str = ""  # a discover.REASONS slug when skipped; one line when failed
    condensed_chars: int = 0
    sent_chars: int = 0  # sent (or, in a dry run, that would be sent) to the backend
    seconds: float = 0.0
    output: Path | None = None
    start: datetime | None = None
    will_retry: bool = False
    dropped_chars: int = 0  # left out by the transcript reader's caps (a very long session)


@dataclass
class RunReport:
    started: datetime
    backend: str
    dry_run: bool
    finished: datetime | None = None
    rows: list[SessionRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Why the backend cannot run (its program is missing…): the sessions left wait for a run
    # where it can.
    backend_unavailable: str = ""

    @property
    def summarized(self) -> int:
        return sum(1 for r in self.rows if r.decision == "summarized")

    @property
    def would_summarize(self) -> int:
        return sum(1 for r in self.rows if r.decision == "would-summarize")

    @property
    def skipped(self) -> dict[str, int]:
        counts = Counter(r.reason for r in self.rows if r.decision == "skipped")
        return dict(sorted(counts.items()))

    @property
    def failed(self) -> list[dict[str, str]]:
        return [
            {"session": r.session_id, "reason": r.reason}
            for r in self.rows
            if r.decision == "failed"
        ]

    @property
    def attempted(self) -> int:
        """Sessions this run set out to summarize: what a dry run counts as would-summarize."""
        return (
            self.summarized
            + len(self.failed)
            + sum(
                1
                for r in self.rows
                if r.decision == "skipped" and r.reason == "backend-unavailable"
            )
        )

    def unavailable_line(self) -> str:
        """One line for a run whose backend could not run, counting as the dry run does."""
        n = self.attempted
        if not n:
            return f"no session to summarize yet, but {self.backend_unavailable}"
        written = self.summarized or "none"
        sessions = f"{n} session{'s' if n != 1 else ''}"
        return f"{sessions} would be summarized; {written} written: {self.backend_unavailable}"

    @property
    def chars_sent(self) -> int:
        return sum(r.sent_chars for r in self.rows if r.decision == "summarized")

    @property
    def raw_bytes(self) -> int:
        return sum(r.raw_bytes for r in self.rows if r.decision == "summarized")

    def _pending_rows(self) -> list[SessionRow]:
        return [
            r
            for r in self.rows
            if (r.decision == "skipped" and r.reason in PENDING_REASONS)
            or (r.decision == "failed" and r.will_retry)
            or r.decision == "would-summarize"
        ]

    @property
    def pending(self) -> int:
        return len(self._pending_rows())

    @property
    def oldest_unsummarized(self) -> datetime | None:
        # By mtime: that is what Claude Code's cleanupPeriodDays deletes by.
        rows = self._pending_rows()
        return min((r.modified for r in rows), default=None)

    def record(self) -> dict[str, Any]:
        """The run record (`state/summarize-run.json`); its keys are a contract."""
        oldest = self.oldest_unsummarized
        return {
            "started": self.started.isoformat(timespec="seconds"),
            "finished": (self.finished or self.started).isoformat(timespec="seconds"),
            "backend": self.backend,
            "summarized": self.summarized,
            "skipped": self.skipped,
            "failed": self.failed,
            "chars_sent": self.chars_sent,
            "raw_bytes": self.raw_bytes,
            "oldest_unsummarized": oldest.isoformat(timespec="seconds") if oldest else None,
            "pending": self.pending,
            # Sessions too long to read whole: session id → characters left out of the middle.
            "capped": {r.session_id: r.dropped_chars for r in self.rows if r.dropped_chars},
        }


class Ledger:
    """`state/summarized.json`: per session id, what was done at which size."""

    def __init__(self, path: Path) -> None:
        self.path = path
        data = read_json(path, None)
        sessions = data.get("sessions") if isinstance(data, dict) else None
        self.sessions: dict[str, dict[str, Any]] = {
            k: v for k, v in (sessions or {}).items() if isinstance(k, str) and isinstance(v, dict)
        }

    def get(self, sid: str) -> dict[str, Any] | None:
        return self.sessions.get(sid)

    def put(self, sid: str, entry: dict[str, Any]) -> None:
        self.sessions[sid] = entry

    def save(self) -> None:
        write_json_atomic(self.path, {"version": 1, "sessions": self.sessions})


def run_record_path(settings: Settings) -> Path:
    return settings.state_dir / RUN_RECORD_NAME


def ledger_path(settings: Settings) -> Path:
    return settings.state_dir / LEDGER_NAME


def recalled_refs(settings: Settings) -> dict[str, list[str]]:
    """session id → `store:ref` of every memory the recall hook injected into it."""
    from ..recall_log import read_entries

    found: dict[str, list[str]] = {}
    for entry in read_entries(settings.logs_dir):
        if entry.get("decision") != "inject" or not isinstance(entry.get("session"), str):
            continue
        refs = found.setdefault(entry["session"], [])
        for item in entry.get("injected") or []:
            if isinstance(item, dict) and item.get("store") and item.get("ref"):
                ref = f"{item['store']}:{item['ref']}"
                if ref not in refs:
                    refs.append(ref)
    return found


def _moment(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, timezone.utc)


def _row(found: Found, decision: str, reason: str = "") -> SessionRow:
    # The project folder is the escaped cwd: a folder named after a key is shown redacted.
    return SessionRow(
        session_id=found.session_id,
        project=redact_fast(found.project_dir),
        path=found.path,
        modified=_moment(found.mtime),
        raw_bytes=found.size,
        decision=decision,
        reason=reason,
    )


def estimate_sent(condensed: Condensed, language: str, backend: str) -> int:
    """Characters an LLM backend would be sent for this session (prompts included)."""
    if backend == "extractive":
        return 0
    from .backends import build_prompt

    overhead = len(build_prompt(language, ""))
    chunks = condensed.chunks or [condensed.text]
    total = sum(len(c) + overhead + 80 for c in chunks)
    if len(chunks) > 1:
        total += overhead + _MERGE_PER_PART * len(chunks)
    return total


def _pre_decide(found: Found, ledger: Ledger, settings: Settings) -> str | None:
    """A skip reason known without parsing, or None when the file needs a look."""
    if found.reason:
        return found.reason
    entry = ledger.get(found.session_id)
    if entry and entry.get("size") == found.size:
        status = entry.get("status")
        if status == "done":
            return "unchanged"
        if status == "excluded":
            return "excluded-before"
        if status == "failed" and int(entry.get("attempts", 0)) >= settings.summarize.max_attempts:
            return "failed-before"
    quiet = settings.summarize.quiet_minutes * 60
    if quiet > 0 and settings.now.timestamp() - found.mtime < quiet:
        return "still-active"
    return None


def _dedupe(files: list[Found]) -> list[Found]:
    """Keep one file per session id (the newest); the others are reported as duplicates."""
    newest: dict[str, Found] = {}
    for f in files:
        if f.reason:
            continue
        best = newest.get(f.session_id)
        if best is None or (f.mtime, f.size) > (best.mtime, best.size):
            newest[f.session_id] = f
    for f in files:
        if not f.reason and newest.get(f.session_id) is not f:
            f.reason = "duplicate"
    return files


def run_summarize(
    settings: Settings,
    options: SummarizeOptions | None = None,
    progress: Progress | None = None,
) -> RunReport:
    """Run (or, with `dry_run`, plan) one summarize pass and return what happened."""
    options = options or SummarizeOptions()
    cfg = settings.summarize
    from .backends import ensure_available, get_backend

    backend = get_backend(cfg.backend, settings)  # unknown name → UsageError before any work
    # settings.now, not the clock: MEMRECALL_NOW replays (tests, benchmarks) stay consistent.
    clock = time.monotonic()
    report = RunReport(started=settings.now, backend=cfg.backend, dry_run=options.dry_run)

    def finish() -> None:
        report.finished = settings.now + timedelta(seconds=time.monotonic() - clock)

    if settings.internal:
        # Inside memrecall's own summarizer: never summarize from there (recursion guard).
        report.notes.append(
            "MEMRECALL_INTERNAL is set: summarize does nothing inside memrecall's own runs"
        )
        finish()
        return report
    if not settings.claude_projects.is_dir():
        report.notes.append(f"no Claude Code transcripts at {settings.claude_projects}")
    try:
        # Once, before any session: a missing program fails the run, not each session.
        ensure_available(backend)
    except BackendUnavailable as exc:
        report.backend_unavailable = redact_fast(str(exc))
    if options.dry_run:
        if report.backend_unavailable:
            report.notes.append(
                f"{report.backend_unavailable}: a real run would write nothing; "
                f"{fix_hint(settings)}"
            )
        _run(settings, options, backend, report, progress)
        finish()
        return report
    try:
        with run_lock(settings.state_dir / "summarize"):
            _run(settings, options, backend, report, progress)
            finish()
            write_json_atomic(run_record_path(settings), report.record())
    except LockTimeout as exc:
        raise SummarizeBusy(
            "another memrecall summarize is running; try again when it has finished"
        ) from exc
    return report


def fix_hint(settings: Settings) -> str:
    """What to do when the configured backend cannot run."""
    where = settings.config_path or settings.home / "config.toml"
    return (
        f'use --backend extractive (no LLM), or set backend = "extractive" under [summarize] '
        f"in {where}"
    )


def _sweep_temp_files(settings: Settings) -> None:
    """Remove the temp files of atomic writes that a killed run left behind. Only summarize
    writes into the summaries folder and these two state files, and this runs under the
    summarize run lock: no such temp file can belong to a live writer."""
    import os
    import re

    temp = re.compile(r"^\..+\.tmp$")
    candidates: list[Path] = []
    if settings.summaries.is_dir():
        for folder, _, files in os.walk(settings.summaries):
            candidates += [Path(folder) / name for name in files if temp.match(name)]
    for name in (LEDGER_NAME, RUN_RECORD_NAME):
        candidates += list(settings.state_dir.glob(f".{name}.*.tmp"))
    for path in candidates:
        try:
            path.unlink()
        except OSError:
            continue


def _run(
    settings: Settings,
    options: SummarizeOptions,
    backend: Any,
    report: RunReport,
    progress: Progress | None,
) -> None:
    cfg = settings.summarize
    if not options.dry_run:
        _sweep_temp_files(settings)
    ledger = Ledger(ledger_path(settings))
    files = _dedupe(list(discover.find_files(settings)))
    todo: list[Found] = []
    for found in files:
        if options.since is not None and found.mtime < options.since.timestamp():
            continue  # outside the window asked for: not part of this run at all
        reason = _pre_decide(found, ledger, settings)
        if reason:
            report.rows.append(_row(found, "skipped", reason))
        else:
            todo.append(found)
    # Oldest first: those are the ones Claude Code's 30-day cleanup deletes next.
    todo.sort(key=lambda f: (f.mtime, f.session_id))
    if options.limit is not None and len(todo) > options.limit:
        for found in todo[options.limit :]:
            report.rows.append(_row(found, "skipped", "over-limit"))
        todo = todo[: options.limit]

    refs = recalled_refs(settings) if not options.dry_run else {}
    summarized = 0
    for index, found in enumerate(todo):
        if progress:
            progress(found.session_id[:8], index, len(todo))
        row = _row(found, "skipped")
        report.rows.append(row)
        try:
            session = parse_session(found.path, found.project_dir, cfg.optout_marker)
        except TranscriptError as exc:
            if found.path.exists():
                row.decision, row.reason = "failed", redact_fast(str(exc))
            else:
                row.reason = "vanished"
            continue
        row.start = session.start
        if session.dropped_chars:
            row.dropped_chars = session.dropped_chars
            report.notes.append(
                f"session {found.session_id[:8]} is very long: "
                f"{session.dropped_chars:,} characters were left out while reading it "
                f"({session.dropped_events:,} events of its middle, the middles of its longest "
                f"prompts); its start and end are summarized"
            )
        reason = discover.session_reason(session, settings)
        condensed = None
        if not reason:
            condensed = condense(session, cfg.max_input_chars, cfg.chunk_chars, cfg.language)
            row.condensed_chars = condensed.chars
            if discover.is_tiny(session, condensed.full_chars, settings):
                reason = "tiny"
        if reason or condensed is None:
            reason = reason or "tiny"
            row.reason = reason
            if reason in STRUCTURAL_REASONS and not options.dry_run:
                ledger.put(
                    found.session_id,
                    _entry(found, "excluded", reason=reason, old=ledger.get(found.session_id)),
                )
                ledger.save()
            continue
        if summarized >= cfg.max_sessions:
            row.reason = "max-sessions"
            continue
        summarized += 1
        language = condensed.language
        if options.dry_run:
            row.decision = "would-summarize"
            row.reason = ""
            row.sent_chars = estimate_sent(condensed, language, cfg.backend)
            continue
        if report.backend_unavailable:
            # Decided like every other session, so the counts agree with a dry run's.
            row.reason = "backend-unavailable"
            continue
        down = _summarize_one(
            settings, backend, ledger, found, session, condensed, language, refs, row
        )
        report.backend_unavailable = report.backend_unavailable or down
    if progress:
        progress("", len(todo), len(todo))


def _entry(
    found: Found, status: str, old: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "size": found.size,
        "mtime": found.mtime,
        "path": redact_fast(str(found.path)),
        "status": status,
    }
    if old and old.get("summary"):
        entry["summary"] = old["summary"]
    entry.update(extra)
    return entry


def _summarize_one(
    settings: Settings,
    backend: Any,
    ledger: Ledger,
    found: Found,
    session: Session,
    condensed: Condensed,
    language: str,
    refs: dict[str, list[str]],
    row: SessionRow,
) -> str:
    """Summarize, filter and write one session; returns a reason when the backend is down."""
    from .backends import SummaryJob

    cfg = settings.summarize
    old = ledger.get(found.session_id)
    # Attempts count only against the same content; a session that grew starts afresh.
    attempts = (
        int(old.get("attempts", 0))
        if old and old.get("size") == found.size and old.get("status") == "failed"
        else 0
    )
    job = SummaryJob(session=session, condensed=condensed, language=language)
    began = time.perf_counter()
    try:
        text = backend.summarize(job)
        summary = postfilter(text, session, language)
    except BackendUnavailable as exc:
        row.sent_chars = job.sent_chars
        row.reason = "backend-unavailable"  # not the session's fault: no attempt is counted
        return redact_fast(str(exc))
    except (SummarizeError, Rejected) as exc:
        attempts += 1
        row.sent_chars = job.sent_chars
        row.seconds = time.perf_counter() - began
        row.will_retry = attempts < cfg.max_attempts
        tail = "will retry next run" if row.will_retry else "gave up"
        row.decision = "failed"
        row.reason = f"{redact_fast(str(exc))} (attempt {attempts}/{cfg.max_attempts}, {tail})"
        ledger.put(
            found.session_id,
            _entry(found, "failed", old=old, attempts=attempts, reason=redact_fast(str(exc))),
        )
        ledger.save()
        return ""
    row.sent_chars = job.sent_chars
    meta = SummaryMeta(
        title=summary.title,
        date=session.start or _moment(found.mtime),
        session_id=session.session_id,
        project=Path(session.cwd).name if session.cwd else found.project_dir,
        cwd=session.cwd,
        git_branch=session.git_branch,
        tags=summary.tags,
        files=summary.files,
        backend=backend.name,
        source_transcript=str(found.path),
        recalled=refs.get(session.session_id, []) or refs.get(found.session_id, []),
        language=language,
        summarized=settings.now,
    )
    preferred = summary_path(
        settings.summaries, session.start, _moment(found.mtime), session.session_id
    )
    if old and isinstance(old.get("summary"), str):
        # A session resumed on a later day keeps the file it already has.
        preferred = base_path(settings.summaries / old["summary"])
    target, edited = choose_target(preferred, session.session_id)
    write_summary(target, meta, summary.body)
    row.decision, row.reason, row.output = "summarized", "", target
    if edited:
        row.reason = f"a person edited {preferred.name}; wrote {target.name} beside it"
    row.seconds = time.perf_counter() - began
    try:
        rel = target.relative_to(settings.summaries).as_posix()
    except ValueError:
        rel = str(target)
    ledger.put(
        found.session_id,
        _entry(
            found,
            "done",
            summary=rel,
            summarized_at=settings.now.isoformat(timespec="seconds"),
            backend=backend.name,
            chars_sent=job.sent_chars,
            attempts=0,
        ),
    )
    ledger.save()
    return ""


__all__ = [
    "SummarizeOptions",
    "SessionRow",
    "RunReport",
    "Ledger",
    "run_summarize",
    "recalled_refs",
    "estimate_sent",
    "run_record_path",
    "ledger_path",
    "SummarizeBusy",
    "SessionsFailed",
    "fix_hint",
]
