"""Summarizer backends: one small Protocol and a registry.

- `claude`: `claude -p` with hooks disabled, no tools, no session persistence, a cleaned
  environment carrying the recursion guard, run from memrecall's own work folder.
- `command`: any program; the prompt on stdin, the summary on stdout.
- `extractive`: no LLM at all; the same sections built from the transcript itself.

Built-ins register exactly like a third-party backend would (`register_backend`). Every
backend call is bounded (timeout) and returns the summary markdown or raises
`SummarizeError` with a one-line reason; `BackendUnavailable` means no session can succeed.
A backend may also offer `ensure_available()`, which the run calls once before any session:
a missing program is then one clear error, not one failure per session.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from ..config import Settings
from ..errors import BackendUnavailable, SummarizeError, UsageError
from ..redact import redact
from ..resources import template
from ..textcut import one_line
from ..transcripts import Session
from .condense import Condensed
from .extractive import ExtractiveBackend

# The environment of a Claude Code session that would make a child `claude` behave as a
# nested session (or hand it the parent's session id).
_NESTED_ENV = (
    "CLAUDECODE",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_ENTRYPOINT",
)

PART_NOTE = {
    "ja": (
        "これは1つのセッションを {n} 分割したうちの {i} 番目です。"
        "この部分だけを同じ形式で要約してください。"
    ),
    "en": "This is part {i} of {n} of one session. Summarize just this part, in the same format.",
}
MERGE_NOTE = {
    "ja": (
        "<transcript> は1つのセッションを分割して要約したものです。"
        "これらを1つの要約に統合してください。"
    ),
    "en": (
        "The <transcript> holds summaries of consecutive parts of one session. "
        "Merge them into one summary."
    ),
}


@dataclass
class SummaryJob:
    session: Session
    condensed: Condensed
    language: str
    sent_chars: int = 0  # what actually left the machine (prompts included)
    calls: int = 0
    notes: list[str] = field(default_factory=list)


class Summarizer(Protocol):
    name: str

    def summarize(self, job: SummaryJob) -> str:
        """Return the summary markdown for `job`, or raise SummarizeError."""
        ...


def ensure_available(backend: Summarizer) -> None:
    """Raise `BackendUnavailable` when `backend` cannot run at all. A third-party backend
    without `ensure_available` is taken as available: its first call says otherwise."""
    check = getattr(backend, "ensure_available", None)
    if callable(check):
        check()


BackendFactory = Callable[[Settings], Summarizer]
_REGISTRY: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    _REGISTRY[name] = factory


def backend_names() -> list[str]:
    return list(_REGISTRY)


def get_backend(name: str, settings: Settings) -> Summarizer:
    factory = _REGISTRY.get(name)
    if factory is None:
        raise UsageError(f"unknown summarize backend {name!r}; choose from {', '.join(_REGISTRY)}")
    return factory(settings)


def build_prompt(language: str, transcript: str, part_note: str = "") -> str:
    text = template(f"summary.{'ja' if language == 'ja' else 'en'}.md")
    # str.replace, not format(): transcripts are full of braces.
    return text.replace("{part_note}", part_note + "\n" if part_note else "").replace(
        "{transcript}", transcript
    )


class _LLMBackend:
    """Shared chunk → merge logic; subclasses implement `complete(prompt)`."""

    name = "llm"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def complete(self, prompt: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def _call(self, job: SummaryJob, prompt: str) -> str:
        job.sent_chars += len(prompt)
        job.calls += 1
        out = self.complete(prompt)
        # The LLM's output is redacted as soon as it exists, before anything keeps it.
        return redact(out)[0]

    def summarize(self, job: SummaryJob) -> str:
        chunks = job.condensed.chunks or [job.condensed.text]
        lang = job.language
        if len(chunks) == 1:
            return self._call(job, build_prompt(lang, chunks[0]))
        parts = []
        for index, chunk in enumerate(chunks, 1):
            note = PART_NOTE[lang if lang in PART_NOTE else "en"].format(i=index, n=len(chunks))
            parts.append(self._call(job, build_prompt(lang, chunk, note)))
        merged = "\n\n".join(f"--- part {i} ---\n{p}" for i, p in enumerate(parts, 1))
        return self._call(
            job, build_prompt(lang, merged, MERGE_NOTE[lang if lang in MERGE_NOTE else "en"])
        )


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The summarizer's environment: the recursion guard on, nested-session markers off."""
    env = dict(os.environ if base is None else base)
    for name in _NESTED_ENV:
        env.pop(name, None)
    env["MEMRECALL_INTERNAL"] = "1"
    env["CLAUDE_CODE_SKIP_PROMPT_HISTORY"] = "1"
    # Japanese Windows defaults to cp932; the prompt and summary are UTF-8.
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


