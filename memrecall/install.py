"""`memrecall init`: put the recall hook into Claude Code's settings, and the daily jobs
into the platform's scheduler.

settings.json belongs to the user: it is parsed, changed in exactly one place (our handler
under `hooks.UserPromptSubmit`), backed up, and written atomically (in place when it has
other hard links, so every name keeps seeing one file). Only the text of that place is
rewritten, in the file's own indentation: the rest stays byte for byte (jsontext.py), so init
then `--uninstall` gives the original file back. A file that is not UTF-8 JSON, or not a
regular file, is refused untouched. The last few backups are kept, older ones of init's go.

"Ours" is only the shape init itself writes: `<…/memrecall> recall` or `<python> -m memrecall
recall`, plain words with no shell syntax. Re-running init updates such a stale path instead of
adding a second hook, and `--uninstall` removes nothing else. A command of the user's own that
runs memrecall (`nice memrecall recall`, `env X=1 memrecall recall`, `bash -c '…'`) is theirs:
init neither rewrites nor removes it, and adds no second hook beside it.
"""

from __future__ import annotations

import difflib
import glob
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
from .jsontext import loads, rewrite

HOOK_EVENT = "UserPromptSubmit"
DEFAULT_TIMEOUT = 10
CRON_MARK = "# memrecall daily"
LAUNCHD_LABEL = "com.memrecall.daily"
DAILY_WRAPPER = "memrecall-daily"  # in $MEMRECALL_HOME/bin: what cron and launchd run
DAILY_HOUR, DAILY_MINUTE = 4, 17  # cron and launchd; local time, when a laptop is likely idle
WINDOWS_TASKS = (
    ("memrecall-summarize", "summarize", "04:17"),
    ("memrecall-prune", "prune", "04:47"),
)
PLATFORMS = ("linux", "macos", "windows")
# Carried into the scheduled job: schedulers do not run the user's shell profile.
CARRIED_ENV = (
    "MEMRECALL_HOME",
    "MEMRECALL_OBSIDIAN",
    "MEMRECALL_BEADS",
    "MEMRECALL_SUMMARIES",
    "MEMRECALL_CLAUDE_PROJECTS",
    "MEMRECALL_TOKENIZER",
    "CLAUDE_CONFIG_DIR",
)

# Any command that mentions running memrecall's hook, however it is wrapped.
_MENTIONS = re.compile(
    r"""(?:^|[^\w.-])memrecall(?:\.exe)?["']?\s+["']?recall(?![\w.-])""",
    re.IGNORECASE,
)
# Characters a shell gives meaning to outside quotes (chaining, substitution, redirection,
# expansion, globs, comments, escapes, cmd.exe's variables), and inside double quotes. A
# command using one is not plainly "run this program with these words", so it is never taken
# for the entry init writes. Inside single quotes everything is literal: `shlex.quote` output
# for an install path such as `/opt/a (x86)/memrecall` stays recognisable.
_SHELL_SYNTAX = frozenset("$`;&|<>(){}[]*?!#~\\%^")
_SHELL_SYNTAX_IN_DOUBLE_QUOTES = frozenset("$`\\%")
_PYTHON_NAME = re.compile(r"pythonw?(?:\d+(?:\.\d+)*)?(?:\.exe)?", re.IGNORECASE)
SETTINGS_MAX_BYTES = 16 * 1024 * 1024
# init backs settings.json up before each change; older backups of its own beyond these go.
SETTINGS_BACKUPS_KEPT = 3
BACKUP_TAG = ".memrecall-backup-"


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


def plain_argv(command: Any) -> list[str] | None:
    """The words of a command that is nothing but words (quoted or not), or None when it holds
    shell syntax: such a command may run anything, whatever program it names first."""
    if not isinstance(command, str) or _has_shell_syntax(command):
        return None
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        return None
    return words or None


def _has_shell_syntax(command: str) -> bool:
    quote = ""
    for ch in command:
        if ch in "\n\r\x00":  # a second command line, or a string cut short
            return True
        if quote == "'":
            quote = "" if ch == "'" else quote
        elif quote == '"':
            if ch == '"':
                quote = ""
            elif ch in _SHELL_SYNTAX_IN_DOUBLE_QUOTES:
                return True
        elif ch in "'\"":
            quote = ch
        elif ch in _SHELL_SYNTAX:
            return True
    return bool(quote)  # unbalanced quotes: a shell would read on


