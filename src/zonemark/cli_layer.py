"""``zonemark graph`` and ``zonemark status``: commands on a whole continuity layer (§3, §7).

Exit codes follow the rest of the CLI: 0 when the layer has no error-level
diagnostic, 1 when it has some (the output is still produced), 2 when the
command cannot run.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from .cli_common import CliError
from .diagnostics import Severity
from .layer import Layer, LayerError

GRAPH_FORMATS = ("json", "dot", "mermaid", "html")


def register(subparsers) -> None:
    """Add the ``graph`` and ``status`` subcommands to the main parser."""
    g = subparsers.add_parser("graph", help="the graph of a layer (JSON node-link, DOT, Mermaid or HTML)")
    g.add_argument("path", metavar="PATH", help="a layer folder (or a single file)")
    g.add_argument("--format", choices=GRAPH_FORMATS, default="json")
    g.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    _selection(g)
    g.set_defaults(func=lambda args: cmd_graph(args))

    s = subparsers.add_parser("status", help="modules, states, nuclei and memories of a layer")
    s.add_argument("path", metavar="PATH", help="a layer folder (or a single file)")
    s.add_argument("--json", action="store_true", help="machine-readable output")
    _selection(s)
    s.set_defaults(func=lambda args: cmd_status(args))


def _selection(p) -> None:
    p.add_argument("--only", action="append", metavar="GLOB",
                   help="keep only files whose relative path matches (repeatable; [ and ] are literal)")
    p.add_argument("--exclude", action="append", metavar="GLOB",
                   help="leave out files whose relative path matches (repeatable)")


def _load(args) -> Layer:
    try:
        return Layer.load(args.path, only=args.only, exclude=args.exclude)
    except LayerError as exc:
        raise CliError(f"zonemark {args.command}: {exc}") from None
    except OSError as exc:
        raise CliError(f"zonemark {args.command}: cannot read {args.path}: {exc.strerror or exc}") from None


def _exit_code(layer: Layer) -> int:
    return 1 if any(d.severity is Severity.ERROR for d in layer.all_diagnostics()) else 0


# -- graph ------------------------------------------------------------------------------

def cmd_graph(args) -> int:
    from .graph import build_graph, to_dot, to_json, to_mermaid

    layer = _load(args)
    graph = build_graph(layer)
    if args.format == "json":
        text = to_json(graph)
    elif args.format == "dot":
        text = to_dot(graph)
    elif args.format == "mermaid":
        text = to_mermaid(graph)
    else:
        try:
            from .graph_html import render_html
        except ImportError:
            raise CliError("zonemark graph: the html format is unavailable in this installation"
                           " (use --format json, dot or mermaid)") from None
        try:
            text = render_html(graph)
        except Exception as exc:  # another module's failure must not become a traceback
            raise CliError(f"zonemark graph: html rendering failed: {type(exc).__name__}: {exc}") from None
    _emit(text, args.output, layer)
    return _exit_code(layer)


def _printable(text: str) -> str:
    """Lone surrogates (undecodable bytes of a file, §1 INVALID_UTF8) become U+FFFD on output."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


def _emit(text: str, output: str | None, layer: Layer) -> None:
    text = _printable(text)
    if output is None or output == "-":
        sys.stdout.write(text)
        return
    target = Path(output)
    if target.suffix.lower() == ".md":
        raise CliError(f"zonemark graph: refusing to write to {output}: .md files belong to the user")
    try:
        resolved = target.resolve()
        if any(f.path.resolve() == resolved for f in layer.files):
            raise CliError(f"zonemark graph: refusing to overwrite {output}, a file of the layer")
        if target.is_dir():
            raise CliError(f"zonemark graph: {output} is a folder; give a file name")
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            os.replace(tmp, target)
        finally:
            if tmp.exists():
                tmp.unlink()
    except OSError as exc:
        raise CliError(f"zonemark graph: cannot write {output}: {exc.strerror or exc}") from None


# -- status -----------------------------------------------------------------------------

