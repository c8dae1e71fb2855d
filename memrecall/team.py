"""Team memory over git: each person's summaries and saved notes, shared through one repository.

Layout of the team repository: one folder per person (`<person>/summaries/…`,
`<person>/memories/…`), written only by that person's `memrecall team sync`, on that
person's branch (`memrecall/<person>`). People merge those branches into main by pull
request; memrecall never commits to main, never merges into it and never rewrites history.

The clone under `$MEMRECALL_HOME/team` stays checked out on main and is only ever
fast-forwarded: it is what search and recall read (config.Settings.team_vaults), without the
person's own folder, whose originals are searched already. A sync builds the person's commits
without touching that working tree: the new files' text is redacted, checked by the secret
detector, and written straight into git's object database with `git fast-import`, on top of
the person's branch (merged with main when main moved), so nothing unredacted ever reaches a
commit or even the object store. A manifest of each copied file's size and mtime keeps a sync
that changed nothing from reading or hashing anything.

Git runs as a program (argv, never a shell), with prompts off: a sync started by a hook has no
terminal to ask on.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from .config import Settings, team_folder_name
from .errors import MemrecallError

STATE_FILE = "team-sync.json"
MANIFEST_FILE = "team-manifest.json"
LOG_FILE = "team-sync.log"
SUMMARIES, MEMORIES, ARCHIVE = "summaries", "memories", ".archive"
# Empty folders are not tracked by git: these make a person's layout exist from the first sync.
KEEP = ".gitkeep"
# The manifest's `commit` after a sync that found nothing to commit and no branch yet.
NO_BRANCH = "-"
# A file this large is not a note (a pasted dump): it stays out of the team repository.
MAX_SHARED_BYTES = 4 << 20
LOCAL_TIMEOUT = 600.0
LOG_MAX_BYTES = 1 << 20
LOG_KEEP_LINES = 2000
_SUMMARY_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})-")
_PLACEHOLDER_KIND = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
# A file in a git tree: (mode, object id).
Entry = tuple[str, str]


class TeamError(MemrecallError):
    """Team memory cannot do what was asked; the message says why and what to do."""


class TeamBusy(TeamError):
    """Another sync holds the lock."""


class SecretFound(TeamError):
    """The detector still finds a secret in what would be committed."""


def author_of(ref: str) -> str | None:
    """The teammate a search ref belongs to (`team:<person>/…` → person), else None."""
    if not ref.startswith("team:"):
        return None
    person = ref[len("team:"):].split("/", 1)[0]
    return person or None


# --- running git ------------------------------------------------------------------------


def git_program() -> str:
    found = shutil.which("git")
    if not found:
        raise TeamError("git not found on PATH; install git and try again")
    return found


def _one_line(stderr: bytes | str, fallback: str) -> str:
    """The line of a tool's stderr that says what went wrong, redacted (git prints URLs,
    and a URL can carry a token)."""
    from .redact import redact_fast
    from .textcut import one_line

    text = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    chosen = next(
        (line for line in lines if line.startswith(("fatal:", "error:", "ERROR:"))),
        lines[-1] if lines else fallback,
    )
    return one_line(redact_fast(chosen), 300)


def _quiet_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Never wait for a password or a credential helper's dialog: a hook has no one to ask.
    env.update({"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", "GH_PROMPT_DISABLED": "1",
                "GH_NO_UPDATE_NOTIFIER": "1", "GLAB_NO_PROMPT": "1", "NO_COLOR": "1"})
    env.update(extra or {})
    return env


class Git:
    """git in one working tree, with a timeout on every call."""

    def __init__(self, cwd: Path, network_timeout: float) -> None:
        self.exe = git_program()
        self.cwd = cwd
        self.network_timeout = network_timeout
        # A commit's listing never changes: one sync asks for the same few several times.
        self._listed: dict[tuple[str, str], dict[str, Entry]] = {}

    def run(
        self, *args: str, data: bytes | None = None, network: bool = False, check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        timeout = self.network_timeout if network else LOCAL_TIMEOUT
        try:
            done = subprocess.run(
                [self.exe, *args], cwd=self.cwd, input=data, capture_output=True, timeout=timeout,
                env=_quiet_env(), stdin=None if data is not None else subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise TeamError(f"git {args[0]} gave no answer within {timeout:.0f} s") from None
        except OSError as exc:
            raise TeamError(f"cannot run git: {exc.strerror or exc}") from None
        if check and done.returncode != 0:
            raise TeamError(f"git {args[0]}: {_one_line(done.stderr, f'exit {done.returncode}')}")
        return done

    def text(self, *args: str, network: bool = False) -> str:
        return self.run(*args, network=network).stdout.decode("utf-8", "replace").strip()

    def rev(self, ref: str) -> str | None:
        done = self.run("rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
        out = done.stdout.decode("ascii", "replace").strip()
        return out if done.returncode == 0 and out else None

    def is_ancestor(self, older: str, newer: str) -> bool:
        return self.run("merge-base", "--is-ancestor", older, newer, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        done = self.run("merge-base", a, b, check=False)
        out = done.stdout.decode("ascii", "replace").strip()
        return out if done.returncode == 0 and out else None

    def entries(self, commit: str | None, folder: str = "") -> dict[str, Entry]:
        """path → (mode, object) of every file under `folder/` (relative to it), or of the
        top level when `folder` is empty (folders as tree entries)."""
        if commit is None:
            return {}
        key = (commit, folder)
        if key not in self._listed:
            self._listed[key] = self._list(commit, folder)
        return dict(self._listed[key])

    def _list(self, commit: str, folder: str) -> dict[str, Entry]:
        if folder:
            args = ["ls-tree", "-r", "-z", "--full-tree", commit, "--", folder + "/"]
        else:
            args = ["ls-tree", "-z", "--full-tree", commit]
        found: dict[str, Entry] = {}
        cut = len(folder) + 1 if folder else 0
        for record in self.run(*args).stdout.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, _, obj = meta.decode("ascii").split(" ", 2)
            found[os.fsdecode(raw_path)[cut:]] = (mode, obj)
        return found


# --- config.toml: the [team] section, edited in place ------------------------------------


_TEAM_HEADER = re.compile(r"^[ \t]*\[[ \t]*team[ \t]*\][ \t]*(#.*)?$")
_ANY_HEADER = re.compile(r"^[ \t]*\[")


def _toml_string(value: str) -> str:
    # JSON's string escapes are all valid in a TOML basic string.
    return json.dumps(value, ensure_ascii=False)


def edit_team_config(text: str, values: dict[str, str]) -> str:
    """`text` with `[team]` holding `values`: a key already there has its line replaced, a
    missing one goes after the section's last key, a missing section is appended. Every
    other byte stays as the user wrote it; the result is checked by parsing both."""
    import tomllib

    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom):]
    try:
        before = tomllib.loads(body)
    except tomllib.TOMLDecodeError as exc:
        raise TeamError(f"config.toml is not valid TOML ({exc}); fix it first") from None
    current = before.get("team", {})
    if not isinstance(current, dict):
        raise TeamError("config.toml has a `team` key that is not a table; remove it first")
    wanted = {k: v for k, v in values.items() if current.get(k) != v}
    if not wanted:
        return text
    newline = "\r\n" if "\r\n" in body else "\n"
    lines = body.splitlines(keepends=True)
    header = next(
        (i for i, line in enumerate(lines) if _TEAM_HEADER.match(line.rstrip("\r\n"))), None
    )
    if header is None:
        if "team" in before:
            raise TeamError(
                "config.toml sets team values outside a [team] table; move them into one"
            )
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += newline
        if lines and lines[-1].strip():
            lines.append(newline)
        lines.append("[team]" + newline)
        lines += [f"{key} = {_toml_string(value)}{newline}" for key, value in wanted.items()]
    else:
        end = next(
            (i for i in range(header + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines)
        )
        last_key = header
        for i in range(header + 1, end):
            stripped = lines[i].strip()
            if stripped and not stripped.startswith("#"):
                last_key = i
        for key, value in wanted.items():
            pattern = re.compile(rf"^([ \t]*){re.escape(key)}[ \t]*=")
            at = next((i for i in range(header + 1, end) if pattern.match(lines[i])), None)
            if at is not None:
                indent = pattern.match(lines[at]).group(1)  # type: ignore[union-attr]
                lines[at] = f"{indent}{key} = {_toml_string(value)}{newline}"
                continue
            if not lines[last_key].endswith("\n"):
                lines[last_key] += newline
            lines.insert(last_key + 1, f"{key} = {_toml_string(value)}{newline}")
            last_key += 1
            end += 1
    result = "".join(lines)
    expected = dict(before)
    expected["team"] = {**current, **wanted}
    try:
        ok = tomllib.loads(result) == expected
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        by_hand = "; ".join(f"{k} = {_toml_string(v)}" for k, v in values.items())
        raise TeamError(
            f"cannot edit config.toml safely; put these under [team] yourself: {by_hand}"
        )
    return bom + result


def write_team_config(path: Path, values: dict[str, str]) -> tuple[bool, Path | None]:
    """Write `[team]` into config.toml (backup first). Returns (changed, backup path)."""
    from .atomic import write_atomic
    from .install import BACKUP_TAG, _free, prune_backups

    target = path.resolve() if path.is_symlink() else path
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        raw = None
    except OSError as exc:
        raise TeamError(f"cannot read {target}: {exc.strerror or exc}") from None
    try:
        old = raw.decode("utf-8") if raw is not None else ""
    except UnicodeDecodeError:
        raise TeamError(f"{target} is not UTF-8; fix it first") from None
    new = edit_team_config(old, values)
    if raw is not None and new == old:
        return False, None
    backup = None
    try:
        if raw is not None:
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            backup = _free(target.with_name(f"{target.name}{BACKUP_TAG}{stamp}"))
            write_atomic(backup, raw)
            mode = target.stat().st_mode & 0o777
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        write_atomic(target, new)
        os.chmod(target, mode)
    except OSError as exc:
        raise TeamError(f"cannot write {target}: {exc.strerror or exc}") from None
    if backup is not None:
        prune_backups(target, keep=backup)
    return True, backup


# --- init -------------------------------------------------------------------------------


@dataclass
class InitResult:
    repo: str
    clone: Path
    person: str
    branch: str
    main: str
    cloned: bool
    config_changed: bool
    backup: Path | None = None


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://|^[^/\\\s]+@[^/\\\s]+:")


def _source(repo: str, cwd: Path) -> str:
    """A URL as given; a local path made absolute (the config must not depend on the folder
    init ran in). `-…` is refused: git would read it as an option."""
    text = repo.strip()
    if not text or text.startswith("-"):
        raise TeamError(f"not a repository URL or path: {repo!r}")
    if _URL.match(text):
        return text
    path = Path(os.path.expanduser(text))
    path = path if path.is_absolute() else cwd / path
    if not path.exists():
        raise TeamError(f"no repository at {path} (give a git URL or the path of a repository)")
    return str(path.resolve())


def _same_repo(a: str, b: str) -> bool:
    def norm(value: str) -> str:
        value = value.strip().rstrip("/")
        if not _URL.match(value) and os.path.exists(value):
            return os.path.realpath(value)
        return value.removesuffix(".git")

    return norm(a) == norm(b)


def _remote_head(git: Git) -> str | None:
    done = git.run("symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD", check=False)
    name = done.stdout.decode("utf-8", "replace").strip()
    return name.removeprefix("origin/") or None if done.returncode == 0 else None


def _identity_email(git: Git) -> str:
    done = git.run("config", "user.email", check=False)
    return done.stdout.decode("utf-8", "replace").strip()


def init(
    settings: Settings, repo: str, name: str | None = None, cwd: Path | None = None,
) -> InitResult:
    """Clone the team repository (once), choose this person's folder, record `[team]`."""
    exe = git_program()
    source = _source(repo, cwd or Path.cwd())
    given = team_folder_name(name) if name else ""
    if name and not given:
        raise TeamError(f"--name {name!r} has nothing a folder name can use (a-z 0-9 . _ -)")
    clone = settings.team_dir
    cloned = False
    timeout = float(settings.team.timeout_seconds)
    if clone.exists() and (not clone.is_dir() or any(clone.iterdir())):
        if not (clone / ".git").is_dir():
            raise TeamError(
                f"{clone} exists and is not a git clone; move it away or set [team] clone"
            )
        origin = Git(clone, timeout).run("config", "--get", "remote.origin.url", check=False)
        url = origin.stdout.decode("utf-8", "replace").strip()
        if not _same_repo(url, source):
            raise TeamError(
                f"{clone} is a clone of {url or 'no remote'}, not {source}; "
                "move it away or set [team] clone"
            )
    else:
        clone.parent.mkdir(parents=True, exist_ok=True)
        staging = clone.parent / f".{clone.name}.cloning-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            done = subprocess.run(
                [exe, "clone", "--quiet", "--origin", "origin", "--", source, str(staging)],
                capture_output=True, timeout=timeout, env=_quiet_env(), stdin=subprocess.DEVNULL,
                check=False,
            )
        except subprocess.TimeoutExpired:
            shutil.rmtree(staging, ignore_errors=True)
            raise TeamError(f"cannot clone {source}: no answer within {timeout:.0f} s") from None
        if done.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise TeamError(f"cannot clone {source}: {_one_line(done.stderr, 'git clone failed')}")
        if clone.exists():
            clone.rmdir()  # the empty folder a user made for it
        os.replace(staging, clone)
        cloned = True
    git = Git(clone, timeout)
    person = given or settings.team.name
    if not person:
        person = team_folder_name(_identity_email(git))
    if not person:
        raise TeamError("cannot tell who you are: pass --name NAME (or set git config user.email)")
    main = settings.team.main or _remote_head(git) or "main"
    _ensure_on_main(git, main, [])
    branch = settings.team.branch or f"memrecall/{person}"
    if git.run("check-ref-format", "--branch", branch, check=False).returncode != 0:
        raise TeamError(f"{branch!r} is not a valid branch name; set [team] branch")
    assert settings.config_path is not None
    changed, backup = write_team_config(settings.config_path, {"repo": source, "name": person})
    return InitResult(source, clone, person, branch, main, cloned, changed, backup)


