"""Team memory over git: what people on a team notice.

Local bare repositories stand in for the remote (no network). Each simulated person has their
own MEMRECALL_HOME and clone; a "maintainer" clone merges their branches into main, as a
reviewer merging a pull request would. Git never reads the machine's own configuration: HOME
is a temporary folder and the identity comes from the environment.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from memrecall import team as team_mod
from memrecall.__main__ import main
from memrecall.config import load_settings, team_folder_name

GIT = shutil.which("git")
BRANCH = "memrecall/alice"
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

SECRETS = {
    "aws": "AKIAQ7RX4MZP2VKDBRCH",
    "github": "ghp_CwdFolder7Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9P",
    "url-password": "S3cr3t-Pa55w0rd-Z9",
    "private-key": "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw",
}
PRIVATE_KEY_BLOCK = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    f"{SECRETS['private-key']}\n"
    "7bL3ZQzC5Rj0mK8vN2pX4sT6wY9aB1cD3eF5gH7iJ9kL1mN3oP5qR7sT9uV1wX3y\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.fixture(autouse=True)
def git_sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No global or system git config, no prompts; an identity from the environment."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for key in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{key}_NAME", "Test Person")
        monkeypatch.setenv(f"GIT_{key}_EMAIL", "test@example.com")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        [GIT or "git", "-c", "user.email=test@example.com", "-c", "user.name=Test", *args],
        cwd=cwd, capture_output=True, text=True, check=False, timeout=120,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """A bare team repository whose main holds a README and a folder everyone shares."""
    bare = tmp_path / "team-memory.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "--quiet", str(bare), str(seed))
    (seed / "README.md").write_text("# Team memory\n", encoding="utf-8")
    (seed / "shared").mkdir()
    conventions = seed / "shared" / "conventions.md"
    conventions.write_text("# Conventions\nReview every PR.\n", encoding="utf-8")
    git(seed, "add", ".")
    git(seed, "commit", "--quiet", "-m", "start")
    git(seed, "push", "--quiet", "origin", "HEAD:main")
    return bare


class Maintainer:
    """Someone merging pull requests into main, by hand, as a team does."""

    def __init__(self, bare: Path, where: Path) -> None:
        self.bare = bare
        self.work = where
        git(where.parent, "clone", "--quiet", str(bare), str(where))

    def merge(self, branch: str) -> None:
        git(self.work, "fetch", "--quiet", "origin")
        git(self.work, "merge", "--quiet", "--no-ff", "-m", f"Merge {branch}", f"origin/{branch}")
        git(self.work, "push", "--quiet", "origin", "HEAD:main")

    def commit_on(self, branch: str, path: str, text: str) -> None:
        """A commit straight onto a branch of the remote (a reviewer's fix, a direct edit)."""
        git(self.work, "fetch", "--quiet", "origin")
        git(self.work, "checkout", "--quiet", "-B", f"work-{branch}", f"origin/{branch}")
        target = self.work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        git(self.work, "add", path)
        git(self.work, "commit", "--quiet", "-m", f"edit {path}")
        git(self.work, "push", "--quiet", "origin", f"HEAD:{branch}")
        git(self.work, "checkout", "--quiet", "main")
        git(self.work, "reset", "--quiet", "--hard", "origin/main")


class Person:
    """One teammate: a MEMRECALL_HOME of their own, memrecall run as a separate process."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.home = root / name / "memrecall"
        self.home.mkdir(parents=True)
        self.env = {
            **os.environ, "MEMRECALL_HOME": str(self.home), "MEMRECALL_INDEX": "off",
            "MEMRECALL_NOW": "2026-12-04T12:00:00+00:00",
        }

    @property
    def clone(self) -> Path:
        return self.home / "team"

    def run(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memrecall", *args], input=stdin, capture_output=True,
            text=True, env={**self.env, **(env or {})}, timeout=300, check=False,
            cwd=cwd or self.home,
        )

    def ok(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        done = self.run(*args, **kwargs)
        assert done.returncode == 0, done.stderr
        return done

    def summary(self, day: str, sid: str, title: str, body: str) -> Path:
        path = self.home / "summaries" / day[:4] / day[5:7] / f"{day}-{sid}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ntitle: {title}\ndate: {day}T10:00:00+09:00\nsession_id: {sid}-1111-2222\n"
            f"project: shop\n---\n## {title}\n{body}\n", encoding="utf-8",
        )
        return path

    def save(self, note: str) -> None:
        self.ok("save", "--project", "shop", "--force", stdin=note)

    def search(self, query: str, **env: str) -> list[dict[str, Any]]:
        done = self.run("search", query, "--json", "--limit", "20", env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if done.stdout.strip() else []

    def recall(self, prompt: str, session: str = "s1", **env: str) -> str:
        hook = json.dumps(
            {"session_id": session, "prompt": prompt, "hook_event_name": "UserPromptSubmit"}
        )
        done = self.run("recall", stdin=hook, env=env)
        assert done.returncode == 0 and not done.stderr
        return done.stdout

    def settings(self) -> Any:
        return load_settings(environ=self.env)


@pytest.fixture
def people(tmp_path: Path) -> dict[str, Person]:
    return {name: Person(tmp_path, name) for name in ("alice", "bob", "carol")}


def log_all(bare: Path) -> str:
    """Every commit of every branch, patches included: what anyone who can fetch can read."""
    return git(bare, "log", "-p", "--all", "--format=%H%n%an%n%B")


def branch_files(bare: Path, branch: str) -> list[str]:
    return git(bare, "ls-tree", "-r", "--name-only", branch).split()


# --- init and [team] ------------------------------------------------------------------------------


USER_CONFIG = """\
# my memrecall settings — keep these comments
obsidian = ["~/vaults/work"]   # the work vault

[recall]
threshold = 2.5  # quieter

[summarize]
backend = "extractive"
"""


def test_init_clones_and_appends_team_to_the_users_config_untouched(
    remote: Path, people: dict[str, Person],
) -> None:
    alice = people["alice"]
    config = alice.home / "config.toml"
    config.write_text(USER_CONFIG, encoding="utf-8")
    done = alice.ok("team", "init", str(remote), "--name", "alice")
    assert "cloned into" in done.stderr and "'alice'" in done.stderr
    text = config.read_text(encoding="utf-8")
    assert text.startswith(USER_CONFIG)  # every byte the user wrote, in place
    assert text[len(USER_CONFIG):] == f'\n[team]\nrepo = "{remote}"\nname = "alice"\n'
    backups = list(alice.home.glob("config.toml.memrecall-backup-*"))
    assert [b.read_text(encoding="utf-8") for b in backups] == [USER_CONFIG]
    assert (alice.clone / "README.md").is_file()
    assert git(alice.clone, "branch", "--show-current").strip() == "main"
    # Again: nothing changes, no second backup.
    again = alice.ok("team", "init", str(remote), "--name", "alice")
    assert "already cloned" in again.stderr and "already in" in again.stderr
    assert config.read_text(encoding="utf-8") == text
    assert len(list(alice.home.glob("config.toml.memrecall-backup-*"))) == 1


def test_init_edits_an_existing_team_section_in_place(
    remote: Path, people: dict[str, Person],
) -> None:
    alice = people["alice"]
    config = alice.home / "config.toml"
    original = (
        '[team]\r\n# who opens pull requests\r\npr = "none"\r\nname = "old-name"  # typo\r\n\r\n'
        "[recall]\r\nthreshold = 3.0\r\n"
    )
    config.write_bytes(original.encode("utf-8"))
    alice.ok("team", "init", str(remote), "--name", "Alice")
    text = config.read_bytes().decode("utf-8")
    assert text == (
        '[team]\r\n# who opens pull requests\r\npr = "none"\r\nname = "alice"\r\n'
        f'repo = "{remote}"\r\n\r\n[recall]\r\nthreshold = 3.0\r\n'
    )
    parsed = tomllib.loads(text)
    assert parsed["team"] == {"pr": "none", "name": "alice", "repo": str(remote)}
    assert parsed["recall"] == {"threshold": 3.0}


def test_init_takes_the_folder_name_from_git_user_email(
    remote: Path, people: dict[str, Person], git_sandbox: Path,
) -> None:
    gitconfig = git_sandbox / ".gitconfig"
    gitconfig.write_text("[user]\n\temail = Jane.Doe+memo@example.com\n", encoding="utf-8")
    alice = people["alice"]
    alice.ok("team", "init", str(remote))
    team = alice.settings().team
    assert (team.repo, team.name) == (str(remote), "jane.doe-memo")
    assert team_folder_name("../../etc") == "etc" and team_folder_name(".git") == "git"


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("missing-path", "Error: no repository at "),
        ("bad-url", "Error: cannot clone file:///no/such/team.git: fatal: "),
        ("other-clone", " is a clone of "),
        ("not-a-clone", " exists and is not a git clone; move it away or set [team] clone"),
        ("no-git", "Error: git not found on PATH; install git and try again"),
        ("option-like", "Error: not a repository URL or path: '--upload-pack=touch x'"),
        ("unusable-name", "Error: --name '山田' has nothing a folder name can use (a-z 0-9 . _ -)"),
    ],
)
def test_init_refuses_in_one_line(
    case: str, expected: str, remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice = people["alice"]
    args = [str(remote)]
    env: dict[str, str] = {}
    if case == "missing-path":
        args = [str(tmp_path / "nowhere.git")]
    elif case == "bad-url":
        args = ["file:///no/such/team.git"]
    elif case == "other-clone":
        other = tmp_path / "other.git"
        git(tmp_path, "init", "--quiet", "--bare", str(other))
        git(tmp_path, "clone", "--quiet", str(other), str(alice.clone))
    elif case == "not-a-clone":
        alice.clone.mkdir()
        (alice.clone / "mine.md").write_text("mine\n", encoding="utf-8")
    elif case == "no-git":
        env = {"PATH": str(tmp_path / "empty-bin")}
    elif case == "option-like":
        args = ["--", "--upload-pack=touch x"]
    elif case == "unusable-name":
        args += ["--name", "山田"]
    done = alice.run("team", "init", *args, env=env)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], done.stderr
    assert not (alice.home / "config.toml").exists()
    if case in ("missing-path", "bad-url", "no-git", "option-like", "unusable-name"):
        assert not alice.clone.exists()
        assert not any(p.name.startswith(".team.") for p in alice.home.iterdir())


# --- sync: sharing, recall, never main ------------------------------------------------------


def setup_team(remote: Path, people: dict[str, Person], names: tuple[str, ...]) -> None:
    for name in names:
        people[name].ok("team", "init", str(remote), "--name", name)


def test_teammates_recall_each_others_memories_after_the_merge(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    setup_team(remote, people, ("alice", "bob", "carol"))
    alice.summary(
        "2026-12-01", "a1b2c3d4", "決済APIのタイムアウト", "PAY-1234 のタイムアウトは 7 秒に決定。"
    )
    alice.save("# Kafka consumer lag\nmax.poll.records を 100 に下げて KAFKA-77 の遅延を解決。\n")
    bob.summary(
        "2026-12-02", "b0b0b0b0", "在庫同期バッチ", "INV-4521 の二重加算は冪等キーで直した。"
    )
    main_before = git(remote, "rev-parse", "main").strip()

    for person in (alice, bob, carol):
        done = person.ok("team", "sync")
        assert f"team sync ({person.name} → memrecall/{person.name})" in done.stdout
        assert f"merge memrecall/{person.name} into main" in done.stdout
    assert git(remote, "rev-parse", "main").strip() == main_before  # nobody but people merge
    shared = branch_files(remote, "memrecall/alice")
    assert "alice/summaries/2026/12/2026-12-01-a1b2c3d4.md" in shared
    assert any(f.startswith("alice/memories/shop/") for f in shared)
    assert "carol/summaries/.gitkeep" in branch_files(remote, "memrecall/carol")  # the layout

    maintainer = Maintainer(remote, tmp_path / "maintainer")
    maintainer.merge("memrecall/alice")
    maintainer.merge("memrecall/bob")
    for person in (alice, bob, carol):
        person.ok("team", "sync")

    # Search and the hook, in bob's and carol's homes, find alice's memories, author shown.
    for reader in (bob, carol):
        hits = reader.search("PAY-1234 タイムアウト")
        assert [h["ref"] for h in hits] == ["team:alice/summaries/2026/12/2026-12-01-a1b2c3d4.md"]
        assert team_mod.author_of(hits[0]["ref"]) == "alice"
        assert "7 秒" in hits[0]["snippet"]
        injected = reader.recall("PAY-1234 のタイムアウト何秒だっけ")
        assert "team/alice/summaries/2026/12/2026-12-01-a1b2c3d4.md" in injected
        kafka = reader.search("KAFKA-77")
        assert [team_mod.author_of(h["ref"]) for h in kafka] == ["alice"]
        shown = reader.ok("show", kafka[0]["ref"]).stdout  # the pull path reads it too
        assert "Kafka consumer lag" in shown and "KAFKA-77" in shown
    bobs = [h["ref"] for h in carol.search("INV-4521")]
    assert bobs == ["team:bob/summaries/2026/12/2026-12-02-b0b0b0b0.md"]
    # Alice's own memories come once, from her own folders: never again from the team clone.
    own = alice.search("PAY-1234 タイムアウト") + alice.search("KAFKA-77")
    assert len(own) == 2 and not any(h["ref"].startswith("team:") for h in own)
    assert (alice.clone / "alice" / "summaries" / "2026").is_dir()  # it is in her clone, unread
    # main only ever moved by the maintainer's merges; no commit on it is memrecall's own.
    subjects = git(remote, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert subjects == ["Merge memrecall/bob", "Merge memrecall/alice", "start"]


def test_the_index_engine_finds_team_notes_after_a_sync(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice, bob = people["alice"], people["bob"]
    setup_team(remote, people, ("alice", "bob"))
    bob.env["MEMRECALL_INDEX"] = "manual"
    bob.ok("index", "build")
    alice.summary(
        "2026-12-03", "c0ffee00", "Redis のキャッシュ設計", "CACHE-314 は TTL 600 秒で確定。"
    )
    alice.ok("team", "sync")
    Maintainer(remote, tmp_path / "maintainer").merge("memrecall/alice")
    bob.ok("team", "sync")  # pulls main and refreshes bob's index
    injected = bob.recall("CACHE-314 の TTL は？")
    assert "team/alice/summaries/2026/12/2026-12-03-c0ffee00.md" in injected
    lines = (bob.home / "logs").glob("recall-*.jsonl")
    logged = [line for f in lines for line in f.read_text(encoding="utf-8").splitlines()]
    last = json.loads(logged[-1])
    assert last["engine"] == "index"
    hits = bob.search("CACHE-314", MEMRECALL_INDEX="off")  # and ripgrep agrees
    assert [h["ref"] for h in hits] == ["team:alice/summaries/2026/12/2026-12-03-c0ffee00.md"]


def test_a_planted_secret_never_reaches_any_commit(remote: Path, people: dict[str, Person]) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    body = (
        f"AWS: aws_access_key_id = {SECRETS['aws']}\n"
        f"GitHub token {SECRETS['github']} in CI.\n"
        f"DB: postgres://app:{SECRETS['url-password']}@db.internal:5432/shop\n"
        f"deploy key:\n{PRIVATE_KEY_BLOCK}\n"
    )
    # Written straight to disk, as if summarize's own redaction had missed them all.
    alice.summary("2026-12-01", "5ec12e75", "Deploy notes", body)
    memory = alice.home / "memories" / "shop" / "2026-12-01-deploy.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(f"# Deploy\n{body}", encoding="utf-8")
    alice.ok("team", "sync")
    history = log_all(remote)
    assert "alice/summaries/2026/12/2026-12-01-5ec12e75.md" in history
    for kind, secret in SECRETS.items():
        assert secret not in history, kind
    assert history.count("[REDACTED:") >= 2 * len(SECRETS)
    assert SECRETS["aws"] in memory.read_text(encoding="utf-8")  # the original stays as it was


def test_the_detector_refuses_the_commit_when_redaction_missed_something(
    remote: Path, people: dict[str, Person], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    alice.summary("2026-12-01", "5ec12e75", "Deploy notes", f"key {SECRETS['aws']}")
    # A redaction that lets everything through: the detector is the last line of defence.
    monkeypatch.setattr(team_mod, "shareable_text", lambda raw: raw.decode("utf-8"))
    for name, value in alice.env.items():
        if name.startswith("MEMRECALL_"):
            monkeypatch.setenv(name, value)
    assert main(["team", "sync"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "Error: refused to commit: the secret detector still finds aws-access-key in "
        "alice/summaries/2026/12/2026-12-01-5ec12e75.md after redaction; "
        "edit the file and sync again"
    ]
    assert "memrecall/alice" not in git(remote, "branch", "--list")
    assert git(alice.clone, "branch", "--list", "memrecall/alice") == ""
    assert SECRETS["aws"] not in log_all(remote)
    # Nothing unredacted reached the clone's object store either, not even a loose blob.
    stored = subprocess.run(
        [GIT or "git", "cat-file", "--batch-all-objects", "--batch"], cwd=alice.clone,
        capture_output=True, check=True, timeout=120,
    ).stdout
    assert b"Deploy notes" not in stored and SECRETS["aws"].encode() not in stored
    state = json.loads((alice.home / "state" / "team-sync.json").read_text(encoding="utf-8"))
    assert state["ok"] is False and state["problem"].startswith("refused to commit")


def test_a_sync_with_nothing_new_reads_nothing_and_commits_nothing(
    remote: Path, people: dict[str, Person], monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    for n in range(5):
        alice.summary(f"2026-12-0{n + 1}", f"0000000{n}", f"note {n}", f"topic NOTE-{n}")
    alice.ok("team", "sync")
    tip = git(remote, "rev-parse", "memrecall/alice").strip()

    def no_reading(raw: bytes) -> str:
        raise AssertionError("an unchanged file was read again")

    monkeypatch.setattr(team_mod, "shareable_text", no_reading)
    report = team_mod.sync(alice.settings())
    assert report.ok and (report.copied, report.commit, report.pushed) == (0, "", False)
    assert git(remote, "rev-parse", "memrecall/alice").strip() == tip
    # A file touched but not changed: read, found equal, no commit.
    monkeypatch.undo()
    os.utime(alice.home / "summaries" / "2026" / "12" / "2026-12-01-00000000.md")
    report = team_mod.sync(alice.settings())
    assert report.ok and report.commit == ""
    assert git(remote, "rev-parse", "memrecall/alice").strip() == tip


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
def test_a_sync_shares_the_files_search_reads_and_no_symlink(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    kept = alice.summary("2026-12-01", "5e1f0001", "Kept", "KEEP-1.")
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# not a memory\nprivate draft\n", encoding="utf-8")
    (kept.parent / "2026-12-02-5e1f0002.md").symlink_to(outside)
    (kept.parent / ".draft.md").write_text("# hidden\n", encoding="utf-8")
    alice.ok("team", "sync")
    shared = [f for f in branch_files(remote, BRANCH) if f.startswith("alice/")]
    assert shared == [
        "alice/memories/.gitkeep",
        "alice/summaries/.gitkeep",
        "alice/summaries/2026/12/2026-12-01-5e1f0001.md",
    ]


# --- offline, refused pushes, conflicts: nothing lost ---------------------------------------


def test_an_unreachable_remote_loses_nothing_and_the_next_sync_pushes(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    alice.summary("2026-12-01", "0ff11e00", "Offline work", "OFFLINE-1 decided on a train.")
    away = tmp_path / "moved-away.git"
    remote.rename(away)
    done = alice.run("team", "sync")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]  # one line
    assert done.stderr.startswith("Error: cannot reach the team repository (")
    assert "committed here, the next sync pushes" in done.stderr
    log = (alice.home / "logs" / "team-sync.log").read_text(encoding="utf-8").splitlines()
    assert len(log) == 1 and "team sync failed: cannot reach the team repository" in log[0]
    assert "OFFLINE-1" in git(alice.clone, "show", "memrecall/alice")  # committed locally
    doctor = json.loads(alice.run("doctor", "--json").stdout)
    team_check = [c for c in doctor if c["name"] == "team"]
    assert team_check and team_check[0]["status"] == "warn"
    assert "cannot reach the team repository" in team_check[0]["detail"]

    away.rename(remote)
    again = alice.ok("team", "sync")
    assert "pushed" in again.stdout
    assert "alice/summaries/2026/12/2026-12-01-0ff11e00.md" in branch_files(remote, BRANCH)
    doctor = json.loads(alice.run("doctor", "--json").stdout)
    assert [c["status"] for c in doctor if c["name"] == "team"] == ["ok"]


def test_a_branch_moved_by_someone_else_is_merged_and_nothing_is_lost(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    note = alice.summary("2026-12-01", "c0nf11c7", "Retry policy", "RETRY-9: three attempts.")
    alice.ok("team", "sync")
    # A reviewer fixes alice's summary and adds a note on her branch (the pull request)...
    reviewer = Maintainer(remote, tmp_path / "reviewer")
    rel = "alice/summaries/2026/12/2026-12-01-c0nf11c7.md"
    reviewer.commit_on("memrecall/alice", rel, "reviewer's version: RETRY-9 is four attempts\n")
    added = "alice/memories/review/2026-12-02-note.md"
    reviewer.commit_on(BRANCH, added, "# From review\nREVIEW-5\n")
    # ...while alice's session rewrites the same summary and adds another.
    later = note.read_text(encoding="utf-8") + "Later: RETRY-9 backoff 2 s.\n"
    note.write_text(later, encoding="utf-8")
    alice.summary("2026-12-02", "5ec0nd00", "Second", "SECOND-2 decided.")
    done = alice.ok("team", "sync")
    assert "pushed" in done.stdout
    assert "1 files changed both here and in the team repository" in done.stderr
    files = branch_files(remote, "memrecall/alice")
    assert "alice/memories/review/2026-12-02-note.md" in files  # the reviewer's addition kept
    assert "alice/summaries/2026/12/2026-12-02-5ec0nd00.md" in files
    tip_text = git(remote, "show", f"memrecall/alice:{rel}")
    assert "backoff 2 s" in tip_text  # this machine's version where both changed it
    history = log_all(remote)
    assert "reviewer's version: RETRY-9 is four attempts" in history  # the other, in history
    assert "backoff 2 s" in note.read_text(encoding="utf-8")
    # Only fast-forwards of the remote branch: the reviewer's commit is an ancestor of the tip.
    reviewer_tip = git(remote, "log", "--format=%H", "--grep", "edit alice/memories", "--all")
    reviewer_tip = reviewer_tip.split()[0]
    git(remote, "merge-base", "--is-ancestor", reviewer_tip, "memrecall/alice")


def test_a_push_refused_mid_sync_is_retried_by_the_next_sync(
    remote: Path, people: dict[str, Person], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    alice.summary("2026-12-01", "aaaa0001", "First", "FIRST-1.")
    alice.ok("team", "sync")
    alice.summary("2026-12-02", "aaaa0002", "Second", "SECOND-2.")
    reviewer = Maintainer(remote, tmp_path / "reviewer")
    real_run = team_mod.Git.run

    def racing(self: team_mod.Git, *args: str, **kwargs: Any) -> Any:
        if args[0] == "push":  # the remote branch moves between fetch and push
            reviewer.commit_on(BRANCH, "alice/memories/x/2026-12-03-race.md", "# Race\nRACE-3\n")
        return real_run(self, *args, **kwargs)

    monkeypatch.setattr(team_mod.Git, "run", racing)
    report = team_mod.sync(alice.settings())
    assert report.problem.startswith("push of memrecall/alice refused (")
    assert "the next sync merges and retries" in report.problem
    assert report.commit and report.pending_push
    monkeypatch.undo()
    again = team_mod.sync(alice.settings())
    assert again.ok and again.pushed
    files = branch_files(remote, "memrecall/alice")
    assert "alice/summaries/2026/12/2026-12-02-aaaa0002.md" in files
    assert "alice/memories/x/2026-12-03-race.md" in files


def test_main_moving_and_a_shared_folder_edit_never_conflict(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice, bob = people["alice"], people["bob"]
    setup_team(remote, people, ("alice", "bob"))
    alice.summary("2026-12-01", "a11ce001", "Alice one", "ALICE-1.")
    bob.summary("2026-12-01", "b0b00001", "Bob one", "BOB-1.")
    alice.ok("team", "sync")
    bob.ok("team", "sync")
    maintainer = Maintainer(remote, tmp_path / "maintainer")
    maintainer.merge("memrecall/bob")
    maintainer.commit_on("main", "shared/conventions.md", "# Conventions\nReview every PR twice.\n")
    fix = "# a fix on main in alice's folder\n"
    maintainer.commit_on("main", "alice/summaries/2026/12/typo-fix.md", fix)
    alice.summary("2026-12-02", "a11ce002", "Alice two", "ALICE-2.")
    alice.ok("team", "sync")
    tip = "memrecall/alice"
    conventions = git(remote, "show", f"{tip}:shared/conventions.md")
    assert conventions == "# Conventions\nReview every PR twice.\n"
    files = set(branch_files(remote, tip))
    assert {"bob/summaries/2026/12/2026-12-01-b0b00001.md", "alice/summaries/2026/12/typo-fix.md",
            "alice/summaries/2026/12/2026-12-02-a11ce002.md"} <= files
    # Merging alice's branch changes only alice's folder.
    changed = git(remote, "diff", "--name-only", "main", tip).split()
    assert changed and all(path.startswith("alice/") for path in changed)
    assert "typo-fix" not in " ".join(changed)


# --- pull requests -------------------------------------------------------------------------------


FAKE_GH = """#!{python}
import json, sys
from pathlib import Path

args = sys.argv[1:]
with open({log!r}, "a", encoding="utf-8") as log:
    log.write(json.dumps(args) + "\\n")
opened = Path({state!r})
url = "https://github.test/acme/team/pull/7"
if args[:2] == ["auth", "status"]:
    sys.exit(0)
if args[:2] == ["pr", "view"]:
    if opened.exists():
        print(json.dumps({{"url": url, "state": "OPEN"}}))
        sys.exit(0)
    sys.exit("no pull requests found for branch")
if args[:2] == ["pr", "create"]:
    opened.touch()
    print(url)
    sys.exit(0)
if args[:2] == ["pr", "edit"]:
    print(url)
    sys.exit(0)
sys.exit(1)
"""


@pytest.mark.skipif(os.name == "nt", reason="a script with a #! line stands in for gh")
def test_the_pull_request_is_opened_then_updated_with_gh(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    calls = tmp_path / "gh-calls.txt"
    gh = bin_dir / "gh"
    gh.write_text(
        FAKE_GH.format(python=sys.executable, log=str(calls), state=str(tmp_path / "pr-open")),
        encoding="utf-8",
    )
    gh.chmod(0o755)
    path = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    main_before = git(remote, "rev-parse", "main").strip()

    alice.summary("2026-12-01", "9a9a9a9a", "First", "PR-1.")
    first = alice.ok("team", "sync", env=path)
    assert "pull request https://github.test/acme/team/pull/7" in first.stdout
    alice.summary("2026-12-02", "9b9b9b9b", "Second", "PR-2.")
    second = alice.ok("team", "sync", env=path)
    assert "pull request https://github.test/acme/team/pull/7" in second.stdout
    made = [json.loads(line) for line in calls.read_text(encoding="utf-8").splitlines()]
    view = ["pr", "view", "memrecall/alice", "--json", "url,state"]
    assert made[:2] == [["auth", "status"], view]
    assert made[2][:9] == [
        "pr", "create", "--base", "main", "--head", "memrecall/alice",
        "--title", "memrecall: memories of alice", "--body",
    ]
    assert "1 added or updated" in made[2][9] and len(made[2]) == 10
    assert made[3:5] == [["auth", "status"], view]
    assert made[5][:4] == ["pr", "edit", "memrecall/alice", "--body"] and len(made) == 6
    assert not any(call[:2] == ["pr", "merge"] for call in made)  # merging stays human
    assert git(remote, "rev-parse", "main").strip() == main_before


def test_without_gh_or_glab_the_sync_names_the_branch_to_merge(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(GIT or "git")
    alice.summary("2026-12-01", "9a9a9a9a", "First", "PR-1.")
    done = alice.ok("team", "sync", env={"PATH": str(only_git)})
    hint = "merge memrecall/alice into main (open a pull request for it)"
    assert done.stdout.strip().endswith(hint)


# --- retention stays personal --------------------------------------------------------------------


def test_prune_archives_only_this_persons_files_in_the_team(
    remote: Path, people: dict[str, Person], tmp_path: Path,
) -> None:
    alice, bob = people["alice"], people["bob"]
    setup_team(remote, people, ("alice", "bob"))
    old_alice = alice.summary("2026-10-01", "01d0a11c", "Alice old", "OLD-ALICE.")
    alice.summary("2026-12-01", "4e3a11ce", "Alice new", "NEW-ALICE.")
    bob.summary("2026-10-01", "01d0b0b0", "Bob old", "OLD-BOB.")
    for person in (alice, bob):
        person.ok("team", "sync")
    maintainer = Maintainer(remote, tmp_path / "maintainer")
    maintainer.merge("memrecall/bob")
    alice.ok("team", "sync")
    bobs_old = alice.clone / "bob" / "summaries" / "2026" / "10" / "2026-10-01-01d0b0b0.md"
    assert bobs_old.is_file()

    alice.ok("prune", "--older-than", "30d")
    assert not old_alice.exists()
    assert bobs_old.is_file() and git(alice.clone, "status", "--porcelain") == ""  # prune left it
    done = alice.ok("team", "sync")
    assert "1 archived" in done.stdout
    files = set(branch_files(remote, "memrecall/alice"))
    assert "alice/summaries/.archive/2026/10/2026-10-01-01d0a11c.md" in files
    assert "alice/summaries/2026/10/2026-10-01-01d0a11c.md" not in files
    assert "alice/summaries/2026/12/2026-12-01-4e3a11ce.md" in files
    assert "bob/summaries/2026/10/2026-10-01-01d0b0b0.md" in files  # bob's retention, not alice's
    changed = git(remote, "diff", "--name-only", "main", BRANCH).split()
    assert changed and all(p.startswith("alice/") for p in changed)


def test_summaries_past_this_persons_retention_leave_the_team_without_prune(
    remote: Path, people: dict[str, Person],
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    alice.summary("2026-08-01", "a9ed0001", "Ancient", "ANCIENT-1.")
    alice.summary("2026-12-01", "f4e50001", "Fresh", "FRESH-1.")
    alice.ok("team", "sync")
    files = set(branch_files(remote, "memrecall/alice"))
    assert "alice/summaries/2026/12/2026-12-01-f4e50001.md" in files
    assert not any("a9ed0001" in f for f in files)  # out of alice's search: out of the team's


def test_a_deleted_memory_leaves_the_branch_but_a_missing_folder_deletes_nothing(
    remote: Path, people: dict[str, Person],
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    alice.save("# Obsolete\nOBSOLETE-1 was a mistake.\n")
    alice.save("# Keeper\nKEEPER-2 stays.\n")
    alice.summary("2026-12-01", "5afe0001", "Safe", "SAFE-1.")
    alice.ok("team", "sync")
    memories = alice.home / "memories" / "shop"
    (obsolete,) = [p for p in memories.iterdir() if "obsolete" in p.name]
    obsolete.unlink()
    done = alice.ok("team", "sync")
    assert "1 removed" in done.stdout
    files = branch_files(remote, BRANCH)
    assert not any("obsolete" in f for f in files) and any("keeper" in f for f in files)
    assert "OBSOLETE-1" in log_all(remote)  # git's history keeps it
    # The memories folder gone (a moved MEMRECALL_HOME, an unmounted drive): nothing is deleted.
    shutil.rmtree(alice.home / "memories")
    done = alice.ok("team", "sync")
    assert "the local memories folder is missing" in done.stderr
    assert branch_files(remote, BRANCH) == files


# --- background, status, doctor, the hook's imports -----------------------------------------


def test_background_sync_returns_at_once_and_logs_its_outcome(
    remote: Path, people: dict[str, Person],
) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    alice.summary("2026-12-01", "bac60001", "Background", "BG-1.")
    done = alice.run("team", "sync", "--background")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    log = alice.home / "logs" / "team-sync.log"
    for _ in range(600):  # the detached sync finishes when it finishes; no time is asserted
        if log.is_file() and "team sync" in log.read_text(encoding="utf-8"):
            break
        time.sleep(0.2)
    text = log.read_text(encoding="utf-8")
    assert "team sync (alice → memrecall/alice): 1 added or updated" in text, text
    assert "alice/summaries/2026/12/2026-12-01-bac60001.md" in branch_files(remote, BRANCH)
    # Inside memrecall's own summarizer, a Stop hook does nothing at all.
    quiet = alice.run("team", "sync", "--background", env={"MEMRECALL_INTERNAL": "1"})
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")


def test_status_shows_what_the_next_sync_sends(remote: Path, people: dict[str, Person]) -> None:
    alice, bob = people["alice"], people["bob"]
    assert "not set up" in alice.ok("team", "status").stdout
    setup_team(remote, people, ("alice", "bob"))
    bob.summary("2026-12-01", "b0b00001", "Bob", "BOB-1.")
    bob.ok("team", "sync")
    alice.summary("2026-12-01", "57a70001", "Status", "STATUS-1.")
    found = json.loads(alice.ok("team", "status", "--json").stdout)
    assert found["pending"]["changed"] == 1 and found["last_sync"] is None
    alice.ok("team", "sync")
    found = json.loads(alice.ok("team", "status", "--json").stdout)
    assert found["pending"] == {"changed": 0, "gone": 0, "files": []}
    assert found["last_sync"]["ok"] is True and found["branch"] == "memrecall/alice"
    text = alice.ok("team", "status").stdout
    assert "alice → branch memrecall/alice, merged into main" in text


def test_sync_before_init_is_one_line(people: dict[str, Person]) -> None:
    done = people["alice"].run("team", "sync")
    assert done.returncode == 1
    assert done.stderr == (
        "Error: no team repository configured; run memrecall team init <git-url-or-path>\n"
    )


def test_team_vaults_leave_out_this_persons_folder(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    for folder in ("alice", "bob", ".git", "shared"):
        (clone / folder).mkdir(parents=True)
    (clone / "README.md").write_text("x", encoding="utf-8")
    env = {"MEMRECALL_HOME": str(tmp_path / "h"), "MEMRECALL_TEAM_CLONE": str(clone),
           "MEMRECALL_TEAM_REPO": "git@example.com:acme/team.git", "MEMRECALL_TEAM_NAME": "alice"}
    settings = load_settings(environ=env)
    expected = [(clone / "bob", "team:bob"), (clone / "shared", "team:shared")]
    assert settings.team_vaults() == expected
    assert load_settings(environ={**env, "MEMRECALL_TEAM_REPO": ""}).team_vaults() == []
    unsafe = load_settings(environ={**env, "MEMRECALL_TEAM_NAME": "../alice"})
    assert unsafe.team.name == "alice" and "not a plain folder name" in unsafe.warnings[0]


def test_the_hook_never_imports_team_code(remote: Path, people: dict[str, Person]) -> None:
    alice = people["alice"]
    setup_team(remote, people, ("alice",))
    probe = (
        "import sys\n"
        "from memrecall.__main__ import main\n"
        "main(['recall'])\n"
        "sys.stderr.write(str(sorted(m for m in sys.modules if m.startswith('memrecall.team'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], input='{"session_id": "s", "prompt": "PAY-1234 どう？"}',
        capture_output=True, text=True, env=alice.env, timeout=120, check=False,
    )
    assert done.returncode == 0 and done.stderr == "[]"


def test_the_stop_hook_path_builds_no_cli(tmp_path: Path) -> None:
    """`team sync --background` runs after every answer: it starts the sync and returns
    without Typer or Rich (building the CLI alone costs a Stop hook ~0.2 s)."""
    probe = (
        "import sys; from memrecall.__main__ import main; code = main(['team', 'sync', "
        "'--background']); print(code, sorted(m for m in ('typer', 'rich') if m in sys.modules))"
    )
    env = {**os.environ, "MEMRECALL_HOME": str(tmp_path / "h"), "HOME": str(tmp_path)}
    for broken in ("", "[team\nrepo = \n"):  # no team, and a config.toml that does not parse
        (tmp_path / "h").mkdir(exist_ok=True)
        (tmp_path / "h" / "config.toml").write_text(broken, encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              env=env, timeout=120, check=False)
        assert (done.returncode, done.stdout, done.stderr) == (0, "0 []\n", "")
