"""Shared fixtures: every test gets its own MEMRECALL_HOME and no inherited MEMRECALL_* vars."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ROOMY_DEADLINE_MS = "8000"  # the configuration's ceiling
CORPUS = Path(os.environ.get("MEMRECALL_TEST_CORPUS", REPO.parent / "shared" / "corpus"))


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("MEMRECALL_"):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "memrecall-home"
    home.mkdir()
    monkeypatch.setenv("MEMRECALL_HOME", str(home))
    # The index is used when a test builds one, but no hook may start a detached background
    # build into a tmp folder that is gone a moment later; tests/test_index.py opts back in.
    monkeypatch.setenv("MEMRECALL_INDEX", "manual")
    # Tests are not about time unless they say so: a busy 2-core machine must not turn an
    # answer into "deadline". The few that test the deadline set their own (env beats file).
    monkeypatch.setenv("MEMRECALL_DEADLINE_MS", ROOMY_DEADLINE_MS)
    # Never this machine's own transcripts: stats and usage read what a test's log points at.
    transcripts = tmp_path / "claude-projects"
    transcripts.mkdir()
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(transcripts))
    return home


@pytest.fixture
def corpus() -> Path:
    """The shared real-data corpus; tests using it skip cleanly when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return CORPUS
