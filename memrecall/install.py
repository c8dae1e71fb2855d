"""`memrecall init`: put the recall hook into Claude Code's settings, and the daily jobs
into the platform's scheduler.

settings.json belongs to the user: it is parsed, changed in exactly one place (our handler
under `hooks.UserPromptSubmit`), backed up, and written atomically. A file that is not
valid JSON is refused untouched. "Ours" is recognised by the command (`memrecall … recall`
or `-m memrecall recall`), so re-running init updates a stale path instead of adding a
second hook, and `--uninstall` removes nothing else.
"""

from __future__ import annotations

import difflib
import json
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from .atomic import write_atomic
from .errors import MemrecallError, UsageError

HOOK_EVENT = "UserPromptSubmit"
DEFAULT_TIMEOUT = 10
CRON_MARK = "# memrecall daily"
LAUNCHD_LABEL = "com.memrecall.daily"
WINDOWS_TASKS = (("memrecall-summarize", "summarize", "04:17"), ("memrecall-prune", "prune", "04:47"))
PLATFORMS = ("linux", "macos", "windows")
# Carried into the scheduled job: schedulers do not run the user's shell profile.
CARRIED_ENV = (
    "MEMRECALL_HOME", "MEMRECALL_OBSIDIAN", "MEMRECALL_BEADS", "MEMRECALL_SUMMARIES",
    "MEMRECALL_CLAUDE_PROJECTS", "MEMRECALL_TOKENIZER", "CLAUDE_CONFIG_DIR",
)

_OURS = re.compile(
    r"""(?:^|[\s/\\"'])memrecall(?:\.exe)?["']?\s+recall(?:\s|$)|-m\s+["']?memrecall["']?\s+recall(?:\s|$)""",
    re.IGNORECASE,
)


# --- where things are -------------------------------------------------------------------

def current_platform() -> str:
    if sys.platform == "win32":
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


