"""`memrecall summarize` over transcripts written, in this test run, by the pinned Claude Code.

One module fixture drives real sessions into a throw-away HOME: a rich interactive session
(memrecall's hook injects a memory; Read, Edit and an Explore subagent run), a tiny interactive
session, and a `claude -p` run. The tests then summarize that HOME's transcripts.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest

from .support import (
    MARK_OPEN,
    PAYMENT_FACT,
    FakeAnthropic,
    Interactive,
    Rule,
    Workspace,
    base_env,
    hook_contexts,
    install_hook,
    main_transcripts,
    make_workspace,
    memrecall_binary,
    memrecall_has,
    processes_in,
    iter_strings,
    records,
    recall_log,
    run_headless,
    transcripts,
)

if not memrecall_has("summarize"):
    pytest.skip(
        "`memrecall summarize` is not implemented yet (not in `memrecall --help`)",
        allow_module_level=True,
    )

PROMPTS = [
    (
        "PAY-1234 の決済タイムアウトを確認したい。"
        "internal/payment/client.go のタイムアウト設定を読んで"
    ),
    "タイムアウトを 7 秒に変えて。PSP の p99 が 2 秒なので余裕を見て 7 秒にする",
    "念のため調査エージェントにも client.go を確認させて",
    "じゃあ 7 秒で決定。リトライは 1 回のままにしておく。ありがとう",
]
TINY_PROMPT = "ok"
HEADLESS_PROMPT = "PAY-1234 の決済モジュールを一言で説明して"
AGENT_TASK = "internal/payment/client.go を読んで Timeout の値を報告してください。"
# Strings that only exist in the records a summary must never read (api-request-blob,
# prompt_snapshot, environment, task notifications) or in the injected hook context.
NEVER_IN_INPUT = [
    MARK_OPEN,
    "</memrecall-context>",
    PAYMENT_FACT,
    "memrecall found stored memories",
    "<system-reminder>",
    "You have been invoked in the following environment",
    "Generated with [Claude Code]",
    "<task-notification>",
    "api-request",
    "prompt_snapshot",
    "hook_additional_context",
    "skill_listing",
]

# Record types (and attachment types) that carry the model request or hook context.
NEVER_TYPES = {
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "prompt_snapshot",
    "skill_listing",
    "hook_additional_context",
    "environment",
    "deferred_tools_delta",
    "agent_listing_delta",
    "session_context",
    "model",
}


def never_summarize_strings(transcript: Path) -> set[str]:
    """Lines (30+ characters) that occur in never-summarize records and in no user/assistant
    record."""
    never, spoken = set(), []
    for d in records(transcript):
        kind = d.get("type")
        if kind == "attachment":
            kind = (d.get("attachment") or {}).get("type")
        if kind in NEVER_TYPES:
            for s in iter_strings(d):
                never.update(line.strip() for line in s.splitlines() if len(line.strip()) >= 30)
        elif kind in ("user", "assistant"):
            spoken.extend(iter_strings(d.get("message")))
    said = "\n".join(spoken)
    ids = re.compile(r"^[0-9a-f-]{36}$")  # session/request ids may rightly head a summary input
    return {s for s in never if s not in said and not ids.match(s)}


SUMMARY_JA = """## 決済タイムアウトを 7 秒に変更
PAY-1234 の決済タイムアウトを見直し、client.go の値を 7 秒にした。

## 何をしてた
- client.go のタイムアウト設定を読んだ
- タイムアウトを 10 秒から 7 秒に変えた
- 調査エージェントに値を確認させた

## 決まったこと
- 決済タイムアウトは 7 秒、リトライは 1 回

## 触ったファイル
- {path}

## 添付ファイル・URL
- (none)

## 出てきた話題
[[PAY-1234]] [[決済]] [[タイムアウト]]

