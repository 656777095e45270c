"""The context export against its frozen copy (B20): the same text, token estimates, files and entries left out,
or the same refusal, on the repository's layers and files and on generated hostile files, at budgets that leave
out nothing, some entries, all of them, or refuse.

``tests/context_reference.py`` is the export as it was, on a layer loaded with the block tree; the export now
loads the layer without it and reads what a budget leaves out in one scan of the headers and zones."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from zonemark.context import ContextRefused, context
from zonemark.layer import Layer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import context_reference as ref  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _answer(fn, layer, budget):
    try:
        return fn(layer, budget).to_dict()
    except (ContextRefused, ref.ContextRefused) as exc:
        return ("refused", str(exc))


def _budgets(path: Path) -> list[int | None]:
    whole = ref.context(path).tokens
    return sorted({None, whole, whole + 1, max(1, whole - 1), max(1, whole - 7), max(1, whole * 3 // 4),
                   max(1, whole // 2), max(1, whole // 4), max(1, whole // 10), 40, 1}, key=lambda b: b or 0)


def _same(path: Path) -> int:
    """Compare the two exports of ``path`` at each budget; the number of budgets at which entries were left out."""
    layer = Layer.load(path)
    trimmed = 0
    for budget in _budgets(path):
        old = _answer(ref.context, path, budget)
        assert _answer(context, path, budget) == old, (path, budget)
        assert _answer(context, layer, budget) == old, (path, budget)  # as the MCP server's cache holds it
        if isinstance(old, dict) and old["leftOut"]["entries"]:
            trimmed += 1
    assert all(lf.doc.tree is None for lf in layer.files), "the export built a tree"
    return trimmed


def _layers() -> list[Path]:
    found = [ROOT / "examples" / "layer"]
    found += sorted(p for p in (ROOT / "tests" / "fixtures" / "layers").iterdir() if p.is_dir())
    found += sorted(p for p in (ROOT / "tests" / "fixtures").rglob("*.md"))
    found += sorted(p for p in (ROOT / "examples").rglob("*.md"))
    return found


def test_b20_the_export_is_the_frozen_copy_on_every_layer_and_file_of_the_repository():
    trimmed = sum(_same(path) for path in _layers())
    assert trimmed > 20  # the budgets did leave entries out, in many of them


_HEAD = ["# Note — perché [external_memory]\n", "# Registro 東京 [reminder]\n", "# Modulo [external_module]\n",
         "\ufeff# Con BOM [external_memory]\n", "Senza titolo\n"]
_LINES = [
    "[P1]\n", "[/P1]\n", "[P2]\n", "[/P2]\n", "[P3]\n", "[/P3]\n", "[P4]\n", "[/P4]\n", "[P5]\n", "[/P5]\n",
    "###### LOG: 2026-01-{d:02d} — voce {i}\n", "###### LOG: 2025-12-{d:02d}\n", "###### LOG: senza data {i}\n",
    "###### nodo mnemonico {i}\n", "## TOPIC: Tema {i}\n", "### SUBTOPIC1: Sotto\n", "## MODULE 0{d:02d}: M{i}\n",
    "### STATE\n", "active\n", "inactive\n", "# Secondo titolo\n", "testo — perché 東京\n", "plain text\n", "\n",
    "   \n", "\x1c\n", "- voce\n", "  - sotto\n", "```\n", "###### LOG: 2026-02-01 — nel codice\n", "~~~\n",
    "<!-- commento\n", "-->\n", "---\n", "> citazione\n", "riga\rcon CR solo\n", "riga\u2028separata\n",
    "riga CRLF\r\n", "\r\n", "[P4] testo sul tag\n", "[NUCLEI: 1]\n", "## MODULE_STATE_REGISTRY:\n",
    "* ACTIVE: 001\n", "\x0c\n", "riga\x85NEL\n",
]


def _hostile(rng: random.Random) -> str:
    out = [rng.choice(_HEAD)]
    for i in range(rng.randint(0, 120)):
        line = rng.choice(_LINES)
        out.append(line.format(i=i, d=rng.randint(1, 28)))
    text = "".join(out)
    if rng.random() < 0.3:
        text = text.rstrip("\n")
    return text


@pytest.mark.parametrize("seed", range(40))
def test_b20_the_export_is_the_frozen_copy_on_generated_hostile_files(tmp_path, seed):
    rng = random.Random(f"context-{seed}")
    folder = tmp_path / "layer"
    folder.mkdir()
    (folder / "aria[reminder].md").write_text("# Aria [reminder]\n\n[P1]\n## RULES:\n* R0: sempre.\n[/P1]\n\n"
                                              "[P4]\n###### LOG: 2026-01-01 — inizio\nPrima voce.\n[/P4]\n",
                                              encoding="utf-8")
    for k in range(rng.randint(1, 3)):
        name = rng.choice(["note[ext_memory].md", "mod[ext_module].md", "altro.md", "diario[ext_memory].md"])
        (folder / f"{k}{name}").write_bytes(_hostile(rng).encode("utf-8", "surrogatepass"))
    _same(folder)
    for path in sorted(folder.iterdir()):
        _same(path)


def test_b20_the_bench_families_export_as_the_frozen_copy(tmp_path):
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_worst_case as bench
    for family in bench.FAMILIES:
        folder = tmp_path / family
        bench.build(folder, family, 60)
        _same(folder)


def _trimming(path: Path) -> int:
    """A budget at which the frozen copy leaves entries out (and does not refuse)."""
    whole = ref.context(path).tokens
    for budget in range(whole - 1, 0, -5):
        try:
            if ref.context(path, budget).entries_left_out:
                return budget
        except ref.ContextRefused:
            break
    raise AssertionError(f"no budget leaves entries of {path} out")


def _no_tree(monkeypatch):
    """Any use of ``Document.blocks`` on a document parsed without its tree fails the test."""
    from zonemark.core import document

    def refuse(text):
        raise AssertionError("the context export built a block tree")
    monkeypatch.setattr(document, "scan_blocks", refuse)


def test_b20_zonemark_context_gives_the_frozen_copy_without_a_tree(capsys, monkeypatch, tmp_path):
    from zonemark.cli.main import main

    folder = ROOT / "examples" / "layer"
    expected = {budget: ref.context(folder, budget).text for budget in (None, _trimming(folder))}
    _no_tree(monkeypatch)
    for budget, text in expected.items():
        args = ["context", str(folder)] + ([] if budget is None else ["--budget", str(budget)])
        main(args)
        out, _ = capsys.readouterr()
        assert out == text, budget


def test_b20_the_mcp_context_tool_gives_the_frozen_copy_without_a_tree(monkeypatch, tmp_path):
    from mcp_support import Agent, make_layer
    from zonemark.mcp.server import build_server

    folder = make_layer(tmp_path / "layer")
    trim = _trimming(folder)
    expected = {budget: ref.context(folder, budget).to_dict() for budget in (None, trim)}
    agent = Agent(build_server(folder))
    _no_tree(monkeypatch)
    for budget, data in expected.items():
        got = agent.call("build_context", **({} if budget is None else {"budget_tokens": budget}))
        assert got == data, budget
    assert expected[trim]["leftOut"]["entries"] >= 1
