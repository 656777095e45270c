"""Full-text search over a layer: rows, queries, filters, the cache and its failures (issue 10, part 2)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import zonemark.search.index as index_module
from zonemark.cli.main import main
from zonemark.search import QueryError, SearchUnavailable, search, translate
from zonemark.search.index import Index
from zonemark.writer import append_entry
from zonemark.writer.store import Store

SPEC = Path(__file__).parents[1] / "fixtures" / "spec"

DIARY = """# Diario — 日記 [external_memory]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
###### LOG: 2026-03-01 — Partenza per Kyoto
Perché andare a Kyoto — il treno è in ritardo.

###### LOG: 2026-03-05 — 京都の寺
タイヤ交換した後、清水寺を見た。
[/P4]

[P1]
### SUBTOPIC1: Treni
[/P1]

[P4]
###### LOG: 2026-03-02T08:30 — Shinkansen
Il treno per Tokyo parte alle 8:30: posto 12A.
[/P4]

[P1]
## TOPIC: Casa
[/P1]

[P4]
###### LOG: 2025-12-24 — Vigilia
Cena con la famiglia; il treno di ritorno.
[/P4]

[P5]
Appunti volatili: comprare il latte.
[/P5]
"""


@pytest.fixture
def layer(tmp_path) -> Path:
    for name in ("14_1_minimal_reminder.md", "14_2_external_module.md", "14_4_external_memory_subtopics.md"):
        shutil.copy(SPEC / name, tmp_path / name)
    (tmp_path / "diario[ext_memory].md").write_text(DIARY, encoding="utf-8")
    return tmp_path


def where(result):
    return [(h.file, h.line) for h in result.hits]


# -- what is found -----------------------------------------------------------------------------

def test_an_entry_is_found_with_its_place(layer):
    r = search(layer, "summer")
    assert len(r.hits) == 1
    h = r.hits[0]
    assert (h.file, h.line, h.kind, h.container, h.zone, h.date) == (
        "14_4_external_memory_subtopics.md", 17, "entry", "Maintenance/Tyres", 4, "2026-09-06")
    assert h.title == "winter set mounted"
    assert h.snippet == "Four of them; 3 mm left on the «summer» set, one more season at most."
    assert h.location == f"{layer / '14_4_external_memory_subtopics.md'}:17"
    assert r.files == 4 and r.more is False and r.cache == str(layer / ".zonemark" / "search.sqlite3")


def test_modules_topics_and_zone_text_are_rows_too(layer):
    kinds = {(h.file, h.kind, h.container) for h in search(layer, "curiosity", limit=50).hits}
    assert ("14_1_minimal_reminder.md", "module", "042") in kinds
    assert ("14_2_external_module.md", "module", "CURIOSITY_ENGINE") in kinds
    topic = search(layer, "Bodywork").hits
    assert [(h.kind, h.container, h.zone, h.line) for h in topic] == [("subtopic", "Maintenance/Bodywork", 1, 31)]
    volatile = search(layer, "latte").hits
    assert [(h.kind, h.zone, h.container, h.line) for h in volatile] == [("text", 5, "Casa", 34)]
    nucleus = search(layer, "emotions").hits
    assert [(h.kind, h.container, h.title) for h in nucleus] == [("nucleus", "NUCLEUS 2", "EMOTIONAL")]


def test_container_paths_are_the_addresses_list_containers_gives(tmp_path):
    """Search names a container as the layer's list_containers (and the MCP tools) do."""
    import corpus

    from zonemark import parse_file
    from zonemark.layer.containers import list_containers
    from zonemark.search.rows import rows_of
    paths = corpus.generate_layer(tmp_path, modules=2, memories=3, reminder_size=120_000, ext_size=80_000)
    checked = 0
    for path in paths + sorted(SPEC.glob("*.md")):
        doc = parse_file(path)
        addresses = {c.line: c.address for c in list_containers(doc)}
        for row in rows_of(doc):
            if row.kind not in ("entry", "text"):
                assert row.container == addresses[row.line], (path.name, row.line)
                checked += 1
    assert checked > 100