def _base_name(program: str) -> str:
    return re.split(r"[\\/]", program)[-1].lower()


def hook_argv(command: Any) -> list[str] | None:
    """The argv of a command shaped exactly like the one init writes, else None."""
    words = plain_argv(command)
    if words is None:
        return None
    if (
        len(words) == 2
        and words[1] == "recall"
        and _base_name(words[0]) in ("memrecall", "memrecall.exe")
    ):
        return words
    if (
        len(words) == 4
        and words[1:] == ["-m", "memrecall", "recall"]
        and _PYTHON_NAME.fullmatch(_base_name(words[0]))
    ):
        return words
    return None


def is_our_command(command: Any) -> bool:
    """True only for the entry init itself writes (any install path): the one init may
    update or remove."""
    return hook_argv(command) is not None


def mentions_memrecall(command: Any) -> bool:
    """True for any command that runs memrecall's hook somehow, ours or the user's own."""
    return isinstance(command, str) and bool(_MENTIONS.search(command))


# --- settings.json ----------------------------------------------------------------------


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file, or None if it is missing. Opened without blocking and
    checked after opening: a FIFO (which would wait forever for a writer), a device such as
    /dev/zero or a folder is refused, with no window to swap the file in between."""
    import stat

    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise MemrecallError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise MemrecallError(f"{path} is a folder, not a settings file; nothing was changed")
        if not stat.S_ISREG(info.st_mode):
            kind = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "a device or socket"
            raise MemrecallError(f"{path} is {kind}, not a regular file; nothing was changed")
        if info.st_size > SETTINGS_MAX_BYTES:
            raise MemrecallError(
                f"{path} is {info.st_size // (1024 * 1024)} MB, more than a settings file holds "
                f"({SETTINGS_MAX_BYTES // (1024 * 1024)} MB); nothing was changed"
            )
        chunks = []
        left = SETTINGS_MAX_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:  # grew while being read
            raise MemrecallError(
                f"{path} is larger than {SETTINGS_MAX_BYTES // (1024 * 1024)} MB; "
                "nothing was changed"
            )
        return b"".join(chunks)
    except OSError as exc:
        raise MemrecallError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_settings_file(path: Path) -> tuple[str | None, dict[str, Any]]:
    """(original text or None if missing, parsed object). Malformed → error, nothing touched."""
    raw = _read_regular(path)
    if raw is None:
        return None, {}
    try:
        # Strict: a byte replaced by U+FFFD would be written back as the replacement character.
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MemrecallError(
            f"{path} is not UTF-8 (byte offset {exc.start}); save it as UTF-8 first, "
            "nothing was changed"
        ) from None
    body = text.removeprefix("\ufeff")  # an editor's byte order mark: kept, not parsed
    if not body.strip():
        return text, {}
    try:
        data = loads(body)
    except json.JSONDecodeError as exc:
        raise MemrecallError(
            f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            "fix it first, nothing was changed"
        ) from None
    except ValueError as exc:  # NaN / Infinity: Python reads them, JSON (and Claude Code) does not
        raise MemrecallError(
            f"{path} is not valid JSON ({exc} is not a JSON number); "
            "fix it first, nothing was changed"
        ) from None
    except RecursionError:
        raise MemrecallError(
            f"{path} is nested too deeply to be a settings file; nothing was changed"
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
        raise MemrecallError(f'{path}: "hooks" is not an object; nothing was changed')
    groups = hooks.get(HOOK_EVENT)
    if groups is None:
        if not create:
            return None
        groups = hooks[HOOK_EVENT] = []
    if not isinstance(groups, list):
        raise MemrecallError(f'{path}: "hooks.{HOOK_EVENT}" is not a list; nothing was changed')
    return groups


def prompt_handlers(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Every handler under UserPromptSubmit (tolerant: reading never raises)."""
    hooks = data.get("hooks")
    groups = hooks.get(HOOK_EVENT) if isinstance(hooks, dict) else None
    found = []
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        found += [
            h for h in (handlers if isinstance(handlers, list) else []) if isinstance(h, dict)
        ]
    return found


