"""Settings precedence: flag > environment > $MEMRECALL_HOME/config.toml > default.

`load_settings(overrides, environ)` is the one place that decides; these tests drive it the
way the CLI does (flags as overrides, the process environment, a real config file).
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

from memrecall.config import default_home, load_settings


def write_config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text, encoding="utf-8")


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"MEMRECALL_HOME": str(home), **extra}


# key, env var, file line, file value, env value, flag value; all as the resulting Path.
PATH_KEYS = [
    ("summaries", "MEMRECALL_SUMMARIES"),
    ("claude_projects", "MEMRECALL_CLAUDE_PROJECTS"),
]
LIST_KEYS = [("obsidian", "MEMRECALL_OBSIDIAN"), ("beads", "MEMRECALL_BEADS")]


@pytest.mark.parametrize(("key", "var"), PATH_KEYS)
def test_single_path_precedence(tmp_path: Path, isolated_home: Path, key: str, var: str) -> None:
    file_dir, env_dir, flag_dir = tmp_path / "file", tmp_path / "env", tmp_path / "flag"
    write_config(isolated_home, f'{key} = "{file_dir.as_posix()}"\n')
    env = env_for(isolated_home)
    assert getattr(load_settings(environ=env), key) == file_dir
    env[var] = str(env_dir)
    assert getattr(load_settings(environ=env), key) == env_dir
    assert getattr(load_settings({key: str(flag_dir)}, environ=env), key) == flag_dir
    # A flag that was not given (None) does not override.
    assert getattr(load_settings({key: None}, environ=env), key) == env_dir


def test_single_path_defaults(isolated_home: Path) -> None:
    settings = load_settings(environ=env_for(isolated_home))
    assert settings.summaries == isolated_home / "summaries"
    assert settings.claude_projects == Path.home() / ".claude" / "projects"
    assert settings.warnings == []


@pytest.mark.parametrize(("key", "var"), LIST_KEYS)
def test_path_list_precedence(tmp_path: Path, isolated_home: Path, key: str, var: str) -> None:
    a, b, c, d = (tmp_path / n for n in "abcd")
    write_config(isolated_home, f'{key} = ["{a.as_posix()}", "{b.as_posix()}"]\n')
    env = env_for(isolated_home)
    assert getattr(load_settings(environ=env), key) == [a, b]
    env[var] = f"{c}{os.pathsep}{d}"
    assert getattr(load_settings(environ=env), key) == [c, d]
    assert getattr(load_settings({key: str(a)}, environ=env), key) == [a]
    assert getattr(load_settings(environ=env_for(isolated_home.parent / "nowhere")), key) == []


@pytest.mark.parametrize(("key", "var"), LIST_KEYS)
def test_path_list_separators_and_blanks(
    tmp_path: Path, isolated_home: Path, key: str, var: str
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    env = env_for(
        isolated_home, **{var: f"{os.pathsep}{a}{os.pathsep}{os.pathsep} {b} {os.pathsep}"}
    )
    assert getattr(load_settings(environ=env), key) == [a, b]
    # A file may also use one os.pathsep-joined string.
    write_config(isolated_home, f'{key} = "{a.as_posix()}{os.pathsep}{b.as_posix()}"\n')
    assert getattr(load_settings(environ=env_for(isolated_home)), key) == [a, b]


def test_paths_expand_user(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USERPROFILE", str(tmp_path))
    settings = load_settings(environ=env_for(isolated_home, MEMRECALL_OBSIDIAN="~/vault"))
    assert settings.obsidian == [tmp_path / "vault"]


def test_home_precedence(tmp_path: Path) -> None:
    env_home, flag_home = tmp_path / "env-home", tmp_path / "flag-home"
    assert load_settings(environ={}).home == default_home()
    assert load_settings(environ={"MEMRECALL_HOME": str(env_home)}).home == env_home
    chosen = load_settings({"home": str(flag_home)}, environ={"MEMRECALL_HOME": str(env_home)})
    assert chosen.home == flag_home
    # Everything under the home follows it: config, summaries default, user stopwords.
    assert chosen.config_path == flag_home / "config.toml"
    assert chosen.summaries == flag_home / "summaries"
    assert chosen.user_stopwords == flag_home / "stopwords.txt"


def test_home_decides_which_config_file_is_read(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    for home, tokenizer in ((first, "mecab"), (second, "regex")):
        home.mkdir()
        write_config(home, f'tokenizer = "{tokenizer}"\n')
    assert load_settings(environ={"MEMRECALL_HOME": str(first)}).tokenizer == "mecab"
    assert (
        load_settings({"home": str(second)}, environ={"MEMRECALL_HOME": str(first)}).tokenizer
        == "regex"
    )


def test_tokenizer_precedence(isolated_home: Path) -> None:
    env = env_for(isolated_home)
    assert load_settings(environ=env).tokenizer == "auto"
    write_config(isolated_home, 'tokenizer = "mecab"\n')
    assert load_settings(environ=env).tokenizer == "mecab"
    env["MEMRECALL_TOKENIZER"] = "Regex"
    assert load_settings(environ=env).tokenizer == "regex"
    assert load_settings({"tokenizer": "sudachi"}, environ=env).tokenizer == "sudachi"
    env["MEMRECALL_TOKENIZER"] = "command:kagome -sysdict ipa"
    assert load_settings(environ=env).tokenizer == "command:kagome -sysdict ipa"


def test_unknown_tokenizer_warns_and_uses_auto(isolated_home: Path) -> None:
    settings = load_settings(environ=env_for(isolated_home, MEMRECALL_TOKENIZER="juman"))
    assert settings.tokenizer == "auto"
    assert any("juman" in w for w in settings.warnings)


def test_now_precedence(isolated_home: Path) -> None:
    before = datetime.now(timezone.utc)
    assert before <= load_settings(environ=env_for(isolated_home)).now <= datetime.now(timezone.utc)
    env = env_for(isolated_home, MEMRECALL_NOW="2026-12-02T09:00:00+09:00")
    assert load_settings(environ=env).now == datetime(2026, 12, 2, 0, 0, tzinfo=timezone.utc)
    flagged = load_settings({"now": "2026-01-01T00:00:00Z"}, environ=env).now
    assert flagged == datetime(2026, 1, 1, tzinfo=timezone.utc)
    # A naive time is read as UTC, never as the machine's local zone.
    naive = load_settings(environ=env_for(isolated_home, MEMRECALL_NOW="2026-12-02T10:00:00")).now
    assert naive == datetime(2026, 12, 2, 10, tzinfo=timezone.utc)


def test_bad_now_warns_and_uses_the_clock(isolated_home: Path) -> None:
    settings = load_settings(environ=env_for(isolated_home, MEMRECALL_NOW="yesterday"))
    assert abs((settings.now - datetime.now(timezone.utc)).total_seconds()) < 60
    assert any("MEMRECALL_NOW" in w for w in settings.warnings)


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("yes", True), ("", False)])
def test_internal_from_env(isolated_home: Path, value: str, expected: bool) -> None:
    assert (
        load_settings(environ=env_for(isolated_home, MEMRECALL_INTERNAL=value)).internal is expected
    )
    assert load_settings(environ=env_for(isolated_home)).internal is False


def test_empty_env_var_falls_through_to_file(tmp_path: Path, isolated_home: Path) -> None:
    write_config(isolated_home, f'summaries = "{(tmp_path / "s").as_posix()}"\n')
    settings = load_settings(environ=env_for(isolated_home, MEMRECALL_SUMMARIES=""))
    assert settings.summaries == tmp_path / "s"


def test_file_sections_apply(isolated_home: Path) -> None:
    write_config(
        isolated_home,
        "retention_days = 30\n[recall]\nmax_hits = 5\nthreshold = 4\n"
        '[summarize]\nbackend = "extractive"\nexclude_projects = ["secret"]\n',
    )
    settings = load_settings(environ=env_for(isolated_home))
    assert settings.warnings == []
    assert settings.retention_days == 30
    assert (settings.recall.max_hits, settings.recall.threshold) == (5, 4.0)
    assert settings.summarize.backend == "extractive"
    assert settings.summarize.exclude_projects == ["secret"]


@pytest.mark.parametrize(
    "text",
    [
        "tokenizer = [unclosed\n",
        "= 3\n",
        "\x00\x01binary",
        "[recall\nmax_hits = 1\n",
        "a = 1\na = 2\n",
    ],
    ids=["unclosed", "no-key", "binary", "bad-table", "duplicate"],
)
def test_malformed_config_is_a_warning(isolated_home: Path, text: str) -> None:
    write_config(isolated_home, text)
    settings = load_settings(environ=env_for(isolated_home, MEMRECALL_TOKENIZER="mecab"))
    assert len(settings.warnings) == 1 and "not valid TOML" in settings.warnings[0]
    assert str(isolated_home / "config.toml") in settings.warnings[0]
    # Everything else still works: defaults plus the environment.
    assert settings.tokenizer == "mecab" and settings.recall.max_hits == 3


def test_invalid_utf8_config_is_not_a_crash(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_bytes(b'tokenizer = "regex"\n# \xff\xfe\n')
    assert load_settings(environ=env_for(isolated_home)).tokenizer == "regex"


def test_unreadable_config_is_a_warning(isolated_home: Path) -> None:
    (isolated_home / "config.toml").mkdir()  # a directory: reading it fails on every OS
    settings = load_settings(environ=env_for(isolated_home))
    assert settings.tokenizer == "auto"
    assert len(settings.warnings) == 1 and "config" in settings.warnings[0]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("obsidian = 42\n", "obsidian"),
        ("beads = {a = 1}\n", "beads"),
        ('retention_days = "ninety"\n', "retention_days"),
        ("retention_days = 0\n", "retention_days"),
        ('[recall]\nmax_hits = "3"\n', "max_hits"),
        ("[recall]\nlog_prompt = 1\n", "log_prompt"),
        ("[recall]\nthreshold = true\n", "threshold"),
        ('[summarize]\nexclude_projects = "secret"\n', "exclude_projects"),
        ("recall = 3\n", "[recall]"),
    ],
)
def test_wrong_types_warn_and_keep_defaults(isolated_home: Path, text: str, needle: str) -> None:
    write_config(isolated_home, text)
    settings = load_settings(environ=env_for(isolated_home))
    assert len(settings.warnings) == 1 and needle in settings.warnings[0], settings.warnings
    assert settings.obsidian == [] and settings.beads == []
    assert settings.retention_days == 90
    assert settings.recall.max_hits == 3 and settings.recall.log_prompt is False
    assert settings.recall.threshold == 2.0 and settings.summarize.exclude_projects == []


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('colour = "blue"\n', "colour"),
        ("[recall]\nmax_hit = 5\n", "max_hit"),
        ('[summarise]\nbackend = "x"\n', "summarise"),
    ],
)
def test_unknown_keys_warn(isolated_home: Path, text: str, needle: str) -> None:
    write_config(isolated_home, 'tokenizer = "regex"\n' + text)
    settings = load_settings(environ=env_for(isolated_home))
    assert len(settings.warnings) == 1 and needle in settings.warnings[0], settings.warnings
    assert "unknown key" in settings.warnings[0]
    assert settings.tokenizer == "regex"  # the rest of the file still applies


# --- values that used to turn recall off (issue 10, class 7) -------------------------------


@pytest.mark.parametrize("days", [36500, 999999, 10**9, 9223372036854775807])
def test_keep_forever_retention_is_accepted(isolated_home: Path, days: int) -> None:
    from datetime import timedelta

    write_config(isolated_home, f"retention_days = {days}\n")
    settings = load_settings(
        environ=env_for(isolated_home, MEMRECALL_NOW="2026-12-02T09:00:00+09:00")
    )
    assert settings.warnings == []
    cutoff = settings.now - timedelta(days=settings.retention_days)  # what every reader computes
    if days < 700_000:  # reachable: kept as written
        assert settings.retention_days == days
    else:  # past year 1: the cut-off is the earliest date there is
        assert cutoff.year == 1 and settings.retention_days < days


def test_keep_forever_retention_recalls_and_prunes_nothing(
    tmp_path: Path, isolated_home: Path
) -> None:
    """A six-year-old summary is found by the real hook with retention_days = 999999, and prune
    keeps it (before: OverflowError, the hook stayed silent for every prompt)."""
    import json
    import subprocess
    import sys

    summaries = isolated_home / "summaries" / "2020" / "03"
    summaries.mkdir(parents=True)
    (summaries / "2020-03-01-abcd1234.md").write_text(
        "---\ntitle: 古い決済障害\ndate: 2020-03-01T10:00:00+09:00\n"
        "session_id: abcd1234-0000\n---\n"
        "## 古い決済障害\nPAY-4242: the payment gateway timed out; "
        "決済ゲートウェイのタイムアウトを 30 秒にした。\n",
        encoding="utf-8",
    )
    write_config(isolated_home, "retention_days = 999999\n[recall]\ndeadline_ms = 8000\n")
    env = {
        **os.environ,
        "MEMRECALL_NOW": "2026-12-02T09:00:00+09:00",
        "MEMRECALL_TOKENIZER": "regex",
        "MEMRECALL_INDEX": "off",
    }
    for prompt in ("PAY-4242 はどうなった？", "What happened with PAY-4242?"):
        hook = json.dumps(
            {"session_id": f"s-{len(prompt)}", "prompt": prompt}, ensure_ascii=False
        ).encode()
        done = subprocess.run(
            [sys.executable, "-m", "memrecall", "recall"],
            input=hook,
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0 and done.stderr == b""
        context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "2020-03-01-abcd1234.md" in context
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "prune", "--dry-run"],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
        text=True,
    )
    assert done.returncode == 0 and "would archive 0 summaries" in done.stderr, done.stderr


@pytest.mark.parametrize("budget", [200, 300, 430, 500])
def test_budget_smaller_than_the_template_warns_and_keeps_the_default(
    isolated_home: Path, budget: int
) -> None:
    write_config(isolated_home, f"[recall]\nbudget_chars = {budget}\n")
    settings = load_settings(environ=env_for(isolated_home))
    (warning,) = settings.warnings
    assert f"budget_chars = {budget} cannot hold the context template and one memory" in warning
    assert settings.recall.budget_chars == 3000


def test_budget_that_holds_one_memory_is_kept(isolated_home: Path) -> None:
    """The smallest accepted budget really injects: one short memory fits beside the template."""
    from datetime import datetime, timezone

    from memrecall.config import _min_budget
    from memrecall.recall import render_context
    from memrecall.resources import template
    from memrecall.search import Hit

    least = _min_budget()
    assert least is not None
    write_config(isolated_home, f"[recall]\nbudget_chars = {least}\n")
    settings = load_settings(environ=env_for(isolated_home))
    assert settings.warnings == [] and settings.recall.budget_chars == least
    hit = Hit(
        store="summaries",
        ref="r",
        path=Path("/home/you/.local/share/memrecall/summaries/2026/11/2026-11-30-abcdef12.md"),
        title="決済タイムアウト",
        date=datetime(2026, 11, 30, tzinfo=timezone.utc),
        score=1.0,
        matched=["決済"],
        line=3,
        snippet="",
        lines=[(3, "PAY-1234 の決済タイムアウトを 5 秒にした。")],
    )
    context = render_context([hit], least, template("context.md"))
    assert context is not None and "PAY-1234" in context


def test_claude_config_dir_moves_the_transcripts(isolated_home: Path, tmp_path: Path) -> None:
    moved = tmp_path / "claude-elsewhere"
    settings = load_settings(environ=env_for(isolated_home, CLAUDE_CONFIG_DIR=str(moved)))
    assert settings.claude_projects == moved / "projects"
    # memrecall's own override still wins over Claude Code's.
    explicit = tmp_path / "explicit"
    both = env_for(
        isolated_home, CLAUDE_CONFIG_DIR=str(moved), MEMRECALL_CLAUDE_PROJECTS=str(explicit)
    )
    assert load_settings(environ=both).claude_projects == explicit


def test_summarize_and_doctor_find_transcripts_under_claude_config_dir(
    isolated_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from datetime import timedelta

    from memrecall.cli import run_app
    from test_summarize import PROJECT, TURNS, records, sid, write

    moved = tmp_path / "claude-elsewhere"
    write(moved / "projects" / PROJECT / f"{sid(1)}.jsonl", records(sid(1), TURNS))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    monkeypatch.delenv("MEMRECALL_CLAUDE_PROJECTS")  # conftest's: this test is about the default
    monkeypatch.setenv(
        "MEMRECALL_NOW", (datetime.now(timezone.utc) + timedelta(hours=1)).isoformat()
    )
    assert run_app(["summarize", "--dry-run", "--backend", "extractive"]) == 0
    out = capsys.readouterr()
    assert sid(1)[:8] in out.out + out.err
    assert run_app(["summarize", "--backend", "extractive"]) == 0
    capsys.readouterr()
    run_app(["doctor"])
    doctor = " ".join(capsys.readouterr().out.split())
    assert "1 summarized" in doctor


def test_deadline_from_the_environment_beats_the_file(isolated_home: Path) -> None:
    write_config(isolated_home, "[recall]\ndeadline_ms = 300\n")
    assert load_settings(environ=env_for(isolated_home)).recall.deadline_ms == 300
    assert (
        load_settings(
            environ=env_for(isolated_home, MEMRECALL_DEADLINE_MS="5000")
        ).recall.deadline_ms
        == 5000
    )
    for bad in ("fast", "-5", "99999", "1.5"):
        settings = load_settings(environ=env_for(isolated_home, MEMRECALL_DEADLINE_MS=bad))
        assert settings.recall.deadline_ms == 300
        assert any("MEMRECALL_DEADLINE_MS" in w for w in settings.warnings), bad
