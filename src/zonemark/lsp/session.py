"""What the language server knows between two messages: open texts and the layers they belong to.

An open file belongs to the layer of the deepest workspace folder holding it, else to the
layer of its own folder (the folder ``zonemark check`` would be given) — but the home folder
and a filesystem root are never read whole as a layer, not even when the editor opened one of
them as a workspace folder; a file that the folder's layer does
not list (not ``.md``, or left out by the folder rules), a file in such a folder and an
``untitled:`` buffer are checked alone.  Open texts override the disk
(:class:`zonemark.layer.live.LiveLayer`).
"""

from __future__ import annotations

import os
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types
from pygls import uris

from ..core.document import Document
from ..core.parser import parse, parse_bytes
from ..layer.live import LiveLayer
from ..layer.loader import Layer
from ..layer.spans import SourceLines, source_lines
from .text import LspText, TextBuffer


@dataclass
class Context:
    """One file as the server sees it now: its layer, its path in it and its parsed document."""

    uri: str
    path: Path | None
    rel: str
    doc: Document
    layer: Layer
    live: LiveLayer | None  # None: the file is checked alone (outside every layer)
    text: LspText


class Session:
    def __init__(self) -> None:
        self.buffers: dict[str, TextBuffer] = {}
        self.folders: list[Path] = []
        self.layers: dict[Path, LiveLayer] = {}
        self.encoding = "utf-16"
        self._alone: dict[str, tuple[str, Document, Layer]] = {}
        self._texts: "weakref.WeakKeyDictionary[Document, LspText]" = weakref.WeakKeyDictionary()

    # -- folders and layers ----------------------------------------------------------------
    def set_folders(self, paths: Iterable[str | os.PathLike[str] | None]) -> None:
        """The workspace folders; layers of folders that are gone are dropped (unless a file is open there)."""
        self.folders = sorted({Path(os.path.abspath(p)) for p in paths if p}, key=lambda p: len(p.parts))
        needed = {self.root_for(p) for p in map(self.path_of, self.buffers) if p is not None}
        for root in [r for r in self.layers if r not in self.folders and r not in needed]:
            del self.layers[root]

    def root_for(self, path: Path) -> Path | None:
        """The deepest workspace folder holding ``path``, else its own folder — but the home folder and a
        filesystem root are never read whole as a layer, not even as a workspace folder (None: checked alone)."""
        best = None
        for folder in self.folders:
            if (path == folder or folder in path.parents) and not _never_whole(folder):
                best = folder
        if best is not None:
            return best
        parent = path.parent
        if _never_whole(parent):
            return None
        return parent

    def live_for(self, path: Path | None) -> LiveLayer | None:
        root = self.root_for(path) if path is not None else None
        if root is None:
            return None
        live = self.layers.get(root)
        if live is None:
            live = self.layers[root] = LiveLayer(root)
        return live

    def workspace_layers(self) -> list[LiveLayer]:
        """A live layer per workspace folder, and those of open files outside them."""
        for folder in self.folders:
            if folder not in self.layers and not _never_whole(folder):
                self.layers[folder] = LiveLayer(folder)
        return list(self.layers.values())

    # -- open documents --------------------------------------------------------------------
    @staticmethod
    def path_of(uri: str) -> Path | None:
        path = uris.to_fs_path(uri)
        return Path(os.path.abspath(path)) if path and uri.startswith("file:") else None

    def open(self, uri: str, text: str, version: int | None) -> None:
        self.buffers[uri] = TextBuffer(text, version, self.encoding)
        path = self.path_of(uri)
        live = self.live_for(path)
        if live is not None and path is not None:  # a live layer only for a file path
            live.set_text(path, text)

    def change(self, uri: str, changes: Sequence[types.TextDocumentContentChangeEvent], version: int | None) -> None:
        buf = self.buffers.get(uri)
        if buf is None:
            return
        buf.apply_all(changes)
        buf.version = version
        path = self.path_of(uri)
        live = self.live_for(path)
        if live is not None and path is not None:  # a live layer only for a file path
            live.set_text(path, buf.text)

    def close(self, uri: str) -> None:
        self.buffers.pop(uri, None)
        self._alone.pop(uri, None)
        path = self.path_of(uri)
        live = self.live_for(path)
        if live is not None and path is not None:  # a live layer only for a file path
            live.drop_text(path)

    def open_uris_in(self, live: LiveLayer) -> list[str]:
        out = []
        for uri in self.buffers:
            path = self.path_of(uri)
            if path is not None and self.root_for(path) == live.root:
                out.append(uri)
        return out

    def context(self, uri: str) -> Context | None:
        """The file at ``uri`` parsed from its open text (or the disk), with its layer."""
        buf = self.buffers.get(uri)
        path = self.path_of(uri)
        live = self.live_for(path)
        if live is not None and path is not None:  # a live layer only for a file path
            if buf is not None:
                live.set_text(path, buf.text)
            if live.contains(path) and (rel := live.rel(path)) is not None:
                layer = live.layer()
                doc = layer.file(rel).doc
                if buf is not None:
                    _share_lines(doc, buf)
                return Context(uri, path, rel, doc, layer, live, buf or self.text_of(doc))
        # Checked alone: not in a layer (see the module docstring).
        name = path.name if path is not None else (uri.rsplit("/", 1)[-1] or "untitled")
        folder = path.parent if path is not None else Path(".")
        if buf is None:
            if path is None:
                return None
            try:
                doc = parse_bytes(path.read_bytes(), path=name, tree=True)
            except OSError:
                return None
            layer = Layer.from_documents(folder, [(name, path, doc)])
            return Context(uri, path, name, doc, layer, None, self.text_of(doc))
        cached = self._alone.get(uri)
        if cached is not None and cached[0] is buf.text:
            doc, layer = cached[1], cached[2]
        else:
            doc = parse(buf.text, path=name, tree=True)
            layer = Layer.from_documents(folder, [(name, path or Path(name), doc)])
            self._alone[uri] = (buf.text, doc, layer)
        return Context(uri, path, name, doc, layer, None, buf)

    def text_of(self, doc: Document) -> LspText:
        """LSP positions for a document that is not open (a file of the layer on disk)."""
        text = self._texts.get(doc)
        if text is None or text.encoding != self.encoding:
            text = self._texts[doc] = LspText(doc.source, self.encoding)
        return text

    def uri_of(self, live_root: Path | None, rel: str, fallback: str) -> str:
        if live_root is None:
            return fallback
        return uris.from_fs_path(str(live_root / rel)) or fallback