def test_italian_accents_and_japanese_words_inside_a_sentence(layer):
    assert where(search(layer, "perche")) == [("diario[ext_memory].md", 8)]
    assert where(search(layer, "perché")) == [("diario[ext_memory].md", 8)]
    hits = search(layer, "交換").hits  # a word in the middle of a sentence with no spaces
    assert [(h.line, h.title) for h in hits] == [(11, "京都の寺")]
    assert hits[0].snippet == "タイヤ«交換»した後、清水寺を見た。"
    assert where(search(layer, "清水寺")) == [("diario[ext_memory].md", 11)]
    assert search(layer, "寺清").hits == ()  # the characters must be adjacent, in order


def test_words_are_anded_and_a_quoted_phrase_is_one(layer):
    assert where(search(layer, "treno Tokyo")) == [("diario[ext_memory].md", 20)]
    assert sorted(h.line for h in search(layer, "treno").hits) == [8, 20, 29]
    assert where(search(layer, '"treno di ritorno"')) == [("diario[ext_memory].md", 29)]
    assert search(layer, '"ritorno treno"').hits == ()
    assert sorted(h.line for h in search(layer, "tren*").hits) == [8, 16, 20, 29]  # the sub-topic is named Treni


def test_titles_rank_above_bodies(layer):
    hits = search(layer, "Kyoto").hits
    assert [h.line for h in hits] == [8]
    assert search(layer, "Kyoto ritardo").hits[0].line == 8
    assert hits[0].score > 0


@pytest.mark.parametrize("query", [
    ":", '"', '""', '"unbalanced', 'a"b"c', "AND", "OR", "NOT", "a AND", "OR b", "NEAR(", "NEAR(a b", "(", ")",
    "*", "**", "-treno", "^treno", "title:treno", "body:", "{title}: x", "treno*", "*treno", "tre*no", "'; DROP TABLE files; --",
    "— –", "\u200b", "🚗 treno", "x" * 1500, "a b c d e f g h", "\\", "%", "_", "treno:", "+treno", "NEAR(treno Tokyo, 5)",
])
def test_no_user_query_crashes_the_search(layer, query):
    try:
        result = search(layer, query)
    except QueryError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert all(h.file for h in result.hits)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=40))
def test_any_text_is_a_query_or_one_clear_refusal(layer, query):
    try:
        search(layer, query)
    except QueryError as exc:
        assert "\n" not in str(exc)


def test_operators_in_a_default_query_are_words(layer):
    assert translate('treno OR "casa" title:x tren*') == '"treno" AND "OR" AND "casa" AND "title:x" AND "tren"*'
    assert search(layer, "treno OR Tokyo").hits == ()  # 'or' is a word here, and no entry has all three
    with pytest.raises(QueryError, match="no word to search for"):
        search(layer, ": — *")


def test_raw_queries_use_fts5_syntax_and_errors_are_one_line(layer):
    assert sorted(h.line for h in search(layer, "Tokyo OR latte", raw=True).hits) == [20, 34]
    assert where(search(layer, "title:Shinkansen", raw=True)) == [("diario[ext_memory].md", 20)]
    assert where(search(layer, "NEAR(treno ritorno, 2)", raw=True)) == [("diario[ext_memory].md", 29)]
    for bad in ('"unbalanced', "AND", "nosuchcolumn:x", "NEAR(", "(treno"):
        with pytest.raises(QueryError) as info:
            search(layer, bad, raw=True)
        assert str(info.value).startswith("not a valid FTS5 query (--raw): ") and "\n" not in str(info.value)


# -- filters -----------------------------------------------------------------------------------

def test_file_filter_by_relative_path_path_on_disk_or_glob(layer):
    assert {h.file for h in search(layer, "treno", file="diario[ext_memory].md").hits} == {"diario[ext_memory].md"}
    assert search(layer, "curiosity", file=str(layer / "14_2_external_module.md")).files == 1
    assert {h.file for h in search(layer, "curiosity", file="14_*", limit=50).hits} == {
        "14_1_minimal_reminder.md", "14_2_external_module.md"}
    with pytest.raises(QueryError, match="no file of the layer matches 'nope.md'"):
        search(layer, "treno", file="nope.md")


