"""Which layer an open file belongs to (docs/conformance.md, E1), and the ``zonemark lsp`` command."""

from __future__ import annotations

import sys
from pathlib import Path

from zonemark.cli.main import main
from zonemark.lsp.session import Session

SOURCE = "# HUB [external_module]\n\n[P1]\n## MODULE HUB: Hub\n### STATE\nactive\n[/P1]\n"


def test_e1_the_deepest_workspace_folder_else_the_files_own_folder(tmp_path):
    outer, inner, elsewhere = tmp_path / "ws", tmp_path / "ws" / "layers" / "aria", tmp_path / "other"
    for d in (inner, elsewhere):
        d.mkdir(parents=True)
    s = Session()
    s.set_folders([inner, outer])
    assert s.root_for(inner / "a[reminder].md") == inner
    assert s.root_for(inner / "sub" / "b.md") == inner
    assert s.root_for(outer / "notes.md") == outer
    assert s.root_for(elsewhere / "x.md") == elsewhere  # outside every workspace folder


def test_e1_a_file_the_layer_does_not_list_is_checked_alone(tmp_path):
    (tmp_path / "hub[ext_module].md").write_text(SOURCE, encoding="utf-8")
    other = tmp_path / "notes.txt"
    other.write_text("# T [reminder]\n", encoding="utf-8")
    s = Session()
    s.set_folders([tmp_path])
    uri = other.as_uri()
    s.open(uri, other.read_text(encoding="utf-8"), 1)
    ctx = s.context(uri)
    assert ctx.live is None and [f.rel for f in ctx.layer.files] == ["notes.txt"]
    md = (tmp_path / "hub[ext_module].md").as_uri()
    s.open(md, SOURCE, 1)
    ctx = s.context(md)
    assert ctx.live is not None and ctx.rel == "hub[ext_module].md"


