"""Every command but the hook, fed bad input: one line `Error: …` on stderr, exit 1 (2 for
usage), no traceback, nothing half-written. Then kill tests: summarize and prune SIGKILLed
at random moments, rerun, and the store equals the one a clean run leaves.

The table of cases is printed at the end of the run (`cli hardening matrix: N cases`).
"""

from __future__ import annotations

import json
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import pytest

from _hardening import NOW, make_stores, store_env, table_fixture

cli_table = table_fixture("cli hardening matrix")
KILL_ROUNDS = 4


def _run(
    args: list[str],
    env: dict[str, str],
    stdin: bytes = b"",
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[bytes]:
    # -P as the installed `memrecall` script behaves: the current folder (a hostile repository's,
    # in some cases) is not on sys.path.
    return subprocess.run(
        [sys.executable, "-P", "-m", "memrecall", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=timeout,
        check=False,
    )


def _tree(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            try:
                out[path.relative_to(root).as_posix()] = path.read_bytes()
            except OSError:
                continue
    return out


@dataclass
class Ctx:
    base: Path
    home: Path
    env: dict[str, str]


@dataclass
class Bad:
    args: list[str]
    code: int  # 1 = error, 2 = usage
    stdin: bytes = b""
    setup: Callable[[Ctx], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    unchanged: bool = True  # the failing run must not write anything at all (lock sidecars aside)
    help_instead: bool = (
        False  # a bare command group prints its help (exit 2) instead of an Error line
    )
    cwd: str | None = None  # relative to the test's base folder
    stdout_has: str = ""  # e.g. the failed doctor check that must be the reason
    stdout_lacks: str = ""  # "{base}" is replaced, as in env values ("{PATH}": the current PATH)
    forbid: str | None = None  # a file (relative to base) that must never come to exist


def _state_is_a_file(ctx: Ctx) -> None:
    (ctx.home / "state").write_text("not a folder", encoding="utf-8")


def _stopwords_is_a_folder(ctx: Ctx) -> None:
    (ctx.home / "stopwords.txt").mkdir()


def _settings_corrupt(ctx: Ctx) -> None:
    (ctx.base / "claude").mkdir(exist_ok=True)
    (ctx.base / "claude" / "settings.json").write_text(
        '{"hooks": {"UserPromptSubmit": [', encoding="utf-8"
    )


def _settings_is_a_folder(ctx: Ctx) -> None:
    (ctx.base / "claude" / "settings.json").mkdir(parents=True)


def _settings_not_an_object(ctx: Ctx) -> None:
    (ctx.base / "claude").mkdir(exist_ok=True)
    (ctx.base / "claude" / "settings.json").write_text('["hooks"]', encoding="utf-8")


def _settings_fifo(ctx: Ctx, where: Path | None = None) -> None:
    folder = where or ctx.base / "claude"
    folder.mkdir(parents=True, exist_ok=True)
    os.mkfifo(folder / "settings.json")


def _settings_symlink_to_fifo(ctx: Ctx) -> None:
    os.mkfifo(ctx.base / "pipe")
    (ctx.base / "claude").mkdir(exist_ok=True)
    (ctx.base / "claude" / "settings.json").symlink_to(ctx.base / "pipe")


def _settings_socket(ctx: Ctx) -> None:
    import socket

    (ctx.base / "claude").mkdir(exist_ok=True)
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ctx.base / "claude" / "settings.json"))
    sock.close()


def _settings_huge(ctx: Ctx) -> None:
    (ctx.base / "claude").mkdir(exist_ok=True)
    with open(ctx.base / "claude" / "settings.json", "wb") as handle:
        handle.truncate(20 * 1024 * 1024)  # sparse: 20 MB to read, no disk used


def _settings_text(text: str) -> Callable[[Ctx], None]:
    def setup(ctx: Ctx) -> None:
        (ctx.base / "claude").mkdir(exist_ok=True)
        (ctx.base / "claude" / "settings.json").write_text(text, encoding="utf-8")

    return setup


REPO = "repo-クローン"
MARKER = "pwned-印"


def _hostile_repo(ctx: Ctx, into_user_settings: bool = False) -> None:
    """A cloned repository that wants doctor to run its code: hook commands that chain,
    substitute or redirect, a script named memrecall that looks like pip's (also first on
    PATH), and a `memrecall/` package any Python started in the folder would import."""
    repo, marker = ctx.base / REPO, shlex.quote(str(ctx.base / MARKER))
    (repo / "bin").mkdir(parents=True)
    evil = repo / "bin" / "memrecall"
    evil.write_text(
        f"#!/bin/sh\n# from memrecall.__main__ import main\ntouch {marker}\n", encoding="utf-8"
    )
    evil.chmod(0o755)
    (repo / "memrecall").mkdir()
    for module in ("__init__.py", "__main__.py"):
        (repo / "memrecall" / module).write_text(
            f"open({str(ctx.base / MARKER)!r}, 'w').close()\n", encoding="utf-8"
        )
    commands = [
        f"memrecall recall; touch {marker}",
        f"memrecall recall && touch {marker}",
        f"memrecall recall > {marker}",
        f"memrecall recall $(touch {marker})",
        f"memrecall recall `touch {marker}`",
        f"memrecall recall\ntouch {marker}",
        f"bash -c 'memrecall recall; echo 記憶 > {marker}'",
        f"{shlex.quote(str(evil))} recall",
        "./bin/memrecall recall",
        "memrecall recall",
        f"{shlex.quote(sys.executable)} -m memrecall recall",
    ]
    folder = ctx.base / "claude" if into_user_settings else repo / ".claude"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {"hooks": [{"type": "command", "command": c} for c in commands]}
                    ]
                }
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    if not into_user_settings:
        (folder / "settings.local.json").write_text(
            json.dumps(
                {
                    "hooks": {
                        "UserPromptSubmit": [
                            {
                                "hooks": [
                                    {
                                        "type": "command",
                                        "command": f"memrecall recall | tee {marker}",
                                    }
                                ]
                            }
                        ]
                    }
                }
            ),
            encoding="utf-8",
        )


