"""A layer built from parsed documents (Layer.from_documents) and kept current (LiveLayer)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zonemark.core.parser import parse_file
from zonemark.layer import Layer, discover
from zonemark.layer.live import LiveLayer, findings_for, layer_wide

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ROOT / "tests" / "fixtures" / "layers"
FOLDERS = sorted([p for p in LAYERS.iterdir() if p.is_dir()] + [ROOT / "examples" / "layer"])


def summary(layer: Layer):
    """Everything a layer resolves, as plain comparable data."""
    return (
        [(f.rel, f.merged, f.file_type) for f in layer.files],
        [d.format() for d in layer.diagnostics],
        [(m.module_id, m.temporary, m.file, m.info.line, m.effective_state, m.state_source) for m in layer.modules],
        [(n.nucleus_id, n.file) for n in layer.nuclei],
        list(layer.edges),
        layer.reminder,
        sorted(layer.superseded),
        [d.format() for d in layer.all_diagnostics()],
    )


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_from_documents_resolves_exactly_as_load(folder):
    root, found = discover(folder)
    docs = [(rel, path, parse_file(path)) for rel, path in reversed(found)]  # any order in, path order out
    assert summary(Layer.from_documents(root, docs)) == summary(Layer.load(folder))


def test_from_documents_reads_nothing_from_disk(tmp_path):
    from zonemark.core.parser import parse
    doc = parse("# A [reminder]\n\n[P1]\n## MODULE 001: X\n### STATE\nactive\n[/P1]\n", path="a.md")
    layer = Layer.from_documents(tmp_path / "not-there", [("a[reminder].md", tmp_path / "nope.md", doc)])
    assert layer.reminder == "a[reminder].md"
    assert [m.effective_state for m in layer.modules] == ["active"]


MAIN = """# MAIN [reminder]

[P1]
## MODULE 001: CORE
### STATE
active

### CONNECTIONS
* MODULE HUB
[/P1]
"""
HUB = """# HUB [external_module]

[P1]
## MODULE HUB: Hub — centro
### STATE
inactive
[/P1]
"""


def make(tmp_path) -> Path:
    (tmp_path / "main[reminder].md").write_text(MAIN, encoding="utf-8")
    (tmp_path / "hub[ext_module].md").write_text(HUB, encoding="utf-8")
    return tmp_path


def unresolved(layer):
    return [d.line for d in layer.diagnostics if d.code == "LAYER_UNRESOLVED_CONNECTION"]


def test_live_layer_reuses_parsed_files_until_one_changes(tmp_path):
    live = LiveLayer(make(tmp_path))
    first = live.layer()
    assert live.layer() is first  # nothing changed: not even rebuilt
    main = tmp_path / "main[reminder].md"
    live.set_text(main, MAIN)  # same text as on disk, new string object
    same = live.layer()
    assert same.file("hub[ext_module].md").doc is first.file("hub[ext_module].md").doc
    live.set_text(main, MAIN + "\nmore\n")
    second = live.layer()
    assert second is not first
    assert second.file("hub[ext_module].md").doc is first.file("hub[ext_module].md").doc  # reused
    assert second.file("main[reminder].md").doc is not first.file("main[reminder].md").doc


def test_live_layer_open_text_overrides_disk_until_dropped(tmp_path):
    live = LiveLayer(make(tmp_path))
    assert unresolved(live.layer()) == []
    hub = tmp_path / "hub[ext_module].md"
    live.set_text(hub, HUB.replace("MODULE HUB:", "MODULE HUB2:"))
    assert unresolved(live.layer()) == [9]
    assert hub.read_text(encoding="utf-8") == HUB
    live.drop_text(hub)
    assert unresolved(live.layer()) == []


def test_live_layer_sees_disk_changes_new_files_and_deleted_files(tmp_path):
    live = LiveLayer(make(tmp_path))
    live.layer()
    hub = tmp_path / "hub[ext_module].md"
    hub.write_text(HUB.replace("MODULE HUB:", "MODULE OTHER:") + "\n", encoding="utf-8")  # size changes too
    os.utime(hub, ns=(1, 1))
    assert unresolved(live.layer()) == [9]
    hub.unlink()
    assert [f.rel for f in live.layer().files] == ["main[reminder].md"]
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "hub[ext_module].md").write_text(HUB, encoding="utf-8")
    live.rescan()
    layer = live.layer()
    assert [f.rel for f in layer.files] == ["main[reminder].md", "sub/hub[ext_module].md"]
    assert unresolved(layer) == []


def test_live_layer_includes_unsaved_new_files_and_reports_findings_per_file(tmp_path):
    live = LiveLayer(tmp_path)
    (tmp_path / "hub[ext_module].md").write_text(HUB, encoding="utf-8")
    new = tmp_path / "main[reminder].md"  # not saved yet
    assert layer_wide(live.layer())[0].code == "LAYER_NO_REMINDER"
    live.set_text(new, MAIN.replace("* MODULE HUB", "* MODULE NOWHERE"))
    layer = live.layer()
    assert layer_wide(layer) == []
    assert [(d.code, d.line) for d in findings_for(layer, "main[reminder].md")] == [
        ("UNGOVERNED_MODULE", 4), ("LAYER_UNRESOLVED_CONNECTION", 9)]  # the file's own, then the layer's
    assert [d.code for d in findings_for(layer, "hub[ext_module].md")] == ["UNGOVERNED_MODULE"]
    assert live.rel(tmp_path.parent / "x.md") is None and not live.contains(tmp_path.parent / "x.md")


@pytest.mark.parametrize("rel", [".git/COMMIT — perché[reminder].md", "node_modules/東京/x[reminder].md",
                                 "Node_Modules/x[reminder].md", "bozze/idea[reminder].md", ".nota[reminder].md"])
def test_an_unsaved_text_the_folder_rules_leave_out_is_not_in_the_layer(tmp_path, rel):
    """W40: an editor's unsaved buffer under .git/, node_modules/, a hidden name or an ignored folder is checked
    alone, as the same file saved would be; it never joins the layer (nor hides its LAYER_NO_REMINDER)."""
    (tmp_path / "hub[ext_module].md").write_text(HUB, encoding="utf-8")
    (tmp_path / ".zonemarkignore").write_text("bozze/\n", encoding="utf-8")
    live = LiveLayer(tmp_path)
    unsaved = tmp_path / rel
    live.set_text(unsaved, MAIN)
    assert [r for r, _ in live.files()] == ["hub[ext_module].md"] and not live.contains(unsaved)
    assert layer_wide(live.layer())[0].code == "LAYER_NO_REMINDER"
