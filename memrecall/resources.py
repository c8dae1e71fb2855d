"""Locate files shipped with memrecall, in a source checkout and in an installed wheel.

The repository keeps `stopwords.txt` and `templates/` at the top level; pyproject maps them
into the wheel as the `memrecall.shipped` and `memrecall.templates` packages. An editable
install or a plain checkout finds them next to the package instead.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_CHECKOUT_ROOT = _PACKAGE_DIR.parent


def _first_existing(*candidates: Path) -> Path:
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return candidates[0]


def shipped_stopwords() -> Path:
    return _first_existing(
        _PACKAGE_DIR / "shipped" / "stopwords.txt", _CHECKOUT_ROOT / "stopwords.txt"
    )


def templates_dir() -> Path:
    return _first_existing(_PACKAGE_DIR / "templates", _CHECKOUT_ROOT / "templates")


def template(name: str) -> str:
    return (templates_dir() / name).read_text(encoding="utf-8")


def shipped_generic() -> Path:
    return _PACKAGE_DIR / "generic.txt"


def shipped_synonyms() -> Path:
    return _PACKAGE_DIR / "synonyms.txt"


def demo_data_dir() -> Path:
    return _PACKAGE_DIR / "demo_data"
