"""The code catalogue as Markdown, for ``docs/conformance.md`` (generated part).

``python -m zonemark.render.docgen docs/conformance.md`` rewrites the part of the file
between the two marker comments; the test suite checks it is up to date.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.diagnostics import CATALOGUE, CodeInfo

BEGIN = "<!-- BEGIN GENERATED: code catalogue (python -m zonemark.render.docgen docs/conformance.md) -->"
END = "<!-- END GENERATED: code catalogue -->"


def _row(info: CodeInfo) -> str:
    text = f"{info.summary} {info.explanation}".replace("|", "\\|")
    return f"| `{info.code}` | {info.severity.value} | {info.section} | {info.scope} | {text} |"


def render_catalogue() -> str:
    """Two tables: the codes the standard names, then the codes zonemark adds."""
    header = "| code | severity | spec | scope | meaning |\n|---|---|---|---|---|"
    spec = sorted((i for i in CATALOGUE.values() if i.origin == "spec"), key=lambda i: i.code)
    ours = sorted((i for i in CATALOGUE.values() if i.origin != "spec"), key=lambda i: (i.scope, i.code))
    parts = [BEGIN, "", "### Codes named by the standard", "", header, *map(_row, spec), "",
             "### Codes zonemark adds", "", header, *map(_row, ours), "", END]
    return "\n".join(parts)


def update(path: Path) -> bool:
    """Rewrite the generated part of ``path``; returns whether it changed."""
    text = path.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: generated-section markers not found")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + render_catalogue() + tail
    if new != text:
        path.write_text(new, encoding="utf-8")
        return True
    return False


if __name__ == "__main__":  # pragma: no cover
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/conformance.md")
    print(f"{target}: {'updated' if update(target) else 'up to date'}")
