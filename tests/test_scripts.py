"""scripts/_venv.sh: a rerun reuses a current environment instead of reinstalling."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_venv(tmp_path):
    """A venv whose python only records how it was called, so no real pip runs."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    calls = tmp_path / "calls.log"
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    python.chmod(0o755)
    memrecall = venv / "bin" / "memrecall"
    memrecall.write_text("#!/bin/sh\n")
    memrecall.chmod(0o755)
    return venv, calls


def _source_venv(venv: Path, extras: str = "test") -> None:
    env = {**os.environ, "MEMRECALL_VENV": str(venv), "MEMRECALL_EXTRAS": extras}
    subprocess.run(["bash", "-c", f"source {ROOT / 'scripts' / '_venv.sh'}"], env=env, check=True)


def _installs(calls: Path) -> int:
    if not calls.exists():
        return 0
    return sum("install" in line and "-e" in line for line in calls.read_text().splitlines())


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_rerun_skips_pip_until_dependencies_or_extras_change(fake_venv):
    venv, calls = fake_venv
    _source_venv(venv)
    assert _installs(calls) == 1
    _source_venv(venv)
    _source_venv(venv)
    assert _installs(calls) == 1, "a current venv was reinstalled"
    _source_venv(venv, extras="dev")
    assert _installs(calls) == 2, "new extras must be installed"


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_stamp_from_other_dependencies_reinstalls(fake_venv):
    venv, calls = fake_venv
    _source_venv(venv)
    stamp = venv / ".memrecall-install"
    stamp.write_text(stamp.read_text().replace("[test]", "[test] stale"))
    _source_venv(venv)
    assert _installs(calls) == 2