def _one_line(text: str) -> str:
    # Already redacted: a plain cut is safe, and keeps a long token's start visible.
    return one_line(text, 200)


def _run(
    argv: list[str], prompt: str, cwd: Path, timeout: int, what: str
) -> subprocess.CompletedProcess[bytes]:
    cwd.mkdir(parents=True, exist_ok=True)
    try:
        return subprocess.run(
            argv,
            input=prompt.encode("utf-8"),
            capture_output=True,
            cwd=str(cwd),
            env=child_env(),
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise BackendUnavailable(
            f"{what} not found ({argv[0]}); install it or change the summarize settings"
        ) from exc
    except PermissionError as exc:
        raise BackendUnavailable(f"{what} is not executable ({argv[0]})") from exc
    except subprocess.TimeoutExpired as exc:  # subprocess.run has killed the child already
        raise SummarizeError(f"{what} timed out after {timeout}s") from exc


def _why_missing(program: str, cwd: Path) -> str:
    """Why `program` cannot be started, or "" when it can."""
    if not os.path.dirname(program):
        return "" if shutil.which(program) else f"{program!r} is not on PATH"
    # subprocess looks a relative path up from the cwd the backend runs in.
    where = program if os.path.isabs(program) else str(cwd / program)
    return "" if shutil.which(where) else f"no program at {program!r}"


class ClaudeBackend(_LLMBackend):
    name = "claude"

    def argv(self) -> list[str]:
        s = self.settings.summarize
        return [
            s.claude_command,
            "-p",
            "--model",
            s.model,
            "--output-format",
            "json",
            "--max-turns",
            "1",
            "--tools",
            "",
            "--no-session-persistence",
            "--settings",
            '{"disableAllHooks": true}',
        ]

    def ensure_available(self) -> None:
        why = _why_missing(self.settings.summarize.claude_command, self.settings.work_dir)
        if why:
            raise BackendUnavailable(f"claude CLI not found ({why})")

    def complete(self, prompt: str) -> str:
        proc = _run(
            self.argv(),
            prompt,
            self.settings.work_dir,
            self.settings.summarize.timeout_seconds,
            "claude",
        )
        stdout = proc.stdout.decode("utf-8", errors="replace")
        result = _parse_result(stdout)
        if proc.returncode != 0:
            detail = (
                (result or {}).get("result")
                or proc.stderr.decode("utf-8", errors="replace")
                or stdout
            )
            raise SummarizeError(
                f"claude exited with {proc.returncode}: {_one_line(redact(str(detail))[0])}"
            )
        if result is None:
            raise SummarizeError(
                f"claude printed no JSON result: {_one_line(redact(stdout)[0]) or '(nothing)'}"
            )
        if result.get("is_error") or result.get("subtype") not in (None, "success"):
            detail = result.get("result") or result.get("subtype") or "error"
            raise SummarizeError(f"claude reported an error: {_one_line(redact(str(detail))[0])}")
        text = result.get("result")
        if not isinstance(text, str):
            raise SummarizeError("claude's JSON has no text result")
        return text


def _parse_result(stdout: str) -> dict | None:
    text = stdout.strip()
    if not text:
        return None
    candidates = [text] + [ln for ln in reversed(text.splitlines()) if ln.strip().startswith("{")]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, list):  # stream-style arrays: the result message is last
            value = next(
                (v for v in reversed(value) if isinstance(v, dict) and v.get("type") == "result"),
                None,
            )
        if isinstance(value, dict):
            return value
    return None


class CommandBackend(_LLMBackend):
    name = "command"

    def _argv(self) -> list[str]:
        command = self.settings.summarize.command.strip()
        argv = shlex.split(command, posix=os.name != "nt") if command else []
        if not argv:
            raise BackendUnavailable(
                "summarize backend 'command' needs [summarize] command = \"…\" in config.toml"
            )
        return argv

    def ensure_available(self) -> None:
        why = _why_missing(self._argv()[0], self.settings.work_dir)
        if why:
            raise BackendUnavailable(f"summarize command not found ({why})")

    def complete(self, prompt: str) -> str:
        argv = self._argv()
        proc = _run(
            argv,
            prompt,
            self.settings.work_dir,
            self.settings.summarize.timeout_seconds,
            "summarize command",
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", errors="replace")
            raise SummarizeError(
                f"command exited with {proc.returncode}: "
                f"{_one_line(redact(err)[0]) or '(no stderr)'}"
            )
        return proc.stdout.decode("utf-8", errors="replace")


register_backend("claude", ClaudeBackend)
register_backend("command", CommandBackend)
register_backend("extractive", ExtractiveBackend)
