"""The one walk over a store's folder: which files under a root memrecall ever reads.

Every reader of a vault or of the summaries folder walks through here (the index, the python
search without rg, `show`, `save`, `prune`, doctor's summary count), so they all see the same
files:

- dot-folders and dot-files are skipped (`.obsidian/`, `.git/`, `.trash/`, editors' temp files);
- symlinks are never followed, to files or to folders: a link inside a vault could point
  anywhere on the disk (`~/.ssh`), or back at its own folder; rg does the same;
- regular files only: reading a FIFO named `x.md` would block the hook on every prompt;
- the root itself is what the user configured, so a root that is a symlink is followed;
- a folder that cannot be read is passed over in silence (the stores are read-only to us and
  a vault may hold folders of another user).

Files come top-down in name order (a folder's files, then each sub-folder in turn), as a
sorted `os.walk` would give them, so every reader sees one stable order.

Standard library only: the hook imports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["walk_files"]


def walk_files(
    root: Path, suffixes: tuple[str, ...] | None = (".md",)
) -> Iterator[tuple[Path, os.stat_result]]:
    """Each regular file under `root` whose name ends with one of `suffixes` (None: any
    name), with its `lstat`, by the rules above."""
    folders = [str(root)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        below: list[str] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
                elif (suffixes is None or entry.name.endswith(suffixes)) and entry.is_file(
                    follow_symlinks=False
                ):
                    yield Path(entry.path), entry.stat(follow_symlinks=False)
            except OSError:
                continue
        folders.extend(reversed(below))  # popped in name order