def _ensure_on_main(git: Git, main: str, notes: list[str]) -> bool:
    """Whether the clone's working tree is on `main` (switching to it when it is not and
    nothing would be lost: a fresh clone of a repository whose default branch is another)."""
    done = git.run("symbolic-ref", "--quiet", "HEAD", check=False)
    head = done.stdout.decode("utf-8", "replace").strip()
    if head == f"refs/heads/{main}":
        return True
    clean = not git.run("status", "--porcelain", "--untracked-files=no").stdout.strip()
    if clean and git.rev(f"refs/remotes/origin/{main}"):
        switched = git.run("checkout", "--quiet", main, check=False)
        if switched.returncode == 0:
            return True
    on = head.removeprefix("refs/heads/") or "a detached HEAD"
    notes.append(
        f"the team clone is on {on}, not {main}: search reads it as it is "
        f"(git -C {git.cwd} switch {main})"
    )
    return False


# --- what this person shares --------------------------------------------------------------


@dataclass
class Source:
    path: Path
    size: int
    mtime_ns: int


def _walk(root: Path, prefix: str, found: dict[str, Source]) -> None:
    """Every `*.md` under `root` that search reads (walk.walk_files: no dot-folders, no
    symlinks), as `<prefix>/<relative path>`."""
    from .walk import walk_files

    for path, st in walk_files(root):
        rel = path.relative_to(root).as_posix()
        found[f"{prefix}/{rel}"] = Source(path, st.st_size, st.st_mtime_ns)


