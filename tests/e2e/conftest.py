"""Fixtures for the end-to-end suite: real Claude Code, a loopback model stand-in, a throw-away
HOME.

Every test here is marked `e2e` and skips with a reason when Claude Code (or tmux, for the
interactive tests) is not installed; `scripts/e2e-install` installs both.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path
from typing import Iterator

import pytest

from .support import (
    FakeAnthropic,
    Workspace,
    claude_binary,
    install_hook,
    make_workspace,
    memrecall_has,
    processes_in,
)

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude() -> Path:
    path, reason = claude_binary()
    if path is None:
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def tmux() -> str:
    exe = shutil.which("tmux")
    if not exe:
        pytest.skip(
            "tmux is not installed (scripts/e2e-install installs it with apt-get); "
            "interactive Claude Code sessions are driven through tmux"
        )
    return exe


@pytest.fixture
def ws(tmp_path: Path) -> Iterator[Workspace]:
    """A user with the small stores and memrecall's hook installed; checks nothing is left
    running."""
    workspace = make_workspace(tmp_path)
    workspace.hook_setup = install_hook(workspace.home, workspace.memrecall_env())
    if memrecall_has("index"):
        workspace.build_index()  # what a user's first prompt starts in the background
    yield workspace
    deadline = time.monotonic() + 5
    left = processes_in(tmp_path)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = processes_in(tmp_path)
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes left behind by the test: {left}"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    """This test's own model stand-in on a free loopback port (a thread; stopped after the test)."""
    with FakeAnthropic() as server:
        yield server
