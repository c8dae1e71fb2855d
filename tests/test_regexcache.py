"""The compiled-pattern cache (memrecall/regexcache.py): a pattern read back from the file
matches exactly as `re` compiles it, a damaged or foreign file is a miss and never an error,
and the hook's second process compiles nothing."""

from __future__ import annotations

import ast
import json
import marshal
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memrecall import regexcache

REPO = Path(__file__).resolve().parent.parent

SAMPLES = [
    "",
    "PAY-1234 のあとタイムアウトする件",
    "Timeouts in sync_inventory_batch, again",
    "ſtatus Kelvin K and ascii k",
    "line one\nline two\n  indented: value",
    "在庫同期バッチ",
    "user@example.com https://example.com/a?b=c",
]
# Patterns of the shapes memrecall keeps: CJK classes, case-blind word lists, named groups,
# lookarounds, multi-line anchors, and a bytes pattern.
PATTERNS: list[tuple[str | bytes, int]] = [
    (r"[\u3400-\u9fff\u30a1-\u30fa\u30fc]+", 0),
    (r"\b(?:timeout|sync|again)s?\b", re.IGNORECASE),
    (r"(?P<key>[A-Z]+)-(?P<number>\d+)", 0),
    (r"(?<![A-Za-z0-9])k(?![A-Za-z0-9_])", re.IGNORECASE),
    (r"^\s+(\w+):", re.MULTILINE),
    (rb"\"id\":\s*\"([^\"]+)\"", 0),
]


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has not read the file yet."""
    monkeypatch.setattr(regexcache, "_loaded", None)
    monkeypatch.setattr(regexcache, "_used", {})
    monkeypatch.setattr(regexcache, "hits", 0)
    monkeypatch.setattr(regexcache, "misses", 0)


def _behaviour(pattern: re.Pattern, samples: list) -> list:
    return [
        (pattern.search(s) and pattern.search(s).groupdict(), pattern.findall(s)) for s in samples
    ]


def _samples_for(pattern: str | bytes) -> list:
    return [s.encode() for s in SAMPLES] if isinstance(pattern, bytes) else SAMPLES


def _restart(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regexcache, "_loaded", None)
    monkeypatch.setattr(regexcache, "_used", {})


@pytest.mark.parametrize("pattern, flags", PATTERNS)
def test_a_pattern_read_back_matches_like_re(
    pattern: str | bytes, flags: int, fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = regexcache.compile(pattern, flags)
    assert regexcache.misses == 1
    regexcache.save()
    assert regexcache.cache_path().is_file()
    _restart(monkeypatch)
    again = regexcache.compile(pattern, flags)
    assert regexcache.hits == 1, "the second process should take it from the file"
    plain = re.compile(pattern, flags)
    for compiled in (first, again):
        assert (compiled.pattern, compiled.flags, compiled.groups, compiled.groupindex) == (
            plain.pattern,
            plain.flags,
            plain.groups,
            plain.groupindex,
        )
        samples = _samples_for(pattern)
        assert _behaviour(compiled, samples) == _behaviour(plain, samples)


def test_an_edited_pattern_is_a_miss(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    regexcache.compile(r"timeout", re.IGNORECASE)
    regexcache.save()
    _restart(monkeypatch)
    edited = regexcache.compile(r"timeouts?", re.IGNORECASE)
    other_flags = regexcache.compile(r"timeout", 0)
    assert regexcache.hits == 0
    assert edited.search("TIMEOUTS") and not other_flags.search("TIMEOUT")


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"\x00\xffnot marshal at all",
        marshal.dumps(["a list", "not a pair"]),
        marshal.dumps(("another Python 2.7|17|4", {})),
    ],
    ids=["empty", "garbage", "wrong-shape", "other-python"],
)
def test_a_damaged_or_foreign_file_is_a_miss(
    damage: bytes, fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = regexcache.cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(damage)
    compiled = regexcache.compile(r"(?P<id>bd-[0-9a-z]+)", 0)
    assert regexcache.hits == 0 and regexcache.misses == 1
    assert compiled.search("see bd-k2p").group("id") == "bd-k2p"
    regexcache.save()
    _restart(monkeypatch)
    regexcache.compile(r"(?P<id>bd-[0-9a-z]+)", 0)
    assert regexcache.hits == 1, "the save replaced the damaged file with a good one"


@pytest.mark.parametrize(
    "tamper",
    [
        lambda code: code[: len(code) // 2],
        lambda code: [99999] + code[1:],
        lambda code: [],
    ],
    ids=["truncated", "bad-opcode", "empty"],
)
def test_a_tampered_program_is_refused_not_run(
    tamper, fresh: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine validates every program it is handed: a bad one is a miss, not a crash."""
    pattern = r"(?<![A-Za-z])sync(?:ed|ing)?\b"
    regexcache.compile(pattern, re.IGNORECASE)
    regexcache.save()
    path = regexcache.cache_path()
    stamp, entries = marshal.loads(path.read_bytes())
    key = (pattern, int(re.IGNORECASE))
    flags, code, groups, groupindex, indexgroup = entries[key]
    entries[key] = (flags, tamper(code), groups, groupindex, indexgroup)
    path.write_bytes(marshal.dumps((stamp, entries)))
    _restart(monkeypatch)
    compiled = regexcache.compile(pattern, re.IGNORECASE)
    assert regexcache.hits == 0
    assert compiled.search("Synced at 5") and not compiled.search("resync")


