"""A layer kept current while its files change: for long-running faces (an editor, a page).

:class:`LiveLayer` reads a folder as one layer (§3) the way ``zonemark check FOLDER`` does
(:func:`~zonemark.layer.loader.discover` picks the files), with two differences:

* texts handed to :meth:`LiveLayer.set_text` (an editor's open buffers, saved or not)
  override the bytes on disk;
* each file is parsed once and again only when it changes: a text when it differs, a file
  on disk when its size or modification time does — without its block tree, which a document
  builds on first use (``Document.blocks``): the diagnostics of a change need none (B16); the
  parse that is out of date is let go before the new one is made.  :meth:`LiveLayer.layer` rebuilds the
  :class:`~zonemark.layer.loader.Layer` from the parsed documents
  (:meth:`Layer.from_documents`) only when one of them changed.

A file that cannot be read is left out until it can (it appears again on the next call).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core.diagnostics import Diagnostic
from ..core.document import Document
from ..core.parser import parse, parse_file
from .loader import Layer, LayerError, discover, left_out

StrPath = str | os.PathLike[str]


class LiveLayer:
    """One folder read as a layer, open texts overriding the disk (see the module docstring)."""

    def __init__(self, root: StrPath) -> None:
        self.root = Path(os.path.abspath(root))
        self._texts: dict[Path, str] = {}
        self._parsed: dict[Path, tuple[tuple[object, ...], Document]] = {}
        self._found: list[tuple[str, Path]] | None = None
        self._layer: Layer | None = None
        self._layer_docs: tuple[Document, ...] = ()

    # -- what the face tells ---------------------------------------------------------------
    def rel(self, path: StrPath) -> str | None:
        """``path`` relative to the root (posix), or None when it lies outside."""
        p = Path(os.path.abspath(path))
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            return None

    def set_text(self, path: StrPath, text: str) -> None:
        """The current text of an open file (it wins over the disk until :meth:`drop_text`)."""
        p = Path(os.path.abspath(path))
        self._texts[p] = text
        if self._found is not None and not any(q == p for _, q in self._found) and p.exists():
            self._found = None  # a file we have not listed yet: list the folder again

    def drop_text(self, path: StrPath) -> None:
        """The file is closed: read it from disk again."""
        self._texts.pop(Path(os.path.abspath(path)), None)

    def rescan(self) -> None:
        """Files were created or deleted: list the folder again on the next :meth:`layer`."""
        self._found = None

    # -- what the face asks ----------------------------------------------------------------
    def files(self) -> list[tuple[str, Path]]:
        """(relative path, path) of every file of the layer, open unsaved ``.md`` texts included."""
        if self._found is None:
            try:
                _, found = discover(self.root)
            except LayerError:
                found = []
            self._found = [(rel, Path(os.path.abspath(p))) for rel, p in found]
        listed = {p for _, p in self._found}
        unsaved = [(rel, p) for p in self._texts
                   if p not in listed and (rel := self.rel(p)) is not None and not p.exists()
                   and left_out(self.root, rel) is None]  # W40: the folder rules hold for unsaved texts too
        return sorted(self._found + unsaved)

    def contains(self, path: StrPath) -> bool:
        p = Path(os.path.abspath(path))
        return any(q == p for _, q in self.files())

    def document(self, path: StrPath) -> Document:
        """The parsed document of one file (its open text, else the disk); raises OSError."""
        p = Path(os.path.abspath(path))
        text = self._texts.get(p)
        cached = self._parsed.get(p)
        if text is not None:
            key: tuple[object, ...] = ("text", text)
            if cached is not None and cached[0][0] == "text" and (cached[0][1] is text or cached[0][1] == text):
                return cached[1]
        else:
            st = p.stat()
            key = ("disk", st.st_mtime_ns, st.st_ctime_ns, st.st_size)
            if cached is not None and cached[0] == key:
                return cached[1]
        if cached is not None:
            cached = None  # this frame's hold on it too
            self._forget(p)
        doc = parse(text, path=str(p)) if text is not None else parse_file(p)
        self._parsed[p] = (key, doc)
        return doc

    def _forget(self, p: Path) -> None:
        """Let go of the parse of ``p`` that is out of date (and of the layer built with it) before parsing it
        again: a change never holds two parses of a large file at once (B16)."""
        _key, doc = self._parsed.pop(p)
        if any(d is doc for d in self._layer_docs):
            self._layer, self._layer_docs = None, ()

    def layer(self) -> Layer:
        """The layer as it stands now (rebuilt only when a document changed)."""
        docs = []
        for rel, path in self.files():
            try:
                docs.append((rel, path, self.document(path)))
            except FileNotFoundError:
                self._found = None
                self._parsed.pop(path, None)
            except OSError:
                self._parsed.pop(path, None)
        current = tuple(d for _, _, d in docs)
        if (self._layer is None or len(current) != len(self._layer_docs)
                or any(a is not b for a, b in zip(current, self._layer_docs))):
            self._layer = Layer.from_documents(self.root, docs)
            self._layer_docs = current
        return self._layer


def findings_for(layer: Layer, rel: str) -> list[Diagnostic]:
    """What a file of the layer shows: its own diagnostics (minus those the layer resolves) and
    the layer-level ones placed in it, in line order; ``.path`` is ``rel``."""
    out = layer.file_diagnostics(rel) + [d for d in layer.diagnostics if d.path == rel]
    out.sort(key=lambda d: (d.line, d.column))
    return out


def layer_wide(layer: Layer) -> list[Diagnostic]:
    """Layer-level diagnostics that belong to no file (LAYER_NO_REMINDER)."""
    rels = {f.rel for f in layer.files}
    return [d for d in layer.diagnostics if d.path not in rels]
