"""``zonemark lsp`` end to end: a real LSP client (pytest-lsp) drives the server over stdio.

Every test starts ``python -m zonemark lsp`` in a scratch workspace holding a small layer
(a reminder, an external module, an external memory; Italian, Japanese and an emoji in
the text so that UTF-16 columns are exercised) and talks to it as an editor would.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from zonemark.core.diagnostics import CATALOGUE

pytestmark = pytest.mark.asyncio

REMINDER = """\
# ARIA [reminder]

[P1]
## RULES:
* R1: Keep every memory — sempre.

## NUCLEUS 1: LOGICAL
### FUNCTION
Keep reasoning coherent.

## MODULE 001: ANCHOR [NUCLEI: 1]
### FUNCTION
Keep the voice stable — 日本語 too.

### STATE
active

### CONNECTIONS
* MODULE CURIOSITY
* NUCLEUS 1
[/P1]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE: CURIOSITY
[/P4]
"""

MODULE = """\
# CURIOSITY [external_module]

[P1]
## MODULE CURIOSITY: Curiosity drive [NUCLEI: 1]
### FUNCTION
Ask one question — una domanda.

### STATE
inactive

### CONNECTIONS
* MODULE 001
[/P1]
"""

MEMORY = """\
# Cars [external_memory]

[P1]
## TOPIC: Maintenance
[/P1]

[P4]
###### LOG: 2026-08-31 — service
Oil changed — olio cambiato.

###### LOG: 2026-09-06 — tyres
Winter set 😀.
[/P4]

[P1]
### SUBTOPIC1: Tyres
[/P1]

[P4]
[/P4]
"""

FILES = {"aria[reminder].md": REMINDER, "curiosity[ext_module].md": MODULE, "cars[ext_memory].md": MEMORY}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "zonemark", "lsp"]))
async def client(lsp_client: LanguageClient, tmp_path: Path):
    for name, text in FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    lsp_client.root = tmp_path
    lsp_client.registrations = []

    @lsp_client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams):  # the editor side of dynamic registration
        lsp_client.registrations.extend(params.registrations)

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=uris.from_fs_path(str(tmp_path)), name="layer")]))
    yield
    await lsp_client.shutdown_session()


# -- helpers ----------------------------------------------------------------------------------

def uri(client, name: str) -> str:
    return uris.from_fs_path(str(client.root / name))


def open_file(client, name: str, text: str | None = None) -> str:
    u = uri(client, name)
    text = FILES[name] if text is None else text
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=u, language_id="markdown", version=1, text=text)))
    return u


def change(client, u: str, version: int, *edits):
    """Send range edits ((line, char, line, char, text), ...) as one didChange."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=u, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=a, character=b), end=types.Position(line=c, character=d)),
            text=text) for a, b, c, d, text in edits]))


async def diagnostics(client, u: str, predicate=lambda ds: True, timeout: float = 20.0):
    """The diagnostics last published for ``u`` once ``predicate`` holds for them."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        ds = client.diagnostics.get(u)
        if ds is not None and predicate(ds):
            return ds
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics for {u} satisfied the condition; last: {client.diagnostics.get(u)}")


def codes(ds) -> list[str]:
    return [d.code for d in ds]


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def utf16(s: str) -> int:
    return len(s.encode("utf-16-le")) // 2


def doc_id(u: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=u)


# -- diagnostics ---------------------------------------------------------------------------------

BROKEN = """\
# NOTES [external_module]