keywords: 決済, payment, タイムアウト, timeout, PAY-1234
"""


@dataclass
class Sessions:
    ws: Workspace
    main: Path  # the rich interactive session
    tiny: Path  # one-prompt interactive session
    headless: Path  # claude -p
    subagents: list[Path]
    client_go: Path

    def sid(self, path: Path) -> str:
        return path.stem


@pytest.fixture(scope="module")
def sessions(
    claude: Path, tmux: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Sessions]:
    root = tmp_path_factory.mktemp("summarize-e2e")
    ws = make_workspace(root)
    ws.hook_setup = install_hook(ws.home, ws.memrecall_env())
    client_go = ws.cwd / "internal" / "payment" / "client.go"
    client_go.parent.mkdir(parents=True)
    client_go.write_text(
        "package payment\n\n// Timeout of one PSP request.\nconst Timeout = 10 // seconds\n"
    )
    rules = [
        Rule(
            when="client.go のタイムアウト設定を読んで",
            text="client.go のタイムアウト設定を読みます。",
            tool_use={"name": "Read", "input": {"file_path": str(client_go)}},
        ),
        Rule(
            when="7 秒に変えて",
            text="Timeout を 10 秒から 7 秒に変更します。",
            tool_use={
                "name": "Edit",
                "input": {
                    "file_path": str(client_go),
                    "old_string": "const Timeout = 10",
                    "new_string": "const Timeout = 7",
                },
            },
        ),
        Rule(
            when="調査エージェント",
            text="調査エージェントに確認させます。",
            tool_use={
                "name": "Agent",
                "input": {
                    "description": "決済タイムアウトの確認",
                    "prompt": AGENT_TASK,
                    "subagent_type": "Explore",
                },
            },
        ),
        Rule(
            when="Timeout の値を報告",
            text="client.go を読みます。",
            tool_use={"name": "Read", "input": {"file_path": str(client_go)}},
        ),
    ]
    fake = FakeAnthropic(
        rules=rules,
        reply="了解しました。決済タイムアウトは 7 秒、リトライ 1 回で進めます。",
        after_tool="確認しました。client.go の Timeout を見て、変更内容を反映しました。",
    )
    try:
        with fake:
            with Interactive(claude, ws, fake.url) as s:
                for prompt in PROMPTS:
                    s.prompt(prompt, turns=2 if "調査エージェント" in prompt else 1)
                main = s.exit()
            with Interactive(claude, ws, fake.url) as s:
                s.prompt(TINY_PROMPT)
                tiny = s.exit()
            proc = run_headless(claude, ws, fake.url, HEADLESS_PROMPT)
            assert proc.returncode == 0, proc.stderr
        headless = next(p for p in main_transcripts(ws.home) if p not in (main, tiny))
        subagents = [p for p in transcripts(ws.home) if "subagents" in p.parts]
        # The preconditions the summarize tests rely on, as this Claude Code wrote them.
        assert "const Timeout = 7" in client_go.read_text(), "the Edit tool did not run"
        assert any(PAYMENT_FACT in c for c in hook_contexts(main)), (
            "memrecall did not inject into the session"
        )
        assert any(PAYMENT_FACT in c for c in hook_contexts(headless))
        assert subagents, "no subagent transcript was written"
        kinds = {d.get("type") for d in records(main)}
        assert {"api-request-blob", "attachment"} <= kinds, kinds
        yield Sessions(ws, main, tiny, headless, subagents, client_go)
    finally:
        left = processes_in(root)
        assert not left, f"processes left behind: {left}"


def summarize_env(s: Sessions, memrecall_home: Path, **extra: str) -> dict[str, str]:
    """The environment a daily scheduled `memrecall summarize` would have, an hour later."""
    later = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat(timespec="seconds")
    return {
        **base_env(s.ws.home),
        **s.ws.stores,
        "MEMRECALL_HOME": str(memrecall_home),
        "MEMRECALL_NOW": later,
        "MEMRECALL_CLAUDE_PROJECTS": str(s.ws.home / ".claude" / "projects"),
        "MEMRECALL_SUMMARIES": str(memrecall_home / "summaries"),
        "COLUMNS": "200",
        **extra,
    }


def run_summarize(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(memrecall_binary()), "summarize", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        cwd=env["HOME"],
    )


def written_summaries(memrecall_home: Path) -> list[Path]:
    return sorted((memrecall_home / "summaries").rglob("*.md"))


def run_record(memrecall_home: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((memrecall_home / "state" / "summarize-run.json").read_text())


def table_row(stdout: str, session_id: str) -> str:
    key = session_id[:8] if len(session_id) == 36 else session_id[:24]
    cell = re.compile(r"^\W*" + re.escape(key) + r"\s+[│|]")
    rows = [line for line in stdout.splitlines() if cell.search(line)]
    assert len(rows) == 1, f"expected one dry-run row for {session_id}, got {rows}\n{stdout}"
    return rows[0]


# --- the tests ------------------------------------------------------------------------------------


def test_dry_run_decisions_and_reasons(sessions: Sessions, tmp_path: Path) -> None:
    home = tmp_path / "mr"
    proc = run_summarize(summarize_env(sessions, home), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert re.search(r"\bsummarize\b", table_row(out, sessions.sid(sessions.main))), out
    assert "tiny" in table_row(out, sessions.sid(sessions.tiny)), out
    assert "headless" in table_row(out, sessions.sid(sessions.headless)), out
    for sub in sessions.subagents:
        assert "subagent" in table_row(out, sub.stem), out
        meta = sub.with_name(sub.stem + ".meta.json")
        if meta.exists():
            assert "not-a-transcript" in table_row(out, meta.name), out
    assert "would summarize 1" in proc.stderr, proc.stderr
    assert not written_summaries(home), "a dry run wrote a summary"


CAPTURE = r"""
import json, pathlib, re, sys, time
out = pathlib.Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
text = sys.stdin.read()
(out / f"{time.time_ns()}.txt").write_text(text, encoding="utf-8")
sys.stdout.write(pathlib.Path(sys.argv[2]).read_text(encoding="utf-8"))
"""


def test_command_backend_input_is_clean(sessions: Sessions, tmp_path: Path) -> None:
    """What reaches a summarizer: the interactive session only, without hook context or the new
    record types (the command backend captures the exact stdin a summarizer gets)."""
    home = tmp_path / "mr"
    home.mkdir()
    captured, script, reply = tmp_path / "captured", tmp_path / "capture.py", tmp_path / "reply.md"
    script.write_text(CAPTURE)
    reply.write_text(SUMMARY_JA.format(path=sessions.client_go))
    (home / "config.toml").write_text(
        '[summarize]\nbackend = "command"\n'
        f"command = {json.dumps(f'{sys.executable} {script} {captured} {reply}')}\n"
    )
    recall_before = len(recall_log(sessions.ws.memrecall_home))
    proc = run_summarize(summarize_env(sessions, home))
    assert proc.returncode == 0, proc.stderr
    inputs = sorted(captured.glob("*.txt"))
    assert len(inputs) == 1, (
        f"expected one summarizer call (the interactive session), got {len(inputs)}"
    )
    text = inputs[0].read_text(encoding="utf-8")
    for prompt in PROMPTS:
        assert prompt in text, f"typed prompt missing from the summarizer input: {prompt!r}"
    assert "client.go" in text
    assert HEADLESS_PROMPT not in text and AGENT_TASK not in text
    leaked = [s for s in NEVER_IN_INPUT if s in text]
    assert not leaked, f"never-summarize content reached the summarizer: {leaked}\n{text[:3000]}"
    only_there = never_summarize_strings(sessions.main)
    assert len(only_there) > 20, "the transcript has fewer request/snapshot records than expected"
    leaked = [s for s in only_there if s in text]
    assert not leaked, (
        f"text found only in {sorted(NEVER_TYPES)} records reached the summarizer: {leaked[:5]}"
    )
    record = run_record(home)
    assert record["summarized"] == 1, record
    skipped = record["skipped"]
    assert skipped.get("headless") == 1 and skipped.get("tiny") == 1, record
    assert skipped.get("subagent") == len(sessions.subagents), record
    (summary,) = written_summaries(home)
    assert summary.name.endswith(f"-{sessions.sid(sessions.main)[:8]}.md"), summary
    body = summary.read_text(encoding="utf-8")
    assert "7 秒" in body and MARK_OPEN not in body
    assert len(recall_log(sessions.ws.memrecall_home)) == recall_before


SENTINEL_HOOK = "touch {flag}"


def test_claude_backend_for_real(sessions: Sessions, claude: Path, tmp_path: Path) -> None:
    """The default backend: `claude` (this Claude Code, found on PATH) against the stand-in.

    Accepts the command line, runs no hook at all (a sentinel UserPromptSubmit hook is added
    beside memrecall's), leaves no transcript behind, and the summary is written."""
    home = tmp_path / "mr"
    home.mkdir()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "claude").symlink_to(claude)
    flag = tmp_path / "a-hook-ran"
    settings_path = sessions.ws.home / ".claude" / "settings.json"
    original = settings_path.read_text()
    settings = json.loads(original)
    settings["hooks"]["UserPromptSubmit"].append(
        {"hooks": [{"type": "command", "command": SENTINEL_HOOK.format(flag=flag), "timeout": 10}]}
    )
    before = set(transcripts(sessions.ws.home))
    recall_before = len(recall_log(sessions.ws.memrecall_home))
    fake = FakeAnthropic(side_reply=SUMMARY_JA.format(path=sessions.client_go))
    control = tmp_path / "control"
    try:
        settings_path.write_text(json.dumps(settings, indent=2))
        with fake:
            env = summarize_env(sessions, home, ANTHROPIC_BASE_URL=fake.url)
            env["PATH"] = f"{bindir}{os.pathsep}{env['PATH']}"
            started = time.monotonic()
            proc = run_summarize(env, "--backend", "claude", timeout=180)
            elapsed = time.monotonic() - started
            summarizer_requests = fake.messages()
            # Control: the sentinel does fire in an ordinary session with these settings.
            control.mkdir()
            subprocess.run(
                [str(claude), "-p", "hello there"],
                cwd=control,
                capture_output=True,
                timeout=60,
                env={**base_env(sessions.ws.home, fake.url), "MEMRECALL_INTERNAL": "1"},
                stdin=subprocess.DEVNULL,
            )
            control_ran = flag.exists()
            flag.unlink(missing_ok=True)
    finally:
        settings_path.write_text(original)
        for p in set(transcripts(sessions.ws.home)) - before:
            if control.name in str(p.parent):
                p.unlink()
    assert proc.returncode == 0, f"summarize failed:\n{proc.stdout}\n{proc.stderr}"
    assert control_ran, "control failed: the sentinel hook does not run even in a normal claude -p"
    requests = summarizer_requests
    assert requests, "Claude Code never called the model stand-in"
    asked = [r for r in requests if "memrecall-summarizer-prompt" in r.text]
    assert len(asked) == 1, [r.text[:200] for r in requests]
    req = asked[0]
    assert not req.main_loop, "the summarizer's claude -p offered tools to the model"
    assert "haiku" in str(req.body.get("model")), req.body.get("model")
    assert PROMPTS[0] in req.text
    assert MARK_OPEN not in req.text and PAYMENT_FACT not in req.text
    assert not flag.exists(), "a UserPromptSubmit hook ran inside the summarizer's claude -p"
    assert len(recall_log(sessions.ws.memrecall_home)) == recall_before
    assert set(transcripts(sessions.ws.home)) == before, (
        f"the summarizer's own run left a transcript: {set(transcripts(sessions.ws.home)) - before}"
    )
    record = run_record(home)
    assert record["backend"] == "claude" and record["summarized"] == 1 and not record["failed"], (
        record
    )
    (summary,) = written_summaries(home)
    assert summary.name.endswith(f"-{sessions.sid(sessions.main)[:8]}.md")
    assert "7 秒" in summary.read_text(encoding="utf-8")
    assert elapsed < 120
