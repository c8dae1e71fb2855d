"""`memrecall summarize`: discovery, exclusions, idempotence, crash/rerun, human edits, dry run.

Sessions are built here in Claude Code's own record shapes (what the corpus shows for
2.1.3xx); the extractive backend and a `command` backend (a tiny Python program) stand in
for the LLM, so nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memrecall.cli import run_app
from memrecall.config import load_settings
from memrecall.summarize.pipeline import (
    SummarizeOptions,
    ledger_path,
    run_record_path,
    run_summarize,
)
from memrecall.summarize.writer import is_pristine

CWD = "/home/dev/ec-backend"
PROJECT = "-home-dev-ec-backend"
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
RUN_KEYS = {
    "started",
    "finished",
    "backend",
    "summarized",
    "skipped",
    "failed",
    "chars_sent",
    "raw_bytes",
    "oldest_unsummarized",
    "pending",
    "capped",
}

TURNS = [
    (
        "PAY-1234 の決済APIタイムアウト、いま client.go で何秒になってる？",
        "internal/payment/client.go の Timeout は 10 秒、MaxRetries は 3 です。",
        "Read",
    ),
    (
        "ゲートウェイ側の障害が増えてるから、リトライ回数を 2 に減らして",
        "MaxRetries を 2 に変更しました。",
        "Edit",
    ),
    (
        "タイムアウトは 10 秒のままでいこう。決済のリトライは 2 回で確定",
        "了解しました。決済タイムアウトは 10 秒のまま、リトライは 2 回で確定とします。",
        None,
    ),
]


def records(
    sid: str,
    turns: list[tuple[str, str, str | None]],
    *,
    start: int = 0,
    cwd: str = CWD,
    entrypoint: str = "cli",
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    base = datetime(2026, 11, 20, 10, 0, tzinfo=timezone.utc)
    n = start
    for prompt, reply, tool in turns:

        def env(kind: str, **more: Any) -> dict[str, Any]:
            nonlocal n
            n += 1
            return {
                "sessionId": sid,
                "cwd": cwd,
                "gitBranch": "fix/pay-timeout",
                "version": "2.1.332",
                "entrypoint": entrypoint,
                "userType": "external",
                "isSidechain": False,
                "uuid": f"{sid[:8]}-{n:05d}",
                "timestamp": (base + timedelta(minutes=n)).isoformat(),
                "type": kind,
                **more,
            }

        out.append(env("user", message={"role": "user", "content": prompt}, promptSource="typed"))
        out.append(
            env(
                "assistant",
                message={
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": reply}],
                },
            )
        )
        if tool:
            tid = f"toolu_{n}"
            out.append(
                env(
                    "assistant",
                    message={
                        "id": f"msg_{n - 1}",
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": tid,
                                "name": tool,
                                "input": {"file_path": f"{cwd}/internal/payment/client.go"},
                            }
                        ],
                    },
                )
            )
            out.append(
                env(
                    "user",
                    message={
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}],
                    },
                )
            )
    return out


def write(path: Path, recs: list[dict[str, Any]], append: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a" if append else "w", encoding="utf-8") as handle:
        for rec in recs:
            handle.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> dict[str, Path]:
    projects = tmp_path / "projects"
    projects.mkdir()
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(projects))
    # An hour ahead of the files' mtimes: nothing is "still being written".
    now = datetime.now(timezone.utc) + timedelta(hours=1)
    monkeypatch.setenv("MEMRECALL_NOW", now.isoformat())
    return {"projects": projects, "home": isolated_home, "summaries": isolated_home / "summaries"}


def sid(n: int) -> str:
    return f"{n:08x}-1111-4222-8333-444444444444"


def config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


def run(**options: Any):  # type: ignore[no-untyped-def]
    settings = load_settings()
    backend = options.pop("backend", "extractive")
    settings.summarize.backend = backend
    for key in ("max_sessions", "max_input_chars"):
        if key in options:
            setattr(settings.summarize, key, options.pop(key))
    return run_summarize(settings, SummarizeOptions(**options))


def summaries(root: Path) -> list[Path]:
    return sorted(root.rglob("*.md")) if root.exists() else []


def test_summary_file_frontmatter_and_search(env: dict[str, Path]) -> None:
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    logs = env["home"] / "logs"
    logs.mkdir()
    (logs / "recall-2026-11.jsonl").write_text(
        json.dumps(
            {
                "ts": "2026-11-20T10:05:00+00:00",
                "session": sid(1),
                "decision": "inject",
                "injected": [{"store": "beads", "ref": "PAY-1234", "title": "t"}],
            }
        )
        + "\n"
        + json.dumps(
            {"session": sid(1), "decision": "quiet", "injected": [{"store": "x", "ref": "no"}]}
        )
        + "\n"
        + "{broken\n",
        encoding="utf-8",
    )
    report = run()
    assert report.summarized == 1 and not report.failed
    [path] = summaries(env["summaries"])
    local = datetime(2026, 11, 20, 10, 1, tzinfo=timezone.utc).astimezone()
    assert (
        path.relative_to(env["summaries"]).as_posix() == f"{local:%Y/%m/%Y-%m-%d}-{sid(1)[:8]}.md"
    )
    text = path.read_text(encoding="utf-8")
    import yaml

    front = yaml.safe_load(text.split("---\n")[1])
    assert front["session_id"] == sid(1)
    assert front["project"] == "ec-backend" and front["cwd"] == CWD
    assert front["git_branch"] == "fix/pay-timeout"
    assert front["backend"] == "extractive"
    assert front["files"] == ["internal/payment/client.go"]
    assert front["recalled"] == ["beads:PAY-1234"]
    assert front["source_transcript"].endswith(f"{sid(1)}.jsonl")
    assert "PAY-1234" in front["tags"]
    assert datetime.fromisoformat(str(front["date"])) == datetime(
        2026, 11, 20, 10, 1, tzinfo=timezone.utc
    )
    for heading in (
        "## 何をしてた",
        "## 決まったこと",
        "## 触ったファイル",
        "## 添付ファイル・URL",
        "## 出てきた話題",
    ):
        assert heading in text
    assert is_pristine(text)

    # The search store reads it: title, tags and date from the frontmatter.
    from memrecall.stores.base import Document
    from memrecall.stores.markdown import SummaryStore

    settings = load_settings()
    store = SummaryStore(env["summaries"], settings.now, 90, env["home"] / "cache")
    [doc] = list(store.documents({path: [(1, "x")]}))
    assert store.load(doc)
    assert isinstance(doc, Document) and "PAY-1234" in doc.tags and doc.title == front["title"]


def test_exclusions_with_reasons(env: dict[str, Path], isolated_home: Path) -> None:
    p = env["projects"]
    write(p / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    write(p / PROJECT / f"{sid(2)}.jsonl", records(sid(2), TURNS, entrypoint="sdk-cli"))
    write(p / PROJECT / f"{sid(3)}.jsonl", records(sid(3), [("ok", "はい", None)]))
    write(
        p / PROJECT / f"{sid(1)}" / "subagents" / "agent-a1b2c3d4e5f6a7b8c.jsonl",
        records(sid(1), TURNS),
    )
    (p / PROJECT / f"{sid(1)}" / "subagents" / "agent-a1b2c3d4e5f6a7b8c.meta.json").write_text("{}")
    write(
        p / PROJECT / f"{sid(1)}" / "subagents" / "agent-acompact-123456.jsonl",
        records(sid(1), TURNS),
    )
    write(
        p / PROJECT / f"{sid(1)}" / "subagents" / "workflows" / "wf_1" / "journal.jsonl",
        [{"type": "started"}],
    )
    write(p / PROJECT / "agent-1234abcd.jsonl", records(sid(1), TURNS))
    sidechain = [dict(r, isSidechain=True) for r in records(sid(4), TURNS)]
    write(p / PROJECT / f"{sid(4)}.jsonl", sidechain)
    scheduled = records(sid(5), TURNS)
    scheduled.insert(
        0, {"type": "system", "subtype": "scheduled_task_fire", "sessionId": sid(5), "uuid": "s5"}
    )
    write(p / PROJECT / f"{sid(5)}.jsonl", scheduled)
    marked = records(sid(6), TURNS)
    marked[0]["message"]["content"] += " #memrecall:off"
    write(p / PROJECT / f"{sid(6)}.jsonl", marked)
    write(
        p / "-home-dev-secret-client" / f"{sid(7)}.jsonl",
        records(sid(7), TURNS, cwd="/home/dev/secret-client"),
    )
    own = load_settings().work_dir
    own_dir = "".join(c if c.isalnum() else "-" for c in str(own))
    write(p / own_dir / f"{sid(8)}.jsonl", records(sid(8), TURNS, cwd=str(own)))
    # A summarizer transcript that leaked outside the work folder still carries the marker.
    leaked = records(sid(9), TURNS)
    leaked[0]["message"]["content"] = (
        "<!-- memrecall-summarizer-prompt: x -->\n" + leaked[0]["message"]["content"]
    )
    write(p / PROJECT / f"{sid(10)}.jsonl", [dict(r, sessionId=sid(10)) for r in leaked])
    config(isolated_home, '[summarize]\nexclude_projects = ["/home/dev/secret-*"]\n')

    report = run(dry_run=True)
    by_id = {r.session_id: (r.decision, r.reason) for r in report.rows}
    assert by_id[sid(1)] == ("would-summarize", "")
    assert by_id[sid(2)] == ("skipped", "headless")
    assert by_id[sid(3)] == ("skipped", "tiny")
    assert by_id["agent-a1b2c3d4e5f6a7b8c"] == ("skipped", "subagent")
    assert by_id["agent-a1b2c3d4e5f6a7b8c.meta.json"] == ("skipped", "not-a-transcript")
    assert by_id["agent-acompact-123456"] == ("skipped", "compaction-agent")
    assert by_id["journal"] == ("skipped", "not-a-transcript")
    assert by_id["agent-1234abcd"] == ("skipped", "subagent")
    assert by_id[sid(4)] == ("skipped", "subagent")
    assert by_id[sid(5)] == ("skipped", "scheduled")
    assert by_id[sid(6)] == ("skipped", "opted-out-marker")
    assert by_id[sid(7)] == ("skipped", "opted-out-project")
    assert by_id[sid(8)] == ("skipped", "memrecall-internal")
    assert by_id[sid(10)] == ("skipped", "memrecall-internal")
    # A dry run sends nothing and writes nothing.
    assert not summaries(env["summaries"])
    assert not (isolated_home / "state").exists()


def test_tiny_counts_condensed_text_and_long_autonomous_tasks_pass(env: dict[str, Path]) -> None:
    # One prompt, then a long autonomous run: many replies and tool calls, no more prompts.
    steps = [
        (
            f"step {i}",
            f"手順 {i}: 決済ゲートウェイのリトライ設定 {i} を確認して修正しました。" * 3,
            "Edit",
        )
        for i in range(20)
    ]
    recs = records(
        sid(1), [("PAY-1234 を全部直して、終わるまで続けて", "始めます。", None)] + steps
    )
    recs = [
        r
        for r in recs
        if not (r["type"] == "user" and str(r["message"]["content"]).startswith("step "))
    ]
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", recs)
    write(
        env["projects"] / PROJECT / f"{sid(2)}.jsonl", records(sid(2), [("直して", "はい", "Edit")])
    )
    by_id = {r.session_id: r.reason for r in run(dry_run=True).rows}
    assert by_id[sid(1)] == "" and by_id[sid(2)] == "tiny"


def test_idempotent_and_grown_session_replaced(env: dict[str, Path]) -> None:
    path = write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    assert run().summarized == 1
    [summary] = summaries(env["summaries"])
    first = summary.read_text(encoding="utf-8")
    again = run()
    assert again.summarized == 0 and again.skipped.get("unchanged") == 1
    assert summary.read_text(encoding="utf-8") == first
    # The session grows (resumed): summarized again, same file replaced, no second file.
    write(
        path,
        records(
            sid(1),
            [
                (
                    "CPN-12 のクーポン併用ルールも決めよう。併用不可で確定",
                    "併用不可で確定しました。",
                    None,
                )
            ],
            start=100,
        ),
        append=True,
    )
    grown = run()
    assert grown.summarized == 1
    assert summaries(env["summaries"]) == [summary]
    assert "CPN-12" in summary.read_text(encoding="utf-8")
    ledger = json.loads(ledger_path(load_settings()).read_text(encoding="utf-8"))
    assert ledger["sessions"][sid(1)]["status"] == "done"
    assert ledger["sessions"][sid(1)]["size"] == path.stat().st_size


def test_human_edited_summary_is_never_overwritten(env: dict[str, Path]) -> None:
    path = write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    run()
    [summary] = summaries(env["summaries"])
    edited = summary.read_text(encoding="utf-8").replace(
        "## 何をしてた", "## 何をしてた\n- 人が書き足したメモ"
    )
    summary.write_text(edited, encoding="utf-8")
    write(
        path,
        records(
            sid(1),
            [("もう一つ、ログも確認して。ログは残す方針で確定", "了解、ログは残します。", None)],
            start=100,
        ),
        append=True,
    )
    report = run()
    assert report.summarized == 1
    assert summary.read_text(encoding="utf-8") == edited
    beside = summary.with_name(summary.stem + ".2.md")
    assert beside.exists() and is_pristine(beside.read_text(encoding="utf-8"))
    assert "edited" in report.rows[-1].reason or any("edited" in r.reason for r in report.rows)
    # A further growth replaces the memrecall copy beside it, still not the person's file.
    write(
        path,
        records(sid(1), [("最後にテストも追加して", "テストを追加しました。", None)], start=200),
        append=True,
    )
    run()
    assert summary.read_text(encoding="utf-8") == edited
    assert sorted(p.name for p in summaries(env["summaries"])) == sorted(
        [summary.name, beside.name]
    )
    # A file a person wrote from scratch (no checksum) is left alone too.
    assert not is_pristine("---\ntitle: mine\n---\nbody\n")


def test_crash_mid_run_then_rerun_loses_and_duplicates_nothing(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in (1, 2, 3):
        write(env["projects"] / PROJECT / f"{sid(n)}.jsonl", records(sid(n), TURNS))
    import memrecall.summarize.pipeline as pipeline

    real = pipeline.Ledger.save
    calls = {"n": 0}

    def dying_save(self):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 2:
            # Killed after the 2nd summary file was written, before the ledger said so.
            raise KeyboardInterrupt
        real(self)

    monkeypatch.setattr(pipeline.Ledger, "save", dying_save)
    with pytest.raises(KeyboardInterrupt):
        run()
    assert len(summaries(env["summaries"])) == 2
    assert not run_record_path(load_settings()).exists()
    monkeypatch.setattr(pipeline.Ledger, "save", real)
    report = run()
    assert report.summarized == 2  # the one not recorded, and the one never reached
    files = summaries(env["summaries"])
    assert len(files) == 3
    assert all(is_pristine(f.read_text(encoding="utf-8")) for f in files)
    assert run().summarized == 0


def test_run_record_contract(env: dict[str, Path]) -> None:
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    write(env["projects"] / PROJECT / f"{sid(2)}.jsonl", records(sid(2), [("ok", "はい", None)]))
    report = run()
    record = json.loads(run_record_path(load_settings()).read_text(encoding="utf-8"))
    assert set(record) == RUN_KEYS
    assert record["summarized"] == 1 and record["skipped"] == {"tiny": 1} and record["failed"] == []
    assert record["backend"] == "extractive" and record["chars_sent"] == 0
    assert record["raw_bytes"] == (env["projects"] / PROJECT / f"{sid(1)}.jsonl").stat().st_size
    assert record["pending"] == 0 and record["oldest_unsummarized"] is None
    assert datetime.fromisoformat(record["started"]) <= datetime.fromisoformat(record["finished"])
    assert record == report.record()


def test_quiet_minutes_limit_max_sessions_since(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [
        write(env["projects"] / PROJECT / f"{sid(n)}.jsonl", records(sid(n), TURNS))
        for n in (1, 2, 3, 4)
    ]
    now = load_settings().now
    for age, path in zip((48, 30, 20, 0), paths):  # hours before "now"
        stamp = (now - timedelta(hours=age, minutes=2 if age == 0 else 0)).timestamp()
        os.utime(path, (stamp, stamp))
    report = run(dry_run=True)
    reasons = {r.session_id: r.reason for r in report.rows}
    assert reasons[sid(4)] == "still-active"  # written two minutes ago
    limited = {r.session_id: r.reason for r in run(dry_run=True, limit=1).rows}
    assert limited[sid(1)] == "" and limited[sid(2)] == "over-limit"  # oldest first
    capped = run(max_sessions=2)
    assert capped.summarized == 2 and capped.skipped.get("max-sessions") == 1
    record = capped.record()
    assert record["pending"] == 2  # one over max-sessions, one still active
    assert record["oldest_unsummarized"] is not None
    since = {r.session_id for r in run(dry_run=True, since=now - timedelta(hours=25)).rows}
    assert sid(1) not in since and sid(3) in since


def test_rejected_summary_retried_across_runs_then_failed(
    env: dict[str, Path], isolated_home: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "bad_llm.py"
    bad.write_text(
        "import sys\nsys.stdin.read()\nprint('Sure! Here is a summary of the conversation.')\n"
    )
    config(isolated_home, f'[summarize]\ncommand = "{sys.executable} {bad}"\nmax_attempts = 2\n')
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    first = run(backend="command")
    assert first.failed and "attempt 1/2, will retry" in first.failed[0]["reason"]
    assert first.record()["pending"] == 1
    second = run(backend="command")
    assert second.failed and "attempt 2/2, gave up" in second.failed[0]["reason"]
    third = run(backend="command")
    assert not third.failed and third.skipped.get("failed-before") == 1
    assert not summaries(env["summaries"])


def test_cli_exit_codes_and_messages(
    env: dict[str, Path], isolated_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    assert run_app(["summarize", "--backend", "nope"]) == 2
    assert capsys.readouterr().err.strip().endswith("choose from claude, command, extractive")
    assert run_app(["summarize", "--since", "yesterday-ish"]) == 2
    assert "Error: invalid --since 'yesterday-ish': use an age" in capsys.readouterr().err

    assert run_app(["summarize", "--dry-run", "--backend", "extractive"]) == 0
    out = capsys.readouterr()
    assert sid(1)[:8] in out.out and "dry run: would summarize 1" in out.err

    failing = tmp_path / "fail.py"
    failing.write_text(
        "import sys\nsys.stdin.read()\nsys.stderr.write('model overloaded\\n')\nsys.exit(3)\n"
    )
    config(isolated_home, f'[summarize]\ncommand = "{sys.executable} {failing}"\n')
    assert run_app(["summarize", "--backend", "command"]) == 1
    err = capsys.readouterr().err
    assert (
        f"failed {sid(1)}: command exited with 3: "
        "model overloaded (attempt 1/3, will retry next run)" in err
    )
    assert err.rstrip().splitlines()[-1].startswith("Error: 1 session failed (run record: ")

    assert (
        run_app(
            [
                "summarize",
                "--backend",
                "extractive",
                "--max-sessions",
                "5",
                "--max-input-chars",
                "5000",
            ]
        )
        == 0
    )
    assert "summarized 1, failed 0" in capsys.readouterr().err


def test_missing_backend_program_fails_loudly_without_burning_attempts(
    env: dict[str, Path], isolated_home: Path
) -> None:
    config(isolated_home, '[summarize]\nclaude_command = "/nonexistent/claude"\n')
    for n in (1, 2):
        write(env["projects"] / PROJECT / f"{sid(n)}.jsonl", records(sid(n), TURNS))
    write(env["projects"] / PROJECT / f"{sid(3)}.jsonl", records(sid(3), [("ok", "はい", None)]))
    report = run(backend="claude")
    assert "claude CLI not found" in report.backend_unavailable
    assert not report.failed  # the backend failed, not the sessions
    assert report.skipped == {"backend-unavailable": 2, "tiny": 1}
    line = report.unavailable_line()
    assert line.startswith("2 sessions would be summarized; none written: claude CLI")
    assert not summaries(env["summaries"])
    ledger_file = ledger_path(load_settings())
    ledger = json.loads(ledger_file.read_text(encoding="utf-8")) if ledger_file.exists() else {}
    assert all(e.get("attempts", 0) == 0 for e in ledger.get("sessions", {}).values())
    record = json.loads(run_record_path(load_settings()).read_text(encoding="utf-8"))
    assert record["pending"] == 2  # doctor's backlog keeps counting them


def test_backend_lost_mid_run_counts_like_the_dry_run(
    env: dict[str, Path], isolated_home: Path, tmp_path: Path
) -> None:
    # A summarizer program that is there for the first session and gone for the next.
    program = tmp_path / "bin" / "vanishing-llm"
    program.parent.mkdir()
    body = "\\n".join(
        [
            "## Deploy",
            "x",
            "## 何をしてた",
            "- did",
            "## 決まったこと",
            "- (none)",
            "## 触ったファイル",
            "- (none)",
            "## 添付ファイル・URL",
            "- (none)",
            "## 出てきた話題",
            "[[PAY-1234]]",
        ]
    )
    program.write_text(
        f"#!{sys.executable}\nimport os, sys\nsys.stdin.read()\n"
        f"os.unlink(sys.argv[0])\nprint('{body}')\n",
        encoding="utf-8",
    )
    program.chmod(0o755)
    config(isolated_home, f'[summarize]\ncommand = "{program}"\n')
    for n in (1, 2, 3):
        write(env["projects"] / PROJECT / f"{sid(n)}.jsonl", records(sid(n), TURNS))
    write(env["projects"] / PROJECT / f"{sid(4)}.jsonl", records(sid(4), [("ok", "はい", None)]))
    planned = run(backend="command", dry_run=True)
    report = run(backend="command")
    assert report.summarized == 1 and not report.failed
    assert report.skipped == {"backend-unavailable": 2, "tiny": 1}
    assert report.attempted == planned.would_summarize == 3
    assert report.unavailable_line().startswith("3 sessions would be summarized; 1 written: ")


def test_cli_without_claude_on_path_fails_in_one_line_naming_the_fix(
    env: dict[str, Path],
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The default backend is claude; a first-day user without the CLI must learn what to do."""
    empty = env["home"].parent / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for n in (1, 2):
        write(env["projects"] / PROJECT / f"{sid(n)}.jsonl", records(sid(n), TURNS))
    write(env["projects"] / PROJECT / f"{sid(3)}.jsonl", records(sid(3), [("ok", "はい", None)]))

    assert run_app(["summarize", "--dry-run"]) == 0
    dry = capsys.readouterr().err
    assert "dry run: would summarize 2" in dry
    assert "Note: claude CLI not found" in dry and "--backend extractive" in dry

    assert run_app(["summarize"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    [line] = err
    assert line.startswith(
        "Error: 2 sessions would be summarized; none written: claude CLI not found"
    )
    assert "--backend extractive" in line and 'backend = "extractive" under [summarize]' in line
    assert str(isolated_home / "config.toml") in line
    assert not summaries(env["summaries"])

    # The config key it names works (the flag is tested above).
    config(isolated_home, '[summarize]\nbackend = "extractive"\n')
    assert run_app(["summarize"]) == 0
    assert "summarized 2, failed 0" in capsys.readouterr().err
    assert len(summaries(env["summaries"])) == 2


def test_internal_env_makes_summarize_a_no_op(
    env: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    monkeypatch.setenv("MEMRECALL_INTERNAL", "1")
    report = run()
    assert report.summarized == 0 and not report.rows and "MEMRECALL_INTERNAL" in report.notes[0]
    assert not summaries(env["summaries"])


def test_planted_secrets_never_reach_summary_or_state(
    env: dict[str, Path], isolated_home: Path
) -> None:
    (env["projects"] / PROJECT).mkdir()
    shutil.copy(
        FIXTURES / "planted-secrets.jsonl",
        env["projects"] / PROJECT / "5ec2e7a1-0000-4000-8000-00000000beef.jsonl",
    )
    secrets = json.loads((FIXTURES / "planted-secrets.secrets.json").read_text(encoding="utf-8"))
    report = run()
    assert report.summarized == 1, report.rows
    written = [p for p in isolated_home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in written)
    for path in written:
        text = path.read_text(encoding="utf-8", errors="replace")
        for name, secret in secrets.items():
            assert secret not in text, (name, path)
    # The run's own in-memory report (what the CLI prints) holds none either.
    assert not any(secret in repr(report) for secret in secrets.values())


@pytest.mark.parametrize("backend", ["extractive", "command"])
def test_frontmatter_fields_are_redacted(
    env: dict[str, Path], isolated_home: Path, tmp_path: Path, backend: str
) -> None:
    """A folder, branch, title or file named after a key: every frontmatter field is redacted."""
    key = "ghp_Front9Qa2Ws3Ed4Rf5Tg6Yh7Uj8Ik9Ol0PzX"
    aws = "AKIAZ5TY8WQ3NMXCFRNT"
    cwd = f"/home/dev/{key}"
    recs = records(sid(7), TURNS, cwd=cwd)
    for rec in recs:
        rec["gitBranch"] = f"fix/{aws}"
    recs.append({"type": "ai-title", "aiTitle": f"鍵 {key} の整理", "sessionId": sid(7)})
    recs.append(
        {
            "type": "custom-title",
            "customTitle": f"rotate sk-ant-api03-Cust0mTitle9xR2mK9pL4tW8nB3",
            "sessionId": sid(7),
        }
    )
    write(env["projects"] / "-home-dev-ghp-front" / f"{sid(7)}.jsonl", recs)
    if backend == "command":
        # A model that copies the session's own names into its title, tags and files.
        program = tmp_path / "echo_names.py"
        program.write_text(
            "import sys\nsys.stdin.read()\n"
            f"print('## Deploy {key}\\nx\\n## 何をしてた\\n- did\\n## 決まったこと\\n- (none)\\n"
            f"## 触ったファイル\\n- {cwd}/internal/payment/client.go\\n"
            "## 添付ファイル・URL\\n- (none)\\n"
            f"## 出てきた話題\\n[[{key}]] [[{aws}]]')\n",
            encoding="utf-8",
        )
        config(isolated_home, f'[summarize]\ncommand = "{sys.executable} {program}"\n')
    report = run(backend=backend)
    assert report.summarized == 1, report.rows
    [path] = summaries(env["summaries"])
    text = path.read_text(encoding="utf-8")
    import yaml

    front = yaml.safe_load(text.split("---\n")[1])
    for field in ("title", "project", "cwd", "git_branch", "source_transcript"):
        assert (
            key not in str(front[field])
            and aws not in str(front[field])
            and "Cust0m" not in str(front[field])
        ), field
    assert "[REDACTED:" in front["cwd"] and "[REDACTED:" in front["git_branch"]
    assert not any(key in str(item) or aws in str(item) for item in front["tags"] + front["files"])
    assert key not in text and aws not in text and "Cust0mTitle" not in text
    assert not any(key in repr(row) for row in report.rows)  # what the CLI prints


def test_corpus_end_to_end_extractive(corpus: Path, env: dict[str, Path]) -> None:
    src = corpus / "claude-transcripts" / "cc-2.1.332" / "projects"
    shutil.copytree(src, env["projects"], dirs_exist_ok=True)
    report = run()
    by_id = {
        r.session_id[:8]: (r.decision, r.reason)
        for r in report.rows
        if not r.session_id.endswith(".meta.json")
    }
    assert by_id["08edd954"] == ("summarized", "")
    assert by_id["16bdd7c3"] == ("summarized", "")
    assert by_id["af10c474"] == ("summarized", "")
    assert by_id["01371c3b"] == ("skipped", "tiny")
    assert by_id["6f8ecdf1"] == ("skipped", "headless")
    assert by_id["agent-a3"] == ("skipped", "subagent")
    text = next(env["summaries"].rglob("*08edd954.md")).read_text(encoding="utf-8")
    assert "internal/payment/client.go" in text
    assert "https://status.example-pay.jp/incidents/2026-11" in text
    # The injected memory from the stand-in hook is not re-summarized as a new fact.
    raw = next(env["projects"].rglob("08edd954*.jsonl")).read_text(encoding="utf-8")
    injected = raw.split("<memrecall-context>", 1)[1].split("</memrecall-context>", 1)[0]
    for line in (ln.strip() for ln in injected.replace("\\n", "\n").split("\n")):
        if len(line) > 25 and line not in TURNS[0][0]:
            assert line not in text, line


TOPIC_TURNS = [
    (
        "PAY-1234 の件、before と after を確認して。retry_count と PaymentGateway をまず確認",
        (
            "確認しました。retry_count は 3、PaymentGateway は Stripe を呼んでいます。"
            "before の値も確認済みです。"
        ),
        "Read",
    ),
    (
        "Stripe の在庫同期の処理も確認して update して。ファイルは UTF-8 で保存",
        "在庫同期を確認して update しました。PaymentGateway の retry_count も update しました。",
        "Edit",
    ),
    (
        "じゃあ PAY-1234 は retry_count を 2 にする方針で確定。Stripe 側の在庫同期も同じで",
        (
            "了解しました。PAY-1234 は retry_count 2 で確定です。"
            "Before merging, I will create the parallel commands."
        ),
        None,
    ),
]


def _links(text: str) -> list[str]:
    import re

    topics = text.split("## 出てきた話題\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"\[\[([^\]]+)\]\]", topics)


def test_extractive_links_only_names_worth_a_graph_node(env: dict[str, Path]) -> None:
    """[[before]], [[確認]], [[update]] cluttered the Obsidian graph: stopwords, everyday words
    (generic.txt) and plain English words are never linked; ids, identifiers, proper nouns
    and Japanese compounds are."""
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TOPIC_TURNS))
    assert run().summarized == 1
    [path] = summaries(env["summaries"])
    text = path.read_text(encoding="utf-8")
    links = _links(text)
    assert {"PAY-1234", "retry_count", "PaymentGateway", "Stripe", "在庫同期"} <= set(links), links
    for junk in (
        "before",
        "Before",
        "after",
        "確認",
        "update",
        "create",
        "parallel",
        "commands",
        "UTF-8",
        "client.go",
        "client",
        "処理",
    ):
        assert junk not in links, junk
    assert links[0] == "PAY-1234"  # ids first
    import yaml

    assert yaml.safe_load(text.split("---\n")[1])["tags"] == links  # the tags are the links


def test_extractive_links_are_capped_and_ids_leave_room(env: dict[str, Path]) -> None:
    from memrecall.summarize.extractive import MAX_ID_LINKS, MAX_LINKS

    names = " ".join(f"PAY-{n} handler_{n}_retry" for n in range(20))
    turns = [(f"{names} を見て", f"{names} を見ました。", None) for _ in range(3)]
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), turns))
    assert run().summarized == 1
    links = _links(summaries(env["summaries"])[0].read_text(encoding="utf-8"))
    assert len(links) == MAX_LINKS
    assert sum(link.startswith("PAY-") for link in links) == MAX_ID_LINKS


def test_extractive_link_words_come_from_the_users_lists_too(env: dict[str, Path]) -> None:
    """A word a person added to $MEMRECALL_HOME/generic.txt or stopwords.txt is not linked."""
    (env["home"] / "generic.txt").write_text("PaymentGateway\n", encoding="utf-8")
    (env["home"] / "stopwords.txt").write_text("Stripe\n", encoding="utf-8")
    write(env["projects"] / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TOPIC_TURNS))
    assert run().summarized == 1
    links = _links(summaries(env["summaries"])[0].read_text(encoding="utf-8"))
    assert "PaymentGateway" not in links and "Stripe" not in links and "PAY-1234" in links
