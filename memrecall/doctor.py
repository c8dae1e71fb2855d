"""`memrecall doctor`: one list of checks, each ok / warn / fail with a fix.

Every check catches its own problems: one broken piece must never hide the others, and a
doctor that crashes is no help. Tokenizer start-up is measured in a fresh interpreter
because that is what the hook pays on every prompt (an import already cached in this
process would read as free).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from .config import Settings

OK, WARN, FAIL = "ok", "warn", "fail"
TRANSCRIPT_CLEANUP_DAYS = 30
BACKLOG_WARN_DAYS = 14
BACKLOG_FAIL_DAYS = 25
SIZE_WARN_BYTES = 200 * 1024 * 1024
SLOW_START_MS = 500.0
HOOK_PROBE = json.dumps(
    {"session_id": "memrecall-doctor", "prompt": "ok", "hook_event_name": "UserPromptSubmit"}
)


@dataclass
class Check:
    name: str
    status: str
    detail: str
    fix: str = ""
    ms: float = 0.0

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ms"] = round(self.ms, 1)
        return data


def _timed(func: Callable[[], list[Check]], name: str) -> list[Check]:
    started = time.perf_counter()
    try:
        checks = func()
    except Exception as exc:  # a doctor must report, not crash
        checks = [Check(name, FAIL, f"check crashed: {exc.__class__.__name__}: {exc}"[:300])]
    elapsed = (time.perf_counter() - started) * 1000
    for check in checks:
        if not check.ms:
            check.ms = elapsed / max(1, len(checks))
    return checks


def _run(
    argv: list[str] | str, timeout: float = 15, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        check=False,
        **kwargs,
    )


def _run_python(args: list[str], timeout: float, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """This interpreter in an empty folder with -P: `python -c` would otherwise import from
    the current folder, and a cloned repository can hold a `memrecall/` package of its own."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memrecall-doctor-") as empty:
        return _run([sys.executable, "-P", *args], timeout=timeout, cwd=empty, **kwargs)


# --- the checks -------------------------------------------------------------------------


def _recall_probe(settings: Settings) -> None:
    """Build what the hook builds from these settings: every store, a search, the rendered
    context. Raises what would turn recall off (the hook logs it and stays silent)."""
    from .keywords import Keyword
    from .recall import render_context
    from .resources import template
    from .search import Hit, open_stores, search

    keywords = [Keyword("memrecall-doctor-probe", "identifier", "", "regex")]
    # Stores passed in: the plain scan, no index refresh started in the background.
    search(
        keywords, settings, stores=open_stores(settings), deadline=time.monotonic() + 10, limit=1
    )
    hit = Hit(
        store="summaries",
        ref="probe",
        path=Path("2026/11/2026-11-30-abcdef12.md"),
        title="決済タイムアウト",
        date=settings.now,
        score=1.0,
        matched=["決済"],
        line=1,
        snippet="",
        lines=[(1, "PAY-1234 の決済タイムアウトを 5 秒にした。")],
    )
    if render_context([hit], settings.recall.budget_chars, template("context.md")) is None:
        raise ValueError(
            f"recall.budget_chars = {settings.recall.budget_chars} "
            "cannot hold the context and one memory"
        )


def check_config(settings: Settings) -> list[Check]:
    where = settings.config_path
    present = bool(where and where.is_file())
    try:
        _recall_probe(settings)
    except Exception as exc:  # whatever it is, the hook would hit it on every prompt
        return [
            Check(
                "config",
                FAIL,
                f"these settings break recall: {exc.__class__.__name__}: {exc}"[:400],
                f"fix {where} (or the MEMRECALL_* variables)",
            )
        ]
    if settings.warnings:
        return [Check("config", WARN, "; ".join(settings.warnings)[:400], f"fix {where}")]
    return [
        Check(
            "config",
            OK,
            f"{where} ({'read' if present else 'not present, defaults'}); home {settings.home}",
        )
    ]


HOME_PROBE_BYTES = 64 * 1024
HOME_LOW_BYTES = 50 * 1024 * 1024


