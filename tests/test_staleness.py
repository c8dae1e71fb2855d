"""Stale-memory warnings: memories naming files the prompt's project changed since their date,
checked in a temporary git repository (changed, unchanged, renamed, deleted), outside one
(modification times), and with git missing or hanging."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from memrecall.search import Hit
from memrecall.staleness import check, rerank

MEMORY_DATE = datetime.fromisoformat("2026-11-20T10:00:00+09:00")


def hit(
    path: Path,
    store: str = "obsidian",
    ref: str = "note.md",
    date: datetime | None = MEMORY_DATE,
    lines: list[str] | None = None,
    acc: float = 2.0,
    matched: list[str] | None = None,
) -> Hit:
    h = Hit(
        store=store,
        ref=ref,
        path=path,
        title=ref,
        date=date,
        score=acc,
        matched=matched or ["client"],
        line=1,
        snippet="",
        lines=[(1, t) for t in lines or []],
    )
    h.acc = acc
    return h


def note(folder: Path, name: str, body: str, front: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"---\ntitle: {name}\ndate: 2026-11-20\n{front}---\n{body}\n", encoding="utf-8")
    return path


def git(repo: Path, *args: str, when: str = "2026-11-01T10:00:00+09:00") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Before the memory's date: four files. After it: client.go changed twice, old.go
    renamed, gone.go deleted; unchanged.go left alone."""
    root = tmp_path / "shop"
    (root / "internal" / "payment").mkdir(parents=True)
    git(root, "init", "-q")
    for rel in (
        "internal/payment/client.go",
        "internal/payment/unchanged.go",
        "internal/old.go",
        "internal/gone.go",
    ):
        (root / rel).write_text(f"package x // {rel}\n", encoding="utf-8")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    for n, day in enumerate(("2026-11-25", "2026-11-28")):
        (root / "internal/payment/client.go").write_text(
            f"package payment // v{n}\n", encoding="utf-8"
        )
        git(root, "commit", "-qam", f"timeout {n}", when=f"{day}T10:00:00+09:00")
    git(root, "mv", "internal/old.go", "internal/new.go", when="2026-11-26T10:00:00+09:00")
    git(root, "commit", "-qm", "rename", when="2026-11-26T10:00:00+09:00")
    git(root, "rm", "-q", "internal/gone.go", when="2026-11-27T10:00:00+09:00")
    git(root, "commit", "-qm", "delete", when="2026-11-27T10:00:00+09:00")
    return root


def deadline() -> float:
    return time.monotonic() + 8


