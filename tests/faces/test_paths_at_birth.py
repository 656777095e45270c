"""Paths in refusals are fields, named by each face its own way; none is edited out of a text (W66)."""

from __future__ import annotations

import os
import pickle
import re
from pathlib import Path

import pytest

from zonemark.layer.loader import Layer, LayerError
from zonemark.writer import StoreError, WriteConflict

SRC = Path(__file__).resolve().parents[2] / "src" / "zonemark"
MEMORY = "# Diario — 東京 [external_memory]\n\n[P1]\n## TOPIC: Perché\n[/P1]\n"


def test_a_store_refusal_carries_its_path_and_says_it_as_before(tmp_path: Path) -> None:
    path = tmp_path / "diario — 東京[ext_memory].md"
    err = StoreError("the file is read-only (mode 0444); zonemark does not write it", path=path)
    assert str(err) == f"{path}: the file is read-only (mode 0444); zonemark does not write it"
    assert err.path == path and err.describe("diario — 東京[ext_memory].md") == (
        "diario — 東京[ext_memory].md: the file is read-only (mode 0444); zonemark does not write it")
    again = pickle.loads(pickle.dumps(WriteConflict("perché — changed", path=path)))
    assert type(again) is WriteConflict and again.path == path and str(again) == f"{path}: perché — changed"
    assert StoreError("x — エックス", code="NO_SUCH_VERSION").describe(None) == "x — エックス"


def test_a_layer_refusal_carries_its_path_and_says_it_as_before(tmp_path: Path) -> None:
    folder = tmp_path / "strato — 東京"
    folder.mkdir()
    with pytest.raises(LayerError) as raised:
        Layer.load(folder)
    err = raised.value
    assert str(err) == f"no .md files in folder: {folder}" and err.path == folder
    assert err.describe("the layer folder") == "no .md files in folder: the layer folder"
    assert LayerError("no .md files left in ", folder, " after --only/--exclude").describe("x") == (
        "no .md files left in x after --only/--exclude")


def test_a_dangling_link_into_the_layer_is_named_by_its_path_in_the_layer(tmp_path: Path) -> None:
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "diario[ext_memory].md").write_text(MEMORY, encoding="utf-8")
    os.symlink(layer / "perché[ext_memory].md", layer / "rotto[ext_memory].md")  # absolute, into the layer
    os.symlink(tmp_path / "layer2" / "altro.md", layer / "fuori[ext_memory].md")  # into a sibling folder
    messages = {d.path: d.message for d in Layer.load(layer).all_diagnostics() if d.code == "LAYER_UNREADABLE_FILE"}
    assert messages["rotto[ext_memory].md"] == ("a dangling symbolic link (to perché[ext_memory].md): there is no "
                                                "file to read")
    assert messages["fuori[ext_memory].md"] == (f"a dangling symbolic link (to {tmp_path / 'layer2' / 'altro.md'}): "
                                                f"there is no file to read")  # outside: as the link says


def test_the_mcp_face_edits_no_message_text_with_regular_expressions() -> None:
    for module in ("server.py", "refusals.py"):
        source = (SRC / "mcp" / module).read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import re\b|from re import)", source, re.M), module
