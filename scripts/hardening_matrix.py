#!/usr/bin/env python3
"""Run the hook, CLI and stored-text hardening matrices and print their case tables.

Usage: .venv/bin/python scripts/hardening_matrix.py [pytest args]
(The same tables print at the end of any pytest run that includes these files.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

if __name__ == "__main__":
    files = [
        "tests/test_hardening_hook.py",
        "tests/test_hardening_cli.py",
        "tests/test_stored_text.py",
    ]
    raise SystemExit(
        subprocess.call(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files, *sys.argv[1:]],
            cwd=ROOT,
        )
    )
