"""Trace marks on the layer graph (§N.1: "re-illuminates the corresponding graph nodes").

:func:`illuminate` takes the graph of :func:`zonemark.layer.graph.build_graph` and returns a
new :class:`~zonemark.layer.graph.LayerGraph` whose ``trace`` is set (a
:class:`~zonemark.layer.graph.GraphTrace`; the nodes and links are the same objects).  In the
JSON document it is one more top-level key, ``trace`` (the page reads it)::

    "trace": {
      "file": "answer.txt" | null,          the trace given with --trace (null: heat only)
      "enabled": true | false | null,       tracing enabled in the layer (null: no trace given)
      "lit": [{"step": 1, "node": "nucleus:1" | null, "kind": "nucleus", "label": "NUCLEUS 1: …",
               "order": 1 | null, "state": "queried" | null, "action": "touched" | null,
               "ref": "2026-04-12" | null}, …],       in trace order: nuclei in activation order,
                                                     modules, memories, then the entries and
                                                     topics their refs resolve to
      "warnings": [{"code", "message", "line"}],     the trace's warnings (and unreadable records)
      "heat": {"records": 3, "counts": {"module:042": 2, …}}   over .zonemark/traces
    }

``node`` is null for a lit item that has no node of its own (an H2 section of the reminder
named as a memory).  A node counts once per record in ``heat.counts``.
"""

from __future__ import annotations

import dataclasses

from ..layer.graph import GraphTrace, LayerGraph, TraceMark, TraceWarning
from ..layer.loader import Layer
from .notices import Notice
from .records import TraceRecord
from .trace import Target, TraceResult, contents_targets


def _node_index(graph: LayerGraph) -> tuple[dict[tuple[str, int], str], dict[str, str]]:
    by_line: dict[tuple[str, int], str] = {}
    files: dict[str, str] = {}
    for n in graph.nodes:
        if n.kind == "file":
            files.setdefault(n.file, n.id)
        else:
            by_line.setdefault((n.file, n.line), n.id)
    return by_line, files


def _node_of(target: Target, by_line: dict[tuple[str, int], str], files: dict[str, str]) -> str | None:
    if target.line is None:
        return files.get(target.file)
    return by_line.get((target.file, target.line))


def _warning(notice: Notice) -> TraceWarning:
    return TraceWarning(notice.code, notice.message, notice.line)


def illuminate(graph: LayerGraph, layer: Layer, trace: TraceResult | None = None, *, source: str | None = None,
               records: tuple[TraceRecord, ...] = (), record_warnings: tuple[Notice, ...] = ()) -> LayerGraph:
    """``graph`` with its ``trace`` (see the module docstring): a new value; ``graph`` is not changed."""
    by_line, files = _node_index(graph)
    lit: list[TraceMark] = []
    if trace is not None:
        for step, t in enumerate(trace.targets, start=1):
            lit.append(TraceMark(step, _node_of(t, by_line, files), t.kind, t.label, t.order, t.state, t.action,
                                 t.ref))
    counts: dict[str, int] = {}
    for record in records:
        nodes = {_node_of(t, by_line, files) for t in contents_targets(record.content, layer)}
        for node in sorted(n for n in nodes if n is not None):
            counts[node] = counts.get(node, 0) + 1
    warnings = [_warning(w) for w in (trace.warnings if trace is not None else ())]
    warnings += [_warning(w) for w in record_warnings]
    marks = GraphTrace(source, None if trace is None else trace.enabled, tuple(lit), tuple(warnings), len(records),
                       tuple(counts.items()))
    return dataclasses.replace(graph, trace=marks)


def with_recorded_traces(graph: LayerGraph, layer: Layer, trace: TraceResult | None = None, *,
                         source: str | None = None) -> LayerGraph:
    """``graph`` lit by ``trace`` and heated by the traces recorded in ``.zonemark/traces`` (§N.18).

    ``graph`` itself when there is neither a trace nor a record nor an unreadable record file: the
    one composition of the graph with the recorded traces that every face calls.
    """
    from .records import load_records, traces_folder
    if trace is None and not traces_folder(layer).is_dir():
        return graph
    records, skipped = load_records(layer)
    if trace is None and not records and not skipped:
        return graph
    return illuminate(graph, layer, trace, source=source, records=records, record_warnings=skipped)
