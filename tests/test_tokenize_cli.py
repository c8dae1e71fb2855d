"""`memrecall tokenize` as a user runs it: a real process, bytes in, bytes out."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import memrecall

REPO = Path(__file__).resolve().parent.parent
# The hook runs on every prompt: none of these may load on the hot path.
HEAVY = {"typer", "rich", "pydantic", "yaml", "frontmatter", "rapidfuzz", "click"}
PROMPT = "PAY-1234 の決済タイムアウト、internal/payment/client.go を直した"


def memrecall_run(
    *args: str, stdin: bytes = b"", env: dict[str, str] | None = None, python: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *python, "-m", "memrecall", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        cwd=REPO,
        timeout=60,
        check=False,
    )


def lines(data: bytes) -> list[str]:
    return data.decode("utf-8").splitlines()


def test_prints_one_keyword_a_line() -> None:
    done = memrecall_run("tokenize", "--backend", "regex", stdin=PROMPT.encode())
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == [
        "PAY-1234",
        "決済タイムアウト",
        "決済",
        "タイムアウト",
        "internal/payment/client.go",
        "client.go",
        "client",
    ]
    assert done.stderr == b""


@pytest.mark.parametrize("stdin", [b"", b"   \n\t\n"], ids=["empty", "blank"])
def test_empty_stdin_prints_nothing(stdin: bytes) -> None:
    done = memrecall_run("tokenize", stdin=stdin)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@pytest.mark.parametrize("backend", ["regex", "sudachi", "mecab"])
def test_invalid_utf8_is_replaced_not_a_traceback(backend: str) -> None:
    done = memrecall_run(
        "tokenize", "-b", backend, stdin=b"\xff\xfe PAY-1234 \x80\x81 " + "決済".encode()
    )
    assert done.returncode == 0
    assert b"Traceback" not in done.stderr
    assert lines(done.stdout) == ["PAY-1234", "決済"]


@pytest.mark.parametrize("backend", ["regex", "sudachi", "mecab"])
def test_cp932_input_from_a_windows_console(backend: str) -> None:
    done = memrecall_run(
        "tokenize", "-b", backend, stdin="PAY-1234 の決済タイムアウト".encode("cp932")
    )
    assert done.returncode == 0
    assert b"Traceback" not in done.stderr
    out = lines(done.stdout)
    assert out[0] == "PAY-1234"
    assert not [k for k in out if "\ufffd" in k], out


def test_unknown_backend_is_one_line_error_exit_2() -> None:
    done = memrecall_run("tokenize", "--backend", "kagome", stdin=PROMPT.encode())
    assert done.returncode == 2
    assert done.stdout == b""
    err = lines(done.stderr)
    assert len(err) == 1 and err[0].startswith("Error: "), err
    assert "'kagome'" in err[0] and "regex" in err[0]


def test_missing_command_program_names_it() -> None:
    done = memrecall_run("tokenize", "--backend", "command:no-such-analyser-xyz", stdin=b"abc")
    assert done.returncode == 1
    assert lines(done.stderr) == ["Error: command backend program not found: no-such-analyser-xyz"]
    assert done.stdout == b""


def test_missing_library_names_what_to_install(tmp_path: Path) -> None:
    # Shadow sudachipy with a package that fails to import, as on a machine without it.
    fake = tmp_path / "sudachipy"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('simulated: not installed')\n")
    env = {"PYTHONPATH": str(tmp_path)}
    explicit = memrecall_run("tokenize", "-b", "sudachi", stdin=PROMPT.encode(), env=env)
    assert explicit.returncode == 1 and explicit.stdout == b""
    err = lines(explicit.stderr)
    assert len(err) == 1 and err[0].startswith("Error: ") and "pip install" in err[0], err
    assert "sudachipy" in err[0].lower()
    # auto falls back to mecab and says so on stderr; stdout stays pure data.
    auto = memrecall_run("tokenize", "--json", stdin=PROMPT.encode(), env=env)
    assert auto.returncode == 0
    assert {json.loads(line)["backend"] for line in lines(auto.stdout)} == {"mecab"}
    assert "falling back" in auto.stderr.decode() and "sudachi" in auto.stderr.decode()


@pytest.mark.parametrize("backend", ["regex", "sudachi", "mecab"])
def test_json_objects(backend: str) -> None:
    done = memrecall_run("tokenize", "--backend", backend, "--json", stdin=PROMPT.encode())
    assert done.returncode == 0
    objects = [json.loads(line) for line in lines(done.stdout)]
    assert objects[0] == {
        "text": "PAY-1234",
        "kind": "identifier",
        "subkind": "ticket",
        "backend": backend,
    }
    assert all({"text", "kind", "backend"} <= set(o) and o["backend"] == backend for o in objects)
    assert {o["text"]: o["kind"] for o in objects}["internal/payment/client.go"] == "identifier"
    assert {o["text"]: o["kind"] for o in objects}["決済タイムアウト"] in {"noun", "compound"}


def test_default_backend_is_sudachi_when_installed() -> None:
    done = memrecall_run("tokenize", "--json", stdin=PROMPT.encode())
    assert done.returncode == 0 and done.stderr == b""
    assert {json.loads(line)["backend"] for line in lines(done.stdout)} == {"sudachi"}


def _backend_used(env: dict[str, str], *flags: str) -> str:
    done = memrecall_run("tokenize", "--json", *flags, stdin=b"PAY-1234", env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(lines(done.stdout)[0])["backend"]


def test_tokenizer_precedence_flag_env_file(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text('tokenizer = "mecab"\n', encoding="utf-8")
    assert _backend_used({}) == "mecab"
    assert _backend_used({"MEMRECALL_TOKENIZER": "regex"}) == "regex"
    assert _backend_used({"MEMRECALL_TOKENIZER": "regex"}, "--backend", "sudachi") == "sudachi"


def test_user_stopwords_apply_to_the_cli(isolated_home: Path) -> None:
    (isolated_home / "stopwords.txt").write_text("決済\n", encoding="utf-8")
    done = memrecall_run("tokenize", "-b", "mecab", stdin="決済のタイムアウト".encode())
    assert lines(done.stdout) == ["タイムアウト"]


def test_malformed_config_warns_and_still_tokenizes(isolated_home: Path) -> None:
    (isolated_home / "config.toml").write_text("tokenizer = [unclosed\n", encoding="utf-8")
    done = memrecall_run("tokenize", "-b", "regex", stdin=b"PAY-1234")
    assert done.returncode == 0
    assert lines(done.stdout) == ["PAY-1234"]
    err = lines(done.stderr)
    assert len(err) == 1 and err[0].startswith("Warning: ") and "config.toml" in err[0]


def test_help_lists_the_hot_commands() -> None:
    done = memrecall_run("--help")
    assert done.returncode == 0
    out = done.stdout.decode()
    commands = out.split("Commands:", 1)[1]
    assert "tokenize" in commands and "recall" in commands


def test_tokenize_help_goes_to_the_full_cli() -> None:
    done = memrecall_run("tokenize", "--help")
    assert done.returncode == 0
    assert "--backend" in done.stdout.decode() and "--json" in done.stdout.decode()


def test_version() -> None:
    done = memrecall_run("--version")
    assert done.returncode == 0
    assert done.stdout.decode().strip() == f"memrecall {memrecall.__version__}"


def test_console_script() -> None:
    script = Path(sys.executable).parent / ("memrecall.exe" if os.name == "nt" else "memrecall")
    if not script.exists():
        pytest.skip(f"console script not installed next to {sys.executable}")
    done = subprocess.run(
        [str(script), "tokenize", "-b", "regex"],
        input=b"INV-88 \xe3\x81\xae\xe5\x9c\xa8\xe5\xba\xab",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert lines(done.stdout) == ["INV-88", "在庫"]


def _imported_modules(stderr: bytes) -> set[str]:
    names = set()
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "package":
                names.add(name)
    return names


@pytest.mark.parametrize("backend", ["regex", "sudachi", "mecab", "auto"])
def test_tokenize_hot_path_imports_nothing_heavy(backend: str) -> None:
    done = memrecall_run(
        "tokenize", "-b", backend, stdin=PROMPT.encode(), python=("-X", "importtime")
    )
    assert done.returncode == 0
    modules = _imported_modules(done.stderr)
    assert "memrecall.keywords" in modules  # the probe works
    top = {m.split(".")[0] for m in modules}
    assert top & HEAVY == set()
    assert "memrecall.cli" not in modules


def test_import_probe_sees_typer_on_the_full_cli() -> None:
    # Guards the two tests around it: the same probe does catch a heavy import.
    done = memrecall_run("--help", python=("-X", "importtime"))
    assert done.returncode == 0
    assert "typer" in {m.split(".")[0] for m in _imported_modules(done.stderr)}


@pytest.mark.skipif(
    importlib.util.find_spec("memrecall.hook") is None, reason="memrecall.hook not written yet"
)
def test_recall_hot_path_imports_nothing_heavy(tmp_path: Path) -> None:
    payload = {
        "session_id": "s1",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "PAY-1234 の決済タイムアウト、前回どう直した？",
    }
    done = memrecall_run("recall", stdin=json.dumps(payload).encode(), python=("-X", "importtime"))
    assert done.returncode == 0
    top = {m.split(".")[0] for m in _imported_modules(done.stderr)}
    assert top & HEAVY == set()
    # Loading OpenSSL costs ~6 ms a prompt; a session id as Claude Code writes it needs no hash.
    assert "hashlib" not in top