def _aged_out(rel: str, cutoff: datetime) -> bool:
    """A summary named for a day before the retention window: out of search here, so out of
    the team's too (retention stays each person's own)."""
    match = _SUMMARY_DATE.match(rel.rsplit("/", 1)[-1])
    if not rel.startswith(SUMMARIES + "/") or not match:
        return False
    try:
        day = datetime(int(match[1]), int(match[2]), int(match[3]), tzinfo=timezone.utc)
    except ValueError:
        return False
    return day + timedelta(days=1) < cutoff


def local_sources(settings: Settings) -> tuple[dict[str, Source], set[str]]:
    """This person's shareable files by their path in the person's folder, and the roots
    (`summaries`, `memories`) that exist: a missing root says nothing about its files."""
    found: dict[str, Source] = {}
    present: set[str] = set()
    cutoff = settings.now - timedelta(days=settings.retention_days)
    for prefix, root in ((SUMMARIES, settings.summaries), (MEMORIES, settings.memories_dir)):
        if root.is_dir():
            present.add(prefix)
            _walk(root, prefix, found)
    for rel in [r for r in found if _aged_out(r, cutoff)]:
        del found[rel]
    return found, present


def _archived_locally(settings: Settings, rel: str) -> bool:
    """`prune` moved this summary into `<summaries>/.archive/` (or it aged out in place)."""
    if not rel.startswith(SUMMARIES + "/"):
        return False
    inner = rel[len(SUMMARIES) + 1:]
    root = settings.summaries
    return (root / ARCHIVE / inner).is_file() or (root / inner).is_file()


def _archive_path(rel: str) -> str:
    return f"{SUMMARIES}/{ARCHIVE}/{rel[len(SUMMARIES) + 1:]}"


def secrets_in(text: str) -> list[str]:
    """What the secret detector (summarize's redaction rules plus detect-secrets) still
    finds in `text`: the kinds, or [] when nothing."""
    from .redact import redact

    cleaned, count = redact(text)
    if not count:
        return []
    before = _PLACEHOLDER_KIND.findall(text)
    kinds = _PLACEHOLDER_KIND.findall(cleaned)
    for kind in before:
        if kind in kinds:
            kinds.remove(kind)
    return sorted(set(kinds)) or ["secret"]


