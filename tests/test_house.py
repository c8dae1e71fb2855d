"""The house rules the README promises contributors: every line within the project's limit
([tool.ruff] line-length) and mypy's verdict clean ([tool.mypy]). Both run as subprocesses of
the installed tools, so a new long line or type error fails the suite, not a reviewer's eye."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHECKED = ["memrecall", "tests", "scripts"]


def _tool(module: str) -> list[str]:
    try:
        __import__(module)
    except ImportError:
        pytest.skip(f"{module} is not installed (pip install -e '.[test]')")
    return [sys.executable, "-m", module]


def test_no_line_is_longer_than_the_project_allows() -> None:
    done = subprocess.run(
        [*_tool("ruff"), "check", "--no-cache", "--select", "E501", "--output-format",
         "concise", *CHECKED],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_mypy_finds_no_type_error() -> None:
    done = subprocess.run(
        [*_tool("mypy"), "--no-incremental"],
        cwd=REPO, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
