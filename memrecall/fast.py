"""argparse front end for the hot commands; shares its functions with the Typer app."""

from __future__ import annotations

import sys


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"Error: {message}\n")
    return code


def read_stdin_text() -> str:
    data = sys.stdin.buffer.read() if sys.stdin is not None else b""
    # Invalid UTF-8 (or cp932 from a Japanese Windows console) never becomes a traceback.
    return data.decode("utf-8", errors="replace")


def write_stdout(text: str) -> None:
    # Bytes, not the console's code page: cp932 consoles cannot encode every character.
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def tokenize_main(backend: str | None, as_json: bool) -> int:
    from .config import load_settings
    from .errors import MemrecallError
    from .tokenize import render, tokenize_text

    settings = load_settings()
    for warning in settings.warnings:
        sys.stderr.write(f"Warning: {warning}\n")
    if backend is not None:
        # Checked before reading stdin: an empty input must not hide a bad --backend.
        from .tokenizers import check_backend_name

        try:
            check_backend_name(backend)
        except MemrecallError as exc:
            return _fail(str(exc), exc.exit_code)
    text = read_stdin_text()
    try:
        keywords, notes = tokenize_text(text, backend or settings.tokenizer, settings)
    except MemrecallError as exc:
        return _fail(str(exc), exc.exit_code)
    for note in notes:
        sys.stderr.write(f"Note: {note}\n")
    write_stdout(render(keywords, as_json))
    return 0


def recall_main() -> int:
    from .hook import run_hook

    return run_hook()


def run(command: str, args: list[str]) -> int:
    if command == "tokenize":
        import argparse  # not for the hook: it takes no arguments and ~2 ms is ~2 ms

        class _Parser(argparse.ArgumentParser):
            def error(self, message: str) -> None:  # type: ignore[override]
                raise SystemExit(_fail(message, 2))

        parser = _Parser(prog="memrecall tokenize", add_help=False)
        parser.add_argument("--backend", "-b", default=None)
        parser.add_argument("--json", action="store_true", dest="as_json")
        parsed = parser.parse_args(args)
        try:
            return tokenize_main(parsed.backend, parsed.as_json)
        except Exception as exc:  # no traceback for people either (the hook never gets here)
            from .errors import unexpected

            return unexpected(exc)
    # The hook ignores arguments it does not know: a settings.json typo must not break prompts.
    return recall_main()
