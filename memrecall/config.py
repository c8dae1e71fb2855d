"""Settings: command-line flag > environment > `$MEMRECALL_HOME/config.toml` > default.

Stdlib only: this module sits on the hook's hot path. A malformed config file never raises;
the problem is recorded in `Settings.warnings` for the caller to show (CLI) or log (hook).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from .home import default_home as default_home  # the CLI and the tests ask config for it
from .home import expand as _expand
from .home import home_from_env
from .times import parse_instant

TOKENIZER_CHOICES = ("auto", "sudachi", "mecab", "regex")


@dataclass
class RecallSettings:
    budget_chars: int = 3000
    max_hits: int = 3
    deadline_ms: int = 1000
    # A candidate fires when its accumulated score reaches this; see README "Ranking".
    threshold: float = 2.0
    decay: float = 0.5
    max_keywords: int = 16
    log_prompt: bool = False
    min_prompt_chars: int = 6


@dataclass
class SummarizeSettings:
    backend: str = "claude"
    language: str = "auto"
    min_human_turns: int = 3
    min_chars: int = 400
    max_sessions: int = 20
    max_input_chars: int = 60_000
    chunk_chars: int = 20_000
    quiet_minutes: int = 10
    model: str = "haiku"
    claude_command: str = "claude"
    command: str = ""
    exclude_projects: list[str] = field(default_factory=list)
    optout_marker: str = "#memrecall:off"
    max_attempts: int = 3
    timeout_seconds: int = 300


@dataclass
class IndexSettings:
    # `false`: always search with ripgrep (no index is built or read).
    enabled: bool = True
    # A hook that finds the index older than this starts a background refresh; an edited
    # note is findable from the prompt after that refresh (README "The index").
    refresh_seconds: int = 30
    # Whether a hook may start a detached refresh/build (MEMRECALL_INDEX=manual: never).
    background: bool = True


@dataclass
class TeamSettings:
    """`[team]`: one git repository shared by a team (README "Team memory")."""

    # Clone URL or path; empty: no team memory.
    repo: str = ""
    # This person's folder in the repository (`team init` records it).
    name: str = ""
    # The branch this person's syncs push to; empty: `memrecall/<name>`.
    branch: str = ""
    # The branch the team merges into; empty: the remote's HEAD, else `main`.
    main: str = ""
    # Where the clone lives; empty: `$MEMRECALL_HOME/team`.
    clone: str = ""
    # Who opens the pull request: auto (gh or glab when configured), gh, glab, none.
    pr: str = "auto"
    # Each git or gh/glab call that may wait on the network gives up after this.
    timeout_seconds: int = 120


TEAM_PR_CHOICES = ("auto", "gh", "glab", "none")
_UNSAFE_FOLDER_CHARS = re.compile(r"[^a-z0-9._-]+")


def team_folder_name(text: str) -> str:
    """A person's folder name from a name or an e-mail's local part: lower-case ASCII
    letters, digits, `.`, `_` and `-`, never a dot-name or a path (`../x` gives `x`)."""
    local = text.strip().split("@", 1)[0].lower()
    return _UNSAFE_FOLDER_CHARS.sub("-", local).strip(".-_")[:64].strip(".-_")


@dataclass
class Settings:
    home: Path
    obsidian: list[Path]
    beads: list[Path]
    summaries: Path
    claude_projects: Path
    tokenizer: str
    now: datetime
    internal: bool
    retention_days: int = 90
    recall: RecallSettings = field(default_factory=RecallSettings)
    summarize: SummarizeSettings = field(default_factory=SummarizeSettings)
    index: IndexSettings = field(default_factory=IndexSettings)
    warnings: list[str] = field(default_factory=list)
    config_path: Path | None = None
    # Where `memrecall save` writes notes; searched as one more vault once it exists.
    memories: Path | None = None
    team: TeamSettings = field(default_factory=TeamSettings)

    @property
    def memories_dir(self) -> Path:
        return self.memories or self.home / "memories"

    def vaults(self) -> list[tuple[Path, str]]:
        """Every markdown vault to search with the label its documents' refs carry: the
        configured ones (labelled by folder name when there are several), the saved
        memories folder, once `memrecall save` has made it, and the team's folders."""
        several = len(self.obsidian) > 1
        found = [(vault, vault.name if several else "") for vault in self.obsidian]
        memories = self.memories_dir
        if memories not in self.obsidian and memories.is_dir():
            found.append((memories, "memories"))
        return found + self.team_vaults()

    @property
    def team_dir(self) -> Path:
        return _expand(self.team.clone) if self.team.clone else self.home / "team"

    def team_vaults(self) -> list[tuple[Path, str]]:
        """Each teammate's folder in the team clone as a vault labelled `team:<person>`, so
        a hit's ref names its author. This person's own folder is left out: their
        originals (summaries, memories) are searched already, and would show twice."""
        if not self.team.repo:
            return []
        root = self.team_dir
        try:
            entries = sorted(os.scandir(root), key=lambda entry: entry.name)
        except OSError:
            return []
        own = self.team.name
        return [
            (root / entry.name, f"team:{entry.name}")
            for entry in entries
            if not entry.name.startswith(".")
            and entry.name != own
            and entry.is_dir(follow_symlinks=False)
        ]

    @property
    def state_dir(self) -> Path:
        return self.home / "state"

    @property
    def logs_dir(self) -> Path:
        return self.home / "logs"

    @property
    def user_stopwords(self) -> Path:
        return self.home / "stopwords.txt"

    @property
    def user_synonyms(self) -> Path:
        return self.home / "synonyms.txt"

    @property
    def user_generic(self) -> Path:
        return self.home / "generic.txt"

    @property
    def work_dir(self) -> Path:
        """Where the summarizer's own `claude -p` runs: summarize always skips it."""
        return self.home / "work"


