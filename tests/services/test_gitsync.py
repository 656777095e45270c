"""``zonemark git setup``, ``--commit-writes`` and ``zonemark sync`` with the machine's git (issue 19 §2).

Every repository lives in a temporary folder; git reads no configuration of this machine (an empty global
file, no system file), and each test repository gets its own user.name and user.email.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from zonemark.cli.main import main

MEMORY = """# Garage — 東京 [external_memory]

[P1]
## TOPIC: Maintenance
[/P1]

[P4]
[/P4]

[P1]
### SUBTOPIC1: Tyres
[/P1]

[P4]
###### LOG: 2026-01-05 — Gomme estive, perché è caldo
Montate a Tōkyō — 東京.
[/P4]

[P1]
## TOPIC: Travel
[/P1]

[P4]
[/P4]
"""

NOTES = "appunti dell'utente — 東京\n"


@pytest.fixture(autouse=True)
def quiet_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git sees no configuration of this machine, and never prompts."""
    empty = tmp_path / "gitconfig-global"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
                 "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done.stdout


def identity(repo: Path, name: str = "Tester") -> None:
    git(repo, "config", "user.name", name)
    git(repo, "config", "user.email", f"{name.lower()}@example.com")


def new_repo(path: Path, *, with_identity: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "-b", "main")
    if with_identity:
        identity(path)
    (path / "Garage[ext_memory].md").write_text(MEMORY, encoding="utf-8")
    (path / "notes.txt").write_text(NOTES, encoding="utf-8")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "start", check=with_identity)
    return path


def run(*argv: str) -> int:
    return main(list(argv))


def memory(repo: Path) -> Path:
    return repo / "Garage[ext_memory].md"


def last_commit_files(repo: Path) -> list[str]:
    return sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())


# -- git setup -----------------------------------------------------------------------------------

def test_setup_registers_the_driver_and_a_second_run_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo)) == 0
    first = capsys.readouterr().out
    driver = git(repo, "config", "--get", "merge.zonemark.driver").strip()
    assert driver.endswith("-m zonemark merge-file %O %A %B %P") and sys.executable in driver
    assert git(repo, "config", "--get", "merge.zonemark.name").strip()
    assert "*.md merge=zonemark" in (repo / ".gitattributes").read_text()
    assert git(repo, "check-attr", "merge", "--", "Garage[ext_memory].md").strip().endswith("zonemark")
    ignore = (repo / ".zonemark" / ".gitignore").read_text()
    assert "locks/" in ignore.splitlines() and "search.sqlite3*" in ignore.splitlines()
    assert "merge.zonemark.driver" in first and ".gitattributes" in first
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in p.as_posix()}
    config = (repo / ".git" / "config").read_bytes()
    assert run("git", "setup", str(repo)) == 0
    assert "nothing written" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git/" not in p.as_posix()} == before
    assert (repo / ".git" / "config").read_bytes() == config


def test_setup_keeps_proposals_and_traces_tracked_and_locks_out(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo)) == 0
    for rel in (".zonemark/proposals/p1.json", ".zonemark/traces/t.json", ".zonemark/settings.json"):
        assert git(repo, "check-ignore", "-q", rel, check=False) == "", rel
        assert subprocess.run(["git", "check-ignore", "-q", rel], cwd=repo).returncode == 1, rel
    for rel in (".zonemark/locks/Garage[ext_memory].md.lock", ".zonemark/search.sqlite3",
                ".zonemark/search.sqlite3-wal", ".zonemark/access.sqlite3", ".zonemark/history/Garage[ext_memory].md.versions/00000001.orig"):
        assert subprocess.run(["git", "check-ignore", "-q", rel], cwd=repo).returncode == 0, rel


def test_setup_outside_a_work_tree_is_one_line_and_init_creates_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "Garage[ext_memory].md").write_text(MEMORY, encoding="utf-8")
    assert run("git", "setup", str(folder)) == 2
    err = capsys.readouterr().err
    assert "not inside a git work tree" in err and len(err.strip().splitlines()) == 1
    assert run("git", "setup", str(folder), "--init") == 0
    assert (folder / ".git").is_dir() and "created a git repository" in capsys.readouterr().out


# -- --commit-writes -----------------------------------------------------------------------------

