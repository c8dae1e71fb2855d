"""The UserPromptSubmit hook's I/O edge, behind exactly one fail-open guard.

Whatever happens — bad stdin, missing stores, a full disk, a hung search — the process
exits 0 and prints either nothing or exactly one JSON object. Exit 2 would erase the
user's prompt, so it never happens. Errors go to the recall log instead.
"""

from __future__ import annotations

import io
import os
import sys
import threading
import time
from datetime import datetime, timezone
from typing import Any, cast


def _log(settings: Any, entry: dict[str, Any]) -> None:
    from .recall_log import append

    try:
        append(settings.logs_dir, settings.now, entry)
    except Exception:
        # A full or read-only disk must not reach the prompt; the hook prints nothing on
        # failure, not even to stderr, and the next run that can write logs as usual.
        pass


def _watchdog(seconds: float, started: float, settings_box: list[Any]) -> threading.Timer:
    """Last line of defence: if anything hangs past the deadline, leave silently."""

    def fire() -> None:
        if settings_box:
            _log(
                settings_box[0],
                {
                    "ts": datetime.now(timezone.utc).isoformat(),
                    "decision": "deadline",
                    "reason": "watchdog: hook ran past its hard deadline",
                    "elapsed_ms": round((time.monotonic() - started) * 1000, 1),
                },
            )
        os._exit(0)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


# The hook JSON is one prompt and a few short fields, and no model context holds 4 MB of
# text: a bigger stdin is not a prompt anyone can send. It is refused before parsing,
# because json.loads is one C call that holds the GIL, so the watchdog thread could not
# fire until a 50 MB document had been parsed (seconds, and memory, for a many-object one).
MAX_STDIN_BYTES = 4 * 1024 * 1024
_DRAIN_CHUNK = 1024 * 1024


def _read_stdin(stdin: bytes | None, give_up: float) -> tuple[bytes | None, int, bool]:
    """(the bytes, or None when over MAX_STDIN_BYTES; how many bytes came; whether all of them did).

    Past the cap the rest is drained and counted, not kept: the log can say how big the
    input was, and Claude Code does not meet a closed pipe. Draining stops at `give_up`
    (an endless stdin is still just a quiet prompt)."""
    if stdin is not None:
        return (stdin if len(stdin) <= MAX_STDIN_BYTES else None), len(stdin), True
    if sys.stdin is None:
        return b"", 0, True
    # A BufferedReader: read1 returns what is there instead of waiting for a full chunk.
    stream = cast(io.BufferedReader, sys.stdin.buffer)
    raw = stream.read(MAX_STDIN_BYTES + 1)
    if len(raw) <= MAX_STDIN_BYTES:
        return raw, len(raw), True
    seen = len(raw)
    del raw
    while time.monotonic() < give_up:
        chunk = stream.read1(_DRAIN_CHUNK)
        if not chunk:
            return None, seen, True
        seen += len(chunk)
    return None, seen, False


def run_hook(stdin: bytes | None = None) -> int:
    started = time.monotonic()
    if os.environ.get("MEMRECALL_INTERNAL"):
        return 0  # memrecall's own summarizer run: no recall, no log
    settings_box: list[Any] = []
    entry: dict[str, Any] = {}
    output = ""
    timer = None
    try:
        from .config import load_settings

        settings = load_settings()
        settings_box.append(settings)
        deadline_s = settings.recall.deadline_ms / 1000
        timer = _watchdog(deadline_s * 2 + 0.5, started, settings_box)
        raw, size, complete = _read_stdin(stdin, started + deadline_s)

        from .recall import BadHookInput, parse_hook_input, recall

        try:
            if raw is None:
                raise BadHookInput(f"stdin is over {MAX_STDIN_BYTES} bytes; not parsed")
            # A BOM from a Windows pipe (PowerShell) is not a reason to drop the prompt.
            hook = parse_hook_input(raw.decode("utf-8", errors="replace").lstrip("\ufeff"))
        except BadHookInput as exc:
            entry = {"decision": "bad_input", "reason": str(exc), "stdin_bytes": size}
            if not complete:
                entry["stdin_complete"] = False  # still coming at the deadline: at least this much
        else:
            # Known before anything can fail, so an error line still names its session.
            entry = {"session": hook.session_id}
            result = recall(hook, settings, deadline=started + deadline_s)
            entry = result.log
            output = result.stdout()
    except Exception as exc:
        output = ""
        entry = {**entry, "decision": "error", "error": f"{exc.__class__.__name__}: {exc}"[:500]}
    finally:
        if timer is not None:
            timer.cancel()
    if output:
        try:
            sys.stdout.buffer.write(output.encode("utf-8"))
            sys.stdout.flush()
        except Exception as exc:  # a closed pipe: nothing to do but record it
            entry = {**entry, "decision": "error", "error": f"stdout: {exc}"[:500]}
    if settings_box:
        settings = settings_box[0]
        entry = {"ts": settings.now.isoformat(), **entry}
        if not os.environ.get("MEMRECALL_NOW"):
            entry["ts"] = datetime.now(timezone.utc).isoformat()
        entry["elapsed_ms"] = round((time.monotonic() - started) * 1000, 1)
        _log(settings, entry)
        if entry.get("decision") not in ("error", "bad_input"):
            from . import glossary, regexcache

            regexcache.save(settings.home)
            glossary.save_cache(settings.home)
    return 0
