"""`memrecall doctor`: every check reports; exit 1 when one fails."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memrecall.__main__ import main

NOW = "2026-12-02T09:00:00+09:00"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def healthy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A machine where everything is in place: hook installed, a vault, a summary, a fake claude."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "note.md").write_text("# note\n", encoding="utf-8")
    (vault / ".obsidian" / "hidden.md").write_text("x\n", encoding="utf-8")
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    summaries = isolated_home / "summaries" / "2026" / "11"
    summaries.mkdir(parents=True)
    (summaries / "2026-11-30-abcdef12.md").write_text(
        "---\ntitle: t\ndate: 2026-11-30T10:00:00+09:00\nsession_id: abcdef12-0000\n---\nbody\n", encoding="utf-8"
    )
    bindir = tmp_path / "bin"
    bindir.mkdir()
    claude = bindir / "claude"
    claude.write_text("#!/bin/sh\necho '2.1.332 (Claude Code)'\n", encoding="utf-8")
    claude.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    write_record(isolated_home, oldest="2026-11-28T10:00:00+09:00")
    assert main(["init"]) == 0
    capsys.readouterr()
    return home


def write_record(home: Path, oldest: str | None, finished: str = "2026-12-02T04:19:00+09:00") -> None:
    (home / "state").mkdir(exist_ok=True)
    (home / "state" / "summarize-run.json").write_text(json.dumps({
        "started": "2026-12-02T04:17:00+09:00", "finished": finished, "backend": "claude", "summarized": 2,
        "skipped": {"too small": 1}, "failed": [], "chars_sent": 1000, "raw_bytes": 5000,
        "oldest_unsummarized": oldest, "pending": 3 if oldest else 0,
    }), encoding="utf-8")


def checks(out: str) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(out)}


def test_all_ok(healthy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "doctor", "--json")
    found = checks(out)
    assert code == 0, found
    assert {c["status"] for c in found.values()} <= {"ok", "warn"}
    assert found["store obsidian"]["detail"].endswith(": 1 notes")
    assert "1 summaries, 1 within 90 days" in found["store summaries"]["detail"]
    assert found["hook (user)"]["status"] == "ok" and "starts in" in found["hook (user)"]["detail"]
    assert found["claude CLI"]["detail"].startswith("2.1.332 (Claude Code)")
    assert found["summarize"]["status"] == "ok"
    assert found["backlog"]["status"] == "ok" and "3 sessions pending; oldest 4 days old" in found["backlog"]["detail"]
    assert found["tokenizer regex"]["status"] == "ok" and found["tokenizer regex"]["ms"] > 0
    assert found["ripgrep"]["detail"].startswith("ripgrep ")
    assert err.endswith(" warnings.\n") or err.endswith("all ok.\n")


def test_table_output(healthy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "doctor")
    assert code == 0
    for name in ("ripgrep", "tokenizer sudachi", "store summaries", "hook (user)", "claude CLI", "backlog", "disk use"):
        assert name in out


def test_backlog_near_the_30_day_cleanup_fails(healthy: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_record(isolated_home, oldest="2026-11-05T10:00:00+09:00")
    code, out, err = run(capsys, "doctor", "--json")
    assert code == 1
    backlog = checks(out)["backlog"]
    assert backlog["status"] == "fail" and "oldest 27 days old, Claude Code deletes it in ~3 days" in backlog["detail"]
    assert err.startswith("Error: 1 of ") and "checks failed" in err


def test_no_hook_and_no_claude_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    code, out, err = run(capsys, "doctor", "--json")
    assert code == 1
    found = checks(out)
    assert found["hook"] == {
        "name": "hook", "status": "fail", "detail": "the memrecall hook is not in any Claude Code settings file",
        "fix": "run memrecall init (or install the memrecall plugin)", "ms": found["hook"]["ms"],
    }
    assert found["claude CLI"]["status"] == "fail"
    assert found["summarize"] == {**found["summarize"], "status": "warn", "detail": "never run"}
    assert err.startswith("Error: 2 of ") and "checks failed" in err and err.count("\n") == 1


def test_hook_pointing_at_a_missing_program_fails(healthy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = healthy / ".claude" / "settings.json"
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "/gone/venv/bin/memrecall recall", "timeout": 10}]}]}}), encoding="utf-8")
    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 1
    hook = checks(out)["hook (user)"]
    assert hook["status"] == "fail" and "points at a missing program" in hook["detail"]


def test_malformed_settings_fail(healthy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (healthy / ".claude" / "settings.json").write_text("{nope", encoding="utf-8")
    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 1
    found = checks(out)
    assert "is not valid JSON" in found["hook (user)"]["detail"] and found["hook"]["status"] == "fail"


def test_configured_store_missing_fails(healthy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEMRECALL_BEADS", str(tmp_path / "no-such-project"))
    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 1
    assert checks(out)["store beads"]["status"] == "fail"


def test_plugin_route_counts_as_installed(healthy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (healthy / ".claude" / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"memrecall@my-marketplace": True}}), encoding="utf-8")
    code, out, _ = run(capsys, "doctor", "--json")
    found = checks(out)
    assert found["hook (user)"]["status"] == "ok" and "plugin enabled" in found["hook (user)"]["detail"]
    assert "hook" not in found and code == 0
