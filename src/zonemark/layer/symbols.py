"""The named parts of a file as a tree with line extents: symbols and folds.

Built from the outline (§7.1.3: headers nest by level, a zone boundary closes nothing) plus
the rule bullets of ``## RULES:`` (§9).  A container runs from its header to the line before
the next header of the same or a higher level (trailing blank lines left out); an entry
(H6, §7.5) to the end of its block.  Refused headers (§5.5) declare nothing and are absent.
"""

from __future__ import annotations

import bisect
import re
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ..core.document import Document
from ..core.headers import spelled_keyword
from ..core.nodes import Rule
from ..core.outline import Entry, OutlineNode, headings
from .navigate import zones
from .spans import SourceLines, source_lines


@dataclass(frozen=True, slots=True)
class Symbol:
    """A named part of a file.

    ``kind``: module, topic, subtopic, sub_module, nucleus, registry, rules, section, entry, rule.
    ``line``..``end_line`` is its extent (1-based, inclusive); ``start``..``end`` the columns of
    its name on ``line`` (1-based, end exclusive).
    """

    name: str
    kind: str
    detail: str
    line: int
    end_line: int
    start: int
    end: int
    ident: str | None = None
    children: tuple["Symbol", ...] = ()

    def walk(self) -> Iterator[Symbol]:
        yield self
        for c in self.children:
            yield from c.walk()


_OPENING_TAG = re.compile(r"[ \t]*\[P\d+\][ \t]*\r?")
_symbols_cache: "weakref.WeakKeyDictionary[Document, tuple[Symbol, ...]]" = weakref.WeakKeyDictionary()


def document_symbols(doc: Document) -> tuple[Symbol, ...]:
    """The symbol tree of one file: the outline's containers and sections, their entries and rules."""
    cached = _symbols_cache.get(doc)
    if cached is not None:
        return cached
    lines = source_lines(doc)
    root = doc.outline()
    kept = [h for h in headings(doc) if not h.refused and h.level < 6]
    heads = [h.line for h in kept]
    levels = {h.line: h.level for h in kept}
    last_line = len(lines)
    rules = _rules_by_owner(doc, root)
    result = tuple(_node(c, doc, lines, heads, levels, last_line, rules) for c in root.children)
    result = tuple(_entry(e, doc, lines) for e in root.entries) + tuple(
        _rule(r, lines) for r in rules.get(id(root), ())) + result
    result = tuple(sorted(result, key=lambda s: s.line))
    _symbols_cache[doc] = result
    return result


def _kind(node: OutlineNode) -> str:
    if node.kind == "module":
        return {"TOPIC": "topic", "SUBTOPIC": "subtopic"}.get(node.keyword or "", "module")
    if node.kind == "state_registry":
        return "registry"
    if node.kind == "section" and node.section == "RULES":
        return "rules"
    return node.kind


def _detail(node: OutlineNode) -> str:
    keyword = node.keyword or {"module": "MODULE", "nucleus": "NUCLEUS", "sub_module": "SUB-MODULE",
                               "state_registry": "MODULE_STATE_REGISTRY"}.get(node.kind, node.section or "")
    parts = [p for p in (spelled_keyword(keyword, node.level), node.id) if p]
    if node.permission_level is not None:
        parts.append(f"[P{node.permission_level}]")
    return " ".join(parts)


def _container_end(node: OutlineNode, lines: SourceLines, heads: list[int], levels: Mapping[int, int],
                   last_line: int) -> int:
    i = bisect.bisect_right(heads, node.line)
    end = last_line
    for line in heads[i:]:
        if levels[line] <= node.level:
            end = line - 1
            break
    return _trim(lines, node.line, end)


def _trim(lines: SourceLines, first: int, end: int) -> int:
    """The last line of an extent without its trailing blank lines and opening ``[Pn]`` tags
    (those open the zone of what follows)."""
    while end > first and (not lines.line(end).strip() or _OPENING_TAG.fullmatch(lines.line(end))):
        end -= 1
    return end


def _name_span(lines: SourceLines, line: int) -> tuple[int, int]:
    text = lines.line(line)
    stripped = text.rstrip()
    hashes = len(stripped) - len(stripped.lstrip(" #"))
    return hashes + 1, max(len(stripped), hashes) + 1


def _node(node: OutlineNode, doc: Document, lines: SourceLines, heads: list[int], levels: Mapping[int, int],
          last_line: int, rules: Mapping[int, list[Rule]]) -> Symbol:
    children = [_node(c, doc, lines, heads, levels, last_line, rules) for c in node.children]
    children += [_entry(e, doc, lines) for e in node.entries]
    children += [_rule(r, lines) for r in rules.get(id(node), ())]
    children.sort(key=lambda s: s.line)
    end = _container_end(node, lines, heads, levels, last_line)
    if children:
        end = max(end, max(c.end_line for c in children))
    start, stop = _name_span(lines, node.line)
    return Symbol(node.name or "(unnamed)", _kind(node), _detail(node), node.line, end, start, stop,
                  node.id, tuple(children))


def _entry(entry: Entry, doc: Document, lines: SourceLines) -> Symbol:
    block = doc.heading_at(entry.line)
    end = _trim(lines, entry.line, block.end_line if block is not None else entry.line)
    start, stop = _name_span(lines, entry.line)
    name = entry.title or entry.text or "(entry)"
    detail = " ".join(p for p in (entry.date, f"[P{entry.permission_level}]" if entry.permission_level else None) if p)
    return Symbol(name, "entry", detail, entry.line, end, start, stop)


def _rule(rule: Rule, lines: SourceLines) -> Symbol:
    end = _trim(lines, rule.line, rule.end_line)
    text = lines.line(rule.line)
    label = f"{rule.prefix}{rule.rule_number}"
    start = text.find(label) + 1 or 1
    return Symbol(f"{label}: {rule.title}"[:120], "rule", rule.category, rule.line, end, start,
                  len(text.rstrip()) + 1)


def _rules_by_owner(doc: Document, root: OutlineNode) -> dict[int, list[Rule]]:
    """Rule bullets grouped by the outline node whose header precedes them (the logical owner)."""
    rules = [b for b in doc.walk() if isinstance(b, Rule)]
    if not rules:
        return {}
    nodes = sorted((n for n in root.walk() if n is not root), key=lambda n: n.line)
    lines = [n.line for n in nodes]
    out: dict[int, list[Rule]] = {}
    for r in rules:
        i = bisect.bisect_right(lines, r.line) - 1
        owner = nodes[i] if i >= 0 else root
        out.setdefault(id(owner), []).append(r)
    return out


def flatten(symbols: Iterable[Symbol], container: str | None = None) -> Iterator[tuple[Symbol, str | None]]:
    """(symbol, name of its parent) for every symbol of a tree, depth first."""
    for s in symbols:
        yield s, container
        yield from flatten(s.children, s.name)


def folding_ranges(doc: Document) -> list[tuple[int, int, str]]:
    """(first line, last line, 'zone' | kind of symbol) for every zone and symbol longer than one line."""
    out = []
    for z in zones(doc):
        if z.end_line > z.line:
            out.append((z.line, z.end_line, "zone"))
    for s, _ in flatten(document_symbols(doc)):
        if s.end_line > s.line:
            out.append((s.line, s.end_line, s.kind))
    out.sort()
    return out