## MODULE NOTE_1: Fuori — 😀 [NUCLEI: 1]
[P7]
[P5]
text
"""


async def test_open_publishes_codes_severities_and_construct_ranges(client: LanguageClient):
    u = open_file(client, "notes[ext_module].md", BROKEN)
    ds = await diagnostics(client, u, lambda ds: "UNPROTECTED_LOGICAL_CONTENT" in codes(ds))
    by_code = {d.code: d for d in ds}
    header = BROKEN.splitlines()[2]
    unprotected = by_code["UNPROTECTED_LOGICAL_CONTENT"]
    assert unprotected.severity == types.DiagnosticSeverity.Error
    assert unprotected.source == "zonemark"
    assert unprotected.range == types.Range(start=at(2, 0), end=at(2, utf16(header)))  # the whole header, UTF-16
    bad_tag = by_code["INVALID_PERMISSION_LEVEL"]
    assert bad_tag.range == types.Range(start=at(3, 0), end=at(3, 4))  # the tag [P7]
    unclosed = by_code["UNCLOSED_PERMISSION_BLOCK"]
    assert unclosed.range == types.Range(start=at(4, 0), end=at(4, 4))  # the tag [P5]
    # A layer-level finding of this file: no STATE and no registry entry for NOTE_1.
    assert by_code["LAYER_MODULE_WITHOUT_STATE"].severity == types.DiagnosticSeverity.Warning


async def test_change_republishes_and_hover_explains_the_code(client: LanguageClient):
    u = open_file(client, "notes[ext_module].md", BROKEN)
    await diagnostics(client, u, lambda ds: "UNPROTECTED_LOGICAL_CONTENT" in codes(ds))
    # Two edits in one change: wrap the header in [P1] ... [/P1] instead of the bogus [P7].
    change(client, u, 2, (3, 0, 3, 4, "[/P1]"), (2, 0, 2, 0, "[P1]\n"))
    ds = await diagnostics(client, u, lambda ds: "UNPROTECTED_LOGICAL_CONTENT" not in codes(ds))
    assert "INVALID_PERMISSION_LEVEL" not in codes(ds)
    unclosed = next(d for d in ds if d.code == "UNCLOSED_PERMISSION_BLOCK")
    assert unclosed.range.start.line == 5  # moved down one line with the inserted [P1]
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(5, 2)))
    assert CATALOGUE["UNCLOSED_PERMISSION_BLOCK"].explanation in hover.contents.value
    assert "§5.1" in hover.contents.value


# -- hover -----------------------------------------------------------------------------------------

async def test_hover_on_zone_tags_module_ids_and_targets(client: LanguageClient):
    u = open_file(client, "aria[reminder].md")
    await diagnostics(client, u)
    # [P4] opening tag (line 23): what the user and the AI may do there (§5.2).
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(22, 1)))
    text = hover.contents.value
    assert "Short-Term Memory" in text and "**AI:** append freely" in text and "**user:**" in text
    assert hover.range == types.Range(start=at(22, 0), end=at(22, 4))
    # The CONNECTIONS target CURIOSITY (another file): name, file, states, nuclei, FUNCTION summary.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(18, 12)))
    text = hover.contents.value
    assert "MODULE CURIOSITY: Curiosity drive" in text
    assert "`curiosity[ext_module].md` line 4" in text
    assert "declared `inactive`, effective **active**" in text and "registry of `aria[reminder].md`" in text
    assert "**nuclei:** 1 LOGICAL" in text
    assert "Ask one question — una domanda." in text
    # A [NUCLEI: 1] target: the nucleus and the modules it governs.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(10, 31)))
    text = hover.contents.value
    assert "NUCLEUS 1: LOGICAL" in text and "001 ANCHOR" in text and "CURIOSITY Curiosity drive" in text
    # The module's own id on its declaration.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(10, 11)))
    assert "MODULE 001: ANCHOR" in hover.contents.value and "declared `active`" in hover.contents.value
    # Plain prose: nothing.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(8, 3)))
    assert hover is None


# -- definition and references -----------------------------------------------------------------

async def test_definition_and_references_across_files(client: LanguageClient):
    u = open_file(client, "aria[reminder].md")
    await diagnostics(client, u)
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc_id(u), position=at(18, 12)))
    assert len(found) == 1
    assert found[0].uri == uri(client, "curiosity[ext_module].md")
    assert found[0].range == types.Range(start=at(3, 10), end=at(3, 19))  # the declared id CURIOSITY
    # From the registry entry too.
    found = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc_id(u), position=at(24, 12)))
    assert found[0].uri == uri(client, "curiosity[ext_module].md")
    # References of CURIOSITY, asked from its declaration in the (unopened) module file.
    m = open_file(client, "curiosity[ext_module].md")
    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=doc_id(m), position=at(3, 12), context=types.ReferenceContext(include_declaration=False)))
    assert sorted((r.uri, r.range.start.line) for r in refs) == [(u, 18), (u, 24)]
    # References of nucleus 1: both [NUCLEI: 1] tags and the CONNECTIONS bullet, with the declaration.
    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=doc_id(u), position=at(6, 11), context=types.ReferenceContext(include_declaration=True)))
    assert sorted((r.uri, r.range.start.line) for r in refs) == sorted([(u, 6), (u, 10), (u, 19), (m, 3)])


# -- symbols ---------------------------------------------------------------------------------------

async def test_document_and_workspace_symbols(client: LanguageClient):
    u = open_file(client, "aria[reminder].md")
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(u)))
    assert [s.name for s in symbols] == ["RULES:", "LOGICAL", "ANCHOR", "MODULE_STATE_REGISTRY:"]
    rules, nucleus, module, registry = symbols
    assert [c.name for c in rules.children] == ["R1: Keep every memory — sempre."]
    assert nucleus.kind == types.SymbolKind.Interface and module.kind == types.SymbolKind.Module
    assert [c.name for c in module.children] == ["FUNCTION", "STATE", "CONNECTIONS"]
    assert module.selection_range.start == at(10, 3) and module.range.start == at(10, 0)
    assert module.range.end.line == 20  # through the closing [/P1]

    m = open_file(client, "cars[ext_memory].md")
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc_id(m)))
    (topic,) = symbols
    assert topic.name == "Maintenance" and topic.detail.startswith("TOPIC")
    assert [(c.name, c.kind) for c in topic.children] == [
        ("service", types.SymbolKind.Event), ("tyres", types.SymbolKind.Event), ("Tyres", types.SymbolKind.Namespace)]

    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="curio"))
    assert any(s.name == "Curiosity drive" and s.location.uri == uri(client, "curiosity[ext_module].md")
               for s in found)
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="tyres"))
    assert {s.name for s in found} == {"tyres", "Tyres"}
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="cdrive"))  # letters in order
    assert [s.name for s in found] == ["Curiosity drive"]
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="sempre"))  # inside a long rule
    assert [s.name for s in found] == ["R1: Keep every memory — sempre."]


# -- folding, code lens, completion ----------------------------------------------------------------

async def test_folding_ranges_and_code_lens(client: LanguageClient):
    u = open_file(client, "aria[reminder].md")
    folds = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=doc_id(u)))
    spans = {(f.start_line, f.end_line) for f in folds}
    assert (2, 20) in spans  # the [P1] zone, lines 3-21
    assert (22, 25) in spans  # the [P4] zone of the registry
    assert (10, 20) in spans  # MODULE 001 to its zone's closing tag
    m = open_file(client, "cars[ext_memory].md")
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc_id(m)))
    titles = {lens.range.start.line: lens.command.title for lens in lenses}
    assert titles == {3: "2 entries · last 2026-09-06", 15: "0 entries · no dated entry"}


DRAFT = """\
# DRAFT [external_module]

