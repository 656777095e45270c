"""The diff a proposal stores (issue 16: bounded cost): matched on the changed lines and their context only, its
hunks numbered as in the whole file, and it applies to the file to give exactly what applying would write."""

from __future__ import annotations

import difflib
import random

from zonemark.writer import proposals


def _apply(old: str, diff: str) -> str:
    """``diff`` (unified, as stored) applied to ``old``."""
    lines, out, pos = old.split("\n"), [], 0
    for line in diff.split("\n")[2:]:
        if line.startswith("@@"):
            first, _, count = line[4:].split(" @@")[0].split(" +")[0].partition(",")
            start = int(first) - 1 if (int(count) if count else 1) else int(first)
            out += lines[pos:start]
            pos = start
        elif line.startswith("-"):
            pos += 1
        elif line.startswith("+"):
            out.append(line[1:])
        elif line.startswith(" "):
            out.append(lines[pos])
            pos += 1
    return "\n".join(out + lines[pos:])


def test_the_stored_diff_applies_to_the_file_and_keeps_its_line_numbers() -> None:
    rng = random.Random(7)
    words = ["perché", "東京", "—", "[P4]", "## TOPIC: x", "", "riga"]
    for _ in range(2000):
        old = [rng.choice(words) for _ in range(rng.randint(0, 40))]
        new = list(old)
        i = rng.randint(0, len(old))
        new[i:min(len(old), i + rng.randint(0, 4))] = [rng.choice(words) for _ in range(rng.randint(0, 4))]
        a, b = "\n".join(old), "\n".join(new)
        diff = proposals._diff("diario[ext_memory].md", a.encode(), b.encode())
        assert (diff == "") == (a == b)
        assert _apply(a, diff) == b
    a = "\n".join(f"voce {k} — 東京" for k in range(1000))
    b = a.replace("voce 700 — 東京", "voce 700 — perché")
    assert "@@ -698,7 +698,7 @@" in proposals._diff("f.md", a.encode(), b.encode())


def test_only_the_changed_lines_and_their_context_are_matched(monkeypatch) -> None:
    matched: list[int] = []
    real = difflib.unified_diff

    def counting(a, b, *args, **kwargs):  # type: ignore[no-untyped-def]
        matched.append(len(a) + len(b))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(proposals.difflib, "unified_diff", counting)
    a = "\n".join(f"riga {k} — perché" for k in range(100_000))
    b = a.replace("riga 50000 — perché", "riga 50000 — 東京\nnuova riga")
    diff = proposals._diff("f.md", a.encode(), b.encode())
    assert "+riga 50000 — 東京" in diff and "+nuova riga" in diff
    assert matched == [6 + 1 + 6 + 2]  # three lines of context on each side of the one line changed
