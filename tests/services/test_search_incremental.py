"""The incremental refresh of the search index gives exactly what a full rebuild gives.

Random edits — appends through the writer, lines inserted or deleted anywhere (structure
included: zone tags, headers, fences, comments), text changed in place — are applied to a
memory and a reminder; after each one the refreshed index (rows with their lines, containers,
zones, dates and texts; pieces with their offsets, lines, zone levels and open headers) must
equal the index built from scratch of the same bytes.  The block size is shrunk so that small
files exercise the same piece-level path as large ones, and the test checks that it did.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

import zonemark.search.index as index_module
from zonemark.search.index import Index
from zonemark.writer import RefusedWrite, append_entry
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.store import Store

WORDS = ("memoria nota perché già città settimana sessione タイヤ 交換 記録 日本語 — winter summer tyres "
         "insurance review plan focus archive signal").split()


def _text(r: random.Random, lo=4, hi=12) -> str:
    return " ".join(r.choice(WORDS) for _ in range(r.randint(lo, hi)))


def memory(r: random.Random) -> str:
    out = ["# Diario — 日記 [external_memory]", ""]
    day = 1
    for t in range(8):
        levels = [2] + [r.choice((3, 3, 4)) for _ in range(r.randint(0, 2))]
        for depth, level in enumerate(levels):
            keyword = "TOPIC" if level == 2 else f"SUBTOPIC{level - 2}"
            out += ["[P1]", f"{'#' * level} {keyword}: {_text(r, 1, 3)} {t}.{depth}", "[/P1]", "", "[P4]"]
            for _ in range(r.randint(0, 4)):
                out += [f"###### LOG: 2026-0{1 + day % 9}-{10 + day % 18} — {_text(r, 2, 5)}", _text(r)]
                if r.random() < 0.3:
                    out += [f"* {_text(r, 2, 4)}", f"* {_text(r, 2, 4)}"]
                out.append("")
                day += 1
            out += ["[/P4]", ""]
    return "\n".join(out)


def reminder(r: random.Random) -> str:
    out = ["# Aria [reminder]", "", "[P1]", "## RULES:", "* R1: Rispondi in italiano.", "",
           "## NUCLEUS 1: CORE", "### FUNCTION", "* Tiene insieme — 全体.", "[/P1]", ""]
    for m in range(6):
        out += ["[P1]", f"## MODULE 0{m}0: MOD_{m} [NUCLEI: 1]", "**STATE:** active", "", "### FUNCTION",
                _text(r), "[/P1]", "", "[P4]"]
        for _ in range(r.randint(0, 3)):
            out += [f"###### LOG: 2026-05-0{1 + m} — {_text(r, 2, 4)}", _text(r), ""]
        out += ["[/P4]", ""]
        if r.random() < 0.4:
            out += ["[P5]", _text(r), "[/P5]", ""]
    out += ["[P4]", "## MODULE_STATE_REGISTRY:", "* ACTIVE: 000", "* INACTIVE:", "[/P4]", ""]
    return "\n".join(out)


RISKY = ["[P4]", "[/P4]", "[P5]", "[/P1]", "```", "~~~", "<!--", "-->", "## TOPIC: Nuovo", "### SUBTOPIC1: Sotto",
         "#### SUBTOPIC2: Più giù", "## MODULE 777: NEW", "# Secondo titolo", "* R2: regola", "> [!NOTE] nota",
         "---", "###### LOG: 2026-12-01 — inserita", "###### nota senza log", "", "testo qualunque — テスト",
         "**STATE:** inactive", "[NUCLEI: 1]", "* ACTIVE: 010"]


def _index(folder: Path, rel: str):
    with Index.open(folder, in_memory=True) as ix:
        ix.refresh([(rel, folder / rel)])
        return ix.rows(rel), ix.pieces(rel)


def _edit(r: random.Random, path: Path, store: Store, live: Index) -> str:
    data = path.read_bytes()
    lines = data.split(b"\n")
    op = r.random()
    if op < 0.35:
        containers = sorted({row[2] for row in live.rows(path.name) if row[1] in ("topic", "subtopic", "module")})
        if containers:
            try:
                append_entry(path, r.choice(containers), _text(r, 2, 4), _text(r) + "\n" + _text(r), actor="ai",
                             date="2026-11-0" + str(r.randint(1, 9)), store=store)
                return "append"
            except RefusedWrite:
                pass
        op = 0.5
    if op < 0.55:  # a line of text somewhere inside an entry or a zone
        k = r.randrange(1, len(lines))
        lines.insert(k, _text(r).encode())
        what = "insert text"
    elif op < 0.7:
        k = r.randrange(1, len(lines))
        lines.insert(k, r.choice(RISKY).encode())
        what = "insert structure"
    elif op < 0.8:
        k = r.randrange(1, len(lines))
        del lines[k]
        what = "delete line"
    elif op < 0.9:  # change characters in place, same line count
        k = r.randrange(1, len(lines))
        lines[k] = lines[k][: r.randint(0, len(lines[k]))] + r.choice(WORDS).encode() + lines[k][-3:]
        what = "change line"
    else:  # a balanced new container before a random opening tag
        openings = [k for k, ln in enumerate(lines) if ln == b"[P1]"]
        if not openings:
            return "none"
        k = r.choice(openings)
        lines[k:k] = [b"[P1]", "## TOPIC: Aggiunto — 追加".encode(), b"[/P1]", b"", b"[P4]", b"[/P4]", b""]
        what = "insert container"
    path.write_bytes(b"\n".join(lines))
    return what


SEEDS = [("memory", s) for s in range(1, 5)] + [("reminder", s) for s in range(5, 8)]


@pytest.mark.parametrize("kind,seed", SEEDS)
def test_incremental_refresh_equals_a_full_rebuild(tmp_path, monkeypatch, kind, seed):
    monkeypatch.setattr(index_module, "BLOCK", 128)
    snapshot_module.forget()
    r = random.Random(seed)
    original = (memory if kind == "memory" else reminder)(r)
    path = tmp_path / f"file[{'ext_memory' if kind == 'memory' else 'reminder'}].md"
    store = Store(fsync=False, retention=2)
    live = Index.open(tmp_path)
    try:
        steps = 0
        for round_ in range(8):
            path.write_text(original, encoding="utf-8")
            snapshot_module.forget()
            live.refresh([(path.name, path)])
            assert (live.rows(path.name), live.pieces(path.name)) == _index(tmp_path, path.name)
            for _ in range(8):
                what = _edit(r, path, store, live)
                live.refresh([(path.name, path)])
                got = (live.rows(path.name), live.pieces(path.name))
                assert got == _index(tmp_path, path.name), f"after '{what}' (round {round_})"
                steps += 1
        assert live.counts["incremental"] >= steps // 4, live.counts  # the piece-level path did run
    finally:
        live.close()


def test_an_append_in_a_large_file_reparses_only_its_piece(tmp_path):
    """A 16 KiB block granularity: an append to one topic of a ~1 MB memory takes the incremental path."""
    r = random.Random(9)
    text = "\n".join(memory(r) if k == 0 else memory(r).split("\n", 2)[2] for k in range(40))
    path = tmp_path / "big[ext_memory].md"
    path.write_text(text, encoding="utf-8")
    with Index.open(tmp_path) as live:
        live.refresh([(path.name, path)])
        rows = live.rows(path.name)
        middle = [row[2] for row in rows if row[1] == "topic"][len(rows) // 40]
        append_entry(path, middle, "nel mezzo — 真ん中", "testo nuovo", actor="ai", date="2026-12-24",
                     store=Store(fsync=False))
        live.refresh([(path.name, path)])
        assert live.counts == {"incremental": 1, "full": 1}
        assert (live.rows(path.name), live.pieces(path.name)) == _index(tmp_path, path.name)
        assert any(row[6] == "nel mezzo — 真\u200bん\u200b中\u200b" for row in live.rows(path.name))
