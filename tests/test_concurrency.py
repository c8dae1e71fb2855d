"""Many hooks at once — on one session and on many — while summarize and prune run.

Checks: every hook run leaves exactly one log line and each line parses (no lost or
interleaved lines); no run failed; per-session state stays valid JSON and a memory is
injected at most once per session even when that session's prompts race; summarize and
prune finish and leave valid files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

from _hardening import check_hook_stdout, hook_json, log_entries, make_stores, store_env
from test_hardening_cli import _old_summaries, write_session

SAME, OTHERS = 10, 10


def test_hooks_summarize_and_prune_at_once(tmp_path: Path, isolated_home: Path) -> None:
    stores = make_stores(tmp_path)
    projects = tmp_path / "projects"
    for n in range(1, 9):
        write_session(projects / "-home-dev-shop", n)
    _old_summaries(stores["summaries"], 200)  # prune has real work while the hooks read
    # Generous deadline: 20+ processes on 2 cores are slow, and a deadline would be a
    # legitimate quiet run rather than the race this test looks for.
    (isolated_home / "config.toml").write_text("[recall]\ndeadline_ms = 8000\n", encoding="utf-8")
    now = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    env = {
        **os.environ,
        **store_env(stores),
        "MEMRECALL_NOW": now,
        "MEMRECALL_CLAUDE_PROJECTS": str(projects),
        "MEMRECALL_TOKENIZER": "regex",
    }
    python = [sys.executable, "-m", "memrecall"]

    def start(args: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [*python, *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    background = [
        start(["summarize", "--backend", "extractive"]),
        start(["prune", "--older-than", "90d"]),
    ]
    hooks = []
    for i in range(SAME + OTHERS):
        session = "shared" if i < SAME else f"own-{i}"
        proc = start(["recall"])
        hooks.append((session, proc, hook_json(session, f"PAY-1234 の決済タイムアウト、試行 {i}")))
    outputs = []
    for session, proc, stdin in hooks:
        out, err = proc.communicate(stdin, timeout=120)
        assert proc.returncode == 0 and err == b"", err
        outputs.append((session, check_hook_stdout(out)))
    for proc in background:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode("utf-8", "replace")
        assert b"Traceback" not in err

    entries = log_entries(isolated_home)  # every line parses
    assert len(entries) == SAME + OTHERS, [e.get("decision") for e in entries]
    assert Counter(e["session"] for e in entries) == {
        "shared": SAME,
        **{f"own-{i}": 1 for i in range(SAME, SAME + OTHERS)},
    }
    assert not [e for e in entries if e["decision"] in ("error", "deadline") or "error" in e]
    # Each other session gets its memory; the shared one gets each memory once, no more.
    assert all(payload is not None for session, payload in outputs if session != "shared")
    shared = [e for e in entries if e["session"] == "shared" and e["decision"] == "inject"]
    refs = [item["ref"] for e in shared for item in e["injected"]]
    assert refs and len(refs) == len(set(refs)), refs
    state = json.loads(
        (isolated_home / "state" / "sessions" / "shared.json").read_text(encoding="utf-8")
    )
    assert state["turn"] == SAME
    assert sorted(i["ref"] for i in state["injected"]) == sorted(refs)
    for path in (isolated_home / "state" / "sessions").glob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))
    ledger = json.loads((isolated_home / "state" / "summarized.json").read_text(encoding="utf-8"))
    assert sum(1 for e in ledger["sessions"].values() if e["status"] == "done") == 8
    assert len(list((stores["summaries"] / ".archive").rglob("*.md"))) == 200
    assert not list(tmp_path.rglob("*.tmp"))


def test_concurrent_log_appends_never_interleave(tmp_path: Path) -> None:
    """Writers of big log lines (≈ 60 KB, far above the pipe/page atomicity sizes) racing."""
    script = (
        "import sys\nfrom datetime import datetime, timezone\nfrom pathlib import Path\n"
        "from memrecall.recall_log import append\n"
        "for n in range(40):\n"
        "    append(Path(sys.argv[1]), datetime(2026, 12, 1, tzinfo=timezone.utc),"
        " {'writer': sys.argv[2], 'n': n, 'pad': sys.argv[2] * 60000})\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(w)]) for w in range(6)
    ]
    for proc in procs:
        assert proc.wait(timeout=120) == 0
    lines = (tmp_path / "recall-2026-12.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 240
    seen = Counter()
    for line in lines:
        entry = json.loads(line)
        assert entry["pad"] == entry["writer"] * 60000
        seen[entry["writer"]] += 1
    assert set(seen.values()) == {40}
