"""A memory layer of a chosen size for the graph page's tests (the review page's frame and the render service)."""

from __future__ import annotations

from pathlib import Path


def memory_layer(folder: Path, entries: int) -> Path:
    """One memory file: a topic with ``entries`` H6 entries, and a second topic with one."""
    folder.mkdir(parents=True)
    lines = ["# Diario — perché 東京 [external_memory]", "", "[P1]", "## TOPIC: Viaggi — 東京", "[/P1]", "", "[P4]"]
    for i in range(entries):
        lines += [f"###### LOG: 2026-01-{i % 28 + 1:02d} — voce {i} perché", f"testo {i}", ""]
    lines += ["[/P4]", "", "[P1]", "## TOPIC: Casa", "[/P1]", "", "[P4]", "###### LOG: 2026-02-01 — caffè", "ok",
              "[/P4]", ""]
    (folder / "diario[ext_memory].md").write_text("\n".join(lines), encoding="utf-8")
    return folder