def test_changed_renamed_deleted_and_unchanged_files(repo: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    changed = note(vault, "pay.md", "We set the timeout in `internal/payment/client.go` to 10s.")
    unchanged = note(vault, "same.md", "See internal/payment/unchanged.go for the retry loop.")
    renamed = note(vault, "old.md", "The helper lives in internal/old.go.")
    deleted = note(vault, "gone.md", "Dead code: internal/gone.go")
    hits = [
        hit(changed, ref="pay.md"),
        hit(unchanged, ref="same.md"),
        hit(renamed, ref="old.md"),
        hit(deleted, ref="gone.md"),
    ]
    assert check(hits, str(repo), deadline()) == {
        "obsidian:pay.md": ["`internal/payment/client.go` changed 2 times since this note"],
        "obsidian:old.md": ["`internal/old.go` was renamed to `internal/new.go` since this note"],
        "obsidian:gone.md": ["`internal/gone.go` was deleted since this note"],
    }


def test_a_newer_memory_is_not_stale_and_lines_are_capped(repo: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    many = note(
        vault,
        "many.md",
        "internal/payment/client.go internal/old.go internal/gone.go internal/payment/unchanged.go",
    )
    newer = hit(many, ref="many.md", date=datetime.fromisoformat("2026-12-01T00:00:00+09:00"))
    assert check([newer], str(repo), deadline()) == {}
    (lines,) = check([hit(many, ref="many.md")], str(repo), deadline()).values()
    assert len(lines) == 2 and all("renamed" in line or "deleted" in line for line in lines)


def test_summary_files_list_and_another_projects_summary(repo: Path, tmp_path: Path) -> None:
    summaries = tmp_path / "summaries" / "2026" / "11"
    ours = note(
        summaries,
        "2026-11-20-abcd1234.md",
        "## Files touched\n- (see frontmatter)",
        front=f"cwd: {repo}\nfiles: [internal/payment/client.go]\n",
    )
    theirs = note(
        summaries,
        "2026-11-20-ffff0000.md",
        "## Files touched\n- internal/payment/client.go",
        front="cwd: /home/dev/another-project\nfiles: [internal/payment/client.go]\n",
    )
    hits = [
        hit(ours, store="summaries", ref="2026/11/2026-11-20-abcd1234.md"),
        hit(theirs, store="summaries", ref="2026/11/2026-11-20-ffff0000.md"),
    ]
    assert check(hits, str(repo), deadline()) == {
        "summaries:2026/11/2026-11-20-abcd1234.md": [
            "`internal/payment/client.go` changed 2 times since this summary"
        ],
    }


def test_an_issue_naming_a_path_and_a_cwd_below_the_repository_root(
    repo: Path, tmp_path: Path
) -> None:
    issues = tmp_path / ".beads" / "issues.jsonl"
    issues.parent.mkdir()
    issues.write_text(json.dumps({"id": "bd-1"}) + "\n", encoding="utf-8")
    issue = hit(
        issues, store="beads", ref="bd-1", lines=["Retry loop in payment/client.go is wrong"]
    )
    assert check([issue], str(repo / "internal"), deadline()) == {
        "beads:bd-1": ["`payment/client.go` changed 2 times since this issue"],
    }


def test_outside_a_repository_modification_times_answer(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    (project / "src").mkdir(parents=True)
    (project / "src" / "fresh.py").write_text("x = 1\n", encoding="utf-8")
    (project / "src" / "old.py").write_text("y = 1\n", encoding="utf-8")
    before = MEMORY_DATE.timestamp() - 86400
    os.utime(project / "src" / "old.py", (before, before))
    os.utime(project / "src" / "fresh.py", (MEMORY_DATE.timestamp() + 3 * 86400,) * 2)
    memo = note(tmp_path / "vault", "memo.md", "src/fresh.py and src/old.py and src/missing.py")
    assert check([hit(memo, ref="memo.md")], str(project), deadline()) == {
        "obsidian:memo.md": ["`src/fresh.py` was modified since this note (on 2026-11-23)"],
    }


def test_git_missing_from_path_falls_back_to_modification_times(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    os.utime(repo / "internal/payment/unchanged.go", (MEMORY_DATE.timestamp() - 86400,) * 2)
    memo = note(
        tmp_path / "vault", "pay.md", "internal/payment/client.go internal/payment/unchanged.go"
    )
    lines = check([hit(memo, ref="pay.md")], str(repo), deadline())
    assert list(lines) == ["obsidian:pay.md"]
    assert lines["obsidian:pay.md"][0].startswith(
        "`internal/payment/client.go` was modified since this note"
    )


def test_hanging_git_or_no_time_left_says_nothing(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = note(tmp_path / "vault", "pay.md", "internal/payment/client.go")
    hits = [hit(memo, ref="pay.md")]
    assert check(hits, str(repo), time.monotonic()) == {}  # the hook's budget is spent
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir()
    (bin_dir / "git").write_text("#!/bin/sh\nsleep 30\n", encoding="utf-8")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert check(hits, str(repo), deadline()) == {}  # killed at its timeout, and quiet


def test_no_date_no_paths_or_no_project_is_quiet(repo: Path, tmp_path: Path) -> None:
    memo = note(
        tmp_path / "vault", "pay.md", "internal/payment/client.go, https://example.com/a/b.html"
    )
    plain = note(tmp_path / "vault", "plain.md", "nothing that looks like a file here")
    assert (
        check(
            [hit(memo, ref="pay.md", date=None), hit(plain, ref="plain.md")], str(repo), deadline()
        )
        == {}
    )
    assert check([hit(memo, ref="pay.md")], str(tmp_path / "no-such-dir"), deadline()) == {}
    assert check([hit(memo, ref="pay.md")], "", deadline()) == {}


def test_a_stale_memory_follows_a_fresher_one_on_the_same_topic_in_a_close_call(
    tmp_path: Path,
) -> None:
    older = hit(tmp_path / "a.md", ref="a.md", acc=2.0, matched=["timeout"])
    newer = hit(
        tmp_path / "b.md",
        ref="b.md",
        acc=1.9,
        matched=["timeout"],
        date=datetime.fromisoformat("2026-11-30T10:00:00+09:00"),
    )
    other = hit(tmp_path / "c.md", ref="c.md", acc=1.95, matched=["webhook"])
    stale = {"obsidian:a.md": ["`x/y.go` changed once since this note"]}
    assert [h.ref for h in rerank([older, other, newer], stale)] == ["c.md", "b.md", "a.md"]
    assert [h.ref for h in rerank([older, newer], stale)] == ["b.md", "a.md"]
    # Far ahead, or nothing fresher on its topic: it keeps its place.
    older.acc = 3.0
    assert [h.ref for h in rerank([older, newer], stale)] == ["a.md", "b.md"]
    older.acc = 2.0
    assert [h.ref for h in rerank([older, other], stale)] == ["a.md", "c.md"]
    assert [h.ref for h in rerank([older, newer], {})] == ["a.md", "b.md"]


def test_the_hook_says_so_in_the_injected_entry(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the recall core: the stale line is part of the memory's entry in the context
    and the log names it; the same prompt from a project without those changes gets none."""
    from memrecall.config import load_settings
    from memrecall.recall import HookInput, recall

    vault = tmp_path / "vault"
    note(
        vault,
        "決済タイムアウト.md",
        "PAY-1234: the PSP timeout lives in internal/payment/client.go (7 s).",
    )
    for n in range(10):
        note(vault, f"daily-{n}.md", "meetings")
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(vault))
    monkeypatch.setenv("MEMRECALL_NOW", "2026-12-02T09:00:00+09:00")
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "regex")
    result = recall(
        HookInput("s1", "PAY-1234 のタイムアウト何秒だっけ", cwd=str(repo)),
        load_settings(),
        deadline(),
    )
    assert result.context is not None
    block = result.context.split("[1] ")[1]
    assert "    stale: `internal/payment/client.go` changed 2 times since this note\n" in block
    assert list(result.log["stale"].values()) == [
        ["`internal/payment/client.go` changed 2 times since this note"]
    ]
    elsewhere = tmp_path / "other-project"
    elsewhere.mkdir()
    result = recall(
        HookInput("s2", "PAY-1234 のタイムアウト何秒だっけ", cwd=str(elsewhere)),
        load_settings(),
        deadline(),
    )
    assert (
        result.context is not None and "stale:" not in result.context and "stale" not in result.log
    )