def _path_list(value: Any) -> list[Path]:
    if isinstance(value, str):
        parts = [p for p in value.split(os.pathsep) if p.strip()]
    elif isinstance(value, (list, tuple)):
        parts = [str(p) for p in value if str(p).strip()]
    else:
        raise TypeError("expected a path or a list of paths")
    return [_expand(p.strip()) for p in parts]


def _read_config_file(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        warnings.append(f"cannot read config {path}: {exc.strerror or exc}; using defaults")
        return {}
    import tomllib  # only when a config file exists: ~5 ms the hook usually saves

    try:
        return tomllib.loads(raw.decode("utf-8", errors="replace"))
    except tomllib.TOMLDecodeError as exc:
        warnings.append(f"config {path} is not valid TOML ({exc}); using defaults")
        return {}


def _apply_section(target: Any, values: Any, section: str, warnings: list[str]) -> None:
    if not isinstance(values, dict):
        warnings.append(f"config [{section}] must be a table; ignored")
        return
    for key, value in values.items():
        if not hasattr(target, key):
            warnings.append(f"config [{section}] has unknown key {key!r}; ignored")
            continue
        current = getattr(target, key)
        if isinstance(current, bool):
            ok = isinstance(value, bool)
        elif isinstance(current, float):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            value = float(value) if ok else value
        elif isinstance(current, int):
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif isinstance(current, list):
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
        else:
            ok = isinstance(value, str)
        if not ok:
            warnings.append(f"config [{section}] {key} has the wrong type; using {current!r}")
            continue
        bounds = _BOUNDS.get((section, key))
        # `not lo <= v <= hi` also rejects nan. `max_keywords = 0` or `deadline_ms = -1`
        # silently turned recall off (or killed every hook at once): a mistyped value.
        if bounds is not None and not bounds[0] <= value <= bounds[1]:
            warnings.append(
                f"config [{section}] {key} = {value!r} is out of range "
                f"{bounds[0]}..{bounds[1]}; using {current!r}"
            )
            continue
        setattr(target, key, value)


_BOUNDS: dict[tuple[str, str], tuple[float, float]] = {
    ("recall", "budget_chars"): (200, 9500),  # Claude Code replaces output over 10,000 chars
    ("recall", "max_hits"): (1, 20),
    ("recall", "deadline_ms"): (50, 8000),  # the hook's timeout in settings.json is 10 s
    ("recall", "threshold"): (0.0, 1e6),
    ("recall", "decay"): (0.0, 1.0),
    ("recall", "max_keywords"): (1, 200),
    ("recall", "min_prompt_chars"): (0, 10_000),
    ("summarize", "min_human_turns"): (0, 10_000),
    ("summarize", "min_chars"): (0, 10_000_000),
    ("summarize", "max_sessions"): (0, 100_000),
    ("summarize", "max_input_chars"): (1000, 10_000_000),
    ("summarize", "chunk_chars"): (1000, 10_000_000),
    ("summarize", "quiet_minutes"): (0, 100_000),
    ("summarize", "max_attempts"): (1, 1000),
    ("summarize", "timeout_seconds"): (1, 86_400),
    ("index", "refresh_seconds"): (1, 86_400),
    ("team", "timeout_seconds"): (5, 86_400),
}


# The earliest cut-off any reader computes; a day's margin keeps local-time conversions in range.
_EARLIEST = datetime(1, 1, 3, tzinfo=timezone.utc)
# Room for one short memory beside the template's own text (measured: a summary hit with its
# path and one quoted line renders in about 170 characters).
ONE_HIT_CHARS = 200


def _min_budget() -> int | None:
    """The smallest recall.budget_chars that can inject anything: the context template's own
    text plus one short memory. None when the template cannot be read (recall reports that)."""
    from .resources import template

    try:
        frame = template("context.md").replace("{hits}", "").strip()
    except OSError:
        return None
    return len(frame) + ONE_HIT_CHARS


_TOP_KEYS = {
    "index",
    "obsidian",
    "beads",
    "summaries",
    "memories",
    "claude_projects",
    "tokenizer",
    "retention_days",
}


def claude_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """Claude Code's own tree: `~/.claude`, or `$CLAUDE_CONFIG_DIR`, which moves all of it
    (settings.json and the transcripts under projects/)."""
    configured = (os.environ if env is None else env).get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"


def load_settings(
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Build the effective settings. `overrides` are command-line flags (None = not given)."""
    env = os.environ if environ is None else environ
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    warnings: list[str] = []

    home = _expand(flags["home"]) if "home" in flags else home_from_env(env)
    config_path = home / "config.toml"
    file_values = _read_config_file(config_path, warnings)

    recall = RecallSettings()
    summarize = SummarizeSettings()
    index = IndexSettings()
    team = TeamSettings()
    index_env = env.get("MEMRECALL_INDEX", "").strip().lower()
    for key, value in file_values.items():
        if key == "recall":
            _apply_section(recall, value, "recall", warnings)
        elif key == "index":
            _apply_section(index, value, "index", warnings)
        elif key == "summarize":
            _apply_section(summarize, value, "summarize", warnings)
        elif key == "team":
            _apply_section(team, value, "team", warnings)
        elif key not in _TOP_KEYS:
            warnings.append(f"config has unknown key {key!r}; ignored")
    if index_env in ("0", "off", "false", "no"):
        index.enabled = False
    elif index_env in ("1", "on", "true", "yes"):
        index.enabled = True
    elif index_env == "manual":
        index.enabled, index.background = True, False
    elif index_env:
        warnings.append(f"MEMRECALL_INDEX={index_env!r} is not on, off or manual; ignored")
    deadline_env = env.get("MEMRECALL_DEADLINE_MS", "").strip()
    if deadline_env:
        # For a slow machine (and the test suite on one): one variable, no config file edit.
        lo, hi = _BOUNDS[("recall", "deadline_ms")]
        if deadline_env.isdigit() and lo <= int(deadline_env) <= hi:
            recall.deadline_ms = int(deadline_env)
        else:
            warnings.append(
                f"MEMRECALL_DEADLINE_MS={deadline_env!r} is not a whole number of ms in "
                f"{lo:.0f}..{hi:.0f}; using {recall.deadline_ms}"
            )
    if recall.budget_chars < RecallSettings.budget_chars:  # the template is read only then
        least = _min_budget()
        if least is not None and recall.budget_chars < least:
            warnings.append(
                f"config [recall] budget_chars = {recall.budget_chars} cannot hold "
                "the context template and "
                f"one memory (at least {least}); using {RecallSettings.budget_chars}"
            )
            recall.budget_chars = RecallSettings.budget_chars

    def pick(name: str, env_name: str) -> Any:
        if name in flags:
            return flags[name]
        if env.get(env_name):
            return env[env_name]
        return file_values.get(name)

    def paths(name: str, env_name: str) -> list[Path]:
        value = pick(name, env_name)
        if value is None:
            return []
        try:
            return _path_list(value)
        except TypeError:
            warnings.append(f"config {name} must be a path or a list of paths; ignored")
            return []

    def one_path(name: str, env_name: str, default: Path) -> Path:
        found = paths(name, env_name)
        return found[0] if found else default

    tokenizer = str(pick("tokenizer", "MEMRECALL_TOKENIZER") or "auto").strip().lower()
    if tokenizer not in TOKENIZER_CHOICES and not tokenizer.startswith("command:"):
        warnings.append(f"unknown tokenizer {tokenizer!r}; using auto")
        tokenizer = "auto"

    now_text = env.get("MEMRECALL_NOW") if "now" not in flags else flags["now"]
    now = datetime.now(timezone.utc)
    if now_text:
        try:
            now = parse_instant(str(now_text))
        except ValueError:
            warnings.append(f"MEMRECALL_NOW={now_text!r} is not an ISO-8601 time; using the clock")

    _team_from_env(team, env, warnings)

    retention = file_values.get("retention_days", 90)
    if "retention_days" in flags:
        retention = flags["retention_days"]
    if not isinstance(retention, int) or isinstance(retention, bool) or retention < 1:
        warnings.append("config retention_days must be a positive integer; using 90")
        retention = 90
    # `retention_days = 999999` means "keep forever". Every reader computes now - retention,
    # which must stay after year 1 or it overflows (and recall stops): clamp, no warning.
    retention = min(retention, max(1, (now - _EARLIEST).days))

    return Settings(
        home=home,
        obsidian=paths("obsidian", "MEMRECALL_OBSIDIAN"),
        beads=paths("beads", "MEMRECALL_BEADS"),
        summaries=one_path("summaries", "MEMRECALL_SUMMARIES", home / "summaries"),
        memories=one_path("memories", "MEMRECALL_MEMORIES", home / "memories"),
        claude_projects=one_path(
            "claude_projects", "MEMRECALL_CLAUDE_PROJECTS", claude_config_dir(env) / "projects"
        ),
        tokenizer=tokenizer,
        now=now,
        internal=bool(env.get("MEMRECALL_INTERNAL")),
        retention_days=retention,
        recall=recall,
        summarize=summarize,
        index=index,
        warnings=warnings,
        config_path=config_path,
        team=team,
    )


def _team_from_env(team: TeamSettings, env: Mapping[str, str], warnings: list[str]) -> None:
    """MEMRECALL_TEAM_<KEY> beats `[team] <key>`; then the values are checked."""
    for key in ("repo", "name", "branch", "main", "clone", "pr"):
        value = env.get(f"MEMRECALL_TEAM_{key.upper()}", "").strip()
        if value:
            setattr(team, key, value)
    team.repo, team.branch, team.main = team.repo.strip(), team.branch.strip(), team.main.strip()
    if team.name:
        safe = team_folder_name(team.name)
        if safe != team.name:
            # A name that is not a plain folder name could point outside the clone.
            instead = f"using {safe!r}" if safe else "ignored"
            warnings.append(
                f"[team] name {team.name!r} is not a plain folder name (a-z 0-9 . _ -); {instead}"
            )
            team.name = safe
    team.pr = team.pr.strip().lower()
    if team.pr not in TEAM_PR_CHOICES:
        choices = ", ".join(TEAM_PR_CHOICES)
        warnings.append(f"[team] pr = {team.pr!r} is not one of {choices}; using auto")
        team.pr = "auto"
