"""The layer as it is on disk now, parsed once per content: no stale state, no needless re-parse.

For the long-running faces that read the disk (the MCP server, the review page).  A call asks for
the parsed document of a file or for the whole :class:`~zonemark.layer.Layer`; :class:`LayerCache`
answers from the documents it holds when the files have not changed, and reads and parses again
the ones that have.  A file's entry is keyed by its size, modification time,
status-change time and identity (device, inode) *and* by the SHA-256 of its bytes:

* when any stat field differs, the file is read and hashed, and parsed again only if the hash
  differs (an editor that rewrites the same bytes costs a read, not a parse);
* when no stat field differs, the bytes are trusted without reading them — unless the file was
  changed within :data:`RACY_NS` of the moment it was last hashed: a second write inside the
  file system's timestamp granularity leaves size and times alike, so such a file is hashed again
  (the "racily clean" rule of git's index).

A cache made with ``tree=False`` (the MCP server's) parses without the block tree: a document builds it on
first use of ``Document.blocks``, and a tool that needs no tree (the check, a container's entries, the zones)
never holds one (B16).

Nothing else is kept: the list of files is discovered again at every call (a new or removed file is
seen at once), and the layer is rebuilt from the documents (:meth:`Layer.from_documents`) whenever
one of them changed.  A file that cannot be read makes the layer fall back to :meth:`Layer.load`,
which reports it (``LAYER_UNREADABLE_FILE``) as ``zonemark check`` does.  For an agent (the MCP server) the
walk is *confined* (:func:`zonemark.layer.discover`): a file linked in from outside the layer folder is not
the layer's; the user's review page reads the folder as ``zonemark check`` does.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..core.document import Document
from ..core.parser import parse_bytes
from .loader import Layer, discover

#: A file changed less than this long before it was hashed is hashed again even when its stat is unchanged.
RACY_NS = 2_000_000_000


def _signature(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class _Entry:
    signature: tuple[int, ...]
    sha256: str
    hashed_at: int  # time.time_ns() when the bytes were last read and hashed
    doc: Document


class LayerCache:
    """Parsed documents of one layer folder and the layer built from them (see the module docstring)."""

    def __init__(self, root: Path, *, confined: bool = True, tree: bool = True):
        self.root = Path(root)
        self.confined = confined  # leave out files linked in from outside the folder (what an agent may see)
        self.tree = tree  # parse with the block tree (pages that walk it); False: built on first use (B16)
        self._entries: dict[Path, _Entry] = {}
        self._layer: Layer | None = None
        self._layer_docs: tuple[Document, ...] = ()
        self._lock = threading.Lock()
        self.parsed = 0  # documents parsed so far (for tests and measurements)

    def document(self, path: Path) -> Document:
        """The parsed document of ``path`` as its bytes are now; raises OSError when it cannot be read."""
        with self._lock:
            return self._document(Path(path))

    def snapshot(self, path: Path) -> tuple[bytes, Document]:
        """The bytes of ``path`` now and their parsed document (one read: the two always agree)."""
        with self._lock:
            return self._read(Path(path))

    def layer(self) -> Layer:
        """The layer as its files are now (LayerError when the folder holds no .md file)."""
        with self._lock:
            _root, found = discover(self.root, confined=self.confined)
            docs = []
            try:
                for rel, path in found:
                    docs.append((rel, path, self._document(path)))
            except OSError:
                self._layer = None
                return Layer.load(self.root, confined=self.confined, tree=self.tree)
            current = tuple(doc for _rel, _path, doc in docs)
            if (self._layer is None or len(current) != len(self._layer_docs)
                    or any(a is not b for a, b in zip(current, self._layer_docs))
                    or sorted(f.rel for f in self._layer.files) != sorted(rel for rel, _p, _d in docs)):
                self._layer = Layer.from_documents(self.root, docs)
                self._layer_docs = current
            known = {p for _rel, p in found}
            for gone in [p for p in self._entries if p not in known]:
                del self._entries[gone]
            return self._layer

    def _document(self, path: Path) -> Document:
        entry = self._entries.get(path)
        if entry is not None:
            st = os.stat(path)
            if entry.signature == _signature(st) and entry.hashed_at - st.st_mtime_ns > RACY_NS:
                return entry.doc
        return self._read(path)[1]

    def _read(self, path: Path) -> tuple[bytes, Document]:
        signature = _signature(os.stat(path))  # taken before the bytes: a change after it shows next time
        now = time.time_ns()
        with open(path, "rb") as handle:
            data = handle.read()
        digest = hashlib.sha256(data).hexdigest()
        entry = self._entries.get(path)
        if entry is not None and entry.sha256 == digest:
            doc = entry.doc
        else:
            doc = parse_bytes(data, path=str(path), tree=self.tree)
            self.parsed += 1
        self._entries[path] = _Entry(signature, digest, now, doc)
        return data, doc
