"""The outline of a file as a readable tree (``zonemark outline``)."""

from __future__ import annotations

from ..core.outline import Entry, OutlineNode
from ..core.text import printable


def render_outline(root: OutlineNode) -> str:
    """A readable tree, one line per node and entry."""
    lines = [f"{root.name or '(untitled)'}  [file]"]

    def label(n: OutlineNode) -> str:
        head = n.text if n.text is not None else n.name  # the header as written
        zone = f"P{n.permission_level}" if n.permission_level else "no zone"
        extra = " (ignored)" if n.ignored else ""
        count = f", {len(n.entries)} entr{'y' if len(n.entries) == 1 else 'ies'}" if n.entries else ""
        return f"{head}  [H{n.level}, {zone}, line {n.line}{count}]{extra}"

    def walk(node: OutlineNode, prefix: str) -> None:
        items: list[OutlineNode | Entry] = [*node.children, *node.entries]
        items.sort(key=lambda x: x.line)
        for i, item in enumerate(items):
            last = i == len(items) - 1
            branch = "└── " if last else "├── "
            if isinstance(item, Entry):
                date = f"{item.date} " if item.date else ""
                lines.append(f"{prefix}{branch}• {date}{item.title or item.text}  [line {item.line}]")
            else:
                lines.append(f"{prefix}{branch}{label(item)}")
                walk(item, prefix + ("    " if last else "│   "))

    walk(root, "")
    return printable("\n".join(lines))  # invalid bytes of the file as \xNN, never \udcNN
