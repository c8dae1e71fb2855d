"""Keyword analysers behind one registry: the caller never knows which one runs.

Each factory imports its heavy library only when called, so a backend that is not chosen
costs nothing.
"""

from __future__ import annotations

from typing import Callable

from ..errors import BackendUnavailable, UsageError
from .base import Analyzer, Term

__all__ = ["Analyzer", "Term", "BACKENDS", "CHOICES", "check_backend_name", "resolve"]


def _sudachi() -> Analyzer:
    from .sudachi import SudachiAnalyzer

    return SudachiAnalyzer()


def _mecab() -> Analyzer:
    from .mecab import MecabAnalyzer

    return MecabAnalyzer()


def _regex() -> Analyzer:
    from .regex import RegexAnalyzer

    return RegexAnalyzer()


BACKENDS: dict[str, Callable[[], Analyzer]] = {
    "sudachi": _sudachi,
    "mecab": _mecab,
    "regex": _regex,
}
AUTO_ORDER = ("sudachi", "mecab", "regex")
CHOICES = ("auto", *BACKENDS, "command:<program>")


def check_backend_name(name: str) -> None:
    """UsageError unless `name` is a backend memrecall knows; cheap, so callers can check
    before reading input or loading a dictionary."""
    name = name.strip()
    if name.startswith("command:") or name.lower() in ("auto", *BACKENDS):
        return
    raise UsageError(f"unknown tokenizer backend {name!r}; choose one of: {', '.join(CHOICES)}")


def resolve(name: str, timeout: float | None = None) -> tuple[Analyzer, list[str]]:
    """Return the analyser for `name` and notes about any fallback taken. `timeout` bounds
    an external (`command:`) analyser; the hook passes what is left of its deadline."""
    name = name.strip()
    if name.startswith("command:"):
        from .command import CommandAnalyzer

        program = name[len("command:") :].strip()
        if timeout is None:
            return CommandAnalyzer(program), []
        return CommandAnalyzer(program, timeout=timeout), []
    key = name.lower()
    if key == "auto":
        notes: list[str] = []
        for candidate in AUTO_ORDER:
            try:
                return BACKENDS[candidate](), notes
            except BackendUnavailable as exc:
                notes.append(f"tokenizer {candidate} unavailable ({exc}); falling back")
        raise AssertionError("the regex backend has no dependencies")  # pragma: no cover
    check_backend_name(name)
    return BACKENDS[key](), []
