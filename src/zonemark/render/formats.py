"""Diagnostics in machine and human formats: text, JSON, SARIF 2.1.0, GitHub annotations."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..core.diagnostics import CATALOGUE, Diagnostic, Severity, severity_counts
from .registry import Format, names, row, spoken



#: what the renderers take: each checked path with its findings
Results = Sequence[tuple[str, Sequence[Diagnostic]]]


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun it counts, singular for exactly 1 ("1 file", "2 files", "1 entry"): every count the
    command line and the faces print goes through it."""
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _summary(results: Results) -> str:
    files = sum(1 for path, _ in results if not os.path.isdir(path))  # a folder entry holds layer-wide findings
    errors, warnings = severity_counts(d for _, ds in results for d in ds)
    clean = sum(1 for path, ds in results if not ds and not os.path.isdir(path))
    return (f"{counted(files, 'file')} checked: {counted(errors, 'error')}, {counted(warnings, 'warning')}; "
            f"{clean} clean")


def render_text(results: Results) -> str:
    """One line per finding (``path:line:column: CODE message``) and the summary."""
    lines: list[str] = []
    for path, diags in results:
        for d in diags:
            lines.append(f"{path}:{d.line}:{d.column}: {d.code} {d.message}")
    lines.append(_summary(results))
    return "\n".join(lines) + "\n"


def _file_entry(path: str, diags: Sequence[Diagnostic]) -> dict[str, Any]:
    """One checked path: every finding in line order, and the same split as §13's ``errors`` and ``warnings``."""
    found = [d.to_dict() for d in diags]
    return {"path": path, "diagnostics": found,
            "errors": [d for d in found if d["severity"] == "error"],
            "warnings": [d for d in found if d["severity"] == "warning"]}


def render_json(results: Results) -> str:
    errors, warnings = severity_counts(d for _, ds in results for d in ds)
    out = {
        "files": [_file_entry(path, diags) for path, diags in results],
        "summary": {"files": sum(1 for path, _ in results if not os.path.isdir(path)),
                    "errors": errors, "warnings": warnings},
    }
    return json.dumps(out, ensure_ascii=False, indent=2) + "\n"


def artifact_uri(path: str) -> str:
    """A checked path as a SARIF ``artifactLocation.uri`` (SARIF 2.1.0 §3.4.3): an RFC 3986 URI reference.

    Each byte of the path but the unreserved characters and ``/`` is percent-encoded (RFC 3986 §2.1), so
    the ``[`` and ``]`` of a §3.4 file name, a space, a ``:`` or ``#`` and non-ASCII letters (their UTF-8
    bytes) never break the reference; a byte that is not UTF-8 (kept by the OS as a surrogate) is encoded
    as the byte it was.  On Windows the separator ``\\`` becomes ``/``; elsewhere a backslash is a
    character of the name and is encoded.
    """
    if os.sep == "\\":
        path = path.replace("\\", "/")
    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def render_sarif(results: Results) -> str:
    used = sorted({d.code for _, ds in results for d in ds})
    rules = []
    index = {}
    for i, code in enumerate(used):
        info = CATALOGUE.get(code)
        index[code] = i
        rule = {"id": code, "shortDescription": {"text": info.summary if info else code}}
        if info:
            rule["fullDescription"] = {"text": info.explanation}
            rule["defaultConfiguration"] = {"level": "error" if info.severity is Severity.ERROR else "warning"}
            rule["properties"] = {"specSection": info.section}
        rules.append(rule)
    sarif_results = []
    for path, diags in results:
        for d in diags:
            sarif_results.append({
                "ruleId": d.code,
                "ruleIndex": index[d.code],
                "level": "error" if d.severity is Severity.ERROR else "warning",
                "message": {"text": d.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": artifact_uri(path)},
                    "region": {"startLine": d.line, "startColumn": d.column,
                               "endLine": d.end_line, "endColumn": d.end_column},
                }}],
            })
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "zonemark", "version": __version__, "rules": rules}},
            "columnKind": "unicodeCodePoints",  # the parser's columns count code points (SARIF 2.1.0 §3.14.17)
            "results": sarif_results,
        }],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(results: Results) -> str:
    lines = []
    for path, diags in results:
        for d in diags:
            kind = "error" if d.severity is Severity.ERROR else "warning"
            lines.append(f"::{kind} file={_gh_escape(path, True)},line={d.line},col={d.column},"
                         f"title={_gh_escape(d.code, True)}::{_gh_escape(d.message)}")
    lines.append(_summary(results))
    return "\n".join(lines) + "\n"


DiagnosticResults = list[tuple[str, list[Diagnostic]]]
#: The output formats of diagnostics, one row each; ``check --format`` takes its choices and help from it.
DIAGNOSTICS_FORMATS: tuple[Format[DiagnosticResults], ...] = (
    Format("text", render_text, "text/plain", "text (path:line:col: CODE message; the default)"),
    Format("json", render_json, "application/json", "json"),
    Format("sarif", render_sarif, "application/sarif+json", "sarif"),
    Format("github", render_github, "text/plain", "github annotations"),
)
FORMATS = names(DIAGNOSTICS_FORMATS)


def diagnostics_formats_help() -> str:
    """The help of ``--format``: every row's label, in the table's order."""
    return spoken([f.label for f in DIAGNOSTICS_FORMATS])


def render_diagnostics(results: DiagnosticResults, fmt: str) -> str:
    """``results`` in the format named ``fmt`` (a row of :data:`DIAGNOSTICS_FORMATS`)."""
    return row(DIAGNOSTICS_FORMATS, fmt).render(results)