def claude_dir() -> Path:
    """`~/.claude`, or `$CLAUDE_CONFIG_DIR`, which moves the whole tree."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def settings_path(project: bool, cwd: Path | None = None) -> Path:
    if project:
        return (cwd or Path.cwd()) / ".claude" / "settings.json"
    return claude_dir() / "settings.json"


def memrecall_argv() -> list[str]:
    """An absolute way to run this very installation: Claude Code's hook environment
    rarely has the venv (or pipx's bin folder) on PATH."""
    name = "memrecall.exe" if sys.platform == "win32" else "memrecall"
    script = Path(sysconfig.get_path("scripts")) / name
    if script.is_file():
        return [str(script.absolute())]
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return [str(beside.absolute())]
    found = shutil.which("memrecall")
    if found:
        return [str(Path(found).absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "memrecall"]


def quote(part: str, platform: str | None = None) -> str:
    """Quote for the shell Claude Code (and the scheduler) runs commands with."""
    if (platform or current_platform()) == "windows":
        text = part.replace("\\", "/")
        return f'"{text}"' if re.search(r'[\s&()^%!"]', text) else text
    return shlex.quote(part)


def command_line(argv: list[str], platform: str | None = None) -> str:
    return " ".join(quote(part, platform) for part in argv)


def hook_command(argv: list[str] | None = None) -> str:
    return command_line([*(argv or memrecall_argv()), "recall"])


def is_our_command(command: Any) -> bool:
    return isinstance(command, str) and bool(_OURS.search(command))


def command_program(command: str) -> str | None:
    """The program a shell-form command runs (first word), unquoted."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    return words[0] if words else None


# --- settings.json ----------------------------------------------------------------------

def read_settings_file(path: Path) -> tuple[str | None, dict[str, Any]]:
    """(original text or None if missing, parsed object). Malformed → error, nothing touched."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise MemrecallError(f"cannot read {path}: {exc.strerror or exc}") from None
    text = raw.decode("utf-8-sig", errors="replace")
    if not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MemrecallError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise MemrecallError(f"{path} does not hold a JSON object; nothing was changed")
    return text, data


def _event_groups(data: dict[str, Any], path: Path, create: bool) -> list[Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise MemrecallError(f"{path}: \"hooks\" is not an object; nothing was changed")
    groups = hooks.get(HOOK_EVENT)
    if groups is None:
        if not create:
            return None
        groups = hooks[HOOK_EVENT] = []
    if not isinstance(groups, list):
        raise MemrecallError(f"{path}: \"hooks.{HOOK_EVENT}\" is not a list; nothing was changed")
    return groups


def our_handlers(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every handler of ours under UserPromptSubmit (tolerant: reading never raises)."""
    hooks = data.get("hooks")
    groups = hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None
    found = []
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and is_our_command(handler.get("command")):
                found.append(handler)
    return found


def merge_hook(data: dict[str, Any], command: str, timeout: int, path: Path) -> str:
    """Install or refresh our handler in place. Returns installed | updated | unchanged."""
    groups = _event_groups(data, path, create=True)
    assert groups is not None
    wanted = {"type": "command", "command": command, "timeout": timeout}
    first: dict[str, Any] | None = None
    status = "installed"
    for group in list(groups):
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        dropped = False
        for handler in list(handlers):
            if not (isinstance(handler, dict) and is_our_command(handler.get("command"))):
                continue
            if first is None:
                first = handler
                same = all(handler.get(k) == v for k, v in wanted.items())
                status = "unchanged" if same else "updated"
                handler.update(wanted)  # other fields a user added (statusMessage…) stay
            else:
                handlers.remove(handler)  # a duplicate of ours: one hook is enough
                status, dropped = "updated", True
        if dropped and not handlers:
            groups.remove(group)
    if first is None:
        groups.append({"hooks": [wanted]})
    return status


def remove_hook(data: dict[str, Any], path: Path) -> int:
    """Remove our handlers, and the containers they leave empty. Returns how many went."""
    groups = _event_groups(data, path, create=False)
    if groups is None:
        return 0
    removed = 0
    for group in list(groups):
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            continue
        mine = [h for h in handlers if isinstance(h, dict) and is_our_command(h.get("command"))]
        if not mine:
            continue
        removed += len(mine)
        handlers[:] = [h for h in handlers if not any(h is m for m in mine)]
        if not handlers:
            groups.remove(group)
    if removed:
        if not groups:
            del data["hooks"][HOOK_EVENT]
        if not data["hooks"]:
            del data["hooks"]
    return removed


def dump_settings(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@dataclass
class InitPlan:
    path: Path
    command: str
    timeout: int
    uninstall: bool
    status: str  # installed | updated | unchanged | removed | absent
    old_text: str | None
    new_text: str | None  # None: nothing to write
    removed: int = 0

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = (self.new_text if self.new_text is not None else self.old_text or "").splitlines(keepends=True)
        label = str(self.path)
        return "".join(
            difflib.unified_diff(old, new, fromfile=label if self.old_text is not None else "/dev/null", tofile=label)
        )


def plan_init(path: Path, command: str, timeout: int = DEFAULT_TIMEOUT, uninstall: bool = False) -> InitPlan:
    old_text, data = read_settings_file(path)
    if uninstall:
        removed = remove_hook(data, path)
        status = "removed" if removed else "absent"
        new_text = dump_settings(data) if removed else None
        return InitPlan(path, command, timeout, True, status, old_text, new_text, removed)
    status = merge_hook(data, command, timeout, path)
    new_text = None if status == "unchanged" else dump_settings(data)
    return InitPlan(path, command, timeout, False, status, old_text, new_text)


def _free(path: Path) -> Path:
    if not path.exists():
        return path
    for n in range(1, 1000):
        candidate = path.with_name(f"{path.name}.{n}")
        if not candidate.exists():
            return candidate
    raise MemrecallError(f"too many backups next to {path}")


def apply_init(plan: InitPlan, stamp: datetime | None = None) -> Path | None:
    """Write the new settings (backup first). Returns the backup path, if one was made."""
    if plan.new_text is None:
        return None
    target = plan.path
    # A dotfiles manager's symlink stays a symlink: write through it to the real file.
    if target.is_symlink():
        target = target.resolve()
    backup = None
    mode = None
    if plan.old_text is not None and target.exists():
        moment = stamp or datetime.now()
        backup = _free(target.with_name(f"{target.name}.memrecall-backup-{moment:%Y%m%d-%H%M%S}"))
        try:
            original = target.read_bytes()
            mode = target.stat().st_mode & 0o777
        except OSError as exc:
            raise MemrecallError(f"cannot read {target} for a backup: {exc.strerror or exc}") from None
        write_atomic(backup, original)
    if mode is None:
        # A new file gets the usual permissions, not the temp file's 0600.
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        write_atomic(target, plan.new_text)
        os.chmod(target, mode)
    except OSError as exc:
        raise MemrecallError(f"cannot write {target}: {exc.strerror or exc}") from None
    return backup


# --- the daily schedule -----------------------------------------------------------------

@dataclass
class Schedule:
    platform: str
    text: str  # what to print: a crontab line, a plist, or schtasks commands
    where: str  # human description of where it goes
    cron_line: str = ""
    plist_path: Path | None = None
    plist: bytes = b""
    schtasks: list[list[str]] = field(default_factory=list)


def _carried_env(memrecall_home: Path, claude: str | None) -> dict[str, str]:
    env = {name: os.environ[name] for name in CARRIED_ENV if os.environ.get(name)}
    env.setdefault("MEMRECALL_HOME", str(memrecall_home))
    if claude:
        # summarize runs `claude -p`: the scheduler's PATH is minimal.
        env["PATH"] = os.pathsep.join([str(Path(claude).parent), "/usr/local/bin", "/usr/bin", "/bin"])
    return env


def build_schedule(
    platform: str, memrecall_home: Path, argv: list[str] | None = None, claude: str | None = None
) -> Schedule:
    if platform not in PLATFORMS:
        raise UsageError(f"unknown platform {platform!r}; choose one of {', '.join(PLATFORMS)}")
    argv = argv or memrecall_argv()
    log = memrecall_home / "logs" / "schedule.log"
    env = _carried_env(memrecall_home, claude)
    if platform == "linux":
        prefix = " ".join(f"{k}={quote(v, 'linux')}" for k, v in env.items())
        exe = command_line(argv, "linux")
        logq = quote(str(log), "linux")
        line = (
            f"17 4 * * * mkdir -p {quote(str(log.parent), 'linux')}; "
            f"{prefix} {exe} summarize >> {logq} 2>&1; {prefix} {exe} prune >> {logq} 2>&1 {CRON_MARK}"
        )
        line = line.replace("%", r"\%")  # cron turns a bare % into a newline
        return Schedule(platform, line, "your crontab (crontab -l)", cron_line=line)
    if platform == "macos":
        exe = command_line(argv, "macos")
        plist_path = Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        payload = {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": ["/bin/sh", "-c", f"{exe} summarize; {exe} prune"],
            "EnvironmentVariables": env,
            "StartCalendarInterval": {"Hour": 4, "Minute": 17},
            "StandardOutPath": str(log),
            "StandardErrorPath": str(log),
            "RunAtLoad": False,
        }
        data = plistlib.dumps(payload)
        text = (
            f"# {plist_path}\n{data.decode('utf-8')}"
            f"# then: launchctl load -w {quote(str(plist_path), 'macos')}\n"
        )
        return Schedule(platform, text, str(plist_path), plist_path=plist_path, plist=data)
    commands = []
    for name, sub, at in WINDOWS_TASKS:
        commands.append(
            ["schtasks", "/Create", "/F", "/SC", "DAILY", "/ST", at, "/TN", name,
             "/TR", f"{command_line(argv, 'windows')} {sub}"]
        )
    text = "\n".join(subprocess.list2cmdline(c) for c in commands) + "\n"
    return Schedule(platform, text, "Task Scheduler (tasks memrecall-summarize, memrecall-prune)", schtasks=commands)


def _run(argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, input=stdin, capture_output=True, text=True, encoding="utf-8", errors="replace",
            timeout=30, check=False,
        )
    except FileNotFoundError:
        raise MemrecallError(f"{argv[0]} not found; add the job printed above yourself") from None
    except subprocess.TimeoutExpired:
        raise MemrecallError(f"{argv[0]} did not answer within 30 s; nothing was scheduled") from None


def _read_crontab() -> str:
    done = _run(["crontab", "-l"])
    if done.returncode != 0:
        if "no crontab" in (done.stderr or "").lower():
            return ""
        first = (done.stderr or "").strip().splitlines()[:1]
        raise MemrecallError(f"crontab -l failed: {first[0] if first else f'exit {done.returncode}'}")
    return done.stdout


def install_schedule(schedule: Schedule, memrecall_home: Path, remove: bool = False) -> str:
    """Install (or remove) the daily job on this machine. Returns a one-line outcome."""
    if schedule.platform != current_platform():
        raise UsageError(
            f"--schedule installs only for this machine ({current_platform()}); "
            f"--platform {schedule.platform} just prints"
        )
    if schedule.platform == "linux":
        current = _read_crontab()
        kept = [line for line in current.splitlines() if CRON_MARK not in line]
        new_lines = kept if remove else [*kept, schedule.cron_line]
        new = "\n".join(new_lines) + ("\n" if new_lines else "")
        if new == current or (not current and not new):
            return "crontab already up to date" if not remove else "no memrecall job in the crontab"
        if current:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            write_atomic(_free(memrecall_home / "backups" / f"crontab-{stamp}.txt"), current)
        done = _run(["crontab", "-"], stdin=new)
        if done.returncode != 0:
            raise MemrecallError(f"crontab - failed: {(done.stderr or '').strip()[:200]}")
        return "removed the memrecall job from the crontab" if remove else "added the daily job to the crontab"
    if schedule.platform == "macos":
        assert schedule.plist_path is not None
        path = schedule.plist_path
        if remove:
            if not path.exists():
                return f"no {path}"
            _run(["launchctl", "unload", "-w", str(path)])
            path.unlink()
            return f"unloaded and removed {path}"
        write_atomic(path, schedule.plist)
        _run(["launchctl", "unload", str(path)])  # reload when it was there already
        done = _run(["launchctl", "load", "-w", str(path)])
        if done.returncode != 0:
            raise MemrecallError(f"launchctl load failed: {(done.stderr or '').strip()[:200]}")
        return f"wrote {path} and loaded it"
    for command, (name, _, _) in zip(schedule.schtasks, WINDOWS_TASKS):
        argv = ["schtasks", "/Delete", "/F", "/TN", name] if remove else command
        done = _run(argv)
        if done.returncode != 0 and not remove:
            raise MemrecallError(f"schtasks failed for {name}: {(done.stderr or done.stdout or '').strip()[:200]}")
    return "removed the scheduled tasks" if remove else "created the scheduled tasks memrecall-summarize and memrecall-prune"