def _never_whole(folder: Path) -> bool:
    """The home folder, a filesystem root or the system's temporary folder: walking it would read every .md
    file of the user, of the disk or of every program's scratch files."""
    return folder == folder.parent or folder == Path.home() or folder == Path(tempfile.gettempdir())


def _share_lines(doc: Document, buf: TextBuffer) -> None:
    """Without a ``\r`` LSP lines are the parser's lines: index them once, not twice."""
    if doc.source is buf.text and "\r" not in buf.text:
        source_lines(doc, buf.starts)


def lsp_range(lines: SourceLines, text: LspText, line: int, start: int, end: int) -> types.Range:
    """The LSP range of parser columns [start, end) on parser line ``line``."""
    a = lines.offset(line, start)
    b = lines.offset(line, end)
    return text.range(a, max(a, b))


def lsp_extent(lines: SourceLines, text: LspText, line: int, column: int, end_line: int,
               end_column: int) -> types.Range:
    """The LSP range from parser (``line``, ``column``) to (``end_line``, ``end_column``), end exclusive."""
    a = lines.offset(line, column)
    b = lines.offset(end_line, end_column)
    return text.range(a, max(a, b))


def lsp_line_range(lines: SourceLines, text: LspText, first: int, last: int) -> tuple[int, int]:
    """The LSP lines (0-based, inclusive) of parser lines ``first``..``last``."""
    return (text.position(lines.offset(first, 1)).line, text.position(lines.offset(last, 1)).line)


__all__ = ["Context", "Session", "lsp_extent", "lsp_range", "lsp_line_range", "source_lines"]
