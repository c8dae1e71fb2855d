"""`memrecall search` as a person sees it: one block per hit that fits the terminal, where each
memory lives (`path:line`, a beads issue's line of its export), where its date came from, and a
warning for a configured store that is not there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from io import StringIO
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console

from memrecall.commands.search import show_hits
from memrecall.config import load_settings
from memrecall.search import Hit, search
from memrecall.tokenize import tokenize_text

NOW = "2026-12-02T09:00:00+09:00"
NOTE_NAME = "在庫同期バッチの二重加算バグと再発防止策の設計メモ.md"
NOTE_LINE = 13
LONG_TITLE = (
    "在庫同期バッチが SKU を二重に加算する不具合の原因調査と、再試行処理を冪等にするための"
    "設計変更についての長いメモ"
)
ISSUE_TITLE = "quokka 在庫同期ジョブが深夜バッチの再試行で同じ差分を二度適用してしまい在庫数が狂う"
FILLER_ISSUES = 40
ISSUE_LINE = FILLER_ISSUES + 1
# When the undated note's file was last written: what it shows instead of a checkout date.
MODIFIED = datetime(2026, 3, 4, 12, 0, tzinfo=timezone.utc)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def stores(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    vault = tmp_path / "vault"
    body = [f"背景メモ {n}" for n in range(NOTE_LINE - 5)]
    undated = _write(
        vault / "notes" / NOTE_NAME,
        f"---\ntitle: {LONG_TITLE}\ntags: [inventory]\n---\n"
        + "\n".join(body)
        + "\nquokka: 在庫同期バッチで SKU が二重に加算される。"
        "原因は sync_inventory_batch の再試行で、"
        "再試行のたびに同じ差分がもう一度適用されていた。冪等キーを入れて直した。\n",
    )
    assert undated.read_text(encoding="utf-8").splitlines()[NOTE_LINE - 1].startswith("quokka")
    os.utime(undated, (MODIFIED.timestamp(), MODIFIED.timestamp()))
    _write(vault / "daily" / "2026-10-05.md", "# 2026-10-05\nquokka の在庫同期を見直した。\n")
    _write(
        vault / "notes" / "markup.md",
        "---\ntitle: '[bold]quokka[/bold] 在庫同期 policy [link=https://example.invalid]x[/link]'\n"
        "date: 2026-09-01\n---\nquokka 在庫同期 policy.\n",
    )
    for n in range(20):  # background, so rarity means something
        _write(vault / "daily" / f"chores-{n:02d}.md", f"# Chores {n}\nレビューと会議。\n")
    issues = [
        {
            "id": f"bd-f{n:03d}",
            "title": f"Filler chore {n}",
            "status": "open",
            "description": "Routine work.",
        }
        for n in range(FILLER_ISSUES)
    ]
    issues.append(
        {
            "id": "bd-q0ka",
            "title": ISSUE_TITLE,
            "status": "in_progress",
            "priority": 1,
            "description": "在庫同期の再試行が冪等でない。",
            "updated_at": "2026-11-20T10:00:00Z",
        }
    )
    export = _write(
        tmp_path / "shop" / ".beads" / "issues.jsonl",
        "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in issues),
    )
    env = {
        "MEMRECALL_OBSIDIAN": str(vault),
        "MEMRECALL_BEADS": str(tmp_path / "shop"),
        "MEMRECALL_SUMMARIES": str(tmp_path / "summaries"),
        "MEMRECALL_NOW": NOW,
        "MEMRECALL_TOKENIZER": "sudachi",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return {"vault": vault, "undated": undated, "export": export, "home": isolated_home}


def _cli(*args: str, columns: int = 160, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", *args],
        capture_output=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": str(columns), **env},
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    )


def _search(query: str) -> list[Hit]:
    settings = load_settings()
    keywords, _ = tokenize_text(query, settings.tokenizer, settings)
    return search(keywords, settings).hits


# --- the blocks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_every_hit_shows_its_title_and_whole_path_line_within_the_width(
    stores: dict[str, Path], columns: int
) -> None:
    done = _cli("search", "quokka 在庫同期", columns=columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    too_wide = [line for line in lines if cell_len(line) > columns]
    assert not too_wide, too_wide
    out = done.stdout
    assert f"notes/{NOTE_NAME}:{NOTE_LINE}" in out  # the Japanese name and its line, uncut
    assert f"bd-q0ka · {stores['export']}:{ISSUE_LINE}" in out.replace("\n   ", "")
    assert f"{LONG_TITLE[:20]}" in out and f"{ISSUE_TITLE[:20]}" in out
    if columns >= 200:
        assert LONG_TITLE in out and ISSUE_TITLE in out
    else:
        assert "…" in out  # long titles and snippets are cut, visibly
    assert "[in_progress]" in out
    # Markup in a title is text: shown as typed, never obeyed.
    assert "[bold]quokka[/bold] 在庫同期 policy" in out
    # One block a hit: a numbered title line, then store · date · score · keywords.
    assert [line.split(".")[0] for line in lines if line[:1].isdigit()] == ["1", "2", "3", "4"]
    assert any(line.strip().startswith("beads · 2026-11-20 · score ") for line in lines)


def test_the_undated_note_shows_its_modification_date_marked_as_such(
    stores: dict[str, Path],
) -> None:
    out = _cli("search", "quokka 在庫同期").stdout
    block = out[: out.index(f"notes/{NOTE_NAME}")]
    assert "obsidian · 2026-03-04 (modified) · score" in block.rstrip().splitlines()[-1]
    assert "2026-10-05 · score" in out  # a daily note's date is its name's
    assert "2026-09-01 · score" in out  # frontmatter says when
    assert "(modified)" not in out.replace("2026-03-04 (modified)", "")


def _hit(**fields: object) -> Hit:
    base: dict[str, object] = dict(
        store="obsidian",
        ref="notes/a.md",
        path=Path("/v/notes/a.md"),
        title="t",
        date=None,
        score=1.5,
        matched=["quokka"],
        line=3,
        snippet="quokka here",
        lines=[],
    )
    base.update(fields)
    return Hit(**base)  # type: ignore[arg-type]


def _render(hits: list[Hit], width: int) -> str:
    buffer = StringIO()
    show_hits(hits, Console(width=width, file=buffer, force_terminal=False, color_system=None))
    return buffer.getvalue()


def test_a_path_longer_than_the_terminal_folds_and_is_never_cut() -> None:
    deep = "設計/" * 12 + "認証フローのリフレッシュトークン失効.md"
    out = _render([_hit(ref=deep, line=123, title="x" * 300, snippet="ス" * 300)], 40)
    lines = out.splitlines()
    assert all(cell_len(line) <= 40 for line in lines), lines
    assert f"{deep}:123" in "".join(line.strip() for line in lines)
    assert lines[0].endswith("…") and lines[-1].endswith("…")


def test_stored_text_reaches_the_terminal_inert() -> None:
    hostile = "\x1b]8;;https://evil.example\x07PAY\u202e-1234 [red]alarm[/red]\x1b[2J"
    out = _render(
        [
            _hit(
                title=hostile,
                ref=f"notes/{hostile}.md",
                snippet=hostile,
                matched=[hostile],
                status="open\x1b[31m",
            )
        ],
        200,
    )
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "[red]alarm[/red]" in out


def test_no_date_reads_undated() -> None:
    assert "obsidian · undated · score 1.50 · quokka" in _render([_hit()], 80)


# --- where a hit is: a beads issue's line of its export, both engines -----------------------------


def test_json_gives_a_beads_hit_its_line_in_the_export(stores: dict[str, Path]) -> None:
    done = _cli("search", "quokka 在庫同期", "--json")
    assert done.returncode == 0, done.stderr
    hits = {h["ref"]: h for h in json.loads(done.stdout)}
    issue = hits["bd-q0ka"]
    assert issue["line"] == ISSUE_LINE
    lines = stores["export"].read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[issue["line"] - 1])["id"] == "bd-q0ka"
    assert hits[f"notes/{NOTE_NAME}"]["line"] == NOTE_LINE


@pytest.mark.parametrize("engine", ["manual", "off"])
def test_dates_say_where_they_came_from_in_both_engines(
    stores: dict[str, Path], engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMRECALL_INDEX", engine)
    if engine == "manual":
        from memrecall.index import refresh

        refresh(load_settings())
    hits = {h.ref: h for h in _search("quokka 在庫同期")}
    shown = {
        ref: (h.date.date().isoformat() if h.date else None, h.as_json()["date_source"])
        for ref, h in hits.items()
    }
    assert shown == {
        f"notes/{NOTE_NAME}": ("2026-03-04", "mtime"),
        "daily/2026-10-05.md": ("2026-10-05", "name"),
        "notes/markup.md": ("2026-09-01", "frontmatter"),
        "bd-q0ka": ("2026-11-20", "issue"),
    }
    assert hits["bd-q0ka"].line == ISSUE_LINE


# --- a configured store that is not there ---------------------------------------------------------


def test_search_warns_once_for_each_missing_store_and_still_answers(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    gone_vault, gone_project = tmp_path / "no-such-vault", tmp_path / "no-such-project"
    done = _cli(
        "search",
        "quokka 在庫同期",
        MEMRECALL_OBSIDIAN=os.pathsep.join([str(stores["vault"]), str(gone_vault)]),
        MEMRECALL_BEADS=str(gone_project),
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == [
        f"Warning: obsidian vault {gone_vault} does not exist "
        "(MEMRECALL_OBSIDIAN / obsidian in config.toml)",
        f"Warning: beads location {gone_project} does not exist "
        "(MEMRECALL_BEADS / beads in config.toml)",
    ]
    assert f"{NOTE_NAME}:{NOTE_LINE}" in done.stdout  # the vault that is there still answers


def test_search_warns_for_a_beads_project_without_an_export(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "empty-project"
    empty.mkdir()
    done = _cli("search", "quokka", "--store", "beads", MEMRECALL_BEADS=str(empty))
    assert f"Warning: no beads export (issues.jsonl) found at {empty}" in done.stderr
    assert "No results" in done.stderr


def test_the_hook_logs_a_missing_store_and_prints_nothing_about_it(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    gone = tmp_path / "moved-vault"
    prompt = {
        "session_id": "missing-store",
        "prompt": "quokka の在庫同期バッチ、どう直した？",
        "cwd": "/tmp",
    }
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "recall"],
        input=json.dumps(prompt).encode(),
        capture_output=True,
        timeout=120,
        check=False,
        env={
            **os.environ,
            "MEMRECALL_OBSIDIAN": os.pathsep.join([str(stores["vault"]), str(gone)]),
        },
    )
    assert done.returncode == 0 and done.stderr == b""
    assert str(gone).encode() not in done.stdout
    entries = [
        json.loads(line)
        for f in sorted((stores["home"] / "logs").glob("recall-*.jsonl"))
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    entry = [e for e in entries if e.get("session") == "missing-store"][-1]
    assert (
        f"obsidian vault {gone} does not exist (MEMRECALL_OBSIDIAN / obsidian in config.toml)"
        in (entry.get("warnings") or [])
    ), entry


def test_the_hook_tells_claude_a_date_is_only_the_files_modification_time(
    stores: dict[str, Path],
) -> None:
    prompt = {
        "session_id": "mtime-date",
        "prompt": "quokka の在庫同期バッチ、どう直した？",
        "cwd": "/tmp",
    }
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "recall"],
        input=json.dumps(prompt).encode(),
        capture_output=True,
        timeout=120,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    heads = [line for line in context.splitlines() if line.startswith("[")]
    assert any("obsidian · 2026-03-04 (modified) · " in head for head in heads), context
