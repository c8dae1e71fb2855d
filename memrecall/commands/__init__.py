"""One module per command group; each exposes `register(app)`."""

from __future__ import annotations

import importlib

import typer

# Modules are imported only when the Typer app is built (never on the hook path).
COMMAND_MODULES: tuple[str, ...] = (
    "search",
    "show",
    "save",
    "index",
    "demo",
    "summarize",
    "prune",
    "stopwords",
    "stats",
    "init",
    "doctor",
    "team",
)


def register_all(app: typer.Typer) -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(app)
