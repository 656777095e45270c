"""The readable outline: headers as written, entries under their owner, in line order."""

from pathlib import Path

import zonemark
from zonemark.render.outline_text import render_outline

SPEC = Path(__file__).parents[1] / "fixtures" / "spec"


def test_outline_of_14_4_reads_like_the_file():
    doc = zonemark.parse_file(SPEC / "14_4_external_memory_subtopics.md")
    assert render_outline(doc.outline()).splitlines() == [
        "Cars  [file]",
        "├── TOPIC: Maintenance  [H2, P1, line 4, 1 entry]",
        "│   ├── • 2026-09-06 general service  [line 8]",
        "│   ├── SUBTOPIC1: Tyres  [H3, P1, line 13, 1 entry]",
        "│   │   ├── • 2026-09-06 winter set mounted  [line 17]",
        "│   │   └── SUBTOPIC2: Pressures  [H4, P1, line 22, 1 entry]",
        "│   │       └── • 2026-09-06 measured cold  [line 26]",
        "│   └── SUBTOPIC1: Bodywork  [H3, P1, line 31]",
        "└── TOPIC: Insurance  [H2, P1, line 38]",
    ]


def test_outline_marks_ignored_duplicates():
    doc = zonemark.parse("# R [reminder]\n\n[P1]\n## MODULE 7: A [NUCLEI: ]\n[/P1]\n[P3]\n## MODULE 7: B [NUCLEI: ]\n[/P3]\n")
    lines = render_outline(doc.outline()).splitlines()
    assert lines[1].startswith("├── MODULE 7: A") and not lines[1].endswith("(ignored)")
    assert lines[2].startswith("└── MODULE 7: B") and lines[2].endswith("(ignored)")
