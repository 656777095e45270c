"""``zonemark lsp``: the language server (pygls 2.x, over stdio).

A thin face: the parser, the layer and the catalogue decide; this module turns their
answers into LSP messages.  What it offers:

* diagnostics on open and on every change (code, severity, the construct's range, the
  explanation on hover), the layer's findings in every open file of the layer, refreshed
  when another file of the layer changes (open texts override the disk);
* document symbols (the outline, entries and rules) and workspace symbols;
* hover on ``[Pn]`` tags (§5.2), on module and nucleus ids and on the targets of
  CONNECTIONS and ``[NUCLEI: ...]``; definition and references of those ids across files;
* folding ranges (zones and containers), a code lens per memory container (entries, last
  date), completion of ids in CONNECTIONS, ``[NUCLEI: ...]`` and the registry, and of tags.

Text synchronisation is kept here rather than in pygls' workspace so that lines end
exactly where LSP says they do (``\\n``, ``\\r\\n``, ``\\r``); see :mod:`.text`.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from .. import __version__
from ..core import gcpause
from ..core.diagnostics import Diagnostic, Severity
from ..core.document import Document
from ..layer import navigate
from ..layer.live import LiveLayer, findings_for, layer_wide
from ..layer.spans import SourceLines, Span, source_lines
from ..layer.containers import list_containers
from ..layer.symbols import Symbol, document_symbols, flatten, folding_ranges
from ..render import hover as hover_text
from .session import Context, Session, lsp_extent, lsp_line_range, lsp_range

log = logging.getLogger(__name__)
_T = TypeVar("_T")

_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning}
_SYMBOL_KIND = {
    "module": types.SymbolKind.Module, "topic": types.SymbolKind.Namespace, "subtopic": types.SymbolKind.Namespace,
    "sub_module": types.SymbolKind.Class, "nucleus": types.SymbolKind.Interface,
    "registry": types.SymbolKind.Struct, "rules": types.SymbolKind.Package, "section": types.SymbolKind.String,
    "entry": types.SymbolKind.Event, "rule": types.SymbolKind.Constant,
}
_MAX_WORKSPACE_SYMBOLS = 1000


class ZonemarkProtocol(LanguageServerProtocol):
    """pygls' protocol with the text of open documents kept by :class:`~.session.Session`."""

    _server: ZonemarkServer  # pygls hands the protocol the server that created it (``protocol_cls`` below)

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        doc = params.text_document
        self._server.session.open(doc.uri, doc.text, doc.version)
        self._server.schedule(doc.uri)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> None:
        doc = params.text_document
        self._server.session.change(doc.uri, params.content_changes, doc.version)
        self._server.schedule(doc.uri)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._server.closed(params.text_document.uri)


class ZonemarkServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("zonemark", __version__, protocol_cls=ZonemarkProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.session = Session()
        self._dirty: dict[str, None] = {}
        self._scheduled = False
        self._published: dict[str, tuple[object, ...]] = {}
        self._answers: "weakref.WeakKeyDictionary[Document, dict[tuple[str, str], Any]]" = weakref.WeakKeyDictionary()

    def answer(self, ctx: Context, what: str, compute: Callable[[], _T]) -> _T:
        """A whole-document answer (symbols, folds, lenses), computed once per parsed document:
        editors ask for them again and again between two edits."""
        per_doc = self._answers.setdefault(ctx.doc, {})
        key = (what, self.session.encoding)
        if key not in per_doc:
            per_doc[key] = compute()
        return cast(_T, per_doc[key])

    # -- diagnostics -------------------------------------------------------------------------
    def schedule(self, uri: str) -> None:
        """Publish ``uri``'s diagnostics soon: changes that arrive meanwhile are folded into one run."""
        self._dirty[uri] = None
        if self._scheduled:
            return
        self._scheduled = True
        try:
            asyncio.get_running_loop().call_soon(self.refresh)
        except RuntimeError:  # no loop (called outside the server): run now
            self.refresh()

    def refresh(self) -> None:
        """Publish the dirty files, then the other open files of their layers if their findings moved.

        The cyclic GC waits meanwhile, as during a parse (core/gcpause.py): the work makes
        ~10^5 acyclic objects that a collection would only rescan.
        """
        self._scheduled = False
        with gcpause.paused():
            self._refresh()

    def _refresh(self) -> None:
        dirty, self._dirty = list(self._dirty), {}
        touched = []
        for uri in dirty:
            if uri not in self.session.buffers:
                continue
            try:
                ctx = self.session.context(uri)
                if ctx is None:
                    continue
                self.publish(ctx, force=True)
                if ctx.live is not None and ctx.live not in touched:
                    touched.append(ctx.live)
            except Exception:  # a bug must not take the editor's server down
                log.exception("zonemark: diagnostics failed for %s", uri)
        for live in touched:
            self.refresh_layer(live, skip=dirty)

    def refresh_layer(self, live: LiveLayer, skip: Collection[str] = ()) -> None:
        """Publish again every other open file of a layer whose findings changed."""
        for uri in self.session.open_uris_in(live):
            if uri in skip:
                continue
            try:
                ctx = self.session.context(uri)
                if ctx is not None:
                    self.publish(ctx)
            except Exception:
                log.exception("zonemark: diagnostics failed for %s", uri)

    def closed(self, uri: str) -> None:
        live = self.session.live_for(self.session.path_of(uri))
        self.session.close(uri)
        self._published.pop(uri, None)
        self._dirty.pop(uri, None)
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        if live is not None:
            self.refresh_layer(live)

    def findings(self, ctx: Context) -> list[tuple[Diagnostic, int | None]]:
        """(diagnostic, None) for the file's own findings, shown where they are; (diagnostic, the title
        line) for the findings of the whole layer (E2)."""
        if ctx.live is None:
            found = list(ctx.doc.diagnostics)
        else:
            found = findings_for(ctx.layer, ctx.rel)
        out: list[tuple[Diagnostic, int | None]] = [(d, None) for d in found]
        title = ctx.doc.title_line or 1
        out += [(d, title) for d in layer_wide(ctx.layer) if ctx.live is not None]
        return out

    def publish(self, ctx: Context, force: bool = False) -> None:
        found = self.findings(ctx)
        key = tuple((d.code, d.line if shown is None else shown, d.column, d.end_line, d.end_column, d.message)
                    for d, shown in found)
        if not force and self._published.get(ctx.uri) == key:
            return
        self._published[ctx.uri] = key
        out = []
        if found:  # the line table only when there is something to place
            lines = source_lines(ctx.doc)
            for d, shown in found:
                related = None
                if d.related_line:
                    rspan = lines.span(ctx.rel, d.related_line, 1)
                    related = [types.DiagnosticRelatedInformation(
                        location=types.Location(uri=ctx.uri, range=lsp_range(lines, ctx.text, rspan.line,
                                                                              rspan.start, rspan.end)),
                        message=f"line {d.related_line}")]
                out.append(types.Diagnostic(
                    range=self.diagnostic_range(ctx, lines, d, shown), message=d.message,
                    severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Warning), code=d.code,
                    source="zonemark", related_information=related))
        version = self.session.buffers[ctx.uri].version if ctx.uri in self.session.buffers else None
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=ctx.uri, diagnostics=out, version=version))

    # -- positions ---------------------------------------------------------------------------
    def at(self, ctx: Context, position: types.Position) -> tuple[int, int]:
        """The parser's (line, column) of an LSP position."""
        return source_lines(ctx.doc).position(ctx.text.offset(position))

    def diagnostic_range(self, ctx: Context, lines: SourceLines, d: Diagnostic, shown: int | None) -> types.Range:
        """The LSP range of a finding: its own extent (read from the diagnostic, ``shown`` None); a finding
        of the whole layer shown on the title line ``shown`` (E2) spans the construct of that line."""
        if shown is None:
            return lsp_extent(lines, ctx.text, d.line, d.column, d.end_line, d.end_column)
        span = lines.span(ctx.rel, shown, 1, d.code)
        return lsp_range(lines, ctx.text, span.line, span.start, span.end)

    def span_range(self, ctx: Context, span: Span) -> types.Range:
        return lsp_range(source_lines(ctx.doc), ctx.text, span.line, span.start, span.end)

    def location(self, ctx: Context, occurrence: navigate.Occurrence) -> types.Location:
        """An LSP location of an occurrence in any file of ``ctx``'s layer."""
        span = occurrence.span
        if span.rel == ctx.rel:
            return types.Location(uri=ctx.uri, range=self.span_range(ctx, span))
        f = navigate.file_of(ctx.layer, span.rel)
        assert f is not None  # an occurrence lies in a file of the layer it was found in
        uri = self.session.uri_of(ctx.layer.root if ctx.live is not None else None, span.rel, ctx.uri)
        buf = self.session.buffers.get(uri)
        text = buf if buf is not None and buf.text == f.doc.source else self.session.text_of(f.doc)
        return types.Location(uri=uri, range=lsp_range(source_lines(f.doc), text, span.line, span.start, span.end))


