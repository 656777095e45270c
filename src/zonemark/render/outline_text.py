"""The outline of a file as a readable tree and as JSON (``zonemark outline``, ``--json``).

``zonemark outline`` writes either from the outline's table (B21), node by node, in chunks of text: the
outline is never held as objects, nor its text whole.  ``render_outline`` gives the same tree from an
:class:`OutlineNode`, for a caller that holds one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain
from json.encoder import encode_basestring  # the dump's own, with ensure_ascii=False
from typing import Any, TypeVar

from ..core.outline import Entry, OutlineNode, OutlineTable
from ..core.text import escape_controls, printable

_T = TypeVar("_T")

#: The pieces of text gathered before a chunk is written out (about a hundred KB of text at most).
_CHUNK_PARTS = 1024


def render_outline(root: OutlineNode) -> str:
    """A readable tree, one line per node and entry."""
    top: OutlineNode | Entry = root
    return printable("\n".join(chain((_file_line(root),), _walk(top, "", _object_items, _object_label))))


def write_outline(table: OutlineTable, write: Callable[[str], object], *, as_json: bool = False) -> None:
    """What ``zonemark outline`` (``--json``) writes to stdout, chunk by chunk to ``write``: the readable tree
    with its control characters escaped (a file's ESC sequences never reach the terminal), or the JSON."""
    if as_json:
        for chunk in outline_json(table):
            write(chunk)
    else:
        for chunk in outline_text(table):
            write(escape_controls(chunk))


def outline_text(table: OutlineTable) -> Iterator[str]:
    """``render_outline`` of the table's outline and a last line feed, in chunks of whole lines, read from the
    table row by row (B21)."""
    lines = _walk(0, "", table.items, lambda row: _row_label(table, row))
    for batch in _batches(chain((_file_line(table.node(0)),), lines)):
        yield printable("\n".join(batch) + "\n")  # invalid bytes of the file as \xNN, never \udcNN


def outline_json(table: OutlineTable) -> Iterator[str]:
    """The JSON of ``Document.outline().to_dict()`` as ``json.dumps(..., ensure_ascii=False, indent=2)`` writes
    it, each string as ``printable`` gives it, and a last line feed: byte for byte, in chunks, each node's keys
    and each entry encoded on their own (B21, as B4 writes the graph)."""
    for batch in _batches(chain(_node_json(table, 0, 0), ("\n",))):
        yield "".join(batch)


# -- the readable tree ---------------------------------------------------------------------------------

def _file_line(root: OutlineNode) -> str:
    return f"{root.name or '(untitled)'}  [file]"


def _walk(node: _T, prefix: str, items: Callable[[_T], Iterable[_T]],
          label: Callable[[_T], tuple[str, bool]]) -> Iterator[str]:
    """The lines under ``node``: each item's branch and label, then, for a node, the lines under it."""
    it = iter(items(node))
    item = next(it, None)
    while item is not None:
        following = next(it, None)
        last = following is None
        text, is_node = label(item)
        yield f"{prefix}{'└── ' if last else '├── '}{text}"
        if is_node:  # as deep as header levels go: H2-H6
            yield from _walk(item, prefix + ("    " if last else "│   "), items, label)
        item = following


def _node_label(node: OutlineNode, entries: int) -> str:
    head = node.text if node.text is not None else node.name  # the header as written
    zone = f"P{node.permission_level}" if node.permission_level else "no zone"
    extra = " (ignored)" if node.ignored else ""
    count = f", {entries} entr{'y' if entries == 1 else 'ies'}" if entries else ""
    return f"{head}  [H{node.level}, {zone}, line {node.line}{count}]{extra}"


def _entry_label(entry: Entry) -> str:
    date = f"{entry.date} " if entry.date else ""
    return f"• {date}{entry.title or entry.text}  [line {entry.line}]"


def _object_items(item: OutlineNode | Entry) -> list[OutlineNode | Entry]:
    if isinstance(item, Entry):
        return []
    items: list[OutlineNode | Entry] = [*item.children, *item.entries]
    items.sort(key=lambda x: x.line)
    return items


def _object_label(item: OutlineNode | Entry) -> tuple[str, bool]:
    if isinstance(item, Entry):
        return _entry_label(item), False
    return _node_label(item, len(item.entries)), True


def _row_label(table: OutlineTable, row: int) -> tuple[str, bool]:
    if table.is_entry(row):
        return _entry_label(table.entry(row)), False
    return _node_label(table.node(row), table.entry_count(row)), True


def _batches(parts: Iterable[str]) -> Iterator[list[str]]:
    batch: list[str] = []
    for part in parts:
        batch.append(part)
        if len(batch) >= _CHUNK_PARTS:
            yield batch
            batch = []
    if batch:
        yield batch


# -- the JSON ------------------------------------------------------------------------------------------

def _node_json(table: OutlineTable, row: int, depth: int) -> Iterator[str]:
    """The node of ``row`` as the indented dump writes it ``depth`` levels down: its keys, then its children
    and its entries, each in line order (``OutlineNode.to_dict``)."""
    fields = table.node(row).to_dict()
    del fields["children"], fields["entries"]  # both empty: written below, row by row
    pad = "\n" + "  " * (depth + 1)
    yield "{" + "".join(f"{pad}{_scalar(k)}: {_scalar(v)}," for k, v in fields.items()) + pad + '"children": '
    yield from _array((r for r in table.items(row) if not table.is_entry(r)), depth + 1,
                      lambda r, d: _node_json(table, r, d))
    yield "," + pad + '"entries": '
    yield from _array((r for r in table.items(row) if table.is_entry(r)), depth + 1,
                      lambda r, d: iter((_flat(table.entry(r).to_dict(), d),)))
    yield "\n" + "  " * depth + "}"


def _array(rows: Iterable[int], depth: int, element: Callable[[int, int], Iterator[str]]) -> Iterator[str]:
    """A list ``depth`` levels down, its elements one level further."""
    pad = "\n" + "  " * (depth + 1)
    empty = True
    for r in rows:
        yield ("[" if empty else ",") + pad
        yield from element(r, depth + 1)
        empty = False
    yield "[]" if empty else "\n" + "  " * depth + "]"


def _flat(fields: dict[str, Any], depth: int) -> str:
    """A dict of scalars ``depth`` levels down."""
    pad = "\n" + "  " * (depth + 1)
    return "{" + ",".join(f"{pad}{_scalar(k)}: {_scalar(v)}" for k, v in fields.items()) + "\n" + "  " * depth + "}"


def _scalar(value: Any) -> str:
    """A string, an int, a bool or None as the dump writes it (``ensure_ascii=False``)."""
    if isinstance(value, str):
        return encode_basestring(printable(value))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return int.__repr__(value)