def shareable_text(raw: bytes) -> str:
    """The text that goes to the team: summarize's redaction run once more, and `<private>`
    spans left out."""
    from .redact import has_private, redact, strip_private

    text = raw.decode("utf-8", errors="replace")
    if has_private(text):
        text = strip_private(text)
    return redact(text)[0]


# --- sync -------------------------------------------------------------------------------


@dataclass
class SyncReport:
    person: str
    branch: str
    main: str
    started: str
    finished: str = ""
    copied: int = 0
    archived: int = 0
    removed: int = 0
    commit: str = ""
    pushed: bool = False
    pending_push: bool = False
    main_updated: bool = False
    pr: str = ""
    merge_hint: str = ""
    problem: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problem

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}

    def line(self) -> str:
        """One line for the log and the terminal."""
        if self.problem:
            return f"team sync failed: {self.problem}"
        parts = [
            f"{self.copied} added or updated", f"{self.archived} archived",
            f"{self.removed} removed",
        ]
        done = f"team sync ({self.person} → {self.branch}): {', '.join(parts)}"
        if self.commit:
            done += f"; committed {self.commit[:10]}"
        if self.pushed:
            done += ", pushed"
        if self.pr:
            done += f"; pull request {self.pr}"
        elif self.merge_hint:
            done += f"; {self.merge_hint}"
        return done


def _now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


def state_path(settings: Settings) -> Path:
    return settings.state_dir / STATE_FILE


def read_state(settings: Settings) -> dict[str, Any] | None:
    from .atomic import read_json

    found = read_json(state_path(settings), None)
    return found if isinstance(found, dict) else None


def person_of(settings: Settings, git: Git | None = None) -> tuple[str, bool]:
    """(folder name, whether it came from the configuration rather than git's user.email)."""
    if settings.team.name:
        return settings.team.name, True
    derived = team_folder_name(_identity_email(git)) if git else ""
    if not derived:
        raise TeamError("[team] name is not set and git has no user.email; run memrecall team init")
    return derived, False


def _require_clone(settings: Settings) -> Path:
    if not settings.team.repo:
        raise TeamError("no team repository configured; run memrecall team init <git-url-or-path>")
    clone = settings.team_dir
    if not (clone / ".git").is_dir():
        raise TeamError(f"no team clone at {clone}; run memrecall team init {settings.team.repo}")
    return clone


def sync(settings: Settings) -> SyncReport:
    """Pull main (fast-forward only), commit this person's new and changed files to their
    branch, push it and open or update its pull request. Problems the next sync can fix
    (offline, a rejected push) are in `report.problem`; a misconfiguration raises."""
    from .atomic import LockTimeout, run_lock

    clone = _require_clone(settings)
    git = Git(clone, float(settings.team.timeout_seconds))
    person, configured = person_of(settings, git)
    main = settings.team.main or _remote_head(git) or "main"
    branch = settings.team.branch or f"memrecall/{person}"
    report = SyncReport(person, branch, main, _now_iso())
    if not configured:
        report.notes.append(
            f"[team] name is not set; using {person!r} from git's user.email "
            "(run memrecall team init to record it, or your own notes show twice in search)"
        )
    try:
        with run_lock(settings.state_dir / "team-sync", timeout=0):
            try:
                _sync_locked(settings, git, report)
            except TeamError as exc:
                report.problem = str(exc)
            except OSError as exc:
                where = f": {exc.filename}" if exc.filename else ""
                report.problem = f"{exc.strerror or exc}{where}"
            report.finished = _now_iso()
            _record(settings, report)
    except LockTimeout:
        raise TeamBusy("another memrecall team sync is running; this one was skipped") from None
    return report


def _record(settings: Settings, report: SyncReport) -> None:
    from .atomic import append_line, write_json_atomic

    previous = read_state(settings) or {}
    state = report.as_json()
    state["last_ok"] = report.finished if report.ok else previous.get("last_ok", "")
    try:
        write_json_atomic(state_path(settings), state)
        log = settings.logs_dir / LOG_FILE
        append_line(log, f"{report.finished} {report.line()}")
        _trim_log(log)
    except OSError as exc:
        report.notes.append(f"cannot record the sync: {exc.strerror or exc}")


def _trim_log(log: Path) -> None:
    """A Stop hook syncs after every answer: keep the log's newest lines, not years of them."""
    from .atomic import locked, write_atomic

    if log.stat().st_size <= LOG_MAX_BYTES:
        return
    with locked(log):
        lines = log.read_bytes().splitlines(keepends=True)
        write_atomic(log, b"".join(lines[-LOG_KEEP_LINES:]))


def _sync_locked(settings: Settings, git: Git, report: SyncReport) -> None:
    person, branch, main = report.person, report.branch, report.main
    offline = ""
    try:
        git.run("fetch", "--quiet", "--prune", "origin", network=True)
    except TeamError as exc:
        offline = str(exc).removeprefix("git fetch: ")
    main_tip = git.rev(f"refs/remotes/origin/{main}")
    if main_tip and _ensure_on_main(git, main, report.notes):
        report.main_updated = _fast_forward(git, main_tip, report.notes)
    if report.main_updated:  # the next prompt finds what teammates' merges brought
        from .index import refresh_if_present

        _, why = refresh_if_present(settings, wait=60)
        if why and why not in ("no index yet", "index disabled"):
            report.notes.append(why)
    mine = _reconcile(git, person, branch, report)
    mine = _commit_changes(settings, git, person, branch, mine, main_tip, report)
    remote = git.rev(f"refs/remotes/origin/{branch}")
    needed = mine is not None and mine != remote and not (
        remote is None and main_tip is not None and git.is_ancestor(mine, main_tip)
    )
    if offline:
        report.pending_push = needed
        report.problem = (
            f"cannot reach the team repository ({offline}); "
            + ("committed here, the next sync pushes" if needed else "the next sync retries")
        )
        return
    if needed:
        ref = f"refs/heads/{branch}"
        pushed = git.run("push", "--porcelain", "origin", f"{ref}:{ref}", network=True, check=False)
        if pushed.returncode != 0:
            report.pending_push = True
            porcelain = pushed.stdout.decode("utf-8", "replace").splitlines()
            refused = [line.rsplit("\t", 1)[-1] for line in porcelain if line.startswith("!")]
            why = refused[0] if refused else _one_line(pushed.stderr, "push failed")
            report.problem = f"push of {branch} refused ({why}); the next sync merges and retries"
            return
        report.pushed = True
    previous = read_state(settings) or {}
    unmerged = mine is not None and main_tip is not None and not git.is_ancestor(mine, main_tip)
    if unmerged and (report.pushed or not previous.get("pr")):
        report.pr, report.merge_hint = open_pull_request(settings, git, report)
    elif unmerged:
        report.pr = str(previous.get("pr") or "")
    elif mine is not None and main_tip is None:
        report.merge_hint = f"the remote has no {main} branch yet: create it, then merge {branch}"