def our_handlers(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The handlers under UserPromptSubmit shaped like the one init writes."""
    return [h for h in prompt_handlers(data) if is_our_command(h.get("command"))]


def their_memrecall_commands(data: dict[str, Any]) -> list[str]:
    """Commands the user wrote that run memrecall's hook their own way: never ours to touch."""
    return [
        h["command"]
        for h in prompt_handlers(data)
        if mentions_memrecall(h.get("command")) and not is_our_command(h.get("command"))
    ]


def merge_hook(data: dict[str, Any], command: str, timeout: int, path: Path) -> str:
    """Install or refresh our handler in place. Returns installed | updated | unchanged, or
    kept: the user runs memrecall through a command of their own and init adds no second
    hook (it would inject every memory twice)."""
    if not our_handlers(data) and their_memrecall_commands(data):
        _event_groups(data, path, create=False)  # still refuse a malformed "hooks"
        return "kept"
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


def dump_settings(old_text: str | None, data: dict[str, Any]) -> str:
    """The settings as text: the user's own text with only what changed rewritten, in the
    file's indentation (spaces, tabs or one line), key order and line endings."""
    text = old_text or ""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    try:
        return bom + rewrite(text[len(bom) :], data)
    except RecursionError:
        raise MemrecallError(
            "the settings are nested too deeply to write back; nothing was changed"
        ) from None


@dataclass
class InitPlan:
    path: Path
    command: str
    timeout: int
    uninstall: bool
    status: str  # installed | updated | unchanged | kept | removed | absent
    old_text: str | None
    new_text: str | None  # None: nothing to write
    removed: int = 0
    # The user's own commands that run memrecall: left exactly as they are.
    theirs: list[str] = field(default_factory=list)

    def diff(self) -> str:
        old = (self.old_text or "").splitlines(keepends=True)
        new = (self.new_text if self.new_text is not None else self.old_text or "").splitlines(
            keepends=True
        )
        label = str(self.path)
        return "".join(
            difflib.unified_diff(
                old, new, fromfile=label if self.old_text is not None else "/dev/null", tofile=label
            )
        )


def plan_init(
    path: Path, command: str, timeout: int = DEFAULT_TIMEOUT, uninstall: bool = False
) -> InitPlan:
    old_text, data = read_settings_file(path)
    theirs = their_memrecall_commands(data)
    if uninstall:
        removed = remove_hook(data, path)
        status = "removed" if removed else "absent"
        new_text = dump_settings(old_text, data) if removed else None
        return InitPlan(path, command, timeout, True, status, old_text, new_text, removed, theirs)
    status = merge_hook(data, command, timeout, path)
    new_text = None if status in ("unchanged", "kept") else dump_settings(old_text, data)
    return InitPlan(path, command, timeout, False, status, old_text, new_text, theirs=theirs)


def _free(path: Path) -> Path:
    """`path`, else the next `path.N` after every one beside it: a backup never replaces an
    older one, and numbers only grow, so a name freed by pruning older backups is never
    handed to a newer one (which would then sort as the oldest of its second)."""
    from itertools import islice

    from .atomic import numbered

    prefix = path.name + "."
    taken = [0]
    for sibling in path.parent.glob(glob.escape(prefix) + "*"):
        number = sibling.name[len(prefix) :]
        if number.isdigit():
            taken.append(int(number))
    if max(taken) == 0 and not os.path.lexists(path):
        return path
    # Not `path` itself even when pruning freed it: numbered names follow it.
    names = islice(numbered(path, first=max(taken) + 1, keep_suffix=False), 1, None)
    free = next((name for name in names if not os.path.lexists(name)), None)
    if free is None:
        raise MemrecallError(f"too many backups next to {path}")
    return free


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
    links = 1
    original = _read_regular(target) if plan.old_text is not None else None
    if original is not None:
        moment = stamp or datetime.now()
        backup = _free(target.with_name(f"{target.name}{BACKUP_TAG}{moment:%Y%m%d-%H%M%S}"))
        try:
            info = target.stat()
        except OSError as exc:
            raise MemrecallError(
                f"cannot read {target} for a backup: {exc.strerror or exc}"
            ) from None
        mode, links = info.st_mode & 0o777, info.st_nlink
        write_atomic(backup, original)
    if mode is None:
        # A new file gets the usual permissions, not the temp file's 0600.
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        if links > 1:
            # Hard links (a dotfiles setup) would be split by rename: the other name would keep
            # the old settings. Write in place instead; the backup above is already on disk.
            _write_in_place(target, plan.new_text)
        else:
            write_atomic(target, plan.new_text)
            os.chmod(target, mode)
    except OSError as exc:
        raise MemrecallError(f"cannot write {target}: {exc.strerror or exc}") from None
    if backup is not None:
        prune_backups(target, keep=backup)
    return backup


def prune_backups(target: Path, keep: Path, kept: int = SETTINGS_BACKUPS_KEPT) -> list[Path]:
    """Delete init's older backups of `target`, keeping `keep` (the one just written) and the
    newest others up to `kept` in all. Only regular files named the way init names them
    (`settings.json.memrecall-backup-20261204-041700`, maybe `.2`): a copy the user made under
    any other name is never touched. Returns what was deleted."""
    own = re.compile(re.escape(target.name + BACKUP_TAG) + r"(\d{8}-\d{6})(?:\.(\d{1,3}))?")
    found: list[tuple[tuple[str, int], Path]] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return []
    for entry in entries:
        match = own.fullmatch(entry.name)
        if match and entry.name != keep.name and entry.is_file(follow_symlinks=False):
            found.append(((match[1], int(match[2] or 0)), Path(entry.path)))
    found.sort()
    older = found[: max(0, len(found) - (kept - 1))]
    deleted = []
    for _, path in older:
        try:
            path.unlink()
        except OSError:
            continue  # a backup that cannot go is no reason to fail a change that was made
        deleted.append(path)
    return deleted


def _write_in_place(path: Path, text: str) -> None:
    import stat

    data = text.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise MemrecallError(f"{path} is no longer a regular file; nothing was written")
        if hasattr(os, "posix_fallocate") and data:
            # A full disk is found before the first byte changes, not half way through.
            try:
                os.posix_fallocate(fd, 0, len(data))
            except OSError as exc:
                import errno

                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
        os.fsync(fd)
    finally:
        os.close(fd)


# --- the daily schedule -----------------------------------------------------------------


@dataclass
class Schedule:
    platform: str
    text: str  # what to print: a crontab line, a plist, or schtasks commands
    where: str  # human description of where it goes
    scheduler: str = ""  # cron, launchd or Windows Task Scheduler: named in everything init says
    cron_line: str = ""
    plist_path: Path | None = None
    plist: bytes = b""
    schtasks: list[list[str]] = field(default_factory=list)
    # cron and launchd run this script: the environment and the log live in it, so the line
    # in the crontab stays short enough to read.
    wrapper_path: Path | None = None
    wrapper: str = ""
    log_path: Path | None = None

    def timing(self) -> str:
        """When the job runs, what it runs and where its output goes: the same words whether
        init installs it, would install it (--dry-run) or only prints it."""
        if self.wrapper_path is None:  # Task Scheduler runs memrecall itself, once per command
            tasks = ", ".join(
                f"task {name} runs `memrecall {sub}` at {at}" for name, sub, at in WINDOWS_TASKS
            )
            return f"every day (local time): {tasks}; no wrapper script on Windows"
        at = f"{DAILY_HOUR:02d}:{DAILY_MINUTE:02d}"
        return (
            f"every day at {at} (local time): {self.wrapper_path}, "
            f"which runs memrecall summarize, prune, usage and team sync, output in {self.log_path}"
        )

    def change(self, remove: bool = False) -> str:
        """What `init --schedule` does to the scheduler, as a verb phrase: --dry-run says it
        before anything is written."""
        wrapper, agent = self.wrapper_path, self.plist_path
        if self.platform == "linux":
            if remove:
                return (
                    f"remove the line tagged `{CRON_MARK}` from your crontab (crontab -), "
                    f"then delete {wrapper}"
                )
            return (
                f"write {wrapper}, then add a line tagged `{CRON_MARK}` that runs it to your "
                "crontab (crontab -)"
            )
        if self.platform == "macos":
            if remove:
                return (
                    f"unload and delete the agent {agent} (launchctl unload -w), "
                    f"then delete {wrapper}"
                )
            return (
                f"write {wrapper} and the agent {agent} that runs it, "
                "then load it (launchctl load -w)"
            )
        names = " and ".join(name for name, _, _ in WINDOWS_TASKS)
        if remove:
            return f"delete the tasks {names} (schtasks /Delete)"
        return f"create the tasks {names} (schtasks /Create)"


def _carried_env(memrecall_home: Path, claude: str | None) -> dict[str, str]:
    env = {name: os.environ[name] for name in CARRIED_ENV if os.environ.get(name)}
    env["MEMRECALL_HOME"] = str(memrecall_home)  # resolved: the home the wrapper lives in
    if claude:
        # summarize runs `claude -p`: the scheduler's PATH is minimal.
        env["PATH"] = os.pathsep.join(
            [str(Path(claude).parent), "/usr/local/bin", "/usr/bin", "/bin"]
        )
    return env


def _wrapper_script(argv: list[str], env: dict[str, str], log: Path) -> str:
    exe = command_line(argv, "linux")
    exports = "".join(f"export {name}={quote(value, 'linux')}\n" for name, value in env.items())
    return (
        "#!/bin/sh\n"
        "# memrecall's daily job. memrecall init writes this file (and rewrites it on each run);\n"
        "# cron and launchd do not read your shell profile, hence the settings below.\n"
        f"{exports}"
        f"mkdir -p {quote(str(log.parent), 'linux')}\n"
        f"exec >> {quote(str(log), 'linux')} 2>&1\n"
        f"{exe} summarize\n"
        f"{exe} prune\n"
        # Verdicts before Claude Code's own 30-day cleanup takes the transcripts they need.
        f"{exe} usage --limit 1 >/dev/null\n"
        # The day's summaries to the team's repository; a no-op without [team].
        f"{exe} team sync --background\n"
    )


def build_schedule(
    platform: str, memrecall_home: Path, argv: list[str] | None = None, claude: str | None = None
) -> Schedule:
    if platform not in PLATFORMS:
        raise UsageError(f"unknown platform {platform!r}; choose one of {', '.join(PLATFORMS)}")
    argv = argv or memrecall_argv()
    log = memrecall_home / "logs" / "schedule.log"
    wrapper = memrecall_home / "bin" / DAILY_WRAPPER
    script = _wrapper_script(argv, _carried_env(memrecall_home, claude), log)
    if platform == "linux":
        line = f"{DAILY_MINUTE} {DAILY_HOUR} * * * {quote(str(wrapper), 'linux')} {CRON_MARK}"
        line = line.replace("%", r"\%")  # cron turns a bare % into a newline
        return Schedule(
            platform,
            line,
            "your crontab (crontab -e)",
            scheduler="cron",
            cron_line=line,
            wrapper_path=wrapper,
            wrapper=script,
            log_path=log,
        )
    if platform == "macos":
        plist_path = Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
        payload = {
            "Label": LAUNCHD_LABEL,
            "ProgramArguments": [str(wrapper)],
            "StartCalendarInterval": {"Hour": DAILY_HOUR, "Minute": DAILY_MINUTE},
            # The script logs there itself; these catch a script that cannot start.
            "StandardOutPath": str(log),
            "StandardErrorPath": str(log),
            "RunAtLoad": False,
        }
        data = plistlib.dumps(payload)
        text = (
            f"# {plist_path}\n{data.decode('utf-8')}"
            f"# then: launchctl load -w {quote(str(plist_path), 'macos')}\n"
        )
        return Schedule(
            platform,
            text,
            str(plist_path),
            scheduler="launchd",
            plist_path=plist_path,
            plist=data,
            wrapper_path=wrapper,
            wrapper=script,
            log_path=log,
        )
    commands = []
    for name, sub, at in WINDOWS_TASKS:
        commands.append(
            [
                "schtasks",
                "/Create",
                "/F",
                "/SC",
                "DAILY",
                "/ST",
                at,
                "/TN",
                name,
                "/TR",
                f"{command_line(argv, 'windows')} {sub}",
            ]
        )
    text = "\n".join(subprocess.list2cmdline(c) for c in commands) + "\n"
    return Schedule(
        platform,
        text,
        "Task Scheduler (tasks memrecall-summarize, memrecall-prune)",
        scheduler="Windows Task Scheduler",
        schtasks=commands,
    )


def _run(argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=30,
            check=False,
        )
    except FileNotFoundError:
        raise MemrecallError(f"{argv[0]} not found; add the job printed above yourself") from None
    except subprocess.TimeoutExpired:
        raise MemrecallError(
            f"{argv[0]} did not answer within 30 s; nothing was scheduled"
        ) from None


def _read_crontab() -> str:
    done = _run(["crontab", "-l"])
    if done.returncode != 0:
        if "no crontab" in (done.stderr or "").lower():
            return ""
        first = (done.stderr or "").strip().splitlines()[:1]
        raise MemrecallError(
            f"crontab -l failed: {first[0] if first else f'exit {done.returncode}'}"
        )
    return done.stdout


def write_wrapper(schedule: Schedule) -> Path | None:
    """Write the script the cron line or plist runs, executable; untouched when current."""
    path = schedule.wrapper_path
    if path is None:
        return None
    try:
        current = path.read_text(encoding="utf-8") if path.is_file() else None
    except (OSError, UnicodeDecodeError):
        current = None
    try:
        if current != schedule.wrapper:
            write_atomic(path, schedule.wrapper)
        os.chmod(path, 0o755)  # write_atomic makes 0600 files; cron and launchd execute this
    except OSError as exc:
        raise MemrecallError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path


def _remove_wrapper(schedule: Schedule) -> bool:
    """Delete the wrapper script; True when there was one."""
    if schedule.wrapper_path is None:
        return False
    try:
        schedule.wrapper_path.unlink()
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise MemrecallError(
            f"cannot remove {schedule.wrapper_path}: {exc.strerror or exc}"
        ) from None
    return True


def install_schedule(schedule: Schedule, memrecall_home: Path, remove: bool = False) -> str:
    """Install (or remove) the daily job on this machine. Returns what was done to the
    scheduler (`schedule.scheduler`) and to which files, without a final full stop."""
    if schedule.platform != current_platform():
        raise UsageError(
            f"--schedule installs only for this machine ({current_platform()}); "
            f"--platform {schedule.platform} just prints"
        )
    if not remove:
        write_wrapper(schedule)  # before the job that runs it
    outcome = _update_scheduler(schedule, memrecall_home, remove)
    if remove and _remove_wrapper(schedule):  # after the job that ran it is gone
        outcome += f"; deleted {schedule.wrapper_path}"
    return outcome


def _update_scheduler(schedule: Schedule, memrecall_home: Path, remove: bool) -> str:
    if schedule.platform == "linux":
        current = _read_crontab()
        kept = [line for line in current.splitlines() if CRON_MARK not in line]
        new_lines = kept if remove else [*kept, schedule.cron_line]
        new = "\n".join(new_lines) + ("\n" if new_lines else "")
        if new == current or (not current and not new):
            if remove:
                return f"no line tagged `{CRON_MARK}` in your crontab, nothing to remove"
            return f"your crontab already has the line tagged `{CRON_MARK}`, left unchanged"
        if current:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            write_atomic(_free(memrecall_home / "backups" / f"crontab-{stamp}.txt"), current)
        done = _run(["crontab", "-"], stdin=new)
        if done.returncode != 0:
            raise MemrecallError(f"crontab - failed: {(done.stderr or '').strip()[:200]}")
        if remove:
            return f"removed the line tagged `{CRON_MARK}` from your crontab (crontab -)"
        return f"added a line tagged `{CRON_MARK}` to your crontab (crontab -l shows it)"
    if schedule.platform == "macos":
        assert schedule.plist_path is not None
        path = schedule.plist_path
        if remove:
            if not path.exists():
                return f"no agent at {path}, nothing to remove"
            _run(["launchctl", "unload", "-w", str(path)])
            path.unlink()
            return f"unloaded and removed the agent {path}"
        write_atomic(path, schedule.plist)
        _run(["launchctl", "unload", str(path)])  # reload when it was there already
        done = _run(["launchctl", "load", "-w", str(path)])
        if done.returncode != 0:
            raise MemrecallError(f"launchctl load failed: {(done.stderr or '').strip()[:200]}")
        return f"wrote the agent {path} and loaded it (launchctl load -w)"
    for command, (name, _, _) in zip(schedule.schtasks, WINDOWS_TASKS):
        argv = ["schtasks", "/Delete", "/F", "/TN", name] if remove else command
        done = _run(argv)
        if done.returncode != 0 and not remove:
            raise MemrecallError(
                f"schtasks failed for {name}: {(done.stderr or done.stdout or '').strip()[:200]}"
            )
    names = " and ".join(name for name, _, _ in WINDOWS_TASKS)
    if remove:
        return f"deleted the tasks {names} (schtasks /Delete)"
    return f"created the tasks {names} (schtasks /Create)"