def test_container_filter_takes_the_container_and_what_is_under_it(layer):
    assert sorted(h.line for h in search(layer, "treno", container="Viaggi").hits) == [8, 20]
    assert sorted(h.line for h in search(layer, "tren*", container="Viaggi/Treni").hits) == [16, 20]
    with pytest.raises(QueryError, match="no container 'Viag'"):  # whole names only
        search(layer, "treno", container="Viag")
    assert sorted(where(search(layer, "activation", container="042"))) == [("14_1_minimal_reminder.md", 43),
                                                                          ("14_1_minimal_reminder.md", 70)]
    assert where(search(layer, "activation", container="CURIOSITY2", zone=4)) == [("14_1_minimal_reminder.md", 106)]
    with pytest.raises(QueryError, match="no container 'Nope'"):
        search(layer, "treno", container="Nope")


@pytest.mark.parametrize("written", ["NFC", "NFD"])
def test_container_names_compare_after_nfc_normalisation(tmp_path, written):
    """'Città' typed (NFC) or pasted from a macOS file name (NFD) is one name, as for append (issue 7, 12)."""
    import unicodedata
    text = ("# Viaggi — 旅行 [external_memory]\n\n[P1]\n## TOPIC: Città\n[/P1]\n\n[P4]\n"
            "###### LOG: 2026-03-01 — Treno per Città — 電車\nIl treno era in orario.\n[/P4]\n")
    (tmp_path / "viaggi[ext_memory].md").write_text(unicodedata.normalize(written, text), encoding="utf-8")
    for typed in ("NFC", "NFD"):
        name = unicodedata.normalize(typed, "Città")
        assert [h.line for h in search(tmp_path, "treno", container=name).hits] == [8], (written, typed)
        code = main(["search", str(tmp_path), "treno", "--container", name])
        assert code == 0, (written, typed)


def test_date_filters_are_inclusive_at_the_precision_given(layer):
    lines = lambda **kw: sorted(h.line for h in search(layer, "treno", **kw).hits)  # noqa: E731
    assert lines(since="2026-03-01") == [8, 20]
    assert lines(since="2026-03-02") == [20]
    assert lines(until="2026-03-01") == [8, 29]
    assert lines(since="2026-03-02T09:00") == []
    assert lines(until="2026-03-02T08:30") == [8, 20, 29]
    assert lines(since="2025-01-01", until="2025-12-31") == [29]
    with pytest.raises(QueryError, match="since must be a date"):
        search(layer, "treno", since="last week")
    with pytest.raises(QueryError, match="is after until"):
        search(layer, "treno", since="2026-03-02", until="2026-03-01")


def test_zone_filter_and_limit(layer):
    assert {h.zone for h in search(layer, "curiosity", zone=1, limit=50).hits} == {1}
    assert {h.zone for h in search(layer, "curiosity", zone=["P4", "[P5]"], limit=50).hits} == {4}
    first = search(layer, "activation", limit=1)
    assert len(first.hits) == 1 and first.more
    assert not search(layer, "activation", limit=100).more
    for bad in (0, -1, 1001, "3", True):
        with pytest.raises(QueryError, match="limit"):
            search(layer, "x", limit=bad)
    with pytest.raises(QueryError, match="zone must be 1-5"):
        search(layer, "x", zone="P7")


def test_broad_queries_rank_the_most_recent_matches(layer, monkeypatch):
    monkeypatch.setattr(index_module, "RANK_WINDOW", 2)
    import zonemark.search as search_module
    monkeypatch.setattr(search_module, "RANK_WINDOW", 2)
    r = search(layer, "tren*", limit=10)
    # the sub-topic row has no date: it counts as newest; then 2026-03-02T08:30 (2026-03-01 and 2025 are left out)
    assert r.ranked_window == 2 and r.more
    assert sorted(h.line for h in r.hits) == [16, 20]
    every = search(layer, "tren*", limit=10, rank_all=True)
    assert every.ranked_window is None and sorted(h.line for h in every.hits) == [8, 16, 20, 29]


# -- the cache ---------------------------------------------------------------------------------

def _md_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.md"))


def test_the_cache_lives_in_zonemark_and_changes_no_file(layer):
    before = {p: p.read_bytes() for p in _md_files(layer)}
    search(layer, "treno")
    assert {p: p.read_bytes() for p in _md_files(layer)} == before
    assert sorted(p.name for p in (layer / ".zonemark").iterdir()) == ["locks", "search.sqlite3"]


