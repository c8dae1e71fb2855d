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
    from .cli import run_app

    return run_app(args)


if __name__ == "__main__":
    sys.exit(main())
