"""`memrecall init`: settings.json merge cases, backup, dry-run diff, uninstall, schedule,
and the plugin files shipped at the repository root."""

from __future__ import annotations

import json
import os
import plistlib
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memrecall.__main__ import main
from memrecall.install import (
    build_schedule,
    hook_command,
    is_our_command,
    memrecall_argv,
    mentions_memrecall,
)

REPO = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user_home = tmp_path / "home"
    user_home.mkdir()
    monkeypatch.setenv("HOME", str(user_home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return user_home


@pytest.fixture
def settings_file(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def ours(timeout: int = 10) -> dict:
    return {"type": "command", "command": hook_command(), "timeout": timeout}


def backups(path: Path) -> list[Path]:
    return (
        sorted(path.parent.glob(path.name + ".memrecall-backup-*")) if path.parent.exists() else []
    )


def test_the_command_is_an_absolute_path_that_exists() -> None:
    argv = memrecall_argv()
    assert Path(argv[0]).is_absolute() and Path(argv[0]).is_file()
    assert is_our_command(hook_command())
    done = subprocess.run(
        hook_command(),
        shell=True,
        input=b'{"session_id":"t","prompt":"ok"}',
        capture_output=True,
        env={**os.environ, "MEMRECALL_INTERNAL": "1"},
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (0, b"")


@pytest.mark.parametrize(
    "command",
    [
        "memrecall recall",
        "/opt/x/bin/memrecall recall",
        "'/a b/memrecall' recall",
        '"C:/x/memrecall.exe" recall',
        "python -m memrecall recall",
        "/usr/bin/python3.12 -m memrecall recall",
        "'/ホーム/ツール/memrecall' recall",
    ],
)
def test_recognises_our_command(command: str) -> None:
    """Exactly the shape init writes (any install path): the only entry init updates or removes."""
    assert is_our_command(command) and mentions_memrecall(command)


@pytest.mark.parametrize(
    "command",
    [
        "memrecall-other recall",
        "echo memrecall",
        "memrecall search recall x",
        "my-memrecall recall",
        "./notify.sh",
        "memrecall recaller",
    ],
)
def test_leaves_other_commands_alone(command: str) -> None:
    assert not is_our_command(command) and not mentions_memrecall(command)


@pytest.mark.parametrize(
    ("path", "platform"),
    [
        ("/opt/a (x86)/memrecall", "linux"),
        ("/home/a!b$c/memrecall", "linux"),
        ("/home/o'brien/memrecall", "linux"),
        ("/ホーム/メモ #1/[venv]/memrecall", "linux"),
        ("C:/Program Files (x86)/Python/Scripts/memrecall.exe", "windows"),
    ],
)
def test_our_entry_is_recognised_wherever_memrecall_is_installed(path: str, platform: str) -> None:
    """Quoting makes any install path plain words: init can always update and remove its
    own entry."""
    from memrecall.install import command_line, hook_argv

    assert hook_argv(command_line([path, "recall"], platform)) == [path, "recall"]


# The user's own ways of running memrecall: theirs, never rewritten or removed by init.
WRAPPERS = [
    "nice memrecall recall",
    "nice -n 10 /opt/x/bin/memrecall recall",
    "/usr/bin/env MEMRECALL_HOME=x memrecall recall",
    "MEMRECALL_HOME=~/記憶 memrecall recall",
    "bash -c 'cd ~/ノート && memrecall recall'",
    "timeout 5 memrecall recall",
    "memrecall recall 2>>/tmp/memrecall.err",
    "memrecall recall; notify-send 記憶",
    "memrecall recall --quiet",
    "/usr/bin/python3 -X importtime -m memrecall recall",
    '"$HOME/.local/bin/memrecall" recall',
]


@pytest.mark.parametrize("command", WRAPPERS)
def test_a_users_wrapper_is_not_ours(command: str) -> None:
    assert mentions_memrecall(command) and not is_our_command(command)


def test_missing_file_is_created(settings_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "init")
    assert code == 0
    assert json.loads(settings_file.read_text(encoding="utf-8")) == {
        "hooks": {"UserPromptSubmit": [{"hooks": [ours()]}]}
    }
    assert err.splitlines()[0] == (
        f"Installed the memrecall hook in {settings_file}: "
        f"UserPromptSubmit → {hook_command()} (timeout 10 s)."
    )
    assert "# memrecall daily" in out  # the cron line is printed for copying
    assert backups(settings_file) == []
    assert stat.S_IMODE(settings_file.stat().st_mode) & 0o044  # not the temp file's 0600


def test_empty_file_counts_as_no_settings(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text("\n", encoding="utf-8")
    assert run(capsys, "init")[0] == 0
    assert json.loads(settings_file.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"] == [
        {"hooks": [ours()]}
    ]


def test_other_settings_and_hooks_are_kept(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = {
        "model": "opus",
        "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
            ],
            "UserPromptSubmit": [
                {"hooks": [{"type": "command", "command": "other-tool inject", "timeout": 5}]}
            ],
        },
        "日本語": "値",
    }
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(json.dumps(original, indent=4), encoding="utf-8")
    before = settings_file.read_bytes()
    code, _, err = run(capsys, "init")
    assert code == 0
    data = json.loads(settings_file.read_text(encoding="utf-8"))
    expected = json.loads(json.dumps(original))
    expected["hooks"]["UserPromptSubmit"].append({"hooks": [ours()]})
    assert data == expected
    assert list(data) == list(original)  # key order kept
    (backup,) = backups(settings_file)
    assert backup.read_bytes() == before
    assert f"Backup of the previous file: {backup}" in err


def test_already_installed_writes_nothing(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "init")
    before = settings_file.read_bytes()
    mtime = settings_file.stat().st_mtime_ns
    code, _, err = run(capsys, "init")
    assert code == 0
    assert (
        err.splitlines()[0]
        == f"The memrecall hook is already installed in {settings_file}; nothing changed."
    )
    assert settings_file.read_bytes() == before and settings_file.stat().st_mtime_ns == mtime
    assert backups(settings_file) == []


def test_a_stale_path_is_updated_in_place(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    stale = {
        "type": "command",
        "command": "/old/venv/bin/memrecall recall",
        "timeout": 3,
        "statusMessage": "recalling",
    }
    dup = {"type": "command", "command": "memrecall recall"}
    settings_file.write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {"hooks": [stale, {"type": "command", "command": "keep-me"}]},
                        {"hooks": [dup]},
                    ]
                }
            }
        ),
        encoding="utf-8",
    )
    code, _, err = run(capsys, "init", "--timeout", "15")
    assert code == 0 and err.startswith("Updated the memrecall hook")
    groups = json.loads(settings_file.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"]
    assert groups == [
        {
            "hooks": [
                {**ours(15), "statusMessage": "recalling"},
                {"type": "command", "command": "keep-me"},
            ]
        }
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"hooks": {',
            "is not valid JSON "
            "(line 1, column 12: Expecting property name enclosed in double quotes)",
        ),
        (
            '{"a": 1,}',
            "is not valid JSON "
            "(line 1, column 9: Expecting property name enclosed in double quotes)",
        ),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"hooks": []}', '"hooks" is not an object'),
        ('{"hooks": {"UserPromptSubmit": {}}}', '"hooks.UserPromptSubmit" is not a list'),
    ],
)
def test_malformed_settings_are_refused_untouched(
    settings_file: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(text, encoding="utf-8")
    for args in (["init"], ["init", "--uninstall"], ["init", "--dry-run"]):
        code, out, err = run(capsys, *args)
        assert code == 1 and out == ""
        assert err.startswith(f"Error: {settings_file}")
        assert message in err and err.count("\n") == 1
    assert settings_file.read_text(encoding="utf-8") == text
    assert backups(settings_file) == []
    assert sorted(p.name for p in settings_file.parent.iterdir()) == ["settings.json"]


def test_uninstall_removes_only_ours(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = {"type": "command", "command": "other-tool inject"}
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(
        json.dumps(
            {
                "env": {"A": "1"},
                "hooks": {
                    "UserPromptSubmit": [{"hooks": [other]}],
                    "Stop": [{"hooks": [{"type": "command", "command": "memrecall recall"}]}],
                },
            }
        ),
        encoding="utf-8",
    )
    run(capsys, "init")
    code, _, err = run(capsys, "init", "--uninstall")
    assert code == 0
    assert err.splitlines()[0] == f"Removed the memrecall hook from {settings_file} (1 handler)."
    data = json.loads(settings_file.read_text(encoding="utf-8"))
    # Stop is not ours to manage even if it runs something that looks like us.
    assert data == {
        "env": {"A": "1"},
        "hooks": {
            "UserPromptSubmit": [{"hooks": [other]}],
            "Stop": [{"hooks": [{"type": "command", "command": "memrecall recall"}]}],
        },
    }
    code, _, err = run(capsys, "init", "--uninstall")
    assert (code, err) == (0, f"No memrecall hook in {settings_file}; nothing to remove.\n")


def test_uninstall_drops_the_containers_it_emptied(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"model": "opus"}', encoding="utf-8")
    run(capsys, "init")
    run(capsys, "init", "--uninstall")
    assert json.loads(settings_file.read_text(encoding="utf-8")) == {"model": "opus"}
    assert len(backups(settings_file)) == 2


def test_dry_run_shows_a_diff_and_writes_nothing(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{\n  "model": "opus"\n}\n', encoding="utf-8")
    code, out, err = run(capsys, "init", "--dry-run")
    assert code == 0
    assert out.startswith(f"--- {settings_file}\n+++ {settings_file}\n")
    assert (
        '+  "hooks": {' in out and f'+            "command": {json.dumps(hook_command())},' in out
    )
    assert err == f"Dry run: {settings_file} would be changed as shown; nothing was written.\n"
    assert settings_file.read_text(encoding="utf-8") == '{\n  "model": "opus"\n}\n'
    assert backups(settings_file) == []


def test_project_scope(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "my project"  # a space in the path
    project.mkdir()
    monkeypatch.chdir(project)
    assert run(capsys, "init", "--project")[0] == 0
    assert (project / ".claude" / "settings.json").is_file()
    assert not (home / ".claude").exists()


def test_claude_config_dir_moves_the_user_file(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert run(capsys, "init")[0] == 0
    assert (tmp_path / "cfg" / "settings.json").is_file() and not (home / ".claude").exists()


def test_a_symlinked_settings_file_stays_a_symlink(
    settings_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real.parent.mkdir()
    real.write_text("{}", encoding="utf-8")
    settings_file.parent.mkdir(parents=True)
    settings_file.symlink_to(real)
    assert run(capsys, "init")[0] == 0
    assert settings_file.is_symlink()
    assert "UserPromptSubmit" in json.loads(real.read_text(encoding="utf-8"))["hooks"]


# --- the user's own memrecall commands (issue 10, class 8) ---------------------------------


@pytest.mark.parametrize("command", WRAPPERS)
def test_init_and_uninstall_leave_a_users_wrapper_alone(
    settings_file: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {"hooks": [{"type": "command", "command": command, "timeout": 7}]}
                    ]
                }
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    before = settings_file.read_bytes()
    code, _, err = run(capsys, "init")
    assert code == 0 and settings_file.read_bytes() == before and backups(settings_file) == []
    assert err.splitlines()[0] == (
        f"{settings_file} already runs memrecall through your own command: {command!r}; "
        "left as is, no second hook added."
    )
    code, _, err = run(capsys, "init", "--uninstall")
    assert code == 0 and settings_file.read_bytes() == before and backups(settings_file) == []
    assert err == (
        f"No hook that memrecall init added in {settings_file}; nothing removed.\n"
        f"Left your own command alone (remove it yourself if you want): {command!r}\n"
    )


def test_uninstall_removes_our_entry_and_keeps_the_users_own(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = {
        "type": "command",
        "command": "nice -n 5 memrecall recall",
        "statusMessage": "思い出し中",
    }
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(
        json.dumps(
            {
                "hooks": {
                    "UserPromptSubmit": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "/old/venv/bin/memrecall recall",
                                    "timeout": 3,
                                },
                                mine,
                            ]
                        }
                    ]
                }
            }
        ),
        encoding="utf-8",
    )
    code, _, err = run(capsys, "init")
    assert code == 0 and err.startswith("Updated the memrecall hook")
    assert (
        "Your own command also runs memrecall, so each prompt is recalled twice: "
        "'nice -n 5 memrecall recall'" in err
    )
    groups = json.loads(settings_file.read_text(encoding="utf-8"))["hooks"]["UserPromptSubmit"]
    assert groups == [{"hooks": [ours(), mine]}]
    code, _, err = run(capsys, "init", "--uninstall")
    assert code == 0
    assert json.loads(settings_file.read_text(encoding="utf-8")) == {
        "hooks": {"UserPromptSubmit": [{"hooks": [mine]}]}
    }
    assert "Left your own command alone" in err


# --- numbers, special files, hard links (class 8) ------------------------------------------

NUMBERS = {
    "overflow": "1e999",
    "negative overflow": "-1e999",
    "underflow": "2.5e-400",
    "precise": "0.30000000000000001",
    "big int": "123456789012345678901234567890",
    "huge int": "9" * 5000,
    "exponent": "1E+2",
    "negative zero": "-0.0",
    "max double": "1.7976931348623157e308",
    "plain": "10",
}


def test_numbers_are_written_back_exactly_as_the_user_wrote_them(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from decimal import Decimal

    body = ",\n".join(f'  "{name}": {text}' for name, text in NUMBERS.items())
    original = "{\n" + body + ',\n  "list": [1e999, 0.1, {"深い": 1e-999}]\n}\n'
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(original, encoding="utf-8")
    for args in (["init"], ["init", "--uninstall"]):
        assert run(capsys, *args)[0] == 0
        text = settings_file.read_text(encoding="utf-8")

        def strict(name: str) -> None:
            raise AssertionError(f"{name} written: not JSON")

        data = json.loads(text, parse_constant=strict, parse_float=Decimal, parse_int=Decimal)
        for name, literal in NUMBERS.items():
            assert f'"{name}": {literal},' in text
            assert data[name] == Decimal(literal)
        assert data["list"] == [Decimal("1e999"), Decimal("0.1"), {"深い": Decimal("1e-999")}]
        assert "Infinity" not in text and "NaN" not in text
    assert json.loads(
        settings_file.read_text(encoding="utf-8"), parse_float=Decimal, parse_int=Decimal
    ) == json.loads(original, parse_float=Decimal, parse_int=Decimal)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_constants_are_refused_untouched(
    settings_file: Path, literal: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings_file.parent.mkdir(parents=True)
    text = '{"model": "opus", "x": ' + literal + "}"
    settings_file.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "init")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err == (
        f"Error: {settings_file} is not valid JSON ({literal} is not a JSON number); "
        "fix it first, nothing was changed\n"
    )
    assert settings_file.read_text(encoding="utf-8") == text and backups(settings_file) == []


def _special_file(kind: str, path: Path, tmp_path: Path) -> None:
    import socket

    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink to a fifo":
        os.mkfifo(tmp_path / "pipe")
        path.symlink_to(tmp_path / "pipe")
    elif kind == "socket":
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sock.close()
    else:  # sparse: no disk used, but 20 MB to read
        with open(path, "wb") as handle:
            handle.truncate(20 * 1024 * 1024)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and sockets are POSIX")
@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("fifo", "is a FIFO, not a regular file; nothing was changed"),
        ("symlink to a fifo", "is a FIFO, not a regular file; nothing was changed"),
        ("socket", "cannot read"),
        ("huge", "is 20 MB, more than a settings file holds (16 MB); nothing was changed"),
    ],
)
@pytest.mark.parametrize(
    "args", [["init"], ["init", "--uninstall"], ["init", "--dry-run"], ["init", "--project"]]
)
def test_settings_that_are_not_plain_files_are_refused_without_hanging(
    tmp_path: Path, isolated_home: Path, kind: str, message: str, args: list[str]
) -> None:
    config, project = tmp_path / "claude", tmp_path / "プロジェクト"
    config.mkdir()
    (project / ".claude").mkdir(parents=True)
    target = (project / ".claude" if "--project" in args else config) / "settings.json"
    _special_file(kind, target, tmp_path)
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(config), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith(f"Error: {target}") or done.stderr.startswith(
        f"Error: cannot read {target}"
    )
    assert message in done.stderr and done.stderr.count("\n") == 1
    assert sorted(p.name for p in target.parent.iterdir()) == [
        "settings.json"
    ]  # no backup, no temp file


def test_a_hard_linked_settings_file_is_written_through(
    settings_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dotfiles setup that hard-links settings.json keeps one file: both names see the hook
    (a rename would leave the other name with the old settings)."""
    dotfiles = tmp_path / "dotfiles" / "claude-settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"model": "opus"}\n', encoding="utf-8")
    dotfiles.chmod(0o640)
    settings_file.parent.mkdir(parents=True)
    os.link(dotfiles, settings_file)
    code, _, err = run(capsys, "init")
    assert code == 0
    assert os.path.samefile(settings_file, dotfiles) and settings_file.stat().st_nlink == 2
    assert json.loads(dotfiles.read_text(encoding="utf-8")) == {
        "model": "opus",
        "hooks": {"UserPromptSubmit": [{"hooks": [ours()]}]},
    }
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o640
    (backup,) = backups(settings_file)
    assert backup.read_text(encoding="utf-8") == '{"model": "opus"}\n'
    assert run(capsys, "init", "--uninstall")[0] == 0
    assert json.loads(dotfiles.read_text(encoding="utf-8")) == {"model": "opus"}
    assert os.path.samefile(settings_file, dotfiles)
    assert not [p for p in settings_file.parent.iterdir() if p.name.endswith(".tmp")]


# --- the user's formatting and backups (issue 13) -------------------------------------------

# settings.json as people write it: init changes only the hook's own text, in the file's style.
STYLED = {
    "4 spaces, no final newline": (
        '{\n    "zeta": 1,\n    "alpha": {"allow": ["Bash(ls)", "Read"]},\n'
        '    "escaped": "\\u65e5\\u672c"\n}'
    ),
    "tabs": (
        '{\n\t"permissions": {\n\t\t"allow": [\n\t\t\t"Bash(ls)"\n\t\t]\n\t},\n'
        '\t"model": "opus"\n}\n'
    ),
    "CRLF": '{\r\n  "model": "opus",\r\n  "env": {\r\n    "A": "1"\r\n  }\r\n}\r\n',
    "one line": '{"model":"opus","env":{"B":"2","A":"1"}}',
    "hooks first, keys unsorted": (
        '{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "./done.sh"}]}]\n'
        '  },\n  "z": 2,\n  "a" : 1\n}\n'
    ),
    "a group of the user's": (
        '{\n   "hooks": {\n      "UserPromptSubmit": [\n'
        '         {"hooks": [{"type": "command", "command": "other-tool inject"}]}\n'
        "      ]\n   }\n}\n"
    ),
    "byte order mark": '\ufeff{\n  "model": "opus"\n}\n',
}


@pytest.mark.parametrize("original", STYLED.values(), ids=STYLED.keys())
def test_init_keeps_the_users_formatting_and_uninstall_gives_the_file_back(
    settings_file: Path, original: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import difflib

    settings_file.parent.mkdir(parents=True)
    settings_file.write_bytes(original.encode("utf-8"))
    assert run(capsys, "init")[0] == 0
    text = settings_file.read_bytes().decode("utf-8")
    data = json.loads(text.removeprefix("\ufeff"))
    before = json.loads(original.removeprefix("\ufeff"))
    assert [k for k in data if k in before] == list(before)  # key order kept
    assert ours() in [h for g in data["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert text.startswith("\ufeff") == original.startswith("\ufeff")
    assert text.endswith("\n") == original.endswith("\n")
    assert text.count("\r\n") == (text.count("\n") if "\r\n" in original else 0)  # line endings
    if "\n" in original.strip():
        # Every line of the user's is still there; at most one gained a comma.
        old_lines, new_lines = original.splitlines(), text.splitlines()
        gone = [line for line in difflib.ndiff(old_lines, new_lines) if line.startswith("- ")]
        assert len(gone) <= 1 and all(f"{line[2:]}," in new_lines for line in gone)
        # The added lines are indented with the file's own unit (its first member's indent).
        unit = old_lines[1][: len(old_lines[1]) - len(old_lines[1].lstrip())]
        added = [line for line in new_lines if line not in old_lines]
        indents = {line[: len(line) - len(line.lstrip())] for line in added}
        assert all(i == unit * (len(i) // len(unit)) for i in indents)
    assert run(capsys, "init", "--uninstall")[0] == 0
    assert settings_file.read_bytes() == original.encode("utf-8")


def test_updating_a_stale_path_rewrites_only_its_own_lines(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = {
        "type": "command",
        "command": "/old/venv/bin/memrecall recall",
        "timeout": 3,
        "statusMessage": "recalling",
    }
    original = (
        json.dumps(
            {"hooks": {"UserPromptSubmit": [{"hooks": [stale]}]}, "model": "opus"}, indent="\t"
        )
        + "\n"
    )
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(original, encoding="utf-8")
    assert run(capsys, "init", "--timeout", "15")[0] == 0
    old_lines, new_lines = (
        original.splitlines(),
        settings_file.read_text(encoding="utf-8").splitlines(),
    )
    assert [a for a, b in zip(old_lines, new_lines) if a != b] == [
        '\t\t\t\t\t\t"command": "/old/venv/bin/memrecall recall",',
        '\t\t\t\t\t\t"timeout": 3,',
    ]
    assert [b for a, b in zip(old_lines, new_lines) if a != b] == [
        f'\t\t\t\t\t\t"command": {json.dumps(hook_command())},',
        '\t\t\t\t\t\t"timeout": 15,',
    ]
    assert len(new_lines) == len(old_lines)


def test_a_settings_file_that_is_not_utf8_is_refused_untouched(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-encoding would replace the user's bytes with U+FFFD in the part init does not own."""
    settings_file.parent.mkdir(parents=True)
    raw = '{"model": "opus", "note": "café"}\n'.encode("latin-1")
    settings_file.write_bytes(raw)
    code, out, err = run(capsys, "init")
    assert code == 1 and out == ""
    assert err == (
        f"Error: {settings_file} is not UTF-8 (byte offset 30); save it as UTF-8 first, "
        "nothing was changed\n"
    )
    assert settings_file.read_bytes() == raw and backups(settings_file) == []


def test_only_the_last_backups_are_kept_and_the_users_own_files_stay(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import re

    from memrecall.install import SETTINGS_BACKUPS_KEPT

    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"model": "opus"}\n', encoding="utf-8")
    folder = settings_file.parent
    theirs = [
        "settings.json.bak",
        "settings.json.memrecall-backup-mine",
        "settings.json.memrecall-backup-2020",
        "other.json.memrecall-backup-20200101-000000",
    ]
    for name in theirs:
        (folder / name).write_text("mine\n", encoding="utf-8")
    # init's own, from long ago: the first to go.
    (folder / "settings.json.memrecall-backup-20200101-000000").write_text("{}", encoding="utf-8")
    (folder / "settings.json.memrecall-backup-20200102-000000.7").mkdir()  # not a file: left alone
    contents = []
    for args in (["init"], ["init", "--uninstall"]) * 3:
        contents.append(settings_file.read_text(encoding="utf-8"))
        code, _, err = run(capsys, *args)
        assert code == 0 and "Backup of the previous file: " in err
    own = re.compile(r"settings\.json\.memrecall-backup-(\d{8}-\d{6})(?:\.(\d+))?")

    def made(path: Path) -> tuple[str, int]:  # the stamp, then the `.N` of a same-second backup
        match = own.fullmatch(path.name)
        assert match is not None
        return match[1], int(match[2] or 0)

    kept = sorted((p for p in folder.iterdir() if own.fullmatch(p.name) and p.is_file()), key=made)
    assert len(kept) == SETTINGS_BACKUPS_KEPT == 3
    assert [p.read_text(encoding="utf-8") for p in kept] == contents[-3:]
    assert all((folder / name).read_text(encoding="utf-8") == "mine\n" for name in theirs)
    assert (folder / "settings.json.memrecall-backup-20200102-000000.7").is_dir()


def test_backups_made_within_one_second_keep_their_order_after_pruning(tmp_path: Path) -> None:
    """Pruning frees the oldest names of a second; a newer backup never takes one of them
    (it would then sort as the oldest and be the next to go)."""
    from datetime import datetime

    from memrecall.install import apply_init, plan_init, read_settings_file

    target = tmp_path / "settings.json"
    same_second = datetime(2026, 12, 4, 15, 1, 1)
    before = []
    for n in range(7):
        target.write_text(json.dumps({"run": n}) + "\n", encoding="utf-8")
        before.append(target.read_text(encoding="utf-8"))
        assert apply_init(plan_init(target, "memrecall recall"), stamp=same_second) is not None
        assert read_settings_file(target)[1]["run"] == n
    stamp = "settings.json.memrecall-backup-20261204-150101"
    kept = sorted(
        (p for p in tmp_path.iterdir() if p.name.startswith(stamp)),
        key=lambda p: int(p.name[len(stamp) + 1 :] or 0),
    )
    assert [p.read_text(encoding="utf-8") for p in kept] == before[-3:]


# --- schedule -----------------------------------------------------------------------------


def test_cron_line(isolated_home: Path) -> None:
    """One short line that runs the wrapper; the long part (settings, log, both commands) lives
    in the wrapper, where cron's `%` and line length are no concern."""
    schedule = build_schedule(
        "linux",
        isolated_home,
        argv=["/opt/mem recall/bin/memrecall"],
        claude="/usr/local/bin/claude",
    )
    wrapper = isolated_home / "bin" / "memrecall-daily"
    assert schedule.wrapper_path == wrapper
    assert schedule.text == f"17 4 * * * {wrapper} # memrecall daily"
    script = schedule.wrapper
    assert script.startswith("#!/bin/sh\n")
    assert f"export MEMRECALL_HOME={isolated_home}\n" in script
    assert "export PATH=/usr/local/bin:/usr/local/bin:/usr/bin:/bin\n" in script
    assert f"exec >> {isolated_home}/logs/schedule.log 2>&1\n" in script
    exe = "'/opt/mem recall/bin/memrecall'"
    assert script.endswith(DAILY_TAIL.format(exe=exe))


# summarize and prune, then usage verdicts and the team sync (a no-op without [team]).
DAILY_TAIL = (
    "{exe} summarize\n{exe} prune\n{exe} usage --limit 1 >/dev/null\n{exe} team sync --background\n"
)


def test_cron_line_escapes_percent_in_the_wrapper_path(tmp_path: Path) -> None:
    home = tmp_path / "50% home"
    schedule = build_schedule("linux", home, argv=["/x/memrecall"])
    wrapper = f"'{tmp_path}/50\\% home/bin/memrecall-daily'"
    assert schedule.text == f"17 4 * * * {wrapper} # memrecall daily"
    assert f"export MEMRECALL_HOME='{home}'\n" in schedule.wrapper  # a script takes % as it is


@pytest.mark.skipif(sys.platform == "win32", reason="the wrapper is a POSIX sh script")
def test_the_daily_wrapper_runs_summarize_then_prune_with_the_carried_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memrecall.install import write_wrapper

    calls = tmp_path / "calls.txt"
    fake = tmp_path / "fake memrecall"
    fake.write_text(
        f'#!/bin/sh\necho "$1 $MEMRECALL_HOME $MEMRECALL_OBSIDIAN" >> "{calls}"\necho "ran $1"\n',
        encoding="utf-8",
    )
    fake.chmod(0o755)
    home = tmp_path / "memrecall home"
    monkeypatch.setenv("MEMRECALL_OBSIDIAN", str(tmp_path / "vault's notes"))
    schedule = build_schedule("linux", home, argv=[str(fake)])
    assert write_wrapper(schedule) == home / "bin" / "memrecall-daily"
    assert stat.S_IMODE(schedule.wrapper_path.stat().st_mode) == 0o755
    # cron's environment: next to nothing.
    done = subprocess.run(
        [str(schedule.wrapper_path)],
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert calls.read_text(encoding="utf-8").splitlines() == [
        f"{command} {home} {tmp_path}/vault's notes"
        for command in ("summarize", "prune", "usage", "team")
    ]
    log = (home / "logs" / "schedule.log").read_text(encoding="utf-8")
    assert log == "ran summarize\nran prune\nran team\n"  # usage's table is not logged
    mtime = schedule.wrapper_path.stat().st_mtime_ns
    write_wrapper(schedule)  # unchanged: not rewritten
    assert schedule.wrapper_path.stat().st_mtime_ns == mtime


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="cron is the Linux route")
def test_init_prints_a_short_cron_line_and_writes_its_wrapper(
    settings_file: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "init")
    wrapper = isolated_home / "bin" / "memrecall-daily"
    assert code == 0
    assert out == f"17 4 * * * {wrapper} # memrecall daily\n"
    assert (
        f"Daily jobs: wrote {wrapper}; add this to your crontab (crontab -e), "
        "or let memrecall init --schedule do it:"
    ) in err
    assert "crontab -l" not in err
    exe = hook_command().removesuffix(" recall")
    assert os.access(wrapper, os.X_OK) and f"\n{exe} summarize\n" in wrapper.read_text()
    code, out, _ = run(capsys, "init", "--dry-run", "--schedule", "--uninstall")
    assert code == 0 and wrapper.exists()  # a dry run removes nothing


def test_launchd_plist(isolated_home: Path, home: Path) -> None:
    schedule = build_schedule("macos", isolated_home, argv=["/Users/me/.local/bin/memrecall"])
    plist = plistlib.loads(schedule.plist)
    assert plist["Label"] == "com.memrecall.daily"
    # The same wrapper as cron's: the settings and both commands live there.
    assert plist["ProgramArguments"] == [str(isolated_home / "bin" / "memrecall-daily")]
    assert "EnvironmentVariables" not in plist
    exe = "/Users/me/.local/bin/memrecall"
    assert schedule.wrapper.endswith(DAILY_TAIL.format(exe=exe))
    assert plist["StartCalendarInterval"] == {"Hour": 4, "Minute": 17}
    assert schedule.plist_path == home / "Library" / "LaunchAgents" / "com.memrecall.daily.plist"


def test_another_platform_prints_the_wrapper_instead_of_writing_it(
    settings_file: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = "macos" if sys.platform != "darwin" else "linux"
    code, out, err = run(capsys, "init", "--platform", other)
    wrapper = isolated_home / "bin" / "memrecall-daily"
    assert code == 0 and not wrapper.exists()
    assert out.startswith(f"# 1. {wrapper} (chmod 755):\n#!/bin/sh\n")
    assert "# 2. " in out and f"Daily jobs for {other}, printed only " in err


def test_schtasks_commands(isolated_home: Path) -> None:
    schedule = build_schedule(
        "windows", isolated_home, argv=["C:\\Program Files\\Py\\Scripts\\memrecall.exe"]
    )
    lines = schedule.text.splitlines()
    assert lines[0] == (
        "schtasks /Create /F /SC DAILY /ST 04:17 /TN memrecall-summarize "
        '/TR "\\"C:/Program Files/Py/Scripts/memrecall.exe\\" summarize"'
    )
    assert "/TN memrecall-prune" in lines[1]


def test_schedule_for_another_platform_only_prints(
    settings_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from memrecall.install import current_platform

    other = "windows" if sys.platform != "win32" else "linux"
    code, out, err = run(capsys, "init", "--schedule", "--platform", other)
    assert code == 2
    assert err.endswith(
        f"Error: --schedule installs only for this machine ({current_platform()}); "
        f"--platform {other} just prints\n"
    )
    assert not settings_file.exists()  # refused before anything was written
    code, out, _ = run(capsys, "init", "--platform", other, "--dry-run", "--schedule")
    assert code == 0 and "memrecall" in out


@pytest.fixture
def fake_crontab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    table = tmp_path / "crontab.txt"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "crontab"
    script.write_text(
        "#!/bin/sh\n"
        f'TABLE="{table}"\n'
        'if [ "$1" = "-l" ]; then '
        '[ -f "$TABLE" ] || { echo "no crontab for $USER" >&2; exit 1; }; '
        'cat "$TABLE"; exit 0; fi\n'
        'if [ "$1" = "-" ]; then cat > "$TABLE"; exit 0; fi\n'
        "exit 2\n",
        encoding="utf-8",
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return table


@pytest.fixture
def this_machine(monkeypatch: pytest.MonkeyPatch):
    """Make init take this machine for another platform: each platform's install path then runs
    here, against the stand-ins below for crontab, launchctl and schtasks."""

    def be(platform: str) -> None:
        monkeypatch.setattr("memrecall.install.current_platform", lambda: platform)

    return be


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-ins for launchctl and schtasks on PATH: each call appends its words to a file."""
    calls = tmp_path / "calls.txt"
    bindir = tmp_path / "recorders"
    bindir.mkdir()
    for name in ("launchctl", "schtasks"):
        script = bindir / name
        script.write_text(f'#!/bin/sh\necho "{name} $*" >> "{calls}"\n', encoding="utf-8")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return calls


def _calls(calls: Path) -> list[str]:
    return calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []


def _said(err: str, start: str) -> str:
    """The one stderr line that starts so (the hook's own lines come before it)."""
    (line,) = [line for line in err.splitlines() if line.startswith(start)]
    return line


@pytest.mark.skipif(sys.platform == "win32", reason="the crontab stand-in is a POSIX sh script")
def test_schedule_on_linux_says_it_wrote_to_cron_which_script_runs_and_when(
    settings_file: Path,
    fake_crontab: Path,
    isolated_home: Path,
    this_machine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    this_machine("linux")
    wrapper = isolated_home / "bin" / "memrecall-daily"
    log = isolated_home / "logs" / "schedule.log"
    code, _, err = run(capsys, "init", "--schedule")
    assert code == 0
    assert _said(err, "Daily job") == (
        "Daily job in cron: added a line tagged `# memrecall daily` to your crontab "
        "(crontab -l shows it)."
    )
    assert _said(err, "It runs") == (
        f"It runs every day at 04:17 (local time): {wrapper}, which runs memrecall summarize"
        f", prune, usage and team sync, output in {log}."
    )
    (line,) = fake_crontab.read_text(encoding="utf-8").splitlines()
    assert line == f"17 4 * * * {wrapper} # memrecall daily" and os.access(wrapper, os.X_OK)
    fake_crontab.write_text("0 1 * * * backup.sh\n" + line + "\n", encoding="utf-8")
    code, _, err = run(capsys, "init", "--schedule")
    assert _said(err, "Daily job") == (
        "Daily job in cron: your crontab already has the line tagged `# memrecall daily`, "
        "left unchanged."
    )
    code, _, err = run(capsys, "init", "--uninstall", "--schedule")
    assert code == 0
    assert _said(err, "Daily job") == (
        "Daily job in cron: removed the line tagged `# memrecall daily` from your crontab "
        f"(crontab -); deleted {wrapper}."
    )
    assert "It runs" not in err
    assert fake_crontab.read_text(encoding="utf-8") == "0 1 * * * backup.sh\n"
    assert not wrapper.exists()
    assert json.loads(settings_file.read_text(encoding="utf-8")) == {}
    assert len(list((isolated_home / "backups").glob("crontab-*.txt"))) >= 1
    code, _, err = run(capsys, "init", "--uninstall", "--schedule")
    assert _said(err, "Daily job") == (
        "Daily job in cron: no line tagged `# memrecall daily` in your crontab, nothing to remove."
    )


@pytest.mark.skipif(sys.platform == "win32", reason="the launchctl stand-in is a POSIX sh script")
def test_schedule_on_macos_says_which_launchd_agent_it_wrote_and_loaded(
    settings_file: Path,
    home: Path,
    isolated_home: Path,
    recorded: Path,
    this_machine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    this_machine("macos")
    wrapper = isolated_home / "bin" / "memrecall-daily"
    log = isolated_home / "logs" / "schedule.log"
    agent = home / "Library" / "LaunchAgents" / "com.memrecall.daily.plist"
    code, _, err = run(capsys, "init", "--schedule")
    assert code == 0
    # The path as it is on disk: macOS folders have capitals (Library, LaunchAgents).
    assert _said(err, "Daily job") == (
        f"Daily job in launchd: wrote the agent {agent} and loaded it (launchctl load -w)."
    )
    assert _said(err, "It runs") == (
        f"It runs every day at 04:17 (local time): {wrapper}, which runs memrecall summarize"
        f", prune, usage and team sync, output in {log}."
    )
    assert plistlib.loads(agent.read_bytes())["ProgramArguments"] == [str(wrapper)]
    assert os.access(wrapper, os.X_OK)
    assert _calls(recorded)[-1] == f"launchctl load -w {agent}"
    code, _, err = run(capsys, "init", "--uninstall", "--schedule")
    assert code == 0
    assert _said(err, "Daily job") == (
        f"Daily job in launchd: unloaded and removed the agent {agent}; deleted {wrapper}."
    )
    assert not agent.exists() and not wrapper.exists()
    assert _calls(recorded)[-1] == f"launchctl unload -w {agent}"


@pytest.mark.skipif(sys.platform == "win32", reason="the schtasks stand-in is a POSIX sh script")
def test_schedule_on_windows_names_both_tasks_their_times_and_no_wrapper(
    settings_file: Path,
    isolated_home: Path,
    recorded: Path,
    this_machine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    this_machine("windows")
    code, _, err = run(capsys, "init", "--schedule")
    assert code == 0
    assert _said(err, "Daily job") == (
        "Daily job in Windows Task Scheduler: created the tasks memrecall-summarize and "
        "memrecall-prune (schtasks /Create)."
    )
    assert _said(err, "It runs") == (
        "It runs every day (local time): task memrecall-summarize runs `memrecall summarize` "
        "at 04:17, task memrecall-prune runs `memrecall prune` at 04:47; no wrapper script on "
        "Windows."
    )
    made = _calls(recorded)
    tasks = [call.split(" /TN ")[1].split()[0] for call in made]
    assert tasks == ["memrecall-summarize", "memrecall-prune"]
    assert "/SC DAILY /ST 04:17 /TN memrecall-summarize" in made[0]
    assert not (isolated_home / "bin" / "memrecall-daily").exists()
    code, _, err = run(capsys, "init", "--uninstall", "--schedule")
    assert _said(err, "Daily job") == (
        "Daily job in Windows Task Scheduler: deleted the tasks memrecall-summarize and "
        "memrecall-prune (schtasks /Delete)."
    )
    assert _calls(recorded)[-2:] == [
        "schtasks /Delete /F /TN memrecall-summarize",
        "schtasks /Delete /F /TN memrecall-prune",
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="the stand-ins are POSIX sh scripts")
@pytest.mark.parametrize(
    ("platform", "would"),
    [
        (
            "linux",
            (
                "cron: write {wrapper}, then add a line tagged `# memrecall daily` that runs it "
                "to your crontab (crontab -)"
            ),
        ),
        (
            "macos",
            (
                "launchd: write {wrapper} and the agent {agent} that runs it, then load it "
                "(launchctl load -w)"
            ),
        ),
        (
            "windows",
            (
                "Windows Task Scheduler: create the tasks memrecall-summarize and "
                "memrecall-prune (schtasks /Create)"
            ),
        ),
    ],
    ids=["linux", "macos", "windows"],
)
def test_a_dry_run_says_which_scheduler_it_would_write_to_and_writes_nothing(
    platform: str,
    would: str,
    settings_file: Path,
    home: Path,
    isolated_home: Path,
    fake_crontab: Path,
    recorded: Path,
    this_machine,
    capsys: pytest.CaptureFixture[str],
) -> None:
    this_machine(platform)
    wrapper = isolated_home / "bin" / "memrecall-daily"
    agent = home / "Library" / "LaunchAgents" / "com.memrecall.daily.plist"
    code, out, err = run(capsys, "init", "--dry-run", "--schedule")
    assert code == 0
    assert _said(err, "Dry run: --schedule") == (
        f"Dry run: --schedule would use {would.format(wrapper=wrapper, agent=agent)}; "
        "nothing was written."
    )
    when = (
        "every day (local time): task memrecall-summarize"
        if platform == "windows"
        else (
            f"every day at 04:17 (local time): {wrapper}, "
            "which runs memrecall summarize, prune, usage and team sync"
        )
    )
    assert _said(err, "It would run").startswith(f"It would run {when}")
    assert ("schtasks /Create" if platform == "windows" else "#!/bin/sh\n") in out
    assert not wrapper.exists() and not agent.exists() and not settings_file.exists()
    assert not fake_crontab.exists() and _calls(recorded) == []
    code, out, err = run(capsys, "init", "--dry-run", "--schedule", "--uninstall")
    assert code == 0 and "Dry run: --uninstall --schedule would use " in err
    assert _calls(recorded) == []


def test_another_platforms_job_is_said_to_be_printed_only(
    settings_file: Path, isolated_home: Path, this_machine, capsys: pytest.CaptureFixture[str]
) -> None:
    this_machine("linux")
    code, out, err = run(capsys, "init", "--platform", "windows")
    assert code == 0
    assert _said(err, "Daily jobs") == (
        "Daily jobs for windows, printed only (init installs nothing for a platform other than "
        "this linux machine): Windows Task Scheduler would run the job every day (local time): "
        "task memrecall-summarize runs `memrecall summarize` at 04:17, task memrecall-prune runs "
        "`memrecall prune` at 04:47; no wrapper script on Windows. On that machine, add this to "
        "Task Scheduler (tasks memrecall-summarize, memrecall-prune):"
    )
    assert out.startswith("schtasks /Create ")
    code, out, err = run(capsys, "init", "--platform", "macos", "--dry-run", "--schedule")
    assert code == 0 and "Daily jobs for macos, printed only " in err
    assert "launchd would run the job every day at 04:17 (local time)" in err
    assert not (isolated_home / "bin" / "memrecall-daily").exists()


# --- the plugin route ---------------------------------------------------------------------


def test_plugin_manifest_and_hooks() -> None:
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "memrecall"
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    (group,) = hooks["hooks"]["UserPromptSubmit"]
    (handler,) = group["hooks"]
    assert (
        handler["type"] == "command"
        and isinstance(handler["timeout"], int)
        and handler["timeout"] <= 30
    )
    assert "${CLAUDE_PLUGIN_ROOT}/hooks/recall.sh" in handler["command"]
    assert set(hooks["hooks"]) == {"UserPromptSubmit"}


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX sh")
def test_plugin_wrapper_runs_memrecall_and_fails_open(tmp_path: Path) -> None:
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    command = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    env = {
        **os.environ,
        "CLAUDE_PLUGIN_ROOT": str(REPO),
        "MEMRECALL_BIN": memrecall_argv()[0],
        "MEMRECALL_INTERNAL": "1",
    }
    done = subprocess.run(
        command,
        shell=True,
        input=b'{"session_id":"t","prompt":"ok"}',
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    lost = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_PLUGIN_ROOT": str(REPO)}
    done = subprocess.run(
        command, shell=True, input=b"{}", capture_output=True, env=lost, timeout=60
    )
    assert (done.returncode, done.stdout) == (0, b"")
    assert b"memrecall: command not found" in done.stderr