def test_edits_on_disk_are_seen_by_the_next_search(layer):
    diary = layer / "diario[ext_memory].md"
    assert search(layer, "latte").hits
    text = diary.read_text(encoding="utf-8")
    diary.write_text(text.replace("latte", "pane!"), encoding="utf-8")  # same size, same second
    assert search(layer, "latte").hits == () and search(layer, "pane").hits
    append_entry(diary, "Viaggi/Treni", "Ritorno — 帰り", "Il treno delle 18:00.", actor="ai", date="2026-03-09",
                 store=Store(fsync=False))
    hit = search(layer, "帰り").hits[0]
    assert (hit.line, hit.container, hit.date) == (23, "Viaggi/Treni", "2026-03-09")
    assert search(layer, "Casa").hits[0].line == 28  # the lines after the append moved
    (layer / "nuovo[ext_memory].md").write_text(DIARY.replace("latte", "caffè"), encoding="utf-8")
    assert {h.file for h in search(layer, "caffe").hits} == {"nuovo[ext_memory].md"}
    (layer / "nuovo[ext_memory].md").unlink()
    assert search(layer, "caffe").hits == ()


def test_a_changed_file_with_its_old_size_and_time_is_hashed_while_its_time_is_recent(layer):
    diary = layer / "diario[ext_memory].md"
    search(layer, "latte")
    st = diary.stat()
    diary.write_bytes(diary.read_bytes().replace(b"latte", b"pasta"))
    os.utime(diary, ns=(st.st_atime_ns, st.st_mtime_ns))  # the clock did not move: size and time look unchanged
    assert search(layer, "pasta").hits


def test_the_index_of_a_folder_drops_files_that_left_and_a_single_file_searches_only_itself(layer):
    search(layer, "curiosity")
    only = search(layer / "14_2_external_module.md", "curiosity", limit=50)
    assert {h.file for h in only.hits} == {"14_2_external_module.md"} and only.files == 1
    assert only.hits[0].path == str(layer / "14_2_external_module.md")
    (layer / "14_2_external_module.md").unlink()
    assert "14_2_external_module.md" not in {h.file for h in search(layer, "curiosity", limit=50).hits}


@pytest.mark.parametrize("damage", ["garbage", "truncated", "foreign", "old schema", "empty"])
def test_a_damaged_or_foreign_cache_is_rebuilt_never_trusted(layer, damage):
    search(layer, "treno")
    cache = layer / ".zonemark" / "search.sqlite3"
    if damage == "garbage":
        cache.write_bytes(b"this is not a database" * 1000)
    elif damage == "truncated":
        cache.write_bytes(cache.read_bytes()[:5000])
    elif damage == "foreign":
        cache.unlink()
        con = sqlite3.connect(cache)
        con.execute("CREATE TABLE files(x)")
        con.execute("INSERT INTO files VALUES ('someone else''s')")
        con.commit()
        con.close()
    elif damage == "old schema":
        con = sqlite3.connect(cache)
        con.execute("UPDATE meta SET value = 'older' WHERE key = 'schema'")
        con.execute("DELETE FROM fts")  # what an older layout would not find
        con.commit()
        con.close()
    else:
        cache.write_bytes(b"")
    r = search(layer, "treno")
    assert sorted(h.line for h in r.hits) == [8, 20, 29] and r.cache == str(cache)
    con = sqlite3.connect(cache)
    assert con.execute("PRAGMA application_id").fetchone()[0] == index_module.APPLICATION_ID
    con.close()


def test_a_cache_damaged_between_searches_in_one_process_is_rebuilt(layer, monkeypatch):
    calls = []
    real = Index.query

    def failing_once(self, *args, **kwargs):
        if not calls:
            calls.append(1)
            exc = sqlite3.DatabaseError("database disk image is malformed")
            exc.sqlite_errorname = "SQLITE_CORRUPT"
            raise exc
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Index, "query", failing_once)
    assert sorted(h.line for h in search(layer, "treno").hits) == [8, 20, 29] and calls == [1]


def test_a_folder_where_the_cache_cannot_be_written_gets_an_index_in_memory(layer):
    (layer / ".zonemark").write_text("a file where the folder would be")
    r = search(layer, "treno")
    assert r.cache is None and len(r.hits) == 3
    assert (layer / ".zonemark").read_text() == "a file where the folder would be"


def test_rebuild_starts_from_nothing(layer):
    search(layer, "treno")
    r = search(layer, "treno", rebuild=True)
    assert r.reindexed == 4 and len(r.hits) == 3
    assert search(layer, "treno").reindexed == 0


