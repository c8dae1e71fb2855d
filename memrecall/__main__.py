"""Entry point. The hot commands (`recall`, `tokenize`) are dispatched here with argparse,
before Typer, Rich or pydantic are imported: the hook runs on every prompt, and building
the Typer app alone costs ~150 ms. `memrecall --help` still lists them (the Typer app
registers the same commands)."""

from __future__ import annotations

import sys

HOT_COMMANDS = ("recall", "tokenize")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in HOT_COMMANDS and not {"--help", "-h"} & set(args[1:]):
        from . import fast

        return fast.run(args[0], args[1:])
    if args == ["team", "sync", "--background"]:
        # The Stop hook, after every answer: start the detached sync and return, no Typer.
        return _team_sync_in_background()
    from .cli import run_app

    return run_app(args)


def _team_sync_in_background() -> int:
    """Exit 0 and print nothing, whatever happens: Claude Code waits on a Stop hook."""
    try:
        from .config import load_settings
        from .team import start_background

        start_background(load_settings())
    except Exception:  # a broken config is for `memrecall doctor` to say, not the hook
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
