"""Crash-safe file writes and cross-process locks (stdlib + filelock: cheap to import).

Every file memrecall writes goes through `write_atomic` (temp file in the same folder,
fsync, rename), so a kill mid-write leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import errno
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

__all__ = [
    "write_atomic",
    "write_json_atomic",
    "read_json",
    "locked",
    "run_lock",
    "append_line",
    "LockTimeout",
    "numbered",
    "free_name",
]


class LockTimeout(TimeoutError):
    """Another process held the lock for longer than the caller was willing to wait."""


def write_atomic(path: Path, data: str | bytes, *, exclusive: bool = False) -> None:
    """`exclusive`: never replace an existing file; FileExistsError if `path` exists, even
    when another process creates it while this one writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    # What tempfile.mkstemp does (exclusive create, 0600, dot-name beside the target), without
    # its ~5 ms import on the hook's path.
    tmp = str(path.parent / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if exclusive:
            _link_new(tmp, path)
        else:
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _link_new(tmp: str, path: Path) -> None:
    """Give the finished temp file its name only if that name is free: a hard link is
    created atomically or not at all, where a rename would replace what is there."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:
        # No hard links on this file system (FAT, some network shares): check, then rename.
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def numbered(
    path: Path, *, first: int = 1, last: int = 999, sep: str = ".", keep_suffix: bool = True
) -> Iterator[Path]:
    """`path`, then the names beside it for when it is taken, numbered `first` to `last`:
    `note.1.md`, `note.2.md`…; `sep="-"` gives `note-2.md`; without `keep_suffix` the number
    ends the whole name (`settings.json.1`)."""
    yield path
    for n in range(first, last + 1):
        name = f"{path.stem}{sep}{n}{path.suffix}" if keep_suffix else f"{path.name}{sep}{n}"
        yield path.with_name(name)


def free_name(
    path: Path, *, first: int = 1, last: int = 999, sep: str = ".", keep_suffix: bool = True
) -> Path:
    """The first of `numbered(path, …)` that nothing occupies, not even a dangling symlink;
    FileExistsError when every one is taken.

    Checking is not claiming: this suits a name only one process picks (under a run lock).
    Where others may race for it, try `write_atomic(…, exclusive=True)` over `numbered`."""
    for candidate in numbered(path, first=first, last=last, sep=sep, keep_suffix=keep_suffix):
        if not os.path.lexists(candidate):
            return candidate
    raise FileExistsError(errno.EEXIST, "no free name left beside it", str(path))


def write_json_atomic(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def read_json(path: Path, default: Any = None) -> Any:
    """Read JSON; a missing or corrupt file gives `default` (callers rebuild state)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return default


@contextmanager
def locked(path: Path, timeout: float = 5.0) -> Iterator[None]:
    """Hold `<path>.lock` (a sidecar file) while the block runs.

    These short locks guard the recall log and per-session state, which the hook touches on
    every prompt. On POSIX they are a plain `fcntl.flock`: importing filelock 4.x costs
    ~65 ms, more than the rest of the hook's imports together. Every writer of these files
    goes through this function, so one mechanism guards each file. Elsewhere (and for the
    long-held run locks below) the `filelock` library does the work.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = str(path) + ".lock"
    if os.name == "posix":
        with _posix_flock(lock_path, timeout):
            yield
        return
    from filelock import FileLock, Timeout

    try:
        with FileLock(lock_path, timeout=timeout):
            yield
    except Timeout as exc:
        raise LockTimeout(f"timed out waiting for {lock_path}") from exc


@contextmanager
def _posix_flock(lock_path: str, timeout: float) -> Iterator[None]:
    import fcntl
    import time

    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        give_up = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= give_up:
                    raise LockTimeout(f"timed out waiting for {lock_path}") from None
                time.sleep(0.005)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def run_lock(path: Path, timeout: float = 0.0) -> Iterator[None]:
    """A long-held lock for whole runs (summarize, prune): filelock on every platform."""
    from filelock import FileLock, Timeout

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(path) + ".lock", timeout=timeout):
            yield
    except Timeout as exc:
        raise LockTimeout(f"another memrecall run holds {path}.lock") from exc


def append_line(path: Path, line: str, timeout: float = 2.0) -> None:
    """Append one line under a lock, in a single write, so concurrent writers never interleave."""
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    with locked(path, timeout=timeout):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