def _fast_forward(git: Git, main_tip: str, notes: list[str]) -> bool:
    """Bring the checked-out main up to the remote's, fast-forward only: never a merge
    commit, never a rewrite. Whether it moved."""
    head = git.rev("HEAD")
    if head == main_tip or (head and git.is_ancestor(main_tip, head)):
        return False
    done = git.run("merge", "--ff-only", "--quiet", main_tip, check=False)
    if done.returncode != 0:
        notes.append(f"main not updated: {_one_line(done.stderr, 'not a fast-forward')}")
        return False
    return True


def _reconcile(git: Git, person: str, branch: str, report: SyncReport) -> str | None:
    """The person's branch after taking in what the remote copy of it has (a reviewer's
    fix, the same person's other machine): fast-forward when possible, else a merge commit
    whose folder keeps both sides (this machine's version where both changed a file)."""
    mine = git.rev(f"refs/heads/{branch}")
    remote = git.rev(f"refs/remotes/origin/{branch}")
    if remote is None or remote == mine:
        return mine
    if mine is None or git.is_ancestor(mine, remote):
        args = ["update-ref", f"refs/heads/{branch}", remote] + ([mine] if mine else [])
        git.run(*args)
        return remote
    if git.is_ancestor(remote, mine):
        return mine
    base = git.merge_base(mine, remote)
    merged, conflicts = merge3(
        git.entries(base, person), git.entries(mine, person), git.entries(remote, person)
    )
    _conflict_note(report, conflicts, f"origin/{branch}")
    message = f"memrecall: merge origin/{branch} into {branch}"
    return _write_commit(git, branch, person, [mine, remote], mine, merged, {}, message)


def _conflict_note(report: SyncReport, conflicts: list[str], where: str) -> None:
    if conflicts:
        shown = ", ".join(f"{report.person}/{rel}" for rel in conflicts[:3])
        report.notes.append(
            f"{len(conflicts)} files changed both here and in the team repository ({where}): "
            f"kept this machine's version, the other stays in the history ({shown})"
        )


def merge3(
    base: dict[str, Entry], ours: dict[str, Entry], theirs: dict[str, Entry],
) -> tuple[dict[str, Entry], list[str]]:
    """A three-way merge of two file listings; where both sides changed a file differently,
    ours wins (the other version stays in the merge's parent). Returns (merged, conflicts)."""
    merged: dict[str, Entry] = {}
    conflicts: list[str] = []
    for path in sorted(set(base) | set(ours) | set(theirs)):
        b, o, t = base.get(path), ours.get(path), theirs.get(path)
        if o == t or t == b:
            chosen = o
        elif o == b:
            chosen = t
        else:
            chosen = o if o is not None else t
            conflicts.append(path)
        if chosen is not None:
            merged[path] = chosen
    return merged, conflicts


@dataclass
class _Manifest:
    person: str = ""
    branch: str = ""
    commit: str = ""
    # path in the person's folder → [size, mtime_ns, blob id] of the source last committed
    files: dict[str, list[Any]] = field(default_factory=dict)


def _manifest_path(settings: Settings) -> Path:
    return settings.state_dir / MANIFEST_FILE


def _load_manifest(settings: Settings, person: str, branch: str) -> _Manifest:
    from .atomic import read_json

    raw = read_json(_manifest_path(settings), {})
    if not isinstance(raw, dict) or raw.get("person") != person or raw.get("branch") != branch:
        return _Manifest(person, branch)
    files = raw.get("files")
    valid = {
        k: v for k, v in (files.items() if isinstance(files, dict) else [])
        if isinstance(v, list) and len(v) == 3
    }
    return _Manifest(person, branch, str(raw.get("commit") or ""), valid)


def _save_manifest(settings: Settings, manifest: _Manifest) -> None:
    from .atomic import write_atomic

    data = {"person": manifest.person, "branch": manifest.branch, "commit": manifest.commit,
            "files": manifest.files}
    # One line, no indentation: a hundred thousand entries are read on every sync.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    write_atomic(_manifest_path(settings), text)


def _differences(
    manifest: _Manifest, live: dict[str, Source], present: set[str],
) -> tuple[list[str], list[str]]:
    """(new or changed files, files gone) since the last sync, by size and mtime alone."""
    changed = [
        rel for rel, src in live.items()
        if manifest.files.get(rel, [None, None])[:2] != [src.size, src.mtime_ns]
    ]
    gone = [rel for rel in manifest.files if rel not in live and rel.split("/", 1)[0] in present]
    return sorted(changed), sorted(gone)


def pending_changes(settings: Settings, person: str, branch: str) -> tuple[list[str], list[str]]:
    """(new or changed files, files gone since the last sync): what the next sync sends."""
    live, present = local_sources(settings)
    return _differences(_load_manifest(settings, person, branch), live, present)