def test_lsp_command_without_the_extra_is_one_line_and_exit_2(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pygls", None)  # import pygls now raises ImportError
    for name in [m for m in sys.modules if m == "zonemark.lsp.server" or m.startswith("pygls.")]:
        monkeypatch.delitem(sys.modules, name)  # imported by an earlier test of this worker: import it afresh
    assert main(["lsp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'zonemark[lsp]'" in err


def test_layers_of_removed_workspace_folders_are_dropped(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        (d / "hub[ext_module].md").write_text(SOURCE, encoding="utf-8")
    s = Session()
    s.set_folders([a, b])
    assert sorted(live.root for live in s.workspace_layers()) == [a, b]
    s.open((b / "hub[ext_module].md").as_uri(), SOURCE, 1)
    s.set_folders([a])
    assert sorted(live.root for live in s.workspace_layers()) == [a, b]  # b still has an open file
    s.close((b / "hub[ext_module].md").as_uri())
    s.set_folders([a])
    assert [live.root for live in s.workspace_layers()] == [a]


def test_server_log_records_are_one_line_without_tracebacks():
    import logging

    from zonemark.lsp.serve import OneLineFormatter
    try:
        raise ValueError("bad message — messaggio\nsecond line")
    except ValueError:
        record = logging.LogRecord("pygls", logging.ERROR, __file__, 1, "Unable to handle message", None,
                                   sys.exc_info())
    text = OneLineFormatter("%(levelname)s %(message)s").format(record)
    assert text == "ERROR Unable to handle message (ValueError: bad message — messaggio second line)"


def test_e1_the_home_folder_and_a_filesystem_root_are_never_read_whole(tmp_path, monkeypatch):
    from pathlib import Path
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    s = Session()
    assert s.root_for(tmp_path / "notes.md") is None and s.live_for(tmp_path / "notes.md") is None
    assert s.root_for(Path("/x.md")) is None
    assert s.root_for(tmp_path / "layer" / "a.md") == tmp_path / "layer"
    f = tmp_path / "hub[ext_module].md"
    f.write_text(SOURCE, encoding="utf-8")
    s.open(f.as_uri(), SOURCE.replace("active", "attivo"), 1)  # the open text, not the disk
    ctx = s.context(f.as_uri())
    assert ctx.live is None and [d.code for d in ctx.doc.diagnostics] == ["UNGOVERNED_MODULE",
                                                                         "DEPRECATED_ITALIAN_KEYWORD"]


def test_e1_a_workspace_folder_that_is_the_home_folder_or_a_root_is_not_read_whole_either(tmp_path, monkeypatch):
    """An editor opened on the home folder (or on '/') must not make the server walk all of it: such a
    workspace folder is passed over, and a file in it belongs to the layer of its own folder."""
    from pathlib import Path
    monkeypatch.setattr(Path, "home", classmethod(lambda cls: tmp_path))
    (tmp_path / "appunti").mkdir()
    f = tmp_path / "appunti" / "hub[ext_module].md"
    f.write_text(SOURCE, encoding="utf-8")
    for folders in ([tmp_path], [Path("/")], [Path("/"), tmp_path]):
        s = Session()
        s.set_folders(folders)
        assert s.root_for(f) == tmp_path / "appunti"
        assert s.root_for(tmp_path / "stray.md") is None
        assert [live.root for live in s.workspace_layers()] == []
        s.open(f.as_uri(), SOURCE, 1)
        assert s.context(f.as_uri()).live.root == tmp_path / "appunti"
    s = Session()
    s.set_folders([Path("/"), tmp_path, tmp_path / "appunti"])
    assert [live.root for live in s.workspace_layers()] == [tmp_path / "appunti"]


def test_published_diagnostics_follow_random_edits_exactly(tmp_path):
    """Random edits through the server's text sync (in-process): after each one the published
    diagnostics are those of the whole text parsed afresh as a layer, at the same places."""
    import random

    from lsprotocol import types

    from zonemark.core.parser import parse
    from zonemark.layer import Layer
    from zonemark.layer.live import findings_for, layer_wide
    from zonemark.lsp.server import build_server
    from zonemark.lsp.text import LspText

    text = (Path(__file__).resolve().parents[2] / "examples" / "layer" / "aria[reminder].md").read_text(
        encoding="utf-8")
    path = tmp_path / "aria[reminder].md"
    path.write_text(text, encoding="utf-8")
    published = {}
    server = build_server()
    server.text_document_publish_diagnostics = lambda p: published.__setitem__(p.uri, p)
    server.session.set_folders([tmp_path])
    uri = path.as_uri()
    server.session.open(uri, text, 1)
    server.schedule(uri)
    rng = random.Random(11)
    pieces = ["[P4]\n", "[/P1]\n", "## MODULE 009: X\n", "* MODULE 009\n", "###### LOG: 2026-02-30 — x\n",
              "—", "日本", "\n", "# T [reminder]\n", "  ", "[NUCLEI: a]", "* R1: r\n"]
    for version in range(2, 120):
        a, b = sorted(rng.randrange(len(text) + 1) for _ in range(2))
        b = min(b, a + rng.randrange(40))
        new = "".join(rng.choice(pieces) for _ in range(rng.randrange(3)))
        lsp = LspText(text)
        start, end = lsp.position(a), lsp.position(b)
        server.session.change(uri, [types.TextDocumentContentChangePartial(
            range=types.Range(start=start, end=end), text=new)], version)
        server.schedule(uri)
        text = text[:a] + new + text[b:]
        doc = parse(text)
        layer = Layer.from_documents(tmp_path, [(path.name, path, doc)])
        expected = [(d.code, d.line - 1) for d in findings_for(layer, path.name)]
        expected += [(d.code, (doc.title_line or 1) - 1) for d in layer_wide(layer)]  # E2
        got = published[uri]
        assert got.version == version
        assert [(d.code, d.range.start.line) for d in got.diagnostics] == expected


def test_e6_code_lenses_count_own_entries_and_those_of_sub_topics(tmp_path):
    import shutil

    from lsprotocol import types

    from zonemark.lsp.server import build_server
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "layer", tmp_path / "layer")
    path = tmp_path / "layer" / "journal[ext_memory].md"
    server = build_server()
    server.text_document_publish_diagnostics = lambda p: None
    server.session.set_folders([tmp_path / "layer"])
    server.session.open(path.as_uri(), path.read_text(encoding="utf-8"), 1)
    lenses = server.protocol.fm.features[types.TEXT_DOCUMENT_CODE_LENS](
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri())))
    assert [(lens.range.start.line + 1, lens.command.title) for lens in lenses] == [
        (4, "2 entries (3 with its sub-topics) · last 2026-05-05"), (16, "1 entry · no dated entry"),
        (25, "0 entries · no dated entry")]
    reminder = (tmp_path / "layer" / "aria[reminder].md")
    server.session.open(reminder.as_uri(), reminder.read_text(encoding="utf-8"), 1)
    assert server.protocol.fm.features[types.TEXT_DOCUMENT_CODE_LENS](
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=reminder.as_uri()))) == []


def test_e1_the_temporary_folder_is_never_read_whole(tmp_path, monkeypatch):
    """A file opened straight from the system's temporary folder (a download, an attachment) is checked alone:
    that folder holds every program's scratch files, and walking it would delay the file's diagnostics."""
    import tempfile
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    s = Session()
    assert s.root_for(tmp_path / "allegato — 添付.md") is None
    assert s.root_for(tmp_path / "layer" / "a.md") == tmp_path / "layer"
