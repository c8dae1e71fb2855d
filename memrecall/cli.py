"""The Typer app for people: every command, with examples in its help.

Commands stay thin: parse options, call one library function, render. Library errors
(`MemrecallError`) become one line `Error: …` on stderr and the error's exit code here,
in one place.
"""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from . import __version__

app = typer.Typer(
    name="memrecall",
    help="Episodic memory for Claude Code: recall past notes, beads issues and session summaries.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"memrecall {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        Optional[bool],
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = None,
) -> None:
    """Episodic memory for Claude Code."""


@app.command()
def tokenize(
    backend: Annotated[
        Optional[str],
        typer.Option("--backend", "-b", help="auto | sudachi | mecab | regex | command:<program>"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per keyword.")] = False,
) -> None:
    """Print the keywords of the prompt on stdin, one a line.

    Example: echo 'PAY-1234 の決済タイムアウト' | memrecall tokenize --backend sudachi
    """
    from .fast import tokenize_main

    raise typer.Exit(tokenize_main(backend, as_json))


@app.command()
def recall() -> None:
    """The UserPromptSubmit hook: hook JSON on stdin, context JSON (or nothing) on stdout.

    Always exits 0. Example:
    echo '{"session_id":"s1","prompt":"PAY-1234 どうなった？"}' | memrecall recall
    """
    from .fast import recall_main

    raise typer.Exit(recall_main())


_registered = False


def _register_commands() -> None:
    """Add the command modules to `app` once per process.

    Typer appends on every registration, so a second call would double every command
    (tests call `run_app` in-process hundreds of times)."""
    global _registered
    if _registered:
        return
    from .commands import register_all

    register_all(app)
    _registered = True


def run_app(args: list[str]) -> int:
    from .errors import MemrecallError, unexpected

    _register_commands()
    try:
        # Without standalone mode click hands back a command's `typer.Exit(code)` as the
        # return value instead of calling sys.exit: it is the exit status.
        returned = app(args=args, prog_name="memrecall", standalone_mode=False)
    except MemrecallError as exc:
        sys.stderr.write(f"Error: {exc}\n")
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        sys.stderr.write("Aborted.\n")
        return 130
    except KeyboardInterrupt:
        sys.stderr.write("Interrupted.\n")
        return 130
    except Exception as exc:  # Typer's vendored click raises its own usage errors
        usage = getattr(exc, "exit_code", None)
        show = getattr(exc, "show", None)
        if usage is not None and callable(show):
            show()
            return int(usage)
        return unexpected(exc)
    return returned if isinstance(returned, int) else 0