def _object_format(git: Git) -> str:
    done = git.run("rev-parse", "--show-object-format", check=False)
    return done.stdout.decode("ascii", "replace").strip() if done.returncode == 0 else "sha1"


def _blob_id(data: bytes, object_format: str) -> str:
    digest = hashlib.sha256() if object_format == "sha256" else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _commit_changes(
    settings: Settings, git: Git, person: str, branch: str, mine: str | None,
    main_tip: str | None, report: SyncReport,
) -> str | None:
    """Commit what changed in this person's files since the last sync onto their branch.
    Returns the branch's tip afterwards."""
    manifest = _load_manifest(settings, person, branch)
    if manifest.commit not in ("", NO_BRANCH) and git.rev(manifest.commit) is None:
        # A new clone (the old one deleted): what the manifest names is not here to build on.
        manifest = _Manifest(person, branch)
    live, present = local_sources(settings)
    changed, gone = _differences(manifest, live, present)
    for prefix in (SUMMARIES, MEMORIES):
        if prefix not in present and any(rel.startswith(prefix + "/") for rel in manifest.files):
            report.notes.append(
                f"the local {prefix} folder is missing: its files stay as they are in the team"
            )
    if not changed and not gone and manifest.commit == (mine or NO_BRANCH):
        return mine

    # The new text of every changed file: redacted once more, then checked by the detector.
    object_format = _object_format(git)
    new_blobs: dict[str, bytes] = {}
    wanted: dict[str, str] = {}
    # Files left as they are this time: what the team has of them stays, and so does their
    # manifest entry, so the next sync looks at them again.
    skipped: dict[str, list[Any]] = {}
    for rel in sorted(changed):
        src = live[rel]
        why = ""
        raw = b""
        if src.size > MAX_SHARED_BYTES:
            why = f"{person}/{rel} is over {MAX_SHARED_BYTES >> 20} MB: not shared"
        else:
            try:
                raw = src.path.read_bytes()
            except OSError as exc:
                why = f"cannot read {src.path}: {exc.strerror or exc}; the next sync retries"
            if not why and b"\0" in raw:
                why = f"{person}/{rel} is not text: not shared"
        if why:
            report.notes.append(why)
            del live[rel]
            if rel in manifest.files:
                skipped[rel] = manifest.files[rel]
            continue
        data = shareable_text(raw).encode("utf-8")
        blob = _blob_id(data, object_format)
        new_blobs[blob] = data
        wanted[rel] = blob
    for rel, src in live.items():
        if rel not in wanted:
            wanted[rel] = manifest.files[rel][2]
    _refuse_secrets(person, new_blobs, wanted)

    # Which commits the new one stands on, and the person's folder it starts from.
    parents: list[str] = []
    outside = None
    if mine and main_tip and not (mine == main_tip or git.is_ancestor(main_tip, mine)):
        if git.is_ancestor(mine, main_tip):
            parents, outside = [main_tip], main_tip
            start = git.entries(main_tip, person)
        else:
            parents, outside = [mine, main_tip], main_tip
            base = git.merge_base(mine, main_tip)
            start, conflicts = merge3(
                git.entries(base, person), git.entries(mine, person), git.entries(main_tip, person)
            )
            _conflict_note(report, conflicts, report.main)
    elif mine or main_tip:
        tip = mine or main_tip
        assert tip is not None
        parents, outside = [tip], tip
        start = git.entries(tip, person)
    else:
        start = {}
    # A file changed here and, since this machine last sent it, in the team repository too.
    _conflict_note(report, [
        rel for rel, blob in wanted.items()
        if rel in manifest.files and rel in start
        and start[rel][1] not in (manifest.files[rel][2], blob)
    ], report.branch)
    folder = dict(start)
    if not folder:  # the first sync: the person's layout
        empty = _blob_id(b"", object_format)
        new_blobs[empty] = b""
        for layout in (SUMMARIES, MEMORIES):
            folder[f"{layout}/{KEEP}"] = ("100644", empty)
    for rel, blob in wanted.items():
        folder[rel] = (folder.get(rel, ("100644", ""))[0], blob)
    for rel in gone:
        entry = folder.pop(rel, None)
        if entry is None:
            continue
        if _archived_locally(settings, rel):
            target = _archive_path(rel)
            stem, dot, suffix = target.rpartition(".")
            n = 1
            while target in folder and folder[target] != entry:
                target = f"{stem}.{n}.{suffix}" if dot else f"{target}.{n}"
                n += 1
            folder[target] = entry
            report.archived += 1
        else:
            report.removed += 1
    first = git.entries(parents[0], person) if parents else {}
    updated = sorted(rel for rel, blob in wanted.items() if first.get(rel, ("", ""))[1] != blob)
    manifest.files = {rel: [live[rel].size, live[rel].mtime_ns, wanted[rel]] for rel in live}
    manifest.files.update(skipped)
    if folder == first or (mine is not None and folder == git.entries(mine, person)):
        # Nothing new from this person (a touched file; main moved): no commit, above all no
        # merge commit that only says "main moved".
        report.archived = report.removed = 0
        manifest.commit = mine or NO_BRANCH
        _save_manifest(settings, manifest)
        return mine
    report.copied = len(updated)
    message = _commit_message(person, report, updated)
    commit = _write_commit(git, branch, person, parents, outside, folder, new_blobs, message)
    report.commit = manifest.commit = commit
    _save_manifest(settings, manifest)
    return commit


def _refuse_secrets(person: str, new_blobs: dict[str, bytes], wanted: dict[str, str]) -> None:
    """The detector over every file this sync sends, its text and its name (the others
    passed it when they were sent); one finding and nothing is committed."""
    from .redact import redact_fast

    checked: set[str] = set()
    for rel, blob in sorted(wanted.items()):
        if blob not in new_blobs:
            continue  # sent before: checked then
        if redact_fast(rel) != rel:
            raise SecretFound(
                f"refused to commit: a file name looks like a secret ({person}/{redact_fast(rel)})"
            )
        if blob in checked:
            continue
        checked.add(blob)
        kinds = secrets_in(new_blobs[blob].decode("utf-8"))
        if kinds:
            raise SecretFound(
                f"refused to commit: the secret detector still finds {', '.join(kinds)} in "
                f"{person}/{rel} after redaction; edit the file and sync again"
            )


