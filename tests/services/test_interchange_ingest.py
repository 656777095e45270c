"""Filing chat log entries into a memory file through the safe writer (§N.19.3, §5.2, §7.5)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from zonemark import parse
from zonemark.cli.main import main
from zonemark.interchange.ingest import DUPLICATE, FILED, REFUSED, WOULD_FILE, ingest
from zonemark.writer import RefusedWrite, Store

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "interchange"
CHATS = FIXTURES / "chats"

MEMORY = """# Casa e macchina [external_memory]

[P1]
## TOPIC: Macchina
[/P1]

[P4]
###### LOG: 2026-09-06 — Tagliando generale
Olio e filtri cambiati a 84 300 km.
[/P4]

[P1]
### SUBTOPIC1: Gomme
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: 日記
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Archivio
[/P1]

[P3]
###### LOG: 2026-01-01 — vecchio
Solo l'utente lo cambia.
[/P3]
"""

CHAT = """Certo! Ecco il log:

###### LOG: 2026-09-15 — Tagliando prenotato
Officina Rossi; venerdì alle 8:30 — costo stimato 180\u00a0€.
[/LOG]

Copy
"""


@pytest.fixture
def memory(tmp_path) -> Path:
    path = tmp_path / "casa[ext_memory].md"
    path.write_text(MEMORY, encoding="utf-8")
    return path


def store() -> Store:
    return Store(fsync=False)


def entries_of(path: Path) -> list[tuple[str | None, str | None]]:
    doc = parse(path.read_text(encoding="utf-8"))
    return [(b.date, b.title) for b in doc.walk() if b.type == "log"]


def test_files_the_entry_with_its_own_date_and_title(memory):
    r = ingest(memory, "Macchina", CHAT, store=store())
    assert [(i.status, i.date, i.title, i.line) for i in r.items] == [(FILED, "2026-09-15", "Tagliando prenotato", 11)]
    text = memory.read_text(encoding="utf-8")
    assert "###### LOG: 2026-09-15 — Tagliando prenotato\nOfficina Rossi; venerdì alle 8:30 — costo stimato 180\u00a0€.\n[/P4]" in text
    assert "[/LOG]" not in text and "Copy" not in text
    assert parse(text).errors == []


def test_cl7_pasting_the_same_chat_twice_files_nothing_twice(memory):
    first = ingest(memory, "Macchina", CHAT, store=store())
    after_first = memory.read_bytes()
    second = ingest(memory, "Macchina", CHAT, store=store())
    assert [i.status for i in first.items] == [FILED]
    assert [(i.status, i.line) for i in second.items] == [(DUPLICATE, 11)]
    assert memory.read_bytes() == after_first


def test_cl7_an_entry_already_in_the_file_is_a_duplicate_even_with_crlf_and_blank_lines(memory):
    chat = "###### LOG: 2026-09-06 — Tagliando generale\r\n\r\nOlio e filtri cambiati a 84 300 km.\r\n\r\n[/LOG]\r\n"
    r = ingest(memory, "Macchina", chat, store=store())
    assert [(i.status, i.line) for i in r.items] == [(DUPLICATE, 8)]
    # same date and title, other body: a new entry
    r = ingest(memory, "Macchina", chat.replace("84 300", "84 301"), store=store())
    assert [i.status for i in r.items] == [FILED]


def test_cl7_a_duplicate_is_looked_for_in_that_container_only(memory):
    chat = "###### LOG: 2026-09-06 — Tagliando generale\nOlio e filtri cambiati a 84 300 km.\n[/LOG]\n"
    r = ingest(memory, "Macchina/Gomme", chat, store=store())
    assert [i.status for i in r.items] == [FILED]


def test_cl7_the_same_entry_twice_in_one_text_is_filed_once(memory):
    text = (CHATS / "28-two-answers-regenerated.txt").read_text(encoding="utf-8")
    r = ingest(memory, "Macchina", text, store=store())
    assert [i.status for i in r.items] == [FILED, DUPLICATE]
    assert entries_of(memory).count(("2026-08-23", "Concert tickets")) == 1


def test_cl7_entries_without_a_date_get_the_given_date_or_today(memory):
    chat = "###### LOG titolo senza data\ncorpo\n[/LOG]\n"
    r = ingest(memory, "Macchina", chat, date="2026-10-01", store=store())
    assert [(i.status, i.date) for i in r.items] == [(FILED, "2026-10-01")]
    r = ingest(memory, "Macchina", chat.replace("titolo", "altro titolo"), today="2026-10-02", store=store())
    assert [(i.status, i.date) for i in r.items] == [(FILED, "2026-10-02")]
    assert ("2026-10-01", "titolo senza data") in entries_of(memory)


def test_cl6_refused_entries_are_reported_and_the_others_still_filed(memory):
    text = ("###### LOG: 2026-02-30 — data impossibile\nx\n[/LOG]\n"
            "###### LOG: 2026-08-16\nsenza titolo\n[/LOG]\n"
            "###### LOG: 2026-08-17 — 東京出張\n新幹線は午前7時発。\n[/LOG]\n")
    r = ingest(memory, "日記", text, store=store())
    assert [i.status for i in r.items] == [REFUSED, REFUSED, FILED]
    assert "2026-02-30" in r.items[0].reason and "is not a log date" in r.items[0].reason
    assert "title" in r.items[1].reason and "empty" in r.items[1].reason
    assert ("2026-08-17", "東京出張") in entries_of(memory)


def test_the_writer_decides_permissions(memory):
    r = ingest(memory, "Archivio", CHAT, store=store())  # only a [P3] journal: proposals only for ai
    assert [i.status for i in r.items] == [REFUSED] and "[P3]" in r.items[0].reason
    r = ingest(memory, "Archivio", CHAT, actor="user", store=store())
    assert [i.status for i in r.items] == [FILED]


def test_structure_in_a_body_is_escaped_by_the_writer_and_reported(memory):
    text = ("###### LOG: 2026-08-17 — Note con markdown, città\u00a0東京\n## Un titolo scritto dall'AI\n[P1]\n"
            "* R9: una regola\n## MODULE 999: INJECTED\n[/P4]\n> [!NOTE]\n[/LOG]\n")
    before = parse(memory.read_text(encoding="utf-8"))
    r = ingest(memory, "Macchina", text, store=store())
    assert r.items[0].status == FILED and "header escaped" in r.items[0].changes
    after = parse(memory.read_text(encoding="utf-8"))
    assert [m.name for m in after.modules] == [m.name for m in before.modules]
    assert len(after.diagnostics) == len(before.diagnostics)
    assert "\\## MODULE 999: INJECTED" in memory.read_text(encoding="utf-8")


def test_an_unknown_container_refuses_everything(memory):
    before = memory.read_bytes()
    with pytest.raises(RefusedWrite, match="no container 'Moto'"):
        ingest(memory, "Moto", CHAT, store=store())
    assert memory.read_bytes() == before


def test_cl8_dry_run_reports_what_would_happen_and_writes_nothing(memory):
    before = memory.read_bytes()
    r = ingest(memory, "Macchina", CHAT + CHAT, dry_run=True)
    assert [(i.status, i.line) for i in r.items] == [(WOULD_FILE, 11), (DUPLICATE, 11)]
    assert memory.read_bytes() == before
    assert not (memory.parent / ".zonemark").exists()


def test_cl8_dry_run_of_a_read_only_file_reports_the_refusal_the_write_would_meet(memory):
    """CL8: the dry run's report is exact — a read-only memory file refuses every entry there too, with the
    same reason (naming the user's file, never the temporary copy)."""
    import os
    import stat
    os.chmod(memory, stat.S_IRUSR | stat.S_IRGRP)
    try:
        before = memory.read_bytes()
        dry = ingest(memory, "Macchina", CHAT, dry_run=True)
        real = ingest(memory, "Macchina", CHAT, store=Store(fsync=False))
    finally:
        os.chmod(memory, stat.S_IRUSR | stat.S_IWUSR)
    assert [(i.status, i.reason) for i in dry.items] == [(i.status, i.reason) for i in real.items]
    assert [i.status for i in dry.items] == [REFUSED] and str(memory) in dry.items[0].reason
    assert "read-only" in dry.items[0].reason and "zonemark-dry-run" not in dry.items[0].reason
    assert memory.read_bytes() == before


# -- the command ----------------------------------------------------------------------------

def run(capsys, *args, stdin: str | None = None, monkeypatch=None):
    if stdin is not None:
        import io
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cl8_cli_ingest_reports_one_line_per_entry_and_the_count(memory, tmp_path, capsys):
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT + "###### LOG: 2026-02-30 — no\nx\n[/LOG]\n", encoding="utf-8")
    code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", chat)
    assert code == 1  # one refused
    lines = out.splitlines()
    assert lines[0] == f"line 3: filed: LOG 2026-09-15 — Tagliando prenotato -> {memory.name}:11"
    assert lines[1].startswith("line 8: refused: LOG 2026-02-30 — no: refused: '2026-02-30' is not a log date as the parser reads it")
    assert lines[2] == "found 2 log entries: 1 filed, 1 refused"
    code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", chat)
    assert out.splitlines()[0] == "line 3: duplicate: LOG 2026-09-15 — Tagliando prenotato (already in the file at line 11)"
    assert out.splitlines()[-1] == "found 2 log entries: 0 filed, 1 duplicate, 1 refused"