def build_server() -> ZonemarkServer:
    server = ZonemarkServer()

    @server.feature(types.INITIALIZED)
    def initialized(ls: ZonemarkServer, params: types.InitializedParams) -> None:
        ws = ls.workspace
        ls.session.encoding = ws.position_encoding or "utf-16"
        folders: list[str | Path | None] = [ls.session.path_of(f.uri) for f in ws.folders.values()]
        if ws.root_path:
            folders.append(ws.root_path)
        ls.session.set_folders(folders)
        caps = ls.client_capabilities.workspace
        watch = caps.did_change_watched_files if caps is not None else None
        if watch is not None and watch.dynamic_registration:
            ls.client_register_capability(types.RegistrationParams(registrations=[types.Registration(
                id="zonemark-watch-md", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/*.md")]))]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(ls: ZonemarkServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.session.set_folders([ls.session.path_of(f.uri) for f in ls.workspace.folders.values()])

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def saved(ls: ZonemarkServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: ZonemarkServer, params: types.DidChangeWatchedFilesParams) -> None:
        touched: list[LiveLayer] = []
        for change in params.changes:
            live = ls.session.live_for(ls.session.path_of(change.uri))
            if live is None:
                continue
            if change.type != types.FileChangeType.Changed:
                live.rescan()
            if live not in touched:
                touched.append(live)
        for live in touched:
            ls.refresh_layer(live)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: ZonemarkServer, params: types.HoverParams) -> types.Hover | None:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return None
        line, column = ls.at(ctx, params.position)
        parts: list[str] = []
        rng: types.Range | None = None
        tag = navigate.zone_tag_at(ctx.doc, ctx.rel, line, column)
        if tag is not None:
            parts.append(hover_text.zone_markdown(tag.zone, tag.closing))
            rng = ls.span_range(ctx, tag.span)
        else:
            occ = navigate.occurrence_at(ctx.doc, ctx.rel, line, column)
            if occ is not None:
                parts.append(_describe(ctx, occ.kind, occ.ident))
                rng = ls.span_range(ctx, occ.span)
        lines = source_lines(ctx.doc)
        for d, shown in ls.findings(ctx):
            if (d.touches(line, column) if shown is None
                    else lines.span(ctx.rel, shown, 1, d.code).contains(line, column)):
                parts.append(hover_text.code_markdown(d.code))
                rng = rng or ls.diagnostic_range(ctx, lines, d, shown)
        if not parts:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown,
                                                        value="\n\n---\n\n".join(_unique(parts))), range=rng)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: ZonemarkServer, params: types.DefinitionParams) -> list[types.Location] | None:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return None
        occ = navigate.occurrence_at(ctx.doc, ctx.rel, *ls.at(ctx, params.position))
        if occ is None:
            return None
        return [ls.location(ctx, o) for o in navigate.definitions(ctx.layer, occ.kind, occ.ident)] or None

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: ZonemarkServer, params: types.ReferenceParams) -> list[types.Location] | None:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return None
        occ = navigate.occurrence_at(ctx.doc, ctx.rel, *ls.at(ctx, params.position))
        if occ is None:
            return None
        include = bool(params.context and params.context.include_declaration)
        return [ls.location(ctx, o) for o in navigate.references(ctx.layer, occ.kind, occ.ident, include)]

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    def symbols(ls: ZonemarkServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return []
        lines = source_lines(ctx.doc)

        def convert(s: Symbol) -> types.DocumentSymbol:
            last = lines.line(s.end_line)
            return types.DocumentSymbol(
                name=s.name or "(unnamed)", detail=s.detail or None,
                kind=_SYMBOL_KIND.get(s.kind, types.SymbolKind.Key),
                range=types.Range(start=ctx.text.position(lines.offset(s.line, 1)),
                                  end=ctx.text.position(lines.offset(s.end_line, len(last) + 1))),
                selection_range=lsp_range(lines, ctx.text, s.line, s.start, s.end),
                children=[convert(c) for c in s.children])
        return ls.answer(ctx, "symbols", lambda: [convert(s) for s in document_symbols(ctx.doc)])

    @server.feature(types.WORKSPACE_SYMBOL)
    def workspace_symbols(ls: ZonemarkServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
        query = (params.query or "").casefold()
        out: list[types.WorkspaceSymbol] = []
        for live in ls.session.workspace_layers():
            layer = live.layer()
            for f in layer.files:
                lines = source_lines(f.doc)
                uri = ls.session.uri_of(live.root, f.rel, "")
                buf = ls.session.buffers.get(uri)
                text = buf if buf is not None and buf.text == f.doc.source else ls.session.text_of(f.doc)
                for s, parent in flatten(document_symbols(f.doc)):
                    if query and not _matches(query, s):
                        continue
                    out.append(types.WorkspaceSymbol(
                        name=s.name, kind=_SYMBOL_KIND.get(s.kind, types.SymbolKind.Key),
                        location=types.Location(uri=uri, range=lsp_range(lines, text, s.line, s.start, s.end)),
                        container_name=parent or f.rel))
                    if len(out) >= _MAX_WORKSPACE_SYMBOLS:
                        return out
        return out

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    def folding(ls: ZonemarkServer, params: types.FoldingRangeParams) -> list[types.FoldingRange]:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return []
        lines = source_lines(ctx.doc)

        def compute() -> list[types.FoldingRange]:
            out = []
            for first, last, _kind in folding_ranges(ctx.doc):
                a, b = lsp_line_range(lines, ctx.text, first, last)
                if b > a:
                    out.append(types.FoldingRange(start_line=a, end_line=b, kind=types.FoldingRangeKind.Region))
            return out
        return ls.answer(ctx, "folds", compute)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS)
    def code_lens(ls: ZonemarkServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return []
        return ls.answer(ctx, "lenses", lambda: _memory_lenses(ctx))

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[" ", ",", ":", "[", "/", "*"]))
    def completion(ls: ZonemarkServer, params: types.CompletionParams) -> types.CompletionList | None:
        ctx = ls.session.context(params.text_document.uri)
        if ctx is None:
            return None
        line_text = ctx.text.line_text(params.position.line)
        cursor = ctx.text.offset(params.position) - ctx.text.starts[min(params.position.line,
                                                                        len(ctx.text.starts) - 1)]
        before = line_text[:cursor]
        line, _ = ls.at(ctx, params.position)
        cc = navigate.completion_context(ctx.doc, line, before)
        if cc is None:
            return None
        start = types.Position(line=params.position.line, character=ctx.text.units(before[:cc.start - 1]))
        rng = types.Range(start=start, end=params.position)
        return types.CompletionList(is_incomplete=False, items=_completions(ctx, cc, rng))

    return server


def _memory_lenses(ctx: Context) -> list[types.CodeLens]:
    """A lens on each container of an external memory (§7.1.2, §7.1.3): its own entries, those
    with its sub-topics when more, and the latest entry date (layer/containers.py)."""
    if ctx.doc.file_type != "external_memory":
        return []
    found = [c for c in list_containers(ctx.doc) if c.kind in ("topic", "subtopic", "module")]
    lines = source_lines(ctx.doc)
    out = []
    for c in found:
        nested = c.entries + sum(d.entries for d in found if d.address.startswith(c.address + "/"))
        title = f"{c.entries} entr{'y' if c.entries == 1 else 'ies'}"
        if nested != c.entries:
            title += f" ({nested} with its sub-topics)"
        title += f" · last {c.last_entry_date}" if c.last_entry_date else " · no dated entry"
        end = len(lines.line(c.line).rstrip()) + 1
        out.append(types.CodeLens(range=lsp_range(lines, ctx.text, c.line, 1, end),
                                  command=types.Command(title=title, command="")))
    return out


def _describe(ctx: Context, kind: str, ident: str) -> str:
    if kind == "module":
        m = navigate.module(ctx.layer, ident)
        return hover_text.module_markdown(ctx.layer, m) if m else hover_text.unresolved_markdown(kind, ident)
    n = navigate.nucleus(ctx.layer, ident)
    return hover_text.nucleus_markdown(ctx.layer, n) if n else hover_text.unresolved_markdown(kind, ident)


def _completions(ctx: Context, cc: navigate.CompletionContext, rng: types.Range) -> list[types.CompletionItem]:
    layer = ctx.layer
    items: list[types.CompletionItem] = []

    def item(label: str, detail: str | None, doc: str | None, kind: types.CompletionItemKind, sort: str) -> None:
        items.append(types.CompletionItem(
            label=label, detail=detail, kind=kind, sort_text=sort, filter_text=label,
            documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc) if doc else None,
            text_edit=types.TextEdit(range=rng, new_text=label)))

    modules = [m for m in layer.modules if m.is_module and not m.temporary and m.module_id]
    if cc.kind in ("module", "connection"):
        for i, m in enumerate(modules):
            mid = m.module_id or ""  # never empty: the list above holds modules with an id
            label = mid if cc.kind == "module" else f"MODULE {mid}"
            item(label, m.info.name, hover_text.module_markdown(layer, m), types.CompletionItemKind.Module,
                 f"1{i:05d}")
    if cc.kind in ("nucleus", "connection"):
        for i, n in enumerate(layer.nuclei):
            label = str(n.nucleus_id) if cc.kind == "nucleus" else f"NUCLEUS {n.nucleus_id}"
            item(label, n.info.name, hover_text.nucleus_markdown(layer, n), types.CompletionItemKind.Interface,
                 f"2{i:05d}")
    if cc.kind == "closing_tag" and cc.zone is not None:
        item(f"[/P{cc.zone.level}]", f"closes the [P{cc.zone.level}] opened on line {cc.zone.line}",
             hover_text.zone_markdown(cc.zone, closing=True), types.CompletionItemKind.Keyword, "0")
    if cc.kind == "opening_tag":
        for level, (name, *_rest) in hover_text.ZONE_RIGHTS.items():
            zone = navigate.Zone(level, 0, None, 0)
            item(f"[P{level}]", name, hover_text.zone_markdown(zone).rsplit("\n\nZone", 1)[0],
                 types.CompletionItemKind.Keyword, f"0{level}")
    return items


def _matches(query: str, symbol: Symbol) -> bool:
    """The query (case-folded) inside the symbol's name, id or keyword, or its letters in order
    in a short name (``curen`` finds ``CURIOSITY_ENGINE``); long names (rules) need a substring."""
    if query in f"{symbol.name} {symbol.ident or ''} {symbol.detail}".casefold():
        return True
    if len(symbol.name) > 40:
        return False
    it = iter(symbol.name.casefold())
    return all(ch in it for ch in query if not ch.isspace())


def _unique(parts: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for p in parts:
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out
