"""Where memrecall keeps its files: `$MEMRECALL_HOME`, else the platform's data folder.

Stdlib only and importing nothing of memrecall: config reads it to build the settings, and the
compiled-pattern cache (regexcache.py) reads it while config itself is still being imported.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping


def expand(value: str) -> Path:
    """A path as the user wrote it: `~` and `$VARS` expanded."""
    return Path(os.path.expandvars(os.path.expanduser(value)))


def default_home() -> Path:
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "memrecall"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "memrecall"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "memrecall"


def home_from_env(env: Mapping[str, str]) -> Path:
    """The home the environment names: `MEMRECALL_HOME`, else the default."""
    return expand(env["MEMRECALL_HOME"]) if env.get("MEMRECALL_HOME") else default_home()