def _summaries_is_a_file(ctx: Ctx) -> None:
    old = ctx.base / "summaries" / "2026" / "01"
    old.mkdir(parents=True)
    (old / "2026-01-01-aaaa1111.md").write_text(
        "---\nsession_id: aaaa1111-x\ndate: 2026-01-01\n---\nx\n", encoding="utf-8"
    )
    (ctx.base / "summaries" / ".archive").write_text(
        "a file where the archive folder goes", encoding="utf-8"
    )


BAD: dict[str, Bad] = {
    "search-limit-0": Bad(["search", "x", "--limit", "0"], 2),
    "search-limit-text": Bad(["search", "x", "--limit", "many"], 2),
    "search-unknown-store": Bad(["search", "x", "--store", "jira"], 2),
    "search-unknown-backend": Bad(["search", "x", "--backend", "klingon"], 2),
    "search-missing-program": Bad(["search", "x", "--backend", "command:/nonexistent/analyser"], 1),
    "search-no-query": Bad(["search"], 2),
    "tokenize-unknown-backend": Bad(["tokenize", "--backend", "klingon"], 2, stdin=b"PAY-1234"),
    "tokenize-unknown-backend-empty-stdin": Bad(["tokenize", "--backend", "klingon"], 2),
    "tokenize-failing-program": Bad(
        ["tokenize", "--backend", "command:false"], 1, stdin="決済のタイムアウト".encode()
    ),
    "tokenize-unknown-flag": Bad(["tokenize", "--bogus"], 2),
    "summarize-bad-since": Bad(["summarize", "--since", "last tuesday"], 2),
    "summarize-huge-since": Bad(["summarize", "--since", "99999999999999d"], 2),
    "summarize-unknown-backend": Bad(["summarize", "--backend", "gpt"], 2),
    "summarize-negative-limit": Bad(["summarize", "--limit", "-1"], 2),
    "summarize-tiny-input-cap": Bad(["summarize", "--max-input-chars", "5"], 2),
    "summarize-state-is-a-file": Bad(
        ["summarize", "--backend", "extractive"], 1, setup=_state_is_a_file
    ),
    "summarize-command-unset": Bad(
        ["summarize", "--backend", "command"],
        1,
        unchanged=False,
        setup=lambda ctx: _one_session(ctx),
    ),
    "prune-zero-age": Bad(["prune", "--older-than", "0d"], 2),
    "prune-bad-age": Bad(["prune", "--older-than", "three months"], 2),
    "prune-huge-age": Bad(["prune", "--older-than", "99999999999999999999y"], 2),
    "prune-archive-is-a-file": Bad(["prune"], 1, setup=_summaries_is_a_file),
    "stopwords-no-subcommand": Bad(["stopwords"], 2, help_instead=True),
    "stopwords-unknown-subcommand": Bad(["stopwords", "bogus"], 2),
    "stopwords-add-nothing": Bad(["stopwords", "add"], 2),
    "stopwords-add-file-is-a-folder": Bad(
        ["stopwords", "add", "foo"], 1, setup=_stopwords_is_a_folder
    ),
    "stopwords-bad-since": Bad(["stopwords", "suggest", "--since", "soon"], 2),
    "stopwords-bad-source": Bad(["stopwords", "list", "--source", "elsewhere"], 2),
    "stats-bad-since": Bad(["stats", "--since", "2026-13-45"], 2),
    "stats-top-0": Bad(["stats", "--top", "0"], 2),
    "init-unknown-platform": Bad(["init", "--platform", "beos"], 2),
    "init-settings-corrupt": Bad(["init"], 1, setup=_settings_corrupt),
    "init-settings-not-an-object": Bad(["init"], 1, setup=_settings_not_an_object),
    "init-settings-is-a-folder": Bad(["init"], 1, setup=_settings_is_a_folder),
    "init-timeout-0": Bad(["init", "--timeout", "0"], 2),
    "init-settings-fifo": Bad(["init"], 1, setup=_settings_fifo),
    "init-uninstall-settings-fifo": Bad(["init", "--uninstall"], 1, setup=_settings_fifo),
    "init-project-settings-fifo": Bad(
        ["init", "--project"],
        1,
        cwd=REPO,
        setup=lambda ctx: _settings_fifo(ctx, ctx.base / REPO / ".claude"),
    ),
    "init-settings-symlink-to-fifo": Bad(["init"], 1, setup=_settings_symlink_to_fifo),
    "init-settings-socket": Bad(["init"], 1, setup=_settings_socket),
    "init-settings-20mb": Bad(["init"], 1, setup=_settings_huge),
    "init-settings-nan": Bad(["init"], 1, setup=_settings_text('{"x": NaN}')),
    "init-settings-infinity": Bad(
        ["init", "--uninstall"], 1, setup=_settings_text('{"設定": [-Infinity]}')
    ),
    "doctor-unknown-flag": Bad(["doctor", "--bogus"], 2),
    "doctor-settings-fifo": Bad(
        ["doctor", "--json"], 1, setup=_settings_fifo, stdout_has="is a FIFO, not a regular file"
    ),
    "doctor-home-under-a-file": Bad(
        ["doctor", "--json"],
        1,
        env={"MEMRECALL_HOME": "{base}/a-file/memrecall"},
        setup=lambda ctx: (ctx.base / "a-file").write_text("x", encoding="utf-8"),
        stdout_has="cannot write in",
    ),
    "doctor-hostile-project-settings": Bad(
        ["doctor", "--json", "--project"],
        1,
        setup=_hostile_repo,
        cwd=REPO,
        env={"PATH": "{base}/" + REPO + "/bin" + os.pathsep + "{PATH}"},
        forbid=MARKER,
        stdout_has="not run",
    ),
    "doctor-hostile-project-not-asked": Bad(
        ["doctor", "--json"],
        1,
        setup=_hostile_repo,
        cwd=REPO,
        env={"PATH": "{base}/" + REPO + "/bin" + os.pathsep + "{PATH}"},
        forbid=MARKER,
        stdout_lacks="{base}/" + REPO,
    ),
    "doctor-hostile-user-settings": Bad(
        ["doctor", "--json"],
        1,
        cwd=REPO,
        setup=lambda ctx: _hostile_repo(ctx, into_user_settings=True),
        env={"PATH": "{base}/" + REPO + "/bin" + os.pathsep + "{PATH}"},
        forbid=MARKER,
        stdout_has="not run",
    ),
    "demo-home-impossible": Bad(["demo", "--home", "/proc/1/nonexistent/demo"], 1),
    "unknown-command": Bad(["frobnicate"], 2),
}