def test_an_unwritable_home_is_no_error(
    fresh: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the home should be")
    monkeypatch.setenv("MEMRECALL_HOME", str(blocker))
    assert regexcache.compile(r"ok").search("ok")
    regexcache.save()  # nothing to raise: a cache is optional
    assert blocker.read_text() == "a file where the home should be"


def test_the_file_stays_bounded(fresh: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regexcache, "MAX_ENTRIES", 5)
    for n in range(5):
        regexcache.compile(f"old-{n}")
    regexcache.save()
    _restart(monkeypatch)
    for n in range(3):
        regexcache.compile(f"new-{n}")
    regexcache.save()
    _, entries = marshal.loads(regexcache.cache_path().read_bytes())
    assert {p for p, _ in entries} == {"new-0", "new-1", "new-2"}


_PROBE = (
    "import memrecall.hook, memrecall.recall, memrecall.search, memrecall.gate\n"
    "import memrecall.tokenize, memrecall.index\n"
    "from memrecall import regexcache\n"
    "import json; print(json.dumps([regexcache.hits, regexcache.misses]))\n"
)


def _hook_env(tmp_path: Path) -> dict[str, str]:
    notes = tmp_path / "vault"
    notes.mkdir(exist_ok=True)
    (notes / "在庫同期バッチのタイムアウト.md").write_text(
        "# 在庫同期バッチのタイムアウト\n\nsync_inventory_batch が PAY-1234 のあと 30 秒で"
        "タイムアウトした。バッチサイズを 500 に下げて解決。\n",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMRECALL_")}
    return env | {
        "MEMRECALL_HOME": str(tmp_path / "home"),
        "MEMRECALL_OBSIDIAN": str(notes),
        "MEMRECALL_INDEX": "off",
        "MEMRECALL_DEADLINE_MS": "8000",
    }


def _hook(env: dict[str, str], stdin: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "memrecall", "recall"],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stderr == ""
    return result.stdout


PROMPT = "前にやった sync_inventory_batch のタイムアウト、どう直したんだっけ？"


def _probe(env: dict[str, str]) -> tuple[int, int]:
    run = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
    )
    hits, misses = json.loads(run.stdout)
    return hits, misses


@pytest.mark.parametrize("home", ["MEMRECALL_HOME", "default"])
def test_after_one_prompt_the_hook_modules_compile_nothing(tmp_path: Path, home: str) -> None:
    """Whichever way the home is given: the default one is found while config itself is being
    imported (a first version wrote the file there and never read it back)."""
    env = _hook_env(tmp_path)
    if home == "default":
        del env["MEMRECALL_HOME"]
        data = str(tmp_path / "data")
        env |= {"HOME": data, "XDG_DATA_HOME": data, "LOCALAPPDATA": data}
    hits, misses = _probe(env)
    assert hits == 0 and misses > 20, "a new home has no patterns yet"
    _hook(env, json.dumps({"session_id": "s1", "prompt": PROMPT, "cwd": str(tmp_path)}))
    hits, misses = _probe(env)
    assert misses == 0 and hits > 20


@pytest.mark.parametrize(
    "stdin", ["", "not json at all", '{"prompt": 5}', "\x00\xff" * 50], ids=repr
)
def test_bad_hook_input_writes_no_cache(tmp_path: Path, stdin: str) -> None:
    env = _hook_env(tmp_path)
    assert _hook(env, stdin) == ""
    assert not (tmp_path / "home" / "cache").exists()


def test_a_command_never_writes_the_cache(tmp_path: Path) -> None:
    """Only the hook keeps the patterns: `search`, `tokenize` and failing commands leave the
    home as they found it."""
    env = _hook_env(tmp_path)
    for argv in (["search", "タイムアウト"], ["tokenize", "在庫同期バッチ"], ["search"]):
        subprocess.run(
            [sys.executable, "-m", "memrecall", *argv], env=env, capture_output=True, timeout=120
        )
    assert not (tmp_path / "home" / "cache").exists()


def test_the_hook_answers_the_same_from_the_cache(tmp_path: Path) -> None:
    """Two hook runs, the second on cached patterns: the same context for the same prompt."""
    env = _hook_env(tmp_path)
    outputs = [
        _hook(env, json.dumps({"session_id": f"s{n}", "prompt": PROMPT, "cwd": str(tmp_path)}))
        for n in range(2)
    ]
    assert list((tmp_path / "home" / "cache").glob("regex-*.marshal"))
    # A run the busy machine pushed past its deadline stays quiet; any answer names the note.
    fired = [out for out in outputs if out]
    assert all("在庫同期バッチのタイムアウト" in out for out in fired)
    if len(fired) == 2:
        assert outputs[0] == outputs[1]


def _module_level_re_compiles(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in tree.body:
        value = getattr(node, "value", None)
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name)
            and (value.func.value.id, value.func.attr) == ("re", "compile")
        ):
            lines.append(node.lineno)
    return lines