def test_a_write_is_one_commit_of_exactly_that_file_while_the_user_has_other_changes_staged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    (repo / "notes.txt").write_text(NOTES + "staged — perché\n", encoding="utf-8")
    git(repo, "add", "notes.txt")
    (repo / "notes.txt").write_text(NOTES + "staged — perché\nunstaged 東京\n", encoding="utf-8")
    (repo / "draft.txt").write_text("untracked\n", encoding="utf-8")
    capsys.readouterr()
    assert run("append", str(memory(repo)), "--container", "Maintenance/Tyres", "--title", "winter set mounted",
               "--body", "Gomme invernali — 東京", "--date", "2026-02-01") == 0
    assert "warning" not in capsys.readouterr().err
    assert last_commit_files(repo) == ["Garage[ext_memory].md"]
    message = git(repo, "log", "-1", "--format=%B")
    assert message.splitlines()[0] == 'zonemark: ai appended "winter set mounted" to Maintenance/Tyres'
    assert "Zonemark-Actor: ai" in message and "Zonemark-Client: zonemark-cli" in message
    assert "Gomme invernali — 東京" in git(repo, "show", "HEAD:Garage[ext_memory].md")
    # the user's staged and unstaged changes are as they were
    assert git(repo, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    assert "staged — perché" in git(repo, "diff", "--cached") and "unstaged" not in git(repo, "diff", "--cached")
    assert "unstaged 東京" in git(repo, "diff")
    assert "?? draft.txt" in git(repo, "status", "--porcelain")


def test_a_proposal_is_committed_with_its_record_and_trailers_name_the_user(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    content = tmp_path / "content.txt"
    content.write_text("## TOPIC: Maintenance — perché\n", encoding="utf-8")
    assert run("propose", str(memory(repo)), "--zone", "3", "--content-file", str(content),
               "--reason", "rename — 東京") == 0
    files = last_commit_files(repo)
    assert len(files) == 1 and files[0].startswith(".zonemark/proposals/")
    assert git(repo, "log", "-1", "--format=%s").strip() == "zonemark: ai proposed a change to Garage[ext_memory].md: rename — 東京"
    assert run("state", str(memory(repo)), "--as", "user") == 0  # no flag: reads, writes nothing, no commit
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "3"


def test_writes_are_not_committed_without_commit_writes(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo)) == 0
    head = git(repo, "rev-parse", "HEAD")
    assert run("append", str(memory(repo)), "--container", "Travel", "--title", "Roma — perché",
               "--body", "x", "--date", "2026-02-01") == 0
    assert git(repo, "rev-parse", "HEAD") == head
    assert " M Garage[ext_memory].md" in git(repo, "status", "--porcelain")


def test_a_failed_commit_keeps_the_write_and_warns_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    git(repo, "config", "user.useConfigOnly", "true")
    head = git(repo, "rev-parse", "HEAD")
    capsys.readouterr()
    assert run("append", str(memory(repo)), "--container", "Maintenance/Tyres", "--title", "catene — 東京",
               "--body", "perché nevica", "--date", "2026-02-02") == 0
    err = capsys.readouterr().err.strip().splitlines()
    warnings = [line for line in err if line.startswith("warning:")]
    assert len(warnings) == 1 and "not committed" in warnings[0] and "user.email" in warnings[0]
    assert "git commit -- Garage[ext_memory].md" in warnings[0]
    assert "catene — 東京" in memory(repo).read_text(encoding="utf-8")
    assert git(repo, "rev-parse", "HEAD") == head


def test_a_held_index_lock_is_waited_for_then_warned(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from zonemark.gitlayer import commits
    monkeypatch.setattr(commits, "RETRY_SECONDS", 0.3)
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    (repo / ".git" / "index.lock").write_text("")
    capsys.readouterr()
    assert run("append", str(memory(repo)), "--container", "Travel", "--title", "Kyōto — 京都",
               "--body", "perché", "--date", "2026-02-03") == 0
    warning = capsys.readouterr().err.strip().splitlines()[-1]
    assert warning.startswith("warning:") and "lock" in warning
    assert "Kyōto — 京都" in memory(repo).read_text(encoding="utf-8")
    (repo / ".git" / "index.lock").unlink()
    assert run("append", str(memory(repo)), "--container", "Travel", "--title", "Nara — 奈良",
               "--body", "dopo", "--date", "2026-02-04") == 0
    assert "Nara — 奈良" in git(repo, "show", "HEAD:Garage[ext_memory].md")


@pytest.mark.slow
def test_two_processes_writing_at_once_both_commit(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "layer")
    (repo / "Second[ext_memory].md").write_text(MEMORY.replace("Garage", "Second"), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "second")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    procs = [subprocess.Popen([sys.executable, "-m", "zonemark", "append", str(repo / name), "--container",
                               "Maintenance/Tyres", "--title", f"{k}: {name} — 東京", "--body", "perché",
                               "--date", "2026-03-01"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for k, name in enumerate(("Garage[ext_memory].md", "Second[ext_memory].md", "Garage[ext_memory].md"))]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert all(b"warning" not in err for _, err in outs), outs
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "6"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    subjects = git(repo, "log", "-3", "--format=%s").splitlines()
    assert all(s.startswith('zonemark: ai appended "') for s in subjects)


# -- sync ----------------------------------------------------------------------------------------

def two_devices(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A bare repository and two clones of it, each set up once (B clones what A set up and pushed)."""
    origin = new_repo(tmp_path / "seed")
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(bare))
    a, b = tmp_path / "a", tmp_path / "b"
    git(tmp_path, "clone", "--quiet", str(bare), str(a))
    identity(a, "DeviceA")
    assert run("git", "setup", str(a)) == 0
    git(a, "add", "-A")
    git(a, "commit", "--quiet", "-m", "setup")
    git(a, "push", "--quiet")
    git(tmp_path, "clone", "--quiet", str(bare), str(b))
    identity(b, "DeviceB")
    assert run("git", "setup", str(b)) == 0  # the files came with the clone; only this clone's config is new
    assert git(b, "status", "--porcelain") == ""
    return bare, a, b


def test_sync_brings_in_what_the_other_device_wrote_and_pushes_its_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare, a, b = two_devices(tmp_path)
    assert run("append", str(memory(a)), "--container", "Maintenance/Tyres", "--title", "winter set mounted",
               "--body", "Gomme invernali — perché", "--date", "2026-02-01") == 0
    git(a, "commit", "--quiet", "-am", "a appended")
    (b / "notes.txt").write_text(NOTES + "da B — 東京\n", encoding="utf-8")
    git(b, "commit", "--quiet", "-am", "b notes")
    assert run("sync", str(a)) == 0
    capsys.readouterr()
    assert run("sync", str(b)) == 0
    out = capsys.readouterr().out
    assert "1 commit in" in out and "Garage[ext_memory].md: Maintenance/Tyres: +1 entry" in out
    assert "out (pushed)" in out
    capsys.readouterr()
    assert run("sync", str(a)) == 0
    assert "notes.txt: changed" in capsys.readouterr().out
    for device in (a, b):
        assert "winter set mounted" in memory(device).read_text(encoding="utf-8")
        assert "da B — 東京" in (device / "notes.txt").read_text(encoding="utf-8")
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert run("check", str(a)) == 0


def test_sync_refuses_a_dirty_tree_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, a, _ = two_devices(tmp_path)
    head = git(a, "rev-parse", "HEAD")
    (a / "notes.txt").write_text("changed — perché\n", encoding="utf-8")
    capsys.readouterr()
    assert run("sync", str(a)) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "uncommitted changes" in err[0] and "notes.txt" in err[0]
    assert git(a, "rev-parse", "HEAD") == head
    assert (a / "notes.txt").read_text(encoding="utf-8") == "changed — perché\n"


def test_sync_never_force_pushes(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    bare, a, b = two_devices(tmp_path)
    (a / "notes.txt").write_text(NOTES + "A — 東京\n", encoding="utf-8")
    git(a, "commit", "--quiet", "-am", "a")
    git(a, "push", "--quiet")
    remote_head = git(bare, "rev-parse", "main")
    (b / "Travel.txt").write_text("B — perché\n", encoding="utf-8")
    git(b, "add", "-A")
    git(b, "commit", "--quiet", "-m", "b")
    from typing import Any

    from zonemark.gitlayer import sync
    from zonemark.gitlayer.git import GitResult
    from zonemark.gitlayer.git import run_git as real
    calls: list[list[str]] = []

    def spy(args: list[str], cwd: Path, **kw: Any) -> GitResult:
        """The fetch "misses" what A pushed: the push must be refused, not forced."""
        calls.append(list(args))
        if args[0] == "fetch":
            return real(["rev-parse", "HEAD"], cwd)
        return real(args, cwd, **kw)
    monkeypatch.setattr(sync, "run_git", spy)
    git(b, "update-ref", "refs/remotes/origin/main", git(b, "rev-parse", "HEAD~1").strip())
    assert run("sync", str(b)) == 1
    assert "push was refused" in capsys.readouterr().err
    assert git(bare, "rev-parse", "main") == remote_head
    pushes = [c for c in calls if c[0] == "push"]
    assert pushes and not any(x.startswith(("-f", "--force")) or x.startswith("+") for c in pushes for x in c)
    monkeypatch.setattr(sync, "run_git", real)
    assert run("sync", str(b)) == 0
    assert git(bare, "rev-parse", "main") == git(b, "rev-parse", "HEAD")
    assert "A — 東京" in (b / "notes.txt").read_text(encoding="utf-8")


def test_sync_reports_a_conflict_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare, a, b = two_devices(tmp_path)
    (a / "notes.txt").write_text("A — 東京\n", encoding="utf-8")
    git(a, "commit", "--quiet", "-am", "a")
    assert run("sync", str(a)) == 0
    (b / "notes.txt").write_text("B — perché\n", encoding="utf-8")
    git(b, "commit", "--quiet", "-am", "b")
    remote_head = git(bare, "rev-parse", "main")
    capsys.readouterr()
    assert run("sync", str(b)) == 1
    captured = capsys.readouterr()
    assert "conflict: notes.txt" in captured.out and "nothing was pushed" in captured.err
    assert git(bare, "rev-parse", "main") == remote_head
    assert run("sync", str(b)) == 1
    assert "a merge is in progress" in capsys.readouterr().err


def test_sync_outside_git_and_without_upstream_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert run("sync", str(plain)) == 2
    assert "not inside a git work tree" in capsys.readouterr().err
    repo = new_repo(tmp_path / "solo")
    assert run("sync", str(repo)) == 1
    assert "no upstream" in capsys.readouterr().err


def test_state_undo_and_apply_are_one_commit_each_with_their_message(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "layer")
    reminder = repo / "main[reminder].md"
    reminder.write_text("# Principale — 東京 [reminder]\n\n[P1]\n## MODULE 042: VIAGGI [NUCLEI: ]\n\n"
                        "### STATE\nactive\n[/P1]\n\n[P4]\n## MODULE_STATE_REGISTRY:\n[/P4]\n", encoding="utf-8")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    assert run("state", str(reminder), "--deactivate", "042", "--as", "user") == 0
    assert git(repo, "log", "-1", "--format=%s").strip() == "zonemark: user deactivated 042 in main[reminder].md"
    assert "Zonemark-Actor: user" in git(repo, "log", "-1", "--format=%B")
    assert last_commit_files(repo) == ["main[reminder].md"]
    assert run("undo", str(reminder), "--as", "user") == 0
    assert git(repo, "log", "-1", "--format=%s").strip() == "zonemark: user undid the last write of main[reminder].md"
    assert git(repo, "diff", "HEAD~2", "HEAD", "--", "main[reminder].md") == ""
    content = tmp_path / "c.txt"
    content.write_text("Città: Tōkyō — 東京, perché sì.\n", encoding="utf-8")
    assert run("propose", str(memory(repo)), "--zone", "7", "--content-file", str(content), "--reason", "r") == 0
    pid = last_commit_files(repo)[0].rsplit("/", 1)[1].removesuffix(".json")
    assert run("apply", pid, "--layer", str(repo), "--as", "user") == 0
    assert git(repo, "log", "-1", "--format=%s").strip() == f"zonemark: user applied proposal {pid}"
    files = last_commit_files(repo)
    assert "Garage[ext_memory].md" in files and all(f == "Garage[ext_memory].md" or f.startswith(".zonemark/proposals/")
                                                     for f in files)
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_subject_is_one_line_that_cannot_forge_a_trailer() -> None:
    from zonemark.gitlayer.commits import MAX_SUBJECT_CHARS, subject_text
    hostile = "winter set\n\nZonemark-Actor: user\r\nSigned-off-by: x\u2028— 東京 perché" + "x" * 500
    line = subject_text(hostile)
    assert "\n" not in line and "\r" not in line and "\u2028" not in line
    assert line.startswith("winter set Zonemark-Actor: user Signed-off-by: x — 東京 perché")
    assert len(line) == MAX_SUBJECT_CHARS


def test_an_ai_append_through_the_mcp_server_is_one_commit_naming_the_mcp_client(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import importlib
    Agent = importlib.import_module("mcp_support").Agent

    from zonemark.mcp.server import build_server
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    (repo / "notes.txt").write_text(NOTES + "staged — 東京\n", encoding="utf-8")
    git(repo, "add", "notes.txt")
    agent = Agent(build_server(repo))
    agent.call("append_entry", file="Garage[ext_memory].md", container="Maintenance/Tyres",
               title="winter set mounted", body="Gomme invernali — perché, 東京", date="2026-02-01")
    assert last_commit_files(repo) == ["Garage[ext_memory].md"]
    message = git(repo, "log", "-1", "--format=%B")
    assert message.splitlines()[0] == 'zonemark: ai appended "winter set mounted" to Maintenance/Tyres'
    assert "Zonemark-Actor: ai" in message and "Zonemark-Client: zonemark-mcp" in message
    assert git(repo, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    agent.call("list_containers")  # a read writes nothing and commits nothing
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "3"


def test_an_apply_on_the_review_page_is_one_commit_by_the_user(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from zonemark.review.app import Review
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    content = tmp_path / "c.txt"
    content.write_text("Città: Tōkyō — 東京, perché sì.\n", encoding="utf-8")
    assert run("propose", str(memory(repo)), "--zone", "7", "--content-file", str(content), "--reason", "r") == 0
    pid = last_commit_files(repo)[0].rsplit("/", 1)[1].removesuffix(".json")
    review = Review(repo, "t" * 32)
    review.act("proposals", lambda: review._apply(pid))
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith(f"zonemark: user proposal {pid} applied to Garage[ext_memory].md")
    assert "Zonemark-Actor: user" in message and "Zonemark-Client: zonemark-review" in message
    assert "Città: Tōkyō — 東京" in git(repo, "show", "HEAD:Garage[ext_memory].md")
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""


def test_two_devices_append_to_one_journal_and_sync_without_conflict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 19 §3 end to end: `git setup` on each clone registers the zone-aware driver, each device's AI
    appends to the same journal (and B to another topic) with --commit-writes, both sync: no conflict, every
    entry on both devices in date order, `check` clean."""
    bare, a, b = two_devices(tmp_path)
    assert run("git", "setup", str(a), "--commit-writes") == 0  # a layer setting: tracked, so B gets it by sync
    git(a, "add", "-A")
    git(a, "commit", "--quiet", "-m", "commit writes on")
    assert run("sync", str(a)) == 0
    assert run("sync", str(b)) == 0
    assert (b / ".zonemark" / "settings.json").is_file()
    assert run("append", str(memory(a)), "--container", "Maintenance/Tyres", "--title", "winter set mounted",
               "--body", "Gomme invernali — perché fa freddo", "--date", "2026-02-01") == 0
    assert run("append", str(memory(b)), "--container", "Maintenance/Tyres", "--title", "pressure checked",
               "--body", "Pressione controllata a 東京", "--date", "2026-01-20") == 0
    assert run("append", str(memory(b)), "--container", "Travel", "--title", "trip to Kyoto",
               "--body", "京都へ — in treno", "--date", "2026-01-22") == 0
    capsys.readouterr()
    assert run("sync", str(a)) == 0
    assert run("sync", str(b)) == 0, capsys.readouterr()
    assert run("sync", str(a)) == 0
    texts = [memory(device).read_text(encoding="utf-8") for device in (a, b)]
    assert texts[0] == texts[1]
    assert "<<<<<<<" not in texts[0]
    tyres = texts[0].index("SUBTOPIC1: Tyres")
    order = [texts[0].index(t, tyres) for t in ("2026-01-05", "pressure checked", "winter set mounted")]
    assert order == sorted(order)
    assert texts[0].index("trip to Kyoto") > texts[0].index("## TOPIC: Travel")
    assert git(a, "rev-parse", "HEAD") == git(b, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    for device in (a, b):
        assert run("check", str(device)) == 0


def test_an_import_with_apply_is_one_commit_of_the_memory_file(tmp_path: Path) -> None:
    repo = new_repo(tmp_path / "layer")
    assert run("git", "setup", str(repo), "--commit-writes") == 0
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "setup")
    chat = tmp_path / "chat — 東京.md"  # a plain copy of a chat, outside the layer
    chat.write_text("Ecco la nota:\n\n###### LOG: 2026-03-04 — catene montate\nCatene montate, perché nevica a 東京.\n",
                    encoding="utf-8")
    before = git(repo, "rev-parse", "HEAD")
    assert run("import", str(chat), "--into", str(memory(repo)), "--container", "Maintenance/Tyres",
               "--apply", "--quiet") == 0
    assert "catene montate" in memory(repo).read_text(encoding="utf-8")
    assert git(repo, "rev-parse", "HEAD~1") == before
    assert last_commit_files(repo) == ["Garage[ext_memory].md"]
    assert git(repo, "log", "-1", "--format=%s") == "zonemark: user imported chat entries into Maintenance/Tyres\n"
    assert git(repo, "status", "--porcelain") == ""