def test_cli_ingest_from_stdin_json_and_dry_run(memory, capsys, monkeypatch):
    code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", "--dry-run", "--json", "-",
                         stdin=CHAT, monkeypatch=monkeypatch)
    assert code == 0
    report = json.loads(out)
    assert (report["found"], report["wouldFile"], report["dryRun"]) == (1, 1, True)
    assert report["items"][0]["status"] == "would_file"
    assert "Tagliando prenotato" not in memory.read_text(encoding="utf-8")


def test_cl8_cli_extract_writes_nothing_and_exits_0_even_when_nothing_is_found(tmp_path, capsys, monkeypatch):
    code, out, err = run(capsys, "ingest", "--extract", "--json", stdin="no logs here\n", monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out) == {"count": 0, "entries": [], "warnings": []}
    code, out, err = run(capsys, "ingest", "--extract", stdin=CHAT, monkeypatch=monkeypatch)
    assert code == 0
    assert out.splitlines() == ["line 3: LOG 2026-09-15 — Tagliando prenotato (ends at [/LOG] at line 5; 1 body line)",
                                "found 1 log entry"]


def test_cli_never_echoes_control_characters_from_chat_text(memory, capsys, monkeypatch):
    chat = "###### LOG: 2026-10-13 — \x1b]0;pwned\x07 città \x9b31m\n\x1b[2Jcorpo — 東京\u00a0ok\n[/LOG]\n"
    for args in (["ingest", memory, "--container", "Macchina", "-"], ["ingest", "--extract", "-"],
                 ["ingest", "--extract", "--json", "-"], ["ingest", memory, "--container", "Macchina", "--json", "-"]):
        code, out, err = run(capsys, *args, stdin=chat, monkeypatch=monkeypatch)
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err), (args, out, err)
        if "--json" in args:
            json.loads(out)
        else:
            assert "\\x1B" in out