def _hook_modules() -> list[Path]:
    """The memrecall modules a `memrecall recall` process imports."""
    probe = "import sys, memrecall.hook, memrecall.recall, memrecall.search, memrecall.index\n"
    probe += "import memrecall.tokenizers.regex, memrecall.tokenizers.mecab\n"
    probe += "print('\\n'.join(m.__file__ for n, m in sys.modules.items()"
    probe += " if n.startswith('memrecall') and getattr(m, '__file__', None)))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMRECALL_")}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    return [Path(line) for line in out.stdout.splitlines()]


def test_hook_modules_compile_their_constant_patterns_through_the_cache() -> None:
    """A new module-level `re.compile` on the hook's path would be compiled again on every
    prompt: it belongs in regexcache.compile."""
    offenders = {
        str(path.relative_to(REPO)): lines
        for path in _hook_modules()
        if path.name != "config.py"  # regexcache reads the home from it: plain `re` there
        and (lines := _module_level_re_compiles(path))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "word, line, found",
    [
        ("timeout", "Timeouts after PAY-1234", True),
        ("timeout", "在庫同期のtimeoutが続く", True),
        ("fetch", "see fetchProduct.ts", False),
        ("PAY-12", "PAY-1234 の件", False),
        ("PAY-12", "(PAY-12) の件", True),
        ("api", "rapid deploys", False),
        ("#903", "fixed in GH#903", True),
        ("sync", "SYNCED at 5", True),
        ("sync", "resync at 5", False),
    ],
)
def test_a_keyword_matcher_keeps_its_edges(word: str, line: str, found: bool) -> None:
    """The matchers a prompt's words get (compiled only when a line holds the word, with ASCII
    case folding) find what they did: whole words with English endings, whole ids."""
    from memrecall.search import _ascii_matcher

    matcher = _ascii_matcher(word)
    assert matcher is not None
    assert bool(matcher.search(line)) is found
