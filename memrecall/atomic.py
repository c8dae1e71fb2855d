"""Crash-safe file writes and cross-process locks (stdlib + filelock: cheap to import).

Every file memrecall writes goes through `write_atomic` (temp file in the same folder,
fsync, rename), so a kill mid-write leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from filelock import FileLock, Timeout

__all__ = ["write_atomic", "write_json_atomic", "read_json", "locked", "append_line", "Timeout"]


def write_atomic(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json_atomic(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def read_json(path: Path, default: Any = None) -> Any:
    """Read JSON; a missing or corrupt file gives `default` (callers rebuild state)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default


@contextmanager
def locked(path: Path, timeout: float = 5.0) -> Iterator[None]:
    """Hold `<path>.lock` (a sidecar file) while the block runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=timeout):
        yield


def append_line(path: Path, line: str, timeout: float = 2.0) -> None:
    """Append one line under a lock, in a single write, so concurrent writers never interleave."""
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    with locked(path, timeout=timeout):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
