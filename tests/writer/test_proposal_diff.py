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


def _whole_file_diff(name: str, old: bytes, new: bytes) -> str:
    """The diff of every line of both files: what the windowed diff must equal (W98)."""
    a, b = old.decode("utf-8", "surrogateescape").split("\n"), new.decode("utf-8", "surrogateescape").split("\n")
    shortest, head, tail = min(len(a), len(b)), 0, 0
    while head < shortest and a[head] == b[head]:
        head += 1
    while tail < shortest - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    start, keep = max(0, head - 3), max(0, tail - 3)
    lines = difflib.unified_diff(a[start:len(a) - keep], b[start:len(b) - keep], fromfile=name, tofile=name,
                                 lineterm="", n=3)
    return "\n".join(proposals._hunk_moved(line, start) for line in lines)


def test_the_diff_of_a_window_is_the_diff_of_the_whole_files(monkeypatch) -> None:
    """Only the lines around the change are decoded and split; the files' shared start and end are found a slice
    at a time (a slice of 4 bytes here, so that every boundary is met), and the diff is the whole files' one."""
    monkeypatch.setattr(proposals, "SAME_BYTES_CHUNK", 4)
    rng = random.Random(11)
    words = ["x", "y", "東京", "", "\r", "perché —", "x"]
    for _ in range(5000):
        old = [rng.choice(words) * rng.randint(0, 2) for _ in range(rng.randint(0, 16))]
        new = list(old)
        for _ in range(rng.randint(1, 3)):  # insertions, deletions and changes among repeated lines
            k, op = rng.randint(0, len(new)), rng.random()
            if op < 0.4 or not new:
                new.insert(k, rng.choice(words))
            elif op < 0.7:
                del new[min(k, len(new) - 1)]
            else:
                new[min(k, len(new) - 1)] += rng.choice(words)
        a = ("\n".join(old) + rng.choice(["", "\n"])).encode()
        b = ("\n".join(new) + rng.choice(["", "\n"])).encode()
        assert proposals._diff("f.md", a, b) == _whole_file_diff("f.md", a, b), (a, b)


def test_the_diff_decodes_a_window_not_the_files() -> None:
    from cost_support import peak

    a = "\n".join(f"riga {k} — perché 東京" for k in range(60_000)).encode()
    b = a.replace("riga 30000 — perché".encode(), "riga 30000 — cambiata".encode())
    used, diff = peak(proposals._diff, "f.md", a, b)
    assert "+riga 30000 — cambiata 東京" in diff
    assert used < len(a) // 20, used / len(a)  # before: both files decoded and split, ~10x the file