def _commit_message(person: str, report: SyncReport, paths: list[str]) -> str:
    head = (
        f"memrecall: {person}: {report.copied} added or updated, {report.archived} archived, "
        f"{report.removed} removed"
    )
    listed = [f"- {person}/{p}" for p in paths[:50]]
    if len(paths) > 50:
        listed.append(f"- … and {len(paths) - 50} more")
    body = "\n\n" + "\n".join(listed) if listed else ""
    return f"{head}{body}\n\nWritten by memrecall team sync.\n"


def _fi_path(path: str) -> bytes:
    """A path as fast-import reads it: C-quoted when it could be misread."""
    raw = os.fsencode(path)
    if raw.startswith(b'"') or any(c in raw for c in b'\\\n"'):
        escaped = raw.replace(b"\\", b"\\\\").replace(b'"', b'\\"').replace(b"\n", b"\\n")
        return b'"' + escaped + b'"'
    return raw


def _ident(git: Git, var: str, person: str) -> str:
    done = git.run("var", var, check=False)
    found = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode == 0 and found:
        return found
    # No identity configured: the commit is still this person's, named by their folder.
    return f"{person} <{person}@memrecall.invalid> {int(time.time())} +0000"


def _write_commit(
    git: Git, branch: str, person: str, parents: list[str], outside: str | None,
    folder: dict[str, Entry], new_blobs: dict[str, bytes], message: str,
) -> str:
    """One commit on `branch` whose tree is `outside`'s top level with the person's folder
    replaced by `folder`, through `git fast-import` (which refuses to move a branch anywhere
    but forward). Returns its id."""
    first = parents[0] if parents else None
    old_folder = git.entries(first, person)
    stream: list[bytes] = []
    marks: dict[str, int] = {}
    for blob, data in new_blobs.items():
        if blob in marks or not any(entry[1] == blob for entry in folder.values()):
            continue
        marks[blob] = len(marks) + 1
        stream.append(b"blob\nmark :%d\ndata %d\n" % (marks[blob], len(data)) + data + b"\n")
    commit_mark = len(marks) + 1
    text = message.encode("utf-8")
    stream.append(
        f"commit refs/heads/{branch}\nmark :{commit_mark}\n"
        f"author {_ident(git, 'GIT_AUTHOR_IDENT', person)}\n"
        f"committer {_ident(git, 'GIT_COMMITTER_IDENT', person)}\n".encode("utf-8")
        + b"data %d\n" % len(text) + text + b"\n"
    )
    if first:
        stream.append(f"from {first}\n".encode("ascii"))
    for other in parents[1:]:
        stream.append(f"merge {other}\n".encode("ascii"))
    if outside and outside != first:
        mine_top = git.entries(first)
        theirs_top = git.entries(outside)
        for name in sorted(set(mine_top) - set(theirs_top) - {person}):
            stream.append(b"D " + _fi_path(name) + b"\n")
        for name, (mode, obj) in sorted(theirs_top.items()):
            if name != person and mine_top.get(name) != (mode, obj):
                stream.append(f"M {mode} {obj} ".encode("ascii") + _fi_path(name) + b"\n")
    for rel in sorted(set(old_folder) - set(folder)):
        stream.append(b"D " + _fi_path(f"{person}/{rel}") + b"\n")
    for rel, (mode, blob) in sorted(folder.items()):
        if old_folder.get(rel) == (mode, blob):
            continue
        ref = f":{marks[blob]}" if blob in marks else blob
        stream.append(f"M {mode} {ref} ".encode("ascii") + _fi_path(f"{person}/{rel}") + b"\n")
    stream.append(b"\ndone\n")
    marks_file = git.cwd / ".git" / f"memrecall-marks-{os.getpid()}"
    try:
        git.run(
            "fast-import", "--quiet", "--done", f"--export-marks={marks_file}",
            data=b"".join(stream),
        )
        lines = marks_file.read_text(encoding="ascii").split("\n")
        exported = dict(line.split(" ", 1) for line in lines if line)
    finally:
        try:
            marks_file.unlink()
        except OSError:
            pass
    for blob, mark in marks.items():
        if exported.get(f":{mark}") != blob:
            raise TeamError("git stored a file under another id than expected; nothing was pushed")
    commit = exported.get(f":{commit_mark}", "")
    if not commit or git.rev(f"refs/heads/{branch}") != commit:
        raise TeamError(f"git did not move {branch} to the new commit; nothing was pushed")
    return commit


# --- pull requests --------------------------------------------------------------------------


def _tool_run(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="replace",
            timeout=timeout, env=_quiet_env(), stdin=subprocess.DEVNULL, check=False,
        )
    except subprocess.TimeoutExpired:
        raise TeamError(f"{Path(argv[0]).name} gave no answer within {timeout:.0f} s") from None
    except OSError as exc:
        raise TeamError(f"cannot run {argv[0]}: {exc.strerror or exc}") from None


def _pr_text(report: SyncReport) -> tuple[str, str]:
    title = f"memrecall: memories of {report.person}"
    body = (
        f"Session summaries and saved notes of **{report.person}**, shared by "
        "`memrecall team sync`.\n\n"
        f"Each sync adds to `{report.branch}`; merging it into `{report.main}` makes them part of "
        "every teammate's recall. Secrets were redacted and checked before each commit; read "
        "before merging all the same.\n\n"
        f"Last sync ({report.started}): {report.copied} added or updated, "
        f"{report.archived} archived, {report.removed} removed.\n"
    )
    return title, body


def _pr_tools(settings: Settings, git: Git) -> list[str]:
    choice = settings.team.pr
    if choice in ("gh", "glab"):
        return [choice]
    origin = git.run("config", "--get", "remote.origin.url", check=False)
    url = origin.stdout.decode("utf-8", "replace")
    return ["glab", "gh"] if "gitlab" in url.lower() else ["gh", "glab"]


