"""memrecall's own error family; the CLI maps these to exit codes in one place."""

from __future__ import annotations


class MemrecallError(Exception):
    """Base class: a problem the user can fix, shown as one line `Error: …`."""

    exit_code = 1


class UsageError(MemrecallError):
    """Bad command-line usage (unknown backend, malformed option value)."""

    exit_code = 2


class ConfigError(MemrecallError):
    """A setting that cannot be used."""


class BackendUnavailable(MemrecallError):
    """A chosen backend's library or program is missing."""


class StoreError(MemrecallError):
    """A store cannot be read."""


class SummarizeError(MemrecallError):
    """A summarizer backend failed."""