def test_cl8_cli_ingest_with_nothing_found_exits_0_and_says_so(memory, capsys, monkeypatch):
    before = memory.read_bytes()
    code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", "-", stdin="Nessun log oggi.\n",
                         monkeypatch=monkeypatch)
    assert (code, out, err) == (0, "found 0 log entries: 0 filed\n", "")
    assert memory.read_bytes() == before


@pytest.mark.parametrize("args, message", [
    (["ingest"], "give the MEMORY_FILE"),
    (["ingest", "{memory}"], "give --container"),
    (["ingest", "{tmp}/missing.md", "--container", "X", "{chat}"], "no such file"),
    (["ingest", "{tmp}", "--container", "X", "{chat}"], "is a folder"),
    (["ingest", "{memory}", "--container", "Macchina", "{tmp}/nochat.txt"], "no such chat text file"),
    (["ingest", "{memory}", "--container", "Macchina", "{bad}"], "is not valid UTF-8 (byte 24); save it as UTF-8"),
    (["ingest", "{memory}", "--container", "Macchina", "--date", "ieri", "{chat}"], "is not a log date"),
    (["ingest", "--extract", "--container", "X", "{chat}"], "--extract writes nothing"),
    (["ingest", "--extract", "{memory}", "{chat}"], "give one chat text"),
    (["ingest", "{memory}", "--container", "Macchina", "--as", "root", "{chat}"], "invalid choice"),
])
def test_cli_ingest_usage_errors_are_one_line_exit_2(memory, tmp_path, capsys, args, message):
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT, encoding="utf-8")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"###### LOG: 2026-01-01 \xff\xfe\n")
    before = memory.read_bytes()
    args = [a.format(memory=memory, tmp=tmp_path, chat=chat, bad=bad) for a in args]
    code, out, err = run(capsys, *args)
    assert code == 2, (out, err)
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert memory.read_bytes() == before


