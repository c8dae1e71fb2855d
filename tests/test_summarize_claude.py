"""The `claude` backend against a fake `claude` that records argv, environment, cwd and stdin."""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memrecall.config import load_settings
from memrecall.summarize.pipeline import SummarizeOptions, run_summarize

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "transcripts"
SECRETS: dict[str, str] = json.loads(
    (FIXTURES / "planted-secrets.secrets.json").read_text(encoding="utf-8")
)
LEAKED = "ghp_Z9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8c"  # the fake model "echoes" a token

FAKE = r"""#!{python}
import json, os, sys
data = sys.stdin.buffer.read().decode("utf-8")
with open(os.environ["FAKE_CLAUDE_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": data,
                          "env": {{k: v for k, v in os.environ.items()
                                  if k.startswith(("MEMRECALL", "CLAUDE"))}}}}) + "\n")
mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
if mode == "error":
    print(json.dumps({{"type": "result", "subtype": "error_max_turns", "is_error": True,
                      "result": "max turns"}}))
    sys.exit(1)
ja = "触ったファイル" in data
names = (
    ["何をしてた", "決まったこと", "触ったファイル", "添付ファイル・URL", "出てきた話題"]
    if ja
    else ["What we did", "Decisions", "Files touched", "Attachments and URLs", "Topics"]
)
summary = "\n".join([
    "## デプロイ設定の秘密情報を整理" if ja else "## Deploy settings cleanup",
    "設定の確認。",
    "## " + names[0], "- 設定を確認した。トークン {leaked} を見つけた", "- デプロイを直した",
    "## " + names[1], "- (none)",
    "## " + names[2], "- config/deploy.yml", "- src/invented/by_the_model.py",
    "## " + names[3], "- (none)",
    "## " + names[4], "[[デプロイ]] [[deploy]]",
    "keywords: デプロイ, deploy",
])
print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": summary}}))
"""


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    script = tmp_path / "bin" / "claude"
    script.parent.mkdir()
    script.write_text(FAKE.format(python=sys.executable, leaked=LEAKED), encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "claude-calls.jsonl"
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    # Inherited from a parent Claude Code session: must not reach the child.
    monkeypatch.setenv("CLAUDECODE", "1")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "parent-session")
    monkeypatch.setenv("CLAUDE_CODE_CHILD_SESSION", "1")
    projects = tmp_path / "projects" / "-home-dev-secret-app"
    projects.mkdir(parents=True)
    shutil.copy(
        FIXTURES / "planted-secrets.jsonl", projects / "5ec2e7a1-0000-4000-8000-00000000beef.jsonl"
    )
    monkeypatch.setenv("MEMRECALL_CLAUDE_PROJECTS", str(tmp_path / "projects"))
    monkeypatch.setenv(
        "MEMRECALL_NOW", (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    )
    (isolated_home / "config.toml").write_text(
        f'[summarize]\nbackend = "claude"\nclaude_command = "{script}"\n', encoding="utf-8"
    )
    return log


def calls(log: Path) -> list[dict]:  # type: ignore[type-arg]
    return (
        [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        if log.exists()
        else []
    )


def test_flags_environment_cwd_and_recursion_guard(fake_claude: Path, isolated_home: Path) -> None:
    settings = load_settings()
    report = run_summarize(settings)
    assert report.summarized == 1, report.rows
    [call] = calls(fake_claude)
    argv = call["argv"]
    assert argv[0] == "-p"
    pairs = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    assert pairs["--model"] == "haiku"
    assert pairs["--output-format"] == "json"
    assert pairs["--max-turns"] == "1"
    assert pairs["--tools"] == ""  # no tools at all
    assert json.loads(pairs["--settings"]) == {"disableAllHooks": True}  # no hooks
    assert "--no-session-persistence" in argv  # no transcript of the summarizer
    env = call["env"]
    assert env["MEMRECALL_INTERNAL"] == "1"  # every memrecall hook exits 0 silently
    assert env["CLAUDE_CODE_SKIP_PROMPT_HISTORY"] == "1"
    for inherited in ("CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CLAUDE_CODE_CHILD_SESSION"):
        assert inherited not in env
    # A memrecall-owned folder that discovery always skips.
    assert Path(call["cwd"]).resolve() == settings.work_dir.resolve()
    assert call["stdin"].startswith("<!-- memrecall-summarizer-prompt")
    assert report.chars_sent == len(call["stdin"])


def test_planted_secrets_never_reach_llm_input_summary_or_logs(
    fake_claude: Path, isolated_home: Path
) -> None:
    report = run_summarize(load_settings())
    assert report.summarized == 1
    [call] = calls(fake_claude)
    for name, secret in SECRETS.items():
        assert secret not in call["stdin"], name
    assert "[REDACTED:" in call["stdin"]
    written = [p for p in isolated_home.rglob("*") if p.is_file()]
    summary = next(p for p in written if p.suffix == ".md")
    text = summary.read_text(encoding="utf-8")
    assert LEAKED not in text and "[REDACTED:" in text  # the model's output is redacted too
    for path in written:
        content = path.read_text(encoding="utf-8", errors="replace")
        for name, secret in {**SECRETS, "leaked": LEAKED}.items():
            assert secret not in content, (name, path)
    # Files are taken from the transcript: the path the model invented is dropped.
    assert "src/invented/by_the_model.py" not in text


def test_backend_error_is_a_failure_with_a_redacted_one_line_reason(
    fake_claude: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "error")
    report = run_summarize(load_settings())
    assert report.summarized == 0
    [failure] = report.failed
    assert failure["session"] == "5ec2e7a1-0000-4000-8000-00000000beef"
    assert failure["reason"].startswith("claude exited with 1: max turns")
    assert "\n" not in failure["reason"]


def test_long_session_is_chunked_and_merged_never_sent_whole(
    fake_claude: Path, isolated_home: Path, tmp_path: Path
) -> None:
    (isolated_home / "config.toml").write_text(
        (isolated_home / "config.toml").read_text()
        + "max_input_chars = 6000\nchunk_chars = 2000\n",
        encoding="utf-8",
    )
    project = tmp_path / "projects" / "-home-dev-secret-app"
    lines = []
    for i in range(60):
        lines.append(
            json.dumps(
                {
                    "type": "user",
                    "uuid": f"u{i}",
                    "sessionId": "7a1e0000-0000-4000-8000-000000000001",
                    "cwd": "/home/dev/secret-app",
                    "entrypoint": "cli",
                    "timestamp": "2026-11-21T10:00:00Z",
                    "message": {
                        "role": "user",
                        "content": f"質問 {i}: 決済のリトライ処理 {i} について詳しく調べて " * 4,
                    },
                }
            )
        )
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": f"a{i}",
                    "sessionId": "7a1e0000-0000-4000-8000-000000000001",
                    "timestamp": "2026-11-21T10:00:01Z",
                    "message": {
                        "id": f"m{i}",
                        "content": [
                            {
                                "type": "text",
                                "text": f"回答 {i}: リトライは指数バックオフです。" * 6,
                            }
                        ],
                    },
                }
            )
        )
    (project / "7a1e0000-0000-4000-8000-000000000001.jsonl").write_text(
        "\n".join(lines) + "\n", encoding="utf-8"
    )
    raw = (project / "7a1e0000-0000-4000-8000-000000000001.jsonl").stat().st_size
    report = run_summarize(load_settings(), SummarizeOptions())
    row = next(r for r in report.rows if r.session_id.startswith("7a1e0000"))
    assert row.decision == "summarized", row
    prompts = [c["stdin"] for c in calls(fake_claude) if "5ec2e7a1" not in c["stdin"]]
    assert len(prompts) >= 4  # ≥ 3 chunks and the merge
    for prompt in prompts[:-1]:
        body = prompt.rsplit("<transcript>\n", 1)[1].rsplit("</transcript>", 1)[0]
        assert len(body) <= 2000 + 20
    assert row.sent_chars < raw


