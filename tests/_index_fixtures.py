"""Small stores and process helpers for the index tests (tests/test_index.py).

Every store here is tiny on purpose: the tests prove behaviour, benchmarks prove speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

NOW = "2026-12-02T09:00:00+09:00"
# The suite runs on a busy 2-core machine: a hook that is not about time gets the most
# room the configuration allows, so a slow moment never turns an answer into "deadline".
ROOMY = "[recall]\ndeadline_ms = 8000\n"


def note(vault: Path, rel: str, text: str) -> Path:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def summary(
    root: Path,
    day: str,
    sid: str,
    title: str,
    body: str,
    tags: str = "[]",
    git_branch: str | None = "main",
) -> Path:
    path = root / day[:4] / day[5:7] / f"{day}-{sid}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    branch = f"git_branch: {git_branch}\n" if git_branch is not None else ""
    path.write_text(
        f"---\ntitle: {title}\ndate: {day}T10:00:00+09:00\n"
        f"session_id: {sid}-0000-4000-8000-000000000000\n"
        f"project: shop\n{branch}tags: {tags}\n---\n## {title}\n{body}\n",
        encoding="utf-8",
    )
    return path


def export(path: Path, issues: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in issues), encoding="utf-8"
    )
    return path


ISSUES: list[dict[str, Any]] = [
    {
        "id": "bd-7f3a",
        "title": "Checkout returns 500 on expired coupon",
        "status": "open",
        "priority": 1,
        "description": "The checkout endpoint crashes when the coupon has expired.",
        "updated_at": "2026-11-20T10:00:00Z",
    },
    {
        "id": "bd-9c1e",
        "title": "決済リトライの上限",
        "status": "open",
        "priority": 2,
        "description": "bd-7f3a の後続。bd-7f3a と同じ経路。bd-7f3a を参照。",
        "updated_at": "2026-11-21T10:00:00Z",
    },
    {
        "id": "bd-2b8d",
        "title": "Follow-up: coupon cleanup",
        "status": "closed",
        "priority": 3,
        "description": "Split from bd-7f3a. See bd-7f3a; bd-7f3a was the root cause.",
        "updated_at": "2026-10-01T10:00:00Z",
    },
    {
        "id": "bd-4e5f",
        "title": "請求書PDFの文字化け",
        "status": "open",
        "priority": 2,
        "description": "請求書発行バッチが Shift_JIS で出力して文字化けする。",
        "updated_at": "2026-11-01T10:00:00Z",
    },
    {
        "id": "bd-6a70",
        "title": "Flaky login test",
        "status": "open",
        "priority": 3,
        "description": "login_spec fails once in twenty runs on CI.",
        "updated_at": "2026-11-05T10:00:00Z",
    },
]


def chores(count: int = 20) -> list[dict[str, Any]]:
    """Open issues about nothing: enough documents that a word in one issue is rare."""
    return [
        {
            "id": f"bd-x{n:03d}",
            "title": f"Unrelated chore {n}",
            "description": "Tidy the release notes.",
            "status": "open",
        }
        for n in range(count)
    ]


def diary(vault: Path, count: int = 20) -> None:
    """Notes about nothing, for the same reason."""
    for n in range(count):
        note(vault, f"note/雑記{n}.md", f"# 雑記{n}\n\n今日の作業メモ。\n")


def searched(prompt: str, engine: str) -> Any:
    """`memrecall search` on the configured stores with the index (built first) or ripgrep."""
    from memrecall.config import load_settings
    from memrecall.search import search
    from memrecall.tokenize import tokenize_text

    settings = load_settings()
    if engine == "index":
        from memrecall.index import refresh

        refresh(settings)
    keywords, _ = tokenize_text(prompt, settings.tokenizer, settings)
    outcome = search(keywords, settings, text=prompt)
    assert outcome.engine == engine
    return outcome


def build_stores(
    tmp_path: Path, home: Path, monkeypatch: Any, index: str = "manual"
) -> dict[str, Path]:
    """A vault, a beads project and a summaries folder, a little of everything the matching
    rules talk about, and some background notes so rarity means something."""
    vault = tmp_path / "vault"
    note(
        vault,
        "notes/在庫同期バッチ.md",
        "---\ntags: [inventory]\n---\n# 在庫同期バッチ\n"
        "在庫同期バッチで SKU が二重に加算されるバグがあった。\n"
        "原因は `sync_inventory_batch` のリトライ。\n",
    )
    note(
        vault,
        "notes/Kafka consumer lag.md",
        "# Kafka consumer lag\nThe orders consumer fell behind after the partition change.\n",
    )
    note(
        vault,
        "notes/PAY-1234 決済.md",
        "# PAY-1234 決済タイムアウト\nPAY-1234: 決済 API が 10 秒でタイムアウトする。\n",
    )
    note(
        vault,
        "notes/coupon-policy.md",
        "---\ntitle: Coupon policy\ngit_branch: feature/x\nstatus: draft\n---\n"
        "A coupon stacks with the member discount only once per order.\n",
    )
    note(
        vault,
        "notes/branch-naming.md",
        "# Branch naming\nThe hook records git_branch for every session summary.\n",
    )
    note(
        vault,
        "notes/監視設計.md",
        "# 監視設計\nマイクロサービス基盤の監視ダッシュボードを作った。\n",
    )
    note(
        vault,
        "設計/認証フロー.md",
        "# 認証フロー\nOAuth のリフレッシュトークンは 30 日で失効する。\n",
    )
    (vault / ".obsidian").mkdir(parents=True, exist_ok=True)
    (vault / ".obsidian" / "workspace.md").write_text(
        "在庫同期 PAY-1234 hidden\n", encoding="utf-8"
    )
    for n in range(12):
        note(
            vault,
            f"daily/{n:02d}.md",
            f"# Daily {n}\nレビューと会議。設定を確認した。\nStandup notes, nothing else.\n",
        )

    project = tmp_path / "shop"
    export(project / ".beads" / "issues.jsonl", ISSUES)

    summaries = tmp_path / "summaries"
    summary(
        summaries,
        "2026-11-28",
        "aaaa1111",
        "決済タイムアウト値の見直し",
        "PAY-1234 の決済タイムアウトを 5 秒、リトライ 1 回に変更した。",
        "[決済]",
    )
    summary(
        summaries,
        "2026-11-15",
        "bbbb2222",
        "Deploying the search service",
        "We deployed the search service with blue/green switching; rollback_window_minutes is 15.",
        "[deploy]",
    )
    summary(
        summaries,
        "2026-07-01",
        "cccc3333",
        "古い Redis 障害",
        "Redis クラスタ redis_failover_drill の障害対応。",
        "[Redis]",
    )

    (home / "config.toml").write_text(ROOMY, encoding="utf-8")
    env = {
        "MEMRECALL_OBSIDIAN": str(vault),
        "MEMRECALL_BEADS": str(project),
        "MEMRECALL_SUMMARIES": str(summaries),
        "MEMRECALL_NOW": NOW,
        "MEMRECALL_TOKENIZER": "sudachi",
        "MEMRECALL_INDEX": index,
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return {
        "vault": vault,
        "project": project,
        "beads": project / ".beads" / "issues.jsonl",
        "summaries": summaries,
        "home": home,
    }


# --- processes -------------------------------------------------------------------------------


def cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "memrecall", *args],
        capture_output=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


def cli_json(*args: str, env: dict[str, str] | None = None) -> Any:
    done = cli(*args, "--json", env=env)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return json.loads(done.stdout)


def hook_stdin(prompt: str, session: str) -> bytes:
    return json.dumps(
        {"session_id": session, "prompt": prompt, "cwd": "/tmp"}, ensure_ascii=False
    ).encode()


def hook(
    prompt: str, session: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "memrecall", "recall"],
        input=hook_stdin(prompt, session),
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def start_hook(
    prompt: str, session: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memrecall", "recall"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdin is not None
    proc.stdin.write(hook_stdin(prompt, session))
    proc.stdin.close()
    proc.stdin = None  # already sent: communicate() only collects the output
    return proc


def log_lines(home: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for f in sorted((home / "logs").glob("recall-*.jsonl"))
        for line in f.read_text("utf-8").splitlines()
        if line.strip()
    ]


def last_log(home: Path, session: str) -> dict[str, Any]:
    entries = [e for e in log_lines(home) if e.get("session") == session]
    assert entries, f"no log entry for session {session}"
    return entries[-1]


def injected_refs(entry: dict[str, Any]) -> list[str]:
    return [i["ref"] for i in entry.get("injected", [])]


# --- background refreshes --------------------------------------------------------------------


def background_refreshes(home: Path) -> list[int]:
    """Process ids of detached `memrecall index refresh` runs working on this home (Linux)."""
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"memrecall" not in argv or b"index" not in argv:
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"MEMRECALL_HOME={home}".encode() in environ:
            found.append(int(entry.name))
    return found


def wait_for_background(home: Path, timeout: float = 180) -> None:
    """Until no refresh started by a hook is still writing into `home`: nothing may write
    into a test's tmp folder after the test returns."""
    end = time.monotonic() + timeout
    while background_refreshes(home):
        assert time.monotonic() < end, "a background index refresh did not end"
        time.sleep(0.1)
    # Whoever held the write lock has let go (a process can hold it only while alive).
    if (home / "index").is_dir():
        from filelock import FileLock

        with FileLock(str(home / "index" / "write.lock"), timeout=max(1.0, end - time.monotonic())):
            pass


def poll(condition: Any, timeout: float = 120, every: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(every)
    return bool(condition())