def test_a_file_that_is_not_utf8_is_indexed_with_its_bytes_escaped(layer):
    (layer / "rotto[ext_memory].md").write_bytes(DIARY.encode().replace("latte".encode(), b"la\xfftte"))
    hits = search(layer, "volatili").hits
    assert any(h.file == "rotto[ext_memory].md" and "la\\xFFtte" in h.snippet for h in hits)


def test_control_characters_in_a_file_never_reach_the_terminal(layer, capsys):
    (layer / "esc[ext_memory].md").write_bytes(DIARY.encode().replace(b"Vigilia", b"Vigilia\x1b[2J").replace(
        b"Cena con", b"Cena\x07 con"))
    code, out, err = run(capsys, ["search", layer, "famiglia", "--file", "esc[ext_memory].md"])
    assert code == 0 and "\x1b" not in out and "\x07" not in out
    assert "Vigilia\ufffd[2J" in out and "Cena\ufffd con" in out


def test_a_file_name_with_a_line_break_stays_on_its_line(layer, capsys):
    (layer / "two\nlines[ext_memory].md").write_text(DIARY.replace("latte", "zucchero"), encoding="utf-8")
    code, out, err = run(capsys, ["search", layer, "zucchero"])
    assert code == 0 and len(out.splitlines()) == 2 and "two\\x0alines[ext_memory].md:34:" in out


def test_without_fts5_the_search_says_so_in_one_line(layer, monkeypatch):
    index_module.require_fts5.cache_clear()

    class NoFts5:
        def __init__(self, *a, **k):
            pass

        def execute(self, sql, *a):
            raise sqlite3.OperationalError("no such module: fts5")

        def close(self):
            pass

    monkeypatch.setattr(index_module.sqlite3, "connect", NoFts5)
    try:
        with pytest.raises(SearchUnavailable, match="has no FTS5"):
            search(layer, "treno")
    finally:
        index_module.require_fts5.cache_clear()


# -- two processes at once -----------------------------------------------------------------------

WORKER = """
import sys, time
from zonemark.search import search
from zonemark.writer import append_entry
from zonemark.writer.store import Store
layer, role, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = Store(fsync=False)
for k in range(n):
    if role == "writer":
        append_entry(layer + "/diario[ext_memory].md", "Viaggi/Treni", f"viaggio {k}", f"treno numero w{k}",
                     actor="ai", date="2026-04-01", store=store)
    else:
        search(layer, "treno", limit=5)
print("ok")
"""


def test_processes_refreshing_and_searching_at_once_neither_crash_nor_corrupt(layer):
    # many files, so that refreshes overlap
    for k in range(12):
        (layer / f"copia{k}[ext_memory].md").write_text(DIARY.replace("latte", f"latte{k}"), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(layer), role, "15"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in ("reader", "reader", "reader", "writer")]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0 and out.strip() == "ok", err
    r = search(layer, "numero", limit=100)
    assert sorted(h.title for h in r.hits) == sorted(f"viaggio {k}" for k in range(15))
    with Index.open(layer) as live:
        rows = live.rows("diario[ext_memory].md")
    with Index.open(layer, in_memory=True) as fresh:
        fresh.refresh([("diario[ext_memory].md", layer / "diario[ext_memory].md")])
        assert rows == fresh.rows("diario[ext_memory].md")


# -- the command line --------------------------------------------------------------------------

def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_prints_path_line_and_snippet(layer, capsys):
    code, out, err = run(capsys, ["search", layer, "treno", "Tokyo"])
    assert code == 0 and err == ""
    assert out == (f"{layer / 'diario[ext_memory].md'}:20: [P4] 2026-03-02T08:30  Viaggi/Treni — Shinkansen\n"
                   "    Il «treno» per «Tokyo» parte alle 8:30: posto 12A.\n")


def test_cli_json_and_no_match(layer, capsys):
    code, out, err = run(capsys, ["search", layer, "清水寺", "--json"])
    data = json.loads(out)
    assert code == 0 and data["hits"][0]["line"] == 11 and data["hits"][0]["title"] == "京都の寺"
    assert data["match"] == '"清\u200b水\u200b寺\u200b"' and data["ranked_window"] is None
    code, out, err = run(capsys, ["search", layer, "nessuno"])
    assert code == 1 and out == "" and err == "no match for 'nessuno' in 4 files\n"