def open_pull_request(settings: Settings, git: Git, report: SyncReport) -> tuple[str, str]:
    """Open (or refresh the text of) the pull request of the person's branch with `gh` or
    `glab` when one is installed and logged in. Returns (its URL, "") or ("", what to do)."""
    hint = f"merge {report.branch} into {report.main} (open a pull request for it)"
    if settings.team.pr == "none":
        return "", hint
    timeout = float(settings.team.timeout_seconds)
    for tool in _pr_tools(settings, git):
        exe = shutil.which(tool)
        if not exe:
            if settings.team.pr == tool:
                return "", f"{tool} not found on PATH; {hint}"
            continue
        try:
            if settings.team.pr == "auto":
                if _tool_run([exe, "auth", "status"], git.cwd, timeout).returncode:
                    continue  # installed, not logged in: not configured for this
            opener = _github_pr if tool == "gh" else _gitlab_mr
            return opener(exe, git.cwd, timeout, report), ""
        except TeamError as exc:
            return "", f"{tool} could not open the pull request ({exc}); {hint}"
    return "", hint


def _github_pr(exe: str, cwd: Path, timeout: float, report: SyncReport) -> str:
    title, body = _pr_text(report)
    return _open_or_update(
        "gh",
        [exe, "pr", "view", report.branch, "--json", "url,state"],
        lambda found: found.get("state") == "OPEN" and bool(found.get("url")),
        "url",
        [exe, "pr", "edit", report.branch, "--body", body],
        [exe, "pr", "create", "--base", report.main, "--head", report.branch,
         "--title", title, "--body", body],
        cwd, timeout, report.branch,
    )


def _gitlab_mr(exe: str, cwd: Path, timeout: float, report: SyncReport) -> str:
    title, body = _pr_text(report)
    return _open_or_update(
        "glab",
        [exe, "mr", "view", report.branch, "--output", "json"],
        lambda found: found.get("state") == "opened",
        "web_url",
        [exe, "mr", "update", report.branch, "--description", body],
        [exe, "mr", "create", "--source-branch", report.branch, "--target-branch", report.main,
         "--title", title, "--description", body, "--yes"],
        cwd, timeout, report.branch,
    )


def _open_or_update(
    tool: str,
    view: list[str],
    is_open: Callable[[dict[str, Any]], bool],
    url_key: str,
    update: list[str],
    create: list[str],
    cwd: Path,
    timeout: float,
    branch: str,
) -> str:
    """The branch's open pull/merge request, its text updated, or a new one: its URL (the
    branch when the tool prints none). GitHub's gh and GitLab's glab differ only in words."""
    seen = _tool_run(view, cwd, timeout)
    if seen.returncode == 0:
        try:
            found = json.loads(seen.stdout)
        except ValueError:
            found = {}
        if isinstance(found, dict) and is_open(found):
            edited = _tool_run(update, cwd, timeout)
            if edited.returncode:
                raise TeamError(_one_line(edited.stderr, f"{tool} {' '.join(update[1:3])} failed"))
            return str(found.get(url_key) or branch)
    made = _tool_run(create, cwd, timeout)
    if made.returncode:
        raise TeamError(_one_line(made.stderr, f"{tool} {' '.join(create[1:3])} failed"))
    return _last_url(made.stdout) or branch


def _last_url(text: str) -> str:
    found = re.findall(r"https?://\S+", text)
    return found[-1] if found else ""


# --- background and status ----------------------------------------------------------------


def start_background(settings: Settings) -> bool:
    """Start `memrecall team sync` detached (for a Stop hook: Claude Code never waits on
    the network). Its outcome goes to `$MEMRECALL_HOME/logs/team-sync.log`. Never raises."""
    if settings.internal or not settings.team.repo:
        return False
    try:
        settings.logs_dir.mkdir(parents=True, exist_ok=True)
        kwargs: dict[str, Any] = {}
        if os.name == "nt":
            # DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP
            kwargs["creationflags"] = 0x00000008 | 0x00000200
        else:
            kwargs["start_new_session"] = True
        log = open(settings.logs_dir / LOG_FILE, "ab")
        try:
            # `-P` and a folder of memrecall's own: never import a project's `memrecall/`.
            subprocess.Popen(
                [sys.executable, "-P", "-m", "memrecall", "team", "sync", "--detached"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=True,
                cwd=str(settings.home), env={**os.environ, "MEMRECALL_HOME": str(settings.home)},
                **kwargs,
            )
        finally:
            log.close()
        return True
    except Exception:
        return False


def log_line(settings: Settings, line: str) -> None:
    from .atomic import append_line

    try:
        append_line(settings.logs_dir / LOG_FILE, f"{_now_iso()} {line}")
    except OSError:
        pass


def status(settings: Settings) -> dict[str, Any]:
    """What is configured, the last sync, and what the next one would send."""
    team = settings.team
    found: dict[str, Any] = {
        "configured": bool(team.repo), "repo": team.repo, "clone": str(settings.team_dir),
        "cloned": (settings.team_dir / ".git").is_dir(), "person": team.name,
        "teammates": [label.removeprefix("team:") for _, label in settings.team_vaults()],
        "last_sync": read_state(settings),
    }
    if not found["configured"] or not found["cloned"]:
        return found
    git = Git(settings.team_dir, float(team.timeout_seconds))
    person, _ = person_of(settings, git)
    branch = team.branch or f"memrecall/{person}"
    changed, gone = pending_changes(settings, person, branch)
    mine = git.rev(f"refs/heads/{branch}")
    remote = git.rev(f"refs/remotes/origin/{branch}")
    found.update({
        "person": person, "branch": branch, "main": team.main or _remote_head(git) or "main",
        "pending": {"changed": len(changed), "gone": len(gone), "files": (changed + gone)[:20]},
        "unpushed": bool(mine and mine != remote),
    })
    return found