def test_dry_run_sends_nothing(fake_claude: Path, isolated_home: Path) -> None:
    report = run_summarize(load_settings(), SummarizeOptions(dry_run=True))
    assert report.would_summarize == 1
    assert report.rows[0].sent_chars > 0  # the estimate shown in the table
    assert calls(fake_claude) == []
    assert not any(p.is_file() for p in isolated_home.rglob("*") if p.name != "config.toml")


def test_summarizer_transcripts_in_its_work_folder_are_skipped(
    fake_claude: Path, tmp_path: Path
) -> None:
    settings = load_settings()
    own = "".join(c if c.isalnum() else "-" for c in os.path.realpath(settings.work_dir))
    leak = tmp_path / "projects" / own / "9e9e9e9e-0000-4000-8000-000000000000.jsonl"
    leak.parent.mkdir(parents=True)
    shutil.copy(FIXTURES / "planted-secrets.jsonl", leak)
    report = run_summarize(settings, SummarizeOptions(dry_run=True))
    reasons = {r.session_id: r.reason for r in report.rows}
    assert reasons["9e9e9e9e-0000-4000-8000-000000000000"] == "memrecall-internal"


def test_claude_found_on_path_by_its_bare_name(
    fake_claude: Path, isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The up-front check looks the default `claude` up on PATH, as the run itself does."""
    (isolated_home / "config.toml").write_text(
        '[summarize]\nbackend = "claude"\n', encoding="utf-8"
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    report = run_summarize(load_settings())
    assert not report.backend_unavailable and report.summarized == 1
    monkeypatch.setenv("PATH", str(tmp_path / "projects"))  # no claude there
    report = run_summarize(load_settings())
    assert report.backend_unavailable == "claude CLI not found ('claude' is not on PATH)"