def check_home(settings: Settings) -> list[Check]:
    """The hook writes its log and session state under MEMRECALL_HOME on every prompt; a
    read-only or full home loses both silently. Proven by writing, not by permission bits
    (root ignores those, and a full disk has the right bits)."""
    home = settings.home
    fix = "make MEMRECALL_HOME a writable folder with free space"
    try:
        home.mkdir(parents=True, exist_ok=True)  # what the first hook run would do
        probe = home / f".memrecall-doctor-{os.getpid()}-{os.urandom(4).hex()}.tmp"
        fd = os.open(
            probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600
        )
        try:
            try:
                # Real bytes, synced: a full disk often still lets an empty file be created.
                data = memoryview(b"\0" * HOME_PROBE_BYTES)
                while data:
                    data = data[os.write(fd, data) :]
                os.fsync(fd)
            finally:
                os.close(fd)
        finally:
            try:
                os.unlink(probe)
            except FileNotFoundError:
                pass
        free = shutil.disk_usage(home).free
    except OSError as exc:
        return [Check("home", FAIL, f"cannot write in {home}: {exc.strerror or exc}", fix)]
    if free < HOME_LOW_BYTES:
        status = FAIL if free < HOME_PROBE_BYTES * 16 else WARN
        return [Check("home", status, f"{home}: only {_human(free)} free", fix)]
    return [Check("home", OK, f"{home}: writable, {_human(free)} free")]


def check_rg() -> list[Check]:
    from .grep import find_rg

    rg = find_rg()
    if rg is None:
        return [
            Check(
                "ripgrep",
                WARN,
                "rg not found: recall falls back to a 2–8× slower Python scan",
                "install the ripgrep package into memrecall's environment "
                "(pip install 'ripgrep<15') or rg itself",
            )
        ]
    done = _run([rg, "--version"], timeout=10)
    version = (done.stdout.splitlines() or ["?"])[0]
    if done.returncode != 0:
        return [
            Check(
                "ripgrep", FAIL, f"{rg} does not run (exit {done.returncode})", "reinstall ripgrep"
            )
        ]
    return [Check("ripgrep", OK, f"{version} ({rg})")]


_TOKENIZER_PROBE = """
import json, sys, time
started = time.perf_counter()
from memrecall.tokenizers import BACKENDS
try:
    analyzer = BACKENDS[sys.argv[1]]()
    analyzer.analyze("決済APIのタイムアウトを調べる")
except Exception as exc:
    print(json.dumps({"error": str(exc)[:300]}))
else:
    print(json.dumps({"ms": (time.perf_counter() - started) * 1000}))
"""


