"""Stale-memory warnings: a memory about files the project has changed since it was written.

For each memory about to be injected, the files it names — a summary's `files:` list and
paths in its text, paths in a note's or an issue's text — are looked up in the prompt's
project (the hook's `cwd`): in its git history when the cwd is inside a repository (one
`git log` for all memories, under a timeout well inside the hook's remaining budget), by
modification time otherwise or when git cannot be run. The injected entry then says so in
at most two short lines ("`internal/payment/client.go` changed 3 times since this note"), so
Claude checks the code before trusting the memory. Git missing, slow or failing means no
line, never an error.

Ranking: of two injected memories on one topic (a matched keyword in common), a stale one
follows a newer one when its score is within 10 % (STALE_FACTOR), as the gate orders them
otherwise; nothing else moves.

On the hook's path: standard library only, imported only when there is something to inject.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .search import Hit

MAX_PATHS_PER_HIT = 8
MAX_PATHS = 24
MAX_LINES_PER_HIT = 2
# git gets at most this long, and only what the hook's deadline leaves after a margin for
# rendering and the log.
GIT_TIMEOUT_CAP = 0.4
BUDGET_MARGIN = 0.15
STALE_FACTOR = 0.9
HEAD_BYTES = 16384

# A relative path with at least one folder and a file extension (`internal/payment/client.go`,
# `src/決済/client.ts`); not inside a URL or an absolute path, which start with `/`.
_RELATIVE = re.compile(
    r"(?<![\w/.:@~-])(?:\./)?((?:[\w@.-]+/)+[\w@.-]*\w\.[A-Za-z0-9]{1,10})(?![\w/-])"
)
_ABSOLUTE = re.compile(r"(?<![\w/.:~-])(/(?:[\w@.-]+/)+[\w@.-]*\w\.[A-Za-z0-9]{1,10})(?![\w/-])")


@dataclass
class _Memory:
    hit: Hit
    since: datetime
    noun: str  # this note | this summary | this issue
    paths: list[str] = field(default_factory=list)  # relative to the project's cwd


@dataclass
class Change:
    path: str
    commits: int = 0  # git: commits that touched it since the memory's date
    status: str = "changed"  # changed | renamed | deleted | modified (mtime, no git)
    renamed_to: str = ""
    modified: datetime | None = None

    def line(self, noun: str) -> str:
        if self.status == "renamed":
            return f"`{self.path}` was renamed to `{self.renamed_to}` since {noun}"
        if self.status == "deleted":
            return f"`{self.path}` was deleted since {noun}"
        if self.status == "modified" and self.modified is not None:
            return (
                f"`{self.path}` was modified since {noun} (on {self.modified.date().isoformat()})"
            )
        times = "once" if self.commits == 1 else f"{self.commits} times"
        return f"`{self.path}` changed {times} since {noun}"

    @property
    def weight(self) -> tuple[int, int]:
        return (self.status in ("renamed", "deleted"), self.commits)


def _noun(hit: Hit) -> str:
    from .stores.rules import rules_for

    if rules_for(hit.store).by_id:
        return "this issue"
    return "this summary" if hit.store == "summaries" else "this note"


def _same_project(recorded: str, cwd: str) -> bool:
    a, b = os.path.normpath(recorded), os.path.normpath(cwd)
    return a == b or b.startswith(a + os.sep) or a.startswith(b + os.sep)


def _relative(path: str, cwd: str) -> str | None:
    """A path from a memory as a path inside the project, or None when it is outside."""
    path = path.strip().strip("`'\"")
    if not path:
        return None
    if os.path.isabs(path):
        root = os.path.normpath(cwd)
        full = os.path.normpath(path)
        if not full.startswith(root + os.sep):
            return None
        path = full[len(root) + 1 :]
    path = os.path.normpath(path)
    if path.startswith("..") or os.path.isabs(path) or path == ".":
        return None
    return path.replace(os.sep, "/")


def _named_paths(hit: Hit, cwd: str) -> list[str] | None:
    """Files the memory names, relative to `cwd`; None when it is about another project."""
    from .frontmatter_lite import as_list, parse, split
    from .stores.rules import rules_for

    named: list[str] = []
    if rules_for(hit.store).by_id:
        text = "\n".join(
            [hit.title, hit.close_reason, hit.snippet, *(line for _, line in hit.lines)]
        )
    else:
        from .stores.base import read_head

        head = read_head(hit.path, HEAD_BYTES)
        front, text, _ = split(head)
        if front is not None:
            try:
                meta = parse(front)
            except Exception:  # a broken frontmatter is no reason to lose the prompt
                meta = {}
            recorded = meta.get("cwd")
            if (
                isinstance(recorded, str)
                and recorded.strip()
                and not _same_project(recorded.strip(), cwd)
            ):
                return None  # a summary of a session in another project: its paths are not ours
            named += as_list(meta.get("files"))
    named += [m.group(1) for m in _RELATIVE.finditer(text)]
    named += [m.group(1) for m in _ABSOLUTE.finditer(text)]
    paths: list[str] = []
    for raw in named:
        path = _relative(raw, cwd)
        if path and path not in paths:
            paths.append(path)
    return paths[:MAX_PATHS_PER_HIT]


def _git_top(cwd: str) -> Path | None:
    """The repository folder holding `cwd`, found by looking for `.git` (no process)."""
    here = Path(cwd)
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_log(
    top: Path, cwd: str, paths: list[str], since: datetime, timeout: float
) -> dict[str, list[tuple[int, str, str]]] | None:
    """Per path (as given): (commit time, status letter, new name) of each commit since
    `since` that touched it, newest first. None when git cannot answer in time."""
    prefix = os.path.relpath(cwd, top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    specs = {prefix + p: p for p in paths}
    args = [
        "git",
        "-C",
        str(top),
        "-c",
        "core.quotepath=false",
        # The prompt's project is not ours to trust: none of its config may run a program.
        "-c",
        "core.fsmonitor=false",
        "log",
        "--no-ext-diff",
        "--no-textconv",
        "-M",
        "--full-diff",
        f"--since={since.isoformat()}",
        "--format=%x00%ct",
        "--name-status",
        "--",
        *specs,
    ]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
    try:
        proc = subprocess.run(
            args,
            capture_output=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise _NoGit from None
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    found: dict[str, list[tuple[int, str, str]]] = {}
    for chunk in proc.stdout.decode("utf-8", "replace").split("\x00")[1:]:
        lines = chunk.strip("\n").split("\n")
        try:
            stamp = int(lines[0].strip())
        except (ValueError, IndexError):
            continue
        for line in lines[1:]:
            parts = line.split("\t")
            if len(parts) < 2 or not parts[0]:
                continue
            status, old = parts[0][0], parts[1]
            if old in specs:
                new = parts[2][len(prefix) :] if status in "RC" and len(parts) > 2 else ""
                found.setdefault(specs[old], []).append((stamp, status, new))
    return found


class _NoGit(Exception):
    """git is not installed (not on PATH)."""


def _from_git(log: dict[str, list[tuple[int, str, str]]], memory: _Memory) -> list[Change]:
    changes = []
    cutoff = memory.since.timestamp()
    for path in memory.paths:
        touched = [c for c in log.get(path, []) if c[0] > cutoff]
        if not touched:
            continue
        _, status, new = touched[0]  # the newest says what the file is now
        change = Change(path, commits=len(touched))
        if status == "R" and new:
            change.status, change.renamed_to = "renamed", new
        elif status == "D":
            change.status = "deleted"
        changes.append(change)
    return changes


def _from_mtime(cwd: str, memory: _Memory) -> list[Change]:
    changes = []
    for path in memory.paths:
        try:
            mtime = os.stat(os.path.join(cwd, path)).st_mtime
        except (OSError, ValueError):
            continue
        if mtime > memory.since.timestamp():
            moment = datetime.fromtimestamp(mtime, memory.since.tzinfo)
            changes.append(Change(path, status="modified", modified=moment))
    return changes


def check(hits: list[Hit], cwd: str, deadline: float) -> dict[str, list[str]]:
    """The warning lines per hit key (at most MAX_LINES_PER_HIT each), for the hits that
    name files changed since their date. Never raises; an empty dict when there is nothing
    to say or no time to find out."""
    try:
        return _check(hits, cwd, deadline)
    except Exception:
        return {}


def _check(hits: list[Hit], cwd: str, deadline: float) -> dict[str, list[str]]:
    if not cwd or not os.path.isdir(cwd):
        return {}
    memories: list[_Memory] = []
    budget = MAX_PATHS
    for hit in hits:
        if hit.date is None or budget <= 0 or time.monotonic() > deadline - BUDGET_MARGIN:
            continue
        paths = _named_paths(hit, cwd)
        if paths:
            memories.append(_Memory(hit, hit.date, _noun(hit), paths[:budget]))
            budget -= len(paths[:budget])
    if not memories:
        return {}
    top = _git_top(cwd)
    log = None
    if top is not None:
        timeout = min(GIT_TIMEOUT_CAP, deadline - time.monotonic() - BUDGET_MARGIN)
        if timeout <= 0.02:
            return {}
        paths = list(dict.fromkeys(p for m in memories for p in m.paths))
        try:
            log = _git_log(top, cwd, paths, min(m.since for m in memories), timeout)
        except _NoGit:
            log = None  # no git on PATH: modification times answer, as outside a repository
        else:
            if log is None:
                return {}  # git slow or failing: say nothing rather than guess
    lines: dict[str, list[str]] = {}
    for memory in memories:
        changes = _from_git(log, memory) if log is not None else _from_mtime(cwd, memory)
        changes.sort(key=lambda c: c.weight, reverse=True)
        if changes:
            lines[memory.hit.key] = [c.line(memory.noun) for c in changes[:MAX_LINES_PER_HIT]]
    return lines


def rerank(hits: list[Hit], stale: dict[str, list[str]]) -> list[Hit]:
    """The hits in the gate's order, except that a stale hit for which a newer hit shares one
    of its keywords moves down past the hits that outscore STALE_FACTOR of its score: a
    close call goes to the memory written after the change."""
    if not stale:
        return hits

    def topics(hit: Hit) -> set[str]:
        return {t.casefold() for t in (hit.topics or hit.matched)}

    def fresher_exists(hit: Hit) -> bool:
        return any(
            other is not hit
            and other.date is not None
            and hit.date is not None
            and other.date > hit.date
            and bool(topics(other) & topics(hit))
            for other in hits
        )

    order = list(hits)
    for hit in [h for h in hits if h.key in stale and fresher_exists(h)]:
        at = order.index(hit)
        demoted = (hit.exact_id, hit.acc * STALE_FACTOR)
        to = at
        while to + 1 < len(order) and (order[to + 1].exact_id, order[to + 1].acc) > demoted:
            to += 1
        order.insert(to, order.pop(at))
    return order