def status_data(layer: Layer) -> dict:
    """Everything ``zonemark status`` shows, as plain data."""
    by_pos = {(m.file, m.info.line): m for m in layer.modules}
    governed: dict[int, list[str]] = {}
    for e in layer.edges:
        m = by_pos.get((e.file, e.line))
        if e.kind == "governs" and m is not None:
            governed.setdefault(int(e.target), []).append(m.module_id)
    modules = []
    for m in layer.modules:
        if not m.is_module:
            continue
        info = m.info
        declared = None if info.declared_state is None else info.declared_state + (
            " - permanent" if info.permanent else "")
        modules.append({"id": m.module_id, "temporary": m.temporary, "name": info.name, "file": m.file,
                        "line": info.line, "declaredState": declared, "effectiveState": m.effective_state,
                        "stateSource": m.state_source, "permanent": info.permanent,
                        "nuclei": list(info.assigned_nuclei or ()), "ignored": info.ignored})
    nuclei = [{"id": n.nucleus_id, "name": n.info.name, "file": n.file, "line": n.info.line,
               "modules": governed.get(n.nucleus_id, [])} for n in layer.nuclei]
    memories = []
    for f in layer.merged_files:
        if f.file_type != "external_memory":
            continue
        root = f.doc.outline()
        temp = {m.info.line: m.module_id for m in layer.modules if m.file == f.rel}
        memories.append({"file": f.rel, "title": f.doc.title, "entries": _count_entries(root),
                         "topics": [_topic(c, temp) for c in root.children if c.kind == "module"]})
    diags = layer.all_diagnostics()
    return {
        "layer": layer.name, "root": str(layer.root), "reminder": layer.reminder,
        "files": [{"file": f.rel, "type": f.file_type, "merged": f.merged} for f in layer.files],
        "modules": modules, "nuclei": nuclei, "memories": memories,
        "diagnostics": {"errors": sum(d.severity is Severity.ERROR for d in diags),
                        "warnings": sum(d.severity is Severity.WARNING for d in diags)},
    }


def _count_entries(node) -> int:
    return len(node.entries) + sum(_count_entries(c) for c in node.children)


def _topic(node, temp) -> dict:
    keyword = node.keyword or "MODULE"
    if keyword == "SUBTOPIC":
        keyword = f"SUBTOPIC{node.level - 2}"
    return {"name": node.name, "keyword": keyword, "id": temp.get(node.line, node.id),
            "line": node.line, "entries": len(node.entries),
            "children": [_topic(c, temp) for c in node.children if c.kind == "module"]}


def _table(rows: list[list[str]], header: list[str]) -> list[str]:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    return [fmt.format(*header).rstrip()] + [fmt.format(*map(str, r)).rstrip() for r in rows]


def _entries(n: int) -> str:
    return f"{n} entr{'y' if n == 1 else 'ies'}"


def render_status(data: dict, path: str) -> str:
    out = [f"Layer '{data['layer']}' ({len(data['files'])} files; reminder: {data['reminder'] or 'none'})"]
    unmerged = [f["file"] for f in data["files"] if not f["merged"]]
    if unmerged:
        out.append("Not merged (id conflict): " + ", ".join(unmerged))
    out.append("")
    out.append(f"MODULES ({len(data['modules'])})")
    if data["modules"]:
        rows = []
        for m in data["modules"]:
            eff = m["effectiveState"] or "unknown"
            if m["stateSource"] and m["stateSource"].startswith("registry:"):
                eff += " (registry)"
            rows.append([m["id"] + (" (ignored)" if m["ignored"] else ""), m["name"], m["file"],
                         m["declaredState"] or "-", eff, ", ".join(map(str, m["nuclei"])) or "-"])
        out += ["  " + r for r in _table(rows, ["ID", "NAME", "FILE", "DECLARED", "EFFECTIVE", "NUCLEI"])]
    out.append("")
    out.append(f"NUCLEI ({len(data['nuclei'])})")
    if data["nuclei"]:
        rows = [[n["id"], n["name"], n["file"], ", ".join(n["modules"]) or "-"] for n in data["nuclei"]]
        out += ["  " + r for r in _table(rows, ["ID", "NAME", "FILE", "GOVERNS"])]
    out.append("")
    out.append(f"MEMORIES ({len(data['memories'])})")
    for mem in data["memories"]:
        out.append(f"  {mem['file']}  \"{mem['title']}\"  {_entries(mem['entries'])}")

        def walk(topics, depth):
            for t in topics:
                out.append(f"  {'  ' * depth}{t['keyword']} {t['id']}: {t['name']}  ({_entries(t['entries'])})")
                walk(t["children"], depth + 1)
        walk(mem["topics"], 1)
    out.append("")
    d = data["diagnostics"]
    out.append(f"Diagnostics: {d['errors']} error{'s' if d['errors'] != 1 else ''}, "
               f"{d['warnings']} warning{'s' if d['warnings'] != 1 else ''} (zonemark check {path} lists them)")
    return "\n".join(out) + "\n"


def cmd_status(args) -> int:
    layer = _load(args)
    data = status_data(layer)
    if args.json:
        sys.stdout.write(_printable(json.dumps(data, ensure_ascii=False, indent=2) + "\n"))
    else:
        sys.stdout.write(_printable(render_status(data, args.path)))
    return _exit_code(layer)
