"""Find Claude Code transcripts and decide which ones are worth a summary.

Two stages, so that most files are never parsed:

1. `find_files` walks `MEMRECALL_CLAUDE_PROJECTS` and classifies each file by its name and
   place alone: subagents in every layout (`<session>/subagents/**`, `agent-*.jsonl` beside
   the sessions, `agent-acompact-*` compaction agents), workflow `journal.jsonl`, `.meta.json`
   sidecars, memrecall's own summarizer folder, and the projects the user opted out of.
2. `session_reason` looks at a parsed session: sidechain-only files, headless and scheduled
   runs, memrecall's own prompts, no human prompt, the opt-out marker, tiny sessions.

A reason is a short stable slug (they are counted in the run record, which `doctor` and
`stats` read); `REASONS` explains each one for people.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..config import Settings
from ..redact import has_optout
from ..transcripts import Session, escape_project_dir

REASONS: dict[str, str] = {
    "subagent": "a subagent's transcript (its parent session is summarized instead)",
    "compaction-agent": "Claude Code's own compaction agent",
    "not-a-transcript": "a workflow journal or .meta.json sidecar",
    "memrecall-internal": "memrecall's own summarizer run",
    "opted-out-project": "the project matches summarize.exclude_projects",
    "opted-out-marker": "someone typed the opt-out marker in the session",
    "headless": "a claude -p / Agent SDK run (entrypoint sdk-*)",
    "scheduled": "a scheduled task or /loop run",
    "no-human-prompt": "no prompt typed by a person",
    "warmup": "a Warmup stub session",
    "tiny": "too few turns or too little text to be worth a summary",
    "unchanged": "already summarized and not grown since",
    "excluded-before": "excluded by an earlier run and not grown since",
    "failed-before": "failed the maximum number of times; waits until the session grows",
    "still-active": "modified within the last summarize.quiet_minutes; next run",
    "over-limit": "beyond --limit for this run; next run",
    "max-sessions": "beyond --max-sessions for this run; next run",
    "backend-unavailable": "the summarizer backend could not be started; next run",
    "duplicate": "another file has the same session id (the newest one is used)",
    "vanished": "the file disappeared while summarize ran (Claude Code's cleanup)",
}

# Reasons a later run may undo without the session changing: such sessions are pending.
PENDING_REASONS = frozenset({"still-active", "over-limit", "max-sessions", "backend-unavailable"})

# Exclusions that are facts about the file's content: cached in the ledger until it grows.
# `tiny` is not cached on purpose: it depends on thresholds a person may lower.
STRUCTURAL_REASONS = frozenset(
    {
        "subagent",
        "memrecall-internal",
        "headless",
        "scheduled",
        "no-human-prompt",
        "warmup",
        "opted-out-marker",
    }
)

# A session with fewer human turns than `min_human_turns` still counts as real work when its
# condensed text is this many times `min_chars`: one prompt that started a two-hour
# autonomous task (real sessions in the corpus: 1 prompt, 177 tool calls) must not be lost.
LONG_TASK_FACTOR = 5


@dataclass
class Found:
    path: Path
    session_id: str  # the file stem; the parser may refine it
    project_dir: str  # the folder right under the projects root
    size: int
    mtime: float
    reason: str | None = None  # set when the file is excluded by name or place


def _own_project_names(settings: Settings) -> list[str]:
    """Project-folder names Claude Code would give memrecall's own working folder."""
    names = {escape_project_dir(settings.work_dir)}
    try:
        names.add(escape_project_dir(os.path.realpath(settings.work_dir)))
    except OSError:
        pass
    return sorted(names)


def _is_own(project_dir: str, own: list[str]) -> bool:
    return any(project_dir == name or project_dir.startswith(name + "-") for name in own)


def project_opted_out(project_dir: str, cwd: str, patterns: list[str]) -> bool:
    """Globs match the cwd (`/home/me/secret*`), the folder name, or the cwd's last part."""
    for pattern in patterns:
        for candidate in (cwd, project_dir, Path(cwd).name if cwd else ""):
            if candidate and fnmatch.fnmatchcase(candidate, pattern):
                return True
    return False


def _classify(
    path: Path, root: Path, own: list[str], patterns: list[str]
) -> tuple[str, str | None]:
    rel = path.relative_to(root)
    parts = rel.parts
    project = parts[0] if len(parts) > 1 else ""
    name = path.name
    if name.endswith(".meta.json") or name == "journal.jsonl":
        return project, "not-a-transcript"
    if name.startswith("agent-acompact"):
        return project, "compaction-agent"
    if "subagents" in parts[:-1] or name.startswith("agent-"):
        return project, "subagent"
    if len(parts) > 2:
        # Deeper than <project>/<session>.jsonl and not a subagent layout: tool-results and
        # other side folders of a session; not a conversation of its own.
        return project, "not-a-transcript"
    if _is_own(project, own):
        return project, "memrecall-internal"
    if patterns and project_opted_out(project, "", patterns):
        return project, "opted-out-project"
    return project, None


def find_files(settings: Settings) -> Iterator[Found]:
    """Every transcript-like file under the projects root, classified by name and place."""
    root = settings.claude_projects
    if not root.is_dir():
        return
    own = _own_project_names(settings)
    patterns = list(settings.summarize.exclude_projects)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        # Claude Code keeps spilled tool output and memory beside sessions; never transcripts.
        dirnames[:] = [
            d for d in dirnames if d not in ("tool-results", "memory") and not d.startswith(".")
        ]
        for filename in sorted(filenames):
            if not (filename.endswith(".jsonl") or filename.endswith(".meta.json")):
                continue
            path = Path(dirpath) / filename
            try:
                stat = path.stat()
            except OSError:
                continue
            project, reason = _classify(path, root, own, patterns)
            stem = filename[: -len(".jsonl")] if filename.endswith(".jsonl") else filename
            yield Found(path, stem, project, stat.st_size, stat.st_mtime, reason)


def session_reason(session: Session, settings: Settings) -> str | None:
    """Why a parsed session gets no summary (`tiny` aside: see `is_tiny`), or None."""
    cfg = settings.summarize
    if session.subagent:
        return "subagent"
    work = str(settings.work_dir)
    if session.internal or (
        session.cwd and (session.cwd == work or session.cwd.startswith(work + os.sep))
    ):
        return "memrecall-internal"
    if cfg.exclude_projects and project_opted_out(
        session.project_dir, session.cwd, cfg.exclude_projects
    ):
        return "opted-out-project"
    if session.headless:
        return "headless"
    if session.scheduled:
        return "scheduled"
    if session.warmup and len(session.human_turns) <= 1:
        return "warmup"
    humans = session.human_turns
    if not humans:
        return "no-human-prompt"
    # Any width, case or spacing an IME produces (`＃memrecall：off`), also inside `<private>`.
    if cfg.optout_marker.strip() and any(
        has_optout(e.raw or e.text, cfg.optout_marker) for e in humans
    ):
        return "opted-out-marker"
    return None


def is_tiny(session: Session, condensed_chars: int, settings: Settings) -> bool:
    """Too little to remember: measured on the condensed text (what an LLM would read).

    Japanese is dense (a rich three-prompt session condenses to ~800 characters), so the
    measure is characters of the condensed transcript, tool lines included.
    """
    cfg = settings.summarize
    if condensed_chars < cfg.min_chars:
        return True
    few_turns = len(session.human_turns) < cfg.min_human_turns
    return few_turns and condensed_chars < cfg.min_chars * LONG_TASK_FACTOR
