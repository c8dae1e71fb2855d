"""Regular expressions compiled once per Python, not once per process.

The hook is a new process on every prompt, and `re` compiles every module-level pattern again
in each one: a character class of the CJK ranges costs milliseconds (the engine builds a map of
all 65,536 BMP characters), the lists of request phrases more. Together that was 30–50 ms of a
hook of about 230 ms (BENCHMARKS.md, "Round seventeen"). What `re` compiles a pattern into is
a list of integers for its C engine; this module keeps those lists in one marshal file under
`$MEMRECALL_HOME/cache/` and hands them straight to the engine on the next start, which takes
microseconds.

Safe to delete at any time. The file is keyed by the full pattern text and its flags, so an edited
pattern is simply a miss; it holds the exact Python version and the engine's format number
(`_sre.MAGIC`), and any other version ignores it. The engine checks every program it is given
before it runs it (CPython's `_validate`), so a damaged file cannot crash the process: it is a
miss, and the patterns are compiled as usual. Only constant patterns go through here; a pattern
built from a prompt's words would grow the file without end. Every command reads the file; only
the hook writes it, after a prompt it answered, and only when it compiled something new.
`read_stamped` and `write_stamped` serve the glossary's cache the same way (glossary.py).
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]  # the engine `re` drives, built in
import marshal
import os
import re
import sys
from pathlib import Path
from typing import Any, AnyStr

# Beyond this many patterns the file is rewritten with only the ones this process used: old
# patterns of an earlier memrecall version stop travelling along.
MAX_ENTRIES = 1000

_Entry = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
_Key = tuple[str | bytes, int]

_loaded: dict[_Key, _Entry] | None = None
_used: dict[_Key, _Entry] = {}
# How many patterns this process took from the file, and how many it compiled itself.
hits = 0
misses = 0


def _stamp() -> str:
    return f"{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}"


def cache_path(home: Path | None = None) -> Path:
    return cache_file("regex", home)


def cache_file(name: str, home: Path | None = None) -> Path:
    """`name`'s cache file for this Python in `home`; by default the home the settings will
    use, which is needed before they are loaded: the patterns are compiled when their modules
    are imported, config's too (hence home.py, not config)."""
    if home is None:
        from .home import home_from_env

        home = home_from_env(os.environ)
    return home / "cache" / f"{name}-{sys.implementation.cache_tag}.marshal"


def compile(pattern: AnyStr, flags: int | re.RegexFlag = 0) -> re.Pattern[AnyStr]:
    """`re.compile`, from the cache when this Python compiled the same pattern before."""
    global hits, misses
    flags = int(flags)
    key = (pattern, flags)
    entry = _entries().get(key)
    if entry is not None:
        compiled = _rebuild(pattern, entry)
        if compiled is not None:
            _used[key] = entry
            hits += 1
            return compiled
    misses += 1
    compiled, entry = _compile_fresh(pattern, flags)
    if entry is not None:
        _used[key] = entry
    return compiled


class LazyPattern:
    """A pattern compiled the first time it is used, for patterns a process may well not need:
    redaction's (most prompts use few of them) and a prompt's word matchers (most of its words
    are on no candidate's line). `kept`: through the file, for a constant pattern; a pattern
    built from a prompt's words is compiled with plain `re`, never kept."""

    __slots__ = ("pattern", "flags", "kept", "_compiled")

    def __init__(self, pattern: str, flags: int = 0, *, kept: bool = True) -> None:
        self.pattern = pattern
        self.flags = flags
        self.kept = kept
        self._compiled: re.Pattern[str] | None = None

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = (compile if self.kept else re.compile)(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, *bounds: int) -> re.Match[str] | None:
        return self.compiled().search(text, *bounds)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)


def _entries() -> dict[_Key, _Entry]:
    global _loaded
    if _loaded is None:
        _loaded = read_stamped(cache_path(), _stamp())
    return _loaded


def read_stamped(path: Path, stamp: object) -> dict[Any, Any]:
    """The entries of a cache file written by `write_stamped` with this stamp; {} when it is
    missing, unreadable, of another format or stamp (a cache is optional: work as usual)."""
    try:
        found, entries = marshal.loads(path.read_bytes())
        if found == stamp and isinstance(entries, dict):
            return entries
    except Exception:
        pass
    return {}


def write_stamped(path: Path, stamp: object, entries: dict[Any, Any]) -> None:
    """Replace the cache file atomically; never fails (a cache is optional)."""
    try:
        from .atomic import write_atomic

        payload: Any = (stamp, entries)
        write_atomic(path, marshal.dumps(payload))
    except Exception:
        pass


def _rebuild(pattern: AnyStr, entry: Any) -> re.Pattern[AnyStr] | None:
    try:
        final_flags, code, groups, groupindex, indexgroup = entry
        compiled: re.Pattern[AnyStr] = _sre.compile(
            pattern, final_flags, code, groups, groupindex, indexgroup
        )
        return compiled
    except Exception:  # a damaged entry: the engine refused its program
        return None


def _compile_fresh(pattern: AnyStr, flags: int) -> tuple[re.Pattern[AnyStr], _Entry | None]:
    """What `re._compiler.compile` does (the same in Python 3.11–3.13), keeping the program."""
    try:
        from re import _compiler, _parser  # type: ignore[attr-defined]

        parsed = _parser.parse(pattern, flags)
        code = _compiler._code(parsed, flags)
        state = parsed.state
        groupindex = dict(state.groupdict)
        indexgroup: list[str | None] = [None] * state.groups
        for name, number in groupindex.items():
            indexgroup[number] = name
        entry: _Entry = (
            int(flags | state.flags),
            [int(op) for op in code],
            state.groups - 1,
            groupindex,
            tuple(indexgroup),
        )
        compiled = _rebuild(pattern, entry)
        if compiled is not None:
            return compiled, entry
    except Exception:  # another Python's internals: no cache, plain `re`
        pass
    return re.compile(pattern, flags), None


def save(home: Path | None = None) -> None:
    """Write the file if this process compiled patterns it lacked (or whose entry was damaged);
    never fails (a cache is optional). Only the hook calls it, after a prompt it answered: a
    command that failed on bad input leaves the home as it found it."""
    loaded = _entries()
    if all(loaded.get(key) == entry for key, entry in _used.items()):
        return
    merged = dict(loaded)
    merged.update(_used)
    if len(merged) > MAX_ENTRIES:
        merged = dict(_used)
    write_stamped(cache_path(home), _stamp(), merged)
