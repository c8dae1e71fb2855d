"""Document counts per store root, for rarity (IDF). Cached for an hour: an exact count
needs a tree walk, which the hook should not pay on every prompt."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ..atomic import read_json, write_json_atomic
from ..grep import find_rg

TTL_SECONDS = 3600


def _count(root: Path, glob: str) -> int:
    rg = find_rg()
    if rg:
        try:
            done = subprocess.run(
                [rg, "--no-config", "--files", "--no-ignore", "--glob", glob, "--", str(root)],
                capture_output=True,
                timeout=5,
                check=False,
            )
            return done.stdout.count(b"\n")
        except (OSError, subprocess.TimeoutExpired):
            pass
    from ..walk import walk_files

    # Counted as search walks: dot-folders skipped, symlinks not followed.
    return sum(1 for _ in walk_files(root, (glob.lstrip("*"),)))


def cached_count(root: Path, glob: str, cache_dir: Path) -> int:
    cache_file = cache_dir / "doc-counts.json"
    cache = read_json(cache_file, {})
    if not isinstance(cache, dict):
        cache = {}
    key = f"{root}|{glob}"
    entry = cache.get(key)
    now = time.time()
    if isinstance(entry, dict) and now - float(entry.get("at", 0)) < TTL_SECONDS:
        return int(entry.get("count", 0))
    count = _count(root, glob)
    cache[key] = {"count": count, "at": now}
    try:
        write_json_atomic(cache_file, cache)
    except OSError:
        pass  # a read-only home only costs a recount next time
    return count