@pytest.mark.parametrize("argv,message", [
    (["--raw"], "zonemark search: not a valid FTS5 query (--raw): fts5: syntax error near"),
    (["--limit", "0"], "limit must be a whole number"),
    (["--limit", "many"], "invalid int value"),
    (["--zone", "9"], "zone must be 1-5"),
    (["--since", "ieri"], "since must be a date"),
    (["--container", "Nope"], "no container 'Nope'"),
    (["--file", "x.md"], "no file of the layer matches"),
    ([":"], "no word to search for"),
])
def test_cli_bad_input_is_one_line_exit_2(layer, capsys, argv, message):
    query = {":": [], "--raw": ["AND"]}.get(argv[0], ["treno"])
    code, out, err = run(capsys, ["search", layer, *argv, *query])
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err


def test_cli_missing_layer_and_no_query(tmp_path, capsys):
    code, out, err = run(capsys, ["search", tmp_path / "nope", "x"])
    assert code == 2 and err.strip() == f"zonemark search: no such file or folder: {tmp_path / 'nope'}"
    code, out, err = run(capsys, ["search", tmp_path])
    assert code == 2 and "required: QUERY" in err and len(err.strip().splitlines()) == 1


def test_cli_notes_a_broad_query_and_an_unwritable_cache(layer, capsys, monkeypatch):
    import zonemark.search as search_module
    monkeypatch.setattr(search_module, "RANK_WINDOW", 1)
    monkeypatch.setattr(index_module, "RANK_WINDOW", 1)
    (layer / ".zonemark").write_text("not a folder")
    code, out, err = run(capsys, ["search", layer, "treno"])
    assert code == 0 and out.count("diario") == 1
    assert "note: the index could not be saved" in err
    assert "note: more than 1 matches: ranked the 1 most recent" in err


def test_search_command_imports_nothing_it_does_not_use():
    """Building the parser loads no search and no writer code; of the writer only the words of its help (the
    package's lazy table and ``writer.rules``, which imports nothing at load)."""
    code = ("import sys; from zonemark.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('zonemark.search', 'sqlite3', 'zonemark.writer'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['zonemark.writer', 'zonemark.writer.rules']"



@pytest.mark.parametrize("name", ["node_modules/pkg/nota[ext_memory].md", ".git/nota[ext_memory].md",
                                  "bozze/nota[ext_memory].md"])
def test_a_file_the_layer_leaves_out_is_named_so_by_file(layer, capsys, name):
    """W40: --file naming a file the layer leaves out says why in one line (exit 2), as every face would."""
    (layer / ".zonemarkignore").write_text("bozze/\n", encoding="utf-8")
    (layer / name).parent.mkdir(parents=True, exist_ok=True)
    (layer / name).write_text(DIARY.replace("famiglia", "famiglia perché 東京"), encoding="utf-8")
    code, out, err = run(capsys, ["search", layer, "famiglia", "--file", name])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "not a file of the layer" in err and name.split("/")[0] in err


@pytest.mark.parametrize("typed", [True, False])
def test_a_title_with_a_byte_that_is_not_utf8_is_indexed_and_found(tmp_path, capsys, typed):
    """A file whose title holds a kept byte (§1) is indexed (SQLite takes no lone surrogate: the stored title has
    the byte's escape) and its entries are found, from the library and the CLI, typed or untyped, however long."""
    tag = " [external_memory]" if typed else ""
    data = (b"# Note \xff perch\xc3\xa9 \xe2\x80\x94 \xe6\x9d\xb1\xe4\xba\xac" + tag.encode() + b"\n\n[P1]\n"
            b"## TOPIC: Citt\xc3\xa0 \xfe\n[/P1]\n\n[P4]\n###### LOG: 2026-01-03 \xe2\x80\x94 voce rara\ncorpo \xfe\n[/P4]\n"
            + b"riga di testo \xe2\x80\x94 perch\xc3\xa9\n" * 80_000)
    (tmp_path / "n[ext_memory].md").write_bytes(data)
    hits = search(tmp_path, "rara").hits
    assert len(hits) == 1 and hits[0].file == "n[ext_memory].md"
    code, out, err = run(capsys, ["search", tmp_path, "rara"])
    assert code == 0 and err == "" and "voce rara" in out and "\\xFE" in out
