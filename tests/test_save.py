"""`memrecall save`: a note piped in becomes a memory the very next prompt can recall.

What a user notices: where the note lands and what its frontmatter says, that a secret never
reaches the disk, that a second copy of a memory is refused with the ref to append to, and
that bad input is one line of error with nothing written, not even a temp file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from _index_fixtures import build_stores

from memrecall.__main__ import main
from memrecall.config import load_settings

SECRETS = {
    "aws": "AKIAQ7RX4MZP2VKDBRCH",
    "github": "ghp_CwdFolder7Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9P",
    "anthropic": "sk-ant-api03-Xq7vR2mK9pL4tW8nB3cF6hJ1dS5gA0zE-yU7iO2pQ9rT4wV",
    "url-password": "S3cr3t-Pa55w0rd-Z9",
    "env": "Tr0ub4dor-Horse-9931",
}


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stores to recall from, and the user standing in a subfolder of the git work tree `shop`."""
    build_stores(tmp_path, isolated_home, monkeypatch)
    (tmp_path / "shop" / ".git").mkdir()
    work = tmp_path / "shop" / "internal" / "payment"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path / "shop"


def memories() -> Path:
    return load_settings().memories_dir


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file (dot-files and temp files included) below `folder`."""
    if not folder.exists():
        return {}
    found = sorted(p for p in folder.rglob("*") if p.is_file())
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in found}


class Cli:
    """`memrecall save` run in-process with `stdin` piped in: (exit code, stdout, stderr)."""

    def __init__(self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
        self.capsys, self.monkeypatch = capsys, monkeypatch

    def run(self, stdin: bytes | str, *args: str) -> tuple[int, str, str]:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        wrapper = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
        self.monkeypatch.setattr(sys, "stdin", wrapper)
        code = main(["save", *args])
        captured = self.capsys.readouterr()
        return code, captured.out, captured.err

    def json(self, stdin: str, *args: str) -> dict[str, Any]:
        code, out, err = self.run(stdin, *args, "--json")
        assert code == 0, err
        return json.loads(out)


@pytest.fixture
def cli(repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(capsys, monkeypatch)


def front(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def today() -> str:
    return load_settings().now.astimezone().strftime("%Y-%m-%d")


NOTE = (
    "# 在庫同期の二重加算\n\n"
    "在庫同期バッチで SKU が二重に加算された。"
    "原因は INV-4521 のリトライで、冪等キーを入れて直した。\n\n"
    "## 経緯\n- 夜間バッチが 2 回走った\n"
)


# --- where it goes and what it says ------------------------------------------------------------


def test_the_note_lands_by_project_and_date_with_frontmatter_made_for_search(cli: Cli) -> None:
    result = cli.json(NOTE, "--tags", "inventory, batch", "--alias", "在庫二重計上")
    path = memories() / "shop" / f"{today()}-在庫同期の二重加算.md"
    assert result == {
        "path": str(path),
        "ref": f"memories/shop/{path.name}",
        "title": "在庫同期の二重加算",
        "tags": ["inventory", "batch", "memory"],
        "redacted": 0,
        "appended": False,
    }
    meta = front(path)
    assert meta["title"] == "在庫同期の二重加算" and meta["project"] == "shop"
    assert meta["tags"] == ["inventory", "batch", "memory"] and meta["aliases"] == ["在庫二重計上"]
    assert meta["summary"] == "在庫同期バッチで SKU が二重に加算された。"
    assert meta["source"] == "memrecall-save"
    assert meta["date"].startswith(today()) and meta["date"][10] == "T"  # ISO, with its offset
    assert path.read_text(encoding="utf-8").endswith(NOTE)  # the body as written


def test_the_hooks_own_frontmatter_reader_reads_it_back(cli: Cli) -> None:
    from memrecall import frontmatter_lite

    result = cli.json(
        "Quote 'this': a #hash, a [bracket] and: colons\n",
        "--title",
        "It's a test: yes #1",
        "--summary",
        "one: two 'three'",
    )
    text = Path(result["path"]).read_text(encoding="utf-8")
    meta = frontmatter_lite.parse(frontmatter_lite.split(text)[0] or "")
    assert meta["title"].replace("''", "'") == "It's a test: yes #1"
    assert frontmatter_lite.as_list(meta["tags"]) == ["memory"]
    # A heading is added.
    assert text.split("---\n", 2)[2].lstrip().startswith("# It's a test: yes #1\n")


def test_plain_text_gives_the_title_its_first_line_and_the_summary_its_first_sentence(
    cli: Cli,
) -> None:
    line = "Kafka consumer lag fixed. We lowered max.poll.records to 100."
    result = cli.json(line + "\n")
    assert result["title"] == line
    slug = "kafka-consumer-lag-fixed-we-lowered-max-poll-records-to-100"
    assert Path(result["path"]).name == f"{today()}-{slug}.md"
    assert front(Path(result["path"]))["summary"] == "Kafka consumer lag fixed."


def test_piped_frontmatter_gives_the_defaults_and_is_not_doubled(cli: Cli) -> None:
    note = "---\ntitle: Redis failover\ntags: [redis]\nstatus: draft\n---\nThe replica took over.\n"
    result = cli.json(note, "--tags", "ops")
    text = Path(result["path"]).read_text(encoding="utf-8")
    assert text.count("---\n") == 2
    meta = front(Path(result["path"]))
    assert meta["title"] == "Redis failover" and meta["status"] == "draft"
    assert meta["tags"] == ["redis", "ops", "memory"]


def test_project_is_the_git_work_tree_or_the_flag(
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert cli.json("# one\nfirst\n")["ref"].startswith("memories/shop/")
    billing = cli.json("# two\nsecond\n", "--project", "../../billing")
    assert billing["ref"].startswith("memories/billing/")
    elsewhere = tmp_path / "scratch dir"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli.json("# three\nthird\n")["ref"].startswith("memories/scratch-dir/")


@pytest.mark.parametrize(
    "title, name",
    [
        ("../../x", "x"),
        ("/etc/passwd", "etc-passwd"),
        ("..\\..\\windows\\win.ini", "windows-win-ini"),
        ('a/b:c*d?"e<f>g|h', "a-b-c-d-e-f-g-h"),
        ("CON", "con-note"),
        (".hidden", "hidden"),
        ("///", "memory"),
        ("ﾀｲﾄﾙ　全角ＡＢＣ", "タイトル-全角abc"),
    ],
)
def test_a_title_that_is_a_path_becomes_a_plain_name(cli: Cli, title: str, name: str) -> None:
    result = cli.json("body text\n", "--title", title)
    path = Path(result["path"])
    assert path.parent == memories() / "shop"
    assert path.name == f"{today()}-{name}.md"
    assert front(path)["title"] == " ".join(title.split())  # the title itself is kept, on one line


def test_a_long_japanese_title_keeps_its_words_within_file_name_limits(cli: Cli) -> None:
    title = "決済タイムアウトの見直しと再試行回数の上限設定について" * 6
    result = cli.json("本文\n", "--title", title)
    name = Path(result["path"]).name
    assert name.startswith(f"{today()}-決済タイムアウトの見直し")
    assert len(name.encode("utf-8")) < 200
    assert result["title"] == title[:119] + "…"


# --- recalled on the next prompt --------------------------------------------------------------


@pytest.mark.parametrize("engine", ["rg", "index"])
def test_a_saved_note_is_recalled_on_the_very_next_prompt(cli: Cli, engine: str) -> None:
    from memrecall.recall import HookInput, recall

    if engine == "index":
        # Built before the memories folder existed: the save's refresh must add it.
        assert main(["index", "build"]) == 0
    cli.json(NOTE)
    hook = HookInput(session_id="s1", prompt="INV-4521 の件どうなった？")
    result = recall(hook, load_settings(), deadline=time.monotonic() + 8)
    assert result.log["engine"] == engine, result.log.get("index_fallback")
    assert result.context is not None, result.log
    injected = [i["ref"] for i in result.log["injected"]]
    assert injected == [f"memories/shop/{today()}-在庫同期の二重加算.md"]
    assert "冪等キー" in result.context


def test_an_appended_section_is_recalled_from_the_index_at_once(cli: Cli) -> None:
    from memrecall.recall import HookInput, recall

    ref = cli.json(NOTE)["ref"]
    assert main(["index", "build"]) == 0
    cli.json("再発防止に reconcile_stock_nightly を追加した。\n", "--append", ref)
    hook = HookInput(session_id="s2", prompt="reconcile_stock_nightly ってどこで決めた？")
    result = recall(hook, load_settings(), deadline=time.monotonic() + 8)
    assert result.log["engine"] == "index", result.log.get("index_fallback")
    assert [i["ref"] for i in result.log["injected"]] == [ref]


# --- secrets ----------------------------------------------------------------------------------


def test_no_secret_in_the_note_or_its_fields_reaches_the_disk(cli: Cli) -> None:
    note = (
        "# 本番 DB 接続の直し方\n\n"
        f"AWS のキーは {SECRETS['aws']} だった。\n"
        f"GitHub: {SECRETS['github']}\n"
        f"export ANTHROPIC_API_KEY={SECRETS['anthropic']}\n"
        f"DSN: postgres://app:{SECRETS['url-password']}@db.internal:5432/shop\n"
        f"DB_PASSWORD={SECRETS['env']}\n"
    )
    code, out, err = cli.run(
        note,
        "--json",
        "--tags",
        f"db,{SECRETS['aws']}",
        "--summary",
        f"key {SECRETS['github']}",
        "--alias",
        f"old {SECRETS['anthropic']}",
    )
    assert code == 0, err
    assert json.loads(out)["redacted"] >= 7
    assert "Note: redacted" in err and "secrets before saving" in err
    written = files_under(memories())
    assert len(written) == 1
    text = next(iter(written.values())).decode("utf-8")
    for name, secret in SECRETS.items():
        assert secret not in text, name
        assert secret not in out, name
    assert "[REDACTED:" in text and "postgres://app:" in text  # the rest of the line is kept


def test_a_secret_in_the_title_never_names_the_file(cli: Cli) -> None:
    result = cli.json("rotated it\n", "--title", f"rotate {SECRETS['github']}")
    assert SECRETS["github"] not in result["path"] and SECRETS["github"] not in result["title"]
    assert SECRETS["github"] not in Path(result["path"]).read_text(encoding="utf-8")


def test_private_spans_are_left_out(cli: Cli) -> None:
    code, _, err = cli.run("# 顧客対応\n対応した。<private>顧客名は山田商事</private>以上。\n")
    assert code == 0 and "<private> text was left out" in err
    text = next(iter(files_under(memories()).values())).decode("utf-8")
    assert "山田商事" not in text and "対応した。以上。" in text


# --- near-duplicates, --append, --force -------------------------------------------------------


def test_a_memory_with_the_same_title_is_refused_naming_it(cli: Cli) -> None:
    ref = cli.json(NOTE)["ref"]
    before = files_under(memories())
    code, out, err = cli.run("# 在庫同期の二重加算\nまったく別の本文。\n", "--project", "other")
    assert code == 1 and out == ""
    assert err == (
        f"Error: similar memory exists: {ref} (same title); use --append {ref} to "
        "extend it or --force to save anyway\n"
    )
    assert files_under(memories()) == before


def test_nearly_the_same_text_is_refused_with_its_similarity(cli: Cli) -> None:
    ref = cli.json(NOTE)["ref"]
    again = NOTE.replace("# 在庫同期の二重加算", "# 在庫の二重加算バグ")
    again = again.replace("直した。", "直しました。")
    code, _, err = cli.run(again)
    assert code == 1 and err.startswith(f"Error: similar memory exists: {ref} (")
    percent = int(err.split("(", 1)[1].split("%", 1)[0])
    assert 85 <= percent < 100
    assert f"use --append {ref}" in err and err.count("\n") == 1


def test_similar_text_in_another_project_is_another_memory(cli: Cli) -> None:
    cli.json(NOTE)
    again = NOTE.replace("# 在庫同期の二重加算", "# 在庫の二重加算バグ")
    elsewhere = cli.json(again, "--project", "warehouse")
    assert elsewhere["ref"].startswith("memories/warehouse/")


def test_force_saves_beside_it_and_never_overwrites(cli: Cli) -> None:
    first = Path(cli.json(NOTE)["path"])
    original = first.read_bytes()
    second = Path(cli.json(NOTE, "--force")["path"])
    third = Path(cli.json(NOTE, "--force")["path"])
    assert (second.name, third.name) == (first.name[:-3] + "-2.md", first.name[:-3] + "-3.md")
    assert first.read_bytes() == original


def test_a_file_of_someone_else_under_that_name_is_never_overwritten(cli: Cli) -> None:
    taken = memories() / "shop" / f"{today()}-在庫同期の二重加算.md"
    taken.parent.mkdir(parents=True)
    taken.write_text("---\ntitle: mine, not a memory\n---\nhands off\n", encoding="utf-8")
    result = cli.json(NOTE)
    assert Path(result["path"]).name == f"{today()}-在庫同期の二重加算-2.md"
    assert taken.read_text(encoding="utf-8") == "---\ntitle: mine, not a memory\n---\nhands off\n"


def test_append_extends_the_memory_under_a_dated_heading(cli: Cli) -> None:
    saved = cli.json(NOTE, "--tags", "inventory")
    path = Path(saved["path"])
    before = path.read_text(encoding="utf-8")
    result = cli.json(f"再発した。キーは {SECRETS['aws']}。\n", "--append", saved["ref"])
    assert result == {**saved, "redacted": 1, "appended": True}
    after = path.read_text(encoding="utf-8")
    added = f"\n\n## {today()}\n\n再発した。キーは [REDACTED:aws-access-key]。\n"
    assert after == before.rstrip() + added
    assert len(files_under(memories())) == 1
    # By path too, relative to the memories folder or absolute.
    for ref in (f"shop/{path.name}", str(path)):
        assert cli.json("もう一度。\n", "--append", ref)["path"] == str(path)


def test_append_never_touches_a_vault_note_or_a_file_outside(cli: Cli, tmp_path: Path) -> None:
    cli.json(NOTE)
    vault = tmp_path / "vault"
    before = files_under(vault)
    outside = tmp_path / "outside.md"
    outside.write_text("# outside\n", encoding="utf-8")
    for ref in (
        "notes/監視設計.md",
        str(vault / "notes" / "監視設計.md"),
        "memories/../../../vault/notes/監視設計.md",
        "../../etc/passwd",
        str(outside),
        "/etc/passwd",
    ):
        code, out, err = cli.run("extra\n", "--append", ref)
        assert (code, out) == (2, ""), ref
        assert err.startswith("Error: refused: ") and err.count("\n") == 1, (ref, err)
    code, _, err = cli.run("extra\n", "--append", "memories/shop/no-such.md")
    assert code == 1 and err.startswith("Error: no memory memories/shop/no-such.md")
    assert files_under(vault) == before and outside.read_text(encoding="utf-8") == "# outside\n"


# --- bad input: one line, nothing written ---------------------------------------------------------


@pytest.mark.parametrize(
    "stdin, message",
    [
        (b"", "Error: nothing to save: the note is empty\n"),
        (b"  \n\t\n \r\n", "Error: nothing to save: the note is empty\n"),
        (b"<private>only this</private>\n", "Error: nothing to save: the note is empty\n"),
        (
            b"# note\n\x00\x01binary",
            "Error: the note is binary (it holds NUL bytes); pipe markdown text\n",
        ),
        (
            b"# note\n\xff\xfe caf\xe9\n",
            "Error: the note is not UTF-8 text (invalid byte at offset 7)\n",
        ),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(cli: Cli, stdin: bytes, message: str) -> None:
    code, out, err = cli.run(stdin)
    assert (code, out, err) == (2, "", message)
    assert not memories().exists()


def test_a_10_mb_note_is_refused_without_being_read_whole(repo: Path) -> None:
    big = ("# 巨大なログ\n" + "2026-12-01 INFO request served in 12 ms\n" * 260_000).encode("utf-8")
    assert len(big) > 10_000_000
    done = subprocess.run(
        [sys.executable, "-m", "memrecall", "save"],
        input=big,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr == b"Error: the note is over 1 MB; save a shorter note\n"
    assert not memories().exists()


def test_a_note_just_under_the_limit_is_saved(cli: Cli) -> None:
    head = "# 長いメモ\n"
    body = head + "x" * (1_000_000 - len(head.encode()))
    assert len(body.encode("utf-8")) == 1_000_000
    result = cli.json(body)
    assert Path(result["path"]).read_text(encoding="utf-8").endswith("x" * 1000 + "\n")


def _read_only_memories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A memories folder that cannot be written: chmod for a user, a read-only tmpfs for root."""
    folder = tmp_path / "ro-memories"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
    elif (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(folder)],
            capture_output=True,
            check=False,
        ).returncode
        != 0
    ):
        pytest.skip("root ignores folder permissions, and no read-only tmpfs can be mounted here")
    monkeypatch.setenv("MEMRECALL_MEMORIES", str(folder))
    return folder


def test_a_read_only_memories_folder_is_one_line_and_leaves_nothing(
    cli: Cli,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = _read_only_memories(tmp_path, monkeypatch)
    try:
        code, out, err = cli.run(NOTE)
        assert code == 1 and out == "" and err.count("\n") == 1
        assert err.startswith(f"Error: cannot write in {folder / 'shop'}: ")
        assert list(folder.iterdir()) == []
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(folder)], check=False)
        else:
            folder.chmod(0o755)


def test_a_write_that_fails_midway_leaves_no_temp_file_and_no_folder(
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import errno

    cli.json("# first\nkept\n")
    before = files_under(memories())

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    code, out, err = cli.run(NOTE, "--project", "fresh")
    assert code == 1 and out == ""
    assert err == f"Error: cannot write in {memories() / 'fresh'}: No space left on device\n"
    assert files_under(memories()) == before
    assert sorted(p.name for p in memories().iterdir()) == ["shop"]


def test_a_terminal_on_stdin_is_a_usage_error(
    cli: Cli,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    assert main(["save"]) == 2
    assert capsys.readouterr().err.startswith("Error: pipe the note on stdin")
