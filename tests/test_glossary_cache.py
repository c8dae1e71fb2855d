"""The glossary cache (glossary.py): after one hook, the next process takes the glossary's
folded lines and Japanese phrases from `$MEMRECALL_HOME/cache/` instead of reading and parsing
the files again. An edited glossary, a damaged file or one of another shape is a miss, never an
error, and the answers are the same either way."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path

import pytest
from test_regexcache import PROMPT, _hook, _hook_env

# A fresh process: what it read from the cache, and what the glossary gave it.
_PROBE = """
import json, sys
from memrecall import glossary
from memrecall.config import load_settings
import memrecall.keywords as keywords
read = []
real = keywords.list_file_lines
def counting(paths):
    paths = list(paths)
    read.extend(str(p) for p in paths)
    return real(paths)
keywords.list_file_lines = counting
settings = load_settings()
paths = glossary.glossary_files(settings)
groups = glossary.load_synonyms(paths, ["デーモン", "ストリーム基盤"])
phrases = glossary.japanese_phrases_in(paths, sys.argv[1])
print(json.dumps({
    "read": read,
    "daemon": sorted(groups.get("デーモン", [])),
    "mine": sorted(groups.get("ストリーム基盤", [])),
    "phrases": phrases,
}))
"""
PHRASE_PROMPT = "デプロイ後に起動しない件、前に調べたっけ"


def _probe(env: dict[str, str]) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE, PHRASE_PROMPT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(run.stdout)


def _prompt(env: dict[str, str], session: str) -> str:
    return _hook(env, json.dumps({"session_id": session, "prompt": PROMPT}))


def _cache_files(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "home" / "cache").glob("glossary-*.marshal"))


def test_after_one_prompt_the_glossary_comes_from_the_cache(tmp_path: Path) -> None:
    env = _hook_env(tmp_path)
    before = _probe(env)
    assert any(path.endswith("synonyms.txt") for path in before["read"])
    _prompt(env, "s1")
    assert len(_cache_files(tmp_path)) == 1
    after = _probe(env)
    assert after["read"] == []
    assert {k: v for k, v in after.items() if k != "read"} == {
        k: v for k, v in before.items() if k != "read"
    }
    assert "daemon" in after["daemon"] and "起動しない" in after["phrases"]


def test_an_edited_glossary_is_read_again(tmp_path: Path) -> None:
    env = _hook_env(tmp_path)
    mine = tmp_path / "home" / "synonyms.txt"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("ストリーム基盤, Kafka\n", encoding="utf-8")
    _prompt(env, "s1")
    assert _probe(env)["mine"] == ["Kafka", "ストリーム基盤"]
    # Same size, new content: the mtime alone tells them apart.
    mine.write_text("ストリーム基盤, Kafkb\n", encoding="utf-8")
    probe = _probe(env)
    assert probe["mine"] == ["Kafkb", "ストリーム基盤"]
    assert str(mine) in probe["read"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"garbage, not marshal",
        marshal.dumps(["a list", "not a pair"]),
        marshal.dumps(("stamp", {("x", 1, 2): ([("a", "a")], None)})),
    ],
    ids=["empty", "garbage", "wrong shape", "foreign stamp"],
)
def test_a_damaged_or_foreign_file_is_a_miss(tmp_path: Path, content: bytes) -> None:
    env = _hook_env(tmp_path)
    expected = _probe(env)
    _prompt(env, "s1")
    (cache,) = _cache_files(tmp_path)
    cache.write_bytes(content)
    probe = _probe(env)
    assert probe["read"] and probe["phrases"] == expected["phrases"]
    assert probe["daemon"] == expected["daemon"]


@pytest.mark.parametrize(
    "lines",
    [[("daemon, デーモン", 5)], [("daemon", "daemon", "extra")], "not a list", [None]],
    ids=["an int", "a triple", "a string", "None"],
)
def test_a_tampered_entry_is_read_from_the_file_again(tmp_path: Path, lines: object) -> None:
    """The stamp is right and the entry's key matches, but its lines are not (str, str) pairs:
    the file is read as if there were no cache, and the hook still answers."""
    env = _hook_env(tmp_path)
    expected = _probe(env)
    _prompt(env, "s1")
    (cache,) = _cache_files(tmp_path)
    stamp, entries = marshal.loads(cache.read_bytes())
    entries = {key: (lines, None) for key in entries}
    cache.write_bytes(marshal.dumps((stamp, entries)))
    probe = _probe(env)
    assert probe["read"] and probe["daemon"] == expected["daemon"]
    assert "在庫同期バッチのタイムアウト" in _prompt(env, "s2")


def test_the_hook_answers_the_same_from_the_cache(tmp_path: Path) -> None:
    env = _hook_env(tmp_path)
    outputs = [_prompt(env, f"s{n}") for n in range(2)]
    assert _cache_files(tmp_path)
    # A run the busy machine pushed past its deadline stays quiet; any answer names the note.
    fired = [out for out in outputs if out]
    assert all("在庫同期バッチのタイムアウト" in out for out in fired)
    if len(fired) == 2:
        assert outputs[0] == outputs[1]


@pytest.mark.parametrize("stdin", ["", "not json at all", '{"prompt": 5}'], ids=repr)
def test_bad_hook_input_writes_no_glossary_cache(tmp_path: Path, stdin: str) -> None:
    env = _hook_env(tmp_path)
    assert _hook(env, stdin) == ""
    assert not _cache_files(tmp_path)


def test_commands_never_write_the_glossary_cache(tmp_path: Path) -> None:
    env = _hook_env(tmp_path)
    for argv in (["search", "デーモン"], ["tokenize", "起動しない"]):
        subprocess.run(
            [sys.executable, "-m", "memrecall", *argv], env=env, capture_output=True, timeout=120
        )
    assert not _cache_files(tmp_path)