[P1]
## MODULE DRAFT: Draft [NUCLEI: ]
### CONNECTIONS
* MODULE 
[/P1]

[P4]
Testo libero — 自由.
[/
"""


async def test_completion_of_ids_and_closing_tags(client: LanguageClient):
    open_file(client, "aria[reminder].md")
    u = open_file(client, "draft[ext_module].md", DRAFT)
    await diagnostics(client, u)

    async def labels(line, character):
        result = await client.text_document_completion_async(
            types.CompletionParams(text_document=doc_id(u), position=at(line, character)))
        return [i.label for i in (result.items if result else [])], result

    found, result = await labels(3, 31)  # inside [NUCLEI: ]
    assert found == ["1"]
    assert result.items[0].detail == "LOGICAL"
    found, _ = await labels(5, 9)  # after "* MODULE "
    assert {"001", "CURIOSITY", "DRAFT"} <= set(found)
    found, result = await labels(10, 2)  # after "[/" in the open [P4]
    assert found == ["[/P4]"]
    assert result.items[0].text_edit.range == types.Range(start=at(10, 0), end=at(10, 2))
    found, _ = await labels(9, 5)  # plain text: nothing to offer
    assert found == []


# -- the layer: findings that follow the other files ----------------------------------------------

async def test_layer_finding_appears_and_disappears_when_a_second_file_changes(client: LanguageClient):
    r = open_file(client, "aria[reminder].md")
    m = open_file(client, "curiosity[ext_module].md")
    ds = await diagnostics(client, r)
    assert "LAYER_UNRESOLVED_CONNECTION" not in codes(ds)
    # Rename the module in the second file (unsaved): the reminder's CONNECTIONS bullet and
    # registry entry now point at nothing.
    change(client, m, 2, (3, 10, 3, 19, "CURIOUS"))
    ds = await diagnostics(client, r, lambda ds: "LAYER_UNRESOLVED_CONNECTION" in codes(ds))
    unresolved = next(d for d in ds if d.code == "LAYER_UNRESOLVED_CONNECTION")
    assert unresolved.range == types.Range(start=at(18, 0), end=at(18, len("* MODULE CURIOSITY")))
    assert "LAYER_UNKNOWN_REGISTRY_ENTRY" in codes(ds)
    # Rename it back: both findings leave the reminder.
    change(client, m, 3, (3, 10, 3, 17, "CURIOSITY"))
    ds = await diagnostics(client, r, lambda ds: "LAYER_UNRESOLVED_CONNECTION" not in codes(ds))
    assert "LAYER_UNKNOWN_REGISTRY_ENTRY" not in codes(ds)
    assert (client.root / "curiosity[ext_module].md").read_text(encoding="utf-8") == MODULE  # disk untouched


async def test_open_text_overrides_disk_until_closed(client: LanguageClient):
    r = open_file(client, "aria[reminder].md")
    await diagnostics(client, r)
    m = open_file(client, "curiosity[ext_module].md", MODULE.replace("MODULE CURIOSITY:", "MODULE OTHER:"))
    await diagnostics(client, r, lambda ds: "LAYER_UNRESOLVED_CONNECTION" in codes(ds))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=doc_id(m)))
    await diagnostics(client, r, lambda ds: "LAYER_UNRESOLVED_CONNECTION" not in codes(ds))
    assert list(client.diagnostics[m]) == []  # a closed file's diagnostics are cleared


async def test_a_file_changed_on_disk_is_read_again(client: LanguageClient):
    r = open_file(client, "aria[reminder].md")
    await diagnostics(client, r)
    watchers = [w for reg in client.registrations if reg.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
                for w in reg.register_options["watchers"]]
    assert watchers == [{"globPattern": "**/*.md"}]  # the server asked the editor to watch the layer's files
    path = client.root / "curiosity[ext_module].md"
    path.write_text(MODULE.replace("MODULE CURIOSITY:", "MODULE GONE:"), encoding="utf-8")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=uri(client, path.name), type=types.FileChangeType.Changed)]))
    await diagnostics(client, r, lambda ds: "LAYER_UNRESOLVED_CONNECTION" in codes(ds))


async def test_files_outside_a_layer_and_unknown_documents(client: LanguageClient):
    # An untitled buffer is checked alone; a hover on a document never opened is empty.
    u = "untitled:Untitled-1"
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=u, language_id="markdown", version=1, text="no title here\n")))
    ds = await diagnostics(client, u)
    assert codes(ds) == ["MISSING_FILE_TYPE"]
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=doc_id(uri(client, "nowhere.md")), position=at(0, 0)))
    assert hover is None


async def test_e2_a_finding_of_the_whole_layer_shows_on_the_title_of_every_open_file(client: LanguageClient):
    (client.root / "aria[reminder].md").unlink()  # a layer without its reminder
    m = open_file(client, "curiosity[ext_module].md")
    c = open_file(client, "cars[ext_memory].md")
    for u, title in ((m, "# CURIOSITY [external_module]"), (c, "# Cars [external_memory]")):
        ds = await diagnostics(client, u, lambda ds: "LAYER_NO_REMINDER" in codes(ds))
        found = next(d for d in ds if d.code == "LAYER_NO_REMINDER")
        assert found.range == types.Range(start=at(0, 0), end=at(0, len(title)))


async def test_an_id_collision_appears_in_the_file_that_is_kept_out(client: LanguageClient):
    r = open_file(client, "aria[reminder].md")
    m = open_file(client, "curiosity[ext_module].md")
    await diagnostics(client, m)
    change(client, m, 2, (3, 10, 3, 19, "001"))  # the module file now declares the reminder's id
    ds = await diagnostics(client, m, lambda ds: "LAYER_ID_CONFLICT" in codes(ds))
    conflict = next(d for d in ds if d.code == "LAYER_ID_CONFLICT")
    assert conflict.range.start.line == 3 and "aria[reminder].md:11" in conflict.message
    # The reminder's CURIOSITY references now point at nothing: a second file's edit, seen in the first.
    await diagnostics(client, r, lambda ds: "LAYER_UNRESOLVED_CONNECTION" in codes(ds))


async def test_a_zone_tag_written_inside_a_writable_zone_is_text_to_the_hover(client: LanguageClient):
    text = "# NOTES [external_memory]\n\n[P1]\n## TOPIC: Note\n[/P1]\n\n[P5]\n[P1]\nsono l'AI\n[/P5]\n"
    u = open_file(client, "notes[ext_memory].md", text)
    await diagnostics(client, u, lambda ds: "NESTED_PERMISSION_BLOCK" in codes(ds))
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(7, 1)))
    assert "NESTED_PERMISSION_BLOCK" in hover.contents.value
    assert "Genetic Memory" not in hover.contents.value  # no zone rights: it opens no zone
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=at(6, 1)))
    assert "Volatile Memory" in hover.contents.value


async def test_columns_after_japanese_and_emoji_on_the_same_line_are_utf16_with_lf_and_crlf(client: LanguageClient):
    """A finding that starts after 日本語 and 😀 (two UTF-16 units) on its own line, LF and CRLF alike."""
    text = ("# ノート 😀 [external_module]\n\n[P1]\n## MODULE 007: 寿司😀 — 日本語 [NUCLEI: 1, 7]\n### STATE\n"
            "active\n[/P1]\n")
    header = text.split("\n")[3]
    tag = header[header.index("[NUCLEI"):]
    start = utf16(header[:header.index("[NUCLEI")])
    assert start != header.index("[NUCLEI")  # the emoji makes code points and UTF-16 units differ
    for name, body in (("lf[ext_module].md", text), ("crlf[ext_module].md", text.replace("\n", "\r\n"))):
        u = open_file(client, name, body)
        ds = await diagnostics(client, u, lambda ds: "MALFORMED_NUCLEI_TAG" in codes(ds)
                               or "UNRESOLVED_NUCLEUS_REFERENCE" in codes(ds))
        found = next(d for d in ds if d.code in ("MALFORMED_NUCLEI_TAG", "UNRESOLVED_NUCLEUS_REFERENCE"))
        assert found.range == types.Range(start=at(3, start), end=at(3, start + utf16(tag))), name
        hover = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u),
                                                                         position=at(3, start + 1)))
        assert hover is not None and found.code in hover.contents.value
        for position in (at(3, 10_000), at(10_000, 0), at(10_000, 10_000)):  # past the line's end and the file's
            await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u), position=position))
            await client.text_document_definition_async(types.DefinitionParams(text_document=doc_id(u),
                                                                               position=position))
        again = await client.text_document_hover_async(types.HoverParams(text_document=doc_id(u),
                                                                         position=at(3, start + 1)))
        assert again == hover  # still answering, the same
