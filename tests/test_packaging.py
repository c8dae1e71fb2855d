"""A real (non-editable) wheel carries the shipped stopwords and templates and finds them.

Slow-ish (one wheel build, ~2 s) but in the default run: an editable install hides exactly
the mistakes this catches (package-dir mappings, package-data globs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_IGNORE = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "tests", ".e2e"
)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("setuptools", minversion="77")
    # Build from a copy: an in-tree build would drop build/ and egg-info into the checkout.
    source = tmp_path_factory.mktemp("src") / "memrecall"
    shutil.copytree(REPO, source, ignore=_IGNORE)
    out = tmp_path_factory.mktemp("wheelhouse")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    wheels = list(out.glob("memrecall-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@pytest.fixture(scope="module")
def unpacked(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_ships_stopwords_identical_to_the_repository(wheel: Path) -> None:
    assert "memrecall/shipped/stopwords.txt" in _names(wheel)
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("memrecall/shipped/stopwords.txt")
    assert shipped == (REPO / "stopwords.txt").read_bytes()


def test_wheel_ships_every_template(wheel: Path) -> None:
    templates = sorted(p.name for p in (REPO / "templates").glob("*.md"))
    if not templates:
        pytest.skip("templates/ has no .md files yet")
    missing = [t for t in templates if f"memrecall/templates/{t}" not in _names(wheel)]
    assert missing == []


def test_wheel_declares_the_console_script(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
        text = archive.read(entry_points).decode()
    assert "memrecall = memrecall.__main__:main" in text


def _run_unpacked(
    unpacked: Path, *args: str, stdin: bytes = b""
) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(unpacked)
    # cwd outside the checkout, or `-c` would import the repository's memrecall/.
    return subprocess.run(
        [sys.executable, *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=unpacked.parent,
        timeout=60,
        check=False,
    )


def test_installed_package_finds_its_own_files(unpacked: Path) -> None:
    done = _run_unpacked(
        unpacked,
        "-c",
        "import memrecall, memrecall.resources as r\n"
        "print(memrecall.__file__)\n"
        "print(r.shipped_stopwords())\n"
        "print(r.templates_dir())\n",
    )
    assert done.returncode == 0, done.stderr
    package_file, stopwords, templates = (Path(p) for p in done.stdout.decode().splitlines())
    package = (unpacked / "memrecall").resolve()
    assert package_file.resolve().parent == package
    assert stopwords.resolve() == package / "shipped" / "stopwords.txt" and stopwords.is_file()
    if list((REPO / "templates").glob("*.md")):
        assert templates.resolve() == package / "templates" and any(templates.glob("*.md"))


def test_installed_tokenize_applies_shipped_stopwords(unpacked: Path) -> None:
    done = _run_unpacked(
        unpacked,
        "-m",
        "memrecall",
        "tokenize",
        "-b",
        "regex",
        stdin="please fix the 処理 ファイル、PAY-1234 の決済".encode(),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == ["PAY-1234", "決済"]
