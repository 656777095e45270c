"""The merge driver's cost (G13, G33): journals both devices appended to are merged from their new entries alone,
and the result is what the full path (four whole-file parses, G1-G8) gives for the same inputs."""

from __future__ import annotations

from typing import Any

import pytest

from zonemark.core.document import Document
from zonemark.core.parser import parse
from zonemark.writer import merge as merge_module
from zonemark.writer import locate as locate_module
from zonemark.writer.merge import plan_merge

FENCE = "```python\n# not a header — perché\n## nor this — 東京\n[P1]\n```\n"


def _layer(journals: int, *, fenced: bool = False, older: int = 0) -> str:
    parts = ["# Viaggi — perché 東京 [external_memory]\n\n"]
    for k in range(journals):
        body = FENCE if fenced and k % 2 else "Treno per 東京 — perché no.\n"
        old = "".join(f"###### LOG: 2025-01-{1 + n:02d} — vecchio {n}\nUna voce di prima — 東京, perché.\n\n"
                      for n in range(older))
        parts.append(f"[P1]\n## TOPIC: T{k} — 東京\n[/P1]\n\n[P4]\n{old}###### LOG: 2026-01-01 — primo {k}\n{body}"
                     f"\n###### LOG: 2026-01-02 — secondo {k}\nCome sempre — perché.\n[/P4]\n\n")
    return "".join(parts)


def _append(text: str, who: str, picks: list[int], bodies: dict[int, str] | None = None) -> str:
    """``text`` with one entry appended, as the writer appends it, to each journal of ``picks`` (in that order)."""
    for n, k in enumerate(picks):
        end = f"secondo {k}\nCome sempre — perché.\n"
        body = (bodies or {}).get(n, f"{who} a 東京 — perché, {n}.\n")
        entry = f"\n###### LOG: 2026-02-{1 + n % 27:02d} — {who} {n} — 東京\n{body}"
        at = text.index(end) + len(end)
        close = text.index("[/P4]\n", at)
        text = text[:close] + entry + text[close:]
    return text


def _full(base: str, ours: str, theirs: str) -> merge_module.MergePlan:
    sides = [merge_module._side(x) for x in (base, ours, theirs)]
    return merge_module._full(sides[0], sides[1], sides[2], base, ours, theirs, ("ours", "base", "theirs"))


def _counted(monkeypatch: pytest.MonkeyPatch, module: object) -> list[int]:
    calls: list[int] = []
    real = parse

    def counted(text: str, **kw: object) -> Document:
        calls.append(len(text))
        return real(text, **kw)  # type: ignore[arg-type]
    monkeypatch.setattr(module, "parse", counted)
    return calls


def test_every_journal_appended_on_both_sides_parses_only_the_new_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """G33: with every journal of the file appended to on both sides (the spread case of bench_merge.py) the merge
    parses the merged new entries once, in one small document, never the file (it took four whole-file parses)."""
    base = _layer(200, fenced=True, older=10)
    ours = _append(base, "A", list(range(200)))
    theirs = _append(base, "B", list(range(199, -1, -1)))
    calls = _counted(monkeypatch, merge_module)
    plan = plan_merge(base.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged" and plan.entries_added == 200
    new_text = len(ours) - len(base) + len(theirs) - len(base)
    assert len(calls) == 1 and sum(calls) < 2 * new_text < len(base) // 3
    monkeypatch.undo()
    assert plan.data == _full(base, ours, theirs).data


def test_the_three_skeletons_share_one_parse_when_their_structure_is_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """G33: BASE, OURS and THEIRS whose structural lines are the same bytes are indexed from one parse of them."""
    base = _layer(30, fenced=True)
    ours, theirs = _append(base, "A", [3, 7]), _append(base, "B", [7, 20])
    calls: list[int] = []
    real = locate_module.scan_structure

    def counted(text: str, *hooks: Any) -> Any:
        calls.append(len(text))
        return real(text, *hooks)
    monkeypatch.setattr(locate_module, "scan_structure", counted)
    plan = plan_merge(base.encode(), ours.encode(), theirs.encode())
    assert plan.outcome == "merged" and plan.entries_added == 2 and len(calls) == 1


@pytest.mark.parametrize("case", ["same day", "duplicate", "theirs only", "unclosed fence", "hostile", "undated",
                                  "control", "invalid date"])
def test_the_merge_from_new_entries_equals_the_full_merge(case: str) -> None:
    """G33: whatever the new entries hold, the fast path gives the full path's bytes, or leaves the journal to it."""
    base = _layer(6, fenced=True)
    picks_o, picks_t = [1, 2, 4], [2, 4, 5]
    bodies_o: dict[int, str] = {}
    bodies_t: dict[int, str] = {}
    if case == "same day":
        bodies_t = {0: "stesso giorno — 東京\n"}
        picks_t = [1, 2, 4]
    elif case == "duplicate":
        picks_t = [1, 2, 4]
    elif case == "theirs only":
        picks_o = [0]
    elif case == "unclosed fence":
        bodies_o = {0: "```\nopen — perché\n"}
    elif case == "hostile":
        bodies_t = {1: "[/P4]\n[P1]\n## TOPIC: Owned — 東京\n[/P1]\n[P4]\n"}
    elif case == "control":
        bodies_t = {0: "bell \x07 — perché\n"}
    elif case == "invalid date":
        bodies_o = {1: "ok — 東京\n"}
    ours = _append(base, "A", picks_o, bodies_o)
    theirs = _append(base, "B" if case != "duplicate" else "A", picks_t, bodies_t)
    if case == "undated":
        theirs = theirs.replace("— B 1 — 東京", "B senza data", 1).replace("LOG: 2026-02-02 — B senza data",
                                                                          "LOG: B senza data")
    if case == "invalid date":
        ours = ours.replace("2026-02-02 — A 1", "2026-13-45 — A 1")
    plan = plan_merge(base.encode(), ours.encode(), theirs.encode())
    full = _full(base, ours, theirs)
    assert (plan.outcome, plan.data, plan.entries_added) == (full.outcome, full.data, full.entries_added)
    if case == "unclosed fence":
        assert plan.outcome == "conflict"  # the fence would swallow THEIRS' entries: never merged into it