def check_tokenizers(settings: Settings) -> list[Check]:
    from .tokenizers import AUTO_ORDER

    configured = settings.tokenizer
    checks: list[Check] = []
    chosen_for_auto = None
    for name in AUTO_ORDER:
        label = f"tokenizer {name}"
        started = time.perf_counter()
        try:
            done = _run_python(["-c", _TOKENIZER_PROBE, name], timeout=60)
            result = (
                json.loads(done.stdout.strip().splitlines()[-1])
                if done.stdout.strip()
                else {"error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
            )
        except (subprocess.TimeoutExpired, ValueError, OSError) as exc:
            result = {"error": f"{exc.__class__.__name__}: {exc}"}
        wall = (time.perf_counter() - started) * 1000
        wanted = configured == name
        if "error" in result:
            status = FAIL if wanted else WARN
            checks.append(
                Check(
                    label,
                    status,
                    f"unavailable: {result['error']}",
                    f"pip install the {name} extras, or set tokenizer to another backend",
                    wall,
                )
            )
            continue
        if chosen_for_auto is None:
            chosen_for_auto = name
        ms = float(result["ms"])
        role = (
            " (configured)"
            if wanted
            else (" (auto picks this)" if configured == "auto" and chosen_for_auto == name else "")
        )
        status = WARN if ms > SLOW_START_MS and (wanted or role) else OK
        fix = (
            "the hook pays this on every prompt; a warm page cache or another backend is faster"
            if status == WARN
            else ""
        )
        checks.append(Check(label, status, f"import + first prompt {ms:.0f} ms{role}", fix, wall))
    if configured.startswith("command:"):
        program = configured[len("command:") :].strip().split()[:1]
        found = bool(program) and (shutil.which(program[0]) or Path(program[0]).is_file())
        checks.append(
            Check(
                "tokenizer command",
                OK if found else FAIL,
                f"{configured}" + ("" if found else ": program not found"),
                "" if found else "fix the tokenizer setting",
            )
        )
    return checks


def _count_md(root: Path) -> int:
    from .walk import walk_files

    # The notes search reads, counted as it walks them.
    return sum(1 for _ in walk_files(root))


def check_stores(settings: Settings) -> list[Check]:
    from .prune import iter_summary_files, summary_info
    from .stores.beads import BeadsStore

    checks: list[Check] = []
    for root in settings.obsidian:
        started = time.perf_counter()
        if not root.is_dir():
            checks.append(
                Check(
                    "store obsidian",
                    FAIL,
                    f"{root} is not a folder",
                    "fix MEMRECALL_OBSIDIAN / obsidian in config.toml",
                )
            )
            continue
        count = _count_md(root)
        status = OK if count else WARN
        checks.append(
            Check(
                "store obsidian",
                status,
                f"{root}: {count} notes",
                "" if count else "the vault has no .md notes",
                (time.perf_counter() - started) * 1000,
            )
        )
    for location in settings.beads:
        started = time.perf_counter()
        store = BeadsStore([location])
        if not store.files:
            checks.append(
                Check(
                    "store beads",
                    FAIL,
                    f"no issues.jsonl found at {location}",
                    "point MEMRECALL_BEADS at a project root, its .beads/ folder "
                    "or the .jsonl file",
                )
            )
            continue
        names = ", ".join(str(p) for p in store.files)
        checks.append(
            Check(
                "store beads",
                OK,
                f"{names}: {store.doc_count()} lines",
                ms=(time.perf_counter() - started) * 1000,
            )
        )
    if not settings.obsidian and not settings.beads:
        checks.append(
            Check(
                "stores",
                WARN,
                "no vault and no beads file configured: only summaries are searched",
                "set MEMRECALL_OBSIDIAN / MEMRECALL_BEADS (or obsidian / beads in config.toml)",
            )
        )
    started = time.perf_counter()
    root = settings.summaries
    if not root.is_dir():
        checks.append(
            Check("store summaries", WARN, f"{root} does not exist yet", "run memrecall summarize")
        )
    else:
        cutoff = settings.now.timestamp() - settings.retention_days * 86400
        infos = [
            i for i in (summary_info(p, root) for p in iter_summary_files(root)) if i is not None
        ]
        fresh = sum(1 for i in infos if i.date.timestamp() >= cutoff)
        status = OK if infos else WARN
        window = (
            f"within {settings.retention_days} days"
            if settings.retention_days < 36500
            else "kept (no retention limit)"
        )
        checks.append(
            Check(
                "store summaries",
                status,
                f"{root}: {len(infos)} summaries, {fresh} {window}",
                "" if infos else "run memrecall summarize",
                (time.perf_counter() - started) * 1000,
            )
        )
    return checks


def _settings_files(project: bool) -> list[tuple[str, Path]]:
    """The user's settings; a project's only when asked: a cloned repository chooses what
    its `.claude/` holds, and doctor must not even read it uninvited."""
    from .install import claude_dir

    files = [("user", claude_dir() / "settings.json")]
    if project:
        cwd = Path.cwd()
        files += [
            ("project", cwd / ".claude" / "settings.json"),
            ("local", cwd / ".claude" / "settings.local.json"),
        ]
    return files


def _resolve_program(program: str) -> Path | None:
    """Where a program named in a hook command lives, found without running anything."""
    expanded = Path(program)
    if expanded.is_absolute() or "/" in program or os.sep in program:
        return expanded if expanded.exists() else None
    found = shutil.which(program)
    return Path(found) if found else None


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _own_entry_points() -> list[Path]:
    """Files that are this very installation: the console script pip put beside this
    interpreter. Not PATH: PATH may lead anywhere, a project folder included."""
    import sysconfig

    name = "memrecall.exe" if sys.platform == "win32" else "memrecall"
    candidates = [Path(sysconfig.get_path("scripts")) / name, Path(sys.executable).parent / name]
    return [c for c in candidates if c.is_file()]


def _own_probe_argv(argv: list[str]) -> list[str] | None:
    """A fixed argv that runs this installation's hook, when the configured command names
    this installation; None when it names anything else (that is never run)."""
    program = _resolve_program(argv[0])
    if program is None:
        return None
    if len(argv) == 2:
        for own in _own_entry_points():
            if _same_file(program, own):
                return [str(own), "recall"]
        return None
    if _same_file(program, Path(sys.executable)):
        # -P: the current folder (a project's, maybe holding its own `memrecall/`) is not
        # put on sys.path.
        return [sys.executable, "-P", "-m", "memrecall", "recall"]
    return None


def _show(command: str) -> str:
    # repr escapes terminal controls and bidi marks a settings file may hold.
    text = repr(command)
    return text if len(text) <= 160 else text[:157] + "…"


def _looks_like_memrecall_script(path: Path) -> bool:
    """Read, never run: a pip console script for memrecall imports it in its first lines."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return b"from memrecall" in head or b"import memrecall" in head


def _check_handler(scope: str, path: Path, handler: dict[str, Any]) -> Check:
    from .install import hook_argv

    label = f"hook ({scope})"
    command = str(handler.get("command"))
    argv = hook_argv(command)
    if argv is None:
        return Check(
            label,
            WARN,
            f"{path}: foreign command {_show(command)} is not plainly memrecall; not run",
            "doctor never runs configured commands; check what it runs yourself",
        )
    program = _resolve_program(argv[0])
    if program is None:
        return Check(
            label,
            FAIL,
            f"{path}: {_show(command)} points at a missing program",
            "run memrecall init again (it rewrites the path)",
        )
    if not (program.is_file() and os.access(program, os.X_OK)):
        return Check(
            label,
            FAIL,
            f"{path}: {_show(command)}: {program} is not an executable file",
            "run memrecall init again (it rewrites the path)",
        )
    probe = _own_probe_argv(argv)
    if probe is None:
        known = len(argv) == 2 and _looks_like_memrecall_script(program)
        what = "another memrecall installation" if known else "not this memrecall"
        return Check(
            label,
            WARN,
            f"{path}: {_show(command)} runs {program}, {what}; not run",
            "run that installation's own doctor, or memrecall init to point the hook here",
        )
    timeout = handler.get("timeout")
    started = time.perf_counter()
    try:
        import tempfile

        # Run from an empty folder: nothing of the folder doctor was started in is involved.
        with tempfile.TemporaryDirectory(prefix="memrecall-doctor-") as empty:
            # MEMRECALL_INTERNAL makes the hook exit at once: this measures start-up
            # without writing a recall log entry or touching session state.
            done = _run(
                probe,
                timeout=30,
                input=HOOK_PROBE,
                cwd=empty,
                env={**os.environ, "MEMRECALL_INTERNAL": "1"},
            )
        code, stdout = done.returncode, done.stdout
    except subprocess.TimeoutExpired:
        code, stdout = -1, ""
    ms = (time.perf_counter() - started) * 1000
    if code != 0 or stdout.strip():
        return Check(
            label,
            FAIL,
            f"{program} recall exited {code} (stdout {len(stdout)} chars)",
            "run memrecall recall by hand to see the error; memrecall init rewrites the hook",
            ms,
        )
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool):
        return Check(
            label,
            WARN,
            f"{path}: no timeout (Claude Code waits up to 30 s)",
            "memrecall init sets timeout: 10",
            ms,
        )
    return Check(
        label,
        OK,
        f"{path}: {_show(command)[1:-1]} (timeout {timeout} s), this installation, "
        f"starts in {ms:.0f} ms",
        ms=ms,
    )


def check_hook(project: bool = False) -> list[Check]:
    """Find the hook in the settings files and check the program it names. Never runs a
    configured command: a settings file is data, and a repository can ship one."""
    from .errors import MemrecallError
    from .install import is_our_command, mentions_memrecall, prompt_handlers, read_settings_file

    checks: list[Check] = []
    found_any = False
    for scope, path in _settings_files(project):
        try:
            text, data = read_settings_file(path)
        except MemrecallError as exc:
            checks.append(
                Check(
                    f"hook ({scope})",
                    FAIL,
                    str(exc),
                    "fix the file; Claude Code ignores a broken one",
                )
            )
            continue
        if text is None:
            continue
        enabled = data.get("enabledPlugins")
        if isinstance(enabled, dict) and any(
            str(k).split("@")[0] == "memrecall" and v for k, v in enabled.items()
        ):
            found_any = True
            checks.append(Check(f"hook ({scope})", OK, f"memrecall plugin enabled in {path}"))
        for handler in prompt_handlers(data):
            command = handler.get("command")
            if not (is_our_command(command) or mentions_memrecall(command)):
                continue
            found_any = True
            checks.append(_check_handler(scope, path, handler))
    if not found_any:
        fix = "run memrecall init (or install the memrecall plugin)"
        local = Path.cwd() / ".claude"
        if not project and any(
            (local / name).exists() for name in ("settings.json", "settings.local.json")
        ):
            fix += "; installed in this project? memrecall doctor --project checks it"
        checks.append(
            Check("hook", FAIL, "the memrecall hook is not in any Claude Code settings file", fix)
        )
    return checks


def _claude_for_summarize(settings: Settings) -> str | None:
    """The claude program the configured summarize backend runs, or None when it runs none
    (`extractive`; a `command` of another program)."""
    import shlex

    summarize = settings.summarize
    if summarize.backend == "claude":
        return summarize.claude_command
    if summarize.backend == "command":
        try:
            words = shlex.split(summarize.command, posix=os.name != "nt")
        except ValueError:
            return None
        if words and Path(words[0]).stem.lower() == "claude":
            return words[0]
    return None


def check_claude(settings: Settings) -> list[Check]:
    """The claude CLI matters only to a summarize backend that runs it: missing it fails
    then, and is merely noted otherwise (recall never needs it)."""
    backend = settings.summarize.backend
    program = _claude_for_summarize(settings)
    if program is None:
        found = shutil.which(settings.summarize.claude_command)
        where = f"found at {found}" if found else "not on PATH"
        detail = (
            f"not needed: the {backend} summarize backend does not run it "
            f"({settings.summarize.claude_command!r} {where})"
        )
        return [Check("claude CLI", OK, detail)]
    from .errors import BackendUnavailable
    from .summarize.backends import ensure_available, get_backend

    try:
        # The backend's own test: doctor and summarize agree on whether it can start.
        ensure_available(get_backend(backend, settings))
    except BackendUnavailable as exc:
        return [
            Check(
                "claude CLI",
                FAIL,
                f"{exc}; the {backend} summarize backend runs it",
                "install Claude Code, set [summarize] claude_command to its path, or summarize "
                'without it: [summarize] backend = "extractive" in config.toml',
            )
        ]
    found = shutil.which(program) or program
    try:
        done = _run([found, "--version"], timeout=20, env={**os.environ, "MEMRECALL_INTERNAL": "1"})
        version = (done.stdout.strip().splitlines() or ["version unknown"])[0]
    except (subprocess.TimeoutExpired, OSError) as exc:
        return [
            Check(
                "claude CLI",
                WARN,
                f"{found} --version failed: {exc.__class__.__name__}",
                "check the install",
            )
        ]
    return [Check("claude CLI", OK, f"{version} ({found})")]


def _age_days(text: Any, now: datetime) -> float | None:
    from .stores.base import parse_date

    moment = parse_date(text) if text else None
    return None if moment is None else (now - moment).total_seconds() / 86400


def check_summarize(settings: Settings) -> list[Check]:
    from .stats import read_run_record

    record = read_run_record(settings)
    if record is None:
        return [
            Check(
                "summarize",
                WARN,
                "never run",
                "run memrecall summarize, and schedule it daily: memrecall init --schedule",
            )
        ]
    checks: list[Check] = []
    finished = record.get("finished")
    age = _age_days(finished, settings.now)
    listed = record.get("failed")
    failed = listed if isinstance(listed, list) else []
    detail = (
        f"last run {finished or 'unfinished'}: {record.get('summarized', 0)} summarized, "
        f"{sum(v for v in (record.get('skipped') or {}).values() if isinstance(v, int))} "
        f"skipped, {len(failed)} failed"
    )
    if finished is None or age is None:
        checks.append(
            Check(
                "summarize",
                WARN,
                detail + " (the last run did not finish)",
                "run memrecall summarize",
            )
        )
    elif age > 3:
        checks.append(
            Check(
                "summarize",
                WARN,
                detail + f" ({age:.0f} days ago)",
                "schedule it: memrecall init --schedule",
            )
        )
    elif failed:
        checks.append(
            Check("summarize", WARN, detail, "memrecall summarize --dry-run shows why; see stats")
        )
    else:
        checks.append(Check("summarize", OK, detail))
    pending = record.get("pending")
    oldest = _age_days(record.get("oldest_unsummarized"), settings.now)
    if oldest is None:
        checks.append(Check("backlog", OK, f"nothing waiting (pending {pending or 0})"))
    else:
        left = TRANSCRIPT_CLEANUP_DAYS - oldest
        detail = (
            f"{pending} sessions pending; oldest {oldest:.0f} days old, "
            f"Claude Code deletes it in ~{max(0, left):.0f} days"
        )
        if oldest >= BACKLOG_FAIL_DAYS:
            checks.append(
                Check(
                    "backlog",
                    FAIL,
                    detail,
                    "run memrecall summarize now (raise --limit); transcripts go after 30 days",
                )
            )
        elif oldest >= BACKLOG_WARN_DAYS:
            checks.append(
                Check(
                    "backlog",
                    WARN,
                    detail,
                    "run memrecall summarize more often or with a higher --limit",
                )
            )
        else:
            checks.append(Check("backlog", OK, detail))
    return checks


def _size(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
    return total


def _human(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover


def check_sizes(settings: Settings) -> list[Check]:
    logs, state = _size(settings.logs_dir), _size(settings.state_dir)
    summaries = _size(settings.summaries) if settings.summaries.is_dir() else 0
    detail = f"logs {_human(logs)}, state {_human(state)}, summaries {_human(summaries)}"
    if logs + state > SIZE_WARN_BYTES:
        return [
            Check(
                "disk use", WARN, detail, "memrecall prune trims old recall logs and session state"
            )
        ]
    return [Check("disk use", OK, detail)]


def check_index(settings: Settings) -> list[Check]:
    """The index is a cache: nothing here can fail recall (ripgrep answers instead), but a
    broken or missing index makes every prompt slower, so it is a warning with the fix."""
    from .index import configured_roots, index_home
    from .indexer import status, verify_checksums
    from .tokenizers import resolve

    if not settings.index.enabled:
        return [
            Check(
                "index",
                OK,
                "disabled ([index] enabled = false or MEMRECALL_INDEX=off): ripgrep answers",
            )
        ]
    state = status(settings)
    if not state.exists:
        return [
            Check(
                "index",
                WARN,
                "no index yet: prompts use ripgrep until one is built",
                "memrecall index build (the first prompt also starts one in the background)",
            )
        ]
    rebuild = "memrecall index rebuild"
    if state.problem:
        return [Check("index", WARN, state.problem, rebuild)]
    assert state.path is not None
    damaged = verify_checksums(state.path)
    if damaged:
        return [
            Check(
                "index",
                WARN,
                f"index file {damaged} is damaged (checksum): prompts use ripgrep",
                rebuild,
            )
        ]
    analyser = resolve(settings.tokenizer)[0].name
    if state.backend != analyser:
        return [
            Check(
                "index",
                WARN,
                f"built with the {state.backend} analyser, prompts use {analyser}",
                rebuild,
            )
        ]
    import json

    meta = json.loads((state.path / "memrecall.json").read_text(encoding="utf-8"))
    indexed = {tuple(r) for r in meta.get("roots", []) if isinstance(r, list)}
    missing = [
        str(r.path) for r in configured_roots(settings) if (r.store, str(r.path)) not in indexed
    ]
    detail = (
        f"{state.documents} documents, {state.bytes / 1e6:.1f} MB, "
        f"refreshed {state.age_seconds or 0:.0f} s ago"
    )
    checks = [Check("index", OK, detail)]
    if missing:
        checks = [
            Check(
                "index",
                WARN,
                f"{detail}; not indexed yet: {', '.join(missing)[:300]}",
                "memrecall index refresh",
            )
        ]
    log = index_home(settings) / "refresh.log"
    try:
        tail = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-1:]
    except OSError:
        tail = []
    if tail and log.stat().st_mtime > time.time() - 7 * 86400:
        checks.append(
            Check(
                "index refresh",
                WARN,
                f"the background refresh reported: {tail[0][:300]}",
                f"run memrecall index refresh to see the error; {log} keeps it",
            )
        )
    return checks


def check_team(settings: Settings) -> list[Check]:
    """Team memory: the clone is there and the last sync (state/team-sync.json) went through."""
    from .team import read_state

    if not settings.team.repo:
        return [Check("team", OK, "not set up (memrecall team init REPO shares memories)")]
    if not (settings.team_dir / ".git").is_dir():
        return [
            Check(
                "team",
                FAIL,
                f"no team clone at {settings.team_dir}",
                f"memrecall team init {settings.team.repo}",
            )
        ]
    last = read_state(settings)
    if not last:
        return [Check("team", WARN, f"{settings.team.repo}: never synced", "memrecall team sync")]
    when = last.get("finished") or last.get("started")
    if not last.get("ok"):
        good = f"; last good sync {last['last_ok']}" if last.get("last_ok") else ""
        return [
            Check(
                "team",
                WARN,
                f"sync at {when} failed: {last.get('problem')}{good}"[:400],
                "memrecall team sync (see logs/team-sync.log); the next sync retries",
            )
        ]
    age = _age_days(when, settings.now)
    where = f"pull request {last['pr']}" if last.get("pr") else f"branch {last.get('branch')}"
    detail = f"{last.get('person')} → {where}; last sync {when}"
    if age is not None and age > 7:
        return [
            Check(
                "team",
                WARN,
                f"{detail} ({age:.0f} days ago)",
                'memrecall team sync --background as a Stop hook (README "Team memory")',
            )
        ]
    return [Check("team", OK, detail)]


def run_checks(settings: Settings, project: bool = False) -> list[Check]:
    checks: list[Check] = []
    checks += _timed(lambda: check_config(settings), "config")
    checks += _timed(lambda: check_home(settings), "home")
    checks += _timed(check_rg, "ripgrep")
    checks += _timed(lambda: check_tokenizers(settings), "tokenizers")
    checks += _timed(lambda: check_stores(settings), "stores")
    checks += _timed(lambda: check_index(settings), "index")
    checks += _timed(lambda: check_hook(project), "hook")
    checks += _timed(lambda: check_claude(settings), "claude CLI")
    checks += _timed(lambda: check_summarize(settings), "summarize")
    checks += _timed(lambda: check_sizes(settings), "disk use")
    checks += _timed(lambda: check_team(settings), "team")
    return checks


def failed(checks: list[Check]) -> bool:
    return any(c.status == FAIL for c in checks)
