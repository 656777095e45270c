"""Renderings of what the core and the layer compute: diagnostics (text, JSON, SARIF, GitHub),
outlines, status tables, graph formats and the graph page, and the generated docs.

Nothing here decides anything: a rule lives in ``core``, ``layer`` or ``writer``.
"""
