"""`memrecall prune`: retention by frontmatter date / filename / mtime, archive or delete,
never a file that is not a memrecall summary; old recall logs and session state go too."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memrecall.__main__ import main
from memrecall.config import load_settings
from memrecall.times import parse_age

NOW = "2026-12-02T09:00:00+09:00"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def summary(
    root: Path,
    day: str,
    sid: str,
    *,
    front_date: str | None = "same",
    session: str | None = None,
    name: str | None = None,
) -> Path:
    year, month = day[:4], day[5:7]
    path = root / year / month / (name or f"{day}-{sid[:8]}.md")
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["---", f"title: session {sid[:8]}"]
    if front_date == "same":
        lines.append(f"date: {day}T10:00:00+09:00")
    elif front_date:
        lines.append(f"date: {front_date}")
    lines.append(
        f"session_id: {session if session is not None else sid + '-1111-2222-3333-444455556666'}"
    )
    lines += ["project: demo", "---", "## what", "- something", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> Path:
    root = tmp_path / "summaries"
    root.mkdir()
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(root))
    monkeypatch.setenv("MEMRECALL_NOW", NOW)
    return root


def test_archives_old_summaries_keeping_the_relative_path(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = summary(env, "2026-08-01", "aaaaaaaa")
    new = summary(env, "2026-11-20", "bbbbbbbb")
    content = old.read_bytes()
    code, out, err = run(capsys, "prune")
    assert code == 0
    assert out == ""
    assert err == (
        f"Archived 1 summaries into {env / '.archive'}; deleted 0 recall logs and 0 session states "
        "older than 2026-09-03. 1 summaries stay.\n"
    )
    moved = env / ".archive" / "2026" / "08" / "2026-08-01-aaaaaaaa.md"
    assert moved.read_bytes() == content
    assert not old.exists() and new.exists()
    assert not (env / "2026" / "08").exists()  # the emptied month folder is tidied away


def test_dry_run_changes_nothing_and_lists_the_plan(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    summary(env, "2026-06-03", "cccccccc")
    summary(env, "2026-11-30", "dddddddd")
    before = tree_digest(env)
    code, out, err = run(capsys, "prune", "--dry-run")
    assert code == 0
    assert tree_digest(env) == before
    assert "archive" in out and "2026/06/2026-06-03-cccccccc.md" in out and "frontmatter" in out
    assert "dddddddd" not in out
    assert err == (
        "Dry run: would archive 1 summaries older than 2026-09-03 and delete 0 recall logs, "
        "0 session states; 1 summaries stay. Nothing was changed.\n"
    )


def test_delete_removes_for_good(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = summary(env, "2026-07-01", "eeeeeeee")
    code, _, err = run(capsys, "prune", "--delete")
    assert code == 0
    assert not old.exists() and not (env / ".archive").exists()
    assert err.startswith("Deleted 1 summaries; deleted 0 recall logs")


def test_never_touches_files_that_are_not_memrecall_summaries(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old_time = datetime(2025, 1, 1, tzinfo=timezone.utc).timestamp()
    foreign = [
        env / "2026" / "06" / "my-notes.md",  # wrong name
        summary(env, "2026-06-01", "ffffffff", session=""),  # no session id
        summary(
            env, "2026-06-02", "12345678", session="99999999-aaaa"
        ),  # session id of someone else
        env / "README.md",
        env / "2026" / "06" / "2026-06-04-abcdef12.txt",
    ]
    for path in foreign:
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("---\ndate: 2026-01-01\n---\nmine\n", encoding="utf-8")
        os.utime(path, (old_time, old_time))
    before = tree_digest(env)
    code, _, err = run(capsys, "prune", "--delete")
    assert code == 0
    assert tree_digest(env) == before
    assert err.startswith("Nothing older than 2026-09-03; 0 summaries stay.")


def test_age_comes_from_frontmatter_then_filename_then_mtime(env: Path) -> None:
    from memrecall.prune import plan_prune

    # The frontmatter wins over an old file name…
    kept = summary(env, "2026-06-01", "11111111", front_date="2026-11-30T08:00:00+09:00")
    # …a missing frontmatter date falls back to the name…
    by_name = summary(env, "2026-06-02", "22222222", front_date=None)
    # …and an impossible name date to the mtime.
    by_mtime = summary(
        env, "2026-06-03", "33333333", front_date=None, name="2026-13-45-33333333.md"
    )
    old = datetime(2026, 5, 1, tzinfo=timezone.utc).timestamp()
    os.utime(by_mtime, (old, old))
    settings = load_settings()
    plan = plan_prune(settings, parse_age("90d", settings.now))
    sources = {item.path: item.date_source for item in plan.items}
    assert sources == {by_name: "filename", by_mtime: "mtime"}
    assert kept not in sources and plan.kept_summaries == 1


def test_archive_never_overwrites_an_archived_copy(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = summary(env, "2026-08-01", "aaaaaaaa")
    earlier = env / ".archive" / "2026" / "08" / "2026-08-01-aaaaaaaa.md"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("an earlier archived copy\n", encoding="utf-8")
    assert run(capsys, "prune")[0] == 0
    assert earlier.read_text(encoding="utf-8") == "an earlier archived copy\n"
    assert (earlier.parent / "2026-08-01-aaaaaaaa.1.md").exists() and not old.exists()


def test_trims_old_recall_logs_and_session_state(
    env: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = isolated_home / "logs"
    logs.mkdir()
    for month in ("2026-07", "2026-08", "2026-09", "2026-12"):
        (logs / f"recall-{month}.jsonl").write_text("{}\n", encoding="utf-8")
    (logs / "recall-2026-07.jsonl.lock").write_text("", encoding="utf-8")
    (logs / "notes.txt").write_text("not ours\n", encoding="utf-8")
    sessions = isolated_home / "state" / "sessions"
    sessions.mkdir(parents=True)
    stale, fresh = sessions / "old.json", sessions / "new.json"
    for path in (stale, fresh):
        path.write_text("{}", encoding="utf-8")
    old = datetime(2026, 8, 1, tzinfo=timezone.utc).timestamp()
    os.utime(stale, (old, old))
    code, _, err = run(capsys, "prune")
    assert code == 0
    # September is not wholly older than the 2026-09-03 cut-off: it stays.
    assert sorted(p.name for p in logs.iterdir()) == [
        "notes.txt",
        "recall-2026-09.jsonl",
        "recall-2026-12.jsonl",
    ]
    assert sorted(p.name for p in sessions.iterdir()) == ["new.json"]
    assert "deleted 2 recall logs and 1 session states" in err


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("90d", "2026-09-03"),
        ("12w", "2026-09-09"),
        ("3m", "2026-09-02"),
        ("1y", "2025-12-02"),
        ("30", "2026-11-02"),
    ],
)
def test_older_than_units(spec: str, expected: str) -> None:
    now = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
    assert parse_age(spec, now).date().isoformat() == expected


def test_months_clamp_to_the_end_of_a_short_month() -> None:
    assert (
        parse_age("3m", datetime(2026, 5, 31, tzinfo=timezone.utc)).date().isoformat()
        == "2026-02-28"
    )


@pytest.mark.parametrize("spec", ["3x", "0d", "-5d", "ninety"])
def test_bad_older_than_is_a_usage_error(
    env: Path, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "prune", "--older-than", spec)
    assert (code, out) == (2, "")
    assert err == (
        f"Error: invalid --older-than {spec!r}: use a positive age such as 12h, 7d, 2w, 3m or 1y\n"
    )


@pytest.mark.corpus
def test_prune_over_the_japanese_summaries_corpus(
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = corpus / "summaries-ja"
    if not source.is_dir():
        pytest.skip("summaries-ja not in the corpus")
    root = tmp_path / "summaries-ja"
    shutil.copytree(source, root)  # the shared corpus itself is never modified
    monkeypatch.setenv("MEMRECALL_SUMMARIES", str(root))
    monkeypatch.setenv("MEMRECALL_NOW", "2026-12-02T00:00:00+09:00")
    cutoff = datetime(2026, 9, 2, 15, 0, tzinfo=timezone.utc)  # 2026-12-02 00:00 JST − 90 days
    expected_old, expected_kept = set(), set()
    for path in root.rglob("*.md"):
        if path.name == "SOURCE.md":
            continue
        stamp = re.search(r"^date: (\S+)", path.read_text(encoding="utf-8"), re.M)
        assert stamp, path
        moment = datetime.fromisoformat(stamp[1])
        (expected_old if moment < cutoff else expected_kept).add(path.relative_to(root).as_posix())
    assert len(expected_old) + len(expected_kept) == 60 and expected_old and expected_kept

    before = tree_digest(root)
    code, out, err = run(capsys, "prune", "--dry-run", "--json")
    assert code == 0 and tree_digest(root) == before
    import json

    plan = json.loads(out)
    assert {Path(i["path"]).relative_to(root).as_posix() for i in plan["items"]} == expected_old
    assert plan["kept_summaries"] == len(expected_kept)

    code, _, err = run(capsys, "prune")
    assert code == 0
    archived = {
        p.relative_to(root / ".archive").as_posix() for p in (root / ".archive").rglob("*.md")
    }
    remaining = {
        p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".archive" not in p.parts
    }
    assert archived == expected_old
    assert remaining == expected_kept | {"SOURCE.md"}
    assert err.startswith(f"Archived {len(expected_old)} summaries")

    # Search agrees: nothing archived is found any more.
    from memrecall.search import open_stores

    settings = load_settings()
    (store,) = open_stores(settings, ["summaries"])
    searched_roots = [str(r) for job in store.jobs() for r in job.roots]
    assert all(".archive" not in r for r in searched_roots)

    # A second run has nothing left to do.
    code, _, err = run(capsys, "prune")
    assert code == 0 and err.startswith("Nothing older than")


# --- a live session's state survives prune's plan → apply window ----------------------------


def _aged(path: Path, when: datetime) -> None:
    os.utime(path, (when.timestamp(), when.timestamp()))


@pytest.mark.parametrize("prompt", ["bd-q9z9 の件どうなった？", "what happened to bd-q9z9?"])
def test_a_session_that_comes_back_between_plan_and_apply_keeps_its_state(
    prompt: str, env: Path, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An old session resumes while prune runs: its memory must not be injected a second time."""
    import time

    from memrecall.prune import apply_prune, plan_prune
    from memrecall.recall import HookInput, recall

    beads = tmp_path / "proj" / ".beads"
    beads.mkdir(parents=True)
    (beads / "issues.jsonl").write_text(
        '{"id": "bd-q9z9", "title": "在庫同期の再試行 retry", "status": "open", '
        '"updated_at": "2026-11-20T10:00:00Z"}\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("MEMRECALL_BEADS", str(beads.parent))
    monkeypatch.setenv("MEMRECALL_TOKENIZER", "regex")

    def ask() -> str | None:
        return recall(
            HookInput("resumed", prompt), load_settings(), deadline=time.monotonic() + 10
        ).context

    assert ask() is not None  # injected once in this session
    state = next((isolated_home / "state" / "sessions").glob("*.json"))
    _aged(state, datetime(2026, 6, 1, tzinfo=timezone.utc))  # idle for months …
    settings = load_settings()
    plan = plan_prune(settings, datetime(2026, 9, 1, tzinfo=timezone.utc))
    assert [i.path for i in plan.items if i.kind == "session-state"] == [
        state
    ]  # … so the plan takes it
    assert ask() is None  # … but the session comes back now: already injected, quiet
    result = apply_prune(plan, settings)
    assert (
        state.exists() and result.kept_live == [state] and result.done.get("session-state", 0) == 0
    )
    assert ask() is None  # still known as injected: no second copy in the session's context


def test_a_state_in_use_during_apply_is_kept_and_idle_ones_go(
    env: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memrecall.atomic import locked

    sessions = isolated_home / "state" / "sessions"
    sessions.mkdir(parents=True)
    busy, idle = sessions / "busy.json", sessions / "idle.json"
    for path in (busy, idle):
        path.write_text('{"turn": 1, "scores": {}, "injected": []}', encoding="utf-8")
        _aged(path, datetime(2026, 5, 1, tzinfo=timezone.utc))
    with locked(busy):  # a hook is writing this session's state right now
        code, out, err = run(capsys, "prune", "--json")
    assert code == 0
    assert busy.exists() and not idle.exists()
    data = __import__("json").loads(out)
    assert data["kept_live"] == [str(busy)]
    assert "1 session states older than" in err and "Kept 1 session states" in err
    # Once the session is done with it, and it stays idle, the next prune takes it.
    code, _, err = run(capsys, "prune")
    assert code == 0 and not busy.exists()


def test_reads_what_the_summary_writer_writes_and_leaves_malformed_yaml_alone(env: Path) -> None:
    """prune reads frontmatter with python-frontmatter, like the writer writes it."""
    from memrecall.prune import plan_prune
    from memrecall.summarize.writer import SummaryMeta, render_file

    written = env / "2026" / "05" / "2026-05-02-0a1b2c3d.md"
    written.parent.mkdir(parents=True)
    when = datetime(2026, 5, 2, 1, 0, tzinfo=timezone.utc)
    meta = SummaryMeta(
        title="Don't retry: 決済",
        date=when,
        session_id="0a1b2c3d-1111-2222-3333-444455556666",
        project="shop",
        cwd="/x",
        git_branch="",
        tags=["PAY-1", "a, b"],
        recalled=["beads:PAY-1"],
    )
    written.write_text(render_file(meta, "## What we did\n- x\n"), encoding="utf-8")
    broken = summary(env, "2026-05-03", "deadbeef")
    text = broken.read_text(encoding="utf-8")
    broken.write_text(text.replace("project: demo", "tags: [unclosed"), encoding="utf-8")
    settings = load_settings()
    plan = plan_prune(settings, parse_age("90d", settings.now))
    by_path = {item.path: item for item in plan.items}
    assert by_path[written].date_source == "frontmatter"
    assert by_path[written].date == when
    assert broken not in by_path and broken in plan.not_summaries