def _one_session(ctx: Ctx) -> None:
    write_session(ctx.base / "projects" / "-home-dev-shop", 1)


@pytest.fixture
def ctx(tmp_path: Path, isolated_home: Path) -> Ctx:
    (tmp_path / "projects").mkdir()
    stores = make_stores(tmp_path)
    env = {
        **store_env(stores),
        "MEMRECALL_CLAUDE_PROJECTS": str(tmp_path / "projects"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"),
        "HOME": str(tmp_path / "userhome"),
        "MEMRECALL_NOW": (datetime.now(timezone.utc) + timedelta(hours=2)).isoformat(),
    }
    return Ctx(tmp_path, isolated_home, env)


@pytest.mark.parametrize("name", list(BAD))
def test_cli_bad_input_matrix(name: str, ctx: Ctx, cli_table) -> None:  # type: ignore[no-untyped-def]
    bad = BAD[name]
    if bad.setup:
        bad.setup(ctx)
    before = _tree(ctx.base)

    def fill(text: str) -> str:
        return text.replace("{base}", str(ctx.base)).replace("{PATH}", os.environ.get("PATH", ""))

    env = {**ctx.env, **{k: fill(v) for k, v in bad.env.items()}}
    # A FIFO that is read would block: a roomy timeout turns a hang into a failure, not a stall.
    done = _run(
        bad.args, env, stdin=bad.stdin, cwd=ctx.base / bad.cwd if bad.cwd else None, timeout=300
    )
    err = done.stderr.decode("utf-8", "replace")
    out = done.stdout.decode("utf-8", "replace")
    try:
        if bad.forbid:
            assert not (ctx.base / bad.forbid).exists(), "a configured command was run"
        assert fill(bad.stdout_has) in out, out[-2000:]
        if bad.stdout_lacks:
            assert fill(bad.stdout_lacks) not in out, out[-2000:]
        assert done.returncode == bad.code, (done.returncode, err)
        assert "Traceback" not in err, err
        errors = [line for line in err.splitlines() if line.startswith("Error:")]
        if bad.help_instead:
            assert err.startswith("Usage:") and not errors, err
            errors = ["(help)"]
        else:
            assert len(errors) == 1, err  # exactly one `Error: …` line
            assert len(errors[0]) < 600
        after = _tree(ctx.base)
        assert not [p for p in after if p.endswith(".tmp")], after.keys()
        if bad.unchanged:
            changed = {
                p
                for p in set(before) | set(after)
                if before.get(p) != after.get(p) and not p.endswith(".lock")
            }
            assert not changed, changed
    except AssertionError:
        cli_table.add(name, "FAILED", f"exit {done.returncode}")
        raise
    cli_table.add(name, "ok", f"exit {done.returncode}  {errors[0][:80]}")


# --- kill tests ---------------------------------------------------------------------------


def write_session(folder: Path, n: int, turns: int = 4) -> Path:
    sid = f"{n:08x}-1111-4222-8333-444444444444"
    base = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc) + timedelta(days=n % 20, minutes=n)
    lines = []
    for t in range(turns):
        stamp = (base + timedelta(minutes=2 * t)).isoformat()
        common = {
            "sessionId": sid,
            "cwd": "/home/dev/shop",
            "gitBranch": "main",
            "version": "2.1.332",
            "entrypoint": "cli",
            "userType": "external",
            "isSidechain": False,
            "timestamp": stamp,
        }
        lines.append(
            {
                **common,
                "type": "user",
                "uuid": f"{n}-u{t}",
                "promptSource": "typed",
                "message": {
                    "role": "user",
                    "content": f"セッション {n} の質問 {t}: "
                    f"PAY-{1000 + n} の決済タイムアウトを調べて、"
                    f"internal/payment/client{n}.go を直す方針を決めよう",
                },
            }
        )
        lines.append(
            {
                **common,
                "type": "assistant",
                "uuid": f"{n}-a{t}",
                "message": {
                    "id": f"m{n}-{t}",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "text",
                            "text": f"client{n}.go の Timeout を {t + 5} 秒にすることに決めました。"
                            * 3,
                        }
                    ],
                },
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    path.write_text(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8"
    )
    os.utime(path, (time.time() - 7200, time.time() - 7200))
    return path


