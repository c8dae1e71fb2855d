"""Output helpers shared by the operations commands (prune, stopwords, stats, init, doctor).

Japanese Windows consoles default to cp932 and a `PYTHONIOENCODING` or `LANG=C` can force
something narrower still; memrecall's words, paths and titles are Japanese, so every stream
is switched to UTF-8 before anything is printed.
"""

from __future__ import annotations

import io
import json
import sys
from typing import Any


def utf8_stdio() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, io.UnsupportedOperation):
            pass  # a test harness or an exotic wrapper: leave it as it is
    try:
        sys.stdin.reconfigure(encoding="utf-8", errors="replace")  # type: ignore[union-attr]
    except (AttributeError, ValueError, io.UnsupportedOperation):
        pass


def utf8_arg(value: str) -> str:
    """Undo a non-UTF-8 locale's decoding of argv (`LANG=C` without UTF-8 mode leaves
    lone surrogates, which cannot be written to a UTF-8 file)."""
    if not any("\udc80" <= ch <= "\udcff" for ch in value):
        return value
    try:
        raw = value.encode(sys.getfilesystemencoding(), "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "replace").decode("utf-8")
    return raw.decode("utf-8", "replace")


def err(message: str) -> None:
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()


def print_json(value: Any) -> None:
    out(json.dumps(value, ensure_ascii=False, indent=1, default=str))


def console(stderr: bool = False) -> Any:
    import os

    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not (hasattr(stream, "isatty") and stream.isatty()):
        # Piped or captured: Rich would assume 80 columns and fold every path in two.
        width = int(os.environ.get("COLUMNS", "0") or 0) or 160
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


def show_settings_warnings(settings: Any) -> None:
    for warning in settings.warnings:
        err(f"Warning: {warning}")
