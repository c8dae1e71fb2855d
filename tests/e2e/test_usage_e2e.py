"""Used or ignored, on transcripts the real Claude Code writes: the model reads the memory the
hook injected in one session and answers without it in the next; `memrecall usage` and
`memrecall stats` tell the two apart. (scripts/eval_usage.py runs many more such sessions.)"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from .support import (
    FakeAnthropic,
    Rule,
    Workspace,
    main_transcripts,
    memrecall_binary,
    records,
    run_headless,
)

PAY_PROMPT = "PAY-1234 のタイムアウト何秒だっけ"
NOTE = "設計/決済タイムアウト.md"


def memrecall_json(ws: Workspace, *args: str) -> Any:
    env = {**os.environ, **ws.memrecall_env(), "HOME": str(ws.home)}
    env.pop("CLAUDE_CONFIG_DIR", None)  # the transcripts are under this HOME's ~/.claude
    env.pop("MEMRECALL_CLAUDE_PROJECTS", None)
    proc = subprocess.run(
        [str(memrecall_binary()), *args, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_read_memory_is_used_and_an_unread_one_ignored(
    claude: Path, ws: Workspace, fake: FakeAnthropic
) -> None:
    note = Path(ws.stores["MEMRECALL_OBSIDIAN"]) / NOTE
    fake.rules.append(
        Rule(
            when=PAY_PROMPT,
            text="メモを確認します。",
            tool_use={"name": "Read", "input": {"file_path": str(note)}},
        )
    )
    for _ in range(2):  # the rule answers once: the second session gets a plain reply
        proc = run_headless(claude, ws, fake.url, PAY_PROMPT, "--allowedTools", "Read")
        assert proc.returncode == 0, proc.stderr
    first, second = sorted(main_transcripts(ws.home), key=lambda p: p.stat().st_mtime)
    assert any(
        d.get("type") == "attachment"
        and (d.get("attachment") or {}).get("type") == "hook_additional_context"
        for d in records(first)
    )
    rows = memrecall_json(ws, "usage")  # newest first
    by_session = {r["session"]: r for r in rows}
    assert len(rows) == 2 and all(r["ref"] == NOTE for r in rows), rows
    used, ignored = by_session[first.stem], by_session[second.stem]
    assert used["verdict"] == "used" and used["evidence"] == [f"Read {note}"], used
    assert ignored["verdict"] == "ignored" and ignored["evidence"] == [], ignored
    use = memrecall_json(ws, "stats")["use"]
    assert (use["injected"], use["used"], use["ignored"], use["engaged_rate"]) == (2, 1, 1, 0.5), (
        use
    )
    # A second look (nothing changed, so no transcript is read again) gives the same verdicts.
    assert memrecall_json(ws, "usage") == rows