def test_cli_ingest_refused_container_is_exit_1(memory, tmp_path, capsys):
    chat = tmp_path / "chat.txt"
    chat.write_text(CHAT, encoding="utf-8")
    code, out, err = run(capsys, "ingest", memory, "--container", "Nessuno", chat)
    assert code == 1 and err.startswith("refused: no container 'Nessuno'") and err.count("\n") == 1


def test_cli_ingest_every_chat_of_the_corpus_without_traceback(tmp_path, capsys):
    """Every corpus text through the command, twice: no traceback, never a second copy."""
    for chat in sorted(CHATS.glob("*.txt")):
        memory = tmp_path / f"{chat.stem}[ext_memory].md"
        memory.write_text(MEMORY, encoding="utf-8")
        for attempt in (1, 2):
            code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", "--json", chat)
            assert code in (0, 1) and "Traceback" not in err, err
            report = json.loads(out)
            assert report["found"] == json.loads(chat.with_suffix(".json").read_text(encoding="utf-8"))["count"]
            if attempt == 2:
                assert report["filed"] == 0, chat.name
        text = memory.read_text(encoding="utf-8")
        assert not any(line.strip() == "[/LOG]" for line in text.split("\n"))
        assert parse(text).errors == []


def test_python_m_zonemark_ingest_runs_end_to_end(memory):
    chat = CHATS / "33-italian-long-answer.txt"
    proc = subprocess.run([sys.executable, "-m", "zonemark", "ingest", str(memory), "--container", "Macchina",
                           str(chat)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "found 1 log entry: 1 filed"
    assert "Portare il libretto di manutenzione." in memory.read_text(encoding="utf-8")


# -- duplicates under the lock (CL7): processes racing on one file ---------------------------------

RACE_CHAT = """Ecco — 記録:

###### LOG: 2026-09-20 — gomme invernali — 冬タイヤ
- montate all'officina Rossi
- pressione 2,4 — 前後
[/LOG]

###### LOG: 2026-09-21 — Città: parcheggio
Perché sì — 駐車場は満車。
[/LOG]
"""


def _race_ingest(path, text, barrier, results):
    barrier.wait()
    r = ingest(path, "Macchina", text, store=Store(fsync=False))
    results.put([i.status for i in r.items])


def _race_append(path, barrier, results):
    from zonemark.writer import append_entry
    barrier.wait()
    r = append_entry(path, "Macchina/Gomme", "stesso — 同じ", "una volta sola — 一度だけ", date="2026-09-22",
                     store=Store(fsync=False), unless_present=True)
    results.put("duplicate" if r.duplicate_of is not None else "filed")


@pytest.mark.parametrize("rounds", [4])
def test_cl7_processes_ingesting_the_same_text_at_once_file_it_once(tmp_path, rounds):
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    for k in range(rounds):
        path = tmp_path / f"casa{k}[ext_memory].md"
        path.write_text(MEMORY, encoding="utf-8")
        workers = 4
        barrier, results = ctx.Barrier(workers), ctx.Queue()
        procs = [ctx.Process(target=_race_ingest, args=(path, RACE_CHAT, barrier, results)) for _ in range(workers)]
        for p in procs:
            p.start()
        statuses = [results.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        titles = entries_of(path)
        assert titles.count(("2026-09-20", "gomme invernali — 冬タイヤ")) == 1, (k, statuses)
        assert titles.count(("2026-09-21", "Città: parcheggio")) == 1, (k, statuses)
        assert sorted(s for run in statuses for s in run) == sorted([FILED] * 2 + [DUPLICATE] * (2 * workers - 2))
        assert parse(path.read_text(encoding="utf-8")).errors == []


def test_append_unless_present_from_racing_processes_files_one_copy(tmp_path):
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    path = tmp_path / "casa[ext_memory].md"
    path.write_text(MEMORY, encoding="utf-8")
    workers = 4
    barrier, results = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_race_append, args=(path, barrier, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    outcomes = sorted(results.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert outcomes == ["duplicate"] * (workers - 1) + ["filed"]
    assert entries_of(path).count(("2026-09-22", "stesso — 同じ")) == 1


def test_unless_present_reports_where_the_entry_is_and_writes_nothing(memory):
    from zonemark.writer import append_entry
    r = append_entry(memory, "Macchina", "Tagliando generale", "\nOlio e filtri cambiati a 84 300 km.\n\n",
                     date="2026-09-06", store=store(), unless_present=True)
    assert (r.changed, r.duplicate_of, r.line, r.history_id) == (False, 8, 8, None)
    assert memory.read_text(encoding="utf-8") == MEMORY
    # without the flag the same entry is written (the check is asked for, never implied)
    assert append_entry(memory, "Macchina", "Tagliando generale", "Olio e filtri cambiati a 84 300 km.",
                        date="2026-09-06", store=store()).changed


def test_the_keys_kept_between_appends_follow_the_file(memory):
    """Three entries filed in a row, then a user's edit: the duplicate check sees the file as it is each time."""
    from zonemark.writer import append_entry
    s = store()
    for title in ("uno — 一", "due — 二", "tre — 三"):
        assert append_entry(memory, "Macchina", title, "corpo", date="2026-09-30", store=s,
                            unless_present=True).duplicate_of is None
    again = append_entry(memory, "Macchina", "due — 二", "corpo", date="2026-09-30", store=s, unless_present=True)
    text = memory.read_text(encoding="utf-8").split("\n")
    assert text[again.duplicate_of - 1] == "###### LOG: 2026-09-30 — due — 二"
    # the user removes "due" by hand: the next copy is filed, not called a duplicate
    memory.write_text(memory.read_text(encoding="utf-8").replace("###### LOG: 2026-09-30 — due — 二\ncorpo\n", ""),
                      encoding="utf-8")
    assert append_entry(memory, "Macchina", "due — 二", "corpo", date="2026-09-30", store=s,
                        unless_present=True).changed


# -- cost: one plan, one write (ruling CL26, CL27, CL28) ------------------------------------------

def many(n: int, *, bad: tuple[int, ...] = ()) -> str:
    # after a quote in an item the parser starts a new list where CommonMark nests: kept as written, refused (W24)
    deep = "* a perché\n  > citazione — 引用\n  - b"
    return "".join(f"###### LOG: 2026-10-{1 + i % 28:02d} — voce {i} perché — 東京\n"
                   f"{deep if i in bad else f'testo {i} — città'}\n[/LOG]\n" for i in range(n))


def test_cl26_a_batch_is_one_write_one_history_version_and_one_undo(memory, monkeypatch):
    """CL26: 300 entries are planned on one snapshot and written once: one store update, one saved version."""
    from zonemark.writer import Store as S, undo
    calls = []
    real = S.update

    def counted(self, *a, **k):
        calls.append(1)
        return real(self, *a, **k)
    monkeypatch.setattr(S, "update", counted)
    r = ingest(memory, "Macchina", many(300), store=store())
    assert r.count(FILED) == 300 and len(calls) == 1
    assert len(store().history(memory)) == 1
    lines = memory.read_text(encoding="utf-8").split("\n")
    assert all(lines[i.line - 1] == f"###### LOG: {i.date} — {i.title}" for i in r.items)
    undo(memory, actor="user", store=store())
    assert memory.read_text(encoding="utf-8") == MEMORY


def test_cl26_the_plan_parses_the_file_once_and_rechecks_once(memory, monkeypatch):
    """The duplicate keys come from one parse of the file however many entries the text holds."""
    from zonemark.writer import NewEntry, plan_entries
    from zonemark.writer import duplicates
    reads = []
    real = duplicates.owned_entries
    monkeypatch.setattr(duplicates, "owned_entries", lambda *a: reads.append(1) or real(*a))
    data = memory.read_bytes()
    entries = [NewEntry("2026-10-01", f"voce {i} — 東京", "perché — sì") for i in range(500)]
    plan = plan_entries(memory, data, "Macchina", entries, default_date="2026-10-01")
    assert len(reads) == 1 and plan.rechecks == 1
    assert [o.status for o in plan.outcomes] == ["appended"] * 500
    assert memory.read_bytes() == data  # a plan writes nothing


def test_cl27_one_refused_entry_among_many_costs_a_bounded_number_of_checks(memory):
    """CL27: the entry the re-check refuses is found without re-checking the others one by one."""
    r = ingest(memory, "Macchina", many(400, bad=(123,)), store=store())
    assert [i.header_line for i in r.items if i.status == REFUSED] == [r.items[123].header_line]
    assert r.items[123].code == "NEW_DIAGNOSTIC" and "LIST_MARKER_MISMATCH" in r.items[123].reason
    assert r.count(FILED) == 399
    from zonemark.writer import NewEntry, plan_entries
    entries = [NewEntry(e.date, e.title, "perché" if k != 7 else "* a\n  > q — 引用\n  - b")
               for k, e in enumerate(r.items)]
    plan = plan_entries(memory, memory.read_bytes(), "日記", entries, default_date="2026-10-01")
    assert plan.rechecks == 2  # the whole, then the whole without the entry refused alone
    assert [o.status for o in plan.outcomes].count("refused") == 1


def test_cl27_a_copy_of_a_refused_entry_in_the_same_text_is_refused_too(memory):
    text = many(3, bad=(1,)) + many(3, bad=(1,))
    r = ingest(memory, "Macchina", text, store=store())
    assert [i.status for i in r.items] == [FILED, REFUSED, FILED, DUPLICATE, REFUSED, DUPLICATE]
    assert r.items[4].reason == r.items[1].reason and r.items[3].line == r.items[0].line


def test_cl26_dry_run_plans_without_writing_anything_anywhere(memory, monkeypatch):
    """CL26: the dry run is the plan on the bytes as read: no temporary copy, no write, same report."""
    import tempfile
    monkeypatch.setattr(tempfile, "TemporaryDirectory", None)
    monkeypatch.setattr(Store, "update", None)
    before = memory.read_bytes()
    dry = ingest(memory, "Macchina", many(50, bad=(7,)) + CHAT, dry_run=True)
    assert memory.read_bytes() == before and not (memory.parent / ".zonemark").exists()
    monkeypatch.undo()
    real = ingest(memory, "Macchina", many(50, bad=(7,)) + CHAT, store=store())
    assert [({WOULD_FILE: FILED}.get(i.status, i.status), i.line, i.reason) for i in dry.items] == \
        [(i.status, i.line, i.reason) for i in real.items]
    assert dry.count(REFUSED) == 1 and dry.count(WOULD_FILE) == 50


def test_cl28_ingest_refuses_a_text_over_its_limits_in_one_line(memory, capsys, monkeypatch):
    from zonemark.interchange import ingest as module
    monkeypatch.setattr(module, "MAX_ENTRIES", 5)
    with pytest.raises(ValueError, match=r"holds 6 log entries; ingest files at most 5 at once \(MAX_ENTRIES\)"):
        ingest(memory, "Macchina", many(6), store=store())
    code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", "-", stdin=many(6) + "perché",
                         monkeypatch=monkeypatch)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "MAX_ENTRIES" in err
    monkeypatch.setattr(module, "MAX_CHAT_CHARS", 100)
    code, out, err = run(capsys, "ingest", memory, "--container", "Macchina", "-", stdin=many(2),
                         monkeypatch=monkeypatch)
    assert code == 2 and "MAX_CHAT_CHARS" in err and len(err.strip().splitlines()) == 1
    assert memory.read_text(encoding="utf-8") == MEMORY
