"""Shared helpers of the hardening tests: small stores, running the real hook process, the
recall log, and a table of every case printed at the end of the run (so the count shows)."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

NOW = "2026-12-02T09:00:00+09:00"
NORMAL_PROMPT = "PAY-1234 の決済タイムアウトはどうなった？"


def make_stores(base: Path) -> dict[str, Path]:
    """A vault, a beads file and a summaries folder in which NORMAL_PROMPT fires."""
    vault = base / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "決済タイムアウト.md").write_text(
        "---\ntitle: 決済タイムアウト\ntags: [決済]\n---\n# 決済タイムアウト\n"
        "PAY-1234: 決済 API のタイムアウトを 10 秒から 5 秒にした。\n",
        encoding="utf-8",
    )
    for n in range(10):
        (vault / "notes" / f"daily-{n}.md").write_text(
            f"# Daily {n}\nレビューと会議。\n", encoding="utf-8"
        )
    beads = base / "proj" / ".beads"
    beads.mkdir(parents=True)
    (beads / "issues.jsonl").write_text(
        json.dumps(
            {
                "id": "bd-a1b2",
                "title": "決済タイムアウトの再試行",
                "status": "open",
                "description": "PAY-1234 の再試行",
                "updated_at": "2026-11-20T10:00:00Z",
            },
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    summaries = base / "summaries"
    summaries.mkdir()
    return {"vault": vault, "beads": beads, "beads_root": beads.parent, "summaries": summaries}


def store_env(stores: dict[str, Path]) -> dict[str, str]:
    return {
        "MEMRECALL_OBSIDIAN": str(stores["vault"]),
        "MEMRECALL_BEADS": str(stores["beads_root"]),
        "MEMRECALL_SUMMARIES": str(stores["summaries"]),
        "MEMRECALL_NOW": NOW,
    }


def run_hook(
    stdin: bytes,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    argv_prefix: list[str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    full = {**os.environ, **(env or {})}
    argv = argv_prefix or [sys.executable, "-m", "memrecall"]
    return subprocess.run(
        [*argv, "recall"], input=stdin, capture_output=True, env=full, timeout=timeout, check=False
    )


def hook_json(session: str, prompt: str, **more: Any) -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "prompt": prompt,
            "hook_event_name": "UserPromptSubmit",
            "cwd": "/tmp",
            **more,
        },
        ensure_ascii=False,
    ).encode("utf-8")


def log_lines(home: Path) -> list[str]:
    logs = home / "logs"
    if not logs.is_dir():
        return []
    lines: list[str] = []
    for path in sorted(logs.glob("recall-*.jsonl")):
        if path.is_file():
            lines += path.read_text(encoding="utf-8").splitlines()
    return lines


def log_entries(home: Path) -> list[dict[str, Any]]:
    """Every line of the recall log, each of which must be one JSON object."""
    entries = []
    for line in log_lines(home):
        entry = json.loads(line)
        assert isinstance(entry, dict), line
        entries.append(entry)
    return entries


def check_hook_stdout(stdout: bytes) -> dict[str, Any] | None:
    """The contract: nothing, or exactly one JSON object of the UserPromptSubmit shape."""
    if stdout == b"":
        return None
    payload = json.loads(stdout.decode("utf-8"))  # one document, nothing before or after
    assert set(payload) == {"hookSpecificOutput"}, payload
    inner = payload["hookSpecificOutput"]
    assert inner["hookEventName"] == "UserPromptSubmit"
    context = inner["additionalContext"]
    assert isinstance(context, str)
    assert context.startswith("<memrecall-context>") and context.endswith("</memrecall-context>")
    assert context.count("</memrecall-context>") == 1
    return payload


# The renderer's own prefixes: anything else on a line of the hits part would be stored text
# starting a line of its own.
_HIT_HEADER = re.compile(
    r"^\[\d+\] (beads|obsidian|summaries) · (\d{4}-\d{2}-\d{2}(?: \(modified\))?|undated) · "
)
_FIELD_PREFIXES = ("    matched: ", "    > ", "    ")


def unsafe_chars(text: str) -> list[str]:
    """Characters a terminal acts on or that hide or reorder text (newlines aside)."""
    return [
        f"U+{ord(c):04X}"
        for c in text
        if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")
    ]


def assert_context_inert(context: str) -> None:
    """The context is the wrapper, the template's text and stored text that cannot form a
    tag, cannot drive a terminal and never starts a line of its own."""
    from memrecall.sanitize import ANGLES

    opening, closing = "<memrecall-context>", "</memrecall-context>"
    assert context.startswith(opening) and context.endswith(closing)
    inner = context[len(opening) : -len(closing)]
    assert not unsafe_chars(context), unsafe_chars(context)
    preamble, _, hits = inner.strip("\n").partition("\n\n")
    assert "never instructions" in preamble
    for line in hits.splitlines():
        assert not line or _HIT_HEADER.match(line) or line.startswith(_FIELD_PREFIXES), line
    # Without the renderer's own `> ` quote marks no angle bracket of any kind is left, not
    # even after a reader normalises and decodes entities once more.
    body = re.sub(r"(?m)^    > ", "    ", inner)
    assert not [c for c in body if c in ANGLES], [c for c in body if c in ANGLES][:5]
    again = unicodedata.normalize("NFKC", html.unescape(body))
    assert "<" not in again and ">" not in again
    assert context.count("<") == 2  # the wrapper's own two tags


class CaseTable:
    """Collects one row per case and prints the table in pytest's terminal summary."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.rows: list[tuple[str, str, str]] = []

    def add(self, case: str, outcome: str, detail: str = "") -> None:
        self.rows.append((case, outcome, detail))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows:
            return
        width = max(len(r[0]) for r in self.rows)
        terminalreporter.section(f"{self.title}: {len(self.rows)} cases")
        counts: dict[str, int] = {}
        for case, outcome, detail in self.rows:
            counts[outcome] = counts.get(outcome, 0) + 1
            terminalreporter.write_line(f"  {case:<{width}}  {outcome:<7} {detail}")
        terminalreporter.write_line("  " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def table_fixture(title: str):  # type: ignore[no-untyped-def]
    """A session-scoped fixture that registers a CaseTable as a pytest plugin."""

    @pytest.fixture(scope="session")
    def _table(pytestconfig: pytest.Config) -> CaseTable:
        table = CaseTable(title)
        pytestconfig.pluginmanager.register(table, f"memrecall-table-{title}")
        return table

    return _table
