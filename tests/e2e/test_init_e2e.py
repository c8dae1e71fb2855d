"""`memrecall init`'s settings, as the real Claude Code reads them (user and project scope)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from .support import (
    PAYMENT_FACT,
    FakeAnthropic,
    Workspace,
    hook_commands,
    hook_contexts,
    main_transcripts,
    memrecall_binary,
    memrecall_has,
    recall_log,
    run_headless,
)

pytestmark = pytest.mark.skipif(
    not memrecall_has("init"), reason="`memrecall init` is not implemented yet"
)

PROMPT = "PAY-1234 のタイムアウト何秒だっけ"


def init(ws: Workspace, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(memrecall_binary()), "init", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **ws.memrecall_env(), "HOME": str(ws.home)},
        cwd=cwd or ws.cwd,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, (
        f"memrecall init {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    )
    return proc


def test_init_merges_into_existing_settings_and_both_hooks_run(
    claude: Path, ws: Workspace, fake: FakeAnthropic
) -> None:
    """A user's own hook and settings survive init (run twice: idempotent), and in a real
    session both hooks run, memrecall's exactly once per prompt."""
    assert ws.hook_setup == "init"
    settings = ws.home / ".claude" / "settings.json"
    flag = ws.root / "user-hook-ran"
    settings.write_text(
        json.dumps(
            {
                "env": {"MY_SETTING": "kept"},
                "hooks": {
                    "UserPromptSubmit": [
                        {"hooks": [{"type": "command", "command": f"touch {flag}"}]}
                    ]
                },
            }
        )
    )
    init(ws)
    init(ws)
    data = json.loads(settings.read_text())
    assert data["env"] == {"MY_SETTING": "kept"}
    commands = hook_commands(ws.home)
    assert f"touch {flag}" in commands
    assert sum("memrecall" in c for c in commands) == 1, commands
    proc = run_headless(claude, ws, fake.url, PROMPT)
    assert proc.returncode == 0, proc.stderr
    assert flag.exists(), "the user's own hook no longer runs"
    (transcript,) = main_transcripts(ws.home)
    log = recall_log(ws.memrecall_home)
    assert len(log) == 1 and log[0]["decision"] == "inject", log
    assert any(PAYMENT_FACT in c for c in hook_contexts(transcript))


def test_init_project_settings_are_accepted(
    claude: Path, ws: Workspace, fake: FakeAnthropic
) -> None:
    """`memrecall init --project` writes ./.claude/settings.json; Claude Code runs it from there."""
    (ws.home / ".claude" / "settings.json").unlink()
    init(ws, "--project")
    assert (ws.cwd / ".claude" / "settings.json").exists()
    proc = run_headless(claude, ws, fake.url, PROMPT)
    assert proc.returncode == 0, proc.stderr
    (transcript,) = main_transcripts(ws.home)
    assert any(PAYMENT_FACT in c for c in hook_contexts(transcript))
    assert [e["decision"] for e in recall_log(ws.memrecall_home)] == ["inject"]


def test_init_uninstall_leaves_claude_code_working_without_memrecall(
    claude: Path, ws: Workspace, fake: FakeAnthropic
) -> None:
    """After `init --uninstall` no memrecall hook runs, and sessions still work."""
    init(ws, "--uninstall")
    if (ws.home / ".claude" / "settings.json").exists():
        assert not any("memrecall" in c for c in hook_commands(ws.home))
    proc = run_headless(claude, ws, fake.url, PROMPT)
    assert proc.returncode == 0, proc.stderr
    assert recall_log(ws.memrecall_home) == []
    (transcript,) = main_transcripts(ws.home)
    assert hook_contexts(transcript) == []