def _visible(root: Path) -> dict[str, bytes]:
    """The store as search, prune and people see it: no dot-files (atomic-write temp files)."""
    return {
        p: b
        for p, b in _tree(root).items()
        if not any(part.startswith(".") and part != ".archive" for part in p.split("/"))
    }


def _kill_rounds(
    args: list[str], env: dict[str, str], seed: int, progress: Callable[[], int], total: int
) -> list[str]:
    """Start the command KILL_ROUNDS times; each time SIGKILL it at a random point of its
    work (once `progress()` reaches a random target between what is done and the end)."""
    rng = random.Random(seed)
    moments = []
    for _ in range(KILL_ROUNDS):
        done_before = progress()
        if done_before >= total:
            break
        target = done_before + rng.randint(1, max(1, (total - done_before) // 2))
        proc = subprocess.Popen(
            [sys.executable, "-m", "memrecall", *args],
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started = time.monotonic()
        while proc.poll() is None and progress() < target and time.monotonic() - started < 60:
            time.sleep(0.002)
        proc.send_signal(signal.SIGKILL)
        code = proc.wait()
        moments.append(
            f"{time.monotonic() - started:.2f}s at {progress()}/{total}"
            + ("" if code == -signal.SIGKILL else " (had finished)")
        )
    return moments


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_summarize_killed_mid_run_then_rerun_equals_a_clean_run(tmp_path: Path, cli_table) -> None:  # type: ignore[no-untyped-def]
    projects = tmp_path / "projects"
    for n in range(1, 31):
        write_session(projects / "-home-dev-shop", n)
    # One fixed "now" for every run (an hour after the files' mtimes: none is still active).
    moment = (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    now = {"MEMRECALL_NOW": moment, "MEMRECALL_CLAUDE_PROJECTS": str(projects)}
    clean_home, killed_home = tmp_path / "clean", tmp_path / "killed"
    args = ["summarize", "--backend", "extractive", "--max-sessions", "100"]

    clean = _run(args, {**now, "MEMRECALL_HOME": str(clean_home)})
    assert clean.returncode == 0, clean.stderr
    expected = _visible(clean_home / "summaries")
    assert len([p for p in expected if p.endswith(".md")]) == 30

    env = {**now, "MEMRECALL_HOME": str(killed_home)}
    moments = _kill_rounds(
        args,
        env,
        seed=6,
        total=30,
        progress=lambda: len(list((killed_home / "summaries").rglob("*.md"))),
    )
    final = _run(args, env)
    assert final.returncode == 0, final.stderr
    got = _visible(killed_home / "summaries")
    assert got == expected  # nothing lost, nothing duplicated, same bytes
    ledger = lambda home: json.loads(
        (home / "state" / "summarized.json").read_text(encoding="utf-8")
    )  # noqa: E731
    assert ledger(killed_home) == ledger(clean_home)
    # A kill between a temp file's creation and its rename leaves the temp file; the next
    # run sweeps them (under its run lock).
    litter = [p for p in _tree(killed_home) if p.endswith(".tmp")]
    assert litter == []
    cli_table.add("kill-summarize", "ok", f"killed at {', '.join(moments)}")


def _old_summaries(root: Path, count: int) -> None:
    for n in range(count):
        day = datetime(2026, 1, 1) + timedelta(days=n % 150)
        sid = f"{n:08x}"
        folder = root / f"{day:%Y}" / f"{day:%m}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{day:%Y-%m-%d}-{sid}.md").write_text(
            f"---\ntitle: t{n}\ndate: {day:%Y-%m-%d}T10:00:00+09:00\n"
            f"session_id: {sid}-0000-4000-8000-000000000000\n---\n"
            f"## t{n}\nbody {n}\n",
            encoding="utf-8",
        )
    (root / "2026" / "01" / "my-own-note.md").write_text("# mine\n", encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
@pytest.mark.parametrize("mode", ["archive", "delete"])
def test_prune_killed_mid_run_then_rerun_equals_a_clean_run(
    tmp_path: Path, mode: str, cli_table
) -> None:  # type: ignore[no-untyped-def]
    args = ["prune", "--older-than", "90d"] + (["--delete"] if mode == "delete" else [])
    homes = {}
    for name in ("clean", "killed"):
        home = tmp_path / name
        _old_summaries(home / "summaries", 3000)
        (home / "logs").mkdir(parents=True)
        for month in ("2026-01", "2026-02", "2026-11"):
            (home / "logs" / f"recall-{month}.jsonl").write_text(
                '{"decision": "quiet"}\n', encoding="utf-8"
            )
        homes[name] = home
    env = {"MEMRECALL_NOW": NOW}
    clean = _run(args, {**env, "MEMRECALL_HOME": str(homes["clean"])})
    assert clean.returncode == 0, clean.stderr
    expected_moves = 3000 - len(list((homes["clean"] / "summaries").glob("2026/*/*.md"))) + 1

    def moved() -> int:  # summaries gone from their folders (archived or deleted)
        left = 0
        for folder in (homes["killed"] / "summaries" / "2026").iterdir():
            try:
                left += len(os.listdir(folder))
            except FileNotFoundError:  # emptied and removed meanwhile
                continue
        return 3000 - left + 1

    moments = _kill_rounds(
        args,
        {**env, "MEMRECALL_HOME": str(homes["killed"])},
        seed=7,
        progress=moved,
        total=expected_moves,
    )
    final = _run(args, {**env, "MEMRECALL_HOME": str(homes["killed"])})
    assert final.returncode == 0, final.stderr
    expected, got = _visible(homes["clean"]), _visible(homes["killed"])
    assert got == expected
    assert not [
        p for p in got if ".archive" in p and p.endswith(tuple(f".{i}.md" for i in range(1, 9)))
    ]
    assert "summaries/2026/01/my-own-note.md" in got  # never touched
    cli_table.add(f"kill-prune-{mode}", "ok", f"killed at {', '.join(moments)}")
