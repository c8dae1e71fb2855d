"""memrecall's own error family; the CLI maps these to exit codes in one place."""

from __future__ import annotations


class MemrecallError(Exception):
    """Base class: a problem the user can fix, shown as one line `Error: …`."""

    exit_code = 1


class UsageError(MemrecallError):
    """Bad command-line usage (unknown backend, malformed option value)."""

    exit_code = 2


class BackendUnavailable(MemrecallError):
    """A chosen backend's library or program is missing."""


class SummarizeError(MemrecallError):
    """A summarizer backend failed."""


def unexpected(exc: BaseException) -> int:
    """Anything no command turned into a MemrecallError (a folder where a file should be, a
    full disk, an overflowing date…): one line `Error: …` and exit 1, never a traceback.
    `MEMRECALL_DEBUG=1` shows the traceback for a bug report."""
    import os
    import sys

    if os.environ.get("MEMRECALL_DEBUG"):
        import traceback

        traceback.print_exception(exc)
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        message = f"{exc.strerror}{where}"
    else:
        message = f"unexpected {exc.__class__.__name__}: {exc}"
    message = " ".join(message.split())[:500]
    sys.stderr.write(f"Error: {message} (MEMRECALL_DEBUG=1 shows the details)\n")
    return 1
