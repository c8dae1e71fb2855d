"""One ripgrep pass over a store root for all keywords at once.

Output form: only the matching text (`--only-matching`, `--null` after the path, line
numbers), one line per match. That says which keyword matched on which line without Python
re-scanning any text, and is 2–3× fewer bytes than whole lines (`--json` would be 10–20×
more). Patterns go longest first, so at any position the compound (`在庫同期`) wins over its
pieces (`在庫`). The few documents that rank high enough to be shown are read again for
their snippets. If no `rg` binary can be found, a pure-Python scan gives the same output.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from .walk import walk_files

if TYPE_CHECKING:
    import subprocess

RG_EXE = "rg.exe" if sys.platform == "win32" else "rg"


def find_rg() -> str | None:
    """The `rg` of the `ripgrep` package in this environment first: hooks run without the
    venv on PATH, so `shutil.which` alone would miss it."""
    # Imported here: with the index, most hooks never run rg, and shutil alone costs ~3 ms.
    import shutil
    import sysconfig

    candidates = [
        Path(sysconfig.get_path("scripts")) / RG_EXE,
        Path(sys.executable).parent / RG_EXE,
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


@dataclass
class GrepJob:
    """What to search: roots (folders or files) and file globs for folder traversal."""

    roots: list[Path]
    globs: list[str] = field(default_factory=list)


@dataclass
class GrepResult:
    # path → (line number, matched text as found in the file), one entry per match
    lines: dict[Path, list[tuple[int, str]]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    timed_out: bool = False
    engine: str = "rg"


class _Running:
    def __init__(self, process: "subprocess.Popen[bytes]", job: GrepJob) -> None:
        self.process = process
        self.job = job


# Up to this many patterns go on the command line, so every store's rg starts at once; more
# go through a temporary `--file` (still one read by every process, no stdin hand-off).
MAX_ARGV_PATTERNS = 64


def _rg_argv(rg: str, job: GrepJob, pattern_args: list[str]) -> list[str]:
    argv = [
        rg,
        "--no-config",
        "--fixed-strings",
        "--ignore-case",
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--null",
        "--color",
        "never",
        "--only-matching",
        # A user's .gitignore must not hide notes; dot-folders stay skipped (no --hidden).
        "--no-ignore",
        "--max-filesize",
        "8M",
    ]
    for glob in job.globs:
        argv += ["--glob", glob]
    argv += pattern_args
    argv += ["--"]
    argv += [str(root) for root in job.roots]
    return argv


def _parse(output: bytes, result: GrepResult) -> None:
    paths: dict[bytes, list[tuple[int, str]]] = {}
    for raw in output.split(b"\n"):
        path_bytes, sep, rest = raw.partition(b"\0")
        if not sep:
            continue
        number, colon, text = rest.partition(b":")
        if not colon or not number.isdigit():
            continue
        found = paths.get(path_bytes)
        if found is None:
            found = paths[path_bytes] = result.lines.setdefault(Path(os.fsdecode(path_bytes)), [])
        found.append((int(number), text.decode("utf-8", errors="replace").rstrip("\r")))


def grep(
    jobs: list[GrepJob], patterns: list[str], deadline: float | None = None
) -> list[GrepResult]:
    """Run one search per job, all at the same time; results in job order."""
    # Leftmost-first matching: at one position the longest pattern must be tried first.
    patterns = sorted(dict.fromkeys(p for p in patterns if p), key=len, reverse=True)
    rg = find_rg()
    if rg is None:
        return [python_scan(job, patterns, deadline) for job in jobs]
    pattern_file = None
    if len(patterns) <= MAX_ARGV_PATTERNS:
        pattern_args = [arg for p in patterns for arg in ("-e", p)]
    else:
        import tempfile

        handle, pattern_file = tempfile.mkstemp(prefix="memrecall-patterns-", suffix=".txt")
        with os.fdopen(handle, "wb") as out:
            out.write(("\n".join(patterns) + "\n").encode("utf-8"))
        pattern_args = ["--file", pattern_file]
    try:
        return _grep_all(rg, jobs, patterns, pattern_args, deadline)
    finally:
        if pattern_file:
            os.unlink(pattern_file)


def _grep_all(
    rg: str,
    jobs: list[GrepJob],
    patterns: list[str],
    pattern_args: list[str],
    deadline: float | None,
) -> list[GrepResult]:
    import subprocess

    running: list[_Running | GrepResult] = []
    for job in jobs:
        roots = [root for root in job.roots if root.exists()]
        if not roots or not patterns:
            running.append(GrepResult())
            continue
        job = GrepJob(roots, job.globs)
        try:
            process = subprocess.Popen(
                _rg_argv(rg, job, pattern_args),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            running.append(GrepResult(errors=[f"cannot run rg: {exc}"]))
            continue
        running.append(_Running(process, job))
    results: list[GrepResult] = []
    for item in running:
        if isinstance(item, GrepResult):
            results.append(item)
            continue
        results.append(_collect(item, deadline))
    return results


def _collect(item: _Running, deadline: float | None) -> GrepResult:
    import subprocess

    result = GrepResult()
    timeout = None if deadline is None else max(0.01, deadline - time.monotonic())
    try:
        out, err = item.process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        item.process.kill()
        item.process.communicate()
        result.timed_out = True
        return result
    # rg: 0 = matches, 1 = no match, 2 = error (matches printed so far are still valid).
    if item.process.returncode == 2:
        first = err.decode("utf-8", "replace").strip().splitlines()[:1]
        result.errors.append("rg: " + (first[0] if first else "error"))
    _parse(out, result)
    return result


def _walk(root: Path, globs: list[str]) -> Iterable[Path]:
    # A root may be one file (a beads export); only `*.ext` globs narrow a folder's files.
    if root.is_file():
        yield root
        return
    suffixes = tuple(g[1:] for g in globs if g.startswith("*."))
    for path, _ in walk_files(root, suffixes or None):
        yield path


def python_scan(job: GrepJob, patterns: list[str], deadline: float | None = None) -> GrepResult:
    """The same search without rg (2–8× slower): used only when no rg binary exists."""
    result = GrepResult(engine="python")
    lowered = [(p, p.casefold()) for p in patterns if p]
    for root in job.roots:
        if not root.exists():
            continue
        for path in _walk(root, job.globs):
            if deadline is not None and time.monotonic() > deadline:
                result.timed_out = True
                return result
            try:
                data = path.read_bytes()
            except OSError as exc:
                result.errors.append(f"{path}: {exc.strerror or exc}")
                continue
            if b"\0" in data[:8192] and not path.suffix == ".jsonl":
                continue
            text = data.decode("utf-8", errors="replace")
            for number, line in enumerate(text.split("\n"), start=1):
                folded = line.casefold()
                found = [(number, p) for p, low in lowered if low in folded]
                if found:
                    result.lines.setdefault(path, []).extend(found)
    return result
